"""The daily pipeline keeps its word under faults: the real state machine executed by moto, the real Collect, Analyze
and Report handlers behind it, AWS faults answered in front of moto (tests/faults.py) and Slack's errors by its
double. Each test names the fault, then what the pipeline must still leave behind."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

import boto3
import pytest
from demo.fleet import Gpu, Host, noisy
from demo.lambda_context import FakeLambdaContext

from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.ports import Approval
from tests.events import load_event
from tests.faults import (
    ACCESS_DENIED,
    CLOSED_PORT,
    EC2_DENIED,
    EC2_THROTTLED,
    EC2_UNAVAILABLE,
    SERVER_ERROR,
    THROTTLED,
    injected,
    no_backoff,
)
from tests.integration.fault_world import DEMO_HOSTS, World, demo_hosts, fault_world, scheduled_report
from tests.integration.step_functions import wait_for

pytestmark = pytest.mark.integration


def _pk(item: dict[str, Any]) -> str:
    return str(item["PK"]["S"])


# 1. A retried shard leaves every record -----------------------------------------------------------------------------


def test_a_shard_cut_after_its_latest_items_landed_is_retried_and_leaves_every_by_id_copy_and_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DynamoDB processes the part of a batch it likes: of the first batch of advice, only the latest items land and
    the rest come back unprocessed; the function is cut while boto3 resends them. The Map retries the shard."""
    with fault_world(monkeypatch) as world, injected() as faults:
        faults.partial_batch_then_cut(
            first=lambda item: _pk(item).startswith(("LATEST#", "REC#", "INSTANCE#")),
            lands=lambda item: _pk(item).startswith("LATEST#"),
        )
        outcome = world.run_day()

        assert outcome["status"] == "SUCCEEDED", outcome
        assert faults.seen["BatchWriteItem"] >= 1, "the fault met the shard's advice"
        failed = [r for r in world.local.results("collect", "collect") if isinstance(r, str)]
        assert len(failed) == 1 and "Cut" in failed[0], "one attempt was cut, and the Map retried it"
        checked = 0
        for key, seeded in world.seeded.items():
            rec = world.latest(key)
            assert rec is not None, key
            # What Approve reads (by id), and what `/gpu show` and the report page's history read.
            assert world.store.recommendation(rec.recommendation_id) == rec, f"{key}: by-id copy missing"
            assert world.store.history(rec.account_id, rec.region, seeded.instance_id), f"{key}: history missing"
            checked += 1
        assert checked == len(world.seeded)


# 2. A shard describes its hosts again -------------------------------------------------------------------------------


