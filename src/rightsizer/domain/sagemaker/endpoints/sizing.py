"""Sizing a variant: a smaller ml.* type or fewer instances that carry its load, or a schedule around its busy
hours, whichever saves more; right-sized when neither does.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.money import CENT, monthly
from rightsizer.domain.policy import Policy
from rightsizer.domain.sagemaker.advice import (
    Draft,
    as_capable,
    history_confidence,
)
from rightsizer.domain.sagemaker.endpoints.facts import VariantFacts
from rightsizer.domain.sagemaker.endpoints.load import per_gpu_text
from rightsizer.domain.sagemaker.usage import VariantUsage
from rightsizer.domain.sagemaker_models import ml_type
from rightsizer.domain.schedule import WeeklyPattern
from rightsizer.domain.usage.stats import HOURS_PER_WEEK
from rightsizer.domain.wording import gib, plural, usd

# SageMaker recommends at least two instances per production variant (one per Availability Zone): a variant that has
# two or more is never advised below two.
MIN_HA_INSTANCES = 2


@dataclass(frozen=True)
class _Fit:
    spec: InstanceTypeSpec
    count: int
    monthly: Decimal
    gpu_p95: float  # projected per GPU
    gpu_burst: float


def _unmeasured_kept(candidate: InstanceTypeSpec, current: InstanceTypeSpec, usage: VariantUsage) -> bool:
    """A figure not published is kept, never assumed small: each instance keeps at least today's GPU memory (every
    GPU and in all) without GPUMemoryUtilization, and today's RAM without MemoryUtilization (CPU: see `_fits`)."""
    if usage.gpu_memory_peak_pct is None and (
        candidate.accelerator_count < current.accelerator_count
        or candidate.memory_per_unit_mib < current.memory_per_unit_mib
    ):
        return False
    return not (usage.memory_peak_pct is None and candidate.memory_mib < current.memory_mib)


