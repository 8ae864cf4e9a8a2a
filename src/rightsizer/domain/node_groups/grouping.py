"""The fleet-level pass: each owned node points at its group, and each group (account, region, owner) gets one
recommendation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from rightsizer.domain.analyzer import recommendation_id
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import HostCover
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.money import ZERO
from rightsizer.domain.node_groups.advice import recommend
from rightsizer.domain.node_groups.costs import Costs
from rightsizer.domain.node_groups.group import Group
from rightsizer.domain.node_groups.nodes import Node
from rightsizer.domain.owners import Owner
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.resources import ResourceKind


def group_nodes(
    recommendations: Sequence[Recommendation],
    instances: Sequence[Instance],
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    covers: Mapping[str, HostCover] | None = None,
) -> list[Recommendation]:
    """`recommendations` of one region (or shard) with each owned node pointing at its group, followed by one
    recommendation per group (account, region, owner)."""
    by_id = {instance.instance_id: instance for instance in instances}
    groups: dict[tuple[str, str, str], list[Node]] = {}
    owners: dict[tuple[str, str, str], Owner] = {}
    for rec in recommendations:
        instance = by_id.get(rec.instance_id)
        grouped = node_group_of(rec, instance)
        if instance is None or grouped is None:
            continue
        key, owner = grouped
        owners[key] = owner
        node = Node(rec, instance, catalog.spec(instance.instance_type), policy.opt_out_tag in instance.tags)
        groups.setdefault(key, []).append(node)
    pointed: dict[str, Recommendation] = {}
    advice: list[Recommendation] = []
    costs = Costs(catalog, prices, covers or {})
    for key, nodes in groups.items():
        group = Group(owners[key], tuple(sorted(nodes, key=lambda n: n.iid)), costs)
        rec = recommend(group)
        advice.append(rec)
        for node in nodes:
            pointed[node.iid] = _pointing(node, group.owner, rec)
    return [*(pointed.get(rec.instance_id, rec) for rec in recommendations), *advice]


def node_group_of(rec: Recommendation, instance: Instance | None) -> tuple[tuple[str, str, str], Owner] | None:
    """The node group `group_nodes` advises the host in (its key: account, region, owner) and its owner; None: a host of
    its own, or an owner whose nodes are advised one by one (EMR, Ray, a fleet, ...)."""
    owner = instance.owner if instance is not None else None
    if owner is None or owner.kind is None or rec.kind is not ResourceKind.EC2:
        return None
    return (rec.account_id, rec.region, owner.resource_id), owner


def _pointing(node: Node, owner: Owner, group: Recommendation) -> Recommendation:
    """A node's own advice once its group has one: it names the owner and the group's advice, and saves nothing in
    the totals (the group's recommendation counts the node's share)."""
    rec = node.rec
    lead = (
        f"a node of {owner.description} ({owner.evidence}): advised as a group in {group.instance_id} "
        f"({group.finding.value}); its saving is counted there, not here"
    )
    cost = rec.monthly_cost
    return replace(
        rec,
        reasons=(lead, *rec.reasons),
        target_type=None,
        monthly_cost_after=cost,
        monthly_savings_net=ZERO if cost is not None else None,
        actionable=False,
        held_back=f"advised as a group in {group.instance_id}",
        recommendation_id=recommendation_id(node.instance, rec.finding, None),
    )
