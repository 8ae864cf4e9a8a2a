"""Use-case: analyse collected regions into recommendations.

Per region: what covers each host on the bill (reservations, plans), one recommendation per host, then the
fleet-level step that looks at a team's hosts together (consolidation).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rightsizer.domain.analyzer import analyze_fleet
from rightsizer.domain.commitments import coverage
from rightsizer.domain.consolidation import consolidate
from rightsizer.domain.models import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.services.collect import RegionData


def analyze_region(data: RegionData, policy: Policy, now: datetime) -> list[Recommendation]:
    covers = coverage(data.instances, data.commitments, data.prices.on_demand)
    usage = dict(data.usage)
    recommendations = analyze_fleet(data.instances, usage, data.catalog, data.prices, policy, now, covers)
    return consolidate(recommendations, data.instances, usage, data.catalog, policy, covers)


def analyze_regions(regions: Iterable[RegionData], policy: Policy, now: datetime) -> list[Recommendation]:
    return [rec for data in regions for rec in analyze_region(data, policy, now)]