def _fits(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> list[_Fit]:
    """Every (ml.* type, count) that carries the variant's measured load, cheaper than today. A variant whose count
    something else sets (Application Auto Scaling, managed instance scaling) keeps it: its instances' Average is
    per instance whatever their number, but today's count times it is not the load of its busy hours."""
    policy, variant, prices = facts.policy, facts.variant, facts.prices
    count = variant.instance_count
    summed_p95 = usage.gpu_summed_p95 or 0.0
    summed_burst = usage.gpu_summed_burst if usage.gpu_summed_burst is not None else summed_p95
    busiest_p95 = usage.gpu_busiest.p95 if usage.gpu_busiest is not None else 0.0
    busiest_burst = max(usage.gpu_busiest_burst or 0.0, usage.gpu_busiest.peak if usage.gpu_busiest else 0.0)
    memory_used = (usage.gpu_memory_peak_pct or 0.0) * usage.gpus / 100 * spec.memory_per_unit_mib
    per_gpu_memory = memory_used / max(usage.gpus, 1)
    cpu_busy = (usage.cpu.p95 * usage.vcpus if usage.cpu else 0.0) * count  # vCPU-percent over the variant
    host_used = (usage.memory_peak_pct or 0.0) / 100 * spec.memory_mib
    floor = count if variant.scaled_by else min(count, MIN_HA_INSTANCES)
    cost_now = facts.cost_now
    if cost_now is None or prices is None:
        return []
    fits: list[_Fit] = []
    for candidate in facts.catalog.specs.values():
        hourly = prices.hourly_of(ml_type(candidate.instance_type))
        units = candidate.accelerator_count
        if hourly is None or units < 1 or candidate.fractional_gpu or candidate.bare_metal:
            continue
        if not as_capable(facts.catalog, candidate, spec) or not _unmeasured_kept(candidate, spec, usage):
            continue
        if candidate.accelerator_memory_mib * units < memory_used * policy.memory_headroom:
            continue
        if candidate.memory_per_unit_mib < per_gpu_memory * policy.memory_headroom:
            continue
        if candidate.memory_mib < host_used * policy.host_headroom:
            continue
        for n in range(floor, count + 1):
            if candidate.instance_type == spec.instance_type and n == count:
                continue  # today's
            total = monthly(hourly * n)
            if total >= cost_now * (1 - Decimal(str(policy.min_savings_pct)) / 100):
                continue
            # The load spread over the target's GPUs, but never less on one GPU than the busiest GPU carries alone.
            gpu_p95 = max(summed_p95 * count / (n * units) if usage.gpus else 0.0, busiest_p95)
            gpu_burst = max(summed_burst * count / (n * units), busiest_burst)
            if gpu_p95 > policy.target_max_util_pct or gpu_burst > policy.burst_max_util_pct:
                continue
            if cpu_busy / (n * candidate.vcpus) > policy.target_max_cpu_pct:
                continue
            if usage.cpu is None and n * candidate.vcpus < count * spec.vcpus:
                continue  # CPUUtilization not published: the variant keeps its vCPUs
            fits.append(_Fit(candidate, n, total, gpu_p95, gpu_burst))
    return sorted(fits, key=lambda fit: (fit.monthly, -fit.count, fit.spec.instance_type))


def _latency_text(usage: VariantUsage) -> str:
    if usage.latency_p95_ms is None:
        return "ModelLatency not published: the latency a smaller type gives is not measured"
    return f"ModelLatency {usage.latency_p95_ms:.0f} ms (p95 of hourly averages)"


def variant_oversized(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    """A smaller ml.* type, or fewer instances, carries the measured per-GPU load, GPU memory x headroom and CPU."""
    fits = _fits(facts, usage, spec)
    if not fits:
        return None
    best, variant, policy = fits[0], facts.variant, facts.policy
    target = ml_type(best.spec.instance_type)
    same_type = target == variant.instance_type
    change = (
        f"{plural(best.count, 'instance')} instead of {variant.instance_count}"
        if same_type
        else f"{best.count} x {target} instead of {variant.instance_count} x {variant.instance_type}"
    )
    memory = usage.gpu_memory_peak_pct
    reasons = [
        f"{per_gpu_text(usage)} over {usage.observed_days:.0f} days across "
        f"{plural(variant.instance_count, 'instance')}",
        f"{change}: projected GPU p95 {best.gpu_p95:.0f}% per GPU (at most {policy.target_max_util_pct:g}%), busiest "
        f"hours {best.gpu_burst:.0f}%"
        + (
            f"; GPU memory peak {memory:.0f}% per GPU "
            f"({gib((memory or 0.0) * usage.gpus / 100 * spec.memory_per_unit_mib)}) fits "
            f"{gib(best.spec.accelerator_memory_mib * best.spec.accelerator_count)} with {policy.memory_headroom:g}x "
            "headroom"
            if memory is not None
            else "; GPUMemoryUtilization not published: the target keeps today's GPU memory"
        ),
        f"{_latency_text(usage)}: "
        + (
            "the same accelerators serve each request, at a load that stays below the target"
            if best.spec.accelerator_model == spec.accelerator_model
            else f"{best.spec.accelerator_model} is at least as fast as {spec.accelerator_model} in every figure"
        ),
    ]
    if usage.invocations is not None:
        reasons.append(f"{usage.invocations:,.0f} invocations in the window")
    if variant.instance_count >= MIN_HA_INSTANCES and best.count == MIN_HA_INSTANCES:
        reasons.append(f"kept at {MIN_HA_INSTANCES} instances, one per Availability Zone, as SageMaker recommends")
    if usage.gpus > 1 and best.spec.accelerator_count < usage.gpus:
        reasons.append(
            f"the model server must be set for {plural(best.spec.accelerator_count, 'GPU')} (workers or "
            "tensor-parallel degree), as it is for the GPUs it has now"
        )
    alternative = next((fit for fit in fits[1:] if fit.spec.instance_type != best.spec.instance_type), None)
    if alternative is not None:
        reasons.append(
            f"also fits: {alternative.count} x {ml_type(alternative.spec.instance_type)} at "
            f"{usd(alternative.monthly)}/month"
        )
    if variant.scaled_by:
        # _fits keeps the count of a variant something else scales: the change is its type.
        reasons.append(
            f"{variant.scaled_by} sets its instance count, so the count is kept: sized per instance, on their "
            "average load"
        )
        advice = f"a new endpoint config with {change}, then UpdateEndpoint" + (
            f"; deregister the variant from {variant.scaled_by} first and register it again after"
            if variant.autoscaling is not None
            else ""
        )
    else:
        advice = f"a new endpoint config with {change}, then UpdateEndpoint (blue/green, with auto-rollback)"
    confidence = history_confidence(usage.observed_days, usage.coverage, policy)
    if usage.latency_p95_ms is None or memory is None:
        confidence = confidence.at_most(Confidence.MEDIUM)
    return Draft(
        Finding.OVERPROVISIONED,
        tuple(reasons),
        target_type=target,
        target_count=best.count,
        cost_after=best.monthly,
        confidence=confidence,
        advice=advice,
    )


def _pattern(usage: VariantUsage, policy: Policy) -> WeeklyPattern | None:
    hourly = usage.hourly_invocations
    if usage.observed_days < policy.min_schedule_days or len(hourly) != HOURS_PER_WEEK:
        return None
    if len([h for h in hourly if h is None]) > 8:
        return None
    busy = tuple(h is None or h > 0 for h in hourly)
    if busy.count(False) < policy.min_schedule_idle_hours or all(busy):
        return None
    return WeeklyPattern(busy=busy, weeks_observed=usage.weeks_observed, recurring_share=usage.busy_weeks_share)


def variant_schedulable(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    """Requests arrive only some hours of the week, every week: the instances idle the rest."""
    pattern = _pattern(usage, facts.policy)
    cost_now = facts.cost_now
    if pattern is None or cost_now is None or not pattern.repeats:
        return None
    share = Decimal(pattern.idle_hours) / HOURS_PER_WEEK
    variant = facts.variant
    after = (cost_now * (1 - share)).quantize(CENT)
    reasons = (
        f"requests only {pattern.windows}: none in {pattern.idle_hours} of the week's 168 hours, in each of "
        f"{usage.weeks_observed} weeks",
        f"{per_gpu_text(usage)}",
    )
    if variant.inference_components:
        advice = (
            "scale the inference components to 0 copies outside those hours (Application Auto Scaling scheduled "
            "actions; the variant's ManagedInstanceScaling MinInstanceCount 0)"
        )
        confidence = Confidence.MEDIUM
    else:
        advice = (
            "endpoints cannot be stopped: move the model to inference components, which scale to 0 on a schedule "
            "(Application Auto Scaling scheduled actions), or delete and re-create the endpoint around those hours"
        )
        confidence = Confidence.LOW
    return Draft(Finding.SCHEDULABLE, reasons, cost_after=after, confidence=confidence, advice=advice, pattern=pattern)


def variant_optimized(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft:
    reasons = [
        f"{per_gpu_text(usage)}; no smaller ml.* type or fewer instances carries it (hosting prices: "
        f"{facts.prices.source if facts.prices else 'none'})",
        _latency_text(usage),
    ]
    if usage.invocations is not None:
        reasons.append(f"{usage.invocations:,.0f} invocations in the window")
    if facts.variant.scaled_by:
        reasons.append(f"{facts.variant.scaled_by} sets its instance count: only its type is compared")
    unread = [
        name
        for name, value in (
            ("GPUMemoryUtilization", usage.gpu_memory_peak_pct),
            ("CPUUtilization", usage.cpu),
            ("MemoryUtilization", usage.memory_peak_pct),
        )
        if value is None
    ]
    confidence = history_confidence(usage.observed_days, usage.coverage, facts.policy)
    if unread:
        reasons.append(f"{', '.join(unread)} not published: only types that keep what they measure are compared")
        confidence = confidence.at_most(Confidence.MEDIUM)
    return Draft(Finding.OPTIMIZED, tuple(reasons), confidence=confidence)


def _savings(facts: VariantFacts, draft: Draft | None) -> Decimal:
    if draft is None or draft.cost_after is None or facts.cost_now is None:
        return Decimal(-1)
    return facts.cost_now - draft.cost_after


def variant_sized(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    """The larger saving of a smaller type (or fewer instances) and a schedule around the busy hours."""
    oversized = variant_oversized(facts, usage, spec)
    schedule = variant_schedulable(facts, usage, spec)
    if schedule is not None and _savings(facts, schedule) > _savings(facts, oversized):
        return schedule
    return oversized
