"""Use-case: analyse collected regions into recommendations."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rightsizer.domain.analyzer import analyze_fleet
from rightsizer.domain.models import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.services.collect import RegionData


def analyze_regions(regions: Iterable[RegionData], policy: Policy, now: datetime) -> list[Recommendation]:
    recommendations: list[Recommendation] = []
    for data in regions:
        recommendations.extend(analyze_fleet(data.instances, dict(data.usage), data.catalog, data.prices, policy, now))
    return recommendations
