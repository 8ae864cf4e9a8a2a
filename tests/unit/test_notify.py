"""The notifier: resize progress events -> approval status, audit entries and the Slack thread."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from rightsizer.adapters.slack.notifier import SlackThreadNotifier
from rightsizer.bootstrap import notify as notify_wiring
from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import ActionKind
from rightsizer.domain.workflow_contract import RESIZE_EVENT_DETAIL_TYPE, RESIZE_EVENT_SOURCE
from rightsizer.handlers import notify as notify_handler
from rightsizer.services import workflow_events
from rightsizer.services.notify import (
    MalformedProgress,
    NotificationFailed,
    Outcome,
    ResizeProgress,
    handle_progress,
    progress_of_execution_end,
)
from rightsizer.services.ports import Approval, AuditEntry
from tests.fakes import MemoryStore
from tests.slack_double import OFFICE_HOURS_PLAN

NOW = datetime(2026, 12, 1, 12, 5, tzinfo=UTC)
REC = "rec-0123456789abcdef0123"
EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:gpu-rightsizer-resize:" + REC
SAMPLE_EVENT = Path(__file__).resolve().parents[2] / "events" / "notify.json"


def approval(**changes: Any) -> Approval:
    base = Approval(
        recommendation_id=REC,
        account_id="123456789012",
        region="us-east-1",
        instance_id="i-0123456789abcdef0",
        from_type="g5.12xlarge",
        to_type="g5.2xlarge",
        approver="U0APPROVER",
        approved_at=datetime(2026, 12, 1, 12, 0, tzinfo=UTC),
        status=ApprovalStatus.RUNNING,
        execution_arn=EXECUTION,
        slack_channel="C0RESIZE",
        slack_ts="1733054400.000100",
    )
    if "status" in changes:
        changes["status"] = ApprovalStatus(changes["status"])
    return replace(base, **changes)


def progress(step: str = "validated", status: str = "running", **changes: Any) -> ResizeProgress:
    base = ResizeProgress(
        recommendation_id=REC,
        instance_id="i-0123456789abcdef0",
        step=step,
        status=ApprovalStatus(status),
        message=f"{step} message",
        from_type="g5.12xlarge",
        to_type="g5.2xlarge",
    )
    return replace(base, **changes)


def store_with(*approvals: Approval) -> MemoryStore:
    return MemoryStore.of(approvals=approvals)


class FakeNotifier:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.replies: list[tuple[str, str, str]] = []
        self.roots: list[tuple[str, str, str]] = []

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        if self.fail:
            raise NotificationFailed("chat_postMessage failed: channel_not_found")
        self.replies.append((channel, thread_ts, text))

    def update_root(self, channel: str, ts: str, recommendation_id: str, text: str) -> None:
        assert recommendation_id.startswith(REC)  # the approval's own id (a removal's ends in -unschedule)
        self.roots.append((channel, ts, text))


# ------------------------------------------------------------------------------- the use-case


def test_progress_moves_a_pending_approval_to_running_and_replies_in_its_thread() -> None:
    store, slack = store_with(approval(status="pending")), FakeNotifier()

    result = handle_progress(progress("validated", "running"), store, slack, NOW)

    assert (result.outcome, result.status) == (Outcome.POSTED, "running")
    assert store.approvals[REC].status == "running"
    assert [(c, ts) for c, ts, _ in slack.replies] == [("C0RESIZE", "1733054400.000100")]
    assert "validated message" in slack.replies[0][2]
    assert "g5.12xlarge → g5.2xlarge" in slack.replies[0][2]
    assert slack.roots == [], "the root message changes only when the resize is over"
    assert store.audits == [AuditEntry(REC, NOW, "rightsizer", "notified_validated", "running: validated message")]


@pytest.mark.parametrize("status", ["succeeded", "rolled_back", "refused", "failed"])
def test_terminal_status_is_recorded_and_the_root_message_updated(status: str) -> None:
    store, slack = store_with(approval()), FakeNotifier()

    result = handle_progress(progress(status, status), store, slack, NOW)

    assert (result.outcome, result.status) == (Outcome.POSTED, status)
    assert store.approvals[REC].status == status
    assert len(slack.replies) == 1
    ((channel, ts, text),) = slack.roots
    assert (channel, ts) == ("C0RESIZE", "1733054400.000100")
    assert "<@U0APPROVER>" in text
    assert "i-0123456789abcdef0" in text


def test_a_repeated_terminal_event_changes_and_posts_nothing() -> None:
    store, slack = store_with(approval(status="succeeded")), FakeNotifier()
    before = store.approvals[REC]

    result = handle_progress(progress("succeeded", "succeeded"), store, slack, NOW)

    assert result.outcome is Outcome.DUPLICATE and not result.closed
    assert (store.approvals[REC], store.audits, slack.replies, slack.roots) == (before, [], [], [])


def test_a_late_running_event_never_reopens_a_finished_resize() -> None:
    store, slack = store_with(approval(status="rolled_back")), FakeNotifier()

    result = handle_progress(progress("modified", "running"), store, slack, NOW)

    assert (result.outcome, result.status) == (Outcome.RECORDED, "rolled_back")
    assert store.approvals[REC].status == "rolled_back"
    assert [e.event for e in store.audits] == ["notified_modified"], "still on the audit trail"
    assert slack.replies == [], "but not posted under the outcome"


def test_unknown_recommendation_is_answered_not_raised() -> None:
    store, slack = store_with(), FakeNotifier()

    result = handle_progress(progress(recommendation_id="rec-unknown"), store, slack, NOW)

    assert result.outcome is Outcome.UNKNOWN
    assert "rec-unknown" in result.detail
    assert (store.updates, store.audits, slack.replies) == ([], [], [])


def test_approval_without_a_thread_still_gets_its_status_and_audit() -> None:
    store, slack = store_with(approval(slack_channel="", slack_ts="")), FakeNotifier()

    result = handle_progress(progress("succeeded", "succeeded"), store, slack, NOW)

    assert (result.outcome, result.status) == (Outcome.RECORDED, "succeeded")
    assert store.approvals[REC].status == "succeeded"
    assert len(store.audits) == 1
    assert slack.replies == []


def test_slack_failure_keeps_the_recorded_status_and_says_why() -> None:
    store, slack = store_with(approval()), FakeNotifier(fail=True)

    result = handle_progress(progress("refused", "refused"), store, slack, NOW)

    assert (result.outcome, result.status) == (Outcome.RECORDED, "refused")
    assert "channel_not_found" in result.detail
    assert store.approvals[REC].status == "refused"


def test_execution_arn_is_filled_in_once_from_the_event() -> None:
    store = store_with(approval(execution_arn="", status="pending"))
    handle_progress(progress(execution_arn=EXECUTION), store, FakeNotifier(), NOW)
    assert store.approvals[REC].execution_arn == EXECUTION

    handle_progress(progress("modified", execution_arn="arn:other"), store, FakeNotifier(), NOW)
    assert store.approvals[REC].execution_arn == EXECUTION


@pytest.mark.parametrize(
    ("detail", "reason"),
    [
        ({"recommendation_id": REC}, "lacks"),
        ({**json.loads(SAMPLE_EVENT.read_text())["detail"], "status": "exploded"}, "unknown status .exploded."),
        ({**json.loads(SAMPLE_EVENT.read_text())["detail"], "recommendation_id": ""}, "empty recommendation_id"),
    ],
)
def test_malformed_details_are_rejected_with_a_reason(detail: dict[str, Any], reason: str) -> None:
    with pytest.raises(MalformedProgress, match=reason):
        ResizeProgress.from_detail(detail)


# ------------------------------------------------------------------------------- the handler


class FakeWebClient:
    """The two slack_sdk WebClient methods the notifier uses."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def chat_postMessage(self, **kwargs: Any) -> dict[str, Any]:
        if self.error:
            raise self.error
        self.calls.append(("chat_postMessage", kwargs))
        return {"ok": True, "ts": "1733054999.000200"}

    def chat_update(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("chat_update", kwargs))
        return {"ok": True}


