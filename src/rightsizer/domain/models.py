"""Domain data: instances, instance-type specs, usage summaries and recommendations.

Pure Python: no I/O, no boto3, no environment. Everything here is a frozen dataclass so that a
value, once collected or computed, cannot drift while it travels through the pipeline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

# Re-exported (`X as X`): the kinds live with their registries, and code imports them from here too.
from rightsizer.domain.action_kinds import ActionKind as ActionKind  # noqa: PLC0414
from rightsizer.domain.findings import Finding as Finding  # noqa: PLC0414
from rightsizer.domain.findings import advised_action
from rightsizer.domain.guards import Gap
from rightsizer.domain.owners import Owner, owner_of
from rightsizer.domain.platforms import Billing, billing
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker_models import SageMakerDetail
from rightsizer.domain.signals import READS, VIDEO_ACTIVE_PCT, Engine, Signal

HOURS_PER_MONTH = Decimal(730)
CENT = Decimal("0.01")
ZERO = Decimal("0.00")  # no money, to the cent


class DecisionKind(StrEnum):
    """What a person decided about advice in Slack (stored as these strings)."""

    SNOOZE = "snooze"  # hides every recommendation of the host until a time
    DISMISS = "dismiss"  # hides one recommendation: different advice for the host shows again


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    def at_most(self, cap: Confidence) -> Confidence:
        order = (Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH)
        return order[min(order.index(self), order.index(cap))]


class AcceleratorKind(StrEnum):
    NVIDIA = "nvidia"  # monitored through the CloudWatch agent's nvidia_gpu plugin
    NEURON = "neuron"  # Inferentia / Trainium, monitored through neuron-monitor
    UNMONITORED = "unmonitored"  # e.g. AMD Radeon (g4ad): the agent publishes nothing


@dataclass(frozen=True, slots=True)
class AcceleratorSpec:
    """Per-device figures used to compare accelerators (one GPU, or one Neuron chip)."""

    model: str
    vendor: str
    memory_gib: float
    memory_bandwidth_gbps: float
    fp32_tflops: float | None = None
    # Dense FP16/BF16 matrix throughput (tensor cores; NeuronCores for Neuron devices), per device:
    # what deep-learning kernels run on. None for accelerators without tensor cores.
    tensor_tflops: float | None = None
    compute_capability: str | None = None  # NVIDIA CUDA compute capability, e.g. "8.6"
    neuroncores_per_device: int = 0
    # Video engines per device (NVENC / NVDEC on NVIDIA GPUs), apart from the SMs that utilization.gpu measures:
    # a host that transcodes video works on these while its "GPU utilisation" reads ~0 %. A100/H100 have no NVENC.
    video_encoders: int = 0
    video_decoders: int = 0
    # Runs graphics (OpenGL, Vulkan, DirectX) with the drivers AWS offers for it (GRID/RTX Virtual Workstation, gaming):
    # a remote workstation or a renderer needs it. A100, H100 and H200 have no display engine or RT cores.
    graphics: bool = False
    ray_tracing: bool = False  # RT cores, which OptiX, Vulkan ray tracing and DXR renderers use
    # Names of the figures above that are estimates rather than read in a vendor or spec source ("tensor_tflops").
    estimated: tuple[str, ...] = ()

    @property
    def compute_capability_tuple(self) -> tuple[int, ...]:
        if not self.compute_capability:
            return ()
        return tuple(int(part) for part in self.compute_capability.split("."))


@dataclass(frozen=True, slots=True)
class InstanceTypeSpec:
    instance_type: str
    vcpus: int
    memory_mib: int
    accelerator_kind: AcceleratorKind
    accelerator_model: str  # key into the accelerator table, e.g. "A10G"; "" when unknown
    accelerator_count: int  # GPUs, or Neuron devices
    accelerator_memory_mib: int  # per device
    network_gbps: float  # baseline bandwidth, per direction (every network card's together)
    neuron_cores: int = 0  # total NeuronCores on the instance (Neuron only)
    architectures: tuple[str, ...] = ("x86_64",)
    virtualization_types: tuple[str, ...] = ("hvm",)
    ena_support: str = "required"  # required | supported | unsupported
    nvme_support: str = "required"  # required | supported | unsupported
    efa_supported: bool = False
    bare_metal: bool = False
    fractional_gpu: bool = False  # a slice of a GPU (g6f): vGPU drivers, not an in-place target
    instance_storage_gb: int = 0  # local NVMe/SSD instance store: wiped when the host stops
    listed_by_api: bool = True  # False: from the bundled previous-generation table
    # What "up to" promises: the burst a network card reaches on credits for a while (every card's together);
    # 0: not published (the baseline is all that is known).
    network_peak_gbps: float = 0.0
    network_cards: int = 1  # MaximumNetworkCards: a host may attach interfaces to several
    ena_express: bool = False  # ENA Express (SRD) supported
    # EBS-optimized limits (EbsOptimizedInfo): MB/s and IOPS the type sustains (baseline) and bursts to (maximum,
    # about 30 minutes a day on the smaller sizes). None: not published for this type.
    ebs_baseline_mbps: float | None = None
    ebs_maximum_mbps: float | None = None
    ebs_baseline_iops: float | None = None
    ebs_maximum_iops: float | None = None
    cluster_placement: bool = True  # PlacementGroupInfo lists the cluster strategy

    @property
    def family(self) -> str:
        return self.instance_type.split(".", 1)[0]

    @property
    def compute_units(self) -> int:
        """How many independently observed accelerator units this type has (GPUs or NeuronCores)."""
        if self.accelerator_kind is AcceleratorKind.NEURON:
            return self.neuron_cores
        return self.accelerator_count

    @property
    def memory_per_unit_mib(self) -> float:
        """Accelerator memory one compute unit can address (per GPU; per NeuronCore's share of its chip)."""
        if self.accelerator_kind is AcceleratorKind.NEURON and self.neuron_cores:
            return self.accelerator_memory_mib * self.accelerator_count / self.neuron_cores
        return float(self.accelerator_memory_mib)

    @property
    def unit_name(self) -> str:
        return "NeuronCore" if self.accelerator_kind is AcceleratorKind.NEURON else "GPU"


@dataclass(frozen=True, slots=True)
class Instance:
    instance_id: str
    account_id: str
    region: str
    availability_zone: str
    instance_type: str
    state: str  # EC2 state name: running, stopped, ...
    launch_time: datetime
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)
    lifecycle: str = "on-demand"  # on-demand | spot | scheduled | capacity-block
    asg_name: str | None = None
    root_device_type: str = "ebs"
    architecture: str = "x86_64"
    ena_support: bool = True
    uses_efa: bool = False
    platform: str = "Linux/UNIX"  # EC2's PlatformDetails (or, where an answer has no details, its Platform: "windows")
    # The On-Demand Capacity Reservation or Capacity Block the host runs in, as EC2 reports it.
    capacity_reservation_id: str | None = None
    usage_operation: str = ""  # EC2's billing code for the platform, e.g. RunInstances:0002 (Windows)
    tenancy: str = "default"  # default | dedicated | host
    placement_group: str = ""  # the placement group it was launched into ("": none)
    placement_strategy: str = ""  # cluster | spread | partition (DescribePlacementGroups; "": not known)
    ena_express: bool = False  # ENA Express (SRD) enabled on one of its interfaces
    network_cards_used: int = 1  # distinct network cards its interfaces are attached to
    image_id: str = ""
    image: str = ""  # the AMI's name and description (DescribeImages; "": not readable): what it was built to run

    @property
    def name(self) -> str:
        return self.tags.get("Name", "")

    @property
    def owner(self) -> Owner | None:
        """What launches and replaces the host (an Auto Scaling group, a node group, a cluster, a fleet), read from
        its tags; None: nothing does, it is its owner's to change (domain/owners.py)."""
        return owner_of(self.tags, self.asg_name)

    @property
    def billing(self) -> Billing:
        """How EC2 bills the host's hours: its platform's rates, not always Linux's."""
        return billing(self.platform, self.usage_operation, self.tenancy)

    @property
    def is_running(self) -> bool:
        return self.state == "running"


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


