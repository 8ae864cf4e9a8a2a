"""What a group's nodes cost after its change: each node priced as it is billed (platform, Spot) and on the hours it
runs, net of the reservations and Savings Plans that cover it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import Change, HostCover, net_savings
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.money import CENT, ZERO
from rightsizer.domain.node_groups.nodes import Node
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.sizing.targets import host_prices


@dataclass(frozen=True)
class Costs:
    """The prices a group's nodes are costed at, and the commitments that cover them (by instance id)."""

    catalog: Catalog
    prices: PriceBook
    covers: Mapping[str, HostCover]

    def cost_as(self, node: Node, instance_type: str) -> Decimal | None:
        """The node's monthly cost were it `instance_type`: billed as it is (platform, Spot) and on the hours it
        runs (its own cost scaled by the two types' rates). None: a rate is not known (no saving is claimed)."""
        cost = node.rec.monthly_cost
        if cost is None:
            return None
        if instance_type == node.instance.instance_type:
            return cost
        if node.instance.lifecycle == "spot":
            now, then = self.prices.spot.get(node.instance.instance_type), self.prices.spot.get(instance_type)
        else:
            book = host_prices(self.catalog, self.prices, node.instance.billing)
            now, then = book.hourly(node.instance.instance_type), book.hourly(instance_type)
        if not now or then is None:
            return None
        return (cost * then / now).quantize(CENT)

    def after(self, node: Node, target: InstanceTypeSpec | None) -> Decimal | None:
        """The node's monthly cost after the group's change: nothing for an idle node the group sheds, the target
        type's cost where it is cheaper (a node whose type costs less already keeps it), else as now."""
        if not node.instance.is_running or node.opted_out or not node.judged:
            return node.rec.monthly_cost
        if node.idle:
            return ZERO if node.rec.monthly_cost is not None else None
        if target is None:
            return node.rec.monthly_cost
        after = self.cost_as(node, target.instance_type)
        now = node.rec.monthly_cost
        if after is None or now is None or after >= now:
            return now
        return after

    def net(self, node: Node, after: Decimal | None, target: InstanceTypeSpec | None) -> tuple[Decimal | None, str]:
        now = node.rec.monthly_cost
        if now is None or after is None:
            return None, ""
        cover = self.covers.get(node.iid)
        if cover is None or after == now:
            return now - after, ""
        moved = target.instance_type if target is not None and after > 0 else None
        net = net_savings(node.instance, cover, Change(cost_now=now, cost_after=after, target_type=moved))
        if net is None:
            return now - after, ""
        return net.amount, f"{node.iid}: {net.reason}"
