"""Realistic usage for the analyzer's unit tests: 14 days of series in the shapes the agents publish,
reduced by the real `summarize()`.

Workloads are the demo fleet's shapes (demo/fleet.py): the same vLLM reservation, bursts and weekly jobs
that `make demo` seeds are what these tests analyse. Series have the periods and statistics the collector
asks CloudWatch for: 5-minute averages, hourly maxima, a daily memory.total, 5-minute network sums.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from demo.fleet import Gpu, Shape, constant, timeline

from rightsizer.domain.models.usage import AcceleratorData, UsageSummary
from rightsizer.domain.signals import Signal
from rightsizer.domain.summaries import summarize_one
from rightsizer.domain.usage.series import EMPTY, DeviceSeries, RawUsage, Series, SliceSeries
from tests.factories import NOW

FIVE_MINUTES = 300
HOUR = 3600
DAY = 86400


@dataclass(frozen=True)
class Slice:
    """A MIG GPU instance of GPU `gpu` whose DCGM readings agent/dcgm publishes per instance: its SMs' load (percent of
    its own SMs) and its framebuffer in use (None: DCGM reads it as N/A)."""

    gpu: int
    gpu_instance: str
    profile: str
    load: Shape
    memory_mib: Shape | None = None
    signal: Signal = Signal.SM_ACTIVE


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
    # The shipped agent config publishes the encoder stats (0 sessions unless a Gpu says otherwise); False: an
    # agent config without them.
    encoder_stats: bool = True
    utilization_published: bool = True  # False: utilization.gpu is [N/A] (MIG mode): memory only
    # None: the host runs the whole window; else whether it runs at a time (a host that stops itself): every series,
    # the EC2 ones too, has samples only while it runs.
    runs: Callable[[datetime], bool] | None = None
    # The host ran as `previous_type` until `resized_at`: the agent's series of that type are not read (the
    # collector drops them by their InstanceType dimension), the EC2 series carry no type and are read whole.
    previous_type: str | None = None
    resized_at: datetime | None = None
    # Outbound share of network_gbps (a server answering requests sends 40 %; a packager pushing artifacts sends most).
    network_out_share: float = 0.4
    # EBS read + write (MB/s) and operations per second, as AWS/EC2 publishes them on a Nitro host (None: the series are
    # not read); four fifths of each are reads. The instance store's MB/s beyond EBS, where the agent publishes diskio.
    ebs_mbps: Shape | None = None
    ebs_iops: Shape | None = None
    local_disk_mbps: Shape | None = None
    graphics_processes: tuple[str, ...] = ()  # what procstat found running (dcvserver, Xorg, ...)
    slices: tuple[Slice, ...] = ()  # MIG GPU instances publishing per-instance DCGM readings (with utilization [N/A])


def _series(period: int, points: Sequence[tuple[datetime, float]]) -> Series:
    """NaN is a period the agent did not report (as the collector reads CloudWatch, they are left out)."""
    points = [(t, v) for t, v in points if not math.isnan(v)]
    if not points:
        return EMPTY
    return Series(period, tuple(int(t.timestamp()) for t, _ in points), tuple(v for _, v in points))


def _hourly(points: Sequence[tuple[datetime, float]], combine: Callable[[Sequence[float]], float]) -> Series:
    hours: dict[datetime, list[float]] = {}
    for t, value in points:
        hours.setdefault(t.replace(minute=0, second=0, microsecond=0), []).append(value)
    return _series(HOUR, sorted((hour, combine(values)) for hour, values in hours.items()))


def _hourly_max(points: Sequence[tuple[datetime, float]]) -> Series:
    return _hourly(points, max)


def _hourly_mean(points: Sequence[tuple[datetime, float]]) -> Series:
    return _hourly(points, lambda values: sum(values) / len(values))


def _hourly_sum(points: Sequence[tuple[datetime, float]]) -> Series:
    return _hourly(points, sum)


def _per_hour(shape: Shape | None, stamps: Sequence[datetime], rng: random.Random, scale: float) -> Series:
    """An hourly Sum of a rate (per second) sampled every 5 minutes, scaled (MB to bytes)."""
    if shape is None:
        return EMPTY
    return _hourly_sum([(t, shape(t, rng) * scale * FIVE_MINUTES) for t in stamps])


def _daily_max(value: float, start: datetime, days: int) -> Series:
    return _series(DAY, [(start + timedelta(days=d), value) for d in range(days)])


def _device(workload: Workload, index: int, gpu: Gpu, stamps: Sequence[datetime], rng: random.Random) -> DeviceSeries:
    start = workload.end - timedelta(days=workload.days)
    utilization = [(t, gpu.utilization(t, rng)) for t in stamps]
    memory = [] if workload.neuron else [(t, gpu.memory_used_mib(t, rng)) for t in stamps]
    total = workload.memory_total_mib
    encoder = workload.encoder_stats and not workload.neuron
    sessions = [(t, gpu.encoder_sessions(t, rng) if gpu.encoder_sessions else 0.0) for t in stamps] if encoder else []
    fps = [(t, gpu.encoder_fps(t, rng) if gpu.encoder_fps else 0.0) for t in stamps] if encoder else []
    # A GPU with MIG slices is in MIG mode: nvidia-smi reads its utilization.gpu as [N/A].
    published = workload.utilization_published and not any(one.gpu == index for one in workload.slices)
    signals = tuple((signal, _series(FIVE_MINUTES, [(t, shape(t, rng)) for t in stamps])) for signal, shape in gpu.dcgm)
    slices = tuple(_slice(one, stamps, rng) for one in workload.slices if one.gpu == index)
    return DeviceSeries(
        index=str(index),
        utilization_avg=_series(FIVE_MINUTES, utilization) if published else EMPTY,
        utilization_max=_hourly_max(utilization) if workload.hourly_maxima and published else EMPTY,
        memory_used_max=_hourly_max(memory) if memory else EMPTY,
        memory_total_max=_daily_max(total, start, workload.days) if memory and total else EMPTY,
        encoder_sessions_max=_hourly_max(sessions),
        encoder_fps_avg=_hourly_mean(fps),
        signals=signals,
        slices=slices,
    )


def _slice(one: Slice, stamps: Sequence[datetime], rng: random.Random) -> SliceSeries:
    """A GPU instance's series as the collector reads them: 5-minute averages of its load, hourly maxima of memory."""
    load = _series(FIVE_MINUTES, [(t, one.load(t, rng)) for t in stamps])
    memory = _hourly_max([(t, one.memory_mib(t, rng)) for t in stamps]) if one.memory_mib is not None else EMPTY
    return SliceSeries(one.gpu_instance, one.profile, one.signal, load, memory)


