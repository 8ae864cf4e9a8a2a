"""Each unit's usage: its load and memory statistics, its DCGM profile, its MIG instances, and how its memory follows
its load; units in the order people read them (GPU 0, 1, ... 10).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rightsizer.domain.models.usage import DeviceUsage, SignalStats, SliceUsage
from rightsizer.domain.signals import Signal
from rightsizer.domain.usage.clocks import Clocks
from rightsizer.domain.usage.series import DeviceSeries, Floats
from rightsizer.domain.usage.stats import (
    ascending,
    memory_load_correlations,
    memory_low,
    optional_series_stats,
    percentiles,
    row_stats,
    series_peak,
)


def device_usages(clocks: Clocks, devices: Sequence[DeviceSeries]) -> tuple[DeviceUsage, ...]:
    memories = [ascending(device.memory_used_max.array) for device in devices]
    memory_peaks = [float(memory[-1]) if len(memory) else None for memory in memories]
    followed = _unit_correlations(clocks, devices, memory_peaks)
    return tuple(
        _device_usage(device, memory, peak, follows, profile)
        for device, memory, peak, follows, profile in zip(
            devices, memories, memory_peaks, followed, profiles(devices), strict=True
        )
    )


def _unit_correlations(
    clocks: Clocks, devices: Sequence[DeviceSeries], peaks: Sequence[float | None]
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
        if (stats := optional_series_stats(one.load.array)) is not None
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
    burst, peak = percentiles(peak_series.array, 99, 100) if peak_series else (None, None)
    return DeviceUsage(
        index=device.index,
        utilization=optional_series_stats(device.utilization_avg.array),
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
