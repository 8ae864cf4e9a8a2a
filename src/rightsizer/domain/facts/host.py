"""What every rule can read about a host: the host, its usage (if any), the catalog, prices and policy, and the views
derived from them once (its spec, its cost, its part-time share)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import HostCover
from rightsizer.domain.guards import Gap
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook


@dataclass(frozen=True)
class Facts:
    instance: Instance
    usage: UsageSummary | None
    catalog: Catalog
    prices: PriceBook
    policy: Policy
    cover: HostCover | None = None  # the reservation or plan that pays for the host, if any
    gaps: tuple[Gap, ...] = ()  # sources of its region (or shard) that could not be read (domain/guards.py)

    @property
    def all_gaps(self) -> tuple[Gap, ...]:
        """What could not be read about this host: its region's and shard's sources, and its own series."""
        return (*self.gaps, *(self.usage.gaps if self.usage is not None else ()))

    @cached_property
    def spec(self) -> InstanceTypeSpec | None:
        return self.catalog.spec(self.instance.instance_type)

    @cached_property
    def cost_now(self) -> Decimal | None:
        """What the host really costs per month (its Spot price for Spot, nothing when stopped)."""
        return self.prices.monthly_cost_of(self.instance)

    @property
    def price_note(self) -> str:
        instance = self.instance
        if instance.tenancy == "host":
            # Nothing to look up: EC2 bills the Dedicated Host by the hour, whatever runs on it.
            return (
                f"{instance.instance_type} runs on a Dedicated Host, which EC2 bills per host, not per instance: a "
                "stop or a smaller type saves nothing until the host is released (or takes other instances)"
            )
        return f"no on-demand price for {instance.instance_type} in {instance.region} ({self.prices.source})"

    @cached_property
    def list_cost(self) -> Decimal | None:
        """The type's on-demand monthly price: what targets' on-demand prices are compared with."""
        return self.prices.monthly(self.instance.instance_type)

    @cached_property
    def running_share(self) -> float:
        """Share of the time the host runs: 1 unless it ran less than the policy's part-time share of the recent
        time (it stops itself; see usage.running_share). Rules price on 730 hours; the analyzer then prices the
        advice on this share."""
        share = self.usage.running_share if self.usage is not None else None
        if share is None or share >= self.policy.part_time_share or share <= 0:
            return 1.0
        return share