def test_a_host_terminated_between_the_plan_and_its_shard_is_left_out_and_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The idle host is terminated after the plan, before its shard runs. Before: reported idle with a one-click Stop,
    its cost counted in the fleet's savings. Now: no advice, no savings, named in the ranking's warnings; a retry of
    its shard says the same and changes nothing."""
    with fault_world(monkeypatch) as world:
        gone = world.instance_id("idle-p3")
        terminated: list[str] = []
        once = threading.Lock()  # the Map runs two shards at a time

        def terminate_before_the_first_shard(name: str, event: dict[str, Any]) -> bool:
            with once:
                if name == "collect" and event.get("action") == "collect" and not terminated:
                    boto3.client("ec2", region_name="us-east-1").terminate_instances(InstanceIds=[gone])
                    terminated.append(gone)
            return False  # the invocation itself goes ahead

        world.local.fail = terminate_before_the_first_shard
        outcome = world.run_day()

        assert outcome["status"] == "SUCCEEDED", outcome
        assert terminated == [gone]
        assert world.latest("idle-p3") is None, "no advice for a host that is gone"
        ranking = world.store.ranking()
        assert ranking is not None
        assert ranking.totals.instances == len(DEMO_HOSTS) - 1
        assert ranking.totals.by_finding.get(Finding.IDLE, 0) == 0, "its cost is not counted as a saving"
        assert all(rec.instance_id != gone for rec in ranking.listed)
        (warning,) = [w for w in ranking.warnings if gone in w]
        assert "1 host(s) terminated between the plan and their shard's collection, left out" in warning

        shards = [
            shard
            for plan in world.local.results("collect", "plan")
            if isinstance(plan, dict)
            for shard in plan["shards"]
        ]
        again = world.collect(shards)  # the Map's retry of every shard, or a redrive
        assert [gone] in [result.get("gone") for result in again]
        assert world.rank()["instances"] == ranking.totals.instances
        retried = world.store.ranking()
        assert retried is not None and retried.totals == ranking.totals and warning in retried.warnings


def test_a_host_opted_out_between_the_plan_and_its_shard_is_advised_as_it_is_now(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its owner tags the idle host rightsizer:ignore after the plan. Before: advised from the plan's tags, a one-click
    Stop. Now the shard's own description decides, and the catch-up analysis of the shard reads the same."""
    from rightsizer.handlers import analyze

    with fault_world(monkeypatch) as world:
        shards = world.plan()
        boto3.client("ec2", region_name="us-east-1").create_tags(
            Resources=[world.instance_id("idle-p3")], Tags=[{"Key": "rightsizer:ignore", "Value": "true"}]
        )

        world.collect(shards)

        rec = world.latest("idle-p3")
        assert rec is not None and rec.finding is Finding.EXCLUDED and rec.action is None, rec
        assert rec.reasons[0].startswith("opted out by tag rightsizer:ignore")
        for shard in shards:  # the catch-up, from the stored shard
            analyze.handler({**shard, "mode": "analyze"}, FakeLambdaContext())
        again = world.latest("idle-p3")
        assert again is not None and again.finding is Finding.EXCLUDED


# 3. The report reads approvals ---------------------------------------------------------------------------------------


def _approval(rec: Recommendation, status: ApprovalStatus, at: datetime) -> Approval:
    assert rec.action is not None
    return Approval(
        recommendation_id=rec.recommendation_id,
        account_id=rec.account_id,
        region=rec.region,
        instance_id=rec.instance_id,
        from_type=rec.instance_type,
        to_type=rec.target_type or "stopped",
        approver="U0ALICE",
        approved_at=at,
        status=status,
        execution_arn=f"arn:aws:states:us-east-1:123456789012:execution:resize:{rec.recommendation_id}",
        action=rec.action,
    )


def _blocks_of(posts: list[dict[str, Any]], recommendation_id: str) -> list[dict[str, Any]]:
    """The blocks of the report that show one recommendation: its section and what follows it up to the next."""
    found: list[dict[str, Any]] = []
    for post in posts:
        inside = False
        for block in post["blocks"]:
            block_id = str(block.get("block_id") or "")
            if block_id.startswith("rec:"):
                inside = block_id == f"rec:{recommendation_id}"
            elif block.get("type") in ("divider", "header"):
                inside = False
            if inside:
                found.append(block)
    return found


def _buttons(blocks: list[dict[str, Any]]) -> list[str]:
    return [element["text"]["text"] for block in blocks if block["type"] == "actions" for element in block["elements"]]


