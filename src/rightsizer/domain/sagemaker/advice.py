"""What every SageMaker resource kind's rules share: SageMaker's own prices, the draft a rule assembles, and the
recommendation it becomes.

Pure: no I/O (see the package's docstring for what SageMaker publishes and how it is read).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Evidence, Recommendation, advice_id
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker.prices import SageMakerPrices
from rightsizer.domain.sagemaker_models import SageMakerDetail
from rightsizer.domain.schedule import WeeklyPattern
from rightsizer.domain.schedule_plan import busy_runs

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


def hourly_price(prices: SageMakerPrices | None, instance_type: str) -> Decimal | None:
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


def insufficient_data(*reasons: str) -> Draft:
    return Draft(Finding.INSUFFICIENT_DATA, reasons, confidence=Confidence.LOW)


def history_confidence(observed_days: float, coverage: float, policy: Policy) -> Confidence:
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
        return True, None  # the instance workflow's endpoint update (domain/actions/update_endpoint.py)
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
    """A SageMaker resource's advice id (models.advice_id): its target count is part of the advice."""
    return advice_id(
        account_id, region, resource, instance_type, draft.finding, draft.target_type or "", str(draft.target_count)
    )


def build_recommendation(
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


def opted_out_by_tag(tags: Mapping[str, str], policy: Policy) -> Draft | None:
    tag = policy.opt_out_tag
    if tag not in tags:
        return None
    value = tags[tag]
    return Draft(Finding.EXCLUDED, (f"opted out by tag {tag}" + (f"={value!r}" if value else ""),))


def as_capable(catalog: Catalog, target: InstanceTypeSpec, current: InstanceTypeSpec) -> bool:
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