def sample_event() -> dict[str, Any]:
    event: dict[str, Any] = json.loads(SAMPLE_EVENT.read_text())
    return event


def test_sample_event_matches_what_the_workflow_puts() -> None:
    event = sample_event()
    assert (event["source"], event["detail-type"]) == (RESIZE_EVENT_SOURCE, RESIZE_EVENT_DETAIL_TYPE)
    parsed = workflow_events.progress_from_event(event)
    assert parsed is not None and parsed.recommendation_id == REC
    assert parsed.execution_arn == EXECUTION


def test_process_posts_the_sample_event_through_a_slack_client() -> None:
    web = FakeWebClient()
    store = store_with(approval())
    deps = workflow_events.Dependencies(store, SlackThreadNotifier(lambda: web, store))

    answer = workflow_events.process(sample_event(), deps, NOW)

    assert answer == {"outcome": "posted", "status": "succeeded", "detail": ""}
    (post, post_args), (update, update_args) = web.calls
    assert (post, post_args["channel"], post_args["thread_ts"]) == ("chat_postMessage", "C0RESIZE", "1733054400.000100")
    assert post_args["unfurl_links"] is False
    assert (update, update_args["channel"], update_args["ts"]) == ("chat_update", "C0RESIZE", "1733054400.000100")
    assert update_args["blocks"][0]["text"]["text"] == update_args["text"]


