"""Money, to the cent: a month is 730 hours (AWS's own figure for a monthly price)."""

from __future__ import annotations

from decimal import Decimal

HOURS_PER_MONTH = Decimal(730)
CENT = Decimal("0.01")
ZERO = Decimal("0.00")  # no money, to the cent


def monthly(hourly: Decimal) -> Decimal:
    return (hourly * HOURS_PER_MONTH).quantize(CENT)
