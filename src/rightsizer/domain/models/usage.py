"""What a host's CloudWatch data say, reduced to what the analyzer needs (`UsageSummary`): each unit's usage
(`DeviceUsage`, with its DCGM signals and MIG slices), the flows through its limits (`Rate`), and what changed or broke
inside the window (a regime change, a resize, a unit gone, readings out of range)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from rightsizer.domain.guards import Gap
from rightsizer.domain.signals import READS, VIDEO_ACTIVE_PCT, Engine, Signal


@dataclass(frozen=True, slots=True)
class SeriesStats:
    """Distribution of one metric over the look-back window (percentiles of 5-minute averages)."""

    samples: int
    mean: float
    p50: float
    p95: float
    p99: float
    peak: float


@dataclass(frozen=True, slots=True)
class SignalStats:
    """One DCGM signal of one GPU over the window (domain/signals.py), in percent: its 5-minute averages' percentiles
    (p95 the steady load, the peak the busiest hours a target must carry)."""

    signal: Signal
    stats: SeriesStats


@dataclass(frozen=True, slots=True)
class Rate:
    """A flow through one of the host's limits (network in or out, EBS bytes or operations, the local disks): the level
    its busiest hours hold again and again (p99 of the hourly means), which a target must carry at its baseline, and the
    highest reading at the series' own period, which it may reach on burst credits."""

    sustained: float
    peak: float


@dataclass(frozen=True, slots=True)
class GoneUnit:
    """A GPU whose series stopped while its siblings kept reporting and the host kept running: off the bus (Xid 79)
    or disabled."""

    index: str
    since: datetime  # the end of its last reading


@dataclass(frozen=True, slots=True)
class SliceUsage:
    """One GPU instance (a MIG slice: its own SMs and memory) of a GPU in MIG mode, as DCGM measures it where the host
    publishes per-instance readings (agent/dcgm): nvidia-smi reads such a GPU's utilization.gpu as [N/A], so the
    slices' load is the GPU's."""

    gpu_instance: str  # nvidia-smi's GI ID on its GPU
    profile: str  # as nvidia-smi names it, without "MIG ": "3g.20gb"
    signal: Signal  # SM active, or SM occupancy where the instance publishes no SM active
    load: SeriesStats  # of `signal`, in percent of the instance's own SMs (5-minute averages)
    memory_used_peak_mib: float | None = None  # its framebuffer's peak; None: DCGM reads it as N/A on this driver


class AcceleratorData(StrEnum):
    PER_DEVICE = "per_device"  # one series per GPU / NeuronCore
    ROLLUP = "rollup"  # only the agent's InstanceId aggregate (max = busiest GPU)
    NONE = "none"


