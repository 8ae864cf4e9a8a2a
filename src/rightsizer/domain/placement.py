"""Hosts of one placement group work together: their advice is the group's, never one member's.

A cluster placement group packs the nodes of a training job (NCCL over EFA between them) or of a tightly coupled
service close together; a data-parallel job runs every node at the pace of the slowest and expects them alike.
Resizing one member alone leaves a group of mixed hosts and, for a training job, a slower or failing run. So each
member's own resize is advice only (`placement_group_member`, domain/rules/held_back.py), and this pass, which sees
the members of a region together, says what the group as a whole could do: move every member to the one type that
carries each of them, or keep its type when their needs differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal

from rightsizer.domain.analyzer import recommendation_id
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.money import ZERO
from rightsizer.domain.wording import usd


def group_level(recommendations: Sequence[Recommendation], instances: Sequence[Instance]) -> list[Recommendation]:
    """`recommendations` of one region (or shard), with the resize advice of placement groups' members said at the
    group's level: one type for all, or the group's type kept where their needs differ."""
    by_id: Mapping[str, Instance] = {i.instance_id: i for i in instances}
    groups: dict[tuple[str, str, str], list[Recommendation]] = {}
    for rec in recommendations:
        key = placement_key(rec, by_id.get(rec.instance_id))
        if key is not None:
            groups.setdefault(key, []).append(rec)
    replaced: dict[str, Recommendation] = {}
    for (_, _, name), members in groups.items():
        if len(members) < 2 or not any(rec.target_type for rec in members):
            continue
        for rec in _together(name, members, by_id):
            replaced[rec.instance_id] = rec
    return [replaced.get(rec.instance_id, rec) for rec in recommendations]


def placement_key(rec: Recommendation, instance: Instance | None) -> tuple[str, str, str] | None:
    """The placement group whose members `group_level` advises together (None: the host runs in none)."""
    if instance is None or not instance.placement_group or not instance.is_running:
        return None
    return (rec.account_id, rec.region, instance.placement_group)


def _together(name: str, members: Sequence[Recommendation], instances: Mapping[str, Instance]) -> list[Recommendation]:
    hosts = ", ".join(sorted(rec.instance_id for rec in members))
    targets = {rec.target_type for rec in members}
    if len(targets) == 1:
        (target,) = targets
        saving = sum((rec.monthly_savings or ZERO for rec in members), ZERO)
        note = (
            f"placement group '{name}': all {len(members)} hosts ({hosts}) carry their work on {target}; resize them "
            f"together, in one maintenance window, saving {usd(saving)}/month for the group"
        )
        return [replace(rec, reasons=(note, *rec.reasons)) for rec in members]
    needs = "; ".join(f"{rec.instance_id}: {rec.target_type or f'its {rec.instance_type}'}" for rec in members)
    note = (
        f"placement group '{name}': its {len(members)} hosts work together and need different types ({needs}), so the "
        "group keeps its type: no member is resized alone; review the group's sizing as a whole"
    )
    kept: list[Recommendation] = []
    for rec in members:
        if rec.target_type is None:
            kept.append(replace(rec, reasons=(*rec.reasons, note)))
            continue
        kept.append(
            replace(
                rec,
                target_type=None,
                monthly_cost_after=rec.monthly_cost,
                monthly_savings_net=Decimal("0.00") if rec.monthly_cost is not None else None,
                actionable=False,
                held_back=f"placement group '{name}': its hosts need different types",
                reasons=(note, *rec.reasons),
                recommendation_id=recommendation_id(instances[rec.instance_id], rec.finding, None),
            )
        )
    return kept