def raw_usage(workload: Workload, *, instance_id: str = "i-0123456789abcdef0", seed: str = "host") -> RawUsage:
    """The series the collector would read for this workload."""
    rng = random.Random(seed)
    start = workload.end - timedelta(days=workload.days)
    runs = workload.runs
    stamps = [t for t in timeline(workload.end, workload.days) if runs is None or runs(t)]
    resized = workload.resized_at
    agent_stamps = [t for t in stamps if resized is None or t >= resized]
    devices = [_device(workload, index, gpu, agent_stamps, rng) for index, gpu in enumerate(workload.gpus)]
    # Bytes per 5 minutes, split between in and out (60/40 as a server answering requests, unless told).
    network = [(t, workload.network_gbps(t, rng) * 1e9 / 8 * FIVE_MINUTES) for t in stamps]
    inbound, outbound = 1 - workload.network_out_share, workload.network_out_share
    host_memory = workload.host_memory_pct
    ebs = _per_hour(workload.ebs_mbps, stamps, rng, 1e6)
    ops = _per_hour(workload.ebs_iops, stamps, rng, 1.0)
    local = _per_hour(workload.local_disk_mbps, stamps, rng, 1e6)
    disk = (
        Series(HOUR, local.stamps, local.array + (ebs.array if ebs else 0.0)) if local else EMPTY
    )  # diskio covers every disk: the EBS volumes and the instance store
    return RawUsage(
        instance_id=instance_id,
        window_start=start,
        window_end=workload.end,
        accelerator_data=AcceleratorData.PER_DEVICE if devices else AcceleratorData.NONE,
        devices=tuple(devices),
        cpu_avg=_series(FIVE_MINUTES, [(t, workload.cpu(t, rng)) for t in stamps]),
        network_in_sum=_series(FIVE_MINUTES, [(t, v * inbound) for t, v in network]),
        network_out_sum=_series(FIVE_MINUTES, [(t, v * outbound) for t, v in network]),
        host_memory_max=_hourly_max([(t, host_memory(t, rng)) for t in agent_stamps]) if host_memory else EMPTY,
        previous_types=(workload.previous_type,) if workload.previous_type else (),
        silence_is_idle=workload.neuron,  # as the collector reads neuron-monitor's series
        ebs_read_bytes=Series(HOUR, ebs.stamps, ebs.array * 0.8) if ebs else EMPTY,
        ebs_write_bytes=Series(HOUR, ebs.stamps, ebs.array * 0.2) if ebs else EMPTY,
        ebs_read_ops=Series(HOUR, ops.stamps, ops.array * 0.8) if ops else EMPTY,
        ebs_write_ops=Series(HOUR, ops.stamps, ops.array * 0.2) if ops else EMPTY,
        disk_bytes=disk,
        graphics_processes=workload.graphics_processes,
    )


def summary(workload: Workload, *, instance_id: str = "i-0123456789abcdef0", seed: str = "host") -> UsageSummary:
    """What the collector and summarize_all() would make of this workload."""
    return summarize_one(raw_usage(workload, instance_id=instance_id, seed=seed))
