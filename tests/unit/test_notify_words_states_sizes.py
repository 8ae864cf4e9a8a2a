"""The notifier, issue 21: every message names its action (never "resize" for a stop or a schedule), states this
version does not know are skipped and said, not retried into the dead-letter queue, and what reaches Slack is
capped while the audit log keeps the whole text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from rightsizer.adapters.slack.notifier import SlackThreadNotifier
from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import ActionKind
from rightsizer.services import notify, workflow_events
from rightsizer.services.notify import (
    SLACK_TEXT_MAX,
    TRUNCATED,
    Outcome,
    ResizeProgress,
    UnknownState,
    for_slack,
    handle_progress,
    progress_of_execution_end,
)
from rightsizer.services.ports import Approval, ApprovalUpdate
from tests.fakes import MemoryStore
from tests.slack_double import OFFICE_HOURS_PLAN
from tests.unit.test_notify import (
    NOW,
    REC,
    FakeNotifier,
    FakeWebClient,
    approval,
    execution_end,
    progress,
    sample_event,
    store_with,
)

TO_TEXT = {  # what approvals.py writes as to_type for each action
    ActionKind.RESIZE: "g5.2xlarge",
    ActionKind.STOP: "stopped",
    ActionKind.SCHEDULE: "stop/start schedule",
    ActionKind.UNSCHEDULE: "no schedule",
}
NOT_RESIZES = [ActionKind.STOP, ActionKind.SCHEDULE, ActionKind.UNSCHEDULE]


def approval_of(kind: ActionKind, **changes: Any) -> Approval:
    plan = OFFICE_HOURS_PLAN if kind in (ActionKind.SCHEDULE, ActionKind.UNSCHEDULE) else None
    return approval(action=kind, to_type=TO_TEXT[kind], schedule=plan, **changes)


def status_change(status: str, **detail: Any) -> dict[str, Any]:
    return {
        "id": "status-1",
        "detail-type": workflow_events.EXECUTION_STATUS_CHANGE,
        "source": "aws.states",
        "resources": [],
        "detail": execution_end(status, **detail),
    }


def deps_for(store: MemoryStore, web: FakeWebClient) -> workflow_events.Dependencies:
    return workflow_events.Dependencies(store, SlackThreadNotifier(lambda: web, store))


# ------------------------------------------------------------------------------- 1. the action's words


@pytest.mark.parametrize(
    ("kind", "workflow"),
    [
        (ActionKind.STOP, "stop workflow"),
        (ActionKind.SCHEDULE, "schedule workflow"),
        (ActionKind.UNSCHEDULE, "schedule removal workflow"),
        (ActionKind.RESIZE, "resize workflow"),
    ],
)
@pytest.mark.parametrize(
    ("end", "words"),
    [
        (execution_end("TIMED_OUT"), "The {} ran out of time (its TimeoutSeconds); the host may be in any state."),
        (execution_end("ABORTED", error="Operator", cause="stop"), "The {} was stopped by hand (StopExecution)"),
        (execution_end("FAILED", error="States.Runtime", cause="KeyError: boom"), "The {} failed unexpectedly."),
        (execution_end("FAILED", error="ResizeRefused", cause=""), "The {} ended without a reason."),
    ],
)
def test_an_end_no_state_caught_is_told_in_the_words_of_the_approved_action(
    kind: ActionKind, workflow: str, end: dict[str, Any], words: str
) -> None:
    """A status-change event carries no action: the approval's is used, in the reply and the audit entry."""
    store, slack = store_with(approval_of(kind)), FakeNotifier()
    ended = progress_of_execution_end(end)
    assert ended is not None and ended.action is None
    assert "resize" not in ended.message.lower(), "before the approval is read: no action assumed"

    result = handle_progress(ended, store, slack, NOW)

    assert result.outcome is Outcome.POSTED
    ((_, _, reply),) = slack.replies
    assert words.format(workflow) in reply
    assert words.format(workflow) in store.audits[-1].detail
    if kind is not ActionKind.RESIZE:
        ((_, _, root),) = slack.roots
        for text in (reply, root, store.audits[-1].detail):
            assert "resize" not in text.lower(), text


@pytest.mark.parametrize("kind", NOT_RESIZES)
def test_the_handler_says_a_timed_out_stop_or_schedule_ran_out_of_time_as_that(kind: ActionKind) -> None:
    store, web = store_with(approval_of(kind)), FakeWebClient()

    answer = workflow_events.process(status_change("TIMED_OUT"), deps_for(store, web), NOW)

    assert answer["outcome"] == "posted"
    (_, post), (_, update) = web.calls
    expected = f"The {notify.workflow_name(kind)} ran out of time"
    assert expected in post["text"] and "resize" not in post["text"].lower()
    assert "resize" not in update["text"].lower()


@pytest.mark.parametrize("kind", [*NOT_RESIZES, ActionKind.RESIZE])
def test_an_event_takes_its_action_from_its_detail(kind: ActionKind) -> None:
    detail = {**sample_event()["detail"], "action": kind.value, "step": "rollback", "status": "running"}

    assert ResizeProgress.from_detail(detail).action is kind


