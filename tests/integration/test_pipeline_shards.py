"""A multi-shard day end to end: moto executes statemachine/pipeline.asl.json - a Distributed Map over the
targets read from S3, an inline Map over each target's shards - and every task runs our real Lambda handlers
(see tests/integration/step_functions.py for what is emulated). Two regions of the demo fleet, at most three
instances per shard; one shard keeps failing and is recorded and skipped."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from tests.environment import use_fake_aws
from tests.events import load_event
from tests.integration.pipeline_world import HOST_KEYS
from tests.integration.step_functions import LocalLambda, lambda_and_retries, pipeline_stack, table_items, wait_for

pytestmark = pytest.mark.integration

ACCOUNT = "123456789012"
REGIONS = ("us-east-1", "eu-west-1")
DAYS = 4
SHARD_SIZE = 3
BUCKET = "gpu-rightsizer-plans"
FUNCTIONS = {
    name: f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:{name.lower()}" for name in ("Collect", "Analyze", "Report")
}
BROKEN = ("us-east-1", 2)  # this shard fails on every attempt (not the one with the ODCR host: see below)


def _broken(name: str, event: dict[str, Any]) -> bool:
    return name == "collect" and (event.get("region"), event.get("shard")) == BROKEN


@pytest.fixture(scope="module")
def day() -> Iterator[dict[str, Any]]:
    """The demo fleet in two regions, the stack's table, bucket and pipeline, and one pipeline execution."""
    from demo.seed import seed
    from moto.core.config import default_user_config

    patch = pytest.MonkeyPatch()
    use_fake_aws(patch, AWS_REGION="us-east-1", TZ="UTC")
    time.tzset()
    # Imported once the test environment is in place: a handler reads its metrics namespace at import, and
    # a module imported without one breaks every later test that uses it (module fixtures run before the
    # function-scoped environment).
    from rightsizer import bootstrap
    from rightsizer.handlers import analyze, collect, report

    default_user_config["stepfunctions"]["execute_state_machine"] = True
    local = LocalLambda({"collect": collect.handler, "analyze": analyze.handler, "report": report.handler}, _broken)
    try:
        with pipeline_stack(BUCKET, FUNCTIONS, ACCOUNT) as stack, lambda_and_retries(patch, local) as slept:
            table, sfn, machine = stack.table, stack.sfn, stack.machine
            end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
            seeded = seed(end, days=DAYS)
            for name, value in {
                "TABLE_NAME": table,
                "REGIONS": ",".join(REGIONS),
                "LOOKBACK_DAYS": str(DAYS),
                "PRICE_SOURCE": "snapshot",
                "PIPELINE_STATE_MACHINE_ARN": machine,
                "PLAN_BUCKET": BUCKET,
                "SHARD_SIZE": str(SHARD_SIZE),
                "HOME_ACCOUNT_ID": ACCOUNT,
                "POWERTOOLS_METRICS_DISABLED": "true",
            }.items():
                patch.setenv(name, value)
            bootstrap.lambda_wiring.cache_clear()
            started = collect.handler(load_event("collect.json"), _context())
            outcome = wait_for(sfn, started["execution_arn"])
            yield {
                "started": started,
                "outcome": outcome,
                "sfn": sfn,
                "table": table,
                "seeded": seeded,
                "local": local,
                "slept": slept,
                "machine": machine,
            }
    finally:
        default_user_config["stepfunctions"]["execute_state_machine"] = False
        patch.undo()
        time.tzset()
        bootstrap.lambda_wiring.cache_clear()


def _context() -> Any:
    from demo.lambda_context import FakeLambdaContext

    return FakeLambdaContext()


def _collected(day: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in day["local"].results("collect", "collect") if isinstance(r, dict)]


