"""Issue 21, item 3: the top of the report is what the bill drops by, and the capacity warning follows the host's
reservation. A host in an On-Demand Capacity Reservation saves $0 net, whatever its list price, and restarts on its
reservation: it ranks below real savings, and its stop takes a plain Approve."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from typing import Any

from rightsizer.adapters.slack import blocks
from rightsizer.domain.analyzer import analyze_fleet
from rightsizer.domain.commitments import CapacityReservation, Commitments, coverage
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.scope import ActionScope
from rightsizer.services.ranking import Ranking
from rightsizer.services.report import build_report
from tests.factories import ACCOUNT, NOW, idle_device, instance, usage
from tests.unit import catalog_fixture as fx
from tests.unit._builders import V100_TOTAL_MIB

A100_TOTAL_MIB = 40960.0
RESERVED_P4D, SPARE_P4D, P3 = "i-000000000000000a1", "i-000000000000000a2", "i-000000000000000b1"
ODCR = CapacityReservation("cr-0p4d", "p4d.24xlarge", "us-east-1a", total=1, available=0)
MANAGED = {"rightsizer:managed": "true"}
HOME = ActionScope.of(ACCOUNT, {"us-east-1"})


def idle(instance_type: str, instance_id: str, gpus: int, memory: float) -> tuple[Instance, UsageSummary]:
    host = instance(instance_type, instance_id, tags=MANAGED)
    devices = [idle_device(str(i), memory) for i in range(gpus)]
    return host, usage(devices, instance_id=instance_id, cpu_p95=2.0)


def analysed(*hosts: tuple[Instance, UsageSummary], odcr: bool = True) -> dict[str, Recommendation]:
    instances = [host for host, _ in hosts]
    book = fx.prices()
    commitments = Commitments(capacity_reservations=(ODCR,) if odcr else (), read=True)
    covers = coverage(instances, commitments, book.on_demand)
    summaries = {host.instance_id: summary for host, summary in hosts}
    recs = analyze_fleet(instances, summaries, fx.catalog(), book, Policy(), NOW, covers)
    return {rec.instance_id: rec for rec in recs}


def fleet() -> dict[str, Recommendation]:
    reserved = idle("p4d.24xlarge", RESERVED_P4D, 8, A100_TOTAL_MIB)
    named = (replace(reserved[0], capacity_reservation_id=ODCR.reservation_id), reserved[1])
    return analysed(named, idle("p3.8xlarge", P3, 4, V100_TOTAL_MIB))


def buttons(rec: Recommendation) -> dict[str, dict[str, Any]]:
    block = blocks.recommendation_actions(rec, HOME).to_dict()
    return {e["action_id"]: e for e in block["elements"]}


def listed_order(payload: dict[str, Any]) -> list[str]:
    prefix = "rec:"
    ids = [str(b["block_id"])[len(prefix) :] for b in payload["blocks"] if str(b.get("block_id")).startswith(prefix)]
    return ids


def test_the_report_ranks_by_net_savings_with_the_list_price_beside_it() -> None:
    recs = fleet()
    p4d, p3 = recs[RESERVED_P4D], recs[P3]
    assert p4d.finding is p3.finding is Finding.IDLE
    assert p4d.monthly_savings is not None and p3.monthly_savings is not None
    assert p4d.monthly_savings > p3.monthly_savings, "at list price the reserved p4d would come first"
    assert p4d.net_savings == Decimal("0.00")

    report = build_report(recs.values(), NOW, 14, scope=HOME)
    [message] = blocks.daily_report_messages(report, [], top_n=10, scope=HOME)
    payload = message.payload()

    assert [r.instance_id for r in report.recommendations] == [P3, RESERVED_P4D]
    assert listed_order(payload) == [p3.recommendation_id, p4d.recommendation_id]
    [line] = [b for b in payload["blocks"] if b.get("block_id") == blocks.section_id(p4d)]
    assert "*saves $0.00/month net* ($16,029.08 at list price" in line["text"]["text"]
    ranking = Ranking.of(recs.values(), HOME)
    assert [r.instance_id for r in ranking.listed] == [P3, RESERVED_P4D]


def test_a_ranking_stored_in_list_price_order_is_shown_in_net_order() -> None:
    recs = fleet()
    stored = Ranking.of(recs.values(), HOME)
    old = replace(stored, listed=(recs[RESERVED_P4D], recs[P3]))  # how the previous version ranked them

    report = old.report(NOW, 14, HOME)

    assert [r.instance_id for r in report.recommendations[:2]] == [P3, RESERVED_P4D]


def test_a_scarce_host_in_a_capacity_reservation_takes_a_plain_approve_without_the_capacity_warning() -> None:
    recs = fleet()
    reserved = recs[RESERVED_P4D]
    spare = analysed(idle("p4d.24xlarge", SPARE_P4D, 8, A100_TOTAL_MIB), odcr=False)[SPARE_P4D]  # no reservation
    assert reserved.capacity_reservation == "cr-0p4d" and spare.capacity_reservation is None

    plain, risky = buttons(reserved), buttons(spare)

    assert set(plain) == {blocks.ACTION_APPROVE, blocks.ACTION_DISMISS, blocks.ACTION_SNOOZE}
    approve = plain[blocks.ACTION_APPROVE]
    assert approve["text"]["text"] == "Approve stop" and approve["style"] == "primary"
    confirm = approve["confirm"]["text"]["text"]
    assert "not guaranteed" not in confirm and "held for it by capacity reservation cr-0p4d" in confirm
    assert blocks.ACTION_APPROVE not in risky, "without a reservation the risk keeps its own button"
    assert "restart capacity is not guaranteed" in risky[blocks.ACTION_APPROVE_SCARCE]["confirm"]["text"]["text"]
    assert (blocks.capacity_at_risk(reserved), blocks.capacity_at_risk(spare)) == (False, True)


def test_show_says_whether_the_host_is_in_a_reservation() -> None:
    recs = fleet()

    reserved = json.dumps(blocks.detail_message(recs[RESERVED_P4D], now=NOW, scope=HOME).payload())
    plain = json.dumps(blocks.detail_message(recs[P3], now=NOW, scope=HOME).payload())

    assert "reserved: cr-0p4d holds its restart capacity" in reserved
    assert "*Capacity*\\nno reservation" in plain


def test_the_analyzer_takes_the_reservation_ec2_names_when_no_commitment_matched_it() -> None:
    host, summary = idle("p4d.24xlarge", SPARE_P4D, 8, A100_TOTAL_MIB)
    named = replace(host, capacity_reservation_id="cr-0unread")

    (rec,) = analyze_fleet([named], {SPARE_P4D: summary}, fx.catalog(), fx.prices(), Policy(), NOW)

    assert rec.capacity_reservation == "cr-0unread" and not blocks.capacity_at_risk(rec)
