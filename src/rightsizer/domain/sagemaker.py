"""SageMaker analysis: usage summaries of endpoint variants, notebook instances and training jobs, the rules that
judge them (small functions in registries, as domain/rules.py does for EC2 hosts) and their recommendations.

Pure: no I/O. What SageMaker publishes, and how it is read here:
- Endpoint variants (`/aws/sagemaker/Endpoints`, dimensions EndpointName + VariantName): `GPUUtilization` and
  `GPUMemoryUtilization` are the *sum* over the instance's GPUs (0-100 % x GPUs; a 4-GPU instance reads up to
  400 %), `CPUUtilization` the sum over its vCPUs, `MemoryUtilization` 0-100 %; a variant's Average is the mean
  over its instances, its Maximum the busiest instance. Every figure people read is divided by the GPUs (vCPUs) of
  the type: *per GPU*, the mean of the instance's GPUs (one GPU at 100 % and three idle read 25 % per GPU: the
  split is not published). `AWS/SageMaker` `Invocations` (Sum) counts requests and has datapoints only for periods
  with requests; `ModelLatency` (microseconds) is read as hourly averages.
- Notebook instances publish no usage metrics of their own. Their GPU use is measured only where the owner's
  lifecycle configuration runs the CloudWatch agent with a `NotebookInstanceName` dimension (docs/resources.md);
  without it the evidence is what the API says: InService since LastModifiedTime, and the cost of that.
- Training jobs (`/aws/sagemaker/TrainingJobs`, dimension Host = <job>/algo-<n>): GPUUtilization summed per host.

The EC2 catalog gives each `ml.X` type's hardware (X's GPUs, memory, vCPUs); prices are SageMaker's own (hosting,
notebook, training), never EC2's: a type without a SageMaker price has none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import numpy as np

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import (
    CENT,
    HOURS_PER_MONTH,
    ZERO,
    Confidence,
    Evidence,
    Finding,
    InstanceTypeSpec,
    Recommendation,
    SeriesStats,
    monthly,
)
from rightsizer.domain.models import recommendation_id as advice_id
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import RESOURCES, ResourceKind
from rightsizer.domain.sagemaker_models import (
    EndpointVariant,
    NotebookInstance,
    SageMakerDetail,
    TrainingFamily,
    TrainingJob,
    ec2_type,
    ml_type,
)
from rightsizer.domain.sagemaker_prices import SageMakerPrices
from rightsizer.domain.schedule import WeeklyPattern
from rightsizer.domain.schedule_plan import busy_runs
from rightsizer.domain.usage import (
    EMPTY,
    HOURS_PER_WEEK,
    SILENT_AGENT_SECONDS,
    Series,
    hour_of_week,
    percentile,
    series_stats,
)
from rightsizer.domain.wording import gib, pct, plural, usd

# A notebook InService this long without a stop is "left running" (a weekend is ~2.5 days).
LEFT_RUNNING_DAYS = 2.0
# SageMaker recommends at least two instances per production variant (one per Availability Zone): a variant that has
# two or more is never advised below two.
MIN_HA_INSTANCES = 2
MICROSECONDS_PER_MS = 1000.0
_FIVE_MINUTES = 300
_HOUR = 3600


# =============================================================================================
# Raw series (the CloudWatch adapter builds them) and their summaries


@dataclass(frozen=True, slots=True)
class VariantSeries:
    """What CloudWatch holds for one endpoint variant over the window, as published (GPU and CPU summed)."""

    resource_id: str
    window_start: datetime
    window_end: datetime
    gpu_avg: Series = EMPTY  # GPUUtilization, 5-minute Average (mean over instances of the sum over GPUs)
    gpu_max: Series = EMPTY  # GPUUtilization, hourly Maximum (the busiest instance)
    gpu_memory_max: Series = EMPTY  # GPUMemoryUtilization, hourly Maximum
    cpu_avg: Series = EMPTY  # CPUUtilization, 5-minute Average (sum over vCPUs)
    memory_max: Series = EMPTY  # MemoryUtilization, hourly Maximum (0-100)
    invocations: Series = EMPTY  # Invocations, hourly Sum (variant, or its inference components: the larger)
    invocations_per_instance: Series = EMPTY  # InvocationsPerInstance, hourly Sum
    latency_avg: Series = EMPTY  # ModelLatency, hourly Average (microseconds)
    # Enhanced metrics: GPUUtilization of each GPU of each instance (AcceleratorId), 0-100 each, not summed; 5-minute
    # Averages and hourly Maximums. Empty where the endpoint does not publish them.
    gpu_accelerators_avg: tuple[Series, ...] = ()
    gpu_accelerators_max: tuple[Series, ...] = ()

    @property
    def instance_metrics(self) -> bool:
        return bool(self.gpu_avg or self.cpu_avg or self.gpu_max)


@dataclass(frozen=True, slots=True)
class VariantUsage:
    """What the window says about one endpoint variant. GPU and CPU figures are per GPU / per vCPU (see module)."""

    resource_id: str
    window_start: datetime
    window_end: datetime
    gpus: int  # GPUs (or Neuron devices) per instance: what GPUUtilization was divided by
    vcpus: int
    observed_days: float = 0.0  # from the first instance metric to the end of the window
    coverage: float = 0.0  # share of the window's 5-minute periods with an instance metric
    gpu: SeriesStats | None = None  # per GPU, 5-minute averages
    gpu_burst: float | None = None  # per GPU, p99 of the hourly maxima (busiest instance)
    gpu_peak: float | None = None
    gpu_summed_p95: float | None = None  # as published: p95 of the 5-minute averages, summed over GPUs
    gpu_summed_burst: float | None = None
    gpu_memory_peak_pct: float | None = None  # per GPU: the busiest instance's hourly peak / GPUs
    cpu: SeriesStats | None = None  # per vCPU
    memory_peak_pct: float | None = None  # MemoryUtilization's peak (0-100)
    invocations: float | None = None  # over the window; None: no datapoint at all
    invocation_hours: int = 0
    # Per hour of the week (Monday 00:00 UTC first): the most invocations that hour saw in any week; None: no hour of
    # the window fell there with instance metrics.
    hourly_invocations: tuple[float | None, ...] = ()
    busy_weeks_share: float | None = None  # share of the busy hours-of-week busy in at least two weeks
    weeks_observed: int = 0
    peak_invocations_per_instance: float | None = None
    latency_p95_ms: float | None = None
    latency_mean_ms: float | None = None
    daily_gpu_mean: tuple[float | None, ...] = ()  # per GPU, one value per day of the window, oldest first
    # Enhanced metrics, per GPU: the busiest GPU's 5-minute averages, and its busiest hours (p99 of the hourly maxima).
    # A GPU's own work does not spread over the others: no target GPU carries less than this. None: not published.
    gpu_busiest: SeriesStats | None = None
    gpu_busiest_burst: float | None = None

    @property
    def instance_metrics(self) -> bool:
        return self.gpu is not None or self.cpu is not None


def _divided(values: np.ndarray, by: int) -> np.ndarray:
    return values / by if by > 0 else values


def _days(window_start: datetime, window_end: datetime) -> int:
    return max(1, math.ceil((window_end - window_start).total_seconds() / 86400))


def _daily_means(series: Series, window_start: datetime, days: int, by: int) -> tuple[float | None, ...]:
    if not series:
        return (None,) * days
    start = int(window_start.timestamp())
    day = (series.stamps - start) // 86400
    values = _divided(series.array, by)
    means: list[float | None] = []
    for number in range(days):
        chosen = values[day == number]
        means.append(float(chosen.mean()) if len(chosen) else None)
    return tuple(means)


def _stats_per(series: Series, by: int) -> SeriesStats | None:
    return series_stats(_divided(series.array, by)) if series else None


def _p(series: Series, pct_rank: float) -> float | None:
    return percentile(sorted(series.array.tolist()), pct_rank) if series else None


def _week_views(
    invocations: Series, monitored: Series, window_start: datetime
) -> tuple[tuple[float | None, ...], float | None, int]:
    """Hour-of-week busiest invocation counts (None: no monitored hour fell there), the share of busy hours-of-week
    seen busy in two or more weeks, and the whole weeks observed."""
    if not monitored:
        return (), None, 0
    hours = np.unique(monitored.stamps - monitored.stamps % _HOUR)
    peaks: list[float | None] = [None] * HOURS_PER_WEEK
    for hour in hours.tolist():
        peaks[hour_of_week(hour)] = 0.0
    busy_weeks: dict[int, set[int]] = {}
    start = int(window_start.timestamp())
    for stamp, value in zip(invocations.stamps.tolist(), invocations.array.tolist(), strict=True):
        slot = hour_of_week(stamp)
        current = peaks[slot]
        peaks[slot] = max(value, current or 0.0)
        if value > 0:
            busy_weeks.setdefault(slot, set()).add((stamp - start) // (7 * 86400))
    # The last datapoint covers a period too: 14 days of 5-minute averages are two whole weeks, not one.
    span = int(monitored.stamps[-1]) + monitored.period_seconds - int(monitored.stamps[0])
    weeks = span // (7 * 86400)
    recurring = (sum(1 for seen in busy_weeks.values() if len(seen) >= 2) / len(busy_weeks)) if busy_weeks else None
    return tuple(peaks), recurring, weeks


def summarize_variant(raw: VariantSeries, gpus: int, vcpus: int) -> VariantUsage:
    """Per-GPU and per-vCPU figures of one variant's series (GPUUtilization / gpus, CPUUtilization / vcpus)."""
    monitored = raw.gpu_avg or raw.cpu_avg
    window = (raw.window_end - raw.window_start).total_seconds()
    expected = max(1, int(window // _FIVE_MINUTES))
    first = int(monitored.stamps[0]) if monitored else None
    observed = (raw.window_end.timestamp() - first) / 86400 if first is not None else 0.0
    invocations = float(raw.invocations.array.sum()) if raw.invocations else None
    hourly, recurring, weeks = _week_views(raw.invocations, monitored, raw.window_start)
    latency = raw.latency_avg
    burst = _p(raw.gpu_max, 99)
    return VariantUsage(
        resource_id=raw.resource_id,
        window_start=raw.window_start,
        window_end=raw.window_end,
        gpus=gpus,
        vcpus=vcpus,
        observed_days=round(max(0.0, observed), 2),
        coverage=min(1.0, len(monitored.array) / expected) if monitored else 0.0,
        gpu=_stats_per(raw.gpu_avg, gpus),
        gpu_burst=burst / gpus if burst is not None and gpus else burst,
        gpu_peak=float(raw.gpu_max.array.max()) / max(gpus, 1) if raw.gpu_max else None,
        gpu_summed_p95=_p(raw.gpu_avg, 95),
        gpu_summed_burst=burst,
        gpu_memory_peak_pct=float(raw.gpu_memory_max.array.max()) / max(gpus, 1) if raw.gpu_memory_max else None,
        cpu=_stats_per(raw.cpu_avg, vcpus),
        memory_peak_pct=float(raw.memory_max.array.max()) if raw.memory_max else None,
        invocations=invocations,
        invocation_hours=int((raw.invocations.array > 0).sum()) if raw.invocations else 0,
        hourly_invocations=hourly,
        busy_weeks_share=recurring,
        weeks_observed=weeks,
        peak_invocations_per_instance=float(raw.invocations_per_instance.array.max())
        if raw.invocations_per_instance
        else None,
        latency_p95_ms=(_p(latency, 95) or 0.0) / MICROSECONDS_PER_MS if latency else None,
        latency_mean_ms=float(latency.array.mean()) / MICROSECONDS_PER_MS if latency else None,
        daily_gpu_mean=_daily_means(raw.gpu_avg, raw.window_start, _days(raw.window_start, raw.window_end), gpus),
        gpu_busiest=_busiest_accelerator(raw.gpu_accelerators_avg),
        gpu_busiest_burst=max((_p(one, 99) or 0.0 for one in raw.gpu_accelerators_max), default=None),
    )


def _busiest_accelerator(series: Sequence[Series]) -> SeriesStats | None:
    """The stats of the GPU whose 5-minute p95 is the highest (enhanced metrics: each GPU's reading, not a sum)."""
    found = [stats for one in series if (stats := series_stats(one.array)) is not None]
    return max(found, key=lambda stats: (stats.p95, stats.peak), default=None)


@dataclass(frozen=True, slots=True)
class NotebookSeries:
    """The CloudWatch agent's GPU series of one notebook instance (namespace CWAgent, dimension NotebookInstanceName),
    where its lifecycle configuration publishes them; empty tuples: none."""

    resource_id: str
    window_start: datetime
    window_end: datetime
    gpu_avg: tuple[Series, ...] = ()  # nvidia_smi_utilization_gpu, 5-minute Average, one per GPU
    gpu_max: tuple[Series, ...] = ()  # hourly Maximum
    memory_used_max: tuple[Series, ...] = ()  # nvidia_smi_memory_used (MiB), hourly Maximum


@dataclass(frozen=True, slots=True)
class NotebookUsage:
    resource_id: str
    measured: bool  # the agent's GPU series exist for the notebook
    observed_days: float = 0.0
    coverage: float = 0.0
    busiest_p99: float | None = None  # the busiest GPU's p99 of 5-minute averages
    busiest_peak: float | None = None  # ...and the highest hourly maximum of any GPU
    memory_peak_mib: float | None = None
    daily_gpu_mean: tuple[float | None, ...] = ()  # the busiest GPU's per day
    last_sample: datetime | None = None  # the agent's last 5-minute average of any GPU


def summarize_notebook(raw: NotebookSeries) -> NotebookUsage:
    if not raw.gpu_avg and not raw.gpu_max:
        return NotebookUsage(raw.resource_id, measured=False)
    averages = [s for s in raw.gpu_avg if s]
    window = (raw.window_end - raw.window_start).total_seconds()
    first = min((int(s.stamps[0]) for s in averages), default=None)
    longest = max((len(s.array) for s in averages), default=0)
    days = _days(raw.window_start, raw.window_end)
    dailies = [_daily_means(s, raw.window_start, days, 1) for s in averages]
    busiest_daily = tuple(
        max((d[n] for d in dailies if d[n] is not None), default=None)  # type: ignore[type-var]
        for n in range(days)
    )
    return NotebookUsage(
        resource_id=raw.resource_id,
        measured=True,
        observed_days=round((raw.window_end.timestamp() - first) / 86400, 2) if first is not None else 0.0,
        coverage=min(1.0, longest / max(1, int(window // _FIVE_MINUTES))),
        busiest_p99=max((_p(s, 99) or 0.0 for s in averages), default=None),
        busiest_peak=max((float(s.array.max()) for s in raw.gpu_max if s), default=None),
        memory_peak_mib=max((float(s.array.max()) for s in raw.memory_used_max if s), default=None),
        daily_gpu_mean=busiest_daily,
        last_sample=datetime.fromtimestamp(max(int(s.stamps[-1]) for s in averages), UTC) if averages else None,
    )


@dataclass(frozen=True, slots=True)
class JobSeries:
    """One training job's hosts: GPUUtilization and GPUMemoryUtilization (summed over each host's GPUs)."""

    job: str
    gpu_avg: tuple[Series, ...] = ()  # one per host, 5-minute Average
    gpu_memory_max: tuple[Series, ...] = ()  # one per host, hourly Maximum
    cpu_avg: tuple[Series, ...] = ()  # CPUUtilization (summed over the host's vCPUs), one per host, 5-minute Average
    memory_max: tuple[Series, ...] = ()  # MemoryUtilization (0-100), one per host, hourly Maximum


@dataclass(frozen=True, slots=True)
class TrainingSeries:
    resource_id: str
    window_start: datetime
    window_end: datetime
    jobs: tuple[JobSeries, ...] = ()


@dataclass(frozen=True, slots=True)
class JobUsage:
    job: str
    gpu: SeriesStats | None  # per GPU, over every host's 5-minute averages
    gpu_memory_peak_pct: float | None  # per GPU
    cpu_summed_p95: float | None = None  # CPUUtilization as published (vCPU-percent), p95 over every host
    memory_peak_pct: float | None = None  # MemoryUtilization's peak over every host (0-100)


@dataclass(frozen=True, slots=True)
class TrainingUsage:
    resource_id: str
    jobs: tuple[JobUsage, ...] = ()

    @property
    def measured(self) -> tuple[JobUsage, ...]:
        return tuple(job for job in self.jobs if job.gpu is not None)


def summarize_training(raw: TrainingSeries, gpus: int) -> TrainingUsage:
    usages = []
    for job in raw.jobs:
        values = [s.array for s in job.gpu_avg if s]
        joined = np.concatenate(values) if values else np.asarray([], dtype=np.float64)
        memory = [float(s.array.max()) for s in job.gpu_memory_max if s]
        cpu = [s.array for s in job.cpu_avg if s]
        ram = [float(s.array.max()) for s in job.memory_max if s]
        usages.append(
            JobUsage(
                job=job.job,
                gpu=series_stats(_divided(joined, gpus)) if len(joined) else None,
                gpu_memory_peak_pct=max(memory) / max(gpus, 1) if memory else None,
                cpu_summed_p95=percentile(sorted(np.concatenate(cpu).tolist()), 95) if cpu else None,
                memory_peak_pct=max(ram) if ram else None,
            )
        )
    return TrainingUsage(raw.resource_id, tuple(usages))


# =============================================================================================
# Prices


@dataclass(frozen=True)
class SageMakerPriceBook:
    """SageMaker's own on-demand prices of one region, per component (hosting, notebook, training)."""

    region: str
    hosting: SageMakerPrices | None = None
    notebook: SageMakerPrices | None = None
    training: SageMakerPrices | None = None

    def sources(self) -> str:
        return "; ".join(
            f"{prices.component}: {prices.source}" for prices in (self.hosting, self.notebook, self.training) if prices
        )


def _hourly(prices: SageMakerPrices | None, instance_type: str) -> Decimal | None:
    return prices.hourly_of(instance_type) if prices is not None else None


# =============================================================================================
# Drafts and what every kind's rules share


@dataclass(frozen=True)
class Draft:
    """A SageMaker finding being assembled; frozen into a Recommendation at the end."""

    finding: Finding
    reasons: tuple[str, ...]
    target_type: str | None = None
    target_count: int | None = None
    cost_after: Decimal | None = None  # None: costs what it costs now (or unknown when no price)
    confidence: Confidence = Confidence.HIGH
    advice: str | None = None  # what to do, said last
    pattern: WeeklyPattern | None = None
    unknown_savings: bool = False  # the advice saves an amount nothing measures (left running)

    def noting(self, reason: str) -> Draft:
        return replace(self, reasons=(*self.reasons, reason))


def _insufficient(*reasons: str) -> Draft:
    return Draft(Finding.INSUFFICIENT_DATA, reasons, confidence=Confidence.LOW)


def _confidence(observed_days: float, coverage: float, policy: Policy) -> Confidence:
    if observed_days >= 0.9 * policy.lookback_days and coverage >= policy.high_confidence_coverage:
        return Confidence.HIGH
    if observed_days >= policy.medium_confidence_days:
        return Confidence.MEDIUM
    return Confidence.LOW


def one_click(kind: ResourceKind, finding: Finding, detail: SageMakerDetail) -> tuple[bool, str | None]:
    """Whether approving in Slack can carry out this SageMaker advice, and why not (what `held_back` says): the
    instance workflow updates an endpoint variant (a copy of its config with the new type, blue/green) and stops a
    notebook instance; the rest stays advice: AWS offers no safe call for them."""
    if kind is ResourceKind.SAGEMAKER_ENDPOINT and finding is Finding.OVERPROVISIONED:
        if detail.scaled_by and detail.target_instance_count not in (None, detail.instance_count):
            return False, f"{detail.scaled_by} sets its instance count: change the scaling policy's limits"
        if detail.scaled_by:
            return False, f"{detail.scaled_by} scales the variant: its owner changes the type around it"
        if detail.inference_components or not detail.model_name:
            return False, "its models are inference components: change them and their endpoint by hand"
        if detail.copy_held_back:
            return False, f"{'; '.join(detail.copy_held_back)}: change its endpoint config by hand"
        return True, None  # the instance workflow's endpoint update (statemachine/sagemaker.py)
    if kind is ResourceKind.SAGEMAKER_NOTEBOOK and finding is Finding.IDLE:
        return True, None  # StopNotebookInstance: its volume is kept
    if kind is ResourceKind.SAGEMAKER_ENDPOINT and finding is Finding.IDLE:
        return False, "an idle endpoint is deleted (or scaled to zero) by its owner: no one-click delete"
    if kind is ResourceKind.SAGEMAKER_ENDPOINT and finding is Finding.SCHEDULABLE:
        return False, "a schedule for an endpoint is a scaling policy its owner sets: advice only"
    if kind is ResourceKind.SAGEMAKER_TRAINING:
        return False, "advice for the next run's ResourceConfig: nothing to click"
    return False, None


def recommendation_id(account_id: str, region: str, resource: str, instance_type: str, draft: Draft) -> str:
    """A SageMaker resource's advice id (models.recommendation_id): its target count is part of the advice."""
    return advice_id(
        account_id, region, resource, instance_type, draft.finding, draft.target_type or "", str(draft.target_count)
    )


def _build(
    kind: ResourceKind,
    *,
    account_id: str,
    region: str,
    resource: str,
    name: str,
    instance_type: str,
    state: str,
    draft: Draft,
    cost_now: Decimal | None,
    tags: Mapping[str, str],
    policy: Policy,
    now: datetime,
    detail: SageMakerDetail,
    evidence: Evidence,
) -> Recommendation:
    detail = replace(detail, target_instance_count=draft.target_count)
    if draft.unknown_savings or cost_now is None:
        cost_after = None
    else:
        cost_after = draft.cost_after if draft.cost_after is not None else cost_now
    actionable, held_back = one_click(kind, draft.finding, detail)
    savings = None if cost_now is None or cost_after is None else cost_now - cost_after
    return Recommendation(
        recommendation_id=recommendation_id(account_id, region, resource, instance_type, draft),
        generated_at=now,
        account_id=account_id,
        region=region,
        instance_id=resource,
        instance_name=name,
        instance_type=instance_type,
        availability_zone="",
        state=state,
        finding=draft.finding,
        target_type=draft.target_type,
        monthly_cost=cost_now,
        monthly_cost_after=cost_after,
        confidence=draft.confidence,
        actionable=actionable,
        reasons=(*draft.reasons, draft.advice) if draft.advice else draft.reasons,
        evidence=replace(
            evidence,
            idle_hours_per_week=draft.pattern.idle_hours if draft.pattern else None,
            schedule=draft.pattern.windows if draft.pattern else None,
            busy_windows=busy_runs(draft.pattern.busy) if draft.pattern else (),
        ),
        lookback_days=policy.lookback_days,
        held_back=held_back,
        team=tags.get(policy.team_tag, ""),
        monthly_savings_net=savings,  # no reservation or Savings Plan is read for SageMaker: net is list
        managed=tags.get(policy.managed_tag_key) == "true",
        kind=kind,
        sagemaker=detail,
        tags=dict(tags),
    )


def _opted_out(tags: Mapping[str, str], policy: Policy) -> Draft | None:
    tag = policy.opt_out_tag
    if tag not in tags:
        return None
    value = tags[tag]
    return Draft(Finding.EXCLUDED, (f"opted out by tag {tag}" + (f"={value!r}" if value else ""),))


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
        return _hourly(self.prices, self.variant.instance_type)

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
    return _opted_out(facts.variant.tags, facts.policy)


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
    return _insufficient(
        f"{facts.variant.instance_type} runs on {ec2_type(facts.variant.instance_type)}, which is not in the "
        "instance catalog: its GPUs are unknown"
    )


def variant_young(facts: VariantFacts) -> Draft | None:
    if facts.age_days >= facts.policy.min_days:
        return None
    return _insufficient(
        f"the endpoint was created {facts.age_days:.1f} days ago; at least {facts.policy.min_days:g} days of "
        "traffic are needed to judge it"
    )


def variant_no_metrics(facts: VariantFacts) -> Draft | None:
    usage = facts.usage
    if usage is not None and usage.instance_metrics:
        return None
    return _insufficient(
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
        return _insufficient(
            f"only {usage.observed_days:.1f} days of instance metrics; at least {policy.min_days:g} are needed"
        )
    if usage.coverage < policy.min_coverage:
        return _insufficient(
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
        return _insufficient(
            f"{checked}, yet it works ({per_gpu_text(usage)}: its busiest GPU up to {_summed_text(usage)}; "
            f"{_cpu_text(usage)}): requests may arrive some other way (an asynchronous endpoint, a batch job on the "
            "instance); not judged idle"
        )
    not_idle, routing = _routing_text(facts)
    if not_idle is not None:
        return _insufficient(f"{checked}; {not_idle}")
    reasons = [checked, f"{per_gpu_text(usage)}; {_cpu_text(usage)}: no work"]
    if routing is not None:
        reasons.append(routing)
    confidence = _confidence(usage.observed_days, usage.coverage, policy)
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
    return _insufficient(
        f"{usage.invocations or 0:,.0f} invocations in the window, but no GPUUtilization for the variant "
        f"({_cpu_text(usage)}): what its {plural(spec.accelerator_count, spec.unit_name)} do is not measured, so no "
        "smaller type or fewer instances is sized on it"
    )


def variant_no_price(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    if facts.hourly is not None:
        return None
    return _insufficient(
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


def _as_capable(catalog: Catalog, target: InstanceTypeSpec, current: InstanceTypeSpec) -> bool:
    """Each of the target's accelerators is the current one, or at least as fast and as wide in every figure the
    catalog has: the measured load, and the latency of a request, carry over unchanged."""
    if target.accelerator_kind is not current.accelerator_kind:
        return False
    if target.accelerator_model == current.accelerator_model:
        return True
    now, then = catalog.accelerator(current), catalog.accelerator(target)
    if now is None or then is None:
        return False
    pairs = (
        (then.memory_bandwidth_gbps, now.memory_bandwidth_gbps),
        (then.fp32_tflops, now.fp32_tflops),
        (then.tensor_tflops, now.tensor_tflops),
    )
    return all(new is not None and old is not None and new >= old for new, old in pairs if old is not None)


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
        if not _as_capable(facts.catalog, candidate, spec) or not _unmeasured_kept(candidate, spec, usage):
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
    confidence = _confidence(usage.observed_days, usage.coverage, policy)
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
    confidence = _confidence(usage.observed_days, usage.coverage, facts.policy)
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


VARIANT_FINDINGS: tuple[VariantRule, ...] = (variant_idle, variant_no_gpu_metrics, variant_no_price, variant_sized)


def decide_variant(facts: VariantFacts) -> Draft:
    draft = next((d for gate in VARIANT_GATES if (d := gate(facts)) is not None), None)
    if draft is not None:
        return draft
    usage, spec = facts.usage, facts.spec
    if usage is None or spec is None:  # the gates answer for both
        raise RuntimeError(f"{facts.variant.resource_id} passed the gates without usage and a spec")
    found = next((d for rule in VARIANT_FINDINGS if (d := rule(facts, usage, spec)) is not None), None)
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
            _build(
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


# =============================================================================================
# Notebook instances


@dataclass(frozen=True)
class NotebookFacts:
    notebook: NotebookInstance
    usage: NotebookUsage | None
    spec: InstanceTypeSpec | None
    prices: SageMakerPrices | None  # notebook
    policy: Policy
    now: datetime

    @property
    def hourly(self) -> Decimal | None:
        return _hourly(self.prices, self.notebook.instance_type)

    @property
    def cost_now(self) -> Decimal | None:
        """Its instance's price while InService; nothing otherwise (a stopped notebook pays for its volume only)."""
        if not self.notebook.in_service:
            return ZERO
        hourly = self.hourly
        return None if hourly is None else monthly(hourly)

    @property
    def running_days(self) -> float:
        return max(0.0, (self.now - self.notebook.last_modified).total_seconds() / 86400)

    def cost_since(self) -> Decimal | None:
        hourly = self.hourly
        if hourly is None:
            return None
        return (hourly * Decimal(str(self.running_days * 24))).quantize(CENT)


NotebookRule = Callable[[NotebookFacts], Draft | None]

AUTO_STOP = (
    "add an idle auto-stop lifecycle configuration (on-start script that stops the instance after an hour without "
    "Jupyter activity, e.g. aws-samples' auto-stop-idle), or stop it when done: StopNotebookInstance keeps its volume"
)


def notebook_opted_out(facts: NotebookFacts) -> Draft | None:
    return _opted_out(facts.notebook.tags, facts.policy)


def notebook_not_in_service(facts: NotebookFacts) -> Draft | None:
    """Stopped (or stopping, failed, starting): no instance hours are billed, and LastModifiedTime is not a start."""
    if facts.notebook.in_service:
        return None
    return Draft(
        Finding.EXCLUDED,
        (f"{facts.notebook.status}: no instance hours billed (its ML storage volume only); judged once InService",),
    )


def _running_text(facts: NotebookFacts) -> str:
    notebook = facts.notebook
    cost = facts.cost_since()
    spent = f", {usd(cost)} at {usd(facts.hourly or ZERO)}/hour" if cost is not None else ", no notebook price known"
    return (
        f"InService since at least {notebook.last_modified:%Y-%m-%d %H:%M} UTC ({facts.running_days:.1f} days{spent})"
    )


def notebook_idle(facts: NotebookFacts) -> Draft | None:
    """The agent's GPU series show no work for as long as it has run: stopping it loses nothing but the session."""
    usage, policy = facts.usage, facts.policy
    if usage is None or not usage.measured:
        return None
    if usage.observed_days < policy.min_days or usage.coverage < policy.min_coverage:
        return _insufficient(
            f"{_running_text(facts)}; its GPU metrics cover {usage.observed_days:.1f} days ({usage.coverage:.0%} of "
            f"the window): at least {policy.min_days:g} days are needed"
        )
    quiet = (usage.busiest_p99 or 0.0) < policy.idle_util_pct and (usage.busiest_peak or 0.0) < policy.activity_peak_pct
    last = usage.last_sample
    if quiet and (last is None or (facts.now - last).total_seconds() > SILENT_AGENT_SECONDS):
        # The agent went silent while the notebook runs on (a kernel restart, the agent stopped): what its GPUs did
        # since is not measured, and silence is not quiet.
        ended = f"end on {last:%Y-%m-%d %H:%M} UTC" if last is not None else "have no 5-minute averages"
        return _insufficient(
            f"{_running_text(facts)}; the CloudWatch agent's GPU series {ended} while it is InService: what its "
            "GPUs did since is not measured, so it is not judged idle"
        )
    if not quiet:
        return Draft(
            Finding.OPTIMIZED,
            (
                f"{_running_text(facts)}; its GPUs work (busiest GPU p99 {pct(usage.busiest_p99)}, hourly peak "
                f"{pct(usage.busiest_peak)}): in use",
            ),
            confidence=_confidence(usage.observed_days, usage.coverage, policy),
        )
    reasons = (
        _running_text(facts),
        f"the CloudWatch agent's GPU metrics (NotebookInstanceName {facts.notebook.name}) show no work in "
        f"{usage.observed_days:.0f} days: busiest GPU p99 {pct(usage.busiest_p99)}, hourly peak "
        f"{pct(usage.busiest_peak)}",
    )
    return Draft(
        Finding.IDLE,
        reasons,
        cost_after=ZERO,
        confidence=_confidence(usage.observed_days, usage.coverage, policy),
        advice="stop it (StopNotebookInstance keeps its ML storage volume); "
        + AUTO_STOP.split(", or stop", maxsplit=1)[0],
    )


def notebook_unknown_type(facts: NotebookFacts) -> Draft | None:
    if facts.spec is not None:
        return None
    return _insufficient(f"{_running_text(facts)}; {facts.notebook.instance_type} is not in the instance catalog")


def notebook_left_running(facts: NotebookFacts) -> Draft | None:
    """No usage is published for notebook instances: what is known is how long it has run without a stop."""
    if facts.running_days < LEFT_RUNNING_DAYS:
        return None
    notebook = facts.notebook
    config = (
        f"its lifecycle configuration {notebook.lifecycle_config} has not stopped it (the bot does not read scripts)"
        if notebook.lifecycle_config
        else "it has no lifecycle configuration"
    )
    return Draft(
        Finding.LEFT_RUNNING,
        (
            f"{_running_text(facts)} on {plural(facts.spec.accelerator_count if facts.spec else 0, 'GPU')}",
            "SageMaker publishes no usage for notebook instances, and no CloudWatch agent publishes its GPUs "
            "(NotebookInstanceName dimension): whether anyone uses it is not measured, so it is not called idle",
            config,
        ),
        confidence=Confidence.MEDIUM,
        advice=AUTO_STOP,
        unknown_savings=True,
    )


def notebook_recent(facts: NotebookFacts) -> Draft:
    return _insufficient(
        f"{_running_text(facts)}; SageMaker publishes no usage for notebook instances and no CloudWatch agent "
        "publishes its GPUs: nothing to judge yet"
    )


NOTEBOOK_RULES: tuple[NotebookRule, ...] = (
    notebook_opted_out,
    notebook_not_in_service,
    notebook_unknown_type,
    notebook_idle,
    notebook_left_running,
)


def decide_notebook(facts: NotebookFacts) -> Draft:
    return next((d for rule in NOTEBOOK_RULES if (d := rule(facts)) is not None), None) or notebook_recent(facts)


def analyze_notebooks(
    notebooks: Sequence[NotebookInstance],
    usage: Mapping[str, NotebookUsage],
    catalog: Catalog,
    prices: SageMakerPriceBook,
    policy: Policy,
    now: datetime,
) -> list[Recommendation]:
    recommendations = []
    for notebook in notebooks:
        spec = catalog.spec(ec2_type(notebook.instance_type))
        found = usage.get(notebook.resource_id)
        facts = NotebookFacts(notebook, found, spec, prices.notebook, policy, now)
        draft = decide_notebook(facts)
        evidence = Evidence(
            observed_days=found.observed_days if found else 0.0,
            coverage=round(found.coverage, 3) if found else 0.0,
            accelerator_p95=None,
            accelerator_peak=round(found.busiest_peak, 1) if found and found.busiest_peak is not None else None,
            accelerator_burst=round(found.busiest_p99, 1) if found and found.busiest_p99 is not None else None,
            memory_peak_mib=round(found.memory_peak_mib) if found and found.memory_peak_mib is not None else None,
            memory_per_unit_mib=spec.memory_per_unit_mib if spec is not None else None,
            daily_accelerator_mean=tuple(None if v is None else round(v, 1) for v in found.daily_gpu_mean)
            if found
            else (),
        )
        detail = SageMakerDetail(
            instance_count=1,
            notebook_name=notebook.name,
            lifecycle_config=notebook.lifecycle_config,
            running_since=notebook.last_modified,
            last_modified=notebook.last_modified,
            gpus_per_instance=spec.accelerator_count if spec is not None else 0,
            metrics="the CloudWatch agent's GPU series (NotebookInstanceName)"
            if found is not None and found.measured
            else "none published for notebook instances (no CloudWatch agent series)",
        )
        recommendations.append(
            _build(
                ResourceKind.SAGEMAKER_NOTEBOOK,
                account_id=notebook.account_id,
                region=notebook.region,
                resource=notebook.resource_id,
                name=notebook.name,
                instance_type=notebook.instance_type,
                state=notebook.status,
                draft=draft,
                cost_now=facts.cost_now,
                tags=notebook.tags,
                policy=policy,
                now=now,
                detail=detail,
                evidence=evidence,
            )
        )
    return recommendations


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
        return _hourly(self.prices, self.family.instance_type)

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
    return _insufficient(f"{facts.family.instance_type} is not in the instance catalog: its GPUs are unknown")


def training_no_metrics(facts: TrainingFacts) -> Draft | None:
    if facts.usage is not None and facts.usage.measured:
        return None
    return _insufficient(
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
    return _insufficient(
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
        if not _as_capable(facts.catalog, candidate, spec) or candidate.accelerator_count >= units:
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
        return _insufficient(
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
            _build(
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


# =============================================================================================
# A region's (or a shard's) SageMaker resources


@dataclass(frozen=True)
class SageMakerResources:
    """SageMaker resources of one (account, region), or of one shard of it, with the prices to judge them."""

    variants: tuple[EndpointVariant, ...] = ()
    notebooks: tuple[NotebookInstance, ...] = ()
    training: tuple[TrainingFamily, ...] = ()
    prices: SageMakerPriceBook = field(default_factory=lambda: SageMakerPriceBook(""))

    @property
    def resource_ids(self) -> tuple[str, ...]:
        return (
            *(v.resource_id for v in self.variants),
            *(n.resource_id for n in self.notebooks),
            *(t.resource_id for t in self.training),
        )

    def __len__(self) -> int:
        return len(self.variants) + len(self.notebooks) + len(self.training)


@dataclass(frozen=True)
class SageMakerUsage:
    """The summaries of one shard's SageMaker resources, by resource id."""

    variants: Mapping[str, VariantUsage] = field(default_factory=dict)
    notebooks: Mapping[str, NotebookUsage] = field(default_factory=dict)
    training: Mapping[str, TrainingUsage] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.variants) + len(self.notebooks) + len(self.training)


def shard_resources(resources: SageMakerResources, size: int) -> list[SageMakerResources]:
    """Consecutive runs of at most `size` resources (an endpoint's variants stay together, so that an idle variant
    knows whether its siblings serve), in a stable order: the same inventory gives the same shards."""
    if size < 1:
        raise ValueError(f"a shard holds at least one resource, got {size}")
    units: list[tuple[str, tuple[object, ...]]] = []
    by_endpoint: dict[str, list[EndpointVariant]] = {}
    for variant in sorted(resources.variants, key=lambda v: (v.endpoint_name, v.variant_name)):
        by_endpoint.setdefault(variant.endpoint_name, []).append(variant)
    units.extend(("variants", tuple(group)) for group in by_endpoint.values())
    units.extend(("notebooks", (n,)) for n in sorted(resources.notebooks, key=lambda n: n.name))
    units.extend(("training", (t,)) for t in sorted(resources.training, key=lambda t: t.resource_id))
    shards: list[SageMakerResources] = []
    current: dict[str, list[object]] = {"variants": [], "notebooks": [], "training": []}
    held = 0
    for kind, items in units:
        if held and held + len(items) > size:
            shards.append(_shard(current, resources.prices))
            current, held = {"variants": [], "notebooks": [], "training": []}, 0
        current[kind].extend(items)
        held += len(items)
    if held:
        shards.append(_shard(current, resources.prices))
    return shards


def _shard(parts: Mapping[str, list[object]], prices: SageMakerPriceBook) -> SageMakerResources:
    return SageMakerResources(
        variants=tuple(p for p in parts["variants"] if isinstance(p, EndpointVariant)),
        notebooks=tuple(p for p in parts["notebooks"] if isinstance(p, NotebookInstance)),
        training=tuple(p for p in parts["training"] if isinstance(p, TrainingFamily)),
        prices=prices,
    )


def analyze_sagemaker(
    resources: SageMakerResources, usage: SageMakerUsage, catalog: Catalog, policy: Policy, now: datetime
) -> list[Recommendation]:
    """One recommendation per endpoint variant, notebook instance and training family."""
    return [
        *analyze_variants(resources.variants, usage.variants, catalog, resources.prices, policy, now),
        *analyze_notebooks(resources.notebooks, usage.notebooks, catalog, resources.prices, policy, now),
        *analyze_training(resources.training, usage.training, catalog, resources.prices, policy, now),
    ]


def kind_label(kind: ResourceKind) -> str:
    return RESOURCES[kind].label
