"""Every resource a target type must carry, one entry each (`LIMITS`), and what the work needs of them (`Demand`).

An expert checks every resource a smaller host has less of: GPU count and memory, how fast its accelerators run the
work, vCPUs, RAM, the network at its baseline (not its "up to"), EBS throughput and IOPS at their baseline, the local
NVMe, EFA and the interconnect, graphics, the video engines, the CPU architecture. Each is one `Limit`:

- `offers`: what a type has of it, as a number (a flag is 1 or 0), read once per catalog (from DescribeInstanceTypes
  and the accelerator table);
- `needs`: the floor the host's measured work (with its headroom) or its set-up puts on it (0: none);
- `says`: the sentence it adds to a target's reason; `short`: why a cheaper type fell short of it.

A type carries the work when it offers at least what every limit needs (sizing.targets.candidates compares the two
vectors, type by type, cheapest first). The first limit a cheaper type falls short of is named in the reasons
("decided by"), so advice says what ruled the cheaper types out. Adding a limit is one entry here (and, where
the host's work sets it, one field of `Demand`).

The platform is carried where targets are priced: a host is compared only with types that have a price on its own
platform (domain/platforms.py; a Windows host is never moved to a type sold without Windows).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from rightsizer.domain.models import AcceleratorSpec, InstanceTypeSpec
from rightsizer.domain.signals import FIGURE, PROJECTED, READS, SIGNALS, Engine, Load
from rightsizer.domain.wording import gib, pct, plural


@dataclass(frozen=True, slots=True)
class StorageNeed:
    """EBS (read + write) at the target's baseline, MB/s and IOPS, and the busiest hour within its maximum; the
    instance store the work uses. 0: not measured, or a trickle."""

    ebs_mbps: float = 0.0
    ebs_burst_mbps: float = 0.0
    ebs_iops: float = 0.0
    ebs_basis: str = ""
    local_storage_gb: float = 0.0
    local_basis: str = ""


NO_STORAGE_NEED = StorageNeed()


@dataclass(frozen=True, slots=True)
class Setup:
    """What the host is set up to use, whatever its load: a target must keep it."""

    architecture: str = "x86_64"
    efa: bool = False
    without_ena: bool = False  # its AMI has no ENA driver: a type that requires ENA would not boot it
    ena_express: bool = False
    network_cards: int = 1
    placement_group: str = ""
    graphics: tuple[str, ...] = ()  # why the host needs a GPU with graphics (empty: it does not)
    ray_tracing: bool = False  # ...and RT cores (a renderer on a GPU that has them)


NO_SETUP = Setup()


@dataclass(frozen=True)
class Demand:
    """What a target must provide, derived from measurements (or from today's size where unmeasured) and from what the
    host is set up to use."""

    units: int  # GPUs / NeuronCores that must remain
    memory_per_unit_mib: float
    memory_measured: bool
    vcpus: int
    host_memory_mib: float
    host_memory_measured: bool
    network_gbps: float  # per direction, at the target's baseline
    unit_util_p95: float  # busiest unit
    unit_util_burst: float  # busiest unit's p99 of hourly maxima
    util_ceiling: float  # projected p95 allowed on a target
    burst_ceiling: float  # projected burst allowed on a target
    # False when a unit that must stay published no utilisation at all: its load cannot be projected,
    # so only accelerators at least as fast qualify.
    load_known: bool = True
    memory_basis: str = ""  # how memory_per_unit_mib was set, for the reasons
    # Video engines (NVENC, NVDEC) a target's GPUs must have: today's where the encoders work (their load is not
    # published as a percentage, so it cannot be projected onto fewer engines), one of each where nobody measured
    # them on a GPU that has them, none where they were measured idle.
    video_encoders: int = 0
    video_decoders: int = 0
    # The network's 5-minute peak per direction x headroom: what a type's "up to" (burst) must reach. 0: not measured.
    network_burst_gbps: float = 0.0
    network_basis: str = ""  # how network_gbps was set, for the reasons ("" where it was not measured)
    storage: StorageNeed = field(default_factory=lambda: NO_STORAGE_NEED)
    setup: Setup = field(default_factory=lambda: NO_SETUP)
    # The busiest unit's load of each engine a target's speed is projected on (signals.PROJECTED's order), from DCGM's
    # signals where the GPUs publish them. Empty: every engine carries the kernel time above.
    loads: tuple[Load, ...] = ()

    @cached_property
    def engine_loads(self) -> tuple[Load, ...]:
        """Each projected engine's load: DCGM's measure where there is one, else kernel time."""
        if self.loads:
            return self.loads
        return tuple(Load(engine, 0.0, self.unit_util_p95, self.unit_util_burst) for engine in PROJECTED)

    @property
    def measured_loads(self) -> bool:
        """Does any projected engine's load rest on a DCGM signal?"""
        return any(load.measured for load in self.engine_loads)

    def room(self, load: Load) -> float:
        """How much slower a target's engine may run this load: at least as fast always carries it; a slower one must
        keep the projected p95 and busiest hours within their ceilings."""
        if not self.load_known:
            return 1.0
        room = min(
            self.util_ceiling / load.p95 if load.p95 > 0 else float("inf"),
            self.burst_ceiling / load.burst if load.burst > 0 else float("inf"),
        )
        return max(1.0, room)

    @property
    def graphics(self) -> tuple[str, ...]:
        return self.setup.graphics

    @property
    def ray_tracing(self) -> bool:
        return self.setup.ray_tracing

    @cached_property
    def floors(self) -> tuple[float, ...]:
        """What each limit needs, in LIMITS' order (worked out once per demand)."""
        return tuple([limit.needs(self) for limit in LIMITS])

    @cached_property
    def floor_array(self) -> npt.NDArray[np.float64]:
        """`floors` as an array, held against a matrix of what types offer (sizing.targets.candidates)."""
        return np.array(self.floors, dtype=np.float64)

    @property
    def max_ratio(self) -> float:
        """How much slower a target's accelerator may run the kernel time: at least as fast always carries today's
        load; a slower one must keep the projected p95 and busiest hours within their ceilings."""
        return self.room(Load(Engine.COMPUTE, 0.0, self.unit_util_p95, self.unit_util_burst))


@dataclass(frozen=True, slots=True)
class Offer:
    """A type a host's work could move to, as the limits read it: built once per catalog, source type and CPU
    architecture (hosts of one type share them)."""

    spec: InstanceTypeSpec
    accelerator: AcceleratorSpec
    source: InstanceTypeSpec
    architecture: str  # the hosts' (their AMI's)
    ratio: float  # the source's work on this type: > 1 slower, < 1 faster (the largest of `ratios`)
    basis: str = ""  # how the projection was made, for the reasons
    # The same for each projected engine (signals.PROJECTED's order: FP32, tensor, memory bandwidth); 0 where a figure
    # is missing on either side (nothing to project: `ratio` speaks for the accelerator). Empty: `ratio` for each.
    ratios: tuple[float, ...] = ()

    def ratio_of(self, position: int) -> float:
        """The ratio of the projected engine at `position`."""
        return self.ratios[position] if self.ratios else self.ratio

    @property
    def leaves_p_family(self) -> bool:
        return self.source.family.startswith("p") and not self.spec.family.startswith("p")


class Speaks(StrEnum):
    """When a limit has its say in a target's reason."""

    ALWAYS = "always"  # the figures every resize reason names
    NEEDED = "needed"  # whenever the host needs it (EFA, graphics, ...)
    NEAR = "near"  # when it decided the target or the work needs at least half of what the target offers
    DECIDED = "decided"  # only when it ruled out a cheaper type
    NEVER = "never"  # a type that falls short of it is no alternative worth naming (another CPU architecture)


Says = Callable[[Offer, Demand], str]
Short = Callable[[Offer, Demand], str]


@dataclass(frozen=True, slots=True)
class Limit:
    name: str
    offers: Callable[[Offer], float]
    needs: Callable[[Demand], float]  # (a bool counts as 1 or 0)
    says: Says
    short: Short
    speaks: Speaks = Speaks.NEAR
    source: str = ""  # where the type's figure and the work's come from (docs/how-it-decides.md says the same)


def _flag(value: bool) -> float:
    return 1.0 if value else 0.0


def _mbps(value: float) -> str:
    return f"{value:,.0f} MB/s"


def _gbit(value: float) -> str:
    return f"{value:,.2f} Gbps" if value < 10 else f"{value:,.0f} Gbps"


def _projected(offer: Offer, demand: Demand) -> str:
    """The work on the target: on kernel time, by the largest ratio; on DCGM's signals, each engine by its own."""
    unit = offer.spec.unit_name
    if not demand.measured_loads:
        p95, burst = demand.unit_util_p95 * offer.ratio, demand.unit_util_burst * offer.ratio
        return f"projected {unit} p95 {pct(p95)} and busiest hours {pct(burst)}{offer.basis}"
    parts = [_on_target(offer, load, position) for position, load in enumerate(demand.engine_loads)]
    source, target = offer.source.accelerator_model, offer.spec.accelerator_model
    moved = f"; {_moved(offer, range(len(PROJECTED)))}" if source != target else ""
    return f"projected {', '.join(parts)} (DCGM, per {unit}{moved})"


def _on_target(offer: Offer, load: Load, position: int) -> str:
    """One engine's load on the target: 'DRAM active p95 50% and busiest hours 56%'."""
    ratio = offer.ratio_of(position) or 1.0
    return f"{load.label} p95 {pct(load.p95 * ratio)} and busiest hours {pct(load.burst * ratio)}"


def _moved(offer: Offer, positions: Sequence[int]) -> str:
    """'A10G -> L4: FP32 x1.03, tensor x0.58': the figures that scale each engine's load onto the target."""
    ratios = ", ".join(f"{FIGURE[PROJECTED[p]]} x{offer.ratio_of(p) or 1.0:.2f}" for p in positions)
    return f"{offer.source.accelerator_model} -> {offer.spec.accelerator_model}: {ratios}"


def _engine_projected(offer: Offer, demand: Demand, position: int, verb: str = "projected") -> str:
    """One engine's load on the target, and the figure that scales it."""
    load = demand.engine_loads[position]
    return f"{verb} {_on_target(offer, load, position)} ({_moved(offer, (position,))})"


def _kernel_speed(demand: Demand) -> float:
    """On kernel time alone, the largest of the three ratios may not exceed the room the load leaves (as a negative,
    so that "at least" reads "no slower than"); where DCGM measures the engines, each engine's limit decides instead."""
    return -math.inf if demand.measured_loads else -demand.max_ratio


def _engine_speed(position: int, name: str) -> Limit:
    """A target's speed for one engine's load, where DCGM measures the engines (a negative, as above): the engine's
    ratio may not exceed the room its load leaves. Its shortfall is named; the projection is said by accelerator
    speed's sentence."""
    engine = PROJECTED[position]
    read_by = ", ".join(SIGNALS[signal].label for signal in READS[engine])
    return Limit(
        name,
        offers=lambda o: -o.ratio_of(position),
        needs=lambda d: -d.room(d.engine_loads[position]) if d.measured_loads else -math.inf,
        says=lambda o, d: _engine_projected(o, d, position),
        short=lambda o, d: _engine_projected(o, d, position, "would run at"),
        speaks=Speaks.DECIDED,
        source=f"where DCGM measures the engines: the {engine} load ({read_by}, else utilization.gpu) x the "
        f"{FIGURE[engine]} ratio (accelerators.json): p95 within 80 %, busiest hours within 100 %",
    )


def _needing(value: str, basis: str) -> str:
    return f"needs {value}: {basis}" if basis else f"needs {value}"


def _ebs_need(demand: Demand) -> str:
    return _needing(_mbps(demand.storage.ebs_mbps), demand.storage.ebs_basis)


LIMITS: tuple[Limit, ...] = (
    Limit(
        "architecture",
        offers=lambda o: _flag(o.architecture in o.spec.architectures),
        needs=lambda d: 1.0,
        says=lambda o, d: f"runs {o.architecture}",
        short=lambda o, d: f"does not run {o.architecture} (the host's AMI)",
        speaks=Speaks.NEVER,
        source="the AMI's Architecture against the type's SupportedArchitectures",
    ),
    Limit(
        "GPU count",
        offers=lambda o: float(o.spec.compute_units),
        needs=attrgetter("units"),
        says=lambda o, d: f"{o.spec.compute_units}x {o.spec.accelerator_model}",
        short=lambda o, d: f"{plural(o.spec.compute_units, o.spec.unit_name)}, {d.units} needed",
        speaks=Speaks.ALWAYS,
        source="the units that did real work in the window (k of n); units without metrics count as busy",
    ),
    Limit(
        "accelerator memory",
        offers=lambda o: o.spec.memory_per_unit_mib,
        needs=attrgetter("memory_per_unit_mib"),
        says=lambda o, d: f"{gib(o.spec.memory_per_unit_mib)} per {o.spec.unit_name} >= {d.memory_basis}",
        short=lambda o, d: f"{gib(o.spec.memory_per_unit_mib)} per {o.spec.unit_name}, needs {d.memory_basis}",
        speaks=Speaks.ALWAYS,
        source="the busiest unit's memory peak x 1.2; today's memory where it was not measured or looked reserved",
    ),
    Limit(
        "vCPUs",
        offers=lambda o: float(o.spec.vcpus),
        needs=attrgetter("vcpus"),
        says=lambda o, d: f"{o.spec.vcpus} vCPUs (needs {d.vcpus})",
        short=lambda o, d: f"{o.spec.vcpus} vCPUs, {d.vcpus} needed",
        speaks=Speaks.ALWAYS,
        source="CPU p95 within 70 % and the busiest 5 minutes (p99) within 100 % of the target's vCPUs",
    ),
    Limit(
        "host RAM",
        offers=lambda o: float(o.spec.memory_mib),
        needs=attrgetter("host_memory_mib"),
        says=lambda o, d: f"{gib(o.spec.memory_mib)} RAM (needs {gib(d.host_memory_mib)})",
        short=lambda o, d: f"{gib(o.spec.memory_mib)} RAM, {gib(d.host_memory_mib)} needed",
        speaks=Speaks.ALWAYS,
        source="mem_used_percent's peak x 1.2; unmeasured, today's RAM in proportion to the units kept",
    ),
    Limit(
        "accelerator speed",
        offers=lambda o: -o.ratio,
        needs=_kernel_speed,
        says=_projected,
        short=lambda o, d: _projected(o, d).replace("projected", "would run at", 1),
        speaks=Speaks.ALWAYS,
        source="on kernel time, the largest of the tensor, memory-bandwidth and FP32 ratios (accelerators.json): p95 "
        "within 80 %, busiest hours within 100 %; with DCGM, each engine below",
    ),
    _engine_speed(0, "SM throughput"),
    _engine_speed(1, "tensor throughput"),
    _engine_speed(2, "memory bandwidth"),
    Limit(
        "NVENC",
        offers=lambda o: float(o.accelerator.video_encoders),
        needs=attrgetter("video_encoders"),
        says=lambda o, d: f"{o.accelerator.video_encoders} NVENC per GPU (needs {d.video_encoders})",
        short=lambda o, d: f"{o.accelerator.video_encoders} NVENC per GPU, {d.video_encoders} needed",
        speaks=Speaks.NEEDED,
        source="the encoder sessions the agent publishes; NVIDIA's video support matrix for the engines per GPU",
    ),
    Limit(
        "NVDEC",
        offers=lambda o: float(o.accelerator.video_decoders),
        needs=attrgetter("video_decoders"),
        says=lambda o, d: f"{o.accelerator.video_decoders} NVDEC per GPU (needs {d.video_decoders})",
        short=lambda o, d: f"{o.accelerator.video_decoders} NVDEC per GPU, {d.video_decoders} needed",
        speaks=Speaks.NEEDED,
        source="kept with the encoders (decoding is not measured on Linux)",
    ),
    Limit(
        "graphics",
        offers=lambda o: _flag(o.accelerator.graphics),
        needs=lambda d: _flag(bool(d.graphics)),
        says=lambda o, d: f"{o.spec.accelerator_model} runs graphics (OpenGL, Vulkan, DirectX)",
        short=lambda o, d: f"{o.spec.accelerator_model} has no graphics (a data-center GPU: no display engine)",
        speaks=Speaks.NEEDED,
        source="the AMI, tags and processes (domain/graphics.py); GPUs AWS offers GRID or gaming drivers for",
    ),
    Limit(
        "RT cores",
        offers=lambda o: _flag(o.accelerator.ray_tracing),
        needs=attrgetter("setup.ray_tracing"),
        says=lambda o, d: f"{o.spec.accelerator_model} has RT cores",
        short=lambda o, d: f"{o.spec.accelerator_model} has no RT cores",
        speaks=Speaks.NEEDED,
        source="a graphics host on a GPU with RT cores keeps them (OptiX, Vulkan ray tracing, DXR)",
    ),
    Limit(
        "NVLink",
        offers=lambda o: _flag(not o.leaves_p_family),
        needs=lambda d: _flag(d.units > 1),
        says=lambda o, d: "stays on a P type (NVLink between the GPUs)",
        short=lambda o, d: f"leaves the P families (multi-GPU work on {o.source.family} may use NVLink)",
        speaks=Speaks.DECIDED,
        source="multi-GPU work on a P host stays on P types",
    ),
    Limit(
        "EFA",
        offers=lambda o: _flag(o.spec.efa_supported),
        needs=attrgetter("setup.efa"),
        says=lambda o, d: "EFA (the host uses it)",
        short=lambda o, d: "no EFA, which the host uses",
        speaks=Speaks.NEEDED,
        source="an interface of type efa on the host; EfaSupported on the type",
    ),
    Limit(
        "ENA",
        offers=lambda o: _flag(o.spec.ena_support != "required"),
        needs=attrgetter("setup.without_ena"),
        says=lambda o, d: "does not require ENA (the AMI has no ENA driver)",
        short=lambda o, d: "requires ENA, which the host's AMI lacks",
        speaks=Speaks.NEEDED,
        source="the instance's EnaSupport against the type's EnaSupport",
    ),
    Limit(
        "ENA Express",
        offers=lambda o: _flag(o.spec.ena_express),
        needs=attrgetter("setup.ena_express"),
        says=lambda o, d: "ENA Express (the host uses it)",
        short=lambda o, d: "no ENA Express, which the host uses",
        speaks=Speaks.NEEDED,
        source="EnaSrdSpecification on the host's interfaces; EnaSrdSupported on the type",
    ),
    Limit(
        "network cards",
        offers=lambda o: float(o.spec.network_cards),
        needs=lambda d: float(d.setup.network_cards) if d.setup.network_cards > 1 else 0.0,
        says=lambda o, d: f"{o.spec.network_cards} network cards (the host uses {d.setup.network_cards})",
        short=lambda o, d: f"{o.spec.network_cards} network card(s), the host uses {d.setup.network_cards}",
        speaks=Speaks.NEEDED,
        source="the NetworkCardIndex of the host's interfaces; MaximumNetworkCards on the type",
    ),
    Limit(
        "placement group",
        offers=lambda o: _flag(o.spec.cluster_placement),
        needs=lambda d: _flag(bool(d.setup.placement_group)),
        says=lambda o, d: f"supports its cluster placement group '{d.setup.placement_group}'",
        short=lambda o, d: "cannot join a cluster placement group",
        speaks=Speaks.NEEDED,
        source="the host's Placement.GroupName; PlacementGroupInfo on the type",
    ),
    Limit(
        "network",
        offers=lambda o: o.spec.network_gbps,
        needs=attrgetter("network_gbps"),
        says=lambda o, d: (
            f"network {_gbit(o.spec.network_gbps)} per direction at baseline "
            f"({_needing(_gbit(d.network_gbps), d.network_basis)})"
        ),
        short=lambda o, d: (
            f"network baseline {_gbit(o.spec.network_gbps)} per direction, "
            f"{_needing(_gbit(d.network_gbps), d.network_basis)}"
        ),
        source="AWS/EC2 NetworkIn and NetworkOut, each direction's busiest hours (p99 of hourly means) x 1.2, within "
        "the sum of the type's cards' BaselineBandwidthInGbps",
    ),
    Limit(
        "network burst",
        offers=lambda o: o.spec.network_peak_gbps or o.spec.network_gbps,
        needs=attrgetter("network_burst_gbps"),
        says=lambda o, d: (
            f"bursts to {_gbit(o.spec.network_peak_gbps or o.spec.network_gbps)} "
            f"(the busiest 5 minutes need {_gbit(d.network_burst_gbps)})"
        ),
        short=lambda o, d: (
            f"bursts to {_gbit(o.spec.network_peak_gbps or o.spec.network_gbps)} only, the busiest "
            f"5 minutes need {_gbit(d.network_burst_gbps)}"
        ),
        source="each direction's 5-minute peak x 1.2, within PeakBandwidthInGbps (burst credits)",
    ),
    Limit(
        "EBS throughput",
        offers=lambda o: o.spec.ebs_baseline_mbps or 0.0,
        needs=attrgetter("storage.ebs_mbps"),
        says=lambda o, d: f"EBS {_mbps(o.spec.ebs_baseline_mbps or 0.0)} at baseline ({_ebs_need(d)})",
        short=lambda o, d: f"EBS baseline {_ebs_offer(o.spec.ebs_baseline_mbps, _mbps)}, {_ebs_need(d)}",
        source="AWS/EC2 EBSReadBytes + EBSWriteBytes, the busiest hours (p99 of hourly means) x 1.2, within the "
        "type's EbsOptimizedInfo BaselineThroughputInMBps",
    ),
    Limit(
        "EBS burst",
        offers=lambda o: o.spec.ebs_maximum_mbps or 0.0,
        needs=attrgetter("storage.ebs_burst_mbps"),
        says=lambda o, d: (
            f"EBS bursts to {_mbps(o.spec.ebs_maximum_mbps or 0.0)} (the busiest hour needs "
            f"{_mbps(d.storage.ebs_burst_mbps)})"
        ),
        short=lambda o, d: (
            f"EBS maximum {_ebs_offer(o.spec.ebs_maximum_mbps, _mbps)}, the busiest hour needs "
            f"{_mbps(d.storage.ebs_burst_mbps)}"
        ),
        source="the busiest hour's EBS throughput within MaximumThroughputInMBps",
    ),
    Limit(
        "EBS IOPS",
        offers=lambda o: o.spec.ebs_baseline_iops or 0.0,
        needs=attrgetter("storage.ebs_iops"),
        says=lambda o, d: (
            f"{o.spec.ebs_baseline_iops or 0:,.0f} EBS IOPS at baseline (needs {d.storage.ebs_iops:,.0f})"
        ),
        short=lambda o, d: (
            f"EBS baseline {_ebs_offer(o.spec.ebs_baseline_iops, lambda v: f'{v:,.0f} IOPS')}, "
            f"{d.storage.ebs_iops:,.0f} IOPS needed"
        ),
        source="AWS/EC2 EBSReadOps + EBSWriteOps, the busiest hours x 1.2, within BaselineIops",
    ),
    Limit(
        "local NVMe",
        offers=lambda o: float(o.spec.instance_storage_gb),
        needs=attrgetter("storage.local_storage_gb"),
        says=lambda o, d: f"{o.spec.instance_storage_gb:,} GB of instance store ({d.storage.local_basis})",
        short=lambda o, d: (
            f"{o.spec.instance_storage_gb:,} GB of instance store, {d.storage.local_storage_gb:,.0f} GB "
            f"needed ({d.storage.local_basis})"
        ),
        source="the agent's diskio less AWS/EC2's EBS bytes: a host that works its instance store keeps as much",
    ),
)

# The limits whose shortfall is worth naming ("decided by"), by position.
NAMED = frozenset(position for position, limit in enumerate(LIMITS) if limit.speaks is not Speaks.NEVER)


def _ebs_offer(value: float | None, fmt: Callable[[float], str]) -> str:
    return "not published" if value is None else fmt(value)


def offered(offer: Offer) -> tuple[float, ...]:
    """What a type offers of each limit, in LIMITS' order."""
    return tuple([limit.offers(offer) for limit in LIMITS])


def sentence(offer: Offer, demand: Demand, offers: Sequence[float], decided: frozenset[int]) -> str:
    """The target's reason: the limits it keeps that matter here, each in its own words."""
    floors = demand.floors
    parts = [
        limit.says(offer, demand)
        for position, limit in enumerate(LIMITS)
        if _speaks(limit.speaks, floors[position], offers[position], position in decided)
    ]
    return f"{offer.spec.instance_type}: " + ", ".join(parts)


def _speaks(speaks: Speaks, need: float, offer: float, decided: bool) -> bool:
    if speaks is Speaks.ALWAYS:
        return True
    if need <= 0 or speaks is Speaks.NEVER:
        return False
    if speaks is Speaks.NEEDED or decided:
        return True
    return speaks is Speaks.NEAR and need >= offer / 2
