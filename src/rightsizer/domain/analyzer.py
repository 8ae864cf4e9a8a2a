"""Turn one instance's usage summary into one recommendation. Pure functions only.

Safety rules enforced here (and tested one by one):
- missing or short accelerator history is `insufficient_data`, never `idle` or a resize;
- a target's memory per GPU/NeuronCore is at least the observed peak x headroom, or, when memory was
  not measured, at least what the host has today;
- vCPUs, host memory and network are sized from measurements, or kept when unmeasured;
- opted-out, Spot, Auto Scaling, stopped and instance-store hosts are never offered an in-place resize.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import (
    CENT,
    AcceleratorData,
    AcceleratorKind,
    AcceleratorSpec,
    Alternative,
    Confidence,
    DeviceUsage,
    Evidence,
    Finding,
    Instance,
    InstanceTypeSpec,
    Recommendation,
    UsageSummary,
)
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.usage import HOURS_PER_WEEK

MIB_PER_GIB = 1024
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def recommendation_id(instance: Instance, finding: Finding, target_type: str | None) -> str:
    """Stable across re-runs: the same advice for the same host keeps the same id."""
    key = "|".join(
        (
            instance.account_id,
            instance.region,
            instance.instance_id,
            instance.instance_type,
            finding,
            target_type or "",
        )
    )
    return "rec-" + hashlib.sha256(key.encode()).hexdigest()[:20]


# ---------------------------------------------------------------------------------------------
# Formatting helpers for reasons: people read these, so numbers are rounded the way people say them.


def _gib(mib: float) -> str:
    return f"{mib / MIB_PER_GIB:.1f} GiB"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%"


def _usd(amount: Decimal) -> str:
    return f"${amount:,.2f}"


# ---------------------------------------------------------------------------------------------
# What the usage says, independent of any target.


@dataclass(frozen=True)
class Demand:
    """What a target must provide, derived from measurements (or from today's size where unmeasured)."""

    units: int  # GPUs / NeuronCores that must remain
    memory_per_unit_mib: float
    memory_measured: bool
    vcpus: int
    host_memory_mib: float
    network_gbps: float
    unit_util_p95: float  # busiest unit
    unit_memory_activity_p95: float | None
    notes: tuple[str, ...] = field(default_factory=tuple)
    util_ceiling: float | None = None  # projected p95 allowed on a target; None: the policy's target max


@dataclass(frozen=True)
class UnitView:
    busy: tuple[DeviceUsage, ...]
    idle: tuple[DeviceUsage, ...]
    unseen: int  # units the spec has but no series was published for


def _unit_in_use(device: DeviceUsage, memory_per_unit: float, policy: Policy) -> bool:
    if device.utilization is None:
        return True  # no utilisation series: it cannot be shown idle, so it stays
    if device.utilization.p99 >= policy.idle_util_pct:
        return True
    if device.memory_used_peak_mib is not None and memory_per_unit > 0:
        total = device.memory_total_mib or memory_per_unit
        return device.memory_used_peak_mib / total * 100 >= policy.in_use_memory_pct
    return False


def _unit_view(spec: InstanceTypeSpec, usage: UsageSummary, policy: Policy) -> UnitView:
    busy = tuple(d for d in usage.devices if _unit_in_use(d, spec.memory_per_unit_mib, policy))
    idle = tuple(d for d in usage.devices if d not in busy)
    if usage.accelerator_data is AcceleratorData.ROLLUP:
        # A roll-up (max over GPUs) cannot tell how many GPUs work: assume all of them, unless idle.
        return UnitView(busy=busy, idle=idle, unseen=spec.compute_units - 1 if busy else 0)
    if spec.accelerator_kind is AcceleratorKind.NEURON:
        # neuron-monitor reports only the NeuronCores a running application uses: silence means unused.
        return UnitView(busy=busy, idle=idle, unseen=0)
    # nvidia-smi reports every GPU it sees; a silent GPU is a fault, so count it as needed.
    return UnitView(busy=busy, idle=idle, unseen=max(0, spec.compute_units - len(usage.devices)))


def _busiest(devices: Iterable[DeviceUsage]) -> tuple[float, float, float | None, float | None]:
    """(p95, peak, memory peak MiB, memory-activity p95) of the busiest unit(s)."""
    p95 = peak = 0.0
    memory_peak: float | None = None
    activity: float | None = None
    for device in devices:
        if device.utilization is not None:
            p95 = max(p95, device.utilization.p95)
        if device.utilization_peak is not None:
            peak = max(peak, device.utilization_peak)
        if device.memory_used_peak_mib is not None:
            memory_peak = max(memory_peak or 0.0, device.memory_used_peak_mib)
        if device.memory_activity_p95 is not None:
            activity = max(activity or 0.0, device.memory_activity_p95)
    return p95, peak, memory_peak, activity


def _demand(instance: Instance, spec: InstanceTypeSpec, usage: UsageSummary, view: UnitView, policy: Policy) -> Demand:
    notes: list[str] = []
    p95, _, memory_peak, activity = _busiest(usage.devices)
    units = max(1, len(view.busy) + view.unseen)
    if view.unseen and usage.accelerator_data is AcceleratorData.ROLLUP:
        notes.append(f"only the per-instance roll-up is published: all {spec.compute_units} {spec.unit_name}s kept")
    elif view.unseen:
        notes.append(f"{view.unseen} {spec.unit_name}(s) published no metrics and are counted as busy")

    if memory_peak is not None:
        memory_per_unit = memory_peak * policy.memory_headroom
        memory_measured = True
    else:
        memory_per_unit = spec.memory_per_unit_mib
        memory_measured = False
        notes.append(f"{spec.unit_name} memory not measured: targets keep {_gib(memory_per_unit)} per {spec.unit_name}")

    if usage.cpu is not None:
        vcpus = max(1, math.ceil(spec.vcpus * usage.cpu.p95 / policy.target_max_cpu_pct))
    else:
        vcpus = spec.vcpus
        notes.append("CPU not measured: targets keep the vCPU count")

    if usage.host_memory_peak_pct is not None:
        host_memory = spec.memory_mib * usage.host_memory_peak_pct / 100 * policy.memory_headroom
    else:
        host_memory = float(spec.memory_mib)
        notes.append("host memory not measured (CloudWatch agent mem_used_percent): targets keep the RAM")

    if usage.network_peak_gbps is not None:
        network = usage.network_peak_gbps * policy.memory_headroom
    else:
        network = spec.network_gbps
    return Demand(
        units=units,
        memory_per_unit_mib=memory_per_unit,
        memory_measured=memory_measured,
        vcpus=vcpus,
        host_memory_mib=host_memory,
        network_gbps=network,
        unit_util_p95=p95,
        unit_memory_activity_p95=activity,
        notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------------
# Comparing accelerators.


def _unit_compute(acc: AcceleratorSpec) -> float | None:
    if acc.neuroncores_per_device:
        return None if acc.fp16_bf16_tflops is None else acc.fp16_bf16_tflops / acc.neuroncores_per_device
    return acc.fp32_tflops


def _unit_bandwidth(acc: AcceleratorSpec) -> float:
    return acc.memory_bandwidth_gbps / (acc.neuroncores_per_device or 1)


def projected_utilization(
    source: AcceleratorSpec, target: AcceleratorSpec, demand: Demand, policy: Policy
) -> tuple[float, str] | None:
    """Busiest unit's p95 once the same work runs on `target`, and why; None when not comparable."""
    if source.model == target.model:
        return demand.unit_util_p95, ""
    source_compute, target_compute = _unit_compute(source), _unit_compute(target)
    if not source_compute or not target_compute:
        return None
    compute_ratio = source_compute / target_compute
    bandwidth_ratio = _unit_bandwidth(source) / _unit_bandwidth(target)
    activity = demand.unit_memory_activity_p95
    if activity is not None and activity < policy.memory_bound_activity_pct:
        # Memory controller mostly quiet: kernel time follows compute throughput.
        basis = f" (x{compute_ratio:.2f} for compute; memory busy p95 {_pct(activity)}, so bandwidth is not limiting)"
        return demand.unit_util_p95 * compute_ratio, basis
    # Unknown or heavy memory traffic: assume bound by whichever the target is weaker at.
    ratio = max(compute_ratio, bandwidth_ratio)
    bound = "memory bandwidth" if bandwidth_ratio >= compute_ratio else "compute"
    return demand.unit_util_p95 * ratio, f" (x{ratio:.2f}, {bound}-bound assumption)"


@dataclass(frozen=True)
class Candidate:
    spec: InstanceTypeSpec
    hourly: Decimal
    projected_util: float
    cross_family: bool
    cross_hypervisor: bool
    basis: str = ""  # how the projection was made, for the reasons


def _fits(
    instance: Instance,
    spec: InstanceTypeSpec,
    source_acc: AcceleratorSpec,
    target: InstanceTypeSpec,
    target_acc: AcceleratorSpec,
    demand: Demand,
    policy: Policy,
) -> tuple[float, str] | None:
    """Projected utilisation (and its basis) when `target` can take the host's work safely, else None."""
    if instance.architecture not in target.architectures:
        return None
    if target.compute_units < demand.units:
        return None
    if target.memory_per_unit_mib < demand.memory_per_unit_mib:
        return None
    if target.vcpus < demand.vcpus or target.memory_mib < demand.host_memory_mib:
        return None
    if target.network_gbps < demand.network_gbps:
        return None
    if instance.uses_efa and not target.efa_supported:
        return None
    if not instance.ena_support and target.ena_support == "required":
        return None
    if source_acc.compute_capability_tuple > target_acc.compute_capability_tuple:
        return None  # e.g. A10G -> T4 loses BF16: models built for the newer GPU may not run
    if spec.family.startswith("p") and not target.family.startswith("p") and demand.units > 1:
        return None  # multi-GPU work on P hosts may rely on NVLink/EFA: stay within P families
    projection = projected_utilization(source_acc, target_acc, demand, policy)
    ceiling = policy.target_max_util_pct if demand.util_ceiling is None else demand.util_ceiling
    if projection is None or projection[0] > ceiling:
        return None
    return projection


def _candidates(
    instance: Instance,
    spec: InstanceTypeSpec,
    catalog: Catalog,
    prices: PriceBook,
    demand: Demand,
    policy: Policy,
    same_model_only: bool = False,
) -> list[Candidate]:
    source_acc = catalog.accelerator(spec)
    if source_acc is None:
        return []
    found: list[Candidate] = []
    for target in catalog.resize_candidates():
        if target.instance_type == spec.instance_type or target.accelerator_kind is not spec.accelerator_kind:
            continue
        if spec.accelerator_kind is AcceleratorKind.NEURON and target.accelerator_model != spec.accelerator_model:
            continue  # other Neuron generations need a recompiled model: alternatives only
        if same_model_only and target.accelerator_model != spec.accelerator_model:
            continue
        target_acc = catalog.accelerator(target)
        hourly = prices.hourly(target.instance_type)
        if target_acc is None or hourly is None:
            continue
        projection = _fits(instance, spec, source_acc, target, target_acc, demand, policy)
        if projection is None:
            continue
        found.append(
            Candidate(
                spec=target,
                hourly=hourly,
                projected_util=projection[0],
                basis=projection[1],
                cross_family=target.family != spec.family,
                cross_hypervisor=spec.nvme_support == "unsupported" and target.nvme_support == "required",
            )
        )
    # Cheapest first; at equal price prefer the same family, then the smaller host.
    found.sort(key=lambda c: (c.hourly, c.cross_family, c.spec.vcpus, c.spec.instance_type))
    return found


def _neuron_alternatives(
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
    best: tuple[Decimal, InstanceTypeSpec] | None = None
    for target in catalog.resize_candidates():
        if target.accelerator_kind is not AcceleratorKind.NEURON or target.accelerator_model == spec.accelerator_model:
            continue
        hourly = prices.hourly(target.instance_type)
        if hourly is None or hourly >= below or instance.architecture not in target.architectures:
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
        if best is None or hourly < best[0]:
            best = (hourly, target)
    if best is None:
        return ()
    hourly, target = best
    return (
        Alternative(
            instance_type=target.instance_type,
            monthly_cost=(hourly * 730).quantize(CENT),
            confidence=Confidence.LOW,
            note=f"{target.accelerator_model}: the model must be compiled with the AWS Neuron SDK; test before moving",
        ),
    )


# ---------------------------------------------------------------------------------------------
# Stop schedules.


def _schedule(usage: UsageSummary, policy: Policy) -> tuple[int, str] | None:
    """(idle hours per week, busy windows) when the host only works part of the week."""
    if usage.accelerator_days < policy.min_schedule_days:
        return None
    peaks = usage.hourly_accelerator_peak
    cpu = usage.hourly_cpu_mean
    if len(peaks) != HOURS_PER_WEEK or sum(p is not None for p in peaks) < HOURS_PER_WEEK - 8:
        return None
    busy = [False] * HOURS_PER_WEEK
    for hour in range(HOURS_PER_WEEK):
        peak = peaks[hour]
        cpu_mean = cpu[hour] if len(cpu) == HOURS_PER_WEEK else None
        busy[hour] = (peak is None or peak >= policy.idle_util_pct) or (
            cpu_mean is not None and cpu_mean >= policy.cpu_idle_pct
        )
    idle_hours = busy.count(False)
    if idle_hours < policy.min_schedule_idle_hours or idle_hours == HOURS_PER_WEEK:
        return None
    return idle_hours, _describe_windows(busy)


def _describe_windows(busy: Sequence[bool]) -> str:
    """'Mon-Fri 08:00-19:00 UTC' style description of the busy hours of the week."""
    by_day: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for day in range(7):
        windows: list[tuple[int, int]] = []
        hour = 0
        while hour < 24:
            if busy[day * 24 + hour]:
                start = hour
                while hour < 24 and busy[day * 24 + hour]:
                    hour += 1
                windows.append((start, hour))
            else:
                hour += 1
        if windows:
            by_day.setdefault(tuple(windows), []).append(day)
    parts = []
    for day_windows, days in by_day.items():
        hours = ", ".join(f"{start:02d}:00-{end:02d}:00" for start, end in day_windows)
        parts.append(f"{_day_ranges(days)} {hours}")
    return "; ".join(parts) + " UTC"


def _day_ranges(days: Sequence[int]) -> str:
    ranges: list[str] = []
    start = prev = days[0]
    for day in [*days[1:], -1]:
        if day == prev + 1:
            prev = day
            continue
        ranges.append(WEEKDAYS[start] if start == prev else f"{WEEKDAYS[start]}-{WEEKDAYS[prev]}")
        start = prev = day
    return ",".join(ranges)


# ---------------------------------------------------------------------------------------------
# The analyzer.


@dataclass
class _Draft:
    """A recommendation being assembled; frozen into a Recommendation at the end."""

    finding: Finding
    reasons: list[str]
    target: InstanceTypeSpec | None = None
    cost_after: Decimal | None = None
    confidence: Confidence = Confidence.HIGH
    actionable: bool = False
    alternatives: tuple[Alternative, ...] = ()
    schedule: tuple[int, str] | None = None


def _data_confidence(usage: UsageSummary, policy: Policy) -> Confidence:
    if usage.accelerator_days >= policy.lookback_days * 0.9 and usage.accelerator_coverage >= 0.9:
        return Confidence.HIGH
    if usage.accelerator_days >= 7:
        return Confidence.MEDIUM
    return Confidence.LOW


def _index_key(index: str) -> tuple[int, str]:
    return (int(index), "") if index.isdigit() else (1 << 30, index)


def _index_ranges(indexes: Sequence[str]) -> str:
    """'0-3, 6' for numeric indexes (as nvidia-smi numbers GPUs); plain list otherwise."""
    ordered = sorted(indexes, key=_index_key)
    if not all(i.isdigit() for i in ordered):
        return ", ".join(ordered)
    numbers = [int(i) for i in ordered]
    parts: list[str] = []
    start = prev = numbers[0]
    for number in [*numbers[1:], -2]:
        if number == prev + 1:
            prev = number
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = number
    return ", ".join(parts)


def _span(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    low, high = fmt(min(values)), fmt(max(values))
    return low if low == high else f"{low}-{high}"


def _describe_units(spec: InstanceTypeSpec, view: UnitView, usage: UsageSummary) -> str:
    """'GPUs 0-7 busy: p95 96-97%, peak 100%, memory peak up to 30.8 GiB of 40.0 GiB; GPUs 1-3 idle'."""
    unit = spec.unit_name
    parts = []
    busy = [d for d in view.busy if d.utilization is not None]
    if busy:
        indexes = [d.index for d in busy]
        label = (
            f"busiest {unit}" if indexes == ["*"] else f"{unit}{'s' if len(busy) > 1 else ''} {_index_ranges(indexes)}"
        )
        text = f"{label}: p95 {_span([d.utilization.p95 for d in busy if d.utilization], _pct)}"
        peaks = [d.utilization_peak for d in busy if d.utilization_peak is not None]
        if peaks:
            text += f", peak {_span(peaks, _pct)}"
        memory = [d.memory_used_peak_mib for d in busy if d.memory_used_peak_mib is not None]
        if memory:
            total = max((d.memory_total_mib or spec.memory_per_unit_mib) for d in busy)
            upto = "up to " if len(memory) > 1 else ""
            text += f", memory peak {upto}{_gib(max(memory))} of {_gib(total)}"
        parts.append(text)
    if view.idle and usage.accelerator_data is AcceleratorData.PER_DEVICE:
        plural = "s" if len(view.idle) > 1 else ""
        parts.append(f"{unit}{plural} {_index_ranges([d.index for d in view.idle])} idle")
    silent = spec.compute_units - len(usage.devices)
    if spec.accelerator_kind is AcceleratorKind.NEURON and silent > 0:
        parts.append(f"{silent} of {spec.compute_units} NeuronCores not in use (neuron-monitor reports none)")
    return "; ".join(parts)


def _resize_reasons(current: InstanceTypeSpec, candidate: Candidate, demand: Demand, policy: Policy) -> list[str]:
    target = candidate.spec
    memory_rule = (
        f"{_gib(target.memory_per_unit_mib)} per {target.unit_name} >= peak x {policy.memory_headroom:g}"
        f" ({_gib(demand.memory_per_unit_mib)})"
        if demand.memory_measured
        else f"{_gib(target.memory_per_unit_mib)} per {target.unit_name} (unmeasured memory kept)"
    )
    reasons = [
        f"{target.instance_type}: {target.compute_units}x {target.accelerator_model}, {memory_rule}, "
        f"{target.vcpus} vCPUs (needs {demand.vcpus}), projected {target.unit_name} p95 "
        f"{_pct(candidate.projected_util)}{candidate.basis}"
    ]
    if candidate.cross_family:
        reasons.append(
            f"changes family {current.family} -> {target.family} ({current.accelerator_model} -> "
            f"{target.accelerator_model}): check driver and CUDA compatibility"
        )
    if candidate.cross_hypervisor:
        reasons.append("moves from a Xen to a Nitro host: the AMI needs ENA and NVMe drivers")
    return reasons


def analyze_instance(
    instance: Instance,
    usage: UsageSummary | None,
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    now: datetime,
) -> Recommendation:
    cost_now = prices.monthly_cost_of(instance)
    draft = _draft(instance, usage, catalog, prices, policy, cost_now)
    spec = catalog.spec(instance.instance_type)

    if spec is not None and catalog.is_offered(instance.instance_type) is False:
        draft.reasons.append(
            f"{instance.instance_type} is no longer offered in {instance.region}: once stopped, this host "
            "may not get its type back, so an in-place resize is not offered (migrate in a maintenance window)"
        )
        if draft.target is not None:
            draft.actionable = False
            draft.confidence = draft.confidence.at_most(Confidence.MEDIUM)

    if instance.asg_name and draft.finding not in (Finding.EXCLUDED, Finding.INSUFFICIENT_DATA):
        advice = (
            f"change the launch template of Auto Scaling group '{instance.asg_name}' to {draft.target.instance_type}"
            if draft.target
            else f"adjust Auto Scaling group '{instance.asg_name}'"
        )
        draft.reasons.insert(
            0, f"would be {draft.finding.value}, but the host belongs to an Auto Scaling group: {advice}"
        )
        draft.finding = Finding.EXCLUDED
        draft.actionable = False

    evidence = _evidence(spec, usage, draft, policy)
    cost_after = draft.cost_after if draft.cost_after is not None else cost_now
    return Recommendation(
        recommendation_id=recommendation_id(
            instance, draft.finding, draft.target.instance_type if draft.target else None
        ),
        generated_at=now,
        account_id=instance.account_id,
        region=instance.region,
        instance_id=instance.instance_id,
        instance_name=instance.name,
        instance_type=instance.instance_type,
        availability_zone=instance.availability_zone,
        state=instance.state,
        finding=draft.finding,
        target_type=draft.target.instance_type if draft.target else None,
        monthly_cost=cost_now,
        monthly_cost_after=cost_after,
        confidence=draft.confidence,
        actionable=draft.actionable,
        reasons=tuple(draft.reasons),
        evidence=evidence,
        alternatives=draft.alternatives,
        asg_name=instance.asg_name,
        lookback_days=policy.lookback_days,
    )


def _evidence(spec: InstanceTypeSpec | None, usage: UsageSummary | None, draft: _Draft, policy: Policy) -> Evidence:
    if usage is None or spec is None:
        return Evidence()
    view = _unit_view(spec, usage, policy)
    p95, peak, memory_peak, _ = _busiest(usage.devices)
    has_devices = bool(usage.devices)
    return Evidence(
        observed_days=round(usage.accelerator_days, 2),
        coverage=round(usage.accelerator_coverage, 3),
        busy_units=len(view.busy) + view.unseen if has_devices else 0,
        total_units=spec.compute_units,
        accelerator_p95=round(p95, 1) if has_devices else None,
        accelerator_peak=round(peak, 1) if has_devices else None,
        memory_peak_mib=memory_peak,
        memory_per_unit_mib=spec.memory_per_unit_mib,
        cpu_p95=round(usage.cpu.p95, 1) if usage.cpu else None,
        network_peak_gbps=round(usage.network_peak_gbps, 3) if usage.network_peak_gbps is not None else None,
        host_memory_peak_pct=usage.host_memory_peak_pct,
        daily_accelerator_mean=tuple(None if v is None else round(v, 1) for v in usage.daily_accelerator_mean),
        idle_hours_per_week=draft.schedule[0] if draft.schedule else None,
        schedule=draft.schedule[1] if draft.schedule else None,
    )


def _draft(
    instance: Instance,
    usage: UsageSummary | None,
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    cost_now: Decimal | None,
) -> _Draft:
    # 1. Hosts we never touch: reported, not analysed for a resize.
    if policy.opt_out_tag in instance.tags:
        value = instance.tags[policy.opt_out_tag]
        return _Draft(Finding.EXCLUDED, [f"opted out by tag {policy.opt_out_tag}={value!r}".replace("=''", "")])
    if instance.lifecycle == "spot":
        reason = "Spot instance: resized by replacing it, not in place"
        if instance.instance_type not in prices.spot:
            reason += " (no recent Spot price: cost shown at the on-demand rate)"
        return _Draft(Finding.EXCLUDED, [reason])
    if instance.lifecycle in ("capacity-block", "scheduled"):
        return _Draft(Finding.EXCLUDED, [f"{instance.lifecycle} instance: capacity is reserved for this type"])
    if not instance.is_running:
        return _Draft(Finding.EXCLUDED, [f"{instance.state}: reported, not resized (a stopped host costs no compute)"])
    if instance.root_device_type != "ebs":
        return _Draft(Finding.EXCLUDED, ["instance-store root volume: the host cannot be stopped, so not resized"])

    spec = catalog.spec(instance.instance_type)
    if spec is None:
        return _Draft(
            Finding.INSUFFICIENT_DATA,
            [f"{instance.instance_type} is not in the instance catalog"],
            confidence=Confidence.LOW,
        )
    if cost_now is None:
        note = f"no on-demand price for {instance.instance_type} in {instance.region} ({prices.source})"
    else:
        note = ""

    # 2. Never guess: no accelerator data is not idle.
    if spec.accelerator_kind is AcceleratorKind.UNMONITORED:
        return _Draft(
            Finding.INSUFFICIENT_DATA,
            [f"{spec.accelerator_model or 'this accelerator'} publishes no utilisation metrics the bot can read"],
            confidence=Confidence.LOW,
        )
    if usage is None or usage.accelerator_data is AcceleratorData.NONE:
        source = (
            "neuron-monitor (NeuronCore utilisation)"
            if spec.accelerator_kind is AcceleratorKind.NEURON
            else "the CloudWatch agent's nvidia_gpu section"
        )
        return _Draft(
            Finding.INSUFFICIENT_DATA,
            [f"no {spec.unit_name} metrics in the last {policy.lookback_days} days: install {source} (see README)"],
            confidence=Confidence.LOW,
        )
    if usage.accelerator_days < policy.min_days:
        return _Draft(
            Finding.INSUFFICIENT_DATA,
            [
                f"only {usage.accelerator_days:.1f} days of {spec.unit_name} metrics; "
                f"at least {policy.min_days:g} are needed"
            ],
            confidence=Confidence.LOW,
        )
    if usage.accelerator_coverage < policy.min_coverage:
        return _Draft(
            Finding.INSUFFICIENT_DATA,
            [
                f"{spec.unit_name} metrics cover only {usage.accelerator_coverage:.0%} of the window "
                f"(at least {policy.min_coverage:.0%} is needed): is the agent running all the time?"
            ],
            confidence=Confidence.LOW,
        )

    view = _unit_view(spec, usage, policy)
    demand = _demand(instance, spec, usage, view, policy)
    confidence = _data_confidence(usage, policy)
    if usage.accelerator_data is AcceleratorData.ROLLUP:
        confidence = confidence.at_most(Confidence.MEDIUM)
    units_text = _describe_units(spec, view, usage)
    cpu_p95 = usage.cpu.p95 if usage.cpu else None
    cpu_text = f"CPU p95 {_pct(cpu_p95)} of {spec.vcpus} vCPUs"
    observed = f"{usage.accelerator_days:.1f} days observed ({usage.accelerator_coverage:.0%} coverage)"
    base_reasons = [r for r in (note,) if r]
    unit = spec.unit_name

    # 3. Idle: no unit ever did meaningful work.
    if not view.busy and not view.unseen:
        if cpu_p95 is not None and cpu_p95 >= policy.cpu_idle_pct:
            return _Draft(
                Finding.NOT_GPU_BOUND,
                [
                    *base_reasons,
                    f"all {spec.compute_units} {unit}s idle (p99 < {policy.idle_util_pct:g}%) while {cpu_text}: "
                    "the work here does not use the accelerator; a CPU instance type would serve it",
                    observed,
                ],
                confidence=confidence,
            )
        peak = max((d.utilization_peak or 0.0) for d in usage.devices)
        return _Draft(
            Finding.IDLE,
            [
                *base_reasons,
                f"all {spec.compute_units} {unit}s idle: p99 below {policy.idle_util_pct:g}% (peak {_pct(peak)}), "
                f"{cpu_text}",
                observed,
                "stop or terminate the host (snapshot its volumes first if unsure)",
            ],
            cost_after=Decimal("0.00") if cost_now is not None else None,
            confidence=confidence if cpu_p95 is not None else confidence.at_most(Confidence.MEDIUM),
        )

    reasons = [*base_reasons, units_text, cpu_text, observed, *demand.notes]

    # 4. Not GPU-bound: the accelerator waits for a saturated CPU; a smaller GPU would not help.
    if cpu_p95 is not None and cpu_p95 >= policy.cpu_saturated_pct and demand.unit_util_p95 < policy.gpu_light_pct:
        needed_vcpus = math.ceil(spec.vcpus * cpu_p95 / policy.target_max_cpu_pct)
        # Keep every GPU (the loader feeds all of them) and the RAM; only the vCPUs must grow.
        cpu_demand = replace(
            demand,
            units=spec.compute_units,
            vcpus=max(needed_vcpus, spec.vcpus + 1),
            host_memory_mib=max(demand.host_memory_mib, float(spec.memory_mib)),
            notes=(),
        )
        options = _candidates(instance, spec, catalog, prices, cpu_demand, policy, same_model_only=True)
        reasons.insert(
            0,
            f"CPU-bound: CPU p95 {_pct(cpu_p95)} while the busiest {unit} p95 is only {_pct(demand.unit_util_p95)}: "
            "more vCPUs (data loading, preprocessing) will raise accelerator use; a smaller accelerator would not",
        )
        if not options:
            reasons.append(f"no offered {spec.accelerator_model} type with more vCPUs was found")
            return _Draft(Finding.NOT_GPU_BOUND, reasons, confidence=confidence)
        best = options[0]
        reasons.extend(_resize_reasons(spec, best, cpu_demand, policy))
        return _Draft(
            Finding.NOT_GPU_BOUND,
            reasons,
            target=best.spec,
            cost_after=(best.hourly * 730).quantize(CENT),
            confidence=confidence.at_most(Confidence.MEDIUM if best.cross_family else Confidence.HIGH),
            actionable=True,
        )

    # 5. Underprovisioned: memory too close to full, or the accelerator pinned most of the time.
    memory_pressure = demand.memory_measured and demand.memory_per_unit_mib > spec.memory_per_unit_mib
    medians = [d.utilization.p50 for d in view.busy if d.utilization is not None]
    saturated = bool(medians) and max(medians) >= policy.saturated_util_pct
    if memory_pressure or saturated:
        if memory_pressure:
            reasons.insert(
                0,
                f"{unit} memory peak x {policy.memory_headroom:g} = {_gib(demand.memory_per_unit_mib)} exceeds "
                f"{_gib(spec.memory_per_unit_mib)} per {unit}: out-of-memory risk",
            )
        if saturated:
            reasons.insert(0, f"{unit} median utilisation {_pct(max(medians))}: pinned most of the time")
        bigger = replace(
            demand,
            units=max(demand.units, spec.compute_units),
            memory_per_unit_mib=max(demand.memory_per_unit_mib, spec.memory_per_unit_mib),
            # Fixing the accelerator must not shrink the host; network follows the measurement.
            vcpus=max(demand.vcpus, spec.vcpus),
            host_memory_mib=max(demand.host_memory_mib, float(spec.memory_mib)),
            # Out of memory, not of compute: a target as busy as today is fine; pinned: it must do better.
            util_ceiling=max(policy.target_max_util_pct, demand.unit_util_p95),
        )
        options = [
            c
            for c in _candidates(instance, spec, catalog, prices, bigger, policy)
            if c.spec.memory_per_unit_mib > spec.memory_per_unit_mib or c.projected_util < demand.unit_util_p95
        ]
        if not options:
            reasons.append("no larger offered type fits: consider sharding the model or a bigger accelerator")
            return _Draft(Finding.UNDERPROVISIONED, reasons, confidence=confidence)
        best = options[0]
        reasons.extend(_resize_reasons(spec, best, bigger, policy))
        return _Draft(
            Finding.UNDERPROVISIONED,
            reasons,
            target=best.spec,
            cost_after=(best.hourly * 730).quantize(CENT),
            confidence=confidence.at_most(Confidence.MEDIUM if best.cross_family else Confidence.HIGH),
            actionable=True,
        )

    # 6. Overprovisioned, schedulable, or optimized: pick whichever saves more.
    resize: _Draft | None = None
    if cost_now is not None and cost_now > 0:
        ceiling = cost_now * Decimal(str(1 - policy.min_savings_pct / 100))
        options = [c for c in _candidates(instance, spec, catalog, prices, demand, policy) if c.hourly * 730 <= ceiling]
        if options:
            best = options[0]
            target_confidence = confidence
            if best.cross_family or best.cross_hypervisor or not demand.memory_measured:
                target_confidence = target_confidence.at_most(Confidence.MEDIUM)
            resize = _Draft(
                Finding.OVERPROVISIONED,
                [*reasons, *_resize_reasons(spec, best, demand, policy)],
                target=best.spec,
                cost_after=(best.hourly * 730).quantize(CENT),
                confidence=target_confidence,
                actionable=True,
            )
    schedule = _schedule(usage, policy)
    scheduled: _Draft | None = None
    if schedule is not None and cost_now is not None and cost_now > 0:
        idle_hours, windows = schedule
        saved = (cost_now * idle_hours / HOURS_PER_WEEK).quantize(CENT)
        scheduled = _Draft(
            Finding.SCHEDULABLE,
            [
                f"busy only {windows}; idle {idle_hours} of {HOURS_PER_WEEK} hours a week "
                f"(every {unit} below {policy.idle_util_pct:g}% and CPU below {policy.cpu_idle_pct:g}% in those hours)",
                *reasons,
                "stop the host outside the busy hours (e.g. an EventBridge Scheduler stop/start pair)",
            ],
            cost_after=cost_now - saved,
            confidence=confidence,
            schedule=schedule,
        )
    chosen: _Draft | None = None
    if resize and scheduled:
        resize_saving = cost_now - resize.cost_after if cost_now is not None and resize.cost_after else Decimal(0)
        schedule_saving = (
            cost_now - scheduled.cost_after if cost_now is not None and scheduled.cost_after else Decimal(0)
        )
        chosen, other = (resize, scheduled) if resize_saving >= schedule_saving else (scheduled, resize)
        other_saving = schedule_saving if chosen is resize else resize_saving
        alternative = f"resizing to {other.target.instance_type}" if other.target else "a stop schedule"
        chosen.reasons.append(f"also possible: {alternative}, saving {_usd(other_saving)}/month")
    else:
        chosen = resize or scheduled
    if chosen is not None:
        if chosen.target is not None and chosen.cost_after is not None:
            chosen.alternatives = _neuron_alternatives(instance, spec, catalog, prices, demand, chosen.cost_after / 730)
        return chosen

    alternatives = _neuron_alternatives(instance, spec, catalog, prices, demand, cost_now / 730) if cost_now else ()
    return _Draft(
        Finding.OPTIMIZED,
        [*reasons, "no cheaper type fits the measured demand with headroom"],
        confidence=confidence,
        alternatives=alternatives,
    )


def analyze_fleet(
    instances: Iterable[Instance],
    usage: dict[str, UsageSummary],
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    now: datetime,
) -> list[Recommendation]:
    return [
        analyze_instance(instance, usage.get(instance.instance_id), catalog, prices, policy, now)
        for instance in instances
    ]
