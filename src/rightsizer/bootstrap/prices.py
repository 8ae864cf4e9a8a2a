"""The Prices function's wiring: the weekly price refresh (services/prices.py) over the Price List API, each region's
EC2 and the table."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rightsizer.adapters import bundled
from rightsizer.adapters.aws.ec2 import Ec2Fleet
from rightsizer.adapters.aws.pricing import PriceListApi
from rightsizer.bootstrap import Wiring
from rightsizer.bootstrap.regions import PRICING_ENDPOINT_REGION
from rightsizer.services import prices


def refresh_prices(wiring: Wiring, now: datetime) -> dict[str, Any]:
    """Weekly: the price refresh (services/prices.py) over the Price List API, each region's EC2 and the table."""
    session, settings = wiring.session, wiring.settings
    api = PriceListApi(session.client("pricing", PRICING_ENDPOINT_REGION))
    account_id = session.account_id(settings.home_region)

    def accelerated_types(region: str) -> set[str]:
        fleet = Ec2Fleet(session.client("ec2", region), account_id, region, bundled.accelerator_table())
        return {spec.instance_type for spec in fleet.accelerated_specs()} | set(bundled.legacy_specs())

    cached = prices.refresh_prices(settings.regions, accelerated_types, api, wiring.store, now)
    return {"regions": cached, "get_products_calls": api.calls}
