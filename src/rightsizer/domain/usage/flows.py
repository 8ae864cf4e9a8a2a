"""Flows through the host's limits: network per direction, EBS, the instance store."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rightsizer.domain.models.usage import Rate
from rightsizer.domain.usage.clocks import Clocks, HourSpan, combined
from rightsizer.domain.usage.series import Floats, Ints, RawUsage, Series, gbps
from rightsizer.domain.usage.stats import percentiles, pick_rows, same_stamps

MB = 1e6  # bytes in the MB of EC2's EBS figures (MB/s)


def rate(values: Floats) -> Rate | None:
    """The Rate of per-hour (or per-period) rates: p99 of them sustained, the highest the peak (None: no readings)."""
    if not len(values):
        return None
    sustained, peak = percentiles(values, 99, 100)
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
        return first.stamps, combined([one.array for one in present], np.add)
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


def network_flows(clocks: Clocks, hours: HourSpan, raw: RawUsage) -> tuple[Rate | None, Rate | None]:
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
