"""Reduce raw CloudWatch series to the usage summary the analyzer works on.

CloudWatch's percentile statistics are not used (moto ignores them, and one code path is easier to
trust): we fetch 5-minute Averages and hourly Maximums and compute percentiles here.

Series hold numpy arrays (the CloudWatch adapter builds them; tests may pass lists): a shard summarises
thousands of hosts x 14 days of 5-minute data, and one numpy call per statistic instead of a Python loop
per datapoint is what keeps that inside one Lambda's time. Percentiles are nearest-rank (an observed
value, never an interpolation), read from one `np.sort` per series: numpy's vectorised sort beats
`np.partition` on metric data (long runs of equal values: idle zeros, saturated 100s), and one sorted copy
answers every percentile, the peak and the loaded-hours cut of a series.

`summarize` is the reference for one host. `summaries.summarize_all` summarises the hosts that share
the window's clocks many at a time with the public helpers below (bins, the week fold, correlations),
so both paths compute every statistic the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from rightsizer.domain.models import (
    AcceleratorData,
    DeviceUsage,
    GoneUnit,
    OutOfRange,
    Rate,
    SeriesStats,
    SignalStats,
    SliceUsage,
    UsageSummary,
)
from rightsizer.domain.signals import VIDEO_ACTIVE_PCT, Signal

HOURS_PER_WEEK = 168
_VIDEO = frozenset({Signal.ENCODER, Signal.DECODER})
# 1970-01-05 was a Monday: hour-of-week buckets start at Monday 00:00 UTC.
_FIRST_MONDAY_EPOCH = 4 * 86400

Floats: TypeAlias = npt.NDArray[np.float64]
Ints: TypeAlias = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Series:
    """One CloudWatch result: epoch-second timestamps (ascending, unique) and values, at a fixed period."""

    period_seconds: int
    timestamps: Sequence[int] | Ints = ()
    values: Sequence[float] | Floats = ()

    def __post_init__(self) -> None:
        # Converted once, here: summarize() reads each series several times.
        object.__setattr__(self, "timestamps", np.asarray(self.timestamps, dtype=np.int64))
        object.__setattr__(self, "values", np.asarray(self.values, dtype=np.float64))

    def __bool__(self) -> bool:
        return len(self.values) > 0

    @property
    def stamps(self) -> Ints:
        return cast(Ints, self.timestamps)

    @property
    def array(self) -> Floats:
        return cast(Floats, self.values)

    def zero_filled(self, stamps: Ints) -> Series:
        """The series with a 0 at each of `stamps` it has no sample at, within its own span's window (the same
        object when nothing is missing; an empty series stays empty: nothing says the unit existed)."""
        if not self:
            return self
        missing = np.setdiff1d(stamps, self.stamps, assume_unique=True)
        if not len(missing):
            return self
        merged = np.concatenate([self.stamps, missing])
        order = np.argsort(merged, kind="stable")
        values = np.concatenate([self.array, np.zeros(len(missing))])
        return Series(self.period_seconds, merged[order], values[order])

    def since(self, epoch: int) -> Series:
        """The samples at or after `epoch` (the same object when nothing is cut)."""
        if not self or int(self.stamps[0]) >= epoch:
            return self
        start = int(self.stamps.searchsorted(epoch))
        return Series(self.period_seconds, self.stamps[start:], self.array[start:])


EMPTY = Series(300)


@dataclass(frozen=True, slots=True)
class SliceSeries:
    """One MIG GPU instance's DCGM series (agent/dcgm publishes them per instance): its SMs' load (5-minute Averages,
    in percent of its own SMs) and its framebuffer in use (hourly Maximums, MiB)."""

    gpu_instance: str
    profile: str
    signal: Signal  # SM active, or SM occupancy where the instance publishes no SM active
    load: Series = EMPTY
    memory_used_max: Series = EMPTY

    def since(self, epoch: int) -> SliceSeries:
        return replace(self, load=self.load.since(epoch), memory_used_max=self.memory_used_max.since(epoch))


@dataclass(frozen=True, slots=True)
class DeviceSeries:
    """Series for one GPU (per `index`) or one NeuronCore, merged across the dimension sets seen."""

    index: str
    utilization_avg: Series = EMPTY
    utilization_max: Series = EMPTY
    memory_used_max: Series = EMPTY
    memory_total_max: Series = EMPTY
    encoder_sessions_max: Series = EMPTY  # hourly Maximum of open NVENC sessions, where published
    encoder_fps_avg: Series = EMPTY  # hourly Average frame rate of those sessions
    # What the unit itself reported, where its silence was read as idleness (RawUsage.silence_filled); None: every
    # sample of utilization_avg was reported.
    reported_avg: Series | None = None
    # DCGM's profiling signals the GPU publishes (5-minute Averages, in percent), in domain/signals.py's order.
    signals: tuple[tuple[Signal, Series], ...] = ()
    # Its MIG GPU instances' series, where the host publishes them per instance (a GPU in MIG mode).
    slices: tuple[SliceSeries, ...] = ()

    def signal(self, which: Signal) -> Series:
        """The GPU's series of a DCGM signal (empty where it publishes none)."""
        return next((series for signal, series in self.signals if signal is which), EMPTY)

    @property
    def silent_share(self) -> float:
        """Share of the 5-minute averages that are silence read as 0 %, not readings."""
        if self.reported_avg is None or not self.utilization_avg:
            return 0.0
        return 1.0 - len(self.reported_avg.array) / len(self.utilization_avg.array)