def test_the_next_report_shows_where_approved_advice_stands_instead_of_approve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Yesterday someone approved the resize (its workflow still runs) and the stop (its workflow failed); the
    advice is unchanged today. The report reads the approvals: the resize shows 'running' and no button, the stop
    shows its failure and Approve, to try again."""
    with fault_world(monkeypatch, slack=True) as world:
        world.day_by_hand()
        resize, stop = world.latest("one-of-four"), world.latest("idle-p3")
        assert resize is not None and stop is not None and resize.action and stop.action
        yesterday = datetime.now(UTC) - timedelta(days=1)
        world.store.create_approval(_approval(resize, ApprovalStatus.RUNNING, yesterday))
        world.store.create_approval(_approval(stop, ApprovalStatus.ROLLED_BACK, yesterday))

        world.post()

        posts = world.posts()
        shown = _blocks_of(posts, resize.recommendation_id)
        assert shown, "the resize is listed"
        assert _buttons(shown) == [], "no Approve (nor Dismiss) for advice whose approval still runs"
        (state,) = [b for b in shown if b["type"] == "context" and "approved by" in json.dumps(b)]
        assert ":hourglass_flowing_sand: running: resize approved by <@U0ALICE>" in json.dumps(state)
        assert state["block_id"] == f"act:{resize.recommendation_id}", "where the notifier edits the outcome in"
        failed = _blocks_of(posts, stop.recommendation_id)
        assert "failed and rolled back: stop approved by <@U0ALICE>" in json.dumps(failed)
        assert _buttons(failed)[0].startswith("Approve stop"), "a failed attempt may be tried again"


# 4. The report names the day of its analysis -------------------------------------------------------------------------


class _Tomorrow(datetime):
    """The report function's clock, a day on: the day's collection never started."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> _Tomorrow:
        real = datetime.now(tz)
        return cls.fromtimestamp((real + timedelta(days=1)).timestamp(), tz)


def test_a_report_of_yesterdays_analysis_names_its_day_and_says_it_is_not_todays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rightsizer.handlers import report

    with fault_world(monkeypatch, slack=True) as world:
        analysed = world.day_by_hand()["analysis"]["run"]
        monkeypatch.setattr(report, "datetime", _Tomorrow)  # the next day: no collection has run since

        result = world.post(scheduled_report(datetime.now(UTC) + timedelta(days=1)))

        summary = world.posts()[0]["blocks"]
        assert summary[0]["type"] == "header" and summary[0]["text"]["text"] == f"GPU fleet report · {analysed}"
        assert ":warning: *Not today's analysis*: this is the analysis of " + analysed in json.dumps(summary[1])
        assert "no later collection has finished" in summary[1]["text"]["text"]
        assert result["warnings"][0].startswith(f"this is the analysis of {analysed} (collected 2"), result["warnings"]


def test_a_report_of_todays_analysis_names_its_day_and_warns_of_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    with fault_world(monkeypatch, slack=True) as world:
        analysed = world.day_by_hand()["analysis"]["run"]

        result = world.post()

        summary = world.posts()[0]["blocks"]
        assert summary[0]["text"]["text"] == f"GPU fleet report · {analysed}"
        assert "Not today's analysis" not in json.dumps(summary)
        assert not any("is the analysis of" in warning for warning in result["warnings"])


# 5. Impossible data is a data error, never judged --------------------------------------------------------------------

GIB = 1024.0


def _busy_gpu() -> Gpu:
    return Gpu(noisy(70, 5), noisy(12 * GIB, 100, lo=0, hi=22888))