@dataclass(frozen=True, slots=True)
class DeviceUsage:
    index: str  # GPU index or NeuronCore id as published; "*" for a roll-up
    utilization: SeriesStats | None
    utilization_peak: float | None  # max of the hourly Maximums: any real activity at all
    memory_used_peak_mib: float | None = None
    memory_total_mib: float | None = None  # what nvidia-smi reports as memory.total
    # p99 of the hourly Maximums: the level the busiest hours reach again and again (a target must
    # carry it), robust to the odd spike such as a model load.
    utilization_burst: float | None = None
    # 5th percentile of the hourly memory peaks while a process held memory (>= half the peak): with
    # the peak it tells a flat, reserved line (vLLM, JAX, TensorFlow) from a working set that moves.
    memory_used_low_mib: float | None = None
    # Pearson correlation of hourly memory peaks with hourly utilisation peaks; None when either is flat
    # or there are too few common hours to say.
    memory_load_correlation: float | None = None
    # The video encoder (NVENC), which utilization.gpu does not see: the most encoder sessions open in any hour
    # (None: the agent publishes no encoder stats for this GPU, so video work cannot be told from idleness), the
    # hours with at least one session, and the mean frame rate of those hours.
    encoder_sessions_peak: float | None = None
    encoder_active_hours: int = 0
    encoder_fps_mean: float | None = None
    # Share of the window the unit was silent while the host ran, read as idle (neuron-monitor reports only the
    # NeuronCores an application holds): 1 means it did not report at all in the window.
    silent_share: float = 0.0
    # The memory peak of the last days of the window (usage.RECENT_MEMORY_SECONDS): an out-of-memory risk that ended
    # (a smaller model, a fix) is not a reason to pay for more memory now. None: no reading then.
    memory_recent_peak_mib: float | None = None
    # DCGM's signals the GPU publishes (SM active, tensor and DRAM activity, NVENC/NVDEC utilisation), in
    # domain/signals.py's order; empty where it publishes none.
    profile: tuple[SignalStats, ...] = ()
    # The GPU's MIG instances that publish DCGM readings of their own (domain/mig.py), by GPU instance id; empty for a
    # GPU not in MIG mode or a host without the per-instance publisher.
    slices: tuple[SliceUsage, ...] = ()

    def signal(self, which: Signal) -> SeriesStats | None:
        """The GPU's stats of a DCGM signal (None: not published)."""
        for found in self.profile:  # a loop, not a generator: most GPUs publish none, and this is asked per rule
            if found.signal is which:
                return found.stats
        return None

    def best_signal(self, engine: Engine) -> tuple[Signal, SeriesStats] | None:
        """The best DCGM signal the GPU publishes for `engine` (signals.READS' order) and its stats; None: none."""
        if not self.profile:
            return None
        for signal in READS[engine]:
            stats = self.signal(signal)
            if stats is not None:
                return signal, stats
        return None

    @property
    def encodes(self) -> bool:
        """Did the GPU's video encoder work at some point in the window (a session open, or DCGM's NVENC at work)?"""
        return (self.encoder_sessions_peak or 0.0) >= 1.0 or self._engine_worked(Signal.ENCODER)

    @property
    def decodes(self) -> bool:
        """Did its video decoder (NVDEC) work, as DCGM measures it? (Without DCGM no Linux metric shows decoding.)"""
        return self._engine_worked(Signal.DECODER)

    def _engine_worked(self, which: Signal) -> bool:
        if not self.profile:
            return False
        stats = self.signal(which)
        return stats is not None and stats.peak >= VIDEO_ACTIVE_PCT


class RegimeKind(StrEnum):
    """How a host's work changed inside the window (see domain/regimes.py)."""

    WENT_QUIET = "went_quiet"  # the work stopped: every unit has been quiet since
    WENT_BUSY = "went_busy"  # work started after a long quiet stretch
    STEPPED_DOWN = "stepped_down"  # the load fell to a lower level and stayed there
    STEPPED_UP = "stepped_up"  # the load rose to a higher level and stayed there


@dataclass(frozen=True, slots=True)
class RegimeChange:
    """A sustained change of the work inside the look-back window: the summary covers only the time since."""

    kind: RegimeKind
    since: datetime  # the current regime starts here
    level_before: float  # the busiest unit's mean utilisation before (%), or the host's mean CPU for a CPU step
    level_after: float  # ...and since
    days_before: float  # how long the earlier regime was seen in the window
    measure: str = "accelerator"  # "accelerator", or "cpu": the host's CPU stepped while the accelerators did not


@dataclass(frozen=True, slots=True)
class Resize:
    """An instance-type change EC2 recorded (CloudTrail's ModifyInstanceAttribute): when, and to what type."""

    at: datetime
    instance_type: str


@dataclass(frozen=True, slots=True)
class TypeChange:
    """The host ran as another type earlier in the window: only the samples on its current type are judged."""

    previous_types: tuple[str, ...]
    since: datetime  # the first sample on the current type
    source: str  # how the change was seen, e.g. "the CloudWatch agent's InstanceType dimension"
    # Not seen, only possible: the host started inside the window while CloudTrail, which records resizes, could not
    # be read (domain/guards.py). The samples before that start are not judged either.
    assumed: bool = False


@dataclass(frozen=True, slots=True)
class OutOfRange:
    """A percentage series with readings outside 0-100 %: an agent bug or a unit mix-up, not a measure of anything."""

    series: str  # "utilization" (of a unit: `device`), "cpu" (AWS/EC2), "host_memory" (the agent's mem_used_percent)
    low: float  # its lowest and highest readings
    high: float
    device: str | None = None


