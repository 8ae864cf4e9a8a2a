"""Prices of one region, as Decimal USD per hour. Where they came from travels with them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from rightsizer.domain.models import Instance, monthly


@dataclass(frozen=True)
class PriceBook:
    region: str
    on_demand: Mapping[str, Decimal]
    source: str  # e.g. "AWS Price List API" or "bundled snapshot (as of 2026-07-20)"
    spot: Mapping[str, Decimal] = field(default_factory=dict)

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
