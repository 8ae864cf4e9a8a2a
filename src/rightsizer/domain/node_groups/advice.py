"""A group's one recommendation: its verdict with the group's cost before and after (net of reservations and plans),
the reasons (the nodes one by one, what could not be judged, what the owner edits), and evidence from its busiest
node."""

from __future__ import annotations

from decimal import Decimal

from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Evidence, Recommendation, advice_id
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.money import ZERO
from rightsizer.domain.node_groups.edits import idle_advice, publish_text, type_advice
from rightsizer.domain.node_groups.group import Group
from rightsizer.domain.owners import Owner
from rightsizer.domain.resources import RESOURCES
from rightsizer.domain.wording import plural, usd

NODES_LISTED = 8  # nodes named one by one in the reasons; the rest are counted


def _nodes_text(group: Group) -> str:
    shown = [node.busy_text for node in group.running[:NODES_LISTED]]
    more = len(group.running) - NODES_LISTED
    tail = f"; and {plural(more, 'more node')}" if more > 0 else ""
    mix = "" if len(group.types) == 1 else " (types: " + ", ".join(f"{n} {t}" for t, n in group.types.items()) + ")"
    return f"nodes{mix}: " + "; ".join(shown) + tail


def recommend(group: Group) -> Recommendation:
    verdict = group.verdict()
    target = verdict.target
    first = group.nodes[0]
    costs = [n.rec.monthly_cost for n in group.running]
    cost = sum((c for c in costs if c is not None), ZERO) if any(c is not None for c in costs) else None
    unpriced = sum(1 for c in costs if c is None)
    savings: list[Decimal] = []
    nets: list[Decimal] = []
    net_reasons: list[str] = []
    after_total = ZERO
    if verdict.finding in (Finding.OVERPROVISIONED, Finding.IDLE, Finding.UNDERPROVISIONED):
        for node in group.running:
            after = group.costs.after(node, target)
            if node.rec.monthly_cost is None or after is None:
                continue
            after_total += after
            savings.append(node.rec.monthly_cost - after)
            net, why = group.costs.net(node, after, target)
            nets.append(net if net is not None else node.rec.monthly_cost - after)
            if why:
                net_reasons.append(why)
        cost_after = after_total if cost is not None else None
    else:
        cost_after = cost
    saved = cost - cost_after if cost is not None and cost_after is not None else None
    reasons = [verdict.lead + (f"; saves {usd(saved)}/month for the group" if saved else "")]
    reasons.append(_nodes_text(group))
    reasons.extend(verdict.notes)
    if group.unjudged and verdict.finding is not Finding.INSUFFICIENT_DATA:
        ids = ", ".join(n.iid for n in group.unjudged[:NODES_LISTED])
        reasons.append(
            f"{plural(len(group.unjudged), 'node')} could not be judged ({ids}): never counted idle; the advice "
            f"holds only if their work is like the others' (low confidence): {publish_text(group.owner)}"
        )
    opted = [n for n in group.running if n.opted_out]
    if opted and group.counted:
        reasons.append(f"{plural(len(opted), 'node')} carry the opt-out tag: not counted")
    if unpriced:
        reasons.append(f"{plural(unpriced, 'node')} have no price: their cost is not in the group's")
    if net_reasons:
        shown = "; ".join(net_reasons[:3]) + (f"; and {len(net_reasons) - 3} more" if len(net_reasons) > 3 else "")
        reasons.append(f"net of reservations and plans: {shown}")
    if group.idle and verdict.finding in (Finding.OVERPROVISIONED, Finding.IDLE):
        reasons.append(idle_advice(group.kind, group.owner.name))
    if target is not None and verdict.finding in (Finding.OVERPROVISIONED, Finding.UNDERPROVISIONED):
        reasons.append(type_advice(group.kind, group.owner.name, target))
    reasons.append(
        f"advice only: the bot never changes {RESOURCES[group.kind].owner_edits}; scaling it down or "
        "replacing its nodes evicts their pods, and the bot sees EC2 and CloudWatch, not the pods, so it cannot "
        "check where they would go or whether their PodDisruptionBudgets allow it"
    )
    zones = {n.instance.availability_zone for n in group.running or group.nodes}
    teams = {n.rec.team for n in group.nodes}
    groups = {n.instance.asg_name for n in group.nodes}
    spot = all(n.instance.lifecycle == "spot" for n in group.nodes)
    finding = verdict.finding
    return Recommendation(
        recommendation_id=_group_id(first.instance, group.owner, group.node_type, finding, target),
        generated_at=first.rec.generated_at,
        account_id=first.instance.account_id,
        region=first.instance.region,
        instance_id=group.owner.resource_id,
        instance_name=group.owner.name,
        instance_type=group.node_type,
        availability_zone=zones.pop() if len(zones) == 1 else "",
        state="running" if group.running else "stopped",
        finding=finding,
        target_type=target.instance_type if target is not None else None,
        monthly_cost=cost,
        monthly_cost_after=cost_after,
        confidence=verdict.confidence,
        actionable=False,
        reasons=tuple(reasons),
        evidence=_evidence(group),
        asg_name=groups.pop() if len(groups) == 1 else None,
        lookback_days=first.rec.lookback_days,
        lifecycle="spot" if spot else "on-demand",
        held_back=f"advice only: {RESOURCES[group.kind].label} changes are made by its owner",
        team=teams.pop() if len(teams) == 1 else "",
        monthly_savings_net=sum(nets, ZERO) if nets else (saved if saved is not None else None),
        managed=None,
        kind=group.kind,
        tags=_shared_tags(group),
    )


