"""Reduce raw CloudWatch series to the usage summary the analyzer works on.

CloudWatch's percentile statistics are not used (moto ignores them, and one code path is easier to
trust): we fetch 5-minute Averages and hourly Maximums and compute percentiles here.

Series hold numpy arrays (the CloudWatch adapter builds them; tests may pass lists): a shard summarises
thousands of hosts x 14 days of 5-minute data, and one numpy call per statistic instead of a Python loop
per datapoint is what keeps that inside one Lambda's time. Percentiles are nearest-rank (an observed
value, never an interpolation), read from one `np.sort` per series: numpy's vectorised sort beats
`np.partition` on metric data (long runs of equal values: idle zeros, saturated 100s), and one sorted copy
answers every percentile, the peak and the loaded-hours cut of a series.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from rightsizer.domain.models import AcceleratorData, DeviceUsage, SeriesStats, UsageSummary

HOURS_PER_WEEK = 168
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


EMPTY = Series(300)


@dataclass(frozen=True, slots=True)
class DeviceSeries:
    """Series for one GPU (per `index`) or one NeuronCore, merged across the dimension sets seen."""

    index: str
    utilization_avg: Series = EMPTY
    utilization_max: Series = EMPTY
    memory_used_max: Series = EMPTY
    memory_total_max: Series = EMPTY


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


def _picked(ordered: Floats, *pcts: float) -> list[float]:
    """Nearest-rank percentiles of an ascending, non-empty array."""
    count = len(ordered)
    return [float(ordered[_rank(pct, count) - 1]) for pct in pcts]


def _percentiles(values: Floats, *pcts: float) -> list[float]:
    """Nearest-rank percentiles of an unsorted, non-empty array."""
    return _picked(_ascending(values), *pcts)


def _stats(values: Floats) -> SeriesStats | None:
    count = len(values)
    if not count:
        return None
    ordered = _ascending(values)
    p50, p95, p99 = _picked(ordered, 50, 95, 99)
    # The mean sums the series in its own order: the same float, to the last bit, as before sorting.
    mean = float(np.add.reduce(values)) / count
    return SeriesStats(samples=count, mean=mean, p50=p50, p95=p95, p99=p99, peak=float(ordered[-1]))


def series_stats(values: Sequence[float] | Floats) -> SeriesStats | None:
    return _stats(np.asarray(values, dtype=np.float64))


def _peak(series: Series) -> float | None:
    return float(series.array.max()) if series else None


def hour_of_week(epoch_seconds: int) -> int:
    return ((epoch_seconds - _FIRST_MONDAY_EPOCH) // 3600) % HOURS_PER_WEEK


# Hours in which a process holds at least this share of the device's peak memory count as "loaded":
# the hours before a process starts (or between restarts) say nothing about how flat its line is.
_LOADED_SHARE = 0.5
_MIN_CORRELATION_HOURS = 24


def _memory_low(ordered: Floats) -> float | None:
    """5th percentile of the memory readings (ascending) taken while a process held memory."""
    if not len(ordered):
        return None
    peak = float(ordered[-1])
    if peak <= 0:
        return 0.0
    # Sorted: the readings at or above the loaded share are the tail from the first such one.
    return _picked(ordered[ordered.searchsorted(peak * _LOADED_SHARE) :], 5)[0]


def _same_clock(one: Series, other: Series) -> bool:
    """Do two series have the same timestamps?"""
    if one.timestamps is other.timestamps:
        return True
    return len(one.stamps) == len(other.stamps) and bool((one.stamps == other.stamps).all())


def _correlation(memory: Series, peak: float | None, load: Series) -> float | None:
    """Pearson correlation of memory (whose `peak` is known) with load over the loaded hours both series
    share; None when undefined or too short. Hours before a process starts (or between restarts) are
    left out: a jump from nothing to a reservation is not memory following the load."""
    if not memory or not load or peak is None:
        return None
    xs, ys = memory.array, load.array
    floor = peak * _LOADED_SHARE
    if not _same_clock(memory, load):
        _, in_memory, in_load = np.intersect1d(memory.stamps, load.stamps, assume_unique=True, return_indices=True)
        xs, ys = xs[in_memory], ys[in_load]
    loaded = xs >= floor
    xs, ys = xs[loaded], ys[loaded]
    count = len(xs)
    if count < _MIN_CORRELATION_HOURS:
        return None
    sum_x, sum_y = float(xs.sum()), float(ys.sum())
    square_x, square_y = float(xs @ xs), float(ys @ ys)
    var_x = square_x - sum_x * sum_x / count
    var_y = square_y - sum_y * sum_y / count
    # Relative to the sum of squares: below this, the "variance" is floating-point noise of a flat line.
    if var_x <= 1e-9 * square_x or var_y <= 1e-9 * square_y:
        return None  # a flat line has no correlation with anything
    covariance = float(xs @ ys) - sum_x * sum_y / count
    return max(-1.0, min(1.0, covariance / math.sqrt(var_x * var_y)))


def _device_usage(device: DeviceSeries) -> DeviceUsage:
    peak_series = device.utilization_max or device.utilization_avg
    burst, peak = _percentiles(peak_series.array, 99, 100) if peak_series else (None, None)
    memory = _ascending(device.memory_used_max.array)
    memory_peak = float(memory[-1]) if len(memory) else None
    return DeviceUsage(
        index=device.index,
        utilization=_stats(device.utilization_avg.array),
        utilization_peak=peak,
        memory_used_peak_mib=memory_peak,
        memory_total_mib=_peak(device.memory_total_max),
        utilization_burst=burst,
        memory_used_low_mib=_memory_low(memory),
        memory_load_correlation=_correlation(device.memory_used_max, memory_peak, peak_series),
    )


def _optional(values: Floats, seen: npt.NDArray[np.bool_]) -> tuple[float | None, ...]:
    """Floats where `seen`, None elsewhere (the summary's "no data" marker)."""
    result: list[float | None] = values.tolist()
    if not seen.all():
        for gap in np.flatnonzero(~seen).tolist():
            result[gap] = None
    return tuple(result)


def _mean_where_seen(sums: npt.NDArray[Any], counts: npt.NDArray[Any]) -> Floats:
    """sums / counts where counts > 0; bins without samples get 0 (callers mark them as no data)."""
    return cast(Floats, sums / np.maximum(counts, 1))


def _bins(stamps: Ints, values: Floats, first: int, width: int, count: int) -> tuple[Floats, Ints]:
    """Sums and sample counts of a series in `count` consecutive bins [first + k*width, first + (k+1)*width).

    Bin edges are found by bisecting the (ascending) timestamps, and each bin is summed by one reduceat:
    no per-sample arithmetic."""
    edges = stamps.searchsorted(np.arange(first, first + width * count + 1, width))
    counts = edges[1:] - edges[:-1]
    if not len(values):
        return np.zeros(count), counts
    sums = np.add.reduceat(values, np.minimum(edges[:-1], len(values) - 1))
    sums[counts == 0] = 0.0  # reduceat gives the value at the index for an empty bin
    return sums, counts


def _clock_hours(series: Series) -> tuple[int, int]:
    """(first clock-hour epoch, number of clock hours) that a non-empty series spans."""
    stamps = series.stamps
    first = int(stamps[0]) - int(stamps[0]) % 3600
    return first, (int(stamps[-1]) - first) // 3600 + 1


def _aligned(series: Sequence[Series]) -> list[tuple[Series, list[Floats]]]:
    """Non-empty series grouped by identical timestamps, as (a series of the group, the group's values).

    Units of one host share the agent's clock: a group's values combine element-wise in one numpy call,
    so an 8-GPU host costs about what a 1-GPU host does."""
    groups: list[tuple[Series, list[Floats]]] = []
    for one in series:
        if not one:
            continue
        for leader, values in groups:
            if _same_clock(leader, one):
                values.append(one.array)
                break
        else:
            groups.append((one, [one.array]))
    return groups


def _combined(values: list[Floats], combine: np.ufunc) -> Floats:
    """Element-wise combination of a group's values (one unit: its own values, not a copy)."""
    return values[0] if len(values) == 1 else cast(Floats, combine.reduce(values))


def _hour_peaks(devices: Sequence[DeviceSeries], first_hour: int, hours: int) -> Floats:
    """Busiest unit's reading per clock hour from `first_hour` (epoch) for `hours` hours; -inf in hours
    without a reading."""
    peaks = np.full(hours, -np.inf)
    for leader, values in _aligned([device.utilization_max or device.utilization_avg for device in devices]):
        slots = (leader.stamps - first_hour) // 3600
        inside = (slots >= 0) & (slots < hours)
        np.maximum.at(peaks, slots[inside], _combined(values, np.maximum)[inside])
    return peaks


@functools.lru_cache(maxsize=64)
def _week_slots(first_bucket: int, hours: int) -> Ints:
    """Hour-of-week bucket of each of `hours` consecutive clock hours from bucket `first_bucket`
    (the same few windows for every host of a run: worked out once, read-only)."""
    slots = (first_bucket + np.arange(hours)) % HOURS_PER_WEEK
    slots.flags.writeable = False
    return slots


def _fold_into_week(peaks: Floats, first_hour: int) -> tuple[float | None, ...]:
    """Hour-of-week maximum of a clock-hour timeline that holds -inf in hours without a reading."""
    # Laid out on whole weeks from the Monday before `first_hour`, the fold is one maximum per column.
    offset = hour_of_week(first_hour)
    weeks = max(1, -(-(offset + len(peaks)) // HOURS_PER_WEEK))
    padded = np.full(weeks * HOURS_PER_WEEK, -np.inf)
    padded[offset : offset + len(peaks)] = peaks
    buckets = padded.reshape(weeks, HOURS_PER_WEEK).max(axis=0)
    return _optional(buckets, buckets > -np.inf)


def _fold_means(first_hour: int, sums: Floats, counts: Ints) -> tuple[float | None, ...]:
    """Hour-of-week means from per-clock-hour sums and sample counts starting at `first_hour`."""
    buckets = _week_slots(hour_of_week(first_hour), len(sums))
    week_counts = np.bincount(buckets, weights=counts, minlength=HOURS_PER_WEEK)
    week_sums = np.bincount(buckets, weights=sums, minlength=HOURS_PER_WEEK)
    return _optional(_mean_where_seen(week_sums, week_counts), week_counts > 0)


def _hourly_mean(series: Series) -> tuple[float | None, ...]:
    if not series:
        return (None,) * HOURS_PER_WEEK
    first, hours = _clock_hours(series)
    return _fold_means(first, *_bins(series.stamps, series.array, first, 3600, hours))


def _daily_mean(devices: Sequence[DeviceSeries], start: int, days: int) -> tuple[float | None, ...]:
    sums = np.zeros(days)
    counts = np.zeros(days, dtype=np.int64)
    for leader, values in _aligned([device.utilization_avg for device in devices]):
        day_sums, day_counts = _bins(leader.stamps, _combined(values, np.add), start, 86400, days)
        sums += day_sums
        counts += day_counts * len(values)
    return _optional(_mean_where_seen(sums, counts), counts > 0)


def _gbps(series: Series) -> float:
    """Bytes per period -> Gbps."""
    return 8 / series.period_seconds / 1e9


def _network_hours(inbound: Series, outbound: Series) -> tuple[int, Floats, npt.NDArray[np.bool_]]:
    """Mean Gbps (in + out) per clock hour: (first clock-hour epoch, Gbps per hour, hours with data)."""
    present = [series for series in (inbound, outbound) if series]
    if not present:
        return 0, np.zeros(0), np.zeros(0, dtype=bool)
    spans = [_clock_hours(series) for series in present]
    first = min(start for start, _ in spans)
    hours = max(start + count * 3600 for start, count in spans) // 3600 - first // 3600
    total = np.zeros(hours)
    seen = np.zeros(hours, dtype=bool)
    for series in present:
        sums, counts = _bins(series.stamps, series.array, first, 3600, hours)
        has = counts > 0
        if has.all():  # the usual case: no hour without a sample, no masks
            total += sums / counts * _gbps(series)
        else:
            total[has] += sums[has] / counts[has] * _gbps(series)
        seen |= has
    return first, total, seen


def summarize(raw: RawUsage) -> UsageSummary:
    window_seconds = (raw.window_end - raw.window_start).total_seconds()
    days = max(1, round(window_seconds / 86400))
    # Span and coverage from the best-covered unit: units share the agent's clock.
    first = last = None
    samples = 0
    period = 300
    for device in raw.devices:
        stamps = device.utilization_avg.timestamps
        if not len(stamps):
            continue
        period = device.utilization_avg.period_seconds
        first = int(stamps[0]) if first is None else min(first, int(stamps[0]))
        last = int(stamps[-1]) if last is None else max(last, int(stamps[-1]))
        samples = max(samples, len(stamps))
    if first is not None and last is not None:
        accelerator_days = (last - first + period) / 86400
        coverage = min(1.0, samples / max(1.0, window_seconds / period))
    else:
        accelerator_days, coverage = 0.0, 0.0
    network_in = _peak(raw.network_in_sum)
    network_out = _peak(raw.network_out_sum)
    # peak(in) + peak(out) can only over-state the peak of in+out: the safe side for sizing.
    network_peak = (
        None
        if network_in is None and network_out is None
        else (network_in or 0) * _gbps(raw.network_in_sum) + (network_out or 0) * _gbps(raw.network_out_sum)
    )
    start_epoch = int(raw.window_start.timestamp())
    first_hour = start_epoch - start_epoch % 3600
    hours = max(0, math.ceil((raw.window_end.timestamp() - first_hour) / 3600))
    hour_peaks = _hour_peaks(raw.devices, first_hour, hours)
    peak_seen = hour_peaks > -np.inf
    network_first, network_gbps, network_seen = _network_hours(raw.network_in_sum, raw.network_out_sum)
    cpu = raw.cpu_avg
    return UsageSummary(
        instance_id=raw.instance_id,
        window_start=raw.window_start,
        window_end=raw.window_end,
        accelerator_data=raw.accelerator_data if raw.devices else AcceleratorData.NONE,
        devices=tuple(_device_usage(device) for device in raw.devices),
        accelerator_days=accelerator_days,
        accelerator_coverage=coverage,
        cpu=_stats(cpu.array),
        network_peak_gbps=network_peak,
        network_p95_gbps=_percentiles(network_gbps[network_seen], 95)[0] if network_seen.any() else None,
        host_memory_peak_pct=_peak(raw.host_memory_max),
        hourly_accelerator_peak=_fold_into_week(hour_peaks, first_hour),
        hourly_cpu_mean=_hourly_mean(cpu),
        # Each clock hour's mean Gbps counts once, however many samples it had.
        hourly_network_mean_gbps=_fold_means(network_first, network_gbps, network_seen.astype(np.int64)),
        daily_accelerator_mean=_daily_mean(raw.devices, start_epoch, days),
        accelerator_hour_peaks=_optional(hour_peaks, peak_seen),
    )
