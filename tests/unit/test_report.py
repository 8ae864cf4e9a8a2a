"""The fleet report's one set of totals, its JSON (against schema/report.schema.json), CSV and table."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError

from rightsizer.adapters.slack import blocks
from rightsizer.cli.output.csv_rows import write_csv
from rightsizer.cli.output.table import Charset, render_table
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import DecisionKind, Evidence, Recommendation
from rightsizer.domain.scope import ActionScope
from rightsizer.services.formatting import ASCII_BARS
from rightsizer.services.ports import Decision
from rightsizer.services.report import (
    EVIDENCE_FIELDS,
    Category,
    FleetReport,
    build_report,
    category,
    fleet_totals,
    not_actionable_reason,
    report_json,
)
from tests.slack_double import ACCOUNT, NOW, no_data, recommendation

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema" / "report.schema.json"
OTHER_ACCOUNT = "210987654321"


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())
    return loaded


def validate(document: dict[str, Any]) -> None:
    Draft202012Validator(schema(), format_checker=Draft202012Validator.FORMAT_CHECKER).validate(document)


def mixed_fleet() -> list[Recommendation]:
    """Every kind of money: one-click and manual savings, ASG and other-account advice, upsizes, no price."""
    return [
        recommendation(1, cost="4140.00", cost_after="734.00"),  # one click: 3406
        recommendation(2, finding=Finding.IDLE, target_type=None, cost="8935.20", cost_after="0.00"),  # one click stops
        replace(  # an ASG member: the analyzer excludes it but keeps the cheaper target in its advice
            recommendation(3, finding=Finding.EXCLUDED, cost="4622.12", cost_after="987.66", actionable=False),
            asg_name="serving-asg",
            reasons=("would be overprovisioned, but the host belongs to an Auto Scaling group",),
        ),
        replace(recommendation(4, cost="1000.00", cost_after="500.00"), account_id=OTHER_ACCOUNT),
        recommendation(
            5, finding=Finding.UNDERPROVISIONED, target_type="g6.xlarge", cost="590.00", cost_after="793.52"
        ),
        recommendation(6, finding=Finding.OPTIMIZED, target_type=None, cost="700.00", cost_after="700.00"),
        no_data(7),
        recommendation(8, cost=None, cost_after=None),
    ]


HOME = ActionScope.of(ACCOUNT)  # the CLI's view: its own account, any region


def mixed_report() -> FleetReport:
    return build_report(mixed_fleet(), NOW, 14, home_account=ACCOUNT)


# ---------------------------------------------------------------------------------------------
# one set of totals


def test_totals_separate_savings_one_click_other_owners_and_upsizes() -> None:
    totals = mixed_report().totals

    assert totals.instances == 8
    assert totals.monthly_savings == Decimal("3406.00") + Decimal("8935.20")
    assert (totals.savings_count, totals.actionable_count) == (2, 2)  # a resize and a stop
    assert totals.actionable_savings == Decimal("3406.00") + Decimal("8935.20")
    assert totals.monthly_savings_net == totals.monthly_savings  # no reservation covers these hosts
    assert totals.other_owner_savings == Decimal("3634.46") + Decimal("500.00")
    assert totals.other_owner_count == 2
    assert (totals.additional_cost, totals.upsize_count) == (Decimal("203.52"), 1)
    assert totals.unpriced == 1
    assert sum(totals.by_finding.values()) == 8


def test_spot_advice_needs_another_owner_and_a_held_back_target_says_why() -> None:
    spot = replace(
        recommendation(9, finding=Finding.EXCLUDED, cost="328.50", cost_after="0.00", actionable=False),
        lifecycle="spot",
    )
    held = replace(recommendation(10, actionable=False), held_back="host memory not measured: publish it first")

    assert category(spot, HOME) is Category.OTHER_OWNER
    assert fleet_totals([spot], HOME).other_owner_savings == Decimal("328.50")
    assert not_actionable_reason(held, HOME) == "host memory not measured: publish it first"


def test_categories_and_the_reason_behind_act_no() -> None:
    recs = {int(rec.instance_id[2:], 16): rec for rec in mixed_fleet()}

    assert [category(recs[n], HOME) for n in range(1, 9)] == [
        Category.SAVING,
        Category.SAVING,
        Category.OTHER_OWNER,
        Category.OTHER_OWNER,
        Category.UPSIZE,
        Category.NONE,
        Category.NONE,
        Category.NONE,
    ]
    assert not_actionable_reason(recs[1], HOME) is None
    assert not_actionable_reason(recs[2], HOME) is None  # one click stops it
    assert "Auto Scaling group serving-asg" in (not_actionable_reason(recs[3], HOME) or "")
    assert f"in account {OTHER_ACCOUNT}" in (not_actionable_reason(recs[4], HOME) or "")
    assert not_actionable_reason(recs[4], None) is None  # no home account known: every account is home
    members = ActionScope.of(ACCOUNT, member_accounts=True)
    assert not_actionable_reason(recs[4], members) is None and category(recs[4], members) is Category.SAVING
    assert not_actionable_reason(recs[7], HOME) == "no GPU metrics to size it on"


def amounts(text: str) -> list[str]:
    return re.findall(r"\$[\d,]+\.\d\d", text)


def test_the_slack_report_and_the_cli_print_the_same_totals() -> None:
    report = mixed_report()
    table = render_table(report)
    slack = blocks.summary_text(blocks.ReportView.of(report, []))
    footer = table.split("\n\n", 1)[1]

    words = ("can be saved", "At list price", "owner", "upsize")
    money_lines = [line for line in footer.splitlines() if any(word in line for word in words)]
    assert len(money_lines) == 3  # no reservation pays for these hosts: no list-price line beside the net one
    assert [line.replace("*", "") for line in slack.splitlines()[:3]] == money_lines
    assert money_lines[0].endswith("net of reservations ($12,341.20/month with one click).")
    assert amounts(money_lines[0]) == ["$12,341.20", "$12,341.20"]  # net first: all of it, and one click's part
    assert amounts(money_lines[1]) == ["$4,134.46"]
    assert amounts(money_lines[2]) == ["$203.52"]
    totals = report_json(report)["totals"]
    assert (totals["monthly_savings_usd"], totals["actionable_savings_usd"]) == (12341.20, 12341.20)
    assert (totals["monthly_savings_net_usd"], totals["actionable_savings_net_usd"]) == (12341.20, 12341.20)
    assert (totals["other_owner_savings_usd"], totals["additional_cost_usd"]) == (4134.46, 203.52)


def test_what_people_snoozed_leaves_the_slack_totals() -> None:
    report = mixed_report()
    idle = next(rec for rec in report.recommendations if rec.finding is Finding.IDLE)
    snooze = Decision(
        DecisionKind.SNOOZE, ACCOUNT, "us-east-1", idle.instance_id, "U1", NOW, until=NOW + timedelta(days=1)
    )

    view = blocks.ReportView.of(report, [snooze])

    assert view.totals == fleet_totals([rec for rec in report.recommendations if rec is not idle], HOME)
    assert "$3,406.00/month* can be saved" in blocks.summary_text(view)


# ---------------------------------------------------------------------------------------------
# JSON and its schema


def test_the_json_validates_against_the_schema_in_the_repository() -> None:
    Draft202012Validator.check_schema(schema())
    document = report_json(mixed_report())

    validate(document)
    validate(report_json(build_report([], NOW, 3)))
    assert document["schema_version"] == "1.4"


# The schema's enums (findings, confidences, kinds, categories, actions) are the registries': test_report_schema.py.


def test_the_schema_names_every_field_the_program_writes() -> None:
    document = report_json(mixed_report())
    definitions = schema()["$defs"]

    assert set(schema()["properties"]) == set(document)
    assert set(definitions["recommendation"]["properties"]) == set(document["recommendations"][0])
    assert set(definitions["totals"]["properties"]) == set(document["totals"])
    assert set(definitions["evidence"]["properties"]) == {key for key, _, _ in EVIDENCE_FIELDS}


def test_every_evidence_field_has_a_json_key_and_a_rounding() -> None:
    assert {attribute for _, attribute, _ in EVIDENCE_FIELDS} == {f.name for f in dataclasses.fields(Evidence)}


def decimals(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def test_money_has_at_most_two_decimals_and_evidence_is_rounded_by_kind() -> None:
    raw = Evidence(
        observed_days=13.987654,
        coverage=0.98765,
        accelerator_p95=61.23456,
        memory_peak_mib=8530.25,
        memory_per_unit_mib=22888.0,
        network_peak_gbps=0.0091234,
        host_memory_peak_pct=12.7777,
        daily_accelerator_mean=(10.2345, None, 9.87),
    )
    rec = replace(recommendation(1, cost="100.555", cost_after="50.001"), evidence=raw)
    text = json.dumps(report_json(build_report([rec], NOW, 14)))
    document = json.loads(text, parse_float=Decimal)
    (row,) = document["recommendations"]

    for key in ("monthly_cost_usd", "monthly_cost_after_usd", "monthly_savings_usd"):
        assert decimals(row[key]) <= 2, key
    assert row["monthly_cost_usd"] == Decimal("100.56")  # half-even from Decimal
    evidence = row["evidence"]
    assert evidence["observed_days"] == Decimal("13.99")
    assert evidence["coverage"] == Decimal("0.988")
    assert evidence["accelerator_p95_pct"] == Decimal("61.2")
    assert evidence["memory_peak_mib"] == 8530 and evidence["memory_per_unit_mib"] == 22888
    assert evidence["network_peak_gbps"] == Decimal("0.009")
    assert evidence["host_memory_peak_pct"] == Decimal("12.8")
    assert evidence["daily_accelerator_mean_pct"] == [Decimal("10.2"), None, Decimal("9.9")]


# ---------------------------------------------------------------------------------------------
# CSV and the table


def test_csv_has_one_row_per_recommendation_with_flat_evidence_and_money_in_cents() -> None:
    report = mixed_report()
    out = io.StringIO()

    write_csv(report, out)

    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [row["instance_id"] for row in rows] == [rec.instance_id for rec in report.recommendations]
    first = rows[0]
    assert first["monthly_cost_usd"] == "8935.20" and first["category"] == "saving"
    assert "evidence_accelerator_p95_pct" in first and "evidence" not in first
    asg = next(row for row in rows if row["auto_scaling_group"])
    assert asg["actionable"] == "false" and "Auto Scaling group" in asg["not_actionable_reason"]


@pytest.mark.parametrize("width", [60, 80, 100, 132, 200])
def test_the_table_fits_the_terminal_width(width: int) -> None:
    table = render_table(mixed_report(), width=width)

    assert max(len(line) for line in table.splitlines()) <= width
    header = table.splitlines()[0].split()
    assert {"NAME", "FINDING", "TARGET", "NET/MO"} <= set(header)  # what is never dropped
    assert ("DAYS" in header) == (width >= 160)


def test_the_table_says_why_a_host_has_no_one_click_resize() -> None:
    table = render_table(mixed_report(), width=200)

    assert "ACT no: member of Auto Scaling group serving-asg: change the group's launch template" in table
    assert f"ACT no: `i-{4:017x}` is in account {OTHER_ACCOUNT}, and the stack acts only in its own account" in table


def test_ascii_charset_draws_ascii_sparklines() -> None:
    table = render_table(mixed_report(), width=200, charset=Charset(ASCII_BARS, "..."))

    table.encode("ascii")  # nothing outside ASCII
    assert re.search(r"[_.:\-=+*#]{14}", table)


def test_the_page_chart_draws_net_savings_so_a_reserved_host_gets_no_bar() -> None:
    from rightsizer.adapters.html.svg import savings_chart

    reserved = {"monthly_savings_usd": 4140.56, "monthly_savings_net_usd": 0.0, "category": "saving"}
    paid = {"monthly_savings_usd": 300.0, "monthly_savings_net_usd": 250.0, "category": "saving"}
    chart = savings_chart(
        [
            {**reserved, "name": "reserved", "instance_id": "i-1", "instance_type": "p4d.24xlarge"},
            {**paid, "name": "paid", "instance_id": "i-2", "instance_type": "g5.xlarge"},
        ]
    )
    assert chart.count("<rect") == 1 and "$250.00" in chart and "reserved" not in chart


def test_a_resource_other_than_an_ec2_host_is_reported_with_its_kind_and_id_and_validates() -> None:
    from rightsizer.domain.resources import ResourceKind

    endpoint = replace(
        recommendation(3), instance_id="sagemaker-endpoint/chat/AllTraffic", kind=ResourceKind.SAGEMAKER_ENDPOINT
    )
    document = report_json(build_report([recommendation(1), endpoint], NOW, 14, home_account=ACCOUNT))

    validate(document)
    kinds = {rec["resource_id"]: rec["kind"] for rec in document["recommendations"]}
    assert kinds["sagemaker-endpoint/chat/AllTraffic"] == "sagemaker-endpoint"
    assert kinds[recommendation(1).instance_id] == "ec2"
    # An EC2 host's instance id keeps its pattern.
    broken = json.loads(json.dumps(document))
    host = next(rec for rec in broken["recommendations"] if rec["kind"] == "ec2")
    host["instance_id"] = "sagemaker-endpoint/chat/AllTraffic"
    with pytest.raises(ValidationError, match="does not match"):
        validate(broken)