def test_an_outcome_on_a_daily_report_changes_only_that_recommendations_line() -> None:
    from rightsizer.services.ports import PostedMessage

    web = FakeWebClient()
    report = PostedMessage(
        channel="C0RESIZE",
        ts="1733054400.000100",
        text="GPU fleet report",
        blocks=(
            {"type": "section", "block_id": "rec:rec-other", "text": {"type": "mrkdwn", "text": "other host"}},
            {"type": "actions", "block_id": "act:rec-other", "elements": []},
            {"type": "section", "block_id": f"rec:{REC}", "text": {"type": "mrkdwn", "text": "this host"}},
            {"type": "context", "block_id": f"act:{REC}", "elements": [{"type": "mrkdwn", "text": "started"}]},
        ),
        recommendation_ids=("rec-other", REC),
    )
    store = store_with(approval())
    store.messages[(report.channel, report.ts)] = report
    deps = workflow_events.Dependencies(store, SlackThreadNotifier(lambda: web, store))

    workflow_events.process(sample_event(), deps, NOW)

    (_, update_args) = web.calls[-1]
    blocks = update_args["blocks"]
    assert [b["block_id"] for b in blocks] == ["rec:rec-other", "act:rec-other", f"rec:{REC}", f"act:{REC}"]
    assert blocks[1]["type"] == "actions", "the other recommendation keeps its buttons"
    assert "Resized" in json.dumps(blocks[3]) and update_args["text"] == "GPU fleet report"
    saved = store.message(report.channel, report.ts)
    assert saved is not None and "Resized" in json.dumps(saved.blocks), "the saved copy follows"


def execution_end(status: str, **detail: Any) -> dict[str, Any]:
    run = {"recommendation_id": REC, "instance_id": "i-0123456789abcdef0", "expected_type": "g5.12xlarge",
           "target_type": "g5.2xlarge"}  # fmt: skip
    return {"status": status, "executionArn": EXECUTION, "name": REC, "input": json.dumps(run), **detail}


@pytest.mark.parametrize(
    ("detail", "status", "words"),
    [
        (
            execution_end(
                "SUCCEEDED",
                output=json.dumps({"to_type": "g5.2xlarge", "state": "running", "health": "status checks ok"}),
            ),
            "succeeded",
            "is now g5.2xlarge and running",
        ),
        (execution_end("FAILED", error="ResizeRefused", cause="x is not tagged"), "refused", "x is not tagged"),
        (
            execution_end("FAILED", error="InvalidRequest", cause="The execution input lacks a field"),
            "refused",
            "lacks a field",
        ),
        (execution_end("FAILED", error="ResizeUnchanged", cause="Nothing was changed"), "unchanged", "Nothing"),
        (execution_end("FAILED", error="AuditUnavailable", cause="Nothing was changed: audit"), "unchanged", "audit"),
        (execution_end("FAILED", error="ResizeRolledBack", cause="Rolled back: ok"), "rolled_back", "Rolled back"),
        (execution_end("FAILED", error="RollbackFailed", cause="Needs a person"), "failed", "Needs a person"),
        (execution_end("FAILED", error="States.Runtime", cause="KeyError: boom"), "failed", "failed unexpectedly"),
        (execution_end("TIMED_OUT"), "failed", "ran out of time"),
        (execution_end("ABORTED", error="Operator", cause="stop"), "failed", "stopped by hand"),
    ],
)
def test_every_end_of_an_execution_has_an_outcome_in_words(detail: dict[str, Any], status: str, words: str) -> None:
    progress = progress_of_execution_end(detail)

    assert progress is not None
    assert (progress.recommendation_id, progress.status, progress.execution_arn) == (REC, status, EXECUTION)
    assert (progress.from_type, progress.to_type) == ("g5.12xlarge", "g5.2xlarge")
    assert words in progress.message
    assert "States." not in progress.message and "KeyError" not in progress.message, "no error names for people"


