"""Use-case: analyse hosts into recommendations.

Per region: what covers each host on the bill (reservations, plans), one recommendation per host, then the
fleet-level steps that look at hosts together: the hosts of one placement group (their advice is the group's), a
team's hosts (consolidation), and the nodes of one node group,
NodePool, capacity provider, compute environment or Auto Scaling group (one recommendation for their owner).

The CLI analyses a region as its usage arrives (`analyze_region`): each host is analysed as soon as its summary is
made, and of the summary only what the fleet-level steps read is kept (`for_the_fleet`), so memory does not grow with
the region's series. A collection shard analyses the summaries it has stored (`analyze_hosts`); both give the same
advice for the same hosts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

from rightsizer.domain.analyzer import analyze_fleet, analyze_instance
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import Commitments, HostCover, coverage
from rightsizer.domain.consolidation import consolidate
from rightsizer.domain.guards import Gap
from rightsizer.domain.models import Instance, Recommendation, UsageSummary
from rightsizer.domain.node_groups import group_nodes
from rightsizer.domain.placement import group_level
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
from rightsizer.services.ports import Progress, Window
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
    the steps across hosts read. The same recommendations, in the same order (the instances')."""
    by_id = {instance.instance_id: instance for instance in instances}
    advice: dict[str, Recommendation] = {}
    kept: dict[str, UsageSummary] = {}
    for summary in summaries:
        iid = summary.instance_id
        advice[iid] = analyze_instance(by_id[iid], summary, catalog, prices, policy, now, covers.get(iid), gaps)
        kept[iid] = for_the_fleet(summary)
    recommendations = [
        advice.get(instance.instance_id)
        or analyze_instance(instance, None, catalog, prices, policy, now, covers.get(instance.instance_id), gaps)
        for instance in instances
    ]
    return across_hosts(recommendations, instances, kept, catalog, prices, policy, covers)


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
) -> RegionAdvice:
    """The CLI's region: inventory and context, then each host analysed as its usage arrives (the region's EC2 hosts and
    their node groups), then its SageMaker resources."""
    instances, context = read_region(account_id, region, sources, reference, price_mode, now, lookback_days, progress)
    covers = coverage(instances, context.commitments, context.prices.on_demand)
    summaries = usage_summaries(instances, context, sources.usage)
    hosts = analyze_as_read(instances, summaries, context.catalog, context.prices, policy, now, covers, context.gaps)
    warnings = [*context.warnings, *usage_warnings(context, sources.usage)]
    sagemaker = read_sagemaker(context, sources, reference, price_mode)
    if sagemaker is not None:
        from rightsizer.services.sagemaker import analyze_region_sagemaker

        hosts += analyze_region_sagemaker(sagemaker, context.catalog, policy, now)
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
