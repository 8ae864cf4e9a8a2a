"""Realistic usage for the analyzer's unit tests: 14 days of series in the shapes the agents publish,
reduced by the real `summarize()`.

Workloads are the demo fleet's shapes (demo/fleet.py): the same vLLM reservation, bursts and weekly jobs
that `make demo` seeds are what these tests analyse. Series have the periods and statistics the collector
asks CloudWatch for: 5-minute averages, hourly maxima, a daily memory.total, 5-minute network sums.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from demo.fleet import Gpu, Shape, constant, timeline

from rightsizer.domain.models import AcceleratorData, UsageSummary
from rightsizer.domain.summaries import summarize_one
from rightsizer.domain.usage import EMPTY, DeviceSeries, RawUsage, Series
from tests.factories import NOW

FIVE_MINUTES = 300
HOUR = 3600
DAY = 86400


@dataclass(frozen=True)
class Workload:
    """One host's behaviour: per-unit shapes plus the host's CPU, network, RAM."""

    gpus: Sequence[Gpu] = ()
    memory_total_mib: float | None = 23028.0  # nvidia-smi's memory.total; None: not published
    cpu: Shape = field(default=constant(3.0))
    network_gbps: Shape = field(default=constant(0.005))  # in + out
    host_memory_pct: Shape | None = field(default=constant(30.0))
    days: int = 14
    end: datetime = NOW
    neuron: bool = False  # NeuronCores: utilisation only, as neuron-monitor publishes
    hourly_maxima: bool = True  # False: only 5-minute averages came back (no hourly Maximum series)


def _series(period: int, points: Sequence[tuple[datetime, float]]) -> Series:
    if not points:
        return EMPTY
    return Series(period, tuple(int(t.timestamp()) for t, _ in points), tuple(v for _, v in points))


def _hourly_max(points: Sequence[tuple[datetime, float]]) -> Series:
    hours: dict[datetime, float] = {}
    for t, value in points:
        hour = t.replace(minute=0, second=0, microsecond=0)
        hours[hour] = max(value, hours.get(hour, value))
    return _series(HOUR, sorted(hours.items()))


def _daily_max(value: float, start: datetime, days: int) -> Series:
    return _series(DAY, [(start + timedelta(days=d), value) for d in range(days)])


def summary(workload: Workload, *, instance_id: str = "i-0123456789abcdef0", seed: str = "host") -> UsageSummary:
    """What the collector and summarize() would make of this workload."""
    rng = random.Random(seed)
    start = workload.end - timedelta(days=workload.days)
    stamps = list(timeline(workload.end, workload.days))
    devices = []
    for index, gpu in enumerate(workload.gpus):
        utilization = [(t, gpu.utilization(t, rng)) for t in stamps]
        memory = [] if workload.neuron else [(t, gpu.memory_used_mib(t, rng)) for t in stamps]
        total = workload.memory_total_mib
        devices.append(
            DeviceSeries(
                index=str(index),
                utilization_avg=_series(FIVE_MINUTES, utilization),
                utilization_max=_hourly_max(utilization) if workload.hourly_maxima else EMPTY,
                memory_used_max=_hourly_max(memory) if memory else EMPTY,
                memory_total_max=_daily_max(total, start, workload.days) if memory and total else EMPTY,
            )
        )
    # Bytes per 5 minutes, split 60/40 between in and out as a server answering requests.
    network = [(t, workload.network_gbps(t, rng) * 1e9 / 8 * FIVE_MINUTES) for t in stamps]
    host_memory = workload.host_memory_pct
    raw = RawUsage(
        instance_id=instance_id,
        window_start=start,
        window_end=workload.end,
        accelerator_data=AcceleratorData.PER_DEVICE if devices else AcceleratorData.NONE,
        devices=tuple(devices),
        cpu_avg=_series(FIVE_MINUTES, [(t, workload.cpu(t, rng)) for t in stamps]),
        network_in_sum=_series(FIVE_MINUTES, [(t, v * 0.6) for t, v in network]),
        network_out_sum=_series(FIVE_MINUTES, [(t, v * 0.4) for t, v in network]),
        host_memory_max=_hourly_max([(t, host_memory(t, rng)) for t in stamps]) if host_memory else EMPTY,
    )
    return summarize_one(raw)
