"""Adjustments for hosts something else creates or prices (an Auto Scaling group, a node group, a fleet, a Spot
request): the finding is kept in words as `would_be`, the advice goes to the owner, never one click.
"""

from __future__ import annotations

from dataclasses import replace

from rightsizer.domain.facts.host import Facts
from rightsizer.domain.models import Finding
from rightsizer.domain.models.money import monthly
from rightsizer.domain.rules.draft import Draft


def launched_by_owner(facts: Facts, draft: Draft) -> Draft:
    """A host that an Auto Scaling group, a node group or autoscaler, a cluster or a fleet launches (its tags say
    which, domain/owners.py) is replaced or recycled by that owner when changed in place: the advice goes to the owner,
    never one click."""
    owner = facts.instance.owner
    if owner is None:
        return draft
    launcher = owner.launcher
    change = {Finding.IDLE: launcher.idle, Finding.SCHEDULABLE: launcher.schedulable}.get(
        draft.finding, launcher.resize
    )
    return _owned_elsewhere(draft, owner.membership, owner.named(change))


def spot_host(facts: Facts, draft: Draft) -> Draft:
    instance, prices = facts.instance, facts.prices
    if instance.lifecycle != "spot":
        return draft
    known = instance.instance_type in prices.spot
    rate = "its Spot price" if known else "the on-demand rate (no recent Spot price)"
    if draft.finding is Finding.EXCLUDED and instance.owner is not None:
        return draft.noting(f"a Spot instance (cost at {rate})")  # the owner's lead already says it all
    draft = _owned_elsewhere(draft, f"a Spot instance (cost at {rate})", "change the request or fleet that launches it")
    if not known:
        return replace(draft, cost_after=None)  # no Spot price: no saving is claimed at on-demand rates
    if draft.target is None:
        return draft
    # A resize's saving is only known at the target's Spot price; on-demand figures would mislead, and a
    # target that costs more at Spot prices is no saving at all.
    target_spot = prices.spot.get(draft.target.instance_type)
    target_cost = monthly(target_spot) if target_spot is not None else None
    if target_cost is not None and facts.cost_now is not None and target_cost >= facts.cost_now:
        return replace(draft, target=None, cost_after=None).noting(
            f"{draft.target.instance_type} costs as much or more at its Spot price: no saving"
        )
    return replace(draft, cost_after=target_cost)


def _owned_elsewhere(draft: Draft, who: str, change: str) -> Draft:
    """Advice for a host that something else creates: the finding is kept in words, never acted on."""
    if draft.finding in (Finding.EXCLUDED, Finding.INSUFFICIENT_DATA):
        return draft.noting(f"{who}: never resized in place", first=True)
    to = f" to {draft.target.instance_type}" if draft.target else ""
    lead = f"would be {draft.finding.value}{to}, but this is {who}; never resized in place"
    owned = replace(draft.noting(lead, first=True), finding=Finding.EXCLUDED, actionable=False, would_be=draft.finding)
    return replace(owned, advice=f"{change}{to}", held_back=change)