def test_a_running_execution_has_no_outcome_and_one_without_a_recommendation_is_malformed() -> None:
    assert progress_of_execution_end(execution_end("RUNNING")) is None
    with pytest.raises(MalformedProgress, match="recommendation_id"):
        progress_of_execution_end({"status": "FAILED", "input": "{not json"})


def test_an_outcome_arriving_twice_is_recorded_and_posted_once() -> None:
    store, slack = store_with(approval()), FakeNotifier()

    first = handle_progress(progress("rolled_back", "rolled_back"), store, slack, NOW)
    second = handle_progress(progress("execution_failed", "rolled_back"), store, slack, NOW)
    late = handle_progress(progress("execution_failed", "failed"), store, slack, NOW)

    assert (first.closed, second.outcome, late.outcome) == (True, Outcome.DUPLICATE, Outcome.RECORDED)
    assert store.approvals[REC].status is ApprovalStatus.ROLLED_BACK, "a second, different outcome changes nothing"
    assert len(slack.roots) == 1


def test_process_answers_a_malformed_event_without_raising() -> None:
    deps = workflow_events.Dependencies(store_with(), SlackThreadNotifier(FakeWebClient, store_with()))
    answer = workflow_events.process({"id": "x", "detail": "not an object"}, deps, NOW)
    assert answer["outcome"] == "malformed"


def test_slack_errors_and_missing_configuration_become_notification_failures() -> None:
    from slack_sdk.errors import SlackApiError

    from rightsizer.adapters.slack.secrets import SlackNotConfigured

    failing = FakeWebClient(SlackApiError("boom", {"ok": False, "error": "not_in_channel"}))  # type: ignore[no-untyped-call]
    with pytest.raises(NotificationFailed, match="not_in_channel") as failed:
        SlackThreadNotifier(lambda: failing, store_with()).reply("C1", "1.2", "hi")
    assert "in channel C1 (not_in_channel): the app is not a member of C1: send `/invite" in str(failed.value)

    def unconfigured() -> Any:
        raise SlackNotConfigured("secret stack/slack has no value yet")

    with pytest.raises(NotificationFailed, match="has no value yet"):
        SlackThreadNotifier(unconfigured, store_with()).reply("C1", "1.2", "hi")


