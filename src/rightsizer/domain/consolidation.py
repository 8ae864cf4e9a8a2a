"""Fleet consolidation: several part-used hosts of one team in one zone whose measured work fits fewer hosts.

Per-host rules cannot see this: each host alone is right-sized (nothing cheaper fits it), yet three hosts at
20 % could be one host at 60 %. This step looks at a team's hosts of one type in one availability zone together
and packs their busy GPUs (or NeuronCores) onto as few of those hosts as carry them, with the same headroom the
per-host sizing keeps: a unit's p95 within 80 %, its busiest hours within 100 %, its memory peak x 1.2 within the
unit's memory, and the host's vCPUs, RAM and network within their limits. It is advice only, never one click:
moving work between hosts is the team's job. Confidence is medium at most, low when units would be shared
(several workloads on one GPU need CUDA MPS or time-slicing, which changes latency).

Each unit's load is read on its best signal (domain/signals.py): the SMs' load on DCGM's SM active (then SM
occupancy), kernel time (utilization.gpu) only where neither is published, since kernel time reads 100 % while most
SMs wait; video work in percent of the GPU's NVENC and NVDEC engines (DCGM's ENC/DEC utilisation), which add up on
a shared GPU of the same type as the SMs' load does. A host whose encoder works but is measured only by its session
count stays out: sessions are not a share of an engine. A workload moved whole onto a free unit of the same type
fits as it does today; only a shared unit is checked against the ceilings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

from rightsizer.domain.analyzer import recommendation_id
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import Change, HostCover, NetSavings, net_savings
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Consolidation, Recommendation
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.money import CENT, ZERO
from rightsizer.domain.models.usage import AcceleratorData, DeviceUsage, UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.signals import KERNEL_TIME, SIGNALS, VIDEO_ACTIVE_PCT, Engine, Load, Signal
from rightsizer.domain.sizing.units import memory_total, unit_active
from rightsizer.domain.wording import gib, pct, plural, usd

# The engines a shared unit's loads add up on: the SMs, and the video engines where DCGM measures them.
_VIDEO = (Engine.ENCODER, Engine.DECODER)
_WHOLE_UNIT = 100.0  # percent: kernel time beyond it cannot be time-sliced without slowing each workload


@dataclass(frozen=True)
class Workload:
    """What one busy unit of a host carries: each engine's load on its best signal (the SMs' first, then the video
    engines DCGM measures at work), its kernel time (what time-slicing shares) and its memory."""

    host: str
    loads: tuple[Load, ...]
    kernel_p95: float
    memory_mib: float

    @property
    def compute(self) -> Load:
        return self.loads[0]

    @property
    def p95(self) -> float:
        return self.compute.p95


@dataclass(frozen=True)
class HostDemand:
    instance_id: str
    workloads: tuple[Workload, ...]
    vcpus: float  # vCPUs in use at p95
    memory_mib: float  # host RAM in use at peak
    network_gbps: float  # p95

    @property
    def load(self) -> float:
        return sum(w.p95 for w in self.workloads)


@dataclass
class _Unit:
    p95: dict[Engine, float] = field(default_factory=dict)  # each engine's load so far (percent of the unit's)
    burst: dict[Engine, float] = field(default_factory=dict)
    kernel_p95: float = 0.0
    memory_mib: float = 0.0
    workloads: int = 0

    def copy(self) -> _Unit:
        return _Unit(dict(self.p95), dict(self.burst), self.kernel_p95, self.memory_mib, self.workloads)

    def add(self, work: Workload) -> None:
        for load in work.loads:
            self.p95[load.engine] = self.p95.get(load.engine, 0.0) + load.p95
            self.burst[load.engine] = self.burst.get(load.engine, 0.0) + load.burst
        self.kernel_p95 += work.kernel_p95
        self.memory_mib += work.memory_mib
        self.workloads += 1


@dataclass
class _Host:
    units: list[_Unit]
    vcpus: float = 0.0
    memory_mib: float = 0.0
    network_gbps: float = 0.0


@dataclass(frozen=True)
class Packing:
    hosts: int
    shared_units: bool  # some unit carries more than one workload
    # Some shared unit's kernel time adds up beyond the ceiling while its SMs carry the work: only CUDA MPS, which
    # runs the workloads' kernels side by side, shares it (time-slicing would cut each one's time).
    needs_mps: bool = False


def consolidate(
    recommendations: Sequence[Recommendation],
    instances: Sequence[Instance],
    usage: Mapping[str, UsageSummary],
    catalog: Catalog,
    policy: Policy,
    covers: Mapping[str, HostCover] | None = None,
) -> list[Recommendation]:
    """`recommendations` of one region, with those of consolidatable groups replaced by `consolidate` advice."""
    by_id = {i.instance_id: i for i in instances}
    groups: dict[GroupKey, list[Recommendation]] = {}
    for rec in recommendations:
        key = consolidation_key(rec, by_id.get(rec.instance_id), usage.get(rec.instance_id))
        if key is not None:
            groups.setdefault(key, []).append(rec)
    replaced: dict[str, Recommendation] = {}
    for (_, team, zone, instance_type, _), members in groups.items():
        spec = catalog.spec(instance_type)
        if spec is None or len(members) < 2:
            continue
        demands = [_demand(rec, spec, usage[rec.instance_id], policy) for rec in members]
        packing = _fewest_hosts(demands, spec, policy)
        if packing is None or packing.hosts >= len(members):
            continue
        group = f"team={team} in {zone}"
        advice = _advice(members, demands, packing, group, spec, by_id, covers or {}, policy)
        for rec in _larger_saving(members, advice, group):
            replaced[rec.instance_id] = rec
    return [replaced.get(rec.instance_id, rec) for rec in recommendations]


GroupKey = tuple[str, str, str, str, str | None]  # account, team, zone, type, how it is billed


def consolidation_key(rec: Recommendation, instance: Instance | None, usage: UsageSummary | None) -> GroupKey | None:
    """The group `consolidate` packs the host with: one team's hosts of one type in one zone, in one account (zone
    names map to different zones in each account) and billed alike (Windows work does not move onto a Linux host).
    None: the host cannot be consolidated (`_eligible`)."""
    if instance is None or not _eligible(rec, instance, usage):
        return None
    return (rec.account_id, rec.team, rec.availability_zone, rec.instance_type, instance.billing.key)


def _group_saving(recs: Sequence[Recommendation]) -> Decimal:
    return sum((rec.monthly_savings or ZERO for rec in recs), ZERO)


def _larger_saving(
    members: Sequence[Recommendation], packed: Sequence[Recommendation], group: str
) -> list[Recommendation]:
    """Packing the group and resizing its hosts one by one exclude each other (a resized host has no room for the
    others' work; a drained host is not resized): offer whichever saves the group more, and name the other."""
    resizes = [rec for rec in members if rec.target_type is not None]
    if not resizes:
        return list(packed)
    per_host, pack = _group_saving(members), _group_saving(packed)
    moves = ", ".join(f"{rec.instance_id} to {rec.target_type}" for rec in resizes)
    if pack > per_host:
        note = (
            f"consolidating saves the group more ({usd(pack)}/month) than resizing its hosts one by one ({moves}: "
            f"{usd(per_host)}/month); the two exclude each other"
        )
        return [replace(rec, reasons=(rec.reasons[0], note, *rec.reasons[1:])) for rec in packed]
    plan = packed[0].consolidation
    kept = len(plan.keep) if plan else len(members)
    note = (
        f"also possible: consolidating the {len(members)} hosts of {group} onto {kept} saves "
        f"{usd(pack)}/month for the group, less than these resizes ({usd(per_host)}/month); the two exclude each other"
    )
    return [replace(rec, reasons=(*rec.reasons, note)) if rec.target_type else rec for rec in members]


def _eligible(rec: Recommendation, instance: Instance, usage: UsageSummary | None) -> bool:
    """Hosts running on demand with everything measured, whose work could move: right-sized alone (nothing cheaper
    fits them), partly idle with no smaller type to move to (`partly_idle`: its advice is this one, to consolidate
    the work onto fewer hosts), or with a cheaper type of their own (the group then gets whichever saves more)."""
    ev = rec.evidence
    return (
        rec.finding in (Finding.OPTIMIZED, Finding.OVERPROVISIONED)
        and bool(rec.team)
        and instance.is_running
        and instance.lifecycle == "on-demand"
        and instance.owner is None
        # A placement group's hosts work together (a training job's nodes): their advice is the group's own.
        and not instance.placement_group
        and rec.monthly_cost is not None
        and usage is not None
        and usage.accelerator_data is AcceleratorData.PER_DEVICE
        # Encoder sessions are not a share of one engine: a transcoder moves only where DCGM measures its NVENC.
        and all(d.signal(Signal.ENCODER) is not None for d in usage.devices if d.encodes)
        and ev.memory_peak_mib is not None
        and not ev.memory_reserved
        and ev.cpu_p95 is not None
        and ev.host_memory_peak_pct is not None
    )


def _demand(rec: Recommendation, spec: InstanceTypeSpec, usage: UsageSummary, policy: Policy) -> HostDemand:
    workloads = tuple(
        Workload(
            host=rec.instance_id,
            loads=(_compute(d), *_video(d)),
            kernel_p95=d.utilization.p95 if d.utilization else 100.0,
            memory_mib=(d.memory_used_peak_mib or memory_total(d, spec)) * policy.memory_headroom,
        )
        for d in usage.devices
        if _busy(d, spec, policy)
    )
    ev = rec.evidence
    return HostDemand(
        instance_id=rec.instance_id,
        workloads=workloads,
        vcpus=spec.vcpus * (ev.cpu_p95 or 100.0) / 100,
        memory_mib=spec.memory_mib * (ev.host_memory_peak_pct or 100.0) / 100 * policy.memory_headroom,
        network_gbps=(ev.network_p95_gbps or 0.0),
    )


def _compute(device: DeviceUsage) -> Load:
    """The SMs' load: DCGM's SM active (then occupancy) where published, else kernel time."""
    measured = _measured(device, Engine.COMPUTE)
    if measured is not None:
        return measured
    kernel = device.utilization
    return Load(
        Engine.COMPUTE,
        kernel.p50 if kernel else 100.0,
        kernel.p95 if kernel else 100.0,
        _first_known(device.utilization_burst, device.utilization_peak, 100.0),
    )


def _video(device: DeviceUsage) -> tuple[Load, ...]:
    """The video engines' loads DCGM measures at work, in percent of this GPU's engines."""
    loads = (_measured(device, engine) for engine in _VIDEO)
    return tuple(load for load in loads if load is not None and load.burst >= VIDEO_ACTIVE_PCT)


def _measured(device: DeviceUsage, engine: Engine) -> Load | None:
    """`engine`'s load on the best DCGM signal the GPU publishes for it (its busiest hours: the highest 5-minute
    average, as sizing.load.engine_load reads them); None: no DCGM signal measures it."""
    found = device.best_signal(engine)
    if found is None:
        return None
    signal, stats = found
    return Load(engine, stats.p50, stats.p95, stats.peak, signal)


def _first_known(*values: float | None) -> float:
    """The busiest hours a unit must keep room for: measured bursts, else the peak (larger), else a whole unit."""
    return next((value for value in values if value is not None), 100.0)


def _busy(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    if unit_active(device, policy):
        return True
    peak = device.memory_used_peak_mib
    return peak is not None and peak / memory_total(device, spec) * 100 >= policy.in_use_memory_pct


def _fewest_hosts(demands: Sequence[HostDemand], spec: InstanceTypeSpec, policy: Policy) -> Packing | None:
    """The smallest number of hosts of `spec` that carry every workload (first fit, largest first)."""
    for count in range(1, len(demands)):
        packing = _pack(demands, count, spec, policy)
        if packing is not None:
            return packing
    return None


def _pack(demands: Sequence[HostDemand], count: int, spec: InstanceTypeSpec, policy: Policy) -> Packing | None:
    hosts = [_Host(units=[_Unit() for _ in range(spec.compute_units)]) for _ in range(count)]

    def fits_unit(unit: _Unit, work: Workload) -> bool:
        if unit.workloads == 0:
            return True  # a free unit of the same type carries one unit's work as it does today
        return unit.memory_mib + work.memory_mib <= spec.memory_per_unit_mib and all(
            unit.p95.get(load.engine, 0.0) + load.p95 <= policy.target_max_util_pct
            and unit.burst.get(load.engine, 0.0) + load.burst <= policy.burst_max_util_pct
            for load in work.loads
        )

    for demand in sorted(demands, key=lambda d: (-d.load, d.instance_id)):
        placed = False
        for host in hosts:
            if not _host_fits(host, demand, spec, policy):
                continue
            trial = [u.copy() for u in host.units]
            if _place_all(trial, demand.workloads, fits_unit):
                host.units = trial
                host.vcpus += demand.vcpus
                host.memory_mib += demand.memory_mib
                host.network_gbps += demand.network_gbps
                placed = True
                break
        if not placed:
            return None
    shared = [unit for host in hosts for unit in host.units if unit.workloads > 1]
    mps = any(unit.kernel_p95 > _WHOLE_UNIT for unit in shared)
    return Packing(hosts=count, shared_units=bool(shared), needs_mps=mps)


def _host_fits(host: _Host, demand: HostDemand, spec: InstanceTypeSpec, policy: Policy) -> bool:
    network_ok = spec.network_gbps <= 0 or host.network_gbps + demand.network_gbps <= spec.network_gbps * 0.8
    return (
        host.vcpus + demand.vcpus <= spec.vcpus * policy.target_max_cpu_pct / 100
        and host.memory_mib + demand.memory_mib <= spec.memory_mib
        and network_ok
    )


def _place_all(units: list[_Unit], workloads: Sequence[Workload], fits: Callable[[_Unit, Workload], bool]) -> bool:
    for workload in sorted(workloads, key=lambda w: -w.p95):
        # An empty unit first: a whole GPU for each workload where there is one, sharing only when needed.
        unit = next((u for u in units if u.workloads == 0 and fits(u, workload)), None) or next(
            (u for u in units if fits(u, workload)), None
        )
        if unit is None:
            return False
        unit.add(workload)
    return True


def _advice(
    members: Sequence[Recommendation],
    demands: Sequence[HostDemand],
    packing: Packing,
    group: str,
    spec: InstanceTypeSpec,
    instances: Mapping[str, Instance],
    covers: Mapping[str, HostCover],
    policy: Policy,
) -> list[Recommendation]:
    ranked = sorted(demands, key=lambda d: (-d.load, d.instance_id))
    keep = tuple(d.instance_id for d in ranked[: packing.hosts])
    drained = [d.instance_id for d in ranked[packing.hosts :]]
    hosts = tuple(sorted(rec.instance_id for rec in members))
    costs = {rec.instance_id: rec.monthly_cost or ZERO for rec in members}
    saving = sum((costs[i] for i in drained), ZERO).quantize(CENT)
    total_load = sum(d.load for d in demands)
    memory = sum(w.memory_mib for d in demands for w in d.workloads)
    plan = Consolidation(group=group, hosts=hosts, keep=keep, target_type=spec.instance_type)
    unit = spec.unit_name
    lead = (
        f"consolidate: {len(members)} {spec.instance_type} hosts of {group} ({', '.join(hosts)}) do work that fits "
        f"{packing.hosts} of them: keep {', '.join(keep)}, move the work of {', '.join(drained)} there, then stop "
        f"{'it' if len(drained) == 1 else 'them'}; saves {usd(saving)}/month for the group"
    )
    workloads = [w for d in demands for w in d.workloads]
    contrast = _kernel_contrast(workloads, policy.target_max_util_pct)
    measured = (
        f"together: {len(workloads)} busy {unit}s with {_basis(workloads, unit)}p95 adding up to {pct(total_load)} "
        f"of one {unit}{_video_total(workloads, unit)}, memory peaks x headroom {gib(memory)}, vCPUs at p95 "
        f"{sum(d.vcpus for d in demands):.1f} of {spec.vcpus} per host{contrast}"
    )
    confidence = Confidence.LOW if packing.shared_units else Confidence.MEDIUM
    if packing.needs_mps:
        sharing = (
            f"some {unit}s would carry two workloads whose kernel time ({KERNEL_TIME}) adds up past a whole {unit} "
            "while their SMs have room: only CUDA MPS runs their kernels side by side (time-slicing would cut each "
            "one's time), and it changes latency, so measure the combined load before stopping anything"
        )
    elif packing.shared_units:
        sharing = (
            f"some {unit}s would carry two workloads: that needs CUDA MPS or time-slicing and changes latency, so "
            "measure the combined load before stopping anything"
        )
    else:
        sharing = f"each busy {unit} moves to a {unit} of its own on the kept hosts"
    advice_only = "advice only: the bot never moves workloads between hosts; the team moves them, then stops the rest"
    result = []
    for rec in members:
        drain = rec.instance_id in drained
        cost_after = ZERO if drain else rec.monthly_cost
        net = _net(rec, instances, covers) if drain else None
        role = "stop this host once its work runs on the kept hosts" if drain else "this host keeps running"
        result.append(
            replace(
                rec,
                finding=Finding.CONSOLIDATE,
                target_type=None,
                monthly_cost_after=cost_after,
                confidence=rec.confidence.at_most(confidence),
                actionable=False,
                reasons=(lead, measured, sharing, role, *((net.reason,) if net else ()), advice_only, *rec.reasons),
                consolidation=plan,
                monthly_savings_net=(net.amount if net else (costs[rec.instance_id] if drain else ZERO)),
                recommendation_id=recommendation_id(instances[rec.instance_id], Finding.CONSOLIDATE, None),
            )
        )
    return result


def _basis(workloads: Sequence[Workload], unit: str) -> str:
    """Which signal the SMs' loads rest on ("SM active (DCGM) "), where DCGM measures any; "" where none is (the load
    is the unit's own utilisation, as everywhere without DCGM)."""
    signals = [w.compute.signal for w in workloads]
    if not any(signals):
        return ""
    counts: dict[str, int] = {}
    for signal in signals:
        label = f"{SIGNALS[signal].label} (DCGM)" if signal is not None else KERNEL_TIME
        counts[label] = counts.get(label, 0) + 1
    if len(counts) == 1:
        return f"{next(iter(counts))} "
    return "compute (" + ", ".join(f"{label} on {plural(n, unit)}" for label, n in counts.items()) + ") "


def _video_total(workloads: Sequence[Workload], unit: str) -> str:
    """What the video engines carry together, in percent of one unit's engines ("" where none works)."""
    parts = []
    for engine in _VIDEO:
        loads = [load for w in workloads for load in w.loads if load.engine is engine]
        if loads:
            label = SIGNALS[loads[0].signal].label if loads[0].signal else engine.value
            parts.append(
                f", {label} p95 adding up to {pct(sum(load.p95 for load in loads))} of one {unit}'s {engine.value} "
                "engines (DCGM)"
            )
    return "".join(parts)


def _kernel_contrast(workloads: Sequence[Workload], ceiling: float) -> str:
    """Where kernel time reads a GPU with no room left that DCGM shows has SMs to spare, say so: it is why the work
    fits (kernel time alone would have kept these hosts apart)."""
    pinned = [w for w in workloads if w.compute.measured and w.kernel_p95 > ceiling >= w.compute.p95]
    if not pinned:
        return ""
    hosts = ", ".join(sorted({w.host for w in pinned}))
    labels = sorted({w.compute.label for w in pinned})
    return (
        f"; {KERNEL_TIME} reads p95 up to {pct(max(w.kernel_p95 for w in pinned))} on {hosts} while "
        f"{' / '.join(labels)} is at most {pct(max(w.compute.p95 for w in pinned))}: their kernels keep few SMs busy"
    )


def _net(rec: Recommendation, instances: Mapping[str, Instance], covers: Mapping[str, HostCover]) -> NetSavings | None:
    """What stopping a drained host saves on the bill when a reservation or plan pays for it."""
    cover = covers.get(rec.instance_id)
    if cover is None or rec.monthly_cost is None:
        return None
    return net_savings(instances[rec.instance_id], cover, Change(cost_now=rec.monthly_cost, cost_after=ZERO))
