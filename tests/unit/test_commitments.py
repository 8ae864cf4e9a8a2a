"""Savings that match the bill: the analyzer prices each change net of what already pays for the host (On-Demand
Capacity Reservations, Capacity Blocks, Reserved Instances, Savings Plans) and says so in a reason."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from rightsizer.domain.analyzer import analyze_fleet
from rightsizer.domain.commitments import (
    CapacityKind,
    CapacityReservation,
    Commitments,
    ReservedInstances,
    SavingsPlan,
    coverage,
    normalized_units,
)
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from tests.factories import NOW, device, idle_device, instance, usage
from tests.unit import catalog_fixture as fx
from tests.unit._builders import A10G_TOTAL_MIB, V100_TOTAL_MIB

END = datetime(2027, 3, 31, tzinfo=UTC)
IDLE_P3 = 8935.20  # p3.8xlarge at 12.24/h, stopped: the whole cost
RESIZE_G5 = (Decimal("4140.56"), Decimal("1787.04"))  # g5.12xlarge -> g5.8xlarge at list prices


def idle_p3(instance_id: str = "i-00000000000000001", **kwargs: object) -> tuple[Instance, UsageSummary]:
    host = instance("p3.8xlarge", instance_id, **kwargs)  # type: ignore[arg-type]
    return host, usage([idle_device(str(i), V100_TOTAL_MIB) for i in range(4)], instance_id=instance_id, cpu_p95=2.0)


def one_of_four(instance_id: str = "i-00000000000000002") -> tuple[Instance, UsageSummary]:
    """A g5.12xlarge using one of its GPUs: resized to a g5.8xlarge at list prices."""
    devices = [device("0", 60.0, 10_000.0, A10G_TOTAL_MIB), *(idle_device(str(i), A10G_TOTAL_MIB) for i in (1, 2, 3))]
    return instance("g5.12xlarge", instance_id), usage(devices, instance_id=instance_id, cpu_p95=20.0)


def analyze(hosts: list[tuple[Instance, UsageSummary]], commitments: Commitments) -> dict[str, Recommendation]:
    instances = [host for host, _ in hosts]
    book = fx.prices()
    covers = coverage(instances, commitments, book.on_demand)
    recs = analyze_fleet(instances, {h.instance_id: u for h, u in hosts}, fx.catalog(), book, Policy(), NOW, covers)
    return {rec.instance_id: rec for rec in recs}


def reason_with(rec: Recommendation, *fragments: str) -> bool:
    return any(all(f in reason for f in fragments) for reason in rec.reasons)


def test_without_commitments_net_savings_are_the_list_savings_and_nothing_is_said() -> None:
    host = idle_p3()
    (rec,) = analyze([host], Commitments(read=True)).values()

    assert rec.monthly_savings == rec.monthly_savings_net == Decimal(str(IDLE_P3))
    assert not reason_with(rec, "net savings")
    unread = analyze([host], Commitments()).values()  # could not be read: list price, as before
    assert [r.net_savings for r in unread] == [Decimal(str(IDLE_P3))]


# ------------------------------------------------------------------------------- On-Demand Capacity Reservations


def test_an_idle_host_in_a_capacity_reservation_saves_nothing_until_the_reservation_is_reduced() -> None:
    host = idle_p3()
    odcr = CapacityReservation("cr-0p3", "p3.8xlarge", "us-east-1a", total=1, available=0, end=None)

    (rec,) = analyze([host], Commitments(capacity_reservations=(odcr,), read=True)).values()

    assert rec.finding is Finding.IDLE
    assert rec.monthly_savings == Decimal("8935.20")
    assert rec.monthly_savings_net == Decimal("0.00")
    assert reason_with(
        rec,
        "On-Demand Capacity Reservation cr-0p3 (1 of 1 p3.8xlarge in use), billed whether used or not",
        "net savings $0.00/month until the reservation is reduced or cancelled (then $8,935.20/month)",
    )


def test_a_resize_out_of_a_capacity_reservation_pays_the_new_type_on_top() -> None:
    host = one_of_four()
    named = replace(host[0], capacity_reservation_id="cr-0targeted")
    odcr = CapacityReservation("cr-0targeted", "g5.12xlarge", "us-east-1a", 2, 1, open_matching=False)

    (rec,) = analyze([(named, host[1])], Commitments(capacity_reservations=(odcr,), read=True)).values()

    assert rec.target_type == "g5.8xlarge" and rec.monthly_savings == RESIZE_G5[0] - RESIZE_G5[1]
    assert rec.monthly_savings_net == -RESIZE_G5[1], "the reservation stays billed; the g5.8xlarge costs extra"


def test_only_as_many_hosts_as_an_open_reservation_uses_are_in_it() -> None:
    hosts = [idle_p3("i-00000000000000001"), idle_p3("i-00000000000000002")]
    odcr = CapacityReservation("cr-0p3", "p3.8xlarge", "us-east-1a", total=2, available=1)

    recs = analyze(hosts, Commitments(capacity_reservations=(odcr,), read=True))

    assert [recs[i].monthly_savings_net for i in sorted(recs)] == [Decimal("0.00"), Decimal("8935.20")]


# ------------------------------------------------------------------------------- Capacity Blocks


def test_a_host_in_a_capacity_block_saves_nothing_before_the_block_ends() -> None:
    host, summary = idle_p3(lifecycle="capacity-block")
    in_block = replace(host, capacity_reservation_id="cr-0block")
    block = CapacityReservation(
        "cr-0block", "p3.8xlarge", "us-east-1a", 1, 0, kind=CapacityKind.CAPACITY_BLOCK, end=END, open_matching=False
    )

    (rec,) = analyze([(in_block, summary)], Commitments(capacity_reservations=(block,), read=True)).values()

    assert rec.finding is Finding.EXCLUDED  # capacity reserved for this type: reported, never changed
    assert rec.monthly_savings_net == Decimal("0.00")
    assert reason_with(rec, "runs in Capacity Block cr-0block, paid up front until 2027-03-31", "until the block ends")


# ------------------------------------------------------------------------------- Reserved Instances


def test_downsizing_under_a_regional_reserved_instance_strands_it() -> None:
    host = one_of_four()
    ri = ReservedInstances("ri-0g5", "g5.12xlarge", count=1, end=END)  # regional: size-flexible in the g5 family

    (rec,) = analyze([host], Commitments(reserved_instances=(ri,), read=True)).values()

    assert rec.target_type == "g5.8xlarge"  # within the family: the RI keeps covering the smaller host
    assert rec.monthly_savings == Decimal("2353.52") and rec.monthly_savings_net == Decimal("0.00")
    assert reason_with(
        rec,
        "covered by Reserved Instances ri-0g5 for the g5 family (96 normalized units reserved, 96 running)",
        "paid whether used or not until 2027-03-31",
        "net savings $0.00/month (list price $2,353.52)",
    )


def test_a_host_above_the_reserved_units_saves_at_list_price() -> None:
    hosts = [one_of_four("i-00000000000000002"), one_of_four("i-00000000000000003")]
    ri = ReservedInstances("ri-0g5", "g5.12xlarge", count=1, end=END)

    recs = analyze(hosts, Commitments(reserved_instances=(ri,), read=True))

    # 192 units run, 96 are reserved: the reserved units are counted against the older host, so the other's change
    # saves at list price and the covered one's keeps using the RI (net 0). Each claiming the pool's 96 uncovered
    # units would count one saving twice.
    older, newer = recs["i-00000000000000002"], recs["i-00000000000000003"]
    assert (older.monthly_savings_net, newer.monthly_savings_net) == (Decimal("0.00"), Decimal("2353.52"))
    assert reason_with(newer, "usage above them is paid on demand, so the full saving counts")


def test_reserved_instances_are_counted_once_across_the_hosts_they_cover() -> None:
    # Three idle g5.12xlarge, two regional RIs: stopping all three takes one host's cost off the bill, not three.
    hosts = [idle_g5(f"i-0000000000000000{n}", days_ago=10 - n) for n in range(3)]
    ri = ReservedInstances("ri-1", "g5.12xlarge", count=2, end=END)

    recs = analyze(hosts, Commitments(reserved_instances=(ri,), read=True))

    assert sum((r.monthly_savings_net or Decimal(0) for r in recs.values()), Decimal(0)) == Decimal("4140.56")
    assert [recs[f"i-0000000000000000{n}"].monthly_savings_net for n in range(3)] == [
        Decimal("0.00"),
        Decimal("0.00"),
        Decimal("4140.56"),
    ]


def idle_g5(instance_id: str, days_ago: int) -> tuple[Instance, UsageSummary]:
    host = instance("g5.12xlarge", instance_id, launch_time=NOW - timedelta(days=days_ago))
    devices = [idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)]
    return host, usage(devices, instance_id=instance_id, cpu_p95=2.0)


def test_linux_reserved_instances_neither_cover_nor_count_a_windows_host() -> None:
    linux, _ = one_of_four("i-00000000000000002")
    windows = replace(one_of_four("i-00000000000000003")[0], platform="Windows", usage_operation="RunInstances:0002")
    ri = ReservedInstances("ri-0g5", "g5.12xlarge", count=1, end=END)  # read as Linux/UNIX RIs only

    covers = coverage([linux, windows], Commitments(reserved_instances=(ri,), read=True), fx.prices().on_demand)

    assert set(covers) == {linux.instance_id}
    pool = covers[linux.instance_id].reserved
    assert pool is not None and (pool.reserved, pool.running) == (96.0, 96.0)


def test_stopping_an_idle_host_under_a_zonal_reserved_instance_saves_nothing() -> None:
    host = idle_p3()
    ri = ReservedInstances("ri-0zonal", "p3.8xlarge", count=1, availability_zone="us-east-1a", end=END)

    (rec,) = analyze([host], Commitments(reserved_instances=(ri,), read=True)).values()

    assert rec.monthly_savings_net == Decimal("0.00")
    assert reason_with(rec, "Reserved Instances ri-0zonal for the p3.8xlarge in us-east-1a (1 reserved, 1 running)")


def test_normalization_factors_follow_ec2s_size_flexibility_table() -> None:
    assert [normalized_units(t) for t in ("g5.xlarge", "g5.2xlarge", "g5.12xlarge", "p4d.24xlarge")] == [8, 16, 96, 192]
    assert normalized_units("g4dn.metal") is None


# ------------------------------------------------------------------------------- Savings Plans


def plan(commitment: str) -> SavingsPlan:
    rates = {"g5.12xlarge": Decimal("3.5"), "g5.8xlarge": Decimal("1.5"), "p3.8xlarge": Decimal("8.0")}
    return SavingsPlan("sp-0compute", "Compute", Decimal(commitment), rates=rates, end=END)


def test_a_savings_plan_prices_both_sides_of_a_resize_at_its_rates() -> None:
    host = one_of_four()

    (rec,) = analyze([host], Commitments(savings_plans=(plan("10"),), read=True)).values()

    # 3.5 x 730 = 2555.00 now, 1.5 x 730 = 1095.00 after: 1460.00, not the 2353.52 of the list prices.
    assert rec.monthly_savings_net == Decimal("1460.00")
    assert reason_with(rec, "covered by Compute Savings Plan sp-0compute at $3.5/hour", "net savings $1,460.00/month")


def test_a_commitment_that_covers_part_of_a_host_prices_that_part_at_the_plan_rate() -> None:
    host = idle_p3()

    (rec,) = analyze([host], Commitments(savings_plans=(plan("4"),), read=True)).values()

    # Half of the host's hours at 8.0/h (2920.00), half at the list 12.24/h (4467.60): stopping saves 7387.60.
    assert rec.monthly_savings_net == Decimal("7387.60")
    assert reason_with(rec, "covered for 50% of its hours by Compute Savings Plan sp-0compute")


def test_a_plan_covers_the_biggest_discounts_first() -> None:
    g5, p3 = one_of_four(), idle_p3()
    # g5.12xlarge saves 38 % under the plan, p3.8xlarge 35 %: 3.5/h of commitment goes to the g5 first.
    covers = coverage([g5[0], p3[0]], Commitments(savings_plans=(plan("3.5"),), read=True), fx.prices().on_demand)

    assert covers[g5[0].instance_id].plan_share == 1.0
    assert p3[0].instance_id not in covers
