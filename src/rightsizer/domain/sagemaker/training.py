"""Training jobs: the facts and rules that judge one family of training runs, advice for its next run.

Pure: no I/O (see the package's docstring for what SageMaker publishes and how it is read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Evidence, Recommendation
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.money import CENT, HOURS_PER_MONTH
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker.advice import (
    Draft,
    SageMakerPriceBook,
    as_capable,
    build_recommendation,
    hourly_price,
    insufficient_data,
)
from rightsizer.domain.sagemaker.prices import SageMakerPrices
from rightsizer.domain.sagemaker.usage import TrainingUsage
from rightsizer.domain.sagemaker_models import SageMakerDetail, TrainingFamily, TrainingJob, ec2_type, ml_type
from rightsizer.domain.wording import gib, pct, plural

# =============================================================================================
# Training jobs


@dataclass(frozen=True)
class TrainingFacts:
    family: TrainingFamily
    usage: TrainingUsage | None
    spec: InstanceTypeSpec | None
    catalog: Catalog
    prices: SageMakerPrices | None  # training
    policy: Policy
    window: timedelta

    @property
    def hourly(self) -> Decimal | None:
        return hourly_price(self.prices, self.family.instance_type)

    def billed_hours(self, job: TrainingJob) -> float:
        seconds = job.billable_seconds if job.billable_seconds is not None else job.training_seconds
        return seconds * job.instance_count / 3600

    @property
    def instance_hours(self) -> float:
        return sum(self.billed_hours(job) for job in self.family.jobs)

    @property
    def cost_now(self) -> Decimal | None:
        """What the window's jobs cost, at a month's pace (730 hours over the window's)."""
        hourly = self.hourly
        if hourly is None:
            return None
        window_hours = Decimal(str(max(self.window.total_seconds() / 3600, 1.0)))
        spent = hourly * Decimal(str(self.instance_hours))
        return (spent * HOURS_PER_MONTH / window_hours).quantize(CENT)


TrainingRule = Callable[[TrainingFacts], Draft | None]


def training_unknown_type(facts: TrainingFacts) -> Draft | None:
    if facts.spec is not None:
        return None
    return insufficient_data(f"{facts.family.instance_type} is not in the instance catalog: its GPUs are unknown")


def training_no_metrics(facts: TrainingFacts) -> Draft | None:
    if facts.usage is not None and facts.usage.measured:
        return None
    return insufficient_data(
        f"{plural(len(facts.family.jobs), 'job')} in the window, none with /aws/sagemaker/TrainingJobs "
        "GPUUtilization (SageMaker publishes it per host while a job runs)"
    )


def _peak_of(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return max(known) if known else None


def _host_fits(
    candidate: InstanceTypeSpec, current: InstanceTypeSpec, cpu_summed: float | None, ram_pct: float | None, p: Policy
) -> bool:
    """The candidate carries the hosts' CPU (summed p95, vCPU-percent) and RAM peak; what was not measured is kept."""
    if cpu_summed is None and candidate.vcpus < current.vcpus:
        return False
    if cpu_summed is not None and cpu_summed / candidate.vcpus > p.target_max_cpu_pct:
        return False
    if ram_pct is None:
        return candidate.memory_mib >= current.memory_mib
    return candidate.memory_mib >= ram_pct / 100 * current.memory_mib * p.host_headroom


def _host_text(spec: InstanceTypeSpec, target: InstanceTypeSpec, cpu_summed: float | None, ram: float | None) -> str:
    cpu = (
        f"CPU p95 {cpu_summed / 100:.1f} of {spec.vcpus} vCPUs busy, {cpu_summed / target.vcpus:.0f}% of its "
        f"{target.vcpus}"
        if cpu_summed is not None
        else f"CPUUtilization not read: {target.vcpus} vCPUs kept (at least {spec.vcpus})"
    )
    memory = (
        f"RAM peak {ram:.0f}% of {gib(spec.memory_mib)} fits {gib(target.memory_mib)}"
        if ram is not None
        else f"MemoryUtilization not read: {gib(target.memory_mib)} of RAM kept"
    )
    return f"{cpu}; {memory}"


def training_no_price(facts: TrainingFacts) -> Draft | None:
    if facts.hourly is not None:
        return None
    return insufficient_data(
        f"no SageMaker training price for {facts.family.instance_type} in {facts.family.region} (neither the Price "
        "List API nor the bundled snapshot has one): cost and savings unknown, so no smaller type is compared"
    )


def training_light(facts: TrainingFacts) -> Draft | None:
    """Every measured job ran far below its GPUs: the next run fits a smaller type, one that also carries the hosts'
    CPU and RAM (light GPUs often wait on the input pipeline, which fewer vCPUs would slow further)."""
    usage, spec, policy = facts.usage, facts.spec, facts.policy
    if usage is None or spec is None or facts.prices is None:
        return None
    measured = usage.measured
    p95 = max(job.gpu.p95 for job in measured if job.gpu is not None)
    if p95 >= policy.gpu_light_pct:
        return None
    memory = _peak_of([job.gpu_memory_peak_pct for job in measured])
    cpu_summed = _peak_of([job.cpu_summed_p95 for job in measured])
    ram = _peak_of([job.memory_peak_pct for job in measured])
    count = max(job.instance_count for job in facts.family.jobs)
    units = spec.accelerator_count
    used_mib = (memory or 0.0) / 100 * spec.memory_per_unit_mib  # per GPU
    hourly_now = facts.hourly
    best: tuple[Decimal, InstanceTypeSpec, float] | None = None
    for candidate in facts.catalog.specs.values():
        hourly = facts.prices.hourly_of(ml_type(candidate.instance_type))
        if hourly is None or hourly_now is None or hourly >= hourly_now or candidate.accelerator_count < 1:
            continue
        if not as_capable(facts.catalog, candidate, spec) or candidate.accelerator_count >= units:
            continue
        projected = p95 * units / candidate.accelerator_count
        if projected > policy.target_max_util_pct:
            continue
        if memory is None or candidate.memory_per_unit_mib < used_mib * units / candidate.accelerator_count * (
            policy.memory_headroom
        ):
            continue
        if not _host_fits(candidate, spec, cpu_summed, ram, policy):
            continue
        if best is None or hourly < best[0]:
            best = (hourly, candidate, projected)
    reasons = [
        f"{plural(len(facts.family.jobs), 'job')} in the window on {count} x {facts.family.instance_type}, "
        f"{facts.instance_hours:.1f} instance-hours billed; the busiest ran at GPU p95 {p95:.0f}% per GPU",
    ]
    if best is None:
        unread = [
            name
            for name, value in (
                ("GPUMemoryUtilization", memory),
                ("CPUUtilization", cpu_summed),
                ("MemoryUtilization", ram),
            )
            if value is None
        ]
        if not unread:
            return None  # measured in full, and nothing cheaper carries it: right-sized (training_fine)
        return insufficient_data(
            *reasons,
            f"{', '.join(unread)} not read for its hosts: whether a type with fewer GPUs carries the run is unknown, "
            "so none cheaper is advised",
        )
    hourly, target, projected = best
    cost_now = facts.cost_now
    after = (cost_now * hourly / hourly_now).quantize(CENT) if cost_now is not None and hourly_now else None
    reasons.append(
        f"{ml_type(target.instance_type)} ({plural(target.accelerator_count, 'GPU')}) carries it at {projected:.0f}% "
        f"per GPU, GPU memory peak {pct(memory)} per GPU x {policy.memory_headroom:g} headroom included; "
        + _host_text(spec, target, cpu_summed, ram)
    )
    reasons.append(
        "priced on the same run time: light GPUs wait on something else (input, CPU), which fewer GPUs do not speed up"
    )
    return Draft(
        Finding.OVERPROVISIONED,
        tuple(reasons),
        target_type=ml_type(target.instance_type),
        target_count=count,
        cost_after=after,
        confidence=Confidence.MEDIUM if len(measured) > 1 else Confidence.LOW,
        advice=f"run the next job with ResourceConfig InstanceType {ml_type(target.instance_type)}",
    )


def training_fine(facts: TrainingFacts) -> Draft:
    usage = facts.usage
    p95 = max((job.gpu.p95 for job in usage.measured if job.gpu is not None), default=0.0) if usage else 0.0
    return Draft(
        Finding.OPTIMIZED,
        (
            f"{plural(len(facts.family.jobs), 'job')} in the window, {facts.instance_hours:.1f} instance-hours billed; "
            f"the busiest at GPU p95 {p95:.0f}% per GPU: no smaller type carries it",
        ),
        confidence=Confidence.MEDIUM,
    )


TRAINING_RULES: tuple[TrainingRule, ...] = (
    training_unknown_type,
    training_no_metrics,
    training_no_price,
    training_light,
)


def analyze_training(
    families: Sequence[TrainingFamily],
    usage: Mapping[str, TrainingUsage],
    catalog: Catalog,
    prices: SageMakerPriceBook,
    policy: Policy,
    now: datetime,
) -> list[Recommendation]:
    window = timedelta(days=policy.lookback_days)
    recommendations = []
    for family in families:
        spec = catalog.spec(ec2_type(family.instance_type))
        found = usage.get(family.resource_id)
        facts = TrainingFacts(family, found, spec, catalog, prices.training, policy, window)
        draft = next((d for rule in TRAINING_RULES if (d := rule(facts)) is not None), None) or training_fine(facts)
        units = spec.accelerator_count if spec is not None else 0
        detail = SageMakerDetail(
            instance_count=max(job.instance_count for job in family.jobs),
            gpus_per_instance=units,
            jobs=len(family.jobs),
            gpu_hours=round(facts.instance_hours * units, 2),
            metrics="/aws/sagemaker/TrainingJobs GPUUtilization per host",
        )
        recommendations.append(
            build_recommendation(
                ResourceKind.SAGEMAKER_TRAINING,
                account_id=family.account_id,
                region=family.region,
                resource=family.resource_id,
                name=family.name,
                instance_type=family.instance_type,
                state=family.jobs[-1].status,
                draft=draft,
                cost_now=facts.cost_now,
                tags={},
                policy=policy,
                now=now,
                detail=detail,
                evidence=Evidence(),
            )
        )
    return recommendations
