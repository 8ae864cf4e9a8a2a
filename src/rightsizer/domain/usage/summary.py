"""Reduce one host's raw CloudWatch series to the usage summary the analyzer works on.

CloudWatch's percentile statistics are not used (moto ignores them, and one code path is easier to
trust): we fetch 5-minute Averages and hourly Maximums and compute percentiles here (stats.py).

`summarize` is the reference for one host. `summaries.summarize_all` summarises the hosts that share
the window's clocks many at a time with the package's public helpers (bins, the week fold, correlations),
so both paths compute every statistic the same way.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rightsizer.domain.models.usage import AcceleratorData, UsageSummary
from rightsizer.domain.usage.clocks import (
    Clocks,
    HourSpan,
    Timelines,
    WindowGrid,
    daily_mean,
    day_means,
    hourly_unit_peaks,
    nan_as_none,
)
from rightsizer.domain.usage.devices import device_usages
from rightsizer.domain.usage.encoders import encoder_views, with_encoders
from rightsizer.domain.usage.flows import network_flows, storage_rates
from rightsizer.domain.usage.series import SILENT_AGENT_SECONDS, RawUsage, gbps
from rightsizer.domain.usage.stats import optional_rows, optional_series_stats, percentiles, series_peak
from rightsizer.domain.usage.week import network_hours, running_share, week_views


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
    clocks = Clocks()
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
    hour_peaks = hourly_unit_peaks(clocks, raw.devices, grid.first_hour, grid.hours)
    cpu_bins = clocks.of(cpu).bins(span.first, 3600, span.count) if cpu else None
    network_gbps, network_seen = network_hours(clocks, span, raw.network_in_sum, raw.network_out_sum)
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
    daily = daily_mean(clocks, raw.devices, grid.start, grid.days)
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
        devices=device_usages(clocks, raw.devices),
        accelerator_days=accelerator_days,
        accelerator_coverage=coverage,
        cpu=optional_series_stats(cpu.array),
        network_peak_gbps=network_peak,
        network_p95_gbps=percentiles(hourly_network, 95)[0] if len(hourly_network) else None,
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
