"""Notebook instances: the facts and rules that judge one notebook instance, and their recommendations.

Pure: no I/O (see the package's docstring for what SageMaker publishes and how it is read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Evidence, Recommendation
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.money import CENT, ZERO, monthly
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker.advice import (
    Draft,
    SageMakerPriceBook,
    build_recommendation,
    history_confidence,
    hourly_price,
    insufficient_data,
    opted_out_by_tag,
)
from rightsizer.domain.sagemaker.prices import SageMakerPrices
from rightsizer.domain.sagemaker.usage import NotebookUsage
from rightsizer.domain.sagemaker_models import NotebookInstance, SageMakerDetail, ec2_type
from rightsizer.domain.usage.series import SILENT_AGENT_SECONDS
from rightsizer.domain.wording import pct, plural, usd

# A notebook InService this long without a stop is "left running" (a weekend is ~2.5 days).
LEFT_RUNNING_DAYS = 2.0
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
        return hourly_price(self.prices, self.notebook.instance_type)

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
    return opted_out_by_tag(facts.notebook.tags, facts.policy)


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
        return insufficient_data(
            f"{_running_text(facts)}; its GPU metrics cover {usage.observed_days:.1f} days ({usage.coverage:.0%} of "
            f"the window): at least {policy.min_days:g} days are needed"
        )
    quiet = (usage.busiest_p99 or 0.0) < policy.idle_util_pct and (usage.busiest_peak or 0.0) < policy.activity_peak_pct
    last = usage.last_sample
    if quiet and (last is None or (facts.now - last).total_seconds() > SILENT_AGENT_SECONDS):
        # The agent went silent while the notebook runs on (a kernel restart, the agent stopped): what its GPUs did
        # since is not measured, and silence is not quiet.
        ended = f"end on {last:%Y-%m-%d %H:%M} UTC" if last is not None else "have no 5-minute averages"
        return insufficient_data(
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
            confidence=history_confidence(usage.observed_days, usage.coverage, policy),
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
        confidence=history_confidence(usage.observed_days, usage.coverage, policy),
        advice="stop it (StopNotebookInstance keeps its ML storage volume); "
        + AUTO_STOP.split(", or stop", maxsplit=1)[0],
    )


def notebook_unknown_type(facts: NotebookFacts) -> Draft | None:
    if facts.spec is not None:
        return None
    return insufficient_data(f"{_running_text(facts)}; {facts.notebook.instance_type} is not in the instance catalog")


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
    return insufficient_data(
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
            build_recommendation(
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
