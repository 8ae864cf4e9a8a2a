"""What the bill really drops by: Reserved Instances, Savings Plans, capacity reservations and Capacity Blocks.

List-price savings assume every hour is paid on demand. Most GPU spend is not:
- a host in an On-Demand Capacity Reservation (ODCR) keeps the reservation billed whether the host uses it or not,
  so stopping or downsizing it saves nothing until the reservation is cancelled or reduced;
- a host in a Capacity Block was paid up front for the block's duration: nothing is saved until the block ends;
- a Reserved Instance is paid whether used or not: a change saves money only where usage of its family (regional
  RIs, size-flexible by normalized units) or type and zone (zonal RIs) stays above what is reserved;
- a Savings Plan prices covered usage at the plan's rate: a change saves at that rate, not at the list price.

`coverage` decides, for one region of one account, what covers each host; `net_savings` prices a change on a
covered host. Pure functions: the collectors read the commitments (adapters/aws/commitments.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.money import CENT, HOURS_PER_MONTH, ZERO
from rightsizer.domain.wording import usd

# EC2's normalization factors for instance size flexibility of regional Linux Reserved Instances.
NORMALIZATION = {
    "nano": 0.25,
    "micro": 0.5,
    "small": 1,
    "medium": 2,
    "large": 4,
    "xlarge": 8,
    **{f"{n}xlarge": 8 * n for n in (2, 3, 4, 6, 8, 9, 10, 12, 16, 18, 24, 32, 48)},
}


def normalized_units(instance_type: str) -> float | None:
    """The type's normalization factor (g5.12xlarge: 96); None for sizes without one (metal)."""
    family, _, size = instance_type.partition(".")
    factor = NORMALIZATION.get(size)
    return None if not family or factor is None else float(factor)


class CapacityKind(StrEnum):
    ODCR = "capacity_reservation"  # On-Demand Capacity Reservation: billed at the on-demand rate, used or not
    CAPACITY_BLOCK = "capacity_block"  # Capacity Blocks for ML: paid up front for a fixed span


@dataclass(frozen=True)
class ReservedInstances:
    """An active RI purchase (DescribeReservedInstances, state active, Linux/UNIX)."""

    reservation_id: str
    instance_type: str
    count: int
    availability_zone: str | None = None  # None: a regional RI (size-flexible within its family)
    end: datetime | None = None

    @property
    def family(self) -> str:
        return self.instance_type.split(".", 1)[0]


@dataclass(frozen=True)
class CapacityReservation:
    """An active ODCR or Capacity Block (DescribeCapacityReservations)."""

    reservation_id: str
    instance_type: str
    availability_zone: str
    total: int
    available: int
    kind: CapacityKind = CapacityKind.ODCR
    end: datetime | None = None
    open_matching: bool = True  # InstanceMatchCriteria "open": matching instances use it without naming it

    @property
    def used(self) -> int:
        return max(0, self.total - self.available)


@dataclass(frozen=True)
class SavingsPlan:
    """An active Savings Plan and its rates for one region's instance types (Linux, shared tenancy)."""

    plan_id: str
    plan_type: str  # "Compute" | "EC2Instance" (SageMaker plans do not cover EC2)
    hourly_commitment: Decimal
    rates: Mapping[str, Decimal] = field(default_factory=dict)  # instance type -> USD per hour under the plan
    family: str | None = None  # EC2 Instance Savings Plans: one family...
    region: str | None = None  # ...in one region
    end: datetime | None = None

    def applies_to(self, instance_type: str, region: str) -> bool:
        if self.plan_type == "EC2Instance":
            same_family = self.family is None or instance_type.split(".", 1)[0] == self.family
            same_region = self.region is None or self.region == region
            return same_family and same_region and instance_type in self.rates
        return instance_type in self.rates


@dataclass(frozen=True)
class Commitments:
    """What one account has committed to in one region. `read` False: they could not be read (net = list)."""

    reserved_instances: tuple[ReservedInstances, ...] = ()
    capacity_reservations: tuple[CapacityReservation, ...] = ()
    savings_plans: tuple[SavingsPlan, ...] = ()
    read: bool = False
    # The kinds that could not be read, and why ("Reserved Instances could not be read (AccessDenied ...)"): what
    # they cover is priced at list, and no resize is one click (domain/guards.py).
    unread: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReservedPool:
    """The RIs that match a host: how many units (regional: normalized units of the family; zonal: instances of
    the type in the zone) are reserved, and how many run."""

    reserved: float
    running: float
    size_flexible: bool
    ids: tuple[str, ...]
    end: datetime | None
    # Of this host's units, those the reservation does not cover: the pool's reserved units are counted against its
    # hosts oldest first, so that the hosts' shares add up to what the pool pays on demand (each host claiming all of
    # the pool's uncovered units would count the same saving once per host). None: an item from before (the
    # pool's uncovered units, capped at the host's).
    host_uncovered: float | None = None

    def uncovered(self, running: float) -> float:
        return max(0.0, running - self.reserved)


