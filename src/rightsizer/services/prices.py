"""The weekly price refresh: cache the on-demand price of every accelerated type in each configured region, per
platform, so the day's collection reads prices from the table rather than from the Price List API."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from datetime import datetime

from rightsizer.domain.platforms import PLATFORMS, Billing, Platform
from rightsizer.services.ports import OnDemandPrices, PriceCache


def refresh_prices(
    regions: Iterable[str],
    accelerated_types: Callable[[str], Collection[str]],
    api: OnDemandPrices,
    cache: PriceCache,
    now: datetime,
) -> dict[str, int]:
    """Each region's accelerated types (what the region offers, and the legacy types the caller adds) priced on every
    platform on shared tenancy: a region's Windows or RHEL hosts are priced at their own rates. Returns how many Linux
    prices each region has (the other platforms are cached alongside)."""
    cached: dict[str, int] = {}
    for region in regions:
        types = sorted(set(accelerated_types(region)))
        for platform in Platform:
            billing = Billing(platform, PLATFORMS[platform].label)
            prices = api.hourly(region, types, billing)
            cache.put_prices(region, prices, api.source, now, billing)
            if platform is Platform.LINUX:
                cached[region] = len(prices)
    return cached
