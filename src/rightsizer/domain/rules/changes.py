"""Adjustments for what changed in the window: the work changed regime, the host was resized, the agent went silent.
The advice says what and when, with less certainty, and a one click waits for a window of its own.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from rightsizer.domain.facts.host import Facts
from rightsizer.domain.facts.regime import regime_text
from rightsizer.domain.guards import GUARDS, Gap, Source
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.money import CENT
from rightsizer.domain.models.usage import RegimeKind
from rightsizer.domain.rules.draft import Draft
from rightsizer.domain.wording import usd


def changed_regime(facts: Facts, draft: Draft) -> Draft:
    """Advice judged on the time since the work changed says what changed and when (and, for a host gone idle,
    what it has cost since); the earlier regime may come back, so never high confidence."""
    usage = facts.usage
    if usage is None or usage.regime is None or draft.finding in (Finding.EXCLUDED, Finding.INSUFFICIENT_DATA):
        return draft  # not analysed, or the gate already said what changed
    draft = draft.noting(regime_text(usage, facts.spec.unit_name if facts.spec else "GPU"), first=True)
    hourly = facts.prices.hourly(facts.instance.instance_type)
    if draft.finding is Finding.IDLE and hourly is not None:
        hours = (usage.window_end - usage.regime.since).total_seconds() / 3600
        spent = (hourly * Decimal(str(hours)) * Decimal(str(facts.running_share))).quantize(CENT)
        draft = draft.noting(f"it has cost {usd(spent)} since then, doing nothing")
    return draft.capped(Confidence.MEDIUM)


def changed_regime_resize(facts: Facts, draft: Draft) -> Draft:
    """A downsize sized on a load that stepped down would not carry the earlier one should it return: a person
    confirms it will not (a stop of a host gone quiet stays one click: a start undoes it)."""
    usage = facts.usage
    if usage is None or usage.regime is None or usage.regime.kind is not RegimeKind.STEPPED_DOWN:
        return draft
    if draft.target is None or not draft.actionable:
        return draft
    since = f"{usage.regime.since:%Y-%m-%d}"
    return replace(draft, actionable=False, held_back=f"the load stepped down on {since}: confirm it stays down")


def resized_in_window(facts: Facts, draft: Draft) -> Draft:
    """A host resized inside the window is judged on the samples of its current type only, with less certainty,
    and never gets one click from them: the change needs a full window of its own."""
    usage = facts.usage
    if usage is None or usage.type_change is None or draft.finding is Finding.EXCLUDED:
        return draft
    change = usage.type_change
    days = (usage.window_end - change.since).total_seconds() / 86400
    if change.assumed:  # only possible: CloudTrail could not be read and the host started inside the window
        gap = next((g for g in facts.all_gaps if g.source is Source.RESIZES), Gap(Source.RESIZES, "not read"))
        guard = GUARDS[Source.RESIZES]
        started = f"it started on {change.since:%Y-%m-%d %H:%M} UTC ({change.source}); "
        draft = draft.noting(started + guard.reason.format(error=gap.error), first=True).capped(Confidence.MEDIUM)
        return replace(draft, actionable=False, held_back=guard.held_back) if draft.actionable else draft
    earlier = f" from {', '.join(change.previous_types)}" if change.previous_types else ""
    draft = draft.noting(
        f"resized{earlier} to {facts.instance.instance_type} by {change.since:%Y-%m-%d %H:%M} UTC ({change.source}): "
        f"only the {days:.1f} days since are judged; load measured on the old type is not used",
        first=True,
    ).capped(Confidence.MEDIUM)
    if not draft.actionable:
        return draft
    return replace(draft, actionable=False, held_back=f"resized {change.since:%Y-%m-%d}: wait for a full window")


def agent_went_silent(facts: Facts, draft: Draft) -> Draft:
    """Accelerator series that stopped while the host ran on (the agent stopped publishing): the advice rests on the
    time before, what the accelerators did since is unknown, so it is at most medium and not one click until the
    agent reports again. Missing metrics are never read as idleness."""
    usage, spec = facts.usage, facts.spec
    if usage is None or spec is None or usage.accelerator_silent_since is None or draft.finding is Finding.EXCLUDED:
        return draft
    since, unit = usage.accelerator_silent_since, spec.unit_name
    hours = (usage.window_end - since).total_seconds() / 3600
    draft = draft.noting(
        f"the {unit} metrics stopped on {since:%Y-%m-%d %H:%M} UTC while the host kept running ({hours:.0f} hours "
        f"since): the CloudWatch agent or its nvidia_gpu section stopped publishing, so what the {unit}s did since is "
        "unknown and this advice rests on the time before; restart the agent (amazon-cloudwatch-agent-ctl -a status)",
        first=True,
    ).capped(Confidence.MEDIUM)
    if not draft.actionable:
        return draft
    return replace(draft, actionable=False, held_back=f"{unit} metrics stopped {since:%Y-%m-%d}: restart the agent")
