"""Fleet consolidation: part-used hosts of one team and zone whose measured work fits fewer of them get `consolidate`
advice naming the hosts and the target; advice only, low or medium confidence (domain/consolidation.py)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from rightsizer.cli.output.csv_rows import csv_rows
from rightsizer.domain.analyzer import analyze_fleet
from rightsizer.domain.consolidation import consolidate
from rightsizer.domain.models import Confidence, Finding, Instance, Recommendation, UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.services.report import build_report, fleet_totals, recommendation_json
from tests.factories import NOW, device, idle_device, instance, usage
from tests.unit import catalog_fixture as fx
from tests.unit._builders import A100_40_TOTAL_MIB, T4_TOTAL_MIB

T4_MONTHLY = Decimal("383.98")  # g4dn.xlarge at 0.526/h


def t4_host(
    number: int, p95: float = 15.0, team: str = "search", zone_suffix: str = ""
) -> tuple[Instance, UsageSummary]:
    """A g4dn.xlarge (the cheapest T4 type: right-sized on its own) using a sixth of its GPU."""
    instance_id = f"i-{number:017x}"
    host = instance("g4dn.xlarge", instance_id, tags={"team": team} if team else None)
    if zone_suffix:
        host = replace(host, availability_zone=f"us-east-1{zone_suffix}")
    busy = device("0", p95, 3_000.0, T4_TOTAL_MIB, p99=p95 + 5, peak=p95 + 10)
    return host, usage([busy], instance_id=instance_id, cpu_p95=10.0, host_memory_pct=20.0, network_gbps=0.2)


def half_p4d(number: int) -> tuple[Instance, UsageSummary]:
    """A p4d.24xlarge training on 4 of its 8 A100s (no smaller P type keeps NVLink: right-sized alone)."""
    instance_id = f"i-{number:017x}"
    busy = [device(str(i), 70.0, 30_000.0, A100_40_TOTAL_MIB, p99=80.0, peak=85.0) for i in range(4)]
    idle = [idle_device(str(i), A100_40_TOTAL_MIB) for i in range(4, 8)]
    summary = usage([*busy, *idle], instance_id=instance_id, cpu_p95=20.0, host_memory_pct=20.0, network_gbps=1.0)
    return instance("p4d.24xlarge", instance_id, tags={"team": "llm"}), summary


def advise(hosts: list[tuple[Instance, UsageSummary]]) -> dict[str, Recommendation]:
    instances = [h for h, _ in hosts]
    summaries = {h.instance_id: u for h, u in hosts}
    recs = analyze_fleet(instances, summaries, fx.catalog(), fx.prices(), Policy(), NOW)
    alone = {(r.finding, r.target_type) for r in recs}
    # Each host alone is right-sized, or partly idle with no smaller type to move to.
    assert alone <= {(Finding.OPTIMIZED, None), (Finding.OVERPROVISIONED, None)}
    return {r.instance_id: r for r in consolidate(recs, instances, summaries, fx.catalog(), Policy())}


def test_three_part_used_hosts_of_a_team_fit_one_and_the_others_are_named_for_stopping() -> None:
    recs = advise([t4_host(1, 20.0), t4_host(2, 15.0), t4_host(3, 10.0)])

    assert {r.finding for r in recs.values()} == {Finding.CONSOLIDATE}
    keep, *drained = (recs[f"i-{n:017x}"] for n in (1, 2, 3))
    plan = keep.consolidation
    assert plan is not None and all(r.consolidation == plan for r in drained)
    assert plan.keep == (keep.instance_id,) and plan.target_type == "g4dn.xlarge"  # the busiest host stays
    assert plan.hosts == tuple(sorted(recs)) and plan.group == "team=search in us-east-1a"
    assert keep.monthly_savings == Decimal("0.00") and [r.monthly_savings for r in drained] == [T4_MONTHLY] * 2
    assert all(r.net_savings == r.monthly_savings for r in recs.values())
    assert all(r.actionable is False and r.action is None for r in recs.values()), "advice only, never one click"
    # One T4 would carry three workloads: the GPU is shared, which changes latency.
    assert {r.confidence for r in recs.values()} == {Confidence.LOW}
    lead = keep.reasons[0]
    assert lead.startswith("consolidate: 3 g4dn.xlarge hosts of team=search in us-east-1a")
    assert f"keep {keep.instance_id}" in lead and "saves $767.96/month for the group" in lead
    assert any("CUDA MPS or time-slicing" in reason for reason in keep.reasons)
    assert fleet_totals(recs.values()).monthly_savings == Decimal("767.96")
    document = recommendation_json(drained[0])
    assert document["finding"] == "consolidate" and document["consolidation"]["keep"] == [keep.instance_id]
    rows = {row["instance_id"]: row for row in csv_rows(build_report(recs.values(), NOW, 14))}
    assert rows[drained[0].instance_id]["consolidation_keep"] == keep.instance_id
    assert rows[drained[0].instance_id]["consolidation_hosts"] == "; ".join(plan.hosts)


def test_whole_gpus_moving_to_free_gpus_is_medium_confidence() -> None:
    recs = advise([half_p4d(1), half_p4d(2)])

    assert {r.finding for r in recs.values()} == {Finding.CONSOLIDATE}
    assert {r.confidence for r in recs.values()} == {Confidence.MEDIUM}
    assert any("each busy GPU moves to a GPU of its own" in reason for r in recs.values() for reason in r.reasons)
    assert sorted(r.monthly_savings or 0 for r in recs.values()) == [Decimal("0.00"), fx.monthly("p4d.24xlarge")]


@pytest.mark.parametrize(
    "hosts",
    [
        pytest.param([t4_host(1, team="search"), t4_host(2, team="ads")], id="different-teams"),
        pytest.param([t4_host(1), t4_host(2, zone_suffix="b")], id="different-zones"),
        pytest.param([t4_host(1, team=""), t4_host(2, team="")], id="no-team-tag"),
        pytest.param([t4_host(1, 50.0), t4_host(2, 45.0)], id="work-that-does-not-fit"),
    ],
)
def test_hosts_that_do_not_belong_together_or_do_not_fit_keep_their_advice(
    hosts: list[tuple[Instance, UsageSummary]],
) -> None:
    recs = advise(hosts)

    assert {r.finding for r in recs.values()} == {Finding.OPTIMIZED}
    assert all(r.consolidation is None for r in recs.values())