@pytest.mark.parametrize("kind", NOT_RESIZES)
def test_an_event_without_an_action_takes_the_approvals_never_resize(kind: ActionKind) -> None:
    """Rollback events of the first workflow version, and any older event, carry no `action`."""
    detail = {**sample_event()["detail"], "step": "rolled_back", "status": "rolled_back", "message": "Rolled back."}
    del detail["action"]
    parsed = ResizeProgress.from_detail(detail)
    assert parsed.action is None
    store, slack = store_with(approval_of(kind)), FakeNotifier()

    handle_progress(parsed, store, slack, NOW)

    ((_, _, root),) = slack.roots
    assert root.split(": `", 1)[0].endswith(notify.headline(kind, ApprovalStatus.ROLLED_BACK))
    assert "resize" not in root.lower(), root


def test_an_action_the_event_names_wins_and_an_unknown_one_falls_back_to_the_approvals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warnings: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(workflow_events.logger, "warning", lambda msg, **kw: warnings.append((msg, kw)))
    event = sample_event()
    event["detail"] = {**event["detail"], "action": "hibernate", "status": "failed", "step": "failed"}
    store, web = store_with(approval_of(ActionKind.STOP)), FakeWebClient()

    answer = workflow_events.process(event, deps_for(store, web), NOW)

    assert answer["outcome"] == "posted"
    assert web.calls[-1][1]["text"].startswith(":rotating_light: Stop failed, needs a person")
    assert [msg for msg, _ in warnings] == [
        "workflow event names an action this version does not know: the approval's is used"
    ]


# ------------------------------------------------------------------------------- 2. states this version does not know


