"""Endpoint variants: the facts, gates and rules that judge one production variant, and their recommendations.

Pure: no I/O (see the package's docstring for what SageMaker publishes and how it is read).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import (
    CENT,
    ZERO,
    Confidence,
    Evidence,
    Finding,
    InstanceTypeSpec,
    Recommendation,
    monthly,
)
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker.advice import (
    Draft,
    SageMakerPriceBook,
    as_capable,
    build_recommendation,
    history_confidence,
    hourly_price,
    insufficient_data,
    opted_out_by_tag,
)
from rightsizer.domain.sagemaker.prices import SageMakerPrices
from rightsizer.domain.sagemaker.usage import VariantUsage
from rightsizer.domain.sagemaker_models import EndpointVariant, SageMakerDetail, ec2_type, ml_type
from rightsizer.domain.schedule import WeeklyPattern
from rightsizer.domain.usage.stats import HOURS_PER_WEEK
from rightsizer.domain.wording import gib, pct, plural, usd

# SageMaker recommends at least two instances per production variant (one per Availability Zone): a variant that has
# two or more is never advised below two.
MIN_HA_INSTANCES = 2
# =============================================================================================
# Endpoint variants


@dataclass(frozen=True)
class VariantFacts:
    variant: EndpointVariant
    usage: VariantUsage | None
    spec: InstanceTypeSpec | None  # the EC2 hardware of the ml.* type
    catalog: Catalog
    prices: SageMakerPrices | None  # hosting
    policy: Policy
    now: datetime
    # Requests the endpoint's other variants served in the window (0: none, or none had a datapoint).
    sibling_invocations: float = 0.0
    # The variant's share of the endpoint's weights (CurrentWeight over their sum); None: a weight is unknown.
    weight_share: float | None = None

    @property
    def siblings_serve(self) -> bool:
        """Another variant of the same endpoint had requests in the window: this one can go without the endpoint."""
        return self.sibling_invocations > 0

    @property
    def requests_due(self) -> float | None:
        """About how many requests SageMaker's weighted routing sent here, beside what the other variants served
        (0 for a weight-0 variant, which gets only requests that name it; None: a weight is unknown)."""
        share = self.weight_share
        if share is None:
            return None
        if share >= 1:
            return math.inf if self.siblings_serve else 0.0
        return self.sibling_invocations * share / (1 - share)

    @property
    def hourly(self) -> Decimal | None:
        return hourly_price(self.prices, self.variant.instance_type)

    @property
    def cost_now(self) -> Decimal | None:
        hourly = self.hourly
        return None if hourly is None else monthly(hourly * self.variant.instance_count)

    @property
    def age_days(self) -> float:
        return (self.now - self.variant.created).total_seconds() / 86400


VariantGate = Callable[[VariantFacts], Draft | None]
VariantRule = Callable[[VariantFacts, VariantUsage, InstanceTypeSpec], Draft | None]


def variant_opted_out(facts: VariantFacts) -> Draft | None:
    return opted_out_by_tag(facts.variant.tags, facts.policy)


def variant_not_in_service(facts: VariantFacts) -> Draft | None:
    status = facts.variant.endpoint_status
    if facts.variant.in_service:
        return None
    return Draft(Finding.EXCLUDED, (f"the endpoint is {status}: judged once it is InService again",))


def variant_scaled_to_zero(facts: VariantFacts) -> Draft | None:
    if facts.variant.instance_count > 0:
        return None
    return Draft(Finding.OPTIMIZED, ("no instances in service (scaled to zero): it costs nothing now",))


def variant_unknown_type(facts: VariantFacts) -> Draft | None:
    if facts.spec is not None:
        return None
    return insufficient_data(
        f"{facts.variant.instance_type} runs on {ec2_type(facts.variant.instance_type)}, which is not in the "
        "instance catalog: its GPUs are unknown"
    )


def variant_young(facts: VariantFacts) -> Draft | None:
    if facts.age_days >= facts.policy.min_days:
        return None
    return insufficient_data(
        f"the endpoint was created {facts.age_days:.1f} days ago; at least {facts.policy.min_days:g} days of "
        "traffic are needed to judge it"
    )


def variant_no_metrics(facts: VariantFacts) -> Draft | None:
    usage = facts.usage
    if usage is not None and usage.instance_metrics:
        return None
    return insufficient_data(
        f"no /aws/sagemaker/Endpoints metrics (CPUUtilization, GPUUtilization) for the variant in the last "
        f"{facts.policy.lookback_days} days, which SageMaker publishes for every in-service instance: without them "
        "an endpoint without requests cannot be told from one whose metrics are not read (is CloudWatch readable "
        "in this region?)"
    )


def variant_thin(facts: VariantFacts) -> Draft | None:
    usage, policy = facts.usage, facts.policy
    if usage is None:
        return None
    if usage.observed_days < policy.min_days:
        return insufficient_data(
            f"only {usage.observed_days:.1f} days of instance metrics; at least {policy.min_days:g} are needed"
        )
    if usage.coverage < policy.min_coverage:
        return insufficient_data(
            f"instance metrics cover only {usage.coverage:.0%} of the window (at least {policy.min_coverage:.0%})"
        )
    return None


VARIANT_GATES: tuple[VariantGate, ...] = (
    variant_opted_out,
    variant_not_in_service,
    variant_scaled_to_zero,
    variant_unknown_type,
    variant_young,
    variant_no_metrics,
    variant_thin,
)


def per_gpu_text(usage: VariantUsage) -> str:
    if usage.gpu is None:
        return "no GPUUtilization"
    summed = f"{usage.gpu_summed_p95:.0f}%" if usage.gpu_summed_p95 is not None else "n/a"
    text = (
        f"GPU p95 {usage.gpu.p95:.0f}% per GPU (GPUUtilization {summed} summed over {plural(usage.gpus, 'GPU')}), "
        f"busiest hours {pct(usage.gpu_burst)} per GPU"
    )
    busiest = usage.gpu_busiest
    if busiest is not None:
        text += (
            f"; the busiest GPU alone p95 {busiest.p95:.0f}%, busiest hours {pct(usage.gpu_busiest_burst)} (enhanced "
            "metrics, per AcceleratorId)"
        )
    return text


def _summed_text(usage: VariantUsage) -> str:
    """The busiest 5-minute GPU reading summed over the GPUs: no single GPU worked more than this."""
    if usage.gpu is None:
        return "n/a"
    return f"{usage.gpu.p99 * max(usage.gpus, 1):.0f}% (GPUUtilization p99, summed)"


def _gpu_quiet(usage: VariantUsage, policy: Policy) -> bool:
    """No GPU shows steady work or a burst that looks like work. Judged on the figures summed over the GPUs, which
    bound the busiest one: one GPU of eight at 30 % reads 30 summed but 3.75 per GPU, under the idle line."""
    if usage.gpu is None:
        return True  # CPUUtilization is published, GPUUtilization not: no GPU work shows (said in the reasons)
    gpus = max(usage.gpus, 1)
    return usage.gpu.p99 * gpus < policy.idle_util_pct and (usage.gpu_peak or 0.0) * gpus < policy.activity_peak_pct


def _cpu_busy(usage: VariantUsage, policy: Policy) -> bool:
    """CPUUtilization shows work of its own, as for an EC2 host: a share of the instance or whole vCPUs steadily
    (p95), or a recurring job's level in its busiest periods (p99)."""
    cpu = usage.cpu
    if cpu is None:
        return False
    return (
        cpu.p95 >= policy.cpu_idle_pct
        or cpu.p95 * usage.vcpus / 100 >= policy.busy_vcpus
        or cpu.p99 >= policy.cpu_activity_pct
    )


