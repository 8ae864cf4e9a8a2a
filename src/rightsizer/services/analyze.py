"""Use-case: analyse collected regions into recommendations.

Per region: what covers each host on the bill (reservations, plans), one recommendation per host, then the
fleet-level steps that look at hosts together: the hosts of one placement group (their advice is the group's), a
team's hosts (consolidation), and the nodes of one node group,
NodePool, capacity provider, compute environment or Auto Scaling group (one recommendation for their owner).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from rightsizer.domain.analyzer import analyze_fleet
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import HostCover, coverage
from rightsizer.domain.consolidation import consolidate
from rightsizer.domain.guards import Gap
from rightsizer.domain.models import Instance, Recommendation, UsageSummary
from rightsizer.domain.node_groups import group_nodes
from rightsizer.domain.placement import group_level
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.services.collect import RegionData


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
    recommendations = group_level(
        analyze_fleet(instances, usage, catalog, prices, policy, now, covers, gaps), instances
    )
    consolidated = consolidate(recommendations, instances, usage, catalog, policy, covers)
    return group_nodes(consolidated, instances, catalog, prices, policy, covers)


def analyze_region(data: RegionData, policy: Policy, now: datetime) -> list[Recommendation]:
    """The region's EC2 hosts (and their node groups), then its SageMaker resources."""
    covers = coverage(data.instances, data.commitments, data.prices.on_demand)
    hosts = analyze_hosts(data.instances, data.usage, data.catalog, data.prices, policy, now, covers, data.gaps)
    if data.sagemaker is None:
        return hosts
    from rightsizer.services.sagemaker import analyze_region_sagemaker

    return [*hosts, *analyze_region_sagemaker(data.sagemaker, data.catalog, policy, now)]


def analyze_regions(regions: Iterable[RegionData], policy: Policy, now: datetime) -> list[Recommendation]:
    return [rec for data in regions for rec in analyze_region(data, policy, now)]