@dataclass(frozen=True)
class HostCover:
    """What covers one running host, as far as the bill is concerned."""

    capacity: CapacityReservation | None = None
    reserved: ReservedPool | None = None
    plan: SavingsPlan | None = None
    plan_share: float = 0.0  # the share of the host's hours the plan's commitment covers (0..1)

    @property
    def covered(self) -> bool:
        return self.capacity is not None or self.reserved is not None or self.plan is not None


@dataclass(frozen=True)
class CoverRef:
    """A HostCover by reference: what a shard stores for each host. Coverage is decided over a whole region
    (reservations float across its hosts) when the region is planned; each shard resolves its hosts' covers
    against the region's commitments, stored once, instead of repeating a plan's rates for every host."""

    capacity_id: str | None = None
    reserved: ReservedPool | None = None
    plan_id: str | None = None
    plan_share: float = 0.0

    @classmethod
    def of(cls, cover: HostCover) -> CoverRef:
        return cls(
            capacity_id=cover.capacity.reservation_id if cover.capacity else None,
            reserved=cover.reserved,
            plan_id=cover.plan.plan_id if cover.plan else None,
            plan_share=cover.plan_share,
        )


def resolve_covers(refs: Mapping[str, CoverRef], commitments: Commitments) -> dict[str, HostCover]:
    """Each host's cover, from its reference and the region's commitments."""
    capacity = {r.reservation_id: r for r in commitments.capacity_reservations}
    plans = {p.plan_id: p for p in commitments.savings_plans}
    return {
        instance_id: HostCover(
            capacity=capacity.get(ref.capacity_id) if ref.capacity_id else None,
            reserved=ref.reserved,
            plan=plans.get(ref.plan_id) if ref.plan_id else None,
            plan_share=ref.plan_share,
        )
        for instance_id, ref in refs.items()
    }


def coverage(
    instances: Iterable[Instance], commitments: Commitments, on_demand: Mapping[str, Decimal]
) -> dict[str, HostCover]:
    """What covers each running on-demand host of one region (hosts nothing covers are left out).
    `on_demand`: hourly list prices, to apply Savings Plans to the biggest discounts first, as AWS does."""
    if not commitments.read:
        return {}
    running = sorted(
        (i for i in instances if i.is_running and i.lifecycle in ("on-demand", "capacity-block")),
        key=lambda i: (i.launch_time, i.instance_id),
    )
    covers: dict[str, HostCover] = {}
    in_capacity = _capacity_members(running, commitments.capacity_reservations)
    # The RIs and plan rates read are Linux on shared tenancy's (adapters/aws/commitments.py): they say nothing of a
    # Windows or RHEL host's hours, nor count them.
    linux = [i for i in running if i.billing.key == "linux"]
    linux_ids = {i.instance_id for i in linux}
    for instance in running:
        capacity = in_capacity.get(instance.instance_id)
        pool = (
            _reserved_pool(instance, linux, commitments.reserved_instances)
            if instance.instance_id in linux_ids
            else None
        )
        if capacity is not None or pool is not None:
            covers[instance.instance_id] = HostCover(capacity=capacity, reserved=pool)
    uncovered = [i for i in linux if i.instance_id not in covers]
    shares = _plan_shares(uncovered, commitments.savings_plans, on_demand)
    for instance_id, (plan, share) in shares.items():
        covers[instance_id] = HostCover(plan=plan, plan_share=share)
    return covers


def _capacity_members(
    running: Sequence[Instance], reservations: Sequence[CapacityReservation]
) -> dict[str, CapacityReservation]:
    """Hosts EC2 names as running in a reservation; then, for open ODCRs, as many matching hosts as it uses."""
    by_id = {r.reservation_id: r for r in reservations}
    members = {i.instance_id: by_id[i.capacity_reservation_id] for i in running if i.capacity_reservation_id in by_id}
    for reservation in reservations:
        if not reservation.open_matching or reservation.kind is CapacityKind.CAPACITY_BLOCK:
            continue
        named = sum(1 for r in members.values() if r.reservation_id == reservation.reservation_id)
        for instance in running:
            if named >= reservation.used:
                break
            matches = (instance.instance_type, instance.availability_zone) == (
                reservation.instance_type,
                reservation.availability_zone,
            )
            if matches and instance.instance_id not in members and instance.capacity_reservation_id is None:
                members[instance.instance_id] = reservation
                named += 1
    return members


