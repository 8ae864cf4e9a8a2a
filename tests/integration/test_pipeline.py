"""The scheduled pipeline, end to end, in-process against moto: two accounts (assumed roles) x two
regions, collect -> analyze -> store -> report, with the sample events from events/."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from demo.lambda_context import FakeLambdaContext

from tests.events import load_event
from tests.integration.pipeline_world import DAYS, HOME, MEMBER, REGIONS, run_day

pytestmark = pytest.mark.integration


def _run_pipeline(world: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What the state machine does: plan (scheduler event), plan each target into shards, collect each shard, rank."""
    day = run_day()
    return {
        "started": day["started"],
        "input": {**day["input"], "targets": day["targets"]},
        "analysis": day["analysis"],
    }, day["collected"]


def _report() -> dict[str, Any]:
    from rightsizer.handlers import report

    result: dict[str, Any] = report.handler(load_event("report.json"), FakeLambdaContext())
    return result


def _essentials(rec: dict[str, Any]) -> tuple[Any, ...]:
    return (
        rec["instance_id"],
        rec["finding"],
        rec["target_type"],
        rec["monthly_cost_usd"],
        rec["monthly_savings_usd"],
        rec["confidence"],
        rec["actionable"],
    )


def test_scheduled_pipeline_collects_two_accounts_and_two_regions_and_reports(world: dict[str, Any]) -> None:
    outcome, collected = _run_pipeline(world)

    assert outcome["started"]["status"] == "started"
    targets = {(t["account_id"], t["region"], bool(t["role_arn"])) for t in outcome["input"]["targets"]}
    assert targets == {(account, region, True) for account in (HOME, MEMBER) for region in REGIONS}
    assert {(c["account_id"], c["region"]) for c in collected} == {(a, r) for a in (HOME, MEMBER) for r in REGIONS}
    assert all(c["status"] == "collected" for c in collected)
    # Cached prices are not there yet (the weekly function never ran): the snapshot is used and said so.
    from rightsizer.adapters.aws.store import DynamoStore

    ranking = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(world["table"])).ranking()
    assert ranking is not None and any("weekly" in warning for warning in ranking.warnings)

    report = _report()
    by_account: dict[str, list[dict[str, Any]]] = {}
    for rec in report["recommendations"]:
        by_account.setdefault(rec["account_id"], []).append(rec)
    expected = {s.instance_id: s.host.expected for s in world["home"]}
    assert {r["instance_id"]: r["finding"] for r in by_account[HOME]} == expected
    expected_member = {s.instance_id: s.host.expected for s in world["member"]}
    # The member account's SageMaker resources, read by each region's SageMaker task beside the EC2 shards.
    expected_sagemaker = {
        "sagemaker-endpoint/chat-summarizer/AllTraffic": "overprovisioned",
        "sagemaker-endpoint/fraud-scorer-v1/AllTraffic": "idle",
        "sagemaker-endpoint/components/AllTraffic": "insufficient_data",  # created now: no history yet
        "sagemaker-notebook/research-nb-alice": "idle",
    }
    assert {r["instance_id"]: r["finding"] for r in by_account[MEMBER]} == expected_member | expected_sagemaker
    resources = len(expected) + len(expected_member) + len(expected_sagemaker)
    assert outcome["analysis"]["instances"] == resources
    assert report["totals"]["instances"] == resources


def test_report_matches_what_the_cli_prints_for_the_same_data(world: dict[str, Any]) -> None:
    from rightsizer.cli import main as cli_main

    _run_pipeline(world)
    report = _report()
    out = io.StringIO()
    status = cli_main.main(
        [
            "analyze",
            *[arg for region in REGIONS for arg in ("--region", region)],
            "--lookback-days",
            str(DAYS),
            "--format",
            "json",
            "--prices",
            "snapshot",
            "--no-progress",
        ],
        stdout=out,
        stderr=io.StringIO(),
    )
    assert status == 0
    printed = json.loads(out.getvalue())["recommendations"]
    stored = [rec for rec in report["recommendations"] if rec["account_id"] == HOME]
    assert sorted(map(_essentials, stored)) == sorted(map(_essentials, printed))
    assert [r["instance_id"] for r in stored] == [r["instance_id"] for r in printed]  # same ranking


def test_rerunning_a_days_collection_is_idempotent(world: dict[str, Any]) -> None:
    _run_pipeline(world)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    first_count = dynamodb.scan(TableName=world["table"], Select="COUNT")["Count"]
    first = sorted(map(_essentials, _report()["recommendations"]))
    first_ids = sorted(r["recommendation_id"] for r in _report()["recommendations"])

    outcome, _ = _run_pipeline(world)

    # Step Functions answers a repeated (name, input) with the running execution: one execution per day.
    executions = boto3.client("stepfunctions", region_name="us-east-1").list_executions(
        stateMachineArn=world["machine"]
    )["executions"]
    assert len(executions) == 1
    assert outcome["started"].get("execution_arn", executions[0]["executionArn"]) == executions[0]["executionArn"]
    assert dynamodb.scan(TableName=world["table"], Select="COUNT")["Count"] == first_count
    assert sorted(map(_essentials, _report()["recommendations"])) == first
    assert sorted(r["recommendation_id"] for r in _report()["recommendations"]) == first_ids


def test_scheduler_detail_string_and_map_items_are_both_accepted() -> None:
    from rightsizer.handlers.payload import event_payload

    scheduled = event_payload(load_event("collect.json"))
    assert scheduled["trigger"] == "schedule" and "target" not in scheduled
    assert event_payload({**load_event("collect.json"), "detail": '{"run": "2026-11-30"}'})["run"] == "2026-11-30"
    assert event_payload(load_event("collect_target.json"))["target"]["region"] == "us-east-1"
    assert event_payload(load_event("collect_shard.json"))["shard"] == 0
    with pytest.raises(ValueError, match="not JSON"):
        event_payload({**load_event("collect.json"), "detail": "{oops"})


def test_run_names_are_utc_dates() -> None:
    from rightsizer.services.pipeline import run_name

    late = datetime(2026, 12, 1, 23, 59, tzinfo=UTC)
    assert run_name(late) == "2026-12-01"
    assert run_name(late + timedelta(minutes=1)) == "2026-12-02"
