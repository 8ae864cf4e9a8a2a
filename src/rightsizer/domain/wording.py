"""How the analyzer's reasons say numbers: people read these, so values are rounded the way people say them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal

MIB_PER_GIB = 1024
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def gib(mib: float) -> str:
    return f"{mib / MIB_PER_GIB:.1f} GiB"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%"


def usd(amount: Decimal) -> str:
    return f"${amount:,.2f}"


def gbps(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} Gbps"


def span(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    low, high = fmt(min(values)), fmt(max(values))
    return low if low == high else f"{low}-{high}"


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _index_key(index: str) -> tuple[int, str]:
    return (int(index), "") if index.isdigit() else (1 << 30, index)


def _runs(numbers: Sequence[int]) -> list[tuple[int, int]]:
    """(first, last) of each run of consecutive ascending numbers: [0, 1, 2, 5] -> [(0, 2), (5, 5)]."""
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def index_ranges(indexes: Sequence[str]) -> str:
    """'0-3, 6' for numeric indexes (as nvidia-smi numbers GPUs); plain list otherwise."""
    if not all(i.isdigit() for i in indexes):
        return ", ".join(sorted(indexes, key=_index_key))
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in _runs(sorted(map(int, indexes))))


def day_runs(days: Sequence[int]) -> list[tuple[int, int]]:
    """Runs of consecutive weekday numbers (0 = Monday), in order: [0, 1, 2, 4] -> [(0, 2), (4, 4)]."""
    return _runs(days)


def day_ranges(days: Sequence[int]) -> str:
    """'Mon-Fri', 'Sat,Sun' or 'Mon,Wed' for weekday numbers (0 = Monday)."""
    return ",".join(WEEKDAYS[a] if a == b else f"{WEEKDAYS[a]}-{WEEKDAYS[b]}" for a, b in _runs(days))