def _reserved_pool(
    instance: Instance, running: Sequence[Instance], reserved: Sequence[ReservedInstances]
) -> ReservedPool | None:
    zonal = [
        r
        for r in reserved
        if r.availability_zone == instance.availability_zone and r.instance_type == instance.instance_type
    ]
    if zonal:  # zonal RIs are not size-flexible: instances of the type in the zone count
        members = [
            i
            for i in running
            if (i.instance_type, i.availability_zone) == (instance.instance_type, instance.availability_zone)
        ]
        reserved_count = float(sum(r.count for r in zonal))
        return ReservedPool(
            reserved=reserved_count,
            running=float(len(members)),
            size_flexible=False,
            ids=tuple(r.reservation_id for r in zonal),
            end=min((r.end for r in zonal if r.end), default=None),
            host_uncovered=_host_uncovered(instance, members, reserved_count, lambda _: 1.0),
        )
    family = instance.instance_type.split(".", 1)[0]
    regional = [r for r in reserved if r.availability_zone is None and r.family == family]
    units = normalized_units(instance.instance_type)
    if not regional or units is None:
        return None
    reserved_units = sum(r.count * (normalized_units(r.instance_type) or 0.0) for r in regional)
    members = [i for i in running if i.instance_type.split(".", 1)[0] == family]
    running_units = sum(normalized_units(i.instance_type) or 0.0 for i in members)
    return ReservedPool(
        reserved=reserved_units,
        running=running_units,
        size_flexible=True,
        ids=tuple(r.reservation_id for r in regional),
        end=min((r.end for r in regional if r.end), default=None),
        host_uncovered=_host_uncovered(
            instance, members, reserved_units, lambda i: normalized_units(i.instance_type) or 0.0
        ),
    )


def _host_uncovered(
    instance: Instance, members: Sequence[Instance], reserved: float, units_of: Callable[[Instance], float]
) -> float:
    """The host's units the pool's reservation leaves on demand, its reserved units counted against the members in
    their order (oldest first: `coverage` sorts the running hosts by launch time)."""
    before = 0.0
    for member in members:
        if member.instance_id == instance.instance_id:
            break
        before += units_of(member)
    units = units_of(instance)
    return units - min(units, max(0.0, reserved - before))


def _plan_shares(
    running: Sequence[Instance], plans: Sequence[SavingsPlan], on_demand: Mapping[str, Decimal]
) -> dict[str, tuple[SavingsPlan, float]]:
    """Each plan's commitment spread over the usage it applies to, biggest discount first (as AWS applies it)."""
    shares: dict[str, tuple[SavingsPlan, float]] = {}
    for plan in sorted(plans, key=lambda p: (p.plan_type != "EC2Instance", p.plan_id)):  # EC2 Instance SPs first
        left = plan.hourly_commitment
        eligible = [i for i in running if i.instance_id not in shares and plan.applies_to(i.instance_type, i.region)]
        eligible.sort(key=lambda i: (-_discount(plan, i.instance_type, on_demand), i.instance_id))
        for instance in eligible:
            rate = plan.rates[instance.instance_type]
            if left <= 0 or rate <= 0:
                break
            share = float(min(Decimal(1), left / rate))
            shares[instance.instance_id] = (plan, share)
            left -= rate * Decimal(str(share))
    return shares


def _discount(plan: SavingsPlan, instance_type: str, on_demand: Mapping[str, Decimal]) -> float:
    """The share of the list price the plan saves on this type (0 when either price is unknown)."""
    price, rate = on_demand.get(instance_type), plan.rates.get(instance_type)
    if not price or rate is None:
        return 0.0
    return float(1 - rate / price)


# ---------------------------------------------------------------------------------------------
# Pricing a change


@dataclass(frozen=True)
class Change:
    """A recommended change to one host, priced at list (on-demand) prices."""

    cost_now: Decimal  # monthly, on demand
    cost_after: Decimal  # monthly, on demand, after the change (0 for a stop)
    target_type: str | None = None  # a resize
    running_share: float = 0.0  # a schedule: the share of the week the host still runs (0 for a stop)

    @property
    def list_savings(self) -> Decimal:
        return self.cost_now - self.cost_after


@dataclass(frozen=True)
class NetSavings:
    amount: Decimal
    reason: str


