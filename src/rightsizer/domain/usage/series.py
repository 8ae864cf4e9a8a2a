"""The raw series of one host as CloudWatch returns them (the adapters build them): per-unit and per-MIG-instance
series, the host's CPU, network, memory and storage, and what the window's ends say on their own (a resize, the
agent gone silent, a GPU gone, readings out of range).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeAlias, cast

import numpy as np
import numpy.typing as npt

from rightsizer.domain.models.usage import AcceleratorData, GoneUnit, OutOfRange
from rightsizer.domain.signals import Signal

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


def gbps(series: Series) -> float:
    """Bytes per period -> Gbps."""
    return 8 / series.period_seconds / 1e9
