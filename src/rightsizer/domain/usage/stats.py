"""The statistics every summary shares: nearest-rank percentiles read from one sort per series (an observed value,
never an interpolation), the hour of the week, the low of a loaded memory line, memory/load correlations, and rows
with None where nothing was read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from rightsizer.domain.models.usage import SeriesStats
from rightsizer.domain.usage.series import Floats, Ints, Series

HOURS_PER_WEEK = 168


# 1970-01-05 was a Monday: hour-of-week buckets start at Monday 00:00 UTC.
_FIRST_MONDAY_EPOCH = 4 * 86400


def _rank(pct: float, count: int) -> int:
    # Multiply before dividing: ceil(7 / 100 * 100) is 8 in floating point, ceil(7 * 100 / 100) is 7.
    return max(1, math.ceil(pct * count / 100))


def percentile(sorted_values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending sequence (no interpolation: a real observed value)."""
    if not sorted_values:
        raise ValueError("percentile of an empty series")
    return sorted_values[_rank(pct, len(sorted_values)) - 1]


def ascending(values: Floats) -> Floats:
    """A sorted copy (np.sort's own steps, without its wrapper: a host sorts a dozen series)."""
    ordered = values.copy()
    ordered.sort()
    return ordered


def pick_rows(ordered: Floats, *pcts: float) -> list[list[float]]:
    """Nearest-rank percentiles (100 = the peak) of each ascending, non-empty row."""
    count = ordered.shape[-1]
    return cast(list[list[float]], ordered[:, [_rank(pct, count) - 1 for pct in pcts]].tolist())


def _picked(ordered: Floats, *pcts: float) -> list[float]:
    """Nearest-rank percentiles of an ascending, non-empty array."""
    return pick_rows(ordered[np.newaxis], *pcts)[0]


def percentiles(values: Floats, *pcts: float) -> list[float]:
    """Nearest-rank percentiles of an unsorted, non-empty array."""
    return _picked(ascending(values), *pcts)


def row_stats(rows: Floats) -> list[SeriesStats]:
    """Stats of each (non-empty) row; sorts the rows in place, after taking each mean from the row's sum in
    its own order (a row of a stack sums to the same float, to the last bit, as the series alone)."""
    samples = rows.shape[-1]
    means = (np.add.reduce(rows, axis=-1) / samples).tolist()
    rows.sort(axis=-1)
    return [
        SeriesStats(samples=samples, mean=mean, p50=p50, p95=p95, p99=p99, peak=peak)
        for mean, (p50, p95, p99, peak) in zip(means, pick_rows(rows, 50, 95, 99, 100), strict=True)
    ]


def optional_series_stats(values: Floats) -> SeriesStats | None:
    return row_stats(values[np.newaxis].copy())[0] if len(values) else None


def series_stats(values: Sequence[float] | Floats) -> SeriesStats | None:
    return optional_series_stats(np.asarray(values, dtype=np.float64))


def series_peak(series: Series) -> float | None:
    return float(series.array.max()) if series else None


def hour_of_week(epoch_seconds: int) -> int:
    return ((epoch_seconds - _FIRST_MONDAY_EPOCH) // 3600) % HOURS_PER_WEEK


# Hours in which a process holds at least this share of the device's peak memory count as "loaded":
# the hours before a process starts (or between restarts) say nothing about how flat its line is.
_LOADED_SHARE = 0.5


_MIN_CORRELATION_HOURS = 24


def memory_low(ordered: Floats) -> float | None:
    """5th percentile of the memory readings (ascending) taken while a process held memory."""
    if not len(ordered):
        return None
    peak = float(ordered[-1])
    if peak <= 0:
        return 0.0
    # Sorted: the readings at or above the loaded share are the tail from the first such one.
    return _picked(ordered[ordered.searchsorted(peak * _LOADED_SHARE) :], 5)[0]


def same_stamps(one: Ints, other: Ints) -> bool:
    # Length and ends first: series of different clocks nearly always differ there, without a full pass.
    if len(one) != len(other) or not len(one):
        return len(one) == len(other)
    return bool(one[0] == other[0] and one[-1] == other[-1] and (one == other).all())


def memory_load_correlations(memory: Floats, load: Floats, peaks: Floats) -> list[float | None]:
    """Pearson correlation of each row of `memory` (2-D; each row's peak in `peaks`) with the same row of
    `load`, over the row's loaded hours; None where undefined or too short.

    Hours before a process starts (or between restarts) are left out: a jump from nothing to a
    reservation is not memory following the load. Hours left out count as zeros in the sums, so every
    row is reduced in the same few numpy calls whatever its own loaded hours."""
    loaded = memory >= (peaks * _LOADED_SHARE)[:, np.newaxis]
    xs = np.where(loaded, memory, 0.0)
    ys = np.where(loaded, load, 0.0)
    counts = loaded.sum(axis=1)
    sum_x, sum_y = xs.sum(axis=1), ys.sum(axis=1)
    square_x, square_y, cross = (xs * xs).sum(axis=1), (ys * ys).sum(axis=1), (xs * ys).sum(axis=1)
    found: list[float | None] = []
    for count, sx, sy, qx, qy, xy in zip(
        counts.tolist(),
        sum_x.tolist(),
        sum_y.tolist(),
        square_x.tolist(),
        square_y.tolist(),
        cross.tolist(),
        strict=True,
    ):
        if count < _MIN_CORRELATION_HOURS:
            found.append(None)
            continue
        var_x = qx - sx * sx / count
        var_y = qy - sy * sy / count
        # Relative to the sum of squares: below this, the "variance" is floating-point noise of a flat line.
        if var_x <= 1e-9 * qx or var_y <= 1e-9 * qy:
            found.append(None)  # a flat line has no correlation with anything
            continue
        found.append(max(-1.0, min(1.0, (xy - sx * sy / count) / math.sqrt(var_x * var_y))))
    return found


def optional_rows(rows: Floats, seen: npt.NDArray[np.bool_]) -> list[tuple[float | None, ...]]:
    """Each row as a tuple of floats, None in the columns not `seen` (the summary's "no data" marker)."""
    values: list[list[float | None]] = rows.tolist()
    gaps = np.flatnonzero(~seen).tolist()
    for row in values if gaps else ():
        for gap in gaps:
            row[gap] = None
    return [tuple(row) for row in values]


def means_where_seen(sums: Floats, counts: npt.NDArray[Any]) -> list[tuple[float | None, ...]]:
    """sums / counts per row, None where the (shared) counts have no sample."""
    return optional_rows(sums / np.maximum(counts, 1), counts > 0)
