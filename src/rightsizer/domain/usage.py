"""Reduce raw CloudWatch series to the usage summary the analyzer works on.

CloudWatch's percentile statistics are not used (moto ignores them, and one code path is easier to
trust): we fetch 5-minute Averages and hourly Maximums and compute percentiles here.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from rightsizer.domain.models import AcceleratorData, DeviceUsage, SeriesStats, UsageSummary

HOURS_PER_WEEK = 168
# 1970-01-05 was a Monday: hour-of-week buckets start at Monday 00:00 UTC.
_FIRST_MONDAY_EPOCH = 4 * 86400


@dataclass(frozen=True, slots=True)
class Series:
    """One CloudWatch result: epoch-second timestamps (ascending) and values, at a fixed period."""

    period_seconds: int
    timestamps: Sequence[int] = ()
    values: Sequence[float] = ()

    def __bool__(self) -> bool:
        return bool(self.values)


EMPTY = Series(300)


@dataclass(frozen=True, slots=True)
class DeviceSeries:
    """Series for one GPU (per `index`) or one NeuronCore, merged across the dimension sets seen."""

    index: str
    utilization_avg: Series = EMPTY
    utilization_max: Series = EMPTY
    memory_used_max: Series = EMPTY
    memory_total_max: Series = EMPTY
    # nvidia_smi_utilization_memory (memory-controller busy %), hourly Maximum: its p95 can only
    # over-state the 5-minute p95, which is the safe side (a high value makes projections stricter).
    memory_activity_max: Series = EMPTY


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


def series_stats(values: Sequence[float]) -> SeriesStats | None:
    if not values:
        return None
    ordered = sorted(values)
    return SeriesStats(
        samples=len(ordered),
        mean=sum(ordered) / len(ordered),
        p50=percentile(ordered, 50),
        p95=percentile(ordered, 95),
        p99=percentile(ordered, 99),
        peak=ordered[-1],
    )


def _p95(values: Sequence[float]) -> float | None:
    return percentile(sorted(values), 95) if values else None


def hour_of_week(epoch_seconds: int) -> int:
    return ((epoch_seconds - _FIRST_MONDAY_EPOCH) // 3600) % HOURS_PER_WEEK


# Hours in which a process holds at least this share of the device's peak memory count as "loaded":
# the hours before a process starts (or between restarts) say nothing about how flat its line is.
_LOADED_SHARE = 0.5
_MIN_CORRELATION_HOURS = 24


def _memory_low(values: Sequence[float]) -> float | None:
    """5th percentile of the memory readings taken while a process held memory."""
    if not values:
        return None
    peak = max(values)
    if peak <= 0:
        return 0.0
    loaded = sorted(v for v in values if v >= peak * _LOADED_SHARE)
    return percentile(loaded, 5)


def _correlation(memory: Series, load: Series) -> float | None:
    """Pearson correlation of memory with load over the loaded hours both series share; None when
    undefined or too short. Hours before a process starts (or between restarts) are left out: a jump
    from nothing to a reservation is not memory following the load."""
    if not memory or not load:
        return None
    floor = max(memory.values) * _LOADED_SHARE
    if memory.timestamps == load.timestamps:
        pairs = [(x, y) for x, y in zip(memory.values, load.values, strict=True) if x >= floor]
    else:
        lookup = dict(zip(load.timestamps, load.values, strict=True))
        pairs = [(x, lookup[t]) for t, x in zip(memory.timestamps, memory.values, strict=True) if t in lookup]
        pairs = [(x, y) for x, y in pairs if x >= floor]
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    count = len(xs)
    if count < _MIN_CORRELATION_HOURS:
        return None
    # Sums run in C (map/sum): this is computed for every GPU of every host in the summarising pass.
    sum_x, sum_y = float(sum(xs)), float(sum(ys))
    square_x, square_y = float(sum(map(operator.mul, xs, xs))), float(sum(map(operator.mul, ys, ys)))
    var_x = square_x - sum_x * sum_x / count
    var_y = square_y - sum_y * sum_y / count
    # Relative to the sum of squares: below this, the "variance" is floating-point noise of a flat line.
    if var_x <= 1e-9 * square_x or var_y <= 1e-9 * square_y:
        return None  # a flat line has no correlation with anything
    covariance = float(sum(map(operator.mul, xs, ys))) - sum_x * sum_y / count
    return max(-1.0, min(1.0, covariance / math.sqrt(var_x * var_y)))


def _device_usage(device: DeviceSeries) -> DeviceUsage:
    utilization = series_stats(device.utilization_avg.values)
    peak_series = device.utilization_max or device.utilization_avg
    peak_source = peak_series.values
    memory = device.memory_used_max.values
    return DeviceUsage(
        index=device.index,
        utilization=utilization,
        utilization_peak=max(peak_source) if peak_source else None,
        memory_used_peak_mib=max(memory) if memory else None,
        memory_total_mib=max(device.memory_total_max.values) if device.memory_total_max else None,
        memory_activity_p95=_p95(device.memory_activity_max.values),
        utilization_burst=percentile(sorted(peak_source), 99) if peak_source else None,
        memory_used_low_mib=_memory_low(memory),
        memory_load_correlation=_correlation(device.memory_used_max, peak_series),
    )


@dataclass(frozen=True, slots=True)
class _RegularHours:
    """How a series without gaps, at a period dividing the hour, falls into clock hours."""

    first_hour: int  # epoch of the clock hour holding the first datapoint
    per_hour: int  # datapoints in a whole hour
    first_stop: int  # datapoints in the first (possibly partial) hour


def _regular_hours(series: Series) -> _RegularHours | None:
    stamps, period = series.timestamps, series.period_seconds
    count = len(stamps)
    if not count or 3600 % period or stamps[-1] - stamps[0] != (count - 1) * period:
        return None
    per_hour = 3600 // period
    first_stop = min(count, (3600 - stamps[0] % 3600) // period or per_hour)
    return _RegularHours(stamps[0] - stamps[0] % 3600, per_hour, first_stop)


def _hour_slices(series: Series) -> Iterator[tuple[int, int, int]]:
    """(clock-hour start epoch, start, stop) slices of an ascending series, one per hour with data.

    Slicing lets sum()/max() run at C speed instead of a Python loop per datapoint: this is the hot
    path when 10,000 hosts are summarised. Regular series (the common case) are cut arithmetically;
    series with gaps are cut by bisecting hour boundaries.
    """
    stamps = series.timestamps
    count = len(stamps)
    regular = _regular_hours(series)
    if regular is not None:
        yield regular.first_hour, 0, regular.first_stop
        for n, start in enumerate(range(regular.first_stop, count, regular.per_hour), start=1):
            yield regular.first_hour + n * 3600, start, min(count, start + regular.per_hour)
        return
    start = 0
    while start < count:
        hour = stamps[start] - stamps[start] % 3600
        stop = bisect_left(stamps, hour + 3600, start)
        yield hour, start, stop
        start = stop


def _hour_peaks(devices: Sequence[DeviceSeries], first_hour: int, hours: int) -> list[float | None]:
    """Busiest unit's reading per clock hour, from `first_hour` (epoch) for `hours` hours."""
    peaks: list[float | None] = [None] * hours
    # Units of one host share the agent's clock: take the element-wise max of aligned series first
    # (map() runs in C), so an 8-GPU host costs one pass instead of eight.
    aligned: dict[tuple[int, ...], tuple[Series, list[Sequence[float]]]] = {}
    for device in devices:
        series = device.utilization_max or device.utilization_avg
        if series:
            key = tuple(series.timestamps)
            aligned.setdefault(key, (series, []))[1].append(series.values)
    for series, value_lists in aligned.values():
        values: Sequence[float] = value_lists[0] if len(value_lists) == 1 else list(map(max, *value_lists))
        stamps = series.timestamps
        if series.period_seconds == 3600 and stamps[-1] - stamps[0] == (len(stamps) - 1) * 3600:
            # Regular hourly series: one value per hour, no slicing needed.
            offset = (stamps[0] - stamps[0] % 3600 - first_hour) // 3600
            pairs: Iterator[tuple[int, float]] = enumerate(values, start=offset)
        else:
            pairs = (
                ((hour - first_hour) // 3600, values[start] if stop - start == 1 else max(values[start:stop]))
                for hour, start, stop in _hour_slices(series)
            )
        for index, peak in pairs:
            if 0 <= index < hours:
                current = peaks[index]
                if current is None or peak > current:
                    peaks[index] = peak
    return peaks


def _fold_into_week(timeline: Sequence[float | None], first_hour: int) -> tuple[float | None, ...]:
    """Hour-of-week maximum of a clock-hour timeline."""
    buckets: list[float | None] = [None] * HOURS_PER_WEEK
    first_bucket = hour_of_week(first_hour)
    for offset, value in enumerate(timeline):
        if value is None:
            continue
        bucket = (first_bucket + offset) % HOURS_PER_WEEK
        current = buckets[bucket]
        if current is None or value > current:
            buckets[bucket] = value
    return tuple(buckets)


def _hour_totals(series: Series) -> Iterator[tuple[int, float, int]]:
    """(clock-hour start epoch, sum, count) per hour with data."""
    values = series.values
    regular = _regular_hours(series)
    if regular is None:
        for hour, start, stop in _hour_slices(series):
            yield hour, sum(values[start:stop]), stop - start
        return
    # Regular series (the common case): zip over one iterator taken per_hour at a time groups whole
    # hours, and sums them, without a Python loop per hour.
    count, per_hour, first_stop = len(values), regular.per_hour, regular.first_stop
    whole = (count - first_stop) // per_hour
    middle = values[first_stop : first_stop + whole * per_hour]
    totals = [sum(values[:first_stop]), *map(sum, zip(*[iter(middle)] * per_hour, strict=True))]
    sizes = [first_stop, *([per_hour] * whole)]
    tail = count - first_stop - whole * per_hour
    if tail:
        totals.append(sum(values[count - tail :]))
        sizes.append(tail)
    first_hour = regular.first_hour
    yield from zip(range(first_hour, first_hour + 3600 * len(totals), 3600), totals, sizes, strict=True)


def _fold_means(hourly: Iterator[tuple[int, float, int]], scale: float = 1.0) -> tuple[float | None, ...]:
    """Hour-of-week means of (hour, sum, count) triples."""
    sums = [0.0] * HOURS_PER_WEEK
    counts = [0] * HOURS_PER_WEEK
    for hour, total, size in hourly:
        bucket = ((hour - _FIRST_MONDAY_EPOCH) // 3600) % HOURS_PER_WEEK
        sums[bucket] += total
        counts[bucket] += size
    return tuple(s / c * scale if c else None for s, c in zip(sums, counts, strict=True))


def _hourly_mean(series: Series) -> tuple[float | None, ...]:
    return _fold_means(_hour_totals(series))


def _daily_mean(devices: Sequence[DeviceSeries], window_start: datetime, days: int) -> tuple[float | None, ...]:
    start = int(window_start.timestamp())
    sums = [0.0] * days
    counts = [0] * days
    for device in devices:
        stamps, values = device.utilization_avg.timestamps, device.utilization_avg.values
        for day in range(days):
            lo = bisect_left(stamps, start + day * 86400)
            hi = bisect_left(stamps, start + (day + 1) * 86400, lo)
            if hi > lo:
                sums[day] += sum(values[lo:hi])
                counts[day] += hi - lo
    return tuple(s / c if c else None for s, c in zip(sums, counts, strict=True))


def _gbps(series: Series) -> float:
    """Bytes per period -> Gbps."""
    return 8 / series.period_seconds / 1e9


def _bytes_to_gbps(series: Series) -> float | None:
    if not series:
        return None
    return max(series.values) * _gbps(series)


def _network_hours(inbound: Series, outbound: Series) -> dict[int, float]:
    """Mean Gbps (in + out) per clock hour with data."""
    hours: dict[int, float] = {}
    for series in (inbound, outbound):
        if series:
            scale = _gbps(series)
            for hour, total, size in _hour_totals(series):
                hours[hour] = hours.get(hour, 0.0) + total / size * scale
    return hours


def summarize(raw: RawUsage) -> UsageSummary:
    window_seconds = (raw.window_end - raw.window_start).total_seconds()
    days = max(1, round(window_seconds / 86400))
    # Span and coverage from the best-covered unit: units share the agent's clock.
    first = last = None
    samples = 0
    period = 300
    for device in raw.devices:
        stamps = device.utilization_avg.timestamps
        if not stamps:
            continue
        period = device.utilization_avg.period_seconds
        first = stamps[0] if first is None else min(first, stamps[0])
        last = stamps[-1] if last is None else max(last, stamps[-1])
        samples = max(samples, len(stamps))
    if first is not None and last is not None:
        accelerator_days = (last - first + period) / 86400
        coverage = min(1.0, samples / max(1.0, window_seconds / period))
    else:
        accelerator_days, coverage = 0.0, 0.0
    network_in = _bytes_to_gbps(raw.network_in_sum)
    network_out = _bytes_to_gbps(raw.network_out_sum)
    # peak(in) + peak(out) can only over-state the peak of in+out: the safe side for sizing.
    network_peak = None if network_in is None and network_out is None else (network_in or 0) + (network_out or 0)
    start_epoch = int(raw.window_start.timestamp())
    first_hour = start_epoch - start_epoch % 3600
    hours = max(0, math.ceil((raw.window_end.timestamp() - first_hour) / 3600))
    hour_peaks = _hour_peaks(raw.devices, first_hour, hours)
    network_hours = _network_hours(raw.network_in_sum, raw.network_out_sum)
    return UsageSummary(
        instance_id=raw.instance_id,
        window_start=raw.window_start,
        window_end=raw.window_end,
        accelerator_data=raw.accelerator_data if raw.devices else AcceleratorData.NONE,
        devices=tuple(_device_usage(device) for device in raw.devices),
        accelerator_days=accelerator_days,
        accelerator_coverage=coverage,
        cpu=series_stats(raw.cpu_avg.values),
        network_peak_gbps=network_peak,
        network_p95_gbps=percentile(sorted(network_hours.values()), 95) if network_hours else None,
        host_memory_peak_pct=max(raw.host_memory_max.values) if raw.host_memory_max else None,
        hourly_accelerator_peak=_fold_into_week(hour_peaks, first_hour),
        hourly_cpu_mean=_hourly_mean(raw.cpu_avg),
        hourly_network_mean_gbps=_fold_means((hour, gbps, 1) for hour, gbps in network_hours.items()),
        daily_accelerator_mean=_daily_mean(raw.devices, raw.window_start, days),
        accelerator_hour_peaks=tuple(hour_peaks),
    )