def test_readings_outside_0_to_100_and_more_gpu_series_than_gpus_are_data_errors_never_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An agent that reports -1 % (its 'no reading' sentinel) and a host whose id carries three GPU series on a type
    with one GPU. Before: 'peak -1 %', not GPU bound, one-click resize; and '3 of 1 GPUs busy', a one-click upsize."""
    managed = {"rightsizer:managed": "true"}
    minus_one = Host(
        "minus-one",
        "us-east-1",
        "g5.2xlarge",
        "render-node",
        "insufficient_data",
        tags=managed,
        gpus=(Gpu(lambda t, r: -1.0, noisy(8 * GIB, 100, lo=0, hi=22888)),),
        cpu=noisy(85, 3),
    )
    three_of_one = Host(
        "three-of-one",
        "us-east-1",
        "g5.xlarge",
        "batch-encoder",
        "insufficient_data",
        tags=managed,
        gpus=(_busy_gpu(),) * 3,
        cpu=noisy(40, 3),
    )
    with fault_world(monkeypatch, [minus_one, three_of_one, *demo_hosts("idle-p3")]) as world:
        world.day_by_hand()

        for key, error in (
            ("minus-one", "GPU 0 utilisation reads -1 to -1 %, outside 0-100 %"),
            ("three-of-one", "3 GPU series (GPUs 0-2) for a g5.xlarge, which has 1 GPU"),
        ):
            rec = world.latest(key)
            assert rec is not None, key
            assert rec.finding is Finding.INSUFFICIENT_DATA, (key, rec.finding, rec.reasons)
            assert rec.reasons[0].startswith(f"data error: {error}"), rec.reasons
            assert rec.action is None and rec.monthly_cost_after == rec.monthly_cost, "nothing judged, nothing saved"
        idle = world.latest("idle-p3")
        assert idle is not None and idle.finding is Finding.IDLE, "hosts with readings a host can give are judged"


# Every one-click guard fails closed (src/rightsizer/domain/guards.py) ------------------------------------------------
# Each source a guard reads is made unavailable in front of moto; the one clicks it guards are held back with the
# reason, and the advice stands on what remains. Hosts: `idle-p3` (a one-click stop) and `one-of-four` (a one-click
# resize) unless a test says otherwise.

MANAGED = {"rightsizer:managed": "true"}


def _guarded(rec: Recommendation | None, *words: str) -> Recommendation:
    """Advice given, its one click held back, the reason saying why."""
    assert rec is not None
    assert rec.action is None and not rec.actionable, (rec.instance_id, rec.finding, rec.reasons)
    assert rec.held_back, rec.reasons
    for word in words:
        assert any(word in reason for reason in rec.reasons), (word, rec.reasons)
    return rec


def _one_click(rec: Recommendation | None, action: str) -> Recommendation:
    assert rec is not None
    assert rec.action is not None and rec.action.value == action, (rec.instance_id, rec.finding, rec.reasons)
    return rec


@pytest.mark.parametrize("answer", [ACCESS_DENIED, THROTTLED, SERVER_ERROR], ids=lambda answer: answer[0])
def test_cloudtrail_unavailable_a_host_resized_in_the_window_is_judged_on_its_current_type_without_one_click(
    monkeypatch: pytest.MonkeyPatch, answer: tuple[str, int]
) -> None:
    """The known failing case: CloudTrail's LookupEvents cannot be read, and a host was resized from a g5.xlarge,
    whose 4 vCPUs its work saturated, to a g5.2xlarge six days ago. Before: judged on CPU measured on the old type,
    a one-click paid upgrade. The agent's series still carry the old InstanceType and the host's LaunchTime falls
    inside the window: it is judged on the current type only, with no one click. A host restarted inside the window
    whose agent config has no InstanceType dimension may have been resized too: no one click either. A host
    started before the window keeps its one click."""
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    resized_at = end - timedelta(days=6)
    resized = Host(
        "resized-up",
        "us-east-1",
        "g5.2xlarge",
        "transcode-01",
        "?",
        tags=MANAGED,
        gpus=(Gpu(noisy(15, 3), noisy(6 * GIB, 100, lo=0, hi=22888)),),
        cpu=lambda t, r: min(100.0, r.gauss(96, 1)) if t < resized_at else min(100.0, r.gauss(45, 3)),
    )
    restarted = replace(demo_hosts("idle-p3")[0], key="restarted", name="legacy-train-02")
    with fault_world(monkeypatch, [resized, restarted, *demo_hosts("idle-p3")], days=8) as world, injected() as faults:
        no_backoff(monkeypatch)
        faults.error("cloudtrail", "LookupEvents", answer)
        world.resized("resized-up", "g5.xlarge", resized_at)
        world.launched("restarted", end - timedelta(days=5))
        world.launched("idle-p3", end - timedelta(days=60))

        world.day_by_hand()

        assert faults.seen["LookupEvents"] >= 1
        rec = _guarded(world.latest("resized-up"), "resized from g5.xlarge to g5.2xlarge")
        assert rec.evidence.cpu_p95 is not None and rec.evidence.cpu_p95 < 60, "the old type's CPU is not judged"
        assert rec.evidence.observed_days <= 6.01
        _guarded(world.latest("restarted"), "resizes could not be read (CloudTrail LookupEvents: ", "it started on")
        _one_click(world.latest("idle-p3"), "stop")
        ranking = world.store.ranking()
        assert ranking is not None
        assert any("resizes could not be read" in warning for warning in ranking.warnings), ranking.warnings


def test_type_offerings_unavailable_hold_back_resizes_and_schedules_and_keep_the_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DescribeInstanceTypeOfferings is denied. Before: the region's plan failed and nothing was advised. A resize's
    target (or a scheduled host's daily restart) may not be offered: those wait; a stop does not rely on it."""
    with fault_world(monkeypatch) as world, injected() as faults:
        faults.error("ec2", "DescribeInstanceTypeOfferings", EC2_DENIED)

        analysis = world.day_by_hand()["analysis"]

        assert faults.seen["DescribeInstanceTypeOfferings"] >= 1
        _guarded(world.latest("one-of-four"), "the types this region offers could not be read (EC2 DescribeInstance")
        _one_click(world.latest("idle-p3"), "stop")
        assert analysis["instances"] == len(DEMO_HOSTS), "the whole region was advised"


