"""Use-case: analyse hosts into recommendations.

Per region: what covers each host on the bill (reservations, plans), one recommendation per host, then the
fleet-level steps that look at hosts together: the hosts of one placement group (their advice is the group's), a
team's hosts (consolidation), and the nodes of one node group,
NodePool, capacity provider, compute environment or Auto Scaling group (one recommendation for their owner).

The CLI analyses a region as its usage arrives (`analyze_region`, `analyze_into`): each host is analysed as soon as its
summary is made and its advice put in an `AdviceStore` (a temporary file for `analyze --output json`, memory
otherwise), with only what consolidation reads of the summary (`for_the_fleet`), and the fleet-level steps then run
one group at a time on the members they take back, so memory grows neither with the region's series nor with its
advice. A collection shard analyses the summaries it has stored (`analyze_hosts`, each step over the shard at once);
both give the same advice for the same hosts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

from rightsizer.domain.analyzer import analyze_fleet, analyze_instance
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import Commitments, HostCover, coverage
from rightsizer.domain.consolidation import GroupKey, consolidate, consolidation_key
from rightsizer.domain.guards import Gap
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.node_groups.grouping import group_nodes, node_group_of
from rightsizer.domain.placement import group_level, placement_key
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.services.collect import (
    Reference,
    RegionSources,
    read_region,
    read_sagemaker,
    usage_summaries,
    usage_warnings,
)
from rightsizer.services.ports import AdviceStore, Progress, Window
from rightsizer.settings import PriceMode


def analyze_hosts(
    instances: Sequence[Instance],
    usage: Mapping[str, UsageSummary],
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    now: datetime,
    covers: Mapping[str, HostCover],
    gaps: tuple[Gap, ...] = (),
) -> list[Recommendation]:
    """One recommendation per host, then consolidation across these hosts (a whole region, or one shard), then one
    recommendation per owner of a group of nodes (its nodes' own advice then points at it). `gaps`: the region's (or
    shard's) sources that could not be read, whose one clicks are held back (domain/guards.py)."""
    recommendations = analyze_fleet(instances, usage, catalog, prices, policy, now, covers, gaps)
    return across_hosts(recommendations, instances, usage, catalog, prices, policy, covers)


def across_hosts(
    recommendations: Sequence[Recommendation],
    instances: Sequence[Instance],
    usage: Mapping[str, UsageSummary],
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    covers: Mapping[str, HostCover],
) -> list[Recommendation]:
    """The steps that look at hosts together, after each host has its own recommendation: placement groups, then
    consolidation, then node groups. `usage` may hold each host's summary `for_the_fleet`."""
    recommendations = group_level(recommendations, instances)
    consolidated = consolidate(recommendations, instances, usage, catalog, policy, covers)
    return group_nodes(consolidated, instances, catalog, prices, policy, covers)


# The summary's hour-by-hour and day-by-day profiles (its fields of many numbers, `tuple[float | None, ...]`): read by
# the host's own analysis, never by the steps across hosts.
_NO_PROFILES: dict[str, Any] = {
    field.name: () for field in fields(UsageSummary) if field.type == "tuple[float | None, ...]"
}


def for_the_fleet(summary: UsageSummary) -> UsageSummary:
    """What the steps across hosts read of a host's summary: its kind of data, its units' figures and the scalars,
    without the profiles (a few thousand numbers per host) that only its own analysis reads."""
    return replace(summary, **_NO_PROFILES)


def analyze_as_read(
    instances: Sequence[Instance],
    summaries: Iterable[UsageSummary],
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    now: datetime,
    covers: Mapping[str, HostCover],
    gaps: tuple[Gap, ...] = (),
) -> list[Recommendation]:
    """`analyze_hosts`, as the summaries arrive: each host is analysed when its summary is made and keeps only what
    the steps across hosts read (`analyze_into`, held in memory). The same recommendations, in the same order (the
    instances', then the node groups')."""
    held = HeldAdvice()
    analyze_into(held, instances, summaries, catalog, prices, policy, now, covers, gaps)
    return held.in_order()


class HeldAdvice:
    """An `AdviceStore` in memory, for a fleet that fits (`analyze_as_read`)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str, str], tuple[Recommendation, UsageSummary | None, int]] = {}

    def put(self, rec: Recommendation, summary: UsageSummary | None = None, *, order: int | None = None) -> None:
        key = (rec.account_id, rec.region, rec.instance_id)
        before = self._kept.get(key)
        if order is None:
            order = before[2] if before is not None else len(self._kept)
        self._kept[key] = (rec, summary, order)

    def taken(self, account_id: str, region: str, resource_id: str) -> tuple[Recommendation, UsageSummary | None]:
        rec, summary, _ = self._kept[(account_id, region, resource_id)]
        return rec, summary

    def in_order(self) -> list[Recommendation]:
        return [rec for rec, _, _ in sorted(self._kept.values(), key=lambda kept: kept[2])]

    def ranked(self) -> Iterator[Recommendation]:
        from rightsizer.services.report import savings_key

        for rec, _, _ in sorted(self._kept.values(), key=lambda kept: (savings_key(kept[0]), kept[2])):
            yield rec

    def __len__(self) -> int:
        return len(self._kept)


def analyze_into(
    store: AdviceStore,
    instances: Sequence[Instance],
    summaries: Iterable[UsageSummary],
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    now: datetime,
    covers: Mapping[str, HostCover],
    gaps: tuple[Gap, ...] = (),
) -> None:
    """`analyze_as_read` for a fleet larger than memory: each host's recommendation goes into `store` as soon as it is
    made (with what consolidation reads of its summary, where consolidation may pack the host), and the steps across
    hosts then run one group at a time on the members they take back. Memory holds the groups' members, not the
    fleet's advice. The store ends up with the same recommendations as `analyze_as_read` returns, in the same order
    (`AdviceStore.put`'s `order`: after what the store held)."""
    first = len(store)
    by_id = {instance.instance_id: instance for instance in instances}
    position = {instance.instance_id: first + n for n, instance in enumerate(instances)}
    placements: dict[tuple[str, str, str], list[str]] = {}
    consolidations: dict[GroupKey, list[str]] = {}
    owned: dict[tuple[str, str, str], list[str]] = {}

    def advise(instance: Instance, summary: UsageSummary | None) -> None:
        iid = instance.instance_id
        rec = analyze_instance(instance, summary, catalog, prices, policy, now, covers.get(iid), gaps)
        kept = for_the_fleet(summary) if summary is not None else None
        packed = consolidation_key(rec, instance, kept)
        store.put(rec, kept if packed is not None else None, order=position[iid])
        placed, grouped = placement_key(rec, instance), node_group_of(rec, instance)
        if placed is not None:
            placements.setdefault(placed, []).append(iid)
        if packed is not None:
            consolidations.setdefault(packed, []).append(iid)
        if grouped is not None:
            owned.setdefault(grouped[0], []).append(iid)

    seen: set[str] = set()
    for summary in summaries:
        advise(by_id[summary.instance_id], summary)
        seen.add(summary.instance_id)
    for instance in instances:
        if instance.instance_id not in seen:
            advise(instance, None)

    def taken(ids: Sequence[str]) -> tuple[list[Recommendation], dict[str, UsageSummary], list[Instance]]:
        """A group's members in the instances' order (the order `across_hosts` sees them in), as the store has them."""
        ordered = sorted(ids, key=position.__getitem__)
        members = [by_id[iid] for iid in ordered]
        recs, usage = [], {}
        for member in members:
            rec, summary = store.taken(member.account_id, member.region, member.instance_id)
            recs.append(rec)
            if summary is not None:
                usage[member.instance_id] = summary
        return recs, usage, members

    for ids in placements.values():
        recs, _, members = taken(ids)
        for rec in group_level(recs, members):
            store.put(rec)
    for ids in consolidations.values():
        recs, usage, members = taken(ids)
        for rec in consolidate(recs, members, usage, catalog, policy, covers):
            store.put(rec)
    after = first + len(instances)  # the groups' own recommendations come after every host, in their order
    for ids in sorted(owned.values(), key=lambda ids: min(position[iid] for iid in ids)):
        recs, _, members = taken(ids)
        for rec in group_nodes(recs, members, catalog, prices, policy, covers):
            if rec.instance_id in by_id:
                store.put(rec)
            else:
                store.put(rec, order=after)
                after += 1


@dataclass(frozen=True)
class RegionAdvice:
    """One region of one account, read and analysed: its advice, what was read to give it, and the warnings."""

    account_id: str
    region: str
    window: Window
    instances: tuple[Instance, ...]
    catalog: Catalog
    prices: PriceBook
    commitments: Commitments
    recommendations: tuple[Recommendation, ...]
    warnings: tuple[str, ...] = ()


def analyze_region(
    account_id: str,
    region: str,
    sources: RegionSources,
    reference: Reference,
    price_mode: PriceMode,
    now: datetime,
    lookback_days: int,
    policy: Policy,
    progress: Progress | None = None,
    store: AdviceStore | None = None,
) -> RegionAdvice:
    """The CLI's region: inventory and context, then each host analysed as its usage arrives (the region's EC2 hosts and
    their node groups), then its SageMaker resources. With a `store`, the advice goes there (`analyze_into`) and the
    region's `recommendations` are empty."""
    instances, context = read_region(account_id, region, sources, reference, price_mode, now, lookback_days, progress)
    covers = coverage(instances, context.commitments, context.prices.on_demand)
    summaries = usage_summaries(instances, context, sources.usage)
    args = (instances, summaries, context.catalog, context.prices, policy, now, covers, context.gaps)
    hosts: list[Recommendation] = []
    if store is None:
        hosts = analyze_as_read(*args)
    else:
        analyze_into(store, *args)
    warnings = [*context.warnings, *usage_warnings(context, sources.usage)]
    sagemaker = read_sagemaker(context, sources, reference, price_mode)
    if sagemaker is not None:
        from rightsizer.services.sagemaker import analyze_region_sagemaker

        resources = analyze_region_sagemaker(sagemaker, context.catalog, policy, now)
        if store is None:
            hosts += resources
        else:
            for rec in resources:
                store.put(rec, order=len(store))
        warnings += sagemaker.warnings
    return RegionAdvice(
        account_id=account_id,
        region=region,
        window=context.window,
        instances=tuple(instances),
        catalog=context.catalog,
        prices=context.prices,
        commitments=context.commitments,
        recommendations=tuple(hosts),
        warnings=tuple(warnings),
    )