@dataclass(frozen=True, slots=True)
class Alternative:
    instance_type: str
    monthly_cost: Decimal | None
    confidence: Confidence
    note: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """The numbers behind a recommendation, kept for `show`/`why` and the audit log."""

    observed_days: float = 0.0
    coverage: float = 0.0
    busy_units: int = 0
    total_units: int = 0
    accelerator_p95: float | None = None  # busiest unit
    accelerator_peak: float | None = None
    memory_peak_mib: float | None = None  # busiest unit
    memory_per_unit_mib: float | None = None
    cpu_p95: float | None = None
    network_peak_gbps: float | None = None
    host_memory_peak_pct: float | None = None
    accelerator_burst: float | None = None  # busiest unit, p99 of hourly maxima
    memory_reserved: bool = False  # GPU memory looked reserved by a framework: not a working set
    network_p95_gbps: float | None = None
    daily_accelerator_mean: tuple[float | None, ...] = ()
    idle_hours_per_week: int | None = None
    schedule: str | None = None
    # The busy hours of the week as (first hour of week, hours) runs, Monday 00:00 UTC = 0: what a stop/start
    # schedule is built from (in the team's time zone, when it is approved).
    busy_windows: tuple[tuple[int, int], ...] = ()
    # The stop/start pair approving the schedule creates, in its zone with its margins, as the saving prices it
    # ("starts 07:45 Mon-Fri, stops 21:30 Mon-Fri (Europe/Berlin, ...)"). None: no schedule, or stored before.
    schedule_plan: str | None = None
    # The busiest unit, day by day (the mean of its hourly peaks each day, oldest first): what sparklines draw, so
    # one GPU at 61 % on an eight-GPU host does not read as idle, as the mean of all eight does.
    daily_busiest_unit: tuple[float | None, ...] = ()

    @property
    def daily_trace(self) -> tuple[float | None, ...]:
        """What a sparkline draws: the busiest unit day by day, or (advice stored before it was kept, resources
        whose metrics have no unit of their own) the mean of every unit."""
        return self.daily_busiest_unit or self.daily_accelerator_mean