@dataclass(frozen=True, slots=True)
class UsageSummary:
    """What 14 days of CloudWatch data say about one instance, reduced to what the analyzer needs."""

    instance_id: str
    window_start: datetime
    window_end: datetime
    accelerator_data: AcceleratorData
    devices: tuple[DeviceUsage, ...] = ()
    accelerator_days: float = 0.0  # span between first and last accelerator datapoint
    accelerator_coverage: float = 0.0  # share of expected periods that have accelerator data
    cpu: SeriesStats | None = None
    network_peak_gbps: float | None = None
    network_p95_gbps: float | None = None  # in + out, p95 of the hourly means
    host_memory_peak_pct: float | None = None
    # Hour-of-week (0 = Monday 00:00 UTC) busiest accelerator reading, mean CPU and mean network
    # (Gbps, in + out); None = no data.
    hourly_accelerator_peak: tuple[float | None, ...] = ()
    hourly_cpu_mean: tuple[float | None, ...] = ()
    hourly_network_mean_gbps: tuple[float | None, ...] = ()
    daily_accelerator_mean: tuple[float | None, ...] = ()  # one value per day, oldest first
    # Busiest accelerator reading per clock hour of the window, oldest first (index 0 = the hour that
    # holds window_start): tells a pattern that repeats every week from one seen once.
    accelerator_hour_peaks: tuple[float | None, ...] = ()
    # Most encoder sessions open on any GPU, per hour of the week and per clock hour of the window (as the two
    # views above); empty when no GPU publishes encoder stats.
    hourly_encoder_sessions: tuple[float | None, ...] = ()
    encoder_hour_sessions: tuple[float | None, ...] = ()
    # Share of the recent time it was running (the last week, or the last three days where lower; AWS/EC2 publishes
    # CPUUtilization whenever the instance runs): below 1 for a host that stops itself. None: no EC2 metrics.
    running_share: float | None = None
    # The busiest 5-minute CPU average of each hour of the week, the lowest over the weeks that saw it: a job at a
    # fixed hour (a nightly cron) reaches it every week, a one-off spike does not. And the mean CPU per day.
    hourly_cpu_peak: tuple[float | None, ...] = ()
    daily_cpu_mean: tuple[float | None, ...] = ()
    # A sustained change of the work inside the window: the summary then covers only the time since (window_start
    # is `regime.since`); daily_accelerator_mean still spans the whole window, so the step shows.
    regime: RegimeChange | None = None
    # The host was resized inside the window: the summary covers only the samples on its current type.
    type_change: TypeChange | None = None
    # The accelerator series stopped here while EC2 shows the host running on (the agent stopped publishing): what
    # the accelerators did since is unknown. None: they did not stop (or are neuron-monitor's, silent when unused).
    accelerator_silent_since: datetime | None = None
    # Series whose readings no real host can give (outside 0-100 %): the host is not judged on them.
    out_of_range: tuple[OutOfRange, ...] = ()
    # Sources about this host that could not be read (its series answered in part, the host not described again):
    # the one clicks they guard are held back (domain/guards.py).
    gaps: tuple[Gap, ...] = ()
    # Network per direction (Gbps; EC2's bandwidth applies to each direction on its own), EBS read + write (MB/s and
    # operations per second, AWS/EC2's EBS* metrics), and the instance store (MB/s: the agent's diskio less EBS, where
    # diskio is published). None: not published.
    network_in: Rate | None = None
    network_out: Rate | None = None
    ebs_mbps: Rate | None = None
    ebs_iops: Rate | None = None
    local_disk_mbps: Rate | None = None
    # GPUs that stopped reporting while their siblings and the host ran on (see GoneUnit).
    gone_units: tuple[GoneUnit, ...] = ()
    # Processes the agent's procstat plugin saw running that only a graphics workload runs (dcvserver, Xorg, ...).
    graphics_processes: tuple[str, ...] = ()

    @property
    def encoder_measured(self) -> bool:
        """Does any GPU publish encoder stats or DCGM's NVENC utilisation (so that video work would show)?"""
        return any(
            d.encoder_sessions_peak is not None or (d.profile and d.signal(Signal.ENCODER) is not None)
            for d in self.devices
        )

    @property
    def encodes(self) -> bool:
        return any(d.encodes for d in self.devices)
