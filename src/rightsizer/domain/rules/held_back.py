"""Adjustments that hold a one click back or name its risk: a source a guard could not read, a type no longer offered,
a resize that wipes the instance store, a paid upgrade on work gone quiet, a placement group's member.
"""

from __future__ import annotations

from dataclasses import replace

from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.facts.host import Facts
from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.findings import advised_action
from rightsizer.domain.guards import GUARDS, Source
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.rules.draft import Draft
from rightsizer.domain.rules.stopping import instance_store_risk


def unread_sources(facts: Facts, draft: Draft) -> Draft:
    """A one click whose guard could not read its source is held back, with the reason (domain/guards.py): the
    advice stands on the evidence that remains. CloudTrail's gap is judged per host, by `resized_in_window`."""
    action = advised_action(draft.finding, draft.target.instance_type if draft.target else None)
    if not draft.actionable or action is None:
        return draft
    relied_on = ACTIONS[action].guarded_by - {Source.RESIZES}
    gap = next((gap for gap in facts.all_gaps if gap.source in relied_on), None)
    if gap is None:
        return draft
    guard = GUARDS[gap.source]
    reason = guard.reason.format(error=gap.error, type=facts.instance.instance_type)
    return replace(draft.noting(reason), actionable=False, held_back=guard.held_back)


def no_longer_offered(facts: Facts, draft: Draft) -> Draft:
    instance = facts.instance
    if facts.spec is None or facts.catalog.is_offered(instance.instance_type) is not False:
        return draft
    where = f"{instance.instance_type} is no longer offered in {instance.region}"
    gone = f"{where}: once stopped, this host may not get its type back"
    if draft.finding is Finding.IDLE:
        # Nobody uses it: stopping it is still the advice, with the risk in plain sight (and in the confirmation).
        return draft.risking(
            f"{gone}; nothing uses it, so stopping it is still the advice",
            f"{instance.instance_type} is no longer offered in {instance.region}: once stopped, it may not start again",
        )
    draft = draft.noting(f"{gone}, so no one-click resize or schedule is offered (migrate in a maintenance window)")
    if not draft.actionable and draft.target is None:
        return draft
    held_back = f"{instance.instance_type} is no longer offered here: migrate in a maintenance window"
    capped = draft.capped(Confidence.MEDIUM) if draft.target is not None else draft
    return replace(capped, actionable=False, held_back=held_back)


def resize_stops_the_host(facts: Facts, draft: Draft) -> Draft:
    """A resize stops the host to change its type: whatever its instance store holds is gone after it."""
    if draft.target is None or facts.spec is None:
        return draft
    return instance_store_risk(facts.spec, draft)


def paid_upgrade(facts: Facts, draft: Draft) -> Draft:
    """Advice that costs more than today is never high confidence, whatever the evidence; and never one click when
    the work that called for it has been quiet for the last day (it may have ended)."""
    cost = facts.cost_now
    if cost is None or draft.cost_after is None or draft.cost_after <= cost:
        return draft
    draft = draft.capped(Confidence.MEDIUM)
    if not (draft.actionable and _recently_quiet(facts)):
        return draft
    return replace(
        draft.noting(
            "the accelerators have been quiet for the last day: confirm the work still runs before paying more"
        ),
        actionable=False,
        held_back="quiet for the last day: confirm the work still runs",
    )


def _recently_quiet(facts: Facts) -> bool:
    if facts.spec is None or facts.usage is None or facts.usage.accelerator_data is AcceleratorData.NONE:
        return False
    return Measured(facts, facts.spec, facts.usage).recently_quiet


def placement_group_member(facts: Facts, draft: Draft) -> Draft:
    """A host in a placement group works with the group's other hosts (a training job's nodes): one member is never
    resized alone, so its resize is advice at the group's level (domain/placement.py says what the group could do)."""
    group = facts.instance.placement_group
    if not group or draft.target is None:
        return draft
    draft = draft.noting(
        f"in placement group '{group}', whose hosts run together (a training job's nodes, NCCL over the network "
        "between them): a member is never resized alone; resize the group's hosts together, in one window"
    )
    if not draft.actionable:
        return draft
    return replace(draft, actionable=False, held_back=f"in placement group '{group}': resize the group together")
