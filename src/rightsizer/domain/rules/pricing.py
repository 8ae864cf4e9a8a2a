"""Adjustments to what the advice says it saves: a platform billed above Linux, a type without a price, and the
savings that match the bill where a reservation, Reserved Instance or Savings Plan pays for the host.
"""

from __future__ import annotations

from dataclasses import replace

from rightsizer.domain.commitments import CapacityKind, Change, net_savings
from rightsizer.domain.facts.host import Facts
from rightsizer.domain.models import Finding
from rightsizer.domain.platforms import LINUX
from rightsizer.domain.rules.draft import Draft


def billed_platform(facts: Facts, draft: Draft) -> Draft:
    """A host that is not billed as Linux is priced at its own platform's rates, targets too: said once."""
    billing = facts.instance.billing
    if billing.key == LINUX.key or facts.list_cost is None:
        return draft
    return draft.noting(f"priced as {billing.description}, host and targets alike ({facts.prices.source})")


def unpriced(facts: Facts, draft: Draft) -> Draft:
    if facts.list_cost is not None or facts.spec is None:
        return draft
    note = facts.price_note
    if any(note in reason for reason in draft.reasons):  # `not_comparable` already said it
        return draft
    return draft.noting(note, first=True)


def reservations(facts: Facts, draft: Draft) -> Draft:
    """Savings that match the bill: a host a capacity reservation, Capacity Block, Reserved Instance or Savings Plan
    pays for saves what the bill drops by, not its list price (domain/commitments.py has the arithmetic)."""
    cover, cost_now, instance = facts.cover, facts.cost_now, facts.instance
    if cover is None or not cover.covered or cost_now is None or instance.lifecycle == "spot":
        return draft
    cost_after = draft.cost_after if draft.cost_after is not None else cost_now
    in_block = cover.capacity is not None and cover.capacity.kind is CapacityKind.CAPACITY_BLOCK
    if cost_after == cost_now and not in_block:
        return draft  # no change, nothing to price
    schedule = draft.finding is Finding.SCHEDULABLE and cost_now > 0
    change = Change(
        cost_now=cost_now,
        cost_after=cost_after,
        target_type=draft.target.instance_type if draft.target else None,
        running_share=float(cost_after / cost_now) if schedule else 0.0,
    )
    net = net_savings(instance, cover, change)
    if net is None:
        return draft
    return replace(draft.noting(net.reason), net_savings=net.amount)
