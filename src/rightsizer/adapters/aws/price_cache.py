"""The OnDemandPrices port over the weekly Price List API cache kept in DynamoDB."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Protocol

from rightsizer.domain.platforms import LINUX, Billing
from rightsizer.services.ports import SourceUnavailable

# Prices refresh weekly; two missed refreshes in a row mean the cache can no longer be trusted.
MAX_AGE = timedelta(days=15)


class PriceCacheStore(Protocol):
    def prices(self, region: str, billing: Billing = LINUX) -> tuple[dict[str, Decimal], str, datetime] | None: ...


class CachedPrices:
    source = "AWS Price List API (weekly cache)"

    def __init__(self, store: PriceCacheStore, now: datetime) -> None:
        self._store = store
        self._now = now

    def hourly(self, region: str, instance_types: Sequence[str], billing: Billing = LINUX) -> dict[str, Decimal]:
        cached = self._store.prices(region, billing)
        if cached is None:
            raise SourceUnavailable(
                f"no cached Price List API prices for {billing.description} in {region} yet (the prices function "
                "runs weekly)"
            )
        prices, _, fetched_at = cached
        if self._now - fetched_at > MAX_AGE:
            raise SourceUnavailable(f"cached Price List API prices for {region} are from {fetched_at:%Y-%m-%d}")
        wanted = set(instance_types)
        return {instance_type: price for instance_type, price in prices.items() if instance_type in wanted}
