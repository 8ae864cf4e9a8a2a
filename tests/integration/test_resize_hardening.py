"""The resize workflow under races and faults: the real ASL in moto, and its outcomes through the real notifier.

Each end of an execution must reach the audit log and the approval (closed once, whatever the delivery
order), and release the per-instance lock; at most one workflow touches an instance at a time.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models import EC2Backend

from rightsizer.adapters.aws.workflow import StepFunctionsResizeWorkflow
from rightsizer.domain.approval import ApprovalStatus
from rightsizer.services import workflow_events
from rightsizer.services.ports import Approval
from tests.integration.resize_world import (
    ACCOUNT,
    ASL_PATH,
    REGION,
    Aws,
    RecordingSlack,
    RetryWaits,
    approval,
    audit_events,
    deliver_everything,
    ec2_attempts,
    resize,
    wait_for,
)

pytestmark = pytest.mark.integration

HOLD_TIMEOUT_S = 20.0  # bounds the thread hand-overs below; they take milliseconds


def lock_item(aws: Aws, instance_id: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = aws.table.get_item(Key={"PK": f"LOCK#{instance_id}", "SK": "LOCK"}).get("Item")
    return item


def states_entered(aws: Aws, arn: str, name: str) -> int:
    history = aws.sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return sum(1 for e in history if e.get("stateEnteredEventDetails", {}).get("name") == name)


def fail_stop_with(monkeypatch: pytest.MonkeyPatch, code: str, message: str, times: int | None = None) -> list[str]:
    """Make StopInstances fail with an EC2 error `times` times (None: always); returns the failed calls."""
    recorded_stop = EC2Backend.stop_instances
    failed: list[str] = []

    def stop_instances(self: EC2Backend, instance_ids: list[str]) -> Any:
        if times is None or len(failed) < times:
            failed.extend(instance_ids)
            raise EC2ClientError(code, message)
        return recorded_stop(self, instance_ids)

    monkeypatch.setattr(EC2Backend, "stop_instances", stop_instances)
    return failed


# ------------------------------------------------------------------------------- one workflow per instance


def test_concurrent_approvals_for_one_instance_resize_it_once(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    instance_id = aws.launch("g5.12xlarge")
    first = approval(instance_id, to_type="g5.2xlarge", rec_id=f"rec-first-{instance_id[2:]}")
    second = approval(instance_id, to_type="g5.4xlarge", rec_id=f"rec-second-{instance_id[2:]}")
    recorded_stop = EC2Backend.stop_instances
    seen: dict[str, Any] = {}

    def stop_instances(self: EC2Backend, instance_ids: list[str]) -> Any:
        # The first resize holds the instance and is about to stop it: the second approval runs to its end now.
        if "second" not in seen:
            seen["lock"] = lock_item(aws, instance_id)
            seen["second"] = wait_for(aws, aws.workflow().start(second))
        return recorded_stop(self, instance_ids)

    monkeypatch.setattr(EC2Backend, "stop_instances", stop_instances)

    result = resize(aws, first)

    assert result["status"] == "SUCCEEDED", result
    assert aws.describe(instance_id) == ("g5.2xlarge", "running")
    assert aws.ec2_calls.kinds == ["stop", "modify", "start"], "one resize touched the host"
    assert seen["lock"]["holder"] == result["executionArn"]
    refused = seen["second"]
    assert (refused["status"], refused["error"]) == ("FAILED", "ResizeRefused")
    assert f"another workflow is changing {instance_id} (recommendation {first.recommendation_id}" in refused["cause"]
    assert "so this resize to g5.4xlarge is refused" in refused["cause"]  # it names its own action
    assert audit_events(aws, second.recommendation_id) == ["resize_started", "refused"]
    assert lock_item(aws, instance_id) is None, "released at the end"


def test_a_refusal_never_releases_another_executions_lock(aws: Aws) -> None:
    instance_id = aws.launch()
    holder = f"arn:aws:states:{REGION}:{ACCOUNT}:execution:gpu-rightsizer-resize:rec-other"
    aws.table.put_item(
        Item={
            "PK": f"LOCK#{instance_id}",
            "SK": "LOCK",
            "holder": holder,
            "recommendation_id": "rec-other",
            "approver": "U0SOMEONE",
            "expires_at": "2999-01-01T00:00:00Z",
        }
    )

    result = resize(aws, approval(instance_id))

    assert (result["status"], result["error"]) == ("FAILED", "ResizeRefused")
    assert "approved by U0SOMEONE" in result["cause"]
    assert aws.ec2_calls.calls == []
    held = lock_item(aws, instance_id)
    assert held is not None and held["holder"] == holder


def test_an_expired_lock_is_taken_over(aws: Aws) -> None:
    instance_id = aws.launch()
    aws.table.put_item(
        Item={"PK": f"LOCK#{instance_id}", "SK": "LOCK", "holder": "arn:gone", "expires_at": "2020-01-01T00:00:00Z"}
    )

    result = resize(aws, approval(instance_id))

    assert result["status"] == "SUCCEEDED", result
    assert lock_item(aws, instance_id) is None


def test_the_lock_outlives_the_execution_timeout() -> None:
    """A lock may only expire once its execution cannot be running any more."""
    from rightsizer.adapters.aws.workflow import EXECUTION_TIMEOUT, LOCK_TTL

    definition = json.loads(ASL_PATH.read_text())
    assert definition["TimeoutSeconds"] == EXECUTION_TIMEOUT.total_seconds()
    assert LOCK_TTL > EXECUTION_TIMEOUT
    workflow = StepFunctionsResizeWorkflow(
        object(), f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:s", clock=lambda: datetime(2026, 12, 1, tzinfo=UTC)
    )
    payload = workflow.execution_input(approval("i-0abc"), "running")
    assert datetime.fromisoformat(payload["lock_expires_at"]) - datetime(2026, 12, 1, tzinfo=UTC) == LOCK_TTL


# ------------------------------------------------------------------------------- throttling, timeouts, terminated hosts


def test_a_throttled_stop_is_retried_with_jittered_backoff_and_succeeds(
    aws: Aws, monkeypatch: pytest.MonkeyPatch, retry_waits: RetryWaits
) -> None:
    throttled = fail_stop_with(monkeypatch, "RequestLimitExceeded", "Request limit exceeded.", times=2)
    instance_id = aws.launch()

    result = resize(aws, approval(instance_id))

    assert result["status"] == "SUCCEEDED", result
    assert throttled == [instance_id, instance_id]
    assert aws.describe(instance_id) == ("g5.2xlarge", "running")
    assert aws.ec2_calls.kinds == ["stop", "modify", "start"]
    # FULL jitter: each wait is drawn from [0, IntervalSeconds x BackoffRate^n], capped by MaxDelaySeconds.
    (retrier,) = json.loads(ASL_PATH.read_text())["States"]["StopInstance"]["Retry"]
    caps = [min(retrier["IntervalSeconds"] * retrier["BackoffRate"] ** n, retrier["MaxDelaySeconds"]) for n in (0, 1)]
    assert len(retry_waits.seconds) == 2
    assert all(0 <= wait <= cap for wait, cap in zip(retry_waits.seconds, caps, strict=True))


def test_every_ec2_call_retries_ec2_errors_with_jitter_and_every_task_has_a_timeout() -> None:
    definition = json.loads(ASL_PATH.read_text())
    assert 0 < definition["TimeoutSeconds"] <= 4 * 3600
    for name, state in definition["States"].items():
        if state["Type"] != "Task":
            continue
        assert 0 < state["TimeoutSeconds"] <= 300, name
        if ":aws-sdk:ec2:" in state["Resource"]:
            (retrier,) = state["Retry"]
            # Step Functions reports every EC2 error, throttling included, as Ec2.Ec2Exception (moto: ec2.ec2Exception)
            assert {"Ec2.Ec2Exception", "ec2.ec2Exception", "States.Timeout"} <= set(retrier["ErrorEquals"]), name
            assert retrier["JitterStrategy"] == "FULL" and retrier["MaxAttempts"] >= 3, name
            assert retrier["MaxDelaySeconds"] <= 60, name


def test_wait_loops_are_bounded_by_the_input_checks(aws: Aws) -> None:
    instance_id = aws.launch()
    request = approval(instance_id)
    payload = aws.workflow().execution_input(request, "running")
    for field_name, value in (("max_polls", 31), ("wait_seconds", 61)):
        name = f"unbounded-{field_name}-{instance_id}"
        arn = aws.sfn.start_execution(
            stateMachineArn=aws.state_machine_arn, name=name, input=json.dumps({**payload, field_name: value})
        )["executionArn"]
        assert (wait_for(aws, arn)["error"]) == "InvalidRequest"
    assert aws.ec2_calls.calls == []
    with pytest.raises(ValueError, match="max_polls"):
        aws.workflow(max_polls=31)


def test_a_host_terminated_during_the_stop_fails_at_once(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    def stop_instances(self: EC2Backend, instance_ids: list[str]) -> Any:
        return self.terminate_instances(instance_ids)  # as with InstanceInitiatedShutdownBehavior=terminate

    monkeypatch.setattr(EC2Backend, "stop_instances", stop_instances)
    instance_id = aws.launch()
    request = approval(instance_id)

    result = resize(aws, request, max_polls=30)

    assert (result["status"], result["error"]) == ("FAILED", "RollbackFailed")
    assert f"{instance_id} is terminated (terminated, not stopped)" in result["cause"]
    assert states_entered(aws, result["executionArn"], "DescribeAfterStop") == 1, "no polling of a terminated host"
    assert states_entered(aws, result["executionArn"], "RollbackDescribe") == 1
    assert [e["detail"]["status"] for e in aws.events()][-1] == "failed"
    assert lock_item(aws, instance_id) is None


def test_a_stop_that_fails_is_not_called_a_rollback(
    aws: Aws, monkeypatch: pytest.MonkeyPatch, retry_waits: RetryWaits
) -> None:
    failed = fail_stop_with(monkeypatch, "UnauthorizedOperation", "You are not authorized to perform this operation.")
    instance_id = aws.launch()
    request = approval(instance_id)

    result = resize(aws, request)

    assert (result["status"], result["error"]) == ("FAILED", "ResizeUnchanged")
    assert result["cause"].startswith(f"Nothing was changed: {instance_id} is still g5.12xlarge and running.")
    assert "stop failed" in result["cause"]
    assert len(failed) == ec2_attempts("StopInstance") and len(retry_waits.seconds) == len(failed) - 1
    assert aws.ec2_calls.calls == []
    assert audit_events(aws, request.recommendation_id)[-2:] == ["rollback_started", "unchanged"]
    assert [(e["detail"]["step"], e["detail"]["status"]) for e in aws.events()][-1] == ("unchanged", "unchanged")


# ------------------------------------------------------------------------------- every end reaches the approval


def run_stop_failing(aws: Aws, monkeypatch: pytest.MonkeyPatch, request: Approval) -> str:
    fail_stop_with(monkeypatch, "UnauthorizedOperation", "not authorized")
    return str(resize(aws, request)["executionArn"])


def run_start_failing(aws: Aws, monkeypatch: pytest.MonkeyPatch, request: Approval) -> str:
    recorded_start = EC2Backend.start_instances

    def start_instances(self: EC2Backend, instance_ids: list[str]) -> Any:
        if any(self.get_instance(i).instance_type == request.to_type for i in instance_ids):
            raise EC2ClientError("InsufficientInstanceCapacity", "no capacity")
        return recorded_start(self, instance_ids)

    monkeypatch.setattr(EC2Backend, "start_instances", start_instances)
    return str(resize(aws, request)["executionArn"])


def run_terminated(aws: Aws, monkeypatch: pytest.MonkeyPatch, request: Approval) -> str:
    monkeypatch.setattr(EC2Backend, "stop_instances", lambda self, ids: self.terminate_instances(ids))
    return str(resize(aws, request)["executionArn"])


def run_stale(aws: Aws, monkeypatch: pytest.MonkeyPatch, request: Approval) -> str:
    aws.ec2.modify_instance_attribute(InstanceId=request.instance_id, InstanceType={"Value": "g5.16xlarge"})
    return str(resize(aws, request)["executionArn"])


def run_invalid_input(aws: Aws, monkeypatch: pytest.MonkeyPatch, request: Approval) -> str:
    payload = aws.workflow().execution_input(request, "running")
    del payload["target_type"]
    arn: str = aws.sfn.start_execution(
        stateMachineArn=aws.state_machine_arn, name=f"bad-{request.instance_id}", input=json.dumps(payload)
    )["executionArn"]
    wait_for(aws, arn)
    return arn


def run_aborted(aws: Aws, monkeypatch: pytest.MonkeyPatch, request: Approval) -> str:
    """Someone stops the execution (StopExecution) while the host is being stopped: no state can catch that."""
    stopping, aborted = threading.Event(), threading.Event()
    recorded_stop = EC2Backend.stop_instances

    def stop_instances(self: EC2Backend, instance_ids: list[str]) -> Any:
        stopping.set()
        assert aborted.wait(HOLD_TIMEOUT_S), "the test did not abort the execution"
        return recorded_stop(self, instance_ids)

    monkeypatch.setattr(EC2Backend, "stop_instances", stop_instances)
    arn = aws.workflow().start(request)
    assert stopping.wait(HOLD_TIMEOUT_S), "the execution never reached the stop"
    aws.sfn.stop_execution(executionArn=arn, error="Operator", cause="stopped from the console")
    aborted.set()
    assert wait_for(aws, arn)["status"] == "ABORTED"
    return arn


@pytest.mark.parametrize(
    ("run", "outcome", "words"),
    [
        pytest.param(run_stale, ApprovalStatus.REFUSED, "recommendation is stale", id="refused"),
        pytest.param(run_invalid_input, ApprovalStatus.REFUSED, "lacks a field", id="invalid-input"),
        pytest.param(run_stop_failing, ApprovalStatus.UNCHANGED, "Nothing was changed", id="stop-failed"),
        pytest.param(run_start_failing, ApprovalStatus.ROLLED_BACK, "Rolled back", id="rolled-back"),
        pytest.param(run_terminated, ApprovalStatus.FAILED, "Needs a person", id="terminated"),
        pytest.param(run_aborted, ApprovalStatus.FAILED, "stopped by hand", id="aborted"),
    ],
)
def test_every_end_of_an_execution_closes_the_approval_once_and_releases_the_instance(
    aws: Aws,
    monkeypatch: pytest.MonkeyPatch,
    run: Callable[[Aws, pytest.MonkeyPatch, Approval], str],
    outcome: ApprovalStatus,
    words: str,
) -> None:
    instance_id = aws.launch()
    request = approval(instance_id)
    aws.store.create_approval(request)
    aws.store.update_approval(request.recommendation_id, status=ApprovalStatus.RUNNING)
    slack = RecordingSlack()

    arn = run(aws, monkeypatch, request)
    answers = deliver_everything(aws, arn, slack)

    closed = aws.store.approval(request.recommendation_id)
    assert closed is not None and closed.status is outcome, answers
    assert closed.execution_arn == arn or run is run_invalid_input
    assert len(slack.roots) == 1, "the outcome is posted once, whichever event brought it first"
    assert words in slack.replies[-1] or words in closed.detail or any(words in r for r in slack.replies)
    assert sum(a["outcome"] == "duplicate" for a in answers) >= 1
    notified = [e for e in audit_events(aws, request.recommendation_id) if e.startswith("notified_")]
    assert notified, "the audit log has the outcome"
    assert lock_item(aws, instance_id) is None, "no end leaves the instance locked"


def test_the_status_change_of_a_running_execution_is_ignored(aws: Aws) -> None:
    event = {
        "detail-type": workflow_events.EXECUTION_STATUS_CHANGE,
        "source": "aws.states",
        "detail": {"status": "RUNNING", "input": json.dumps({"recommendation_id": "rec-x"})},
    }
    answer = workflow_events.process(
        event, workflow_events.Dependencies(aws.store, RecordingSlack()), datetime.now(UTC)
    )
    assert answer["outcome"] == "ignored"


def test_a_late_lock_release_does_not_touch_a_newer_holder(aws: Aws) -> None:
    aws.table.put_item(Item={"PK": "LOCK#i-0new", "SK": "LOCK", "holder": "arn:new", "expires_at": "2999"})
    assert aws.store.release_instance_lock("i-0new", "arn:old") is False
    assert aws.store.release_instance_lock("i-0new", "arn:new") is True
    assert lock_item(aws, "i-0new") is None