# The last days of the window, whose memory peak says whether an out-of-memory risk is still there.
RECENT_MEMORY_SECONDS = 3 * 86400

# GPU series that end while the host runs on for this long: the agent stopped (a few minutes of CloudWatch delay, or
# an hour of it, are not that); one GPU's series that end this long before its siblings': the GPU is gone.
SILENT_AGENT_SECONDS = 6 * 3600


@dataclass(frozen=True, slots=True)
class RawUsage:
    instance_id: str
    window_start: datetime
    window_end: datetime
    accelerator_data: AcceleratorData
    devices: tuple[DeviceSeries, ...] = ()
    cpu_avg: Series = EMPTY
    network_in_sum: Series = EMPTY  # bytes per period
    network_out_sum: Series = EMPTY
    host_memory_max: Series = EMPTY  # CWAgent mem_used_percent
    # Types the host ran as earlier in the window, seen in the agent's InstanceType dimension (their series are
    # not read): the samples before the first one on the current type were taken on other hardware.
    previous_types: tuple[str, ...] = ()
    # When EC2 last changed the host's type inside the window (CloudTrail), when known: samples before it were
    # taken on other hardware, whatever dimensions they carry.
    resized_at: datetime | None = None
    # neuron-monitor reports only the NeuronCores an application holds: a core it stops reporting while the host
    # runs is not in use (see `silence_filled`).
    silence_is_idle: bool = False
    # The host's last start (EC2's LaunchTime), given when CloudTrail's record of resizes could not be read: a resize
    # needs a stop and a start, so samples before it may have been taken on another type (domain/guards.py).
    started_at: datetime | None = None
    # The host's series CloudWatch answered only in part (a query's status InternalError or Forbidden), named.
    incomplete: tuple[str, ...] = ()
    # AWS/EC2's EBS metrics (hourly Sums: bytes and operations over each hour), and the agent's diskio bytes over every
    # disk (hourly Sums, EBS volumes and instance store alike) where it publishes them.
    ebs_read_bytes: Series = EMPTY
    ebs_write_bytes: Series = EMPTY
    ebs_read_ops: Series = EMPTY
    ebs_write_ops: Series = EMPTY
    disk_bytes: Series = EMPTY
    # Processes the agent's procstat plugin found running that only a graphics workload runs (domain/graphics.py).
    graphics_processes: tuple[str, ...] = ()

    def silence_filled(self) -> RawUsage:
        """Each unit that reported in the window reads 0 % in the periods the host ran (AWS/EC2 has a CPU reading)
        without a reading of its own: for neuron-monitor, silence while the host runs means no application holds
        the core. Units that never reported stay unseen."""
        if not self.silence_is_idle or not self.cpu_avg or not self.devices:
            return self
        fine = self.cpu_avg.stamps
        hours = np.unique(fine - fine % 3600)
        return replace(
            self,
            devices=tuple(
                replace(
                    device,
                    utilization_avg=device.utilization_avg.zero_filled(fine),
                    utilization_max=device.utilization_max.zero_filled(hours),
                    reported_avg=device.utilization_avg,
                )
                for device in self.devices
            ),
        )

    def since(self, start: datetime) -> RawUsage:
        """The same host over [start, window_end): every series cut to the samples from `start` on."""
        epoch = int(start.timestamp())
        return replace(
            self,
            window_start=start,
            devices=tuple(
                DeviceSeries(
                    index=device.index,
                    utilization_avg=device.utilization_avg.since(epoch),
                    utilization_max=device.utilization_max.since(epoch),
                    memory_used_max=device.memory_used_max.since(epoch),
                    memory_total_max=device.memory_total_max.since(epoch),
                    encoder_sessions_max=device.encoder_sessions_max.since(epoch),
                    encoder_fps_avg=device.encoder_fps_avg.since(epoch),
                    reported_avg=device.reported_avg.since(epoch) if device.reported_avg is not None else None,
                    signals=tuple((signal, series.since(epoch)) for signal, series in device.signals),
                    slices=tuple(one.since(epoch) for one in device.slices),
                )
                for device in self.devices
            ),
            cpu_avg=self.cpu_avg.since(epoch),
            network_in_sum=self.network_in_sum.since(epoch),
            network_out_sum=self.network_out_sum.since(epoch),
            host_memory_max=self.host_memory_max.since(epoch),
            ebs_read_bytes=self.ebs_read_bytes.since(epoch),
            ebs_write_bytes=self.ebs_write_bytes.since(epoch),
            ebs_read_ops=self.ebs_read_ops.since(epoch),
            ebs_write_ops=self.ebs_write_ops.since(epoch),
            disk_bytes=self.disk_bytes.since(epoch),
        )

    def accelerator_silent_since(self, min_running_seconds: int = SILENT_AGENT_SECONDS) -> datetime | None:
        """When the accelerator series stopped while AWS/EC2 shows the host running on for at least
        `min_running_seconds` after (None: they did not). The CloudWatch agent (or its nvidia_gpu section) stopped
        publishing: what the GPUs did since is unknown, which is not the same as idle. neuron-monitor reports only
        the cores in use, so its silence says nothing of the kind."""
        if self.silence_is_idle or not self.devices or not self.cpu_avg:
            return None
        lasts = [
            int(d.utilization_avg.stamps[-1]) + d.utilization_avg.period_seconds
            for d in self.devices
            if d.utilization_avg
        ]
        lasts += [int(d.utilization_max.stamps[-1]) + 3600 for d in self.devices if d.utilization_max]
        if not lasts:
            return None
        last = max(lasts)
        cpu = self.cpu_avg
        running_after = (len(cpu.stamps) - int(cpu.stamps.searchsorted(last))) * cpu.period_seconds
        return datetime.fromtimestamp(last, UTC) if running_after >= min_running_seconds else None

    def gone_units(self, min_seconds: float) -> tuple[GoneUnit, ...]:
        """GPUs whose series ended at least `min_seconds` before their siblings', while a sibling reported to the end of
        the window and AWS/EC2 shows the host running after: off the bus (Xid 79) or disabled, not idle. Not for
        neuron-monitor (its cores fall silent when unused) nor for a roll-up."""
        if self.silence_is_idle or len(self.devices) < 2 or not self.cpu_avg:
            return ()
        ends = {}
        for device in self.devices:
            series = device.utilization_avg or device.utilization_max
            if series:
                ends[device.index] = int(series.stamps[-1]) + series.period_seconds
        if len(ends) < 2:
            return ()
        latest = max(ends.values())
        # A sibling reports to the end (a CloudWatch delay of an hour or two aside): the agent itself runs.
        if latest < self.window_end.timestamp() - 2 * 3600:
            return ()
        cpu = self.cpu_avg.stamps
        gone = []
        for index, end in ends.items():
            running = (len(cpu) - int(cpu.searchsorted(end))) * self.cpu_avg.period_seconds
            if latest - end >= min_seconds and running >= min_seconds:
                gone.append(GoneUnit(index, datetime.fromtimestamp(end, UTC)))
        return tuple(gone)

    def recent_memory_peaks(self) -> dict[str, float]:
        """Each unit's highest memory reading of the last RECENT_MEMORY_SECONDS of the window, by index (units
        without a reading then are left out)."""
        since = int(self.window_end.timestamp()) - RECENT_MEMORY_SECONDS
        peaks = {}
        for device in self.devices:
            memory = device.memory_used_max
            recent = memory.array[memory.stamps.searchsorted(since) :] if memory else memory.array
            if len(recent):
                peaks[device.index] = float(recent.max())
        return peaks

    def out_of_range(self) -> tuple[OutOfRange, ...]:
        """The percentage series (each unit's utilisation, the host's CPU and RAM) with a reading outside 0-100 %."""
        found = []
        for device in self.devices:
            readings = [s.array for s in (device.utilization_avg, device.utilization_max) if s]
            if readings:
                found.append(_outside("utilization", np.concatenate(readings), device.index))
        found.append(_outside("cpu", self.cpu_avg.array))
        found.append(_outside("host_memory", self.host_memory_max.array))
        return tuple(error for error in found if error is not None)

    @property
    def first_accelerator_sample(self) -> int | None:
        """Epoch second of the earliest accelerator reading, None without any."""
        firsts = [int(d.utilization_avg.stamps[0]) for d in self.devices if d.utilization_avg]
        firsts += [int(d.utilization_max.stamps[0]) for d in self.devices if d.utilization_max]
        return min(firsts) if firsts else None