def _shared_tags(group: Group) -> dict[str, str]:
    """The tags every node carries, with the same value: the group's, for showback and filters."""
    shared = dict(group.nodes[0].instance.tags) if group.nodes else {}
    for node in group.nodes[1:]:
        shared = {key: value for key, value in shared.items() if node.instance.tags.get(key) == value}
    return shared


def _evidence(group: Group) -> Evidence:
    judged = group.judged
    if not judged:
        return Evidence(total_units=group.spec.compute_units if group.spec else 0)
    busiest = group.busiest()
    evs = [n.rec.evidence for n in judged]

    def top(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return max(known) if known else None

    return Evidence(
        observed_days=min(ev.observed_days for ev in evs),
        coverage=min(ev.coverage for ev in evs),
        busy_units=busiest.rec.evidence.busy_units if busiest else 0,
        total_units=group.spec.compute_units if group.spec else max(ev.total_units for ev in evs),
        accelerator_p95=busiest.rec.evidence.accelerator_p95 if busiest else top([ev.accelerator_p95 for ev in evs]),
        accelerator_peak=top([ev.accelerator_peak for ev in evs]),
        accelerator_burst=top([ev.accelerator_burst for ev in evs]),
        memory_peak_mib=top([ev.memory_peak_mib for ev in evs]),
        memory_per_unit_mib=group.spec.memory_per_unit_mib if group.spec else None,
        memory_reserved=any(ev.memory_reserved for ev in evs),
        cpu_p95=top([ev.cpu_p95 for ev in evs]),
        network_peak_gbps=top([ev.network_peak_gbps for ev in evs]),
        network_p95_gbps=top([ev.network_p95_gbps for ev in evs]),
        host_memory_peak_pct=top([ev.host_memory_peak_pct for ev in evs]),
        daily_accelerator_mean=busiest.rec.evidence.daily_accelerator_mean if busiest else (),
        daily_busiest_unit=busiest.rec.evidence.daily_busiest_unit if busiest else (),
    )


def _group_id(
    instance: Instance, owner: Owner, node_type: str, finding: Finding, target: InstanceTypeSpec | None
) -> str:
    """Stable across re-runs, like a host's (models.advice_id): the same advice for the same group keeps the same id."""
    return advice_id(
        instance.account_id,
        instance.region,
        owner.resource_id,
        node_type,
        finding,
        target.instance_type if target else "",
    )
