"""What a host's work needs, and which instance types can carry it. Pure functions over the catalog.

- Units (GPUs / NeuronCores): which are busy, idle, or unseen.
- GPU memory: a working set that was measured, or a framework's reservation that says nothing about need.
- Demand: the floor every limit of a target must meet (domain/limits.py: units, memory per unit, speed, vCPUs, RAM,
  network, EBS, local NVMe, interconnect, graphics, video engines, architecture), from the host's measured work and
  its set-up.
- Projection: the same work on another accelerator, by the largest of the tensor-throughput, memory-
  bandwidth and FP32 ratios.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from operator import ge
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.limits import (
    LIMITS,
    NAMED,
    NO_SETUP,
    NO_STORAGE_NEED,
    Demand,
    Offer,
    Setup,
    StorageNeed,
    offered,
    sentence,
)
from rightsizer.domain.models import (
    AcceleratorData,
    AcceleratorKind,
    AcceleratorSpec,
    Alternative,
    Confidence,
    DeviceUsage,
    Instance,
    InstanceTypeSpec,
    SeriesStats,
    UsageSummary,
    monthly,
)
from rightsizer.domain.platforms import LINUX, Billing
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.signals import FIGURE, PROJECTED, READS, VIDEO_ACTIVE_PCT, Engine, Load, Signal
from rightsizer.domain.wording import gbps, gib

T = TypeVar("T")

# ---------------------------------------------------------------------------------------------
# Units


@dataclass(frozen=True)
class UnitView:
    busy: tuple[DeviceUsage, ...]  # did real work at some point in the window
    idle: tuple[DeviceUsage, ...]  # never did (some may hold memory: see `holding`)
    unseen: int  # units the spec has but no series was published for, counted as busy
    holding: tuple[DeviceUsage, ...] = ()  # idle units that hold memory: a loaded model nobody calls

    @property
    def needed(self) -> int:
        return max(1, len(self.busy) + self.unseen)


def memory_total(device: DeviceUsage, spec: InstanceTypeSpec) -> float:
    """nvidia-smi's own memory.total when published (it is what the framework sees), else the spec's."""
    return device.memory_total_mib or spec.memory_per_unit_mib


def unit_active(device: DeviceUsage, policy: Policy) -> bool:
    """Did this unit do real work at any time in the window (steadily, or in recurring hours)?"""
    if device.encodes or (device.profile and device.decodes):
        return True  # the video engines work, whatever the SMs (utilization.gpu) say
    if device.utilization is None:
        return True  # no utilisation series: it cannot be shown idle
    if device.utilization.p99 >= policy.idle_util_pct or device.utilization.p50 >= policy.steady_util_pct:
        return True
    return (device.utilization_peak or 0.0) >= policy.activity_peak_pct


def holds_memory(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """Does the unit hold a real share of its memory (a loaded model), whatever it computes?"""
    if device.memory_used_peak_mib is None:
        return False
    return device.memory_used_peak_mib / memory_total(device, spec) * 100 >= policy.in_use_memory_pct


def unit_view(spec: InstanceTypeSpec, usage: UsageSummary, policy: Policy) -> UnitView:
    """Which units worked. A unit that only holds memory for 14 days does no work: a model shard would
    compute with its siblings, so it is an idle replica or a stale process; it is named, not kept."""
    busy_list: list[DeviceUsage] = []
    idle_list: list[DeviceUsage] = []
    for device in usage.devices:
        (busy_list if unit_active(device, policy) else idle_list).append(device)
    busy, idle = tuple(busy_list), tuple(idle_list)
    holding = tuple(d for d in idle if holds_memory(d, spec, policy))
    if usage.accelerator_data is AcceleratorData.ROLLUP:
        # A roll-up (max over GPUs) cannot tell how many GPUs work: assume all of them, unless idle.
        return UnitView(busy=busy, idle=idle, unseen=spec.compute_units - 1 if busy else 0, holding=holding)
    if spec.accelerator_kind is AcceleratorKind.NEURON:
        # neuron-monitor reports only the NeuronCores a running application uses: silence means unused.
        return UnitView(busy=busy, idle=idle, unseen=0, holding=holding)
    # nvidia-smi reports every GPU it sees; a silent GPU is a fault, so count it as needed.
    unseen = max(0, spec.compute_units - len(usage.devices))
    return UnitView(busy=busy, idle=idle, unseen=unseen, holding=holding)


# ---------------------------------------------------------------------------------------------
# GPU memory


def memory_reserved(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """A flat, high line: a framework reserved the memory up front, so the reading is not the need."""
    peak, low = device.memory_used_peak_mib, device.memory_used_low_mib
    if peak is None or low is None:
        return False
    total = memory_total(device, spec)
    high = peak >= total * policy.reserved_memory_min_pct / 100
    flat = peak - low <= total * policy.flat_memory_band_pct / 100
    return high and flat


def memory_follows_load(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """The memory line rises and falls with the work: its peak is a real working set."""
    peak, low = device.memory_used_peak_mib, device.memory_used_low_mib
    if peak is None or low is None or device.memory_load_correlation is None:
        return False
    moves = peak - low > memory_total(device, spec) * policy.flat_memory_band_pct / 100
    return moves and device.memory_load_correlation >= policy.memory_follows_load


def _nearly_full(used_mib: float, device: DeviceUsage, policy: Policy) -> bool:
    return device.memory_total_mib is not None and used_mib >= device.memory_total_mib * policy.oom_memory_pct / 100


def out_of_memory_risk(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """Real evidence, still current: a load-following line that reaches nearly all of what nvidia-smi says exists,
    in the window and in its last days (a risk that ended with a smaller model or a fix is no reason to pay more)."""
    if device.memory_used_peak_mib is None or device.memory_total_mib is None:
        return False  # without nvidia-smi's own total, "nearly full" cannot be told from rounding
    recent = device.memory_recent_peak_mib
    if recent is not None and not _nearly_full(recent, device, policy):
        return False
    return _nearly_full(device.memory_used_peak_mib, device, policy) and memory_follows_load(device, spec, policy)


def memory_risk_ended(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """The line reached nearly all of memory.total with the load earlier in the window, but not in its last days."""
    recent, peak = device.memory_recent_peak_mib, device.memory_used_peak_mib
    if recent is None or peak is None or _nearly_full(recent, device, policy):
        return False
    return _nearly_full(peak, device, policy) and memory_follows_load(device, spec, policy)


@dataclass(frozen=True)
class MemoryReading:
    """GPU memory of the busy units: a measured working-set peak, or nothing usable."""

    peak_mib: float | None  # busiest unit's peak; None when not measured or reserved
    reserved: tuple[str, ...]  # indexes of the units whose line looked reserved


def read_memory(spec: InstanceTypeSpec, view: UnitView, policy: Policy) -> MemoryReading:
    reserved = tuple(d.index for d in view.busy if memory_reserved(d, spec, policy))
    peaks = [d.memory_used_peak_mib for d in view.busy if d.memory_used_peak_mib is not None]
    if reserved or not peaks:
        return MemoryReading(peak_mib=None, reserved=reserved)
    return MemoryReading(peak_mib=max(peaks), reserved=())


# ---------------------------------------------------------------------------------------------
# Demand


def busiest(devices: Iterable[DeviceUsage]) -> tuple[float, float, float]:
    """(p95, burst, peak) of the busiest unit(s).

    The burst a target must carry is the larger of the p99 of the hourly maxima (what the busiest hours
    reach again and again) and the highest 5-minute average (any load sustained for five minutes, such
    as a weekly job): a spike of a minute or two, such as a model load, counts in neither.
    A unit without 5-minute averages but with hourly maxima counts at its peak: its steady load is
    unknown, and assuming the maximum is the safe side for sizing.
    """
    p95 = burst = peak = 0.0
    for device in devices:
        if device.utilization is not None:
            p95 = max(p95, device.utilization.p95)
            burst = max(burst, device.utilization.p99, device.utilization.peak)
        elif device.utilization_peak is not None:
            p95 = max(p95, device.utilization_peak)
        if device.utilization_burst is not None:
            burst = max(burst, device.utilization_burst)
        if device.utilization_peak is not None:
            peak = max(peak, device.utilization_peak)
            if device.utilization is None:
                burst = max(burst, device.utilization_peak)
    return p95, burst, peak


def engine_load(devices: Sequence[DeviceUsage], engine: Engine, kernel: tuple[float, float, float]) -> Load:
    """The busiest unit's load of `engine`: from each unit's best DCGM signal for it (signals.READS), when every unit
    that published a reading has one (DCGM's profiling counters are per GPU: a GPU without them, or a roll-up, leaves
    the engine to kernel time); else kernel time (`kernel`: busiest()'s p95, burst and peak). A DCGM signal's busiest
    hours are its highest 5-minute average (the collector reads those alone)."""
    read = [d for d in devices if d.utilization is not None or d.utilization_peak is not None or d.profile]
    chosen: list[tuple[Signal, SeriesStats]] = []
    for device in read if any(d.profile for d in read) else ():
        found = device.best_signal(engine)
        if found is None:
            chosen = []
            break
        chosen.append(found)
    if chosen:
        order = READS[engine]
        weakest = max((signal for signal, _ in chosen), key=order.index)
        return Load(
            engine,
            p50=max(stats.p50 for _, stats in chosen),
            p95=max(stats.p95 for _, stats in chosen),
            burst=max(stats.peak for _, stats in chosen),
            signal=weakest,
        )
    p95, burst, _ = kernel
    p50 = max((d.utilization.p50 for d in devices if d.utilization is not None), default=p95)
    return Load(engine, p50, p95, burst)


def vcpus_needed(vcpus: int, usage: UsageSummary, policy: Policy) -> int:
    """vCPUs that keep CPU p95 at the target level and the busiest 5-minute periods (p99) within 100 %."""
    if usage.cpu is None:
        return vcpus
    steady = vcpus * usage.cpu.p95 / policy.target_max_cpu_pct
    bursts = vcpus * usage.cpu.p99 / policy.burst_max_cpu_pct
    return max(1, math.ceil(max(steady, bursts)))


def keep_today(demand: Demand, spec: InstanceTypeSpec, policy: Policy) -> Demand:
    """The demand for a paid change (more memory, vCPUs or speed): nothing may shrink, and a target as busy
    as today is acceptable, since the change is about something else."""
    return replace(
        demand,
        vcpus=max(demand.vcpus, spec.vcpus),
        host_memory_mib=max(demand.host_memory_mib, float(spec.memory_mib)),
        util_ceiling=max(policy.target_max_util_pct, demand.unit_util_p95),
        burst_ceiling=max(policy.burst_max_util_pct, demand.unit_util_burst),
    )


def video_engines(
    accelerator: AcceleratorSpec | None,
    usage: UsageSummary,
    policy: Policy | None = None,
    loads: Sequence[Load] = (),  # the NVENC and NVDEC loads (Measured.video_loads)
) -> tuple[int, int]:
    """(encoders, decoders) per GPU a target must keep (see Demand). Where DCGM measures an engine's utilisation, its
    load is projected in percent of the engines: the busiest GPU's p95 within the policy's ceiling and its busiest
    hours within 100 % of the target's engines (one of three L40S NVENCs' worth of work fits an L4's two). Elsewhere,
    today's engines where the encoder works, none where it was measured idle, one of each where nobody measured it."""
    if accelerator is None or not (accelerator.video_encoders or accelerator.video_decoders):
        return 0, 0
    measured = {load.engine: load for load in loads if load.measured}

    def keep(engine: Engine, engines: int) -> int:
        load = measured.get(engine)
        if load is not None and policy is not None:
            return _engines_for(engines, load, policy)
        if usage.encodes:
            return engines
        return 0 if usage.encoder_measured else min(1, engines)

    return keep(Engine.ENCODER, accelerator.video_encoders), keep(Engine.DECODER, accelerator.video_decoders)


def _engines_for(engines: int, load: Load, policy: Policy) -> int:
    """The engines that carry `load` (percent of `engines` engines) within the policy's ceilings; none if idle."""
    if load.burst < VIDEO_ACTIVE_PCT:
        return 0
    share = max(load.p95 / policy.target_max_util_pct, load.burst / policy.burst_max_util_pct)
    return max(1, math.ceil(engines * share - 1e-9))


def host_setup(instance: Instance, accelerator: AcceleratorSpec | None, graphics: tuple[str, ...]) -> Setup:
    """The host's set-up: its architecture, interfaces and placement, and why it needs graphics (the evidence its
    Measured view found: only on a GPU that runs graphics)."""
    return Setup(
        architecture=instance.architecture,
        efa=instance.uses_efa,
        without_ena=not instance.ena_support,
        ena_express=instance.ena_express,
        network_cards=instance.network_cards_used,
        placement_group=instance.placement_group,
        graphics=graphics,
        ray_tracing=bool(graphics) and accelerator is not None and accelerator.ray_tracing,
    )


def network_need(spec: InstanceTypeSpec, usage: UsageSummary, policy: Policy) -> tuple[float, float, str]:
    """(sustained Gbps per direction at the target's baseline, 5-minute peak for its burst, how it was read).

    EC2's bandwidth applies to each direction on its own (AWS: "up to 10 Gbps for inbound traffic and, simultaneously,
    up to 10 Gbps for outbound"), and "up to" is a burst on credits: a flow held for hours gets the baseline. Without
    per-direction readings, the two peaks added (an over-statement, the safe side); unmeasured, today's baseline."""
    headroom = policy.host_headroom
    inbound, outbound = usage.network_in, usage.network_out
    if inbound is not None and outbound is not None:
        way, busier = ("out", outbound) if outbound.sustained > inbound.sustained else ("in", inbound)
        sustained = busier.sustained * headroom
        basis = f"{way}bound busiest hours {gbps(busier.sustained)} x {headroom:g}"
        return sustained, max(inbound.peak, outbound.peak) * headroom, basis
    if usage.network_peak_gbps is not None:
        return usage.network_peak_gbps * headroom, 0.0, f"peak in + out {gbps(usage.network_peak_gbps)} x {headroom:g}"
    return spec.network_gbps, 0.0, ""


def storage_need(spec: InstanceTypeSpec, usage: UsageSummary, policy: Policy) -> StorageNeed:
    """EBS at the target's baseline (the busiest hours x headroom; AWS: a type bursts to its maximum for 30 minutes a
    day at most) and within its maximum (the busiest hour), and the instance store a host that works it keeps (its
    size: what it holds is not measured). A trickle (a root volume's logs) sets no floor."""
    headroom = policy.host_headroom
    ebs, iops, local = usage.ebs_mbps, usage.ebs_iops, usage.local_disk_mbps
    busy_ebs = ebs is not None and ebs.sustained >= policy.storage_active_mbps
    busy_local = local is not None and local.sustained >= policy.storage_active_mbps and spec.instance_storage_gb > 0
    busy_iops = iops is not None and iops.sustained >= policy.storage_active_iops
    return StorageNeed(
        ebs_mbps=ebs.sustained * headroom if ebs is not None and busy_ebs else 0.0,
        ebs_burst_mbps=ebs.peak if ebs is not None and busy_ebs else 0.0,
        ebs_iops=iops.sustained * headroom if iops is not None and busy_iops else 0.0,
        ebs_basis=f"busiest hours {ebs.sustained:,.0f} MB/s read + write x {headroom:g}" if ebs is not None else "",
        local_storage_gb=float(spec.instance_storage_gb) if busy_local else 0.0,
        local_basis=(
            f"the work reads and writes it, busiest hours {local.sustained:,.0f} MB/s beyond EBS: today's size kept, "
            "what it holds is not measured"
            if local is not None and busy_local
            else ""
        ),
    )


def demand(
    spec: InstanceTypeSpec,
    usage: UsageSummary,
    view: UnitView,
    memory: MemoryReading,
    load: tuple[float, float, float],  # busiest(usage.devices)
    policy: Policy,
    video: tuple[int, int] = (0, 0),  # video_engines(...)
    setup: Setup = NO_SETUP,
    loads: tuple[Load, ...] = (),  # engine_load(...) of each signals.PROJECTED engine; empty: kernel time
) -> Demand:
    p95, burst, _ = load
    units = view.needed
    if memory.peak_mib is not None:
        memory_per_unit, memory_measured = memory.peak_mib * policy.memory_headroom, True
        basis = f"peak x {policy.memory_headroom:g} ({gib(memory_per_unit)})"
    else:
        memory_per_unit, memory_measured = spec.memory_per_unit_mib, False
        basis = f"today's {gib(memory_per_unit)}, memory not measured"
    vcpus = vcpus_needed(spec.vcpus, usage, policy) if usage.cpu is not None else spec.vcpus
    if usage.host_memory_peak_pct is not None:
        host_memory = spec.memory_mib * usage.host_memory_peak_pct / 100 * policy.host_headroom
        host_memory_measured = True
    else:
        # Unmeasured RAM follows the accelerators kept: hosts are built with RAM in proportion to them.
        host_memory = spec.memory_mib * min(units, spec.compute_units) / max(1, spec.compute_units)
        host_memory_measured = False
    network, network_burst, network_basis = network_need(spec, usage, policy)
    storage = storage_need(spec, usage, policy) if usage.ebs_mbps or usage.local_disk_mbps else NO_STORAGE_NEED
    return Demand(
        units=units,
        memory_per_unit_mib=memory_per_unit,
        memory_measured=memory_measured,
        vcpus=vcpus,
        host_memory_mib=host_memory,
        host_memory_measured=host_memory_measured,
        network_gbps=network,
        unit_util_p95=p95,
        unit_util_burst=burst,
        util_ceiling=policy.target_max_util_pct,
        burst_ceiling=policy.burst_max_util_pct,
        load_known=not view.unseen and all(d.utilization is not None for d in view.busy),
        memory_basis=basis,
        video_encoders=video[0],
        video_decoders=video[1],
        network_burst_gbps=network_burst,
        network_basis=network_basis,
        storage=storage,
        setup=setup,
        loads=loads,
    )


# ---------------------------------------------------------------------------------------------
# Comparing accelerators


def _per_unit(acc: AcceleratorSpec, value: float | None) -> float | None:
    return None if value is None else value / (acc.neuroncores_per_device or 1)


@dataclass(frozen=True)
class Projection:
    """How much slower (ratio > 1) or faster the target is for this work, and what decided it."""

    ratio: float
    basis: str
    ratios: Mapping[str, float] = field(default_factory=dict)  # by figure: "tensor", "memory bandwidth", "FP32"

    def of(self, utilization: float) -> float:
        return utilization * self.ratio

    def engine_ratios(self) -> tuple[float, ...]:
        """The ratio of each projected engine (signals.PROJECTED's order; 0: a figure missing on either side)."""
        return tuple(self.ratios.get(FIGURE[engine], 0.0) for engine in PROJECTED)


SAME_ACCELERATOR = Projection(1.0, "", {figure: 1.0 for figure in FIGURE.values()})


def projection(source: AcceleratorSpec, target: AcceleratorSpec) -> Projection | None:
    """The largest of the tensor, bandwidth and FP32 ratios (source / target); None when not comparable.

    Deep-learning kernels run on tensor cores and are often bound by memory bandwidth; FP32 is only a
    floor for work that uses neither. Whichever the target is weakest at decides.
    """
    if source.model == target.model:
        return SAME_ACCELERATOR
    ratios: dict[str, float] = {}
    for name, source_value, target_value in (
        ("tensor", source.tensor_tflops, target.tensor_tflops),
        ("memory bandwidth", source.memory_bandwidth_gbps, target.memory_bandwidth_gbps),
        ("FP32", source.fp32_tflops, target.fp32_tflops),
    ):
        source_unit, target_unit = _per_unit(source, source_value), _per_unit(target, target_value)
        if source_unit and target_unit:
            ratios[name] = source_unit / target_unit
    if source.tensor_tflops and not target.tensor_tflops:
        return None  # the work may use tensor cores the target's figures cannot speak for
    if "tensor" not in ratios and "FP32" not in ratios:
        return None  # no compute figure on both sides: the accelerators cannot be compared
    bound = max(ratios, key=lambda name: ratios[name])
    detail = ", ".join(f"{name} x{value:.2f}" for name, value in ratios.items())
    return Projection(ratios[bound], f" ({bound}-bound: {detail})", ratios)


@dataclass(frozen=True, slots=True)
class Candidate:
    spec: InstanceTypeSpec
    hourly: Decimal
    monthly: Decimal
    projected_util: float
    projected_burst: float
    cross_family: bool
    cross_hypervisor: bool
    basis: str = ""  # how the projection was made, for the reasons
    offer: Offer | None = None  # what the type offers of each limit (limits.LIMITS)
    offers: tuple[float, ...] = ()
    refusals: Refusals | None = None  # the cheaper types the scan ruled out before this one


@dataclass(frozen=True, slots=True)
class _Target:
    """A type hosts of one type could move to, with all that does not depend on a host or its load."""

    offer: Offer
    offers: tuple[float, ...]  # limits.offered(offer)
    projection: Projection  # the source's work on this type
    cross_family: bool
    cross_hypervisor: bool

    @property
    def spec(self) -> InstanceTypeSpec:
        return self.offer.spec


@dataclass(frozen=True, slots=True)
class _PricedTarget:
    """A target with its on-demand price: what `candidates` scans for each host."""

    target: _Target
    hourly: Decimal
    monthly: Decimal


@dataclass
class Refusals:
    """The types a scan ruled out, in order (filled as it goes); which limit ruled out each is worked out when asked:
    most hosts' advice needs only the first type that fits."""

    scan: _Scan | None = None
    rows: list[int] = field(default_factory=list)

    def decided(self, demand: Demand) -> tuple[tuple[int, Offer], ...]:
        """Each named limit (limits.NAMED) a ruled-out type fell short of first, with the first such type, in LIMITS'
        order: what ruled out the cheaper types."""
        if self.scan is None or not self.rows:
            return ()
        rows = self.rows
        first = (self.scan.offers[rows] < demand.floor_array).argmax(axis=1).tolist()
        found: dict[int, Offer] = {}
        for row, limit in zip(rows, first, strict=True):
            if limit in NAMED:
                found.setdefault(limit, self.scan.targets[row].target.offer)
        return tuple(sorted(found.items()))


@dataclass(frozen=True, slots=True)
class _Scan:
    """A type's priced targets, cheapest first, with what each offers of every limit also as one matrix (a row per
    target, a column per limit): which limit ruled out each of a host's refused types is one numpy call."""

    targets: tuple[_PricedTarget, ...]
    monthly: tuple[Decimal, ...]  # ascending
    offers: npt.NDArray[np.float64]  # len(targets) x len(LIMITS)


def _comparable(source_acc: AcceleratorSpec, target_acc: AcceleratorSpec) -> Projection | None:
    """The projection from one accelerator to another, when the work can move at all."""
    if source_acc.compute_capability_tuple > target_acc.compute_capability_tuple:
        return None  # e.g. A10G -> T4 loses BF16: models built for the newer GPU may not run
    return projection(source_acc, target_acc)


def _targets(spec: InstanceTypeSpec, catalog: Catalog, same_model_only: bool, architecture: str) -> tuple[_Target, ...]:
    """Types of the same kind whose accelerator can take `spec`'s work, with what each offers of every limit for hosts
    of this CPU architecture, worked out once per catalog."""

    def build() -> tuple[_Target, ...]:
        source_acc = catalog.accelerator(spec)
        if source_acc is None:
            return ()
        found = []
        for target in _same_kind_targets(spec, catalog, same_model_only):
            target_acc = catalog.accelerator(target)
            projected = None if target_acc is None else _comparable(source_acc, target_acc)
            if projected is None or target_acc is None:
                continue
            offer = Offer(
                target, target_acc, spec, architecture, projected.ratio, projected.basis, projected.engine_ratios()
            )
            found.append(
                _Target(
                    offer=offer,
                    offers=offered(offer),
                    projection=projected,
                    cross_family=target.family != spec.family,
                    cross_hypervisor=spec.nvme_support == "unsupported" and target.nvme_support == "required",
                )
            )
        return tuple(found)

    return catalog.derived(("resize targets", spec, same_model_only, architecture), build)


def _priced_targets(
    spec: InstanceTypeSpec, catalog: Catalog, prices: PriceBook, same_model_only: bool, architecture: str
) -> _Scan:
    """`_targets` that have a price, cheapest first (at equal price the same family, then the smaller host),
    worked out once per catalog and price book: each host then only filters, and can stop at its price ceiling. The
    book is the host's platform's (host_prices): a type without a price there is not sold on it, never a target."""

    def build() -> _Scan:
        found = []
        for target in _targets(spec, catalog, same_model_only, architecture):
            hourly = prices.hourly(target.spec.instance_type)
            if hourly is not None:
                found.append(_PricedTarget(target, hourly, monthly(hourly)))
        found.sort(key=lambda p: (p.hourly, p.target.cross_family, p.target.spec.vcpus, p.target.spec.instance_type))
        offers = np.array([p.target.offers for p in found], dtype=np.float64).reshape(len(found), len(LIMITS))
        return _Scan(tuple(found), tuple(p.monthly for p in found), offers)

    key = ("priced resize targets", spec, same_model_only, architecture)
    return _per_price_book(catalog, prices, key, build)


def host_prices(catalog: Catalog, prices: PriceBook, billing: Billing) -> PriceBook:
    """The book a host billed this way is priced from, for itself and its targets: one object per catalog, book and
    platform, so the per-book work above is done once per platform (see PriceBook.billed_as)."""
    if billing.key == LINUX.key:
        return prices
    return _per_price_book(catalog, prices, ("billed as", billing), lambda: prices.billed_as(billing))


def _per_price_book(catalog: Catalog, prices: PriceBook, key: Hashable, build: Callable[[], T]) -> T:
    """A value worked out from one catalog and one price book alone, kept with the catalog (`Catalog.derived`)
    under the book's identity: every host of a region is analysed against the same two."""

    def keep() -> tuple[PriceBook, T]:
        # The book stays with its value: while the catalog holds it, no other book can be given its id.
        return prices, build()

    return catalog.derived((key, id(prices)), keep)[1]


def candidates(
    instance: Instance,
    spec: InstanceTypeSpec,
    catalog: Catalog,
    prices: PriceBook,
    demand: Demand,
    *,
    same_model_only: bool = False,
    max_monthly: Decimal | None = None,
    refused: Refusals | None = None,
) -> Iterator[Candidate]:
    """Priced, offered types that carry the demand (every limit of limits.LIMITS), cheapest first, up to `max_monthly`
    a month. Lazily: a rule that takes the first never looks at the types after it. Each carries the limits that ruled
    out the cheaper types before it; `refused`, when given, is filled with them as the scan goes (once it has run out,
    it holds every type it looked at)."""
    scan = _priced_targets(spec, catalog, prices, same_model_only, instance.architecture)
    # Cheapest first: the types up to the price ceiling are a prefix.
    end = len(scan.targets) if max_monthly is None else bisect_right(scan.monthly, max_monthly)
    if not end:
        return
    floors = demand.floors
    seen = refused if refused is not None else Refusals()
    seen.scan = scan
    for row in range(end):
        priced = scan.targets[row]
        target = priced.target
        if not all(map(ge, target.offers, floors)):
            seen.rows.append(row)
            continue
        ratio = target.projection.ratio
        yield Candidate(
            spec=target.spec,
            hourly=priced.hourly,
            monthly=priced.monthly,
            projected_util=demand.unit_util_p95 * ratio,
            projected_burst=demand.unit_util_burst * ratio,
            basis=target.projection.basis,
            cross_family=target.cross_family,
            cross_hypervisor=target.cross_hypervisor,
            offer=target.offer,
            offers=target.offers,
            refusals=Refusals(scan, list(seen.rows)),
        )


def fewest_units(found: Iterable[Candidate]) -> list[Candidate]:
    """The candidates with the fewest units, cheapest first: a paid upgrade keeps the GPU (NeuronCore) count the
    work uses, never a bigger host for one GPU's work (a saturated T4 goes to one faster GPU, not to 8 A100s)."""
    found = list(found)
    fewest = min((c.spec.compute_units for c in found), default=0)
    return [c for c in found if c.spec.compute_units == fewest]


def _same_kind_targets(spec: InstanceTypeSpec, catalog: Catalog, same_model_only: bool) -> Iterator[InstanceTypeSpec]:
    for target in catalog.resize_targets(spec.accelerator_kind):
        if target.instance_type == spec.instance_type:
            continue
        if spec.accelerator_kind is AcceleratorKind.NEURON and target.accelerator_model != spec.accelerator_model:
            continue  # other Neuron generations need a recompiled model: alternatives only
        if same_model_only and target.accelerator_model != spec.accelerator_model:
            continue
        yield target


def has_comparable_target(spec: InstanceTypeSpec, catalog: Catalog, prices: PriceBook) -> bool:
    """Is there at least one priced type of the same kind the host could be compared with?"""

    def build() -> bool:
        return any(
            catalog.accelerator(target) is not None and prices.hourly(target.instance_type) is not None
            for target in _same_kind_targets(spec, catalog, same_model_only=False)
        )

    return _per_price_book(catalog, prices, ("comparable target", spec), build)


def _priced_neuron_types(catalog: Catalog, prices: PriceBook) -> tuple[tuple[Decimal, InstanceTypeSpec], ...]:
    """Neuron resize targets with their hourly price, cheapest first (at equal price in the catalog's order)."""

    def build() -> tuple[tuple[Decimal, InstanceTypeSpec], ...]:
        priced = []
        for target in catalog.resize_targets(AcceleratorKind.NEURON):
            hourly = prices.hourly(target.instance_type)
            if hourly is not None:
                priced.append((hourly, target))
        priced.sort(key=lambda pair: pair[0])  # stable: ties keep the catalog's order
        return tuple(priced)

    return _per_price_book(catalog, prices, "priced neuron types", build)


def neuron_alternatives(
    instance: Instance,
    spec: InstanceTypeSpec,
    catalog: Catalog,
    prices: PriceBook,
    demand: Demand,
    below: Decimal,
) -> tuple[Alternative, ...]:
    """Low-confidence pointers to another accelerator generation/kind that would need a recompiled model."""
    if spec.accelerator_kind is AcceleratorKind.NVIDIA and (not demand.memory_measured or demand.units > 1):
        return ()  # only single-GPU work whose memory was measured can be pointed at one Neuron device
    for hourly, target in _priced_neuron_types(catalog, prices):
        if hourly >= below:
            break  # cheapest first: no later type saves anything either
        if target.accelerator_model == spec.accelerator_model or instance.architecture not in target.architectures:
            continue
        # A GPU's working set must fit one Neuron device; a NeuronCore's must fit one NeuronCore's share.
        memory = (
            target.memory_per_unit_mib
            if spec.accelerator_kind is AcceleratorKind.NEURON
            else float(target.accelerator_memory_mib)
        )
        if memory < demand.memory_per_unit_mib:
            continue
        if target.vcpus < demand.vcpus or target.memory_mib < demand.host_memory_mib:
            continue
        if spec.accelerator_kind is AcceleratorKind.NEURON and target.compute_units < demand.units:
            continue
        return (  # the cheapest that fits
            Alternative(
                instance_type=target.instance_type,
                monthly_cost=monthly(hourly),
                confidence=Confidence.LOW,
                note=f"{target.accelerator_model}: the model must be compiled with the AWS Neuron SDK; "
                "test before moving",
            ),
        )
    return ()


def resize_reasons(current: InstanceTypeSpec, candidate: Candidate, demand: Demand, policy: Policy) -> list[str]:
    """What the target keeps of every limit that matters here, what ruled out the cheaper types, and what changes."""
    target, offer = candidate.spec, candidate.offer
    if offer is None:  # every candidate comes from `candidates`, which names its offer
        raise ValueError(f"{target.instance_type}: a candidate without its offer")
    refused = candidate.refusals.decided(demand) if candidate.refusals is not None else ()
    reasons = [sentence(offer, demand, candidate.offers, frozenset(position for position, _ in refused))]
    if refused:
        reasons.append(f"cheaper types fall short of {shortfalls_text(refused, demand)}")
    if candidate.cross_family:
        reasons.append(
            f"changes family {current.family} -> {target.family} ({current.accelerator_model} -> "
            f"{target.accelerator_model}): check driver and CUDA compatibility"
        )
    if candidate.cross_hypervisor:
        reasons.append("moves from a Xen to a Nitro host: the AMI needs ENA and NVMe drivers")
    return reasons


def shortfalls_text(refused: Iterable[tuple[int, Offer]], demand: Demand) -> str:
    """'EBS throughput (g5.8xlarge: EBS baseline 2,000 MB/s, needs ...); GPU count (...)', in LIMITS' order."""
    return "; ".join(
        f"{LIMITS[position].name} ({offer.spec.instance_type}: {LIMITS[position].short(offer, demand)})"
        for position, offer in sorted(refused, key=lambda item: item[0])
    )
