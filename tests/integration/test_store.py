"""The DynamoDB store's access patterns (approvals, decisions, posted messages), on the table template.yaml declares."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from demo.aws_table import create_table_from_template

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.domain.approval import ApprovalStatus, allowed
from rightsizer.domain.models.advice import DecisionKind
from rightsizer.services.ports import Approval, Decision, PostedMessage
from tests.fakes import MemoryStore
from tests.slack_double import recommendation

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ARN = "arn:aws:states:us-east-1:123456789012:execution:gpu-rightsizer-resize:rec-a"


def approval(rec_id: str) -> Approval:
    return Approval(rec_id, "123456789012", "us-east-1", "i-0123456789abcdef0", "g5.12xlarge", "g5.2xlarge", "U1", NOW)


@pytest.fixture
def store(moto_aws: None) -> DynamoStore:
    table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
    return DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(table))


def test_an_approval_is_created_once_and_listed_while_open(store: DynamoStore) -> None:
    assert store.create_approval(approval("rec-a")) is True
    assert store.create_approval(approval("rec-a")) is False  # a double click loses the conditional write
    assert store.create_approval(approval("rec-b")) is True
    store.update_approval("rec-b", status=ApprovalStatus.RUNNING)

    assert sorted(a.recommendation_id for a in store.pending_approvals()) == ["rec-a", "rec-b"]

    store.update_approval("rec-a", status=ApprovalStatus.SUCCEEDED)
    assert [a.recommendation_id for a in store.pending_approvals()] == ["rec-b"]


def test_an_outcome_is_final(store: DynamoStore) -> None:
    store.create_approval(approval("rec-c"))
    store.update_approval("rec-c", status=ApprovalStatus.REFUSED, detail="type changed")

    late = store.update_approval("rec-c", status=ApprovalStatus.RUNNING, detail="", execution_arn=ARN)

    assert not late.moved
    assert late.approval.status is ApprovalStatus.REFUSED and late.approval.detail == "type changed"
    assert late.approval.execution_arn == ARN, "fields outside the lifecycle are still written"
    assert store.pending_approvals() == []


def test_an_outcome_is_written_exactly_once(store: DynamoStore) -> None:
    store.create_approval(approval("rec-d"))

    first = store.update_approval("rec-d", status=ApprovalStatus.ROLLED_BACK)
    again = store.update_approval("rec-d", status=ApprovalStatus.ROLLED_BACK)
    other = store.update_approval("rec-d", status=ApprovalStatus.FAILED)

    assert (first.moved, again.moved, other.moved) == (True, False, False)
    assert other.approval.status is ApprovalStatus.ROLLED_BACK


def test_the_execution_arn_is_written_once_and_the_thread_whenever_given(store: DynamoStore) -> None:
    store.create_approval(approval("rec-e"))

    store.update_approval("rec-e", execution_arn=ARN, slack_channel="C1", slack_ts="1.1")
    update = store.update_approval("rec-e", execution_arn="arn:other", slack_ts="2.2")

    written = update.approval
    assert (written.execution_arn, written.slack_channel, written.slack_ts) == (ARN, "C1", "2.2")
    assert store.approval("rec-e") == update.approval


def test_updating_an_unknown_approval_raises_instead_of_creating_one(store: DynamoStore) -> None:
    with pytest.raises(KeyError):
        store.update_approval("rec-nope", status=ApprovalStatus.RUNNING)
    with pytest.raises(KeyError):
        store.update_approval("rec-nope", slack_ts="1.1")
    assert store.approval("rec-nope") is None


@pytest.mark.parametrize("start", list(ApprovalStatus))
@pytest.mark.parametrize("requested", list(ApprovalStatus))
def test_the_store_and_the_fake_follow_the_same_lifecycle(
    store: DynamoStore, start: ApprovalStatus, requested: ApprovalStatus
) -> None:
    """Every (current, requested) pair: DynamoDB's conditional write and the in-memory fake agree with
    domain.approval.allowed."""
    rec_id = f"rec-{start}-{requested}"
    fake = MemoryStore.of(approvals=(approval(rec_id),))
    store.create_approval(approval(rec_id))
    for writer in (store, fake):
        writer.update_approval(rec_id, status=start)  # from pending, every status is reachable in one write
        assert writer.approval(rec_id) is not None

    results = [writer.update_approval(rec_id, status=requested) for writer in (store, fake)]

    expected = requested if allowed(start, requested) else start
    assert [r.approval.status for r in results] == [expected, expected]
    assert [r.moved for r in results] == [allowed(start, requested)] * 2


def test_posted_messages_are_kept_indexed_by_recommendation_and_resumable(store: DynamoStore) -> None:
    block = {"type": "actions", "block_id": "act:rec-a", "elements": []}
    message = PostedMessage("C1", "1.1", "report", (block,), ("rec-a",))

    store.save_message(message, NOW, post_key="C1#2026-12-01T09:00:00Z", index=0)
    store.replace_message(PostedMessage("C1", "1.1", "report", ({**block, "type": "context"},), ("rec-a",)))
    store.replace_message(PostedMessage("C1", "9.9", "never saved", (), ()))

    [shown] = store.messages_showing("rec-a")
    assert (shown.ts, shown.blocks[0]["type"]) == ("1.1", "context")
    assert store.report_progress("C1#2026-12-01T09:00:00Z") == {0: "1.1"}
    assert store.message("C1", "9.9") is None


def test_a_recommendations_decisions_are_read_by_key_and_all_of_them_listed(store: DynamoStore) -> None:
    rec, other = recommendation(1), recommendation(2)
    later = NOW + timedelta(days=3)

    def decision(kind: DecisionKind, on: str, until: datetime | None = None, about: str | None = None) -> Decision:
        return Decision(kind, "123456789012", "us-east-1", on, "U1", NOW, until, about)

    store.put_decision(decision(DecisionKind.SNOOZE, rec.instance_id, NOW + timedelta(hours=1)))
    store.put_decision(decision(DecisionKind.SNOOZE, rec.instance_id, later))  # replaces the host's earlier snooze
    store.put_decision(decision(DecisionKind.DISMISS, rec.instance_id, about=rec.recommendation_id))
    store.put_decision(decision(DecisionKind.DISMISS, rec.instance_id, about="rec-of-yesterday"))
    store.put_decision(decision(DecisionKind.SNOOZE, other.instance_id, NOW + timedelta(hours=2)))

    about = store.decisions_about(rec, NOW)
    assert sorted((d.kind, d.until, d.recommendation_id) for d in about) == [
        ("dismiss", None, rec.recommendation_id),
        ("snooze", later, None),
    ], "the host's snooze and this advice's dismissal, not an earlier advice's"
    assert store.decisions_about(other, NOW + timedelta(hours=3)) == [], "an expired snooze is not in force"
    assert len(store.active_decisions(NOW)) == 4
    assert {d.instance_id for d in store.active_decisions(NOW + timedelta(hours=2))} == {rec.instance_id}


def test_an_outcome_other_than_success_opens_a_new_attempt_once(store: DynamoStore) -> None:
    store.create_approval(approval("rec-r"))
    store.update_approval("rec-r", status=ApprovalStatus.RUNNING, execution_arn=ARN)
    store.update_approval("rec-r", status=ApprovalStatus.FAILED, detail="needs a person")
    later = NOW + timedelta(hours=2)

    retried = store.retry_approval("rec-r", 1, "U2", later)
    twice = store.retry_approval("rec-r", 1, "U3", later)  # a double click: one attempt opens

    assert retried is not None and twice is None
    assert (retried.status, retried.attempt, retried.approver, retried.approved_at) == (
        ApprovalStatus.PENDING,
        2,
        "U2",
        later,
    )
    assert retried.execution_arn == "" and retried.detail == ""
    assert [a.recommendation_id for a in store.pending_approvals()] == ["rec-r"]
    second = ARN.replace("rec-a", "rec-r-attempt-2")
    stale = store.update_approval("rec-r", status=ApprovalStatus.FAILED, execution_arn=ARN, attempt=1)
    assert stale.moved is False and stale.approval.execution_arn == "", "the first attempt writes nothing now"
    moved = store.update_approval("rec-r", status=ApprovalStatus.RUNNING, execution_arn=second, attempt=2)
    assert moved.moved and moved.approval.execution_arn == second
    store.update_approval("rec-r", status=ApprovalStatus.SUCCEEDED, attempt=2)
    assert store.retry_approval("rec-r", 2, "U2", later) is None, "a success is done"


def test_approvals_written_before_attempts_existed_read_as_the_first(store: DynamoStore) -> None:
    store.create_approval(approval("rec-old"))
    store._table.update_item(  # as an item of the earlier version: no attempt attribute
        Key={"PK": "APPROVAL#rec-old", "SK": "APPROVAL"}, UpdateExpression="REMOVE attempt"
    )

    found = store.approval("rec-old")
    assert found is not None and found.attempt == 1
    assert store.update_approval("rec-old", status=ApprovalStatus.RUNNING, attempt=1).moved
