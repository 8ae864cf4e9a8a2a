"""The daily pipeline keeps its word under faults: the real state machine executed by moto, the real Collect, Analyze
and Report handlers behind it, AWS faults answered in front of moto (tests/faults.py) and Slack's errors by its
double. Each test names the fault, then what the pipeline must still leave behind."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

import pytest
from demo.fleet import Gpu, Host, noisy

from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import Finding, Recommendation
from rightsizer.services.ports import Approval
from tests.faults import injected
from tests.integration.fault_world import demo_hosts, fault_world, scheduled_report

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
