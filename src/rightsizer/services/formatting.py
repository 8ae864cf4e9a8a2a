"""Text helpers shared by the terminal table and Slack: money, sparklines, shortening."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

SPARK_BARS = "▁▂▃▄▅▆▇█"


def usd(amount: Decimal | None, *, signed: bool = False) -> str:
    if amount is None:
        return "n/a"
    sign = "+" if signed and amount > 0 else ("-" if amount < 0 else "")
    return f"{sign}${abs(amount):,.2f}"


def sparkline(values: Sequence[float | None], *, top: float = 100.0) -> str:
    """One character per value on a fixed 0..top scale (so hosts compare); a gap for no data."""
    chars = []
    for value in values:
        if value is None:
            chars.append(" ")
            continue
        share = min(max(value / top, 0.0), 1.0)
        chars.append(SPARK_BARS[min(len(SPARK_BARS) - 1, int(share * len(SPARK_BARS)))])
    return "".join(chars)


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"