def test_the_day_runs_every_target_through_a_distributed_map_and_every_region_in_shards(day: dict[str, Any]) -> None:
    assert day["outcome"]["status"] == "SUCCEEDED", day["outcome"]
    history = day["sfn"].get_execution_history(executionArn=day["started"]["execution_arn"], maxResults=1000)
    kinds = [event["type"] for event in history["events"]]
    assert "MapRunStarted" in kinds and "MapRunSucceeded" in kinds  # the Distributed Map, not an inline one

    plans = [r for r in day["local"].results("collect", "plan") if isinstance(r, dict)]
    assert sorted(p["region"] for p in plans) == sorted(REGIONS)
    by_region = {p["region"]: p for p in plans}
    for region in REGIONS:
        hosts = [s for s in day["seeded"] if s.host.region == region]
        ec2 = [shard for shard in by_region[region]["shards"] if shard["part"] == "ec2"]
        # At least ceil(hosts / size): a node group's nodes never straddle two shards, so one may start early.
        assert -(-len(hosts) // SHARD_SIZE) <= len(ec2) <= len(hosts) and len(ec2) > 1
        # ...and one task for the region's SageMaker resources, after them.
        assert [shard["part"] for shard in by_region[region]["shards"]] == ["ec2"] * len(ec2) + ["sagemaker"]
    collected = _collected(day)
    assert all(result["instances"] <= SHARD_SIZE for result in collected)
    shards = {(r["region"], r["shard"]) for r in collected}
    planned = {(s["region"], s["shard"]) for p in plans for s in p["shards"]}
    assert shards == planned - {BROKEN}


def test_a_failing_shard_is_retried_then_recorded_and_skipped(day: dict[str, Any]) -> None:
    attempts = [event for name, event, _ in day["local"].calls if _broken(name, event)]
    assert len(attempts) == 3  # the first try and two retries
    assert day["slept"], "the retries waited (recorded, not slept)"

    from rightsizer.adapters.aws.store import DynamoStore

    store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(day["table"]))
    run = day["started"]["run"]
    failures = store.failures(run)
    assert [(f["region"], f["shard"]) for f in failures] == [(BROKEN[0], str(BROKEN[1]))]
    ranking = store.ranking()
    assert ranking is not None
    assert any(f"shard {BROKEN[1]} not collected" in warning for warning in ranking.warnings)
    # Every other host got its advice; the broken shard's hosts have none (never a guess).
    collected = sum(r["instances"] for r in _collected(day))
    assert ranking.totals.instances == collected
    with_advice = [s for s in day["seeded"] if store.latest_for_instance(s.instance_id) is not None]
    assert len(with_advice) == collected


def test_findings_are_those_the_workloads_deserve(day: dict[str, Any]) -> None:
    from rightsizer.adapters.aws.store import DynamoStore

    store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(day["table"]))
    checked = 0
    for seeded in day["seeded"]:
        rec = store.latest_for_instance(seeded.instance_id)
        if rec is not None and seeded.host.key in HOST_KEYS:  # the hosts whose finding 4 days already decide
            assert rec.finding.value == seeded.host.expected, seeded.host.name
            checked += 1
    assert checked >= 4


def test_no_item_grows_with_the_fleet(day: dict[str, Any]) -> None:
    def size(item: dict[str, Any]) -> int:  # attribute names and values, binary as bytes (DynamoDB's measure)
        return sum(len(name) + len(json.dumps(value, default=lambda b: "x" * len(b))) for name, value in item.items())

    items = table_items(day["table"])
    assert {item["SK"]["S"][:5] for item in items} >= {"SHARD", "CONTE", "LATES", "USAGE", "RANK#"}
    assert max(size(item) for item in items) < 100_000


def test_the_catch_up_reanalyses_every_shard_and_rewrites_nothing(day: dict[str, Any]) -> None:
    from rightsizer.handlers import analyze

    before = len(day["local"].calls)
    started = analyze.handler({**load_event("collect.json"), "detail": "{}"}, _context())  # the catch-up schedule
    assert started["mode"] == "analyze"
    outcome = wait_for(day["sfn"], started["execution_arn"])
    assert outcome["status"] == "SUCCEEDED", outcome
    again = [result for _, event, result in day["local"].calls[before:] if event.get("action") == "analyze"]
    statuses = sorted(str(r["status"]) for r in again if isinstance(r, dict))
    assert statuses == ["analysed"] * (len(again) - 1) + ["not collected"]  # the broken shard has no usage
    assert sum(r["recommendations_written"] for r in again if isinstance(r, dict)) == 0


def test_a_reservation_decided_over_the_region_prices_the_advice_of_the_shard_that_holds_the_host(
    day: dict[str, Any],
) -> None:
    """The plan reads the region's commitments once and decides what covers each host over the whole region;
    the shard that analyses the host prices its advice net of that (the demo's unused p4d sits in an ODCR)."""
    from rightsizer.adapters.aws.store import DynamoStore

    store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(day["table"]))
    (vllm,) = [s for s in day["seeded"] if s.host.key == "vllm-idle"]
    run = store.latest_run()
    assert run is not None
    planned = store.region(run, ACCOUNT, "us-east-1")
    assert planned is not None
    context, shards = planned
    assert {r.reservation_id for r in context.commitments.capacity_reservations} == {"cr-0d3adc0ffee0p4d01"}
    covered = {
        index: refs[vllm.instance_id]
        for index in range(shards)
        for refs in [store.shard(run, ACCOUNT, "us-east-1", index).covers]
        if vllm.instance_id in refs
    }
    assert [ref.capacity_id for ref in covered.values()] == ["cr-0d3adc0ffee0p4d01"]
    assert list(covered) != [BROKEN[1]], "the broken shard holds no advice to check"
    rec = store.latest_for_instance(vllm.instance_id)
    assert rec is not None and rec.finding.value == vllm.host.expected == "held_unused"  # its memory is held
    assert rec.monthly_savings and rec.monthly_savings > 0
    assert rec.net_savings == 0
    assert any("cr-0d3adc0ffee0p4d01" in reason for reason in rec.reasons)