def _cpu_text(usage: VariantUsage) -> str:
    if usage.cpu is None:
        return "no CPUUtilization"
    return f"CPU p95 {usage.cpu.p95:.0f}% per vCPU ({usage.cpu.p95 * usage.vcpus / 100:.1f} of {usage.vcpus} vCPUs)"


def _routing_text(facts: VariantFacts) -> tuple[str | None, str | None]:
    """(why no request here does not make the variant idle, or None; what its weight says when it is idle)."""
    if not facts.siblings_serve:
        return None, None
    served = f"the endpoint's other variants served {facts.sibling_invocations:,.0f} requests"
    due, weight = facts.requests_due, facts.variant.weight
    if due is None:
        return (
            f"{served} and this variant's weight is not known: whether SageMaker routed requests to it is unknown, "
            "so it is not judged idle"
        ), None
    if due >= 1:
        routed = "all of the endpoint's weight" if math.isinf(due) else f"about {due:,.0f} requests"
        return (
            f"{served}, and its weight {weight:g} ({facts.weight_share or 0:.0%} of the endpoint's) routes {routed} "
            "here: no Invocations for it says its metric is not read (or every request to it failed), not that "
            "nothing reached it; not judged idle"
        ), None
    if not weight:
        return None, f"{served}; its weight is 0: it gets only requests that name it (TargetVariant), none came"
    return None, f"{served}; its weight {weight:g} routes fewer than one of them here"


