"""Text helpers shared by the terminal table and Slack: money, sparklines, shortening."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

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


def shorten(text: str, width: int, ellipsis: str = ELLIPSIS) -> str:
    return text if len(text) <= width else text[: max(0, width - len(ellipsis))] + ellipsis