def test_reservations_unavailable_hold_back_resizes_and_keep_the_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """DescribeReservedInstances answers 5xx past botocore's retries. Before: a warning, and the resize stayed one
    click although a Reserved Instance may keep billing for the old type. A stop never adds cost: it stays."""
    with fault_world(monkeypatch) as world, injected() as faults:
        no_backoff(monkeypatch)
        faults.error("ec2", "DescribeReservedInstances", EC2_UNAVAILABLE)

        world.day_by_hand()

        assert faults.seen["DescribeReservedInstances"] >= 2, "retried, then given up"
        rec = _guarded(world.latest("one-of-four"), "Reserved Instances could not be read", "no one-click resize")
        assert rec.finding is Finding.OVERPROVISIONED and rec.target_type, "the advice itself stands"
        _one_click(world.latest("idle-p3"), "stop")


def test_hosts_a_shard_cannot_describe_again_are_advised_as_planned_without_one_click(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hours after the plan, the shard describes its hosts again (whether they still run; their tags: opt-out, owner,
    managed); DescribeInstances is throttled past the retries. The hosts are advised as planned, no one click."""
    from rightsizer import bootstrap

    with fault_world(monkeypatch) as world:
        shards = world.plan()
        with injected() as faults:
            no_backoff(monkeypatch)
            faults.error("ec2", "DescribeInstances", EC2_THROTTLED)
            bootstrap.lambda_wiring.cache_clear()  # the shards run in another Lambda container: new clients

            collected = world.collect(shards)
            world.rank()

        assert faults.seen["DescribeInstances"] >= 2
        assert all("could not be described again" in " ".join(r["warnings"]) or not r["instances"] for r in collected)
        for key in ("one-of-four", "idle-p3"):
            _guarded(world.latest(key), "could not be described again before the analysis (EC2 DescribeInstances")
        rec = world.latest("idle-p3")
        assert rec is not None and rec.finding is Finding.IDLE, "the advice itself stands"


def test_series_cloudwatch_answers_in_part_hold_back_that_hosts_one_click(monkeypatch: pytest.MonkeyPatch) -> None:
    """GetMetricData answers the queries of one of a host's series (its GPUs' memory.total) with StatusCode
    InternalError and no values, and everything else in full. Before: a warning, and the stop stayed one click. The
    host's advice rests on incomplete data: no one click; the other host keeps its own."""
    with fault_world(monkeypatch) as world, injected() as faults:
        faults.metric_data_status(world.instance_id("idle-p3"), "nvidia_smi_memory_total")

        world.day_by_hand()

        assert faults.seen["GetMetricData"] >= 4, "each GPU's series"
        incomplete = "CloudWatch answered part of the host's series incompletely (nvidia_smi_memory_total Maximum: "
        rec = _guarded(world.latest("idle-p3"), incomplete + "InternalError")
        assert rec.finding is Finding.IDLE, "the advice itself stands on what was read"
        _one_click(world.latest("one-of-four"), "resize")