# A percentage a real reading can take: 0-100, give or take floating point.
_PCT_LOW, _PCT_HIGH = -1e-6, 100 + 1e-6


def _outside(series: str, values: Floats, device: str | None = None) -> OutOfRange | None:
    if not len(values):
        return None
    low, high = float(values.min()), float(values.max())
    return OutOfRange(series, low, high, device) if low < _PCT_LOW or high > _PCT_HIGH else None


def _rank(pct: float, count: int) -> int:
    # Multiply before dividing: ceil(7 / 100 * 100) is 8 in floating point, ceil(7 * 100 / 100) is 7.
    return max(1, math.ceil(pct * count / 100))


def percentile(sorted_values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending sequence (no interpolation: a real observed value)."""
    if not sorted_values:
        raise ValueError("percentile of an empty series")
    return sorted_values[_rank(pct, len(sorted_values)) - 1]


def _ascending(values: Floats) -> Floats:
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


def _percentiles(values: Floats, *pcts: float) -> list[float]:
    """Nearest-rank percentiles of an unsorted, non-empty array."""
    return _picked(_ascending(values), *pcts)


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


def _stats(values: Floats) -> SeriesStats | None:
    return row_stats(values[np.newaxis].copy())[0] if len(values) else None


def series_stats(values: Sequence[float] | Floats) -> SeriesStats | None:
    return _stats(np.asarray(values, dtype=np.float64))


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


def _unit_correlations(
    clocks: _Clocks, devices: Sequence[DeviceSeries], peaks: Sequence[float | None]
) -> list[float | None]:
    """Each unit's correlation of memory (whose peak is in `peaks`) with its load, over the hours both
    series share: the units whose aligned series are as long go through `correlations` together."""
    found: list[float | None] = [None] * len(devices)
    rows: dict[int, list[tuple[int, Floats, Floats, float]]] = {}
    for position, (device, peak) in enumerate(zip(devices, peaks, strict=True)):
        memory, load = device.memory_used_max, device.utilization_max or device.utilization_avg
        if not memory or not load or peak is None:
            continue
        xs, ys = memory.array, load.array
        if clocks.of(memory) is not clocks.of(load):
            _, in_memory, in_load = np.intersect1d(memory.stamps, load.stamps, assume_unique=True, return_indices=True)
            xs, ys = xs[in_memory], ys[in_load]
        rows.setdefault(len(xs), []).append((position, xs, ys, peak))
    for group in rows.values():
        results = memory_load_correlations(
            np.stack([xs for _, xs, _, _ in group]),
            np.stack([ys for _, _, ys, _ in group]),
            np.array([peak for _, _, _, peak in group]),
        )
        for (position, _, _, _), result in zip(group, results, strict=True):
            found[position] = result
    return found


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


def _means_where_seen(sums: Floats, counts: npt.NDArray[Any]) -> list[tuple[float | None, ...]]:
    """sums / counts per row, None where the (shared) counts have no sample."""
    return optional_rows(sums / np.maximum(counts, 1), counts > 0)


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


class _Clocks:
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


def _combined(values: list[Floats], combine: np.ufunc) -> Floats:
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


def _hour_peaks(clocks: _Clocks, devices: Sequence[DeviceSeries], first_hour: int, hours: int) -> Floats:
    """Busiest unit's reading per clock hour from `first_hour` (epoch) for `hours` hours; -inf in hours
    without a reading."""
    peaks = np.full(hours, -np.inf)
    for clock, values in clocks.grouped([device.utilization_max or device.utilization_avg for device in devices]):
        bins = clock.bins(first_hour, 3600, hours)
        np.maximum(peaks, bins.reduce(_combined(values, np.maximum), np.maximum, -np.inf), out=peaks)
    return peaks


def _daily_mean(clocks: _Clocks, devices: Sequence[DeviceSeries], start: int, days: int) -> Floats:
    """The units' mean utilisation per day from `start`; NaN on days without a reading."""
    sums = np.zeros(days)
    counts = np.zeros(days, dtype=np.int64)
    for clock, values in clocks.grouped([device.utilization_avg for device in devices]):
        bins = clock.bins(start, 86400, days)
        sums += bins.reduce(_combined(values, np.add), np.add, 0.0)
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


@dataclass(frozen=True, slots=True)
class EncoderViews:
    """What a host's video encoders did: per GPU (most sessions in an hour or None where not published, hours with
    a session, mean frame rate of those hours), and the most sessions per clock hour of the window (-inf where no
    GPU published a reading) and per hour of the week."""

    units: tuple[tuple[float | None, int, float | None], ...]
    hours: Floats
    week: tuple[float | None, ...]


def encoder_views(devices: Sequence[DeviceSeries], grid: WindowGrid) -> EncoderViews | None:
    """None when no GPU publishes encoder stats or DCGM's video engines (nothing to read, no cost). An hour in which
    DCGM shows a GPU's NVENC or NVDEC at work counts as one session open: the hours read as work by schedules and
    regimes are the same whichever measures the engines."""
    video = [[series for signal, series in device.signals if signal in _VIDEO and series] for device in devices]
    if not any(device.encoder_sessions_max for device in devices) and not any(video):
        return None
    hours = np.full(grid.hours, -np.inf)
    units: list[tuple[float | None, int, float | None]] = []
    for engines in video:
        for series in engines:
            busiest = Bins(series.stamps, grid.first_hour, 3600, grid.hours).reduce(series.array, np.maximum, -np.inf)
            at_work = np.where(busiest >= VIDEO_ACTIVE_PCT, 1.0, np.where(busiest > -np.inf, 0.0, -np.inf))
            np.maximum(hours, at_work, out=hours)
    for device in devices:
        sessions = device.encoder_sessions_max
        if not sessions:
            units.append((None, 0, None))
            continue
        values = sessions.array
        fps = device.encoder_fps_avg.array
        encoding = fps[fps > 0]
        units.append((float(values.max()), int((values >= 1).sum()), float(encoding.mean()) if len(encoding) else None))
        bins = Bins(sessions.stamps, grid.first_hour, 3600, grid.hours)
        np.maximum(hours, bins.reduce(values, np.maximum, -np.inf), out=hours)
    week = _fold_into_week(hours[np.newaxis], grid.first_hour, np.maximum, -np.inf)
    return EncoderViews(tuple(units), hours, optional_rows(week, week[0] > -np.inf)[0])


def with_encoders(summary: UsageSummary, views: EncoderViews | None) -> UsageSummary:
    """The summary with what its GPUs' encoders did (unchanged without encoder stats)."""
    if views is None:
        return summary
    devices = tuple(
        replace(device, encoder_sessions_peak=peak, encoder_active_hours=active, encoder_fps_mean=fps)
        for device, (peak, active, fps) in zip(summary.devices, views.units, strict=True)
    )
    return replace(
        summary,
        devices=devices,
        hourly_encoder_sessions=views.week,
        encoder_hour_sessions=optional_rows(views.hours[np.newaxis], views.hours > -np.inf)[0],
    )


# How a host runs now: the share of the last week it ran (a weekly rhythm, such as weekends off), or of the last
# three days when lower (a host that began stopping itself at night this week). The lower of the two can only
# understate what a change saves, never invent it.
_RECENT_WEEK, _RECENT_DAYS = 7 * 86400, 3 * 86400


def running_share(cpu: Series, window_end: datetime) -> float | None:
    """Share of the recent time (the last week, or the last three days when lower; from the first reading on) that
    the host ran: EC2 publishes CPUUtilization for every period an instance runs, so the periods without one are
    periods it was stopped."""
    if not cpu:
        return None
    end = window_end.timestamp()
    stamps = cpu.stamps
    shares = []
    for span in (_RECENT_WEEK, _RECENT_DAYS):
        start = max(float(stamps[0]), end - span)
        expected = (end - start) / cpu.period_seconds
        seen = len(stamps) - int(stamps.searchsorted(start))
        shares.append(min(1.0, seen / max(1.0, expected)))
    return min(shares)


def gbps(series: Series) -> float:
    """Bytes per period -> Gbps."""
    return 8 / series.period_seconds / 1e9


def _network_hours(clocks: _Clocks, hours: HourSpan, inbound: Series, outbound: Series) -> tuple[Floats, Ints]:
    """Mean Gbps (in + out) per clock hour of `hours`, and 1 in the hours with data (0 elsewhere)."""
    total = np.zeros(hours.count)
    seen = np.zeros(hours.count, dtype=bool)
    for series in (inbound, outbound):
        if not series:
            continue
        bins = clocks.of(series).bins(hours.first, 3600, hours.count)
        has = ~bins.empty
        sums = bins.reduce(series.array, np.add, 0.0)
        total[has] += sums[has] / bins.counts[has] * gbps(series)
        seen |= has
    return total, seen.astype(np.int64)


def _fold_into_week(timelines: Floats, first_hour: int, combine: np.ufunc, empty: float) -> Floats:
    """Hour-of-week `combine` (np.add or np.maximum) of clock-hour timelines (the last axis) that start at
    `first_hour`; `empty` in hours of the week no timeline reaches.

    Laid out on whole weeks from the Monday before `first_hour`, the fold is one reduction per column;
    adding the weeks in order gives the same floats as adding hour by hour."""
    hours = timelines.shape[-1]
    offset = hour_of_week(first_hour)
    weeks = max(1, -(-(offset + hours) // HOURS_PER_WEEK))
    padded = np.full((*timelines.shape[:-1], weeks * HOURS_PER_WEEK), empty)
    padded[..., offset : offset + hours] = timelines
    return cast(Floats, combine.reduce(padded.reshape(*timelines.shape[:-1], weeks, HOURS_PER_WEEK), axis=-2))


@dataclass(frozen=True, slots=True)
class WeekViews:
    """Hour-of-week views of hosts (one tuple per host): busiest accelerator reading, mean CPU and mean
    network Gbps; None in hours without data."""

    accelerator: list[tuple[float | None, ...]]
    cpu: list[tuple[float | None, ...]]
    network: list[tuple[float | None, ...]]
    # The busiest 5-minute CPU average of each hour of the week, the lowest over the weeks that saw that hour: what
    # a job at a fixed time reaches every week (a nightly cron), not a one-off spike.
    cpu_peak: list[tuple[float | None, ...]]


def week_views(
    grid: WindowGrid,
    span: HourSpan,
    hour_peaks: Floats,
    cpu_sums: Floats,
    cpu_counts: npt.NDArray[Any],
    network: Floats,
    network_seen: npt.NDArray[Any],
    cpu_peaks: Floats,
) -> WeekViews:
    """From each host's (row's) clock hours: `hour_peaks` over the window's hours, CPU sums, CPU peaks (-inf where
    no reading) and network Gbps over `span`; the sample counts and the hours with network data are the same for
    every row."""
    lead = (grid.first_hour - span.first) // 3600
    timeline = np.full((len(hour_peaks), span.count), -np.inf)
    timeline[:, lead : lead + grid.hours] = hour_peaks
    peaks = _fold_into_week(timeline, span.first, np.maximum, -np.inf)
    sums = _fold_into_week(np.stack([cpu_sums, network], axis=1), span.first, np.add, 0.0)
    counts = _fold_into_week(np.array([cpu_counts, network_seen]), span.first, np.add, 0.0)
    # Hours without a reading do not count in the lowest: +inf there, so the fold's minimum skips them.
    recurring = _fold_into_week(np.where(cpu_peaks > -np.inf, cpu_peaks, np.inf), span.first, np.minimum, np.inf)
    return WeekViews(
        accelerator=optional_rows(peaks, peaks[0] > -np.inf),
        cpu=_means_where_seen(sums[:, 0], counts[0]),
        # Each clock hour's mean Gbps counts once, however many samples it had.
        network=_means_where_seen(sums[:, 1], counts[1]),
        cpu_peak=[optional_rows(row[np.newaxis], row < np.inf)[0] for row in recurring],
    )


def _device_usages(clocks: _Clocks, devices: Sequence[DeviceSeries]) -> tuple[DeviceUsage, ...]:
    memories = [_ascending(device.memory_used_max.array) for device in devices]
    memory_peaks = [float(memory[-1]) if len(memory) else None for memory in memories]
    followed = _unit_correlations(clocks, devices, memory_peaks)
    return tuple(
        _device_usage(device, memory, peak, follows, profile)
        for device, memory, peak, follows, profile in zip(
            devices, memories, memory_peaks, followed, profiles(devices), strict=True
        )
    )


def profiles(devices: Sequence[DeviceSeries]) -> list[tuple[SignalStats, ...]]:
    """Each unit's DCGM signals' stats (empty where it publishes none). Percentiles do not depend on timestamps: the
    series of every unit and signal with as many readings are one stack, one numpy call (the hosts of a group at once,
    for summaries.summarize_all)."""
    found: list[list[SignalStats]] = [[] for _ in devices]
    if not any(device.signals for device in devices):
        return [()] * len(devices)
    rows: dict[int, list[tuple[int, Signal, Floats]]] = {}
    for position, device in enumerate(devices):
        for signal, series in device.signals:
            if series:
                rows.setdefault(len(series.array), []).append((position, signal, series.array))
    for group in rows.values():
        for (position, signal, _), stats in zip(group, row_stats(np.stack([a for _, _, a in group])), strict=True):
            found[position].append(SignalStats(signal, stats))
    order = list(Signal)
    return [tuple(sorted(unit, key=lambda one: order.index(one.signal))) for unit in found]


def slice_usages(device: DeviceSeries) -> tuple[SliceUsage, ...]:
    """The GPU's MIG instances that read anything, by GPU instance id: a few per GPU at most, so one host at a time
    (summaries.summarize_all calls it per GPU as well)."""
    return tuple(
        SliceUsage(one.gpu_instance, one.profile, one.signal, stats, series_peak(one.memory_used_max))
        for one in sorted(device.slices, key=lambda one: device_order(one.gpu_instance))
        if (stats := _stats(one.load.array)) is not None
    )


def device_order(index: str) -> tuple[int, int, str]:
    """Units (and GPU instances) in numeric order of their ids, a roll-up's "*" after them."""
    return (0, int(index), "") if index.isdigit() else (1, 0, index)


def _device_usage(
    device: DeviceSeries,
    memory: Floats,
    memory_peak: float | None,
    follows: float | None,
    profile: tuple[SignalStats, ...] = (),
) -> DeviceUsage:
    peak_series = device.utilization_max or device.utilization_avg
    burst, peak = _percentiles(peak_series.array, 99, 100) if peak_series else (None, None)
    return DeviceUsage(
        index=device.index,
        utilization=_stats(device.utilization_avg.array),
        utilization_peak=peak,
        memory_used_peak_mib=memory_peak,
        memory_total_mib=series_peak(device.memory_total_max),
        utilization_burst=burst,
        memory_used_low_mib=memory_low(memory),
        memory_load_correlation=follows,
        silent_share=device.silent_share,
        profile=profile,
        slices=slice_usages(device),
    )


def accelerator_coverage(raw: RawUsage, window_seconds: float) -> tuple[float, float]:
    """(days between the first and last accelerator reading, share of expected periods with one), from
    the best-covered unit: units share the agent's clock."""
    first = last = None
    samples = 0
    period = 300
    for device in raw.devices:
        stamps = device.utilization_avg.stamps
        if not len(stamps):
            continue
        period = device.utilization_avg.period_seconds
        first = int(stamps[0]) if first is None else min(first, int(stamps[0]))
        last = int(stamps[-1]) if last is None else max(last, int(stamps[-1]))
        samples = max(samples, len(stamps))
    if first is None or last is None:
        return 0.0, 0.0
    return (last - first + period) / 86400, min(1.0, samples / max(1.0, window_seconds / period))


def summarize(raw: RawUsage) -> UsageSummary:
    """The reference summary of one host over its window (the regimes inside it are read by
    `summaries.summarize_all`, which also summarises many hosts at once)."""
    return summarize_timed(raw)[0]


def summarize_timed(raw: RawUsage) -> tuple[UsageSummary, Timelines]:
    """The summary and the timelines it was read from."""
    clocks = _Clocks()
    grid = WindowGrid.of(raw.window_start, raw.window_end)
    accelerator_days, coverage = accelerator_coverage(raw, grid.seconds)
    network_in = series_peak(raw.network_in_sum)
    network_out = series_peak(raw.network_out_sum)
    # peak(in) + peak(out) can only over-state the peak of in+out: the safe side for sizing.
    network_peak = (
        None
        if network_in is None and network_out is None
        else (network_in or 0) * gbps(raw.network_in_sum) + (network_out or 0) * gbps(raw.network_out_sum)
    )
    cpu = raw.cpu_avg
    # One run of clock hours for every hourly view, so they fold into the week together.
    span = HourSpan.covering(grid, (cpu, raw.network_in_sum, raw.network_out_sum))
    hour_peaks = _hour_peaks(clocks, raw.devices, grid.first_hour, grid.hours)
    cpu_bins = clocks.of(cpu).bins(span.first, 3600, span.count) if cpu else None
    network_gbps, network_seen = _network_hours(clocks, span, raw.network_in_sum, raw.network_out_sum)
    week = week_views(
        grid,
        span,
        hour_peaks[np.newaxis],
        (cpu_bins.reduce(cpu.array, np.add, 0.0) if cpu_bins else np.zeros(span.count))[np.newaxis],
        cpu_bins.counts if cpu_bins else np.zeros(span.count),
        network_gbps[np.newaxis],
        network_seen,
        (cpu_bins.reduce(cpu.array, np.maximum, -np.inf) if cpu_bins else np.full(span.count, -np.inf))[np.newaxis],
    )
    hourly_network = network_gbps[network_seen > 0]
    daily = _daily_mean(clocks, raw.devices, grid.start, grid.days)
    cpu_daily = (
        day_means(clocks.of(cpu).bins(grid.start, 86400, grid.days), cpu.array[np.newaxis])[0]
        if cpu
        else (np.full(grid.days, np.nan))
    )
    encoders = encoder_views(raw.devices, grid)
    inbound, outbound = network_flows(clocks, span, raw)
    ebs_mbps, ebs_iops, local_disk = storage_rates(raw)
    summary = UsageSummary(
        instance_id=raw.instance_id,
        window_start=raw.window_start,
        window_end=raw.window_end,
        accelerator_data=raw.accelerator_data if raw.devices else AcceleratorData.NONE,
        devices=_device_usages(clocks, raw.devices),
        accelerator_days=accelerator_days,
        accelerator_coverage=coverage,
        cpu=_stats(cpu.array),
        network_peak_gbps=network_peak,
        network_p95_gbps=_percentiles(hourly_network, 95)[0] if len(hourly_network) else None,
        host_memory_peak_pct=series_peak(raw.host_memory_max),
        hourly_accelerator_peak=week.accelerator[0],
        hourly_cpu_mean=week.cpu[0],
        hourly_network_mean_gbps=week.network[0],
        daily_accelerator_mean=nan_as_none(daily),
        accelerator_hour_peaks=optional_rows(hour_peaks[np.newaxis], hour_peaks > -np.inf)[0],
        running_share=running_share(cpu, raw.window_end),
        hourly_cpu_peak=week.cpu_peak[0],
        daily_cpu_mean=nan_as_none(cpu_daily),
        network_in=inbound,
        network_out=outbound,
        ebs_mbps=ebs_mbps,
        ebs_iops=ebs_iops,
        local_disk_mbps=local_disk,
        graphics_processes=raw.graphics_processes,
    )
    timelines = Timelines(grid, hour_peaks, daily, encoders.hours if encoders else None, cpu_daily)
    return with_last_days(with_encoders(summary, encoders), raw), timelines


def with_last_days(summary: UsageSummary, raw: RawUsage, *, one_clock: bool = False) -> UsageSummary:
    """What the window's last days say on their own: each unit's recent memory peak, whether the accelerator series
    stopped while the host ran on, and GPUs whose series stopped while their siblings' went on (`one_clock`: every
    unit's series share one clock, so none stopped before the others)."""
    peaks = raw.recent_memory_peaks()
    devices = tuple(replace(d, memory_recent_peak_mib=peaks.get(d.index)) for d in summary.devices)
    return replace(
        summary,
        devices=devices,
        accelerator_silent_since=raw.accelerator_silent_since(),
        gone_units=() if one_clock else raw.gone_units(SILENT_AGENT_SECONDS),
    )


# ---------------------------------------------------------------------------------------------
# Flows through the host's limits: network per direction, EBS, the instance store.

MB = 1e6  # bytes in the MB of EC2's EBS figures (MB/s)


def rate(values: Floats) -> Rate | None:
    """The Rate of per-hour (or per-period) rates: p99 of them sustained, the highest the peak (None: no readings)."""
    if not len(values):
        return None
    sustained, peak = _percentiles(values, 99, 100)
    return Rate(sustained, peak)


def rates_of_rows(rows: Floats) -> list[Rate]:
    """Each row's Rate (rows of rates over the same hours; sorts them in place)."""
    rows.sort(axis=-1)
    return [Rate(sustained, peak) for sustained, peak in pick_rows(rows, 99, 100)]


def _sum_on_stamps(series: Sequence[Series]) -> tuple[Ints, Floats] | None:
    """The series added up at each timestamp any of them has (None: none has a reading)."""
    present = [one for one in series if one]
    if not present:
        return None
    first = present[0]
    if all(same_stamps(one.stamps, first.stamps) for one in present[1:]):
        return first.stamps, _combined([one.array for one in present], np.add)
    stamps = np.unique(np.concatenate([one.stamps for one in present]))
    total = np.zeros(len(stamps))
    for one in present:
        total[stamps.searchsorted(one.stamps)] += one.array
    return stamps, total


def storage_rates(raw: RawUsage) -> tuple[Rate | None, Rate | None, Rate | None]:
    """(EBS MB/s read + write, EBS operations per second, instance store MB/s) per hour: the agent's diskio covers every
    disk, EBS volumes included, so the instance store's share is diskio less EBS in the same hour."""
    ebs = _sum_on_stamps((raw.ebs_read_bytes, raw.ebs_write_bytes))
    ops = _sum_on_stamps((raw.ebs_read_ops, raw.ebs_write_ops))
    period = (raw.ebs_read_bytes or raw.ebs_write_bytes).period_seconds
    ebs_mbps = rate(ebs[1] / period / MB) if ebs else None
    ebs_iops = rate(ops[1] / (raw.ebs_read_ops or raw.ebs_write_ops).period_seconds) if ops else None
    local = None
    if raw.disk_bytes:
        disk = raw.disk_bytes.array.copy()
        if ebs is not None:
            stamps, bytes_ = ebs
            at = raw.disk_bytes.stamps.searchsorted(stamps)
            found = at < len(disk)
            found[found] = raw.disk_bytes.stamps[at[found]] == stamps[found]
            disk[at[found]] -= bytes_[found]
        local = rate(np.maximum(disk, 0.0) / raw.disk_bytes.period_seconds / MB)
    return ebs_mbps, ebs_iops, local


def network_flows(clocks: _Clocks, hours: HourSpan, raw: RawUsage) -> tuple[Rate | None, Rate | None]:
    """Each direction's Rate in Gbps: hourly means (their p99 sustained), 5-minute peak."""
    flows: list[Rate | None] = []
    for series in (raw.network_in_sum, raw.network_out_sum):
        if not series:
            flows.append(None)
            continue
        bins = clocks.of(series).bins(hours.first, 3600, hours.count)
        has = ~bins.empty
        means = bins.reduce(series.array, np.add, 0.0)[has] / bins.counts[has] * gbps(series)
        found = rate(means)
        flows.append(None if found is None else Rate(found.sustained, float(series.array.max()) * gbps(series)))
    return flows[0], flows[1]
