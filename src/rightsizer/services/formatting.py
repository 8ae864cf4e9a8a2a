"""Text helpers shared by the terminal table, the CSV and Slack: money, sparklines, shortening, and making outside
text safe to show (`printable`) or to put in a spreadsheet (`spreadsheet_text`)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from decimal import Decimal
from typing import Protocol

SPARK_BARS = "▁▂▃▄▅▆▇█"
ASCII_BARS = "_.:-=+*#"  # for terminals and files that cannot encode the block characters
ELLIPSIS = "…"


def usd(amount: Decimal | None, *, signed: bool = False) -> str:
    if amount is None:
        return "n/a"
    sign = "+" if signed and amount > 0 else ("-" if amount < 0 else "")
    return f"{sign}${abs(amount):,.2f}"


def sparkline(values: Sequence[float | None], *, top: float = 100.0, bars: str = SPARK_BARS) -> str:
    """One character per value on a fixed 0..top scale (so hosts compare); a gap for no data."""
    chars = []
    for value in values:
        if value is None:
            chars.append(" ")
            continue
        share = min(max(value / top, 0.0), 1.0)
        chars.append(bars[min(len(bars) - 1, int(share * len(bars)))])
    return "".join(chars)


class Traced(Protocol):
    """Evidence with a day-by-day trace (domain.models.advice.Evidence)."""

    @property
    def daily_busiest_unit(self) -> Sequence[float | None]: ...


def spark_label(evidence: Traced, days: int) -> str:
    """What a sparkline of `Evidence.daily_trace` draws, in words."""
    if evidence.daily_busiest_unit:
        return f"busiest GPU, its peak hours day by day for {days} days"
    return f"GPU use, daily mean of the last {days} days"


def shorten(text: str, width: int, ellipsis: str = ELLIPSIS) -> str:
    return text if len(text) <= width else text[: max(0, width - len(ellipsis))] + ellipsis


def shorten_middle(text: str, width: int, ellipsis: str = ELLIPSIS) -> str:
    """`text` cut in the middle to `width`: an id keeps its kind (the start) and its most specific part (the end),
    e.g. "sagemaker…AllTraffic"."""
    if len(text) <= width:
        return text
    room = max(0, width - len(ellipsis))
    tail = room // 2 + room % 2
    return text[: room - tail] + ellipsis + text[len(text) - tail :]


# ---------------------------------------------------------------------------------------------
# Text from outside (tags, AWS error messages) shown to people, and cells written for spreadsheets.

# Unicode categories that draw nothing yet change what a person sees: controls (C0, DEL, C1: newlines forge rows,
# tabs shift columns, ESC starts terminal sequences), format characters (the bidi embeddings, overrides and isolates
# U+202A-U+202E and U+2066-U+2069, the marks U+200E, U+200F and U+061C, zero-width U+200B-U+200D, U+2060, U+FEFF,
# the soft hyphen), line and paragraph separators, and lone surrogates.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str, *, newlines: bool = False) -> str:
    """`text` as it may be shown to a person (a terminal, an HTML page, Slack): every control, format (bidi,
    zero-width), line/paragraph separator or surrogate character becomes a visible escape in Python's notation
    (`\\n`, `\\t`, `\\x1b`, `\\u202e`, `\\U000e0041`), so that a tag cannot add rows, move columns, reorder or
    hide what is around it. Everything else, non-ASCII letters and emoji included, is kept. `newlines=True` keeps
    "\\n" (for text whose line breaks are the program's own, e.g. a composed Slack message). Pure and idempotent:
    the escapes are themselves printable. Machine outputs (JSON) keep the original."""
    if text.isprintable():
        return text  # the common case; False also for spaces other than " ", which the loop keeps
    return "".join(
        _escape(char) if unicodedata.category(char) in _HIDDEN_CATEGORIES and not (newlines and char == "\n") else char
        for char in text
    )


# What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection"): =, +, -, @, and tab, CR or LF before
# them; the fullwidth forms, which some spreadsheets (East Asian input) accept as the same.
_FORMULA_STARTS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")


def spreadsheet_text(text: str) -> str:
    """A text cell for CSV that a spreadsheet shows as text, never evaluates: a value that starts with a formula
    character, also after leading blanks, gets a leading single quote (OWASP's advice). For text cells only: a
    number written as a number (negative money, say) stays a number and must not pass through here."""
    if text[:1] in _FORMULA_STARTS or text.lstrip()[:1] in _FORMULA_STARTS:
        return "'" + text
    return text