def test_cloudwatch_unreachable_leaves_its_shards_recorded_and_unadvised(monkeypatch: pytest.MonkeyPatch) -> None:
    """CloudWatch's endpoint refuses every connection (a closed port): each shard is retried by the Map, recorded and
    skipped; its hosts get no advice (never a guess), and the ranking says which shards were not collected."""
    with fault_world(monkeypatch) as world:
        no_backoff(monkeypatch)
        monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH", CLOSED_PORT)

        outcome = world.run_day()

        assert outcome["status"] == "SUCCEEDED", outcome
        failures = world.store.failures(outcome["run"])
        assert failures and all("127.0.0.1:9" in f["cause"] for f in failures), failures
        assert all(world.latest(key) is None for key in DEMO_HOSTS)
        ranking = world.store.ranking()
        assert ranking is not None and ranking.totals.instances == 0
        assert any("not collected" in warning for warning in ranking.warnings), ranking.warnings


# Idempotent end to end ------------------------------------------------------------------------------------------------


def _snapshot(world: World) -> tuple[set[tuple[str, str]], dict[tuple[str, str], dict[str, Any]]]:
    """Every item's key, and the items that carry advice (latest, by id, history) whole."""
    items = world.items()
    advice = ("LATEST#", "REC#", "INSTANCE#")
    keys = {(item["PK"]["S"], item["SK"]["S"]) for item in items}
    return keys, {(i["PK"]["S"], i["SK"]["S"]): i for i in items if i["PK"]["S"].startswith(advice)}


def _advised(recs: tuple[Recommendation, ...]) -> list[Recommendation]:
    return [replace(rec, generated_at=datetime.min.replace(tzinfo=UTC)) for rec in recs]


def test_each_step_run_twice_the_same_day_leaves_the_same_items_the_same_totals_and_one_post(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The day runs (the state machine: plan, shards, rank) and the report is posted. Then every step runs again the
    same day, as retries, redrives and replayed dead letters do: the day's start, each step by hand (plan, shards,
    rank), the catch-up analysis, the scheduled post. (An operator's own invocation of the report without a schedule
    is a new post, on purpose: tests/integration/test_report_post.py.)"""
    from rightsizer.handlers import analyze, collect

    with fault_world(monkeypatch, slack=True) as world:
        assert world.run_day()["status"] == "SUCCEEDED"
        world.post()
        keys, advice = _snapshot(world)
        ranking, posts = world.store.ranking(), world.posts()
        assert ranking is not None and posts

        started = collect.handler(load_event("collect.json"), FakeLambdaContext())  # the day's schedule, again
        assert started["status"] == "already-started", "one execution a day (its name is the day's)"
        shards = world.plan()
        world.collect(shards)
        world.collect(shards)
        world.rank()
        world.rank()
        catch_up = analyze.handler({**load_event("collect.json"), "detail": "{}"}, FakeLambdaContext())
        assert wait_for(world.sfn, catch_up["execution_arn"])["status"] == "SUCCEEDED", catch_up
        world.post()  # the schedule's retry, or its dead letter replayed: the same event
        world.post()

        assert _snapshot(world) == (keys, advice), "the same items; the advice not rewritten"
        again = world.store.ranking()
        assert again is not None and again.totals == ranking.totals
        assert _advised(again.listed) == _advised(ranking.listed), "the same advice (analysed again: a later time)"
        assert world.posts() == posts, "one post"