def net_savings(
    instance: Instance, cover: HostCover, change: Change, target_cost: Mapping[str, Decimal] | None = None
) -> NetSavings | None:
    """What `change` saves on the bill given `cover`; None when nothing covers the host. `target_cost`: monthly
    on-demand prices, for a resize target's plan rate."""
    if cover.capacity is not None:
        return _in_capacity(instance, cover.capacity, change)
    if cover.reserved is not None:
        return _under_reserved_instances(instance, cover.reserved, change)
    if cover.plan is not None:
        return _under_savings_plan(instance, cover.plan, cover.plan_share, change)
    return None


def _until(end: datetime | None) -> str:
    return f" until {end:%Y-%m-%d}" if end is not None else ""


def _in_capacity(instance: Instance, reservation: CapacityReservation, change: Change) -> NetSavings:
    # A resize moves the host out of the reservation: its new type is paid on top of the reservation.
    extra = change.cost_after if change.target_type else ZERO
    net = (ZERO - extra).quantize(CENT)
    if reservation.kind is CapacityKind.CAPACITY_BLOCK:
        reason = (
            f"runs in Capacity Block {reservation.reservation_id}, paid up front{_until(reservation.end)}: "
            f"net savings {usd(net)}/month (list price {usd(change.list_savings)}) until the block ends"
        )
        return NetSavings(net, reason)
    reason = (
        f"runs in On-Demand Capacity Reservation {reservation.reservation_id} ({reservation.used} of "
        f"{reservation.total} {reservation.instance_type} in use), billed whether used or not: net savings "
        f"{usd(net)}/month until the reservation is reduced or cancelled (then {usd(change.list_savings)}/month)"
    )
    return NetSavings(net, reason)


def _family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def _under_reserved_instances(instance: Instance, pool: ReservedPool, change: Change) -> NetSavings:
    """Only usage above the reservation is paid on demand, so a change saves what it takes off that part: the share
    of the host's units the reservation does not cover saves at list price; the covered share strands the RI (a
    resize within the family keeps using it, size flexibility; any other new type is paid on top)."""
    units = (normalized_units(instance.instance_type) if pool.size_flexible else 1.0) or 1.0
    uncovered = pool.host_uncovered if pool.host_uncovered is not None else pool.uncovered(pool.running)
    share = Decimal(str(min(1.0, uncovered / units)))
    stays = (
        bool(change.target_type)
        and pool.size_flexible
        and _family(change.target_type or "") == _family(instance.instance_type)
    )
    stranded = ZERO if stays or not change.target_type else ZERO - change.cost_after
    net = (share * change.list_savings + (1 - share) * stranded).quantize(CENT)
    if pool.size_flexible:
        units_text = f"{pool.reserved:g} normalized units reserved, {pool.running:g} running"
        what = f"{_family(instance.instance_type)} family ({units_text})"
    else:
        where = f"{instance.instance_type} in {instance.availability_zone}"
        what = f"{where} ({pool.reserved:g} reserved, {pool.running:g} running)"
    ids = ", ".join(pool.ids)
    if share >= 1:
        reason = (
            f"Reserved Instances {ids} cover the {what}: usage above them is paid on demand, so the full saving counts"
            " (the reserved units are counted against the pool's hosts oldest first; this one is above them)"
        )
    else:
        reason = (
            f"covered by Reserved Instances {ids} for the {what}, paid whether used or not{_until(pool.end)}: "
            f"the change strands the reservation, net savings {usd(net)}/month "
            f"(list price {usd(change.list_savings)}) until it ends or is exchanged"
        )
    return NetSavings(net, reason)


def _under_savings_plan(instance: Instance, plan: SavingsPlan, share: float, change: Change) -> NetSavings:
    rate = plan.rates[instance.instance_type]
    covered = Decimal(str(share))
    effective_now = (rate * HOURS_PER_MONTH * covered + change.cost_now * (1 - covered)).quantize(CENT)
    if change.target_type:
        target = change.target_type
        target_rate = plan.rates.get(target) if plan.applies_to(target, instance.region) else None
        effective_after = change.cost_after if target_rate is None else (target_rate * HOURS_PER_MONTH).quantize(CENT)
    else:
        effective_after = (effective_now * Decimal(str(change.running_share))).quantize(CENT)
    net = (effective_now - effective_after).quantize(CENT)
    kind = "Compute" if plan.plan_type != "EC2Instance" else f"EC2 Instance ({plan.family})"
    part = "" if share >= 1 else f" for {share:.0%} of its hours"
    reason = (
        f"covered{part} by {kind} Savings Plan {plan.plan_id} at ${rate}/hour instead of the list price: "
        f"net savings {usd(net)}/month at the plan's rate (list price {usd(change.list_savings)})"
    )
    return NetSavings(net, reason)
