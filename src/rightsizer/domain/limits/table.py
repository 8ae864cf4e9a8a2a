"""Every resource a target type must carry, one entry each (`LIMITS`, in the order its vectors are compared), the limits
worth naming when they rule a cheaper type out (`NAMED`), what a type offers of each (`offered`) and a target's
reason (`sentence`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

from rightsizer.domain.limits.limit import Limit, Offer, Speaks
from rightsizer.domain.limits.speed import engine_speed, kernel_speed, projected
from rightsizer.domain.wording import gib, plural

if TYPE_CHECKING:  # a Demand reads its floors from LIMITS (demand.py); the limits read a Demand only when called
    from rightsizer.domain.limits.demand import Demand


def _flag(value: bool) -> float:
    return 1.0 if value else 0.0


def _mbps(value: float) -> str:
    return f"{value:,.0f} MB/s"


def _gbit(value: float) -> str:
    return f"{value:,.2f} Gbps" if value < 10 else f"{value:,.0f} Gbps"


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
        needs=kernel_speed,
        says=projected,
        short=lambda o, d: projected(o, d).replace("projected", "would run at", 1),
        speaks=Speaks.ALWAYS,
        source="on kernel time, the largest of the tensor, memory-bandwidth and FP32 ratios (accelerators.json): p95 "
        "within 80 %, busiest hours within 100 %; with DCGM, each engine below",
    ),
    engine_speed(0, "SM throughput"),
    engine_speed(1, "tensor throughput"),
    engine_speed(2, "memory bandwidth"),
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
