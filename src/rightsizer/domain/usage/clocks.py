"""The window's clocks: the bins of each layout worked out once per distinct clock a host's series share, the window's
hour and day grid, and the hourly peaks and daily means of the accelerators.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

import numpy as np

from rightsizer.domain.usage.series import DeviceSeries, Floats, Ints, Series
from rightsizer.domain.usage.stats import optional_rows, same_stamps


class Bins:
    """Where the samples of one clock fall in consecutive bins [first + k*width, first + (k+1)*width)."""

    __slots__ = ("counts", "empty", "end", "full", "starts")

    def __init__(self, stamps: Ints, first: int, width: int, count: int) -> None:
        # Bin edges by bisecting the (ascending) timestamps: no per-sample arithmetic.
        edges = stamps.searchsorted(np.arange(first, first + width * count + 1, width))
        self.end = int(edges[-1])  # samples from here on fall after the last bin: left out
        self.counts: Ints = edges[1:] - edges[:-1]
        self.empty = self.counts == 0
        # reduceat reduces from each start to the next one (the last to the end of what it is given), so
        # it gets the starts before `end` only: the bins after those are empty.
        self.starts: Ints = edges[: int(edges[:-1].searchsorted(self.end))]
        # The usual case: a sample in every bin, nothing to mask.
        self.full = count > 0 and bool(self.counts.all())

    def reduce(self, values: Floats, combine: np.ufunc, empty: float) -> Floats:
        """`combine` of the values in each bin (along the last axis: one series, or one per row); `empty`
        in bins without a sample."""
        if self.full:
            return cast(Floats, combine.reduceat(values[..., : self.end], self.starts, axis=-1))
        reduced = np.full((*values.shape[:-1], len(self.counts)), empty)
        if len(self.starts):
            reduced[..., : len(self.starts)] = combine.reduceat(values[..., : self.end], self.starts, axis=-1)
            # reduceat gives the value at the start for a bin that ends where it starts
            reduced[..., self.empty] = empty
        return reduced


class _Clock:
    """Timestamps that several series of one host share (the agent stamps a host's metrics alike), with
    the bins of each layout worked out once for all of them."""

    __slots__ = ("_bins", "stamps")

    def __init__(self, stamps: Ints) -> None:
        self.stamps = stamps
        self._bins: dict[tuple[int, int, int], Bins] = {}

    def bins(self, first: int, width: int, count: int) -> Bins:
        key = (first, width, count)
        found = self._bins.get(key)
        if found is None:
            found = self._bins[key] = Bins(self.stamps, first, width, count)
        return found


class Clocks:
    """A host's distinct clocks: series with equal timestamps share one _Clock, so bins are worked out
    once per clock and "same clock?" is an identity check after each array's first comparison."""

    __slots__ = ("_by_array", "_known")

    def __init__(self) -> None:
        self._known: list[_Clock] = []
        # By id() of a timestamp array: the arrays belong to the RawUsage being summarised, alive throughout.
        self._by_array: dict[int, _Clock] = {}

    def of(self, series: Series) -> _Clock:
        stamps = series.stamps
        clock = self._by_array.get(id(stamps))
        if clock is None:
            clock = next((known for known in self._known if same_stamps(known.stamps, stamps)), None)
            if clock is None:
                clock = _Clock(stamps)
                self._known.append(clock)
            self._by_array[id(stamps)] = clock
        return clock

    def grouped(self, series: Sequence[Series]) -> list[tuple[_Clock, list[Floats]]]:
        """Non-empty series grouped by clock, as (clock, the group's values in order)."""
        groups: dict[int, tuple[_Clock, list[Floats]]] = {}
        for one in series:
            if one:
                clock = self.of(one)
                groups.setdefault(id(clock), (clock, []))[1].append(one.array)
        return list(groups.values())


def combined(values: list[Floats], combine: np.ufunc) -> Floats:
    """Element-wise combination of a group's values (one unit: its own values, not a copy)."""
    return values[0] if len(values) == 1 else cast(Floats, combine.reduce(values))


def _clock_hours(series: Series) -> tuple[int, int]:
    """(first clock-hour epoch, end clock-hour epoch) that a non-empty series spans."""
    stamps = series.stamps
    first = int(stamps[0]) - int(stamps[0]) % 3600
    last = int(stamps[-1])
    return first, last - last % 3600 + 3600


@dataclass(frozen=True, slots=True)
class WindowGrid:
    """A look-back window's days (from its first second) and clock hours (from the hour that holds it)."""

    seconds: float
    start: int  # epoch second the window starts
    first_hour: int  # epoch of the clock hour that holds `start`
    hours: int
    days: int

    @classmethod
    def of(cls, window_start: datetime, window_end: datetime) -> WindowGrid:
        seconds = (window_end - window_start).total_seconds()
        start = int(window_start.timestamp())
        first_hour = start - start % 3600
        hours = max(0, math.ceil((window_end.timestamp() - first_hour) / 3600))
        return cls(seconds, start, first_hour, hours, max(1, round(seconds / 86400)))


@dataclass(frozen=True, slots=True)
class HourSpan:
    """The clock hours a host's hourly views are laid on: the window's, widened to every sample seen."""

    first: int  # epoch of the first clock hour
    count: int

    @classmethod
    def covering(cls, grid: WindowGrid, series: Sequence[Series]) -> HourSpan:
        first, end = grid.first_hour, grid.first_hour + grid.hours * 3600
        for one in series:
            if one:
                start, stop = _clock_hours(one)
                first, end = min(first, start), max(end, stop)
        return cls(first, max(0, (end - first) // 3600))


def hourly_unit_peaks(clocks: Clocks, devices: Sequence[DeviceSeries], first_hour: int, hours: int) -> Floats:
    """Busiest unit's reading per clock hour from `first_hour` (epoch) for `hours` hours; -inf in hours
    without a reading."""
    peaks = np.full(hours, -np.inf)
    for clock, values in clocks.grouped([device.utilization_max or device.utilization_avg for device in devices]):
        bins = clock.bins(first_hour, 3600, hours)
        np.maximum(peaks, bins.reduce(combined(values, np.maximum), np.maximum, -np.inf), out=peaks)
    return peaks


def daily_mean(clocks: Clocks, devices: Sequence[DeviceSeries], start: int, days: int) -> Floats:
    """The units' mean utilisation per day from `start`; NaN on days without a reading."""
    sums = np.zeros(days)
    counts = np.zeros(days, dtype=np.int64)
    for clock, values in clocks.grouped([device.utilization_avg for device in devices]):
        bins = clock.bins(start, 86400, days)
        sums += bins.reduce(combined(values, np.add), np.add, 0.0)
        counts += bins.counts * len(values)
    return cast(Floats, np.where(counts > 0, sums / np.maximum(counts, 1), np.nan))


def day_means(bins: Bins, rows: Floats) -> Floats:
    """Each row's mean per bin of `bins` (the rows share its clock); NaN in bins without a sample."""
    sums = bins.reduce(rows, np.add, 0.0)
    return cast(Floats, np.where(bins.counts > 0, sums / np.maximum(bins.counts, 1), np.nan))


def nan_as_none(values: Floats) -> tuple[float | None, ...]:
    """A row of floats as a tuple, None where NaN (the summary's "no data" marker)."""
    return optional_rows(values[np.newaxis], ~np.isnan(values))[0]


@dataclass(frozen=True, slots=True)
class Timelines:
    """What a host's summary was read from, over its window, for the reading of regimes (domain/regimes.py):
    the busiest unit's hourly maximum per clock hour (-inf: no reading), the units' mean per day (NaN: none) and
    the most encoder sessions per clock hour (None: no GPU publishes encoder stats)."""

    grid: WindowGrid
    hour_peaks: Floats
    day_means: Floats
    encoder_hours: Floats | None = None
    cpu_day_means: Floats | None = None  # the host's mean CPU per day (NaN: none): a CPU-bound load that changed
