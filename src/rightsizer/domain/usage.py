"""Reduce raw CloudWatch series to the usage summary the analyzer works on.

CloudWatch's percentile statistics are not used (moto ignores them, and one code path is easier to
trust): we fetch 5-minute Averages and hourly Maximums and compute percentiles here.
"""

from __future__ import annotations

import math
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


def _device_usage(device: DeviceSeries) -> DeviceUsage:
    utilization = series_stats(device.utilization_avg.values)
    peak_source = device.utilization_max.values or device.utilization_avg.values
    return DeviceUsage(
        index=device.index,
        utilization=utilization,
        utilization_peak=max(peak_source) if peak_source else None,
        memory_used_peak_mib=max(device.memory_used_max.values) if device.memory_used_max else None,
        memory_total_mib=max(device.memory_total_max.values) if device.memory_total_max else None,
        memory_activity_p95=_p95(device.memory_activity_max.values),
    )


def _hour_slices(series: Series) -> Iterator[tuple[int, int, int]]:
    """(hour-of-week bucket, start, stop) slices of an ascending series, one per clock hour with data.

    Slicing lets sum()/max() run at C speed instead of a Python loop per datapoint: this is the hot
    path when 10,000 hosts are summarised. Regular series (the common case) are cut arithmetically;
    series with gaps are cut by bisecting hour boundaries.
    """
    stamps = series.timestamps
    count = len(stamps)
    if not count:
        return
    period = series.period_seconds
    if 3600 % period == 0 and stamps[-1] - stamps[0] == (count - 1) * period:
        per_hour = 3600 // period
        first_stop = min(count, (3600 - stamps[0] % 3600) // period or per_hour)
        first_bucket = hour_of_week(stamps[0])
        yield first_bucket, 0, first_stop
        for n, start in enumerate(range(first_stop, count, per_hour), start=1):
            yield (first_bucket + n) % HOURS_PER_WEEK, start, min(count, start + per_hour)
        return
    start = 0
    while start < count:
        hour = stamps[start] - stamps[start] % 3600
        stop = bisect_left(stamps, hour + 3600, start)
        yield hour_of_week(hour), start, stop
        start = stop


def _hourly_peak(devices: Sequence[DeviceSeries]) -> tuple[float | None, ...]:
    buckets: list[float | None] = [None] * HOURS_PER_WEEK
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
            # Regular hourly series: one value per hour-of-week bucket step, no slicing needed.
            first = hour_of_week(stamps[0])
            for offset, peak in enumerate(values):
                bucket = (first + offset) % HOURS_PER_WEEK
                current = buckets[bucket]
                if current is None or peak > current:
                    buckets[bucket] = peak
            continue
        for bucket, start, stop in _hour_slices(series):
            peak = values[start] if stop - start == 1 else max(values[start:stop])
            current = buckets[bucket]
            if current is None or peak > current:
                buckets[bucket] = peak
    return tuple(buckets)


def _hourly_mean(series: Series) -> tuple[float | None, ...]:
    sums = [0.0] * HOURS_PER_WEEK
    counts = [0] * HOURS_PER_WEEK
    values = series.values
    slices = list(_hour_slices(series))
    # One C-level sum per hour, then a short loop over ~336 hours to fold them into the week.
    totals = [sum(values[start:stop]) for _, start, stop in slices]
    for (bucket, start, stop), total in zip(slices, totals, strict=True):
        sums[bucket] += total
        counts[bucket] += stop - start
    return tuple(s / c if c else None for s, c in zip(sums, counts, strict=True))


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


def _bytes_to_gbps(series: Series) -> float | None:
    if not series:
        return None
    return max(series.values) * 8 / series.period_seconds / 1e9


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
        host_memory_peak_pct=max(raw.host_memory_max.values) if raw.host_memory_max else None,
        hourly_accelerator_peak=_hourly_peak(raw.devices),
        hourly_cpu_mean=_hourly_mean(raw.cpu_avg),
        daily_accelerator_mean=_daily_mean(raw.devices, raw.window_start, days),
    )