@pytest.fixture
def dynamo_store(moto_aws: None) -> Iterator[Any]:
    import boto3

    from rightsizer.adapters.aws.store import DynamoStore

    table = boto3.resource("dynamodb", region_name="us-east-1").create_table(
        TableName="rightsizer",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in ("PK", "SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    )
    yield DynamoStore(table), table


def _rewrite_as_a_newer_version(table: Any, *, status: str | None = None, action: str | None = None) -> None:
    key = {"PK": f"APPROVAL#{REC}", "SK": "APPROVAL"}
    item = table.get_item(Key=key)["Item"]
    if status is not None:
        item["status"] = status
    if action is not None:
        item["data"] = json.dumps({**json.loads(item["data"]), "action": action})
    table.put_item(Item=item)


@pytest.mark.parametrize(
    ("newer", "named"),
    [({"status": "paused"}, "'paused'"), ({"action": "hibernate"}, "'hibernate'")],
    ids=["unknown-status", "unknown-action"],
)
def test_an_approval_in_a_state_this_version_does_not_know_is_logged_and_skipped_not_retried(
    dynamo_store: Any, monkeypatch: pytest.MonkeyPatch, newer: dict[str, str], named: str
) -> None:
    store, table = dynamo_store
    store.create_approval(approval(status="running"))
    _rewrite_as_a_newer_version(table, **newer)
    before = table.get_item(Key={"PK": f"APPROVAL#{REC}", "SK": "APPROVAL"})["Item"]
    warnings: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(workflow_events.logger, "warning", lambda msg, **kw: warnings.append((msg, kw)))
    web = FakeWebClient()
    deps = workflow_events.Dependencies(store, SlackThreadNotifier(lambda: web, store))

    answer = workflow_events.process(sample_event(), deps, NOW)  # returns: EventBridge does not retry

    assert answer["outcome"] == "skipped"
    assert named in answer["detail"] and REC in answer["detail"] and "succeeded" in answer["detail"]
    ((message, logged),) = warnings
    assert message == "workflow event skipped: unknown approval state"
    assert logged["extra"]["recommendation_id"] == REC and named in logged["extra"]["detail"]
    assert web.calls == [], "nothing posted"
    assert store.audit_log(REC) == [], "nothing recorded"
    assert table.get_item(Key={"PK": f"APPROVAL#{REC}", "SK": "APPROVAL"})["Item"] == before, "left as it is"


def test_a_status_change_for_an_unreadable_approval_is_skipped_too(dynamo_store: Any) -> None:
    store, table = dynamo_store
    store.create_approval(approval(status="running"))
    _rewrite_as_a_newer_version(table, status="paused")
    deps = workflow_events.Dependencies(store, SlackThreadNotifier(FakeWebClient, store))

    answer = workflow_events.process(status_change("TIMED_OUT"), deps, NOW)

    assert answer["outcome"] == "skipped" and "execution_timed_out" in answer["detail"]


@pytest.mark.parametrize("status", ["paused", "pending", "start_failed", ""])
def test_an_event_in_a_state_this_version_does_not_know_is_logged_and_skipped(
    monkeypatch: pytest.MonkeyPatch, status: str
) -> None:
    warnings: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(workflow_events.logger, "warning", lambda msg, **kw: warnings.append((msg, kw)))
    event = sample_event()
    event["detail"] = {**event["detail"], "status": status}
    store, web = store_with(approval()), FakeWebClient()

    answer = workflow_events.process(event, deps_for(store, web), NOW)

    assert answer["outcome"] == "skipped"
    assert f"unknown status {status!r}" in answer["detail"] and REC in answer["detail"]
    ((message, logged),) = warnings
    assert message == "workflow event skipped: unknown state" and logged["extra"]["event_id"] == event["id"]
    assert (web.calls, store.updates, store.audits) == ([], [], [])
    with pytest.raises(UnknownState):
        ResizeProgress.from_detail(event["detail"])


class RewrittenMeanwhile(MemoryStore):
    """A newer version rewrote the approval between the notifier's read and its write."""

    def update_approval(self, recommendation_id: str, **changes: Any) -> ApprovalUpdate:
        raise ValueError("'paused' is not a valid ApprovalStatus")


def test_an_approval_rewritten_by_a_newer_version_while_being_updated_is_skipped() -> None:
    store, slack = RewrittenMeanwhile.of(approvals=(approval(),)), FakeNotifier()

    result = handle_progress(progress("succeeded", "succeeded"), store, slack, NOW)

    assert result.outcome is Outcome.SKIPPED and "'paused'" in result.detail
    assert (store.audits, slack.replies) == ([], [])


# ------------------------------------------------------------------------------- 3. sizes


def test_text_for_slack_is_capped_with_a_pointer_to_the_audit_log() -> None:
    assert TRUNCATED == "…(truncated, full text in the audit log)"
    assert for_slack("x" * SLACK_TEXT_MAX) == "x" * SLACK_TEXT_MAX
    cut = for_slack("x" * (SLACK_TEXT_MAX + 1))
    assert len(cut) == SLACK_TEXT_MAX and cut.endswith(TRUNCATED)
    assert len(for_slack("y" * 50_000, 40_000)) == 40_000


def test_a_long_workflow_message_reaches_slack_capped_and_the_audit_log_whole() -> None:
    message = "Rolled back: " + "the workflow explains at length. " * 6000  # ~200 KB, as an EventBridge event allows
    store, web = store_with(approval()), FakeWebClient()
    event = sample_event()
    event["detail"] = {**event["detail"], "message": message, "status": "rolled_back", "step": "rolled_back"}

    answer = workflow_events.process(event, deps_for(store, web), NOW)

    assert answer["outcome"] == "posted"
    (_, post), (_, update) = web.calls
    assert len(post["text"]) <= SLACK_TEXT_MAX and post["text"].endswith(TRUNCATED)
    assert post["text"].startswith(":leftwards_arrow_with_hook: `i-0123456789abcdef0` g5.12xlarge → g5.2xlarge: Rolled")
    assert len(update["text"]) <= SLACK_TEXT_MAX
    assert all(len(block["text"]["text"]) <= SLACK_TEXT_MAX for block in update["blocks"])
    (entry,) = store.audits
    assert entry.detail == f"rolled_back: {message}", "the audit entry holds the whole text"


def test_a_megabyte_message_goes_out_capped_and_is_audited_as_far_as_an_item_holds() -> None:
    message = "é" * 1_000_000  # 2 MB of UTF-8: more than one DynamoDB item (400 KB) holds
    store, slack = store_with(approval()), FakeNotifier()

    handle_progress(replace(progress("failed", "failed"), message=message), store, slack, NOW)

    ((_, _, reply),) = slack.replies
    ((_, _, root),) = slack.roots
    assert len(reply) <= SLACK_TEXT_MAX and reply.endswith(TRUNCATED) and len(root) <= SLACK_TEXT_MAX
    (entry,) = store.audits
    assert len(entry.detail.encode()) <= notify.AUDIT_DETAIL_MAX_BYTES
    assert entry.detail.startswith("failed: éé") and entry.detail.endswith(notify.AUDIT_TRUNCATED)


def test_a_long_cause_of_an_execution_end_is_audited_whole_not_cut_at_1500() -> None:
    cause = "Needs a person: " + "the rollback could not converge. " * 1000  # Step Functions keeps 32,768
    store, slack = store_with(approval()), FakeNotifier()
    ended = progress_of_execution_end(execution_end("FAILED", error="RollbackFailed", cause=cause))
    assert ended is not None

    handle_progress(ended, store, slack, NOW)

    assert store.audits[-1].detail == f"failed: {cause.strip()}"
    ((_, _, reply),) = slack.replies
    assert len(reply) <= SLACK_TEXT_MAX and reply.endswith(TRUNCATED)


def test_the_slack_adapter_itself_never_sends_more_than_slack_takes() -> None:
    web = FakeWebClient()
    notifier = SlackThreadNotifier(lambda: web, store_with())

    notifier.reply("C1", "1.2", "z" * 100_000)
    notifier.update_root("C1", "1.2", REC, "z" * 100_000)

    (_, post), (_, update) = web.calls
    assert len(post["text"]) == notify.SLACK_POST_TEXT_MAX and post["text"].endswith(TRUNCATED)
    assert len(update["blocks"][0]["text"]["text"]) <= SLACK_TEXT_MAX