@dataclass(frozen=True, slots=True)
class Consolidation:
    """Several part-used hosts whose measured work fits fewer hosts: which hosts, and onto what."""

    group: str  # e.g. "team=search in us-east-1a"
    hosts: tuple[str, ...]  # every host of the group, by instance id
    keep: tuple[str, ...]  # the hosts that keep running and take the work of the others
    target_type: str  # the type the kept hosts run


def advice_id(*advice: str) -> str:
    """Stable across re-runs: the same advice (account, region, resource, type, finding, target, ...) on the same
    resource keeps the same id, so a snooze, a dismissal or an approval follows it from one run to the next."""
    return "rec-" + hashlib.sha256("|".join(advice).encode()).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class Recommendation:
    recommendation_id: str
    generated_at: datetime
    account_id: str
    region: str
    instance_id: str
    instance_name: str
    instance_type: str
    availability_zone: str
    state: str
    finding: Finding
    target_type: str | None
    monthly_cost: Decimal | None
    monthly_cost_after: Decimal | None
    confidence: Confidence
    actionable: bool
    reasons: tuple[str, ...]
    evidence: Evidence = field(default_factory=Evidence)
    alternatives: tuple[Alternative, ...] = ()
    asg_name: str | None = None
    lookback_days: int = 14
    lifecycle: str = "on-demand"  # the host's: Spot advice is for whoever launches it
    held_back: str | None = None  # why advice with a target is not one click (unmeasured RAM, ...)
    team: str = ""  # the host's team tag (Policy.team_tag): groups consolidation, picks a schedule's time zone
    # What the change saves on the bill once Reserved Instances, Savings Plans and capacity reservations are
    # counted (None: no price). Equal to monthly_savings when no commitment covers the host.
    monthly_savings_net: Decimal | None = None
    consolidation: Consolidation | None = None
    # The host carries `<Policy.managed_tag_key>=true`, without which the instance workflow refuses it. None: not
    # known (a recommendation stored before the analyzer read the tag), which no surface offers as one click.
    managed: bool | None = None
    # The On-Demand Capacity Reservation or Capacity Block the host runs in (None: none, or not known): its restart
    # capacity is guaranteed, whatever the type's scarcity.
    capacity_reservation: str | None = None
    # What the advice is about (domain/resources.py): an EC2 host, or a SageMaker or node-group resource whose id
    # `instance_id` holds. Stored before kinds existed: an EC2 host.
    kind: ResourceKind = ResourceKind.EC2
    # What launches and replaces the host, in words (domain/owners.py: "Karpenter NodePool 'gpu' (cluster 'ml')");
    # None: nothing does. Such a host's advice is for that owner, never one click.
    owner: str | None = None
    # SageMaker advice: what it acts on (endpoint, variant, config, counts; the notebook) and the numbers behind it.
    sagemaker: SageMakerDetail | None = None
    # A host someone else launches (a node group, Spot): the finding the rules gave it before they reported it as
    # `excluded`, e.g. idle. The node-group pass (domain/node_groups/) reads it. None: not owned elsewhere.
    would_be: Finding | None = None
    # What carrying out the advice risks besides downtime, each in a few words ("its 900 GB instance store is wiped
    # when it stops", "p3.8xlarge is no longer offered in us-east-1: once stopped, it may not start again"): each is
    # explained in `reasons` too, and every confirmation (Slack's, `act --dry-run`) lists them.
    risks: tuple[str, ...] = ()
    # The resource's tags as collected (a node group's: those every node shares): showback groups and filters read
    # them (`--group-by tag:KEY`, `--tag KEY=VALUE`). Stored before tags were kept: none.
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def monthly_savings(self) -> Decimal | None:
        if self.monthly_cost is None or self.monthly_cost_after is None:
            return None
        return self.monthly_cost - self.monthly_cost_after

    @property
    def net_savings(self) -> Decimal | None:
        """What the bill really drops by: list-price savings where no reservation or plan changes them."""
        return self.monthly_savings_net if self.monthly_savings_net is not None else self.monthly_savings

    @property
    def action(self) -> ActionKind | None:
        """The one-click action this advice offers (None: advice only). `actionable` says whether there is one;
        the finding and the target say which (`findings.advised_action`), so stored recommendations need no field of
        their own."""
        return advised_action(self.finding, self.target_type, self.kind) if self.actionable else None


def monthly(hourly: Decimal) -> Decimal:
    return (hourly * HOURS_PER_MONTH).quantize(CENT)