def variant_idle(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    """No requests in the window, and the GPUs and CPUs show no work of their own: the whole cost is waste."""
    if usage.invocations is not None and usage.invocations > 0:
        return None
    policy, variant = facts.policy, facts.variant
    since = max(usage.window_start, variant.created)
    checked = (
        f"no invocations since {since:%Y-%m-%d} ({usage.observed_days:.0f} days): AWS/SageMaker Invocations "
        + ("has no datapoint for the variant" if usage.invocations is None else "sums to 0")
        + " (SageMaker publishes it for periods with requests), while its instance metrics are published "
        f"({usage.coverage:.0%} of the window)"
    )
    if not _gpu_quiet(usage, policy) or _cpu_busy(usage, policy):
        return insufficient_data(
            f"{checked}, yet it works ({per_gpu_text(usage)}: its busiest GPU up to {_summed_text(usage)}; "
            f"{_cpu_text(usage)}): requests may arrive some other way (an asynchronous endpoint, a batch job on the "
            "instance); not judged idle"
        )
    not_idle, routing = _routing_text(facts)
    if not_idle is not None:
        return insufficient_data(f"{checked}; {not_idle}")
    reasons = [checked, f"{per_gpu_text(usage)}; {_cpu_text(usage)}: no work"]
    if routing is not None:
        reasons.append(routing)
    confidence = history_confidence(usage.observed_days, usage.coverage, policy)
    if usage.gpu is None:
        reasons.append(
            f"GPUUtilization is not published for {variant.instance_type}: judged on its requests and its CPU"
        )
        confidence = confidence.at_most(Confidence.MEDIUM)
    if facts.siblings_serve:
        advice = (
            f"remove variant {variant.variant_name} from the endpoint (a new endpoint config without it, then "
            "UpdateEndpoint): the endpoint's other variants serve its requests"
        )
    elif variant.inference_components:
        advice = (
            f"scale its inference components ({', '.join(variant.inference_components[:3])}) to 0 copies and the "
            "variant to 0 instances (ManagedInstanceScaling MinInstanceCount 0), or delete the endpoint"
        )
    else:
        advice = (
            f"delete endpoint {variant.endpoint_name} (its endpoint config {variant.endpoint_config_name} and model "
            "stay: CreateEndpoint brings it back in minutes), or host it on inference components, which scale to zero"
        )
    return Draft(Finding.IDLE, tuple(reasons), cost_after=ZERO, confidence=confidence, advice=advice)


def variant_no_gpu_metrics(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    """Requests arrive and nothing says what the GPUs do with them: no type or count is sized on an assumed 0 %."""
    if usage.gpu is not None or spec.accelerator_count < 1:
        return None
    return insufficient_data(
        f"{usage.invocations or 0:,.0f} invocations in the window, but no GPUUtilization for the variant "
        f"({_cpu_text(usage)}): what its {plural(spec.accelerator_count, spec.unit_name)} do is not measured, so no "
        "smaller type or fewer instances is sized on it"
    )


def variant_no_price(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    if facts.hourly is not None:
        return None
    return insufficient_data(
        f"{per_gpu_text(usage)}; no SageMaker hosting price for {facts.variant.instance_type} in "
        f"{facts.variant.region} (neither the Price List API nor the bundled snapshot has one): cost and savings "
        "unknown, so no smaller type is compared"
    )


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


VARIANT_RULES: tuple[VariantRule, ...] = (variant_idle, variant_no_gpu_metrics, variant_no_price, variant_sized)


def decide_variant(facts: VariantFacts) -> Draft:
    draft = next((d for gate in VARIANT_GATES if (d := gate(facts)) is not None), None)
    if draft is not None:
        return draft
    usage, spec = facts.usage, facts.spec
    if usage is None or spec is None:  # the gates answer for both
        raise RuntimeError(f"{facts.variant.resource_id} passed the gates without usage and a spec")
    found = next((d for rule in VARIANT_RULES if (d := rule(facts, usage, spec)) is not None), None)
    return found or variant_optimized(facts, usage, spec)


def _variant_evidence(usage: VariantUsage | None, spec: InstanceTypeSpec | None) -> Evidence:
    if usage is None:
        return Evidence()
    memory_mib = (
        usage.gpu_memory_peak_pct / 100 * spec.memory_per_unit_mib
        if usage.gpu_memory_peak_pct is not None and spec is not None
        else None
    )
    return Evidence(
        observed_days=round(usage.observed_days, 2),
        coverage=round(usage.coverage, 3),
        accelerator_p95=round(usage.gpu.p95, 1) if usage.gpu else None,
        accelerator_peak=round(usage.gpu_peak, 1) if usage.gpu_peak is not None else None,
        accelerator_burst=round(usage.gpu_burst, 1) if usage.gpu_burst is not None else None,
        memory_peak_mib=round(memory_mib) if memory_mib is not None else None,
        memory_per_unit_mib=spec.memory_per_unit_mib if spec is not None else None,
        cpu_p95=round(usage.cpu.p95, 1) if usage.cpu else None,
        host_memory_peak_pct=round(usage.memory_peak_pct, 1) if usage.memory_peak_pct is not None else None,
        daily_accelerator_mean=tuple(None if v is None else round(v, 1) for v in usage.daily_gpu_mean),
    )


def _metrics_text(usage: VariantUsage | None) -> str:
    if usage is None:
        return "no CloudWatch series read"
    parts = [
        "GPUUtilization" if usage.gpu is not None else "no GPUUtilization",
        "GPUMemoryUtilization" if usage.gpu_memory_peak_pct is not None else "no GPUMemoryUtilization",
        "CPUUtilization" if usage.cpu is not None else "no CPUUtilization",
        "Invocations" if usage.invocations is not None else "no Invocations datapoints",
        "ModelLatency" if usage.latency_p95_ms is not None else "no ModelLatency",
    ]
    return ", ".join(parts)


def _weight_share(weight: float | None, endpoint_weights: Sequence[float | None]) -> float | None:
    """The variant's share of its endpoint's weighted routing (None: a weight is unknown, or all are 0)."""
    known = [w for w in endpoint_weights if w is not None]
    if weight is None or len(known) < len(endpoint_weights) or sum(known) <= 0:
        return None
    return weight / sum(known)


def analyze_variants(
    variants: Sequence[EndpointVariant],
    usage: Mapping[str, VariantUsage],
    catalog: Catalog,
    prices: SageMakerPriceBook,
    policy: Policy,
    now: datetime,
) -> list[Recommendation]:
    """One recommendation per endpoint variant (a region's, or one shard's: an endpoint's variants are together)."""
    served: dict[str, float] = {}  # endpoint -> requests its variants served
    weights: dict[str, list[float | None]] = {}
    for v in variants:
        found = usage.get(v.resource_id)
        served[v.endpoint_name] = served.get(v.endpoint_name, 0.0) + ((found.invocations or 0.0) if found else 0.0)
        weights.setdefault(v.endpoint_name, []).append(v.weight)
    recommendations = []
    for variant in variants:
        spec = catalog.spec(ec2_type(variant.instance_type))
        found = usage.get(variant.resource_id)
        siblings = served[variant.endpoint_name] - ((found.invocations or 0.0) if found else 0.0)
        facts = VariantFacts(
            variant,
            found,
            spec,
            catalog,
            prices.hosting,
            policy,
            now,
            sibling_invocations=siblings,
            weight_share=_weight_share(variant.weight, weights[variant.endpoint_name]),
        )
        draft = decide_variant(facts)
        detail = SageMakerDetail(
            endpoint_name=variant.endpoint_name,
            variant_name=variant.variant_name,
            model_name=variant.model_name,
            copy_held_back=variant.copy_held_back,
            endpoint_config_name=variant.endpoint_config_name,
            instance_count=variant.instance_count,
            inference_components=variant.inference_components,
            scaled_by=variant.scaled_by,
            serverless=variant.serverless,
            last_modified=variant.last_modified,
            gpus_per_instance=spec.accelerator_count if spec is not None else 0,
            gpu_summed_p95_pct=round(found.gpu_summed_p95, 1) if found and found.gpu_summed_p95 is not None else None,
            invocations=found.invocations if found else None,
            invocation_hours=found.invocation_hours if found else None,
            peak_invocations_per_instance=found.peak_invocations_per_instance if found else None,
            latency_p95_ms=round(found.latency_p95_ms, 1) if found and found.latency_p95_ms is not None else None,
            latency_mean_ms=round(found.latency_mean_ms, 1) if found and found.latency_mean_ms is not None else None,
            metrics=_metrics_text(found),
        )
        recommendations.append(
            build_recommendation(
                ResourceKind.SAGEMAKER_ENDPOINT,
                account_id=variant.account_id,
                region=variant.region,
                resource=variant.resource_id,
                name=variant.endpoint_name,
                instance_type=variant.instance_type,
                state=variant.endpoint_status,
                draft=draft,
                cost_now=facts.cost_now,
                tags=variant.tags,
                policy=policy,
                now=now,
                detail=detail,
                evidence=_variant_evidence(found, spec),
            )
        )
    return recommendations
