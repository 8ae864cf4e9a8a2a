"""The weekly price refresh (services/prices.py): every region's types, on every platform, cached as priced."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from rightsizer.domain.platforms import LINUX, Billing, Platform
from rightsizer.services.ports import SourceUnavailable
from rightsizer.services.prices import refresh_prices

NOW = datetime(2026, 12, 5, 6, 0, tzinfo=UTC)
TYPES = {"us-east-1": {"g5.xlarge", "p4d.24xlarge"}, "eu-west-1": {"g5.xlarge"}}


class PriceList:
    """The OnDemandPrices port: Linux has every type, the other platforms only g5.xlarge."""

    source = "fake price list"

    def __init__(self, failing: str = "") -> None:
        self.asked: list[tuple[str, tuple[str, ...], Platform | None]] = []
        self._failing = failing

    def hourly(self, region: str, instance_types: Sequence[str], billing: Billing = LINUX) -> dict[str, Decimal]:
        self.asked.append((region, tuple(instance_types), billing.platform))
        if region == self._failing:
            raise SourceUnavailable(f"{region}: throttled")
        priced = instance_types if billing.platform is Platform.LINUX else [t for t in instance_types if "g5" in t]
        return {instance_type: Decimal("1.006") for instance_type in priced}


class Cache:
    def __init__(self) -> None:
        self.kept: dict[tuple[str, Platform | None], tuple[Mapping[str, Decimal], str, datetime]] = {}

    def put_prices(
        self, region: str, prices: Mapping[str, Decimal], source: str, now: datetime, billing: Billing
    ) -> None:
        self.kept[(region, billing.platform)] = (prices, source, now)


def test_every_region_and_platform_is_priced_and_cached_with_its_source() -> None:
    api, cache = PriceList(), Cache()

    cached = refresh_prices(["us-east-1", "eu-west-1"], TYPES.__getitem__, api, cache, NOW)

    assert cached == {"us-east-1": 2, "eu-west-1": 1}  # Linux prices per region
    assert set(cache.kept) == {(region, platform) for region in TYPES for platform in Platform}
    prices, source, when = cache.kept[("us-east-1", Platform.WINDOWS)]
    assert prices == {"g5.xlarge": Decimal("1.006")} and source == "fake price list" and when == NOW
    # Types asked in a stable order, once per platform.
    assert api.asked[0] == ("us-east-1", ("g5.xlarge", "p4d.24xlarge"), Platform.LINUX)
    assert len(api.asked) == len(TYPES) * len(Platform)


def test_a_price_list_that_fails_stops_the_refresh_and_keeps_what_was_cached_before_it() -> None:
    api, cache = PriceList(failing="eu-west-1"), Cache()

    with pytest.raises(SourceUnavailable, match="throttled"):
        refresh_prices(["us-east-1", "eu-west-1"], TYPES.__getitem__, api, cache, NOW)

    # The Lambda fails (and is retried); the regions done before stay cached, nothing is written half.
    assert {region for region, _ in cache.kept} == {"us-east-1"}