def test_handler_wires_dynamodb_and_slack(moto_aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Lambda entry point end to end: settings from the environment, the store on (moto) DynamoDB."""
    import boto3

    from rightsizer.adapters.aws.store import DynamoStore

    dynamodb = boto3.resource("dynamodb", region_name="us-east-1")
    table = dynamodb.create_table(
        TableName="rightsizer",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in ("PK", "SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    )
    store = DynamoStore(table)
    store.create_approval(approval(status="running"))
    web = FakeWebClient()
    monkeypatch.setenv("TABLE_NAME", "rightsizer")
    monkeypatch.setenv("SLACK_SECRET_NAME", "stack/slack")
    notify_handler.dependencies.cache_clear()
    secrets_read: list[str] = []

    def fake_slack_client(secret_name: str, api_url: str) -> FakeWebClient:
        secrets_read.append(secret_name)
        assert api_url == "https://slack.com/api/"  # the default, unless SLACK_API_URL says otherwise
        return web

    monkeypatch.setattr(notify_wiring, "slack_client", fake_slack_client)

    class Context:
        function_name = "gpu-rightsizer-notify"
        memory_limit_in_mb = 256
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:gpu-rightsizer-notify"
        aws_request_id = "req-1"

    try:
        answer = notify_handler.handler(sample_event(), Context())
    finally:
        notify_handler.dependencies.cache_clear()  # it holds moto-backed clients

    assert answer["outcome"] == "posted"
    stored = store.approval(REC)
    assert stored is not None and stored.status == "succeeded"
    assert [e.event for e in store.audit_log(REC)] == ["notified_succeeded"]
    assert secrets_read == ["stack/slack"]
    assert [name for name, _ in web.calls] == ["chat_postMessage", "chat_update"]


# ------------------------------------------------------------------------------- stops and schedules

PLAN = OFFICE_HOURS_PLAN


@pytest.mark.parametrize(
    ("kind", "status", "headline"),
    [
        (ActionKind.STOP, "succeeded", "Stopped"),
        (ActionKind.STOP, "unchanged", "Stop failed, nothing was changed"),
        (ActionKind.SCHEDULE, "succeeded", "Scheduled"),
        (ActionKind.SCHEDULE, "refused", "Schedule refused"),
        (ActionKind.UNSCHEDULE, "failed", "Schedule removal failed, needs a person"),
        (ActionKind.RESIZE, "rolled_back", "Resize rolled back"),
    ],
)
def test_every_outcome_is_headlined_in_the_words_of_its_action(kind: ActionKind, status: str, headline: str) -> None:
    store, slack = store_with(approval(action=kind, to_type="stopped")), FakeNotifier()

    handle_progress(progress(status, status), store, slack, NOW)

    ((_, _, text),) = slack.roots
    assert text.split(": `", 1)[0].endswith(headline), text


def test_a_created_schedule_joins_the_listing_and_a_removed_one_leaves_it() -> None:
    created = approval(
        action=ActionKind.SCHEDULE, to_type="stop/start schedule", schedule=PLAN, instance_name="notebook-team-a"
    )
    removal = approval(
        recommendation_id=f"{REC}-unschedule", action=ActionKind.UNSCHEDULE, to_type="no schedule", schedule=PLAN
    )
    store = store_with(created, removal)

    handle_progress(progress("scheduled", "succeeded"), store, FakeNotifier(), NOW)
    handle_progress(progress("scheduled", "succeeded"), store, FakeNotifier(), NOW)  # delivered twice: one record

    (record,) = store.schedules()
    assert (record.instance_id, record.plan, record.created_by) == ("i-0123456789abcdef0", PLAN, "U0APPROVER")
    assert record.instance_name == "notebook-team-a"  # listed, and found by `act NAME --remove-schedule`, by its Name
    assert (record.stop_name, record.start_name) == (
        "rightsizer-i-0123456789abcdef0-stop",
        "rightsizer-i-0123456789abcdef0-start",
    )

    handle_progress(
        progress("unscheduled", "succeeded", recommendation_id=f"{REC}-unschedule"), store, FakeNotifier(), NOW
    )

    assert store.schedules() == []


def test_a_schedule_that_failed_is_not_listed() -> None:
    store = store_with(approval(action=ActionKind.SCHEDULE, to_type="stop/start schedule", schedule=PLAN))

    handle_progress(progress("rolled_back", "rolled_back"), store, FakeNotifier(), NOW)

    assert store.schedules() == []


def test_a_straggler_of_an_earlier_attempt_never_closes_a_retry() -> None:
    # The first attempt failed and an approver retried: attempt 2 runs. The first execution's late "failed" event
    # must leave attempt 2 alone, and nothing about it reaches the thread.
    retried = approval(status="running", attempt=2, execution_arn=f"{EXECUTION}-attempt-2")
    store, slack = store_with(retried), FakeNotifier()

    late = handle_progress(progress("rollback_failed", "failed", execution_arn=EXECUTION), store, slack, NOW)
    current = handle_progress(
        progress("succeeded", "succeeded", execution_arn=f"{EXECUTION}-attempt-2"), store, slack, NOW
    )

    assert late.outcome is Outcome.STALE
    assert current.outcome is Outcome.POSTED and current.closed
    stored = store.approval(REC)
    assert stored is not None and (stored.status, stored.attempt) == (ApprovalStatus.SUCCEEDED, 2)
    assert len(slack.replies) == 1 and "succeeded message" in slack.replies[0][2]
