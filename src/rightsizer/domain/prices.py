"""Prices of one region, as Decimal USD per hour. Where they came from travels with them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.money import monthly
from rightsizer.domain.platforms import LINUX, Billing


@dataclass(frozen=True)
class PriceBook:
    """On-demand prices of one region for Linux on shared tenancy (`on_demand`), other platforms' in `variants`
    (by `Billing.key`: "windows", "rhel", "linux@dedicated", ...), and Linux Spot prices."""

    region: str
    on_demand: Mapping[str, Decimal]
    source: str  # e.g. "AWS Price List API" or "bundled snapshot (as of 2026-07-20)"
    spot: Mapping[str, Decimal] = field(default_factory=dict)
    variants: Mapping[str, Mapping[str, Decimal]] = field(default_factory=dict)
    variant_sources: Mapping[str, str] = field(default_factory=dict)  # where a variant came from, when not `source`

    def hourly(self, instance_type: str) -> Decimal | None:
        return self.on_demand.get(instance_type)

    def monthly(self, instance_type: str) -> Decimal | None:
        hourly = self.hourly(instance_type)
        return None if hourly is None else monthly(hourly)

    def monthly_cost_of(self, instance: Instance) -> Decimal | None:
        """What the host costs per month as it runs today (compute only; a stopped host costs nothing)."""
        if not instance.is_running:
            return Decimal("0.00")
        if instance.lifecycle == "spot" and instance.instance_type in self.spot:
            return monthly(self.spot[instance.instance_type])
        return self.monthly(instance.instance_type)

    def billed_as(self, billing: Billing) -> PriceBook:
        """The prices a host billed this way pays, for its own type and every target: a book whose `on_demand`
        are that platform's rates (empty where none are known: never Linux's for another platform). Spot prices
        are Linux's, so only a Linux book keeps them."""
        key = billing.key
        if key == LINUX.key:
            return self
        prices = self.variants.get(key, {}) if key else {}
        what = billing.description
        origin = self.variant_sources.get(key, self.source) if key else self.source
        source = f"{origin}, {what} rates" if prices else f"no {what} prices in the {origin}"
        return PriceBook(region=self.region, on_demand=prices, source=source)
