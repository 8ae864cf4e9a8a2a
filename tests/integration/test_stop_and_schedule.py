"""One click for idle and office-hours hosts: the instance workflow's stop and its schedule pair, executed for real by
moto (EC2, EventBridge Scheduler, DynamoDB, EventBridge), then through the real notifier to Slack and the registry
`/gpu schedules` lists. The world and what it stands in for: resize_world.py."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models import EC2Backend
from moto.scheduler.models import EventBridgeSchedulerBackend

from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import ActionKind
from tests.integration.resize_world import (
    ACCOUNT,
    MANAGED,
    OPT_OUT,
    REGION,
    Aws,
    RecordingSlack,
    action,
    approval,
    audit_events,
    deliver_everything,
    ec2_attempts,
    moto_instance,
    resize,
)
from tests.slack_double import OFFICE_HOURS_PLAN

pytestmark = pytest.mark.integration


def scheduler() -> Any:
    return boto3.client("scheduler", region_name=REGION)


def schedules_of(instance_id: str) -> dict[str, dict[str, Any]]:
    """The instance's pair as EventBridge Scheduler holds it, by name."""
    listed = scheduler().list_schedules(NamePrefix=f"rightsizer-{instance_id}-")["Schedules"]
    return {s["Name"]: scheduler().get_schedule(Name=s["Name"], GroupName="default") for s in listed}


def approved(aws: Aws, request: Any) -> None:
    """The approval record the Slack app writes before it starts the workflow (the notifier closes it)."""
    aws.store.create_approval(request)
    aws.store.update_approval(request.recommendation_id, status=ApprovalStatus.RUNNING)


# ------------------------------------------------------------------------------- stop


def test_an_idle_host_is_stopped_never_terminated_with_audit_and_slack_progress(aws: Aws) -> None:
    instance_id = aws.launch("p3.8xlarge")
    request = action(instance_id, ActionKind.STOP, "p3.8xlarge")
    approved(aws, request)
    slack = RecordingSlack()

    result = resize(aws, request)

    assert result["status"] == "SUCCEEDED", result
    output = json.loads(result["output"])
    assert (output["action"], output["state"], output["to_type"]) == ("stop", "stopped", "stopped")
    assert "its EBS volumes are kept and nothing was terminated" in output["health"]
    assert aws.describe(instance_id) == ("p3.8xlarge", "stopped")
    assert aws.ec2_calls.calls == [("stop", instance_id, "")]  # nothing modified, started or terminated
    assert audit_events(aws, request.recommendation_id) == [
        "stop_started",
        "validated",
        "stop_requested",
        "stopped",
        "succeeded",
    ]
    deliver_everything(aws, result["executionArn"], slack)
    closed = aws.store.approval(request.recommendation_id)
    assert closed is not None and closed.status is ApprovalStatus.SUCCEEDED
    assert slack.replies[0].startswith(
        f":hourglass_flowing_sand: `{instance_id}` p3.8xlarge → stopped: Checks passed: stop"
    )
    assert f"Done: {instance_id} is now p3.8xlarge and stopped" in slack.replies[-1]
    assert slack.roots == [
        f":white_check_mark: Stopped: `{instance_id}` p3.8xlarge → stopped (approved by <@U0APPROVER>). "
        "Details in the thread."
    ]


def _refused(aws: Aws, result: dict[str, Any], request: Any, fragment: str) -> None:
    assert (result["status"], result["error"]) == ("FAILED", "ResizeRefused"), result
    assert fragment in result["cause"]
    assert aws.ec2_calls.calls == [], "a refusal touches nothing"
    assert audit_events(aws, request.recommendation_id)[-1] == "refused"
    assert [e["detail"]["status"] for e in aws.events()][-1] == "refused"


@pytest.mark.parametrize(
    ("launch", "fragment"),
    [
        pytest.param({"tags": {OPT_OUT: "keep"}}, "opt-out tag", id="opted-out"),
        pytest.param({"managed": False}, "is not tagged", id="not-managed"),
        pytest.param({"spot": True}, "is a spot instance", id="spot"),
        pytest.param({"tags": {"aws:autoscaling:groupName": "serving"}}, "Auto Scaling group", id="asg-member"),
        pytest.param(
            {"tags": {"aws:elasticmapreduce:job-flow-id": "j-1"}}, "node group, cluster or fleet", id="emr-node"
        ),
        pytest.param({"state": "stopped"}, "is stopped, the recommendation expected running", id="already-stopped"),
    ],
)
def test_unsafe_stops_are_refused_before_anything_is_touched(aws: Aws, launch: dict[str, Any], fragment: str) -> None:
    instance_id = aws.launch("p3.8xlarge", **launch)
    request = action(instance_id, ActionKind.STOP, "p3.8xlarge")

    _refused(aws, resize(aws, request), request, fragment)


def test_an_instance_store_root_is_never_stopped(aws: Aws) -> None:
    instance_id = aws.launch("p3.8xlarge")
    moto_instance(instance_id).root_device_type = "instance-store"  # it would lose its root volume
    request = action(instance_id, ActionKind.STOP, "p3.8xlarge")

    _refused(aws, resize(aws, request), request, "is not EBS-backed")
    assert aws.describe(instance_id) == ("p3.8xlarge", "running")


def test_a_failed_stop_leaves_the_host_running_and_says_so(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[str] = []

    def refuse(self: EC2Backend, instance_ids: list[str]) -> Any:
        attempts.extend(instance_ids)
        raise EC2ClientError("UnauthorizedOperation", "You are not authorized to perform this operation.")

    monkeypatch.setattr(EC2Backend, "stop_instances", refuse)
    instance_id = aws.launch("p3.8xlarge")
    request = action(instance_id, ActionKind.STOP, "p3.8xlarge")
    approved(aws, request)
    slack = RecordingSlack()

    result = resize(aws, request)

    assert (result["status"], result["error"]) == ("FAILED", "ResizeUnchanged")
    assert result["cause"].startswith(f"Nothing was changed: {instance_id} is still p3.8xlarge and running.")
    assert "The stop failed before it touched the host: stop failed" in result["cause"]
    assert len(attempts) == ec2_attempts("StopInstance")
    assert aws.describe(instance_id) == ("p3.8xlarge", "running")
    deliver_everything(aws, result["executionArn"], slack)
    closed = aws.store.approval(request.recommendation_id)
    assert closed is not None and closed.status is ApprovalStatus.UNCHANGED
    assert slack.roots[0].startswith(":heavy_minus_sign: Stop failed, nothing was changed:")


# ------------------------------------------------------------------------------- schedules


def test_approving_a_schedule_creates_the_pair_audits_it_and_lists_it(aws: Aws) -> None:
    instance_id = aws.launch("g5.xlarge")
    request = action(instance_id, ActionKind.SCHEDULE, "g5.xlarge")
    approved(aws, request)
    slack = RecordingSlack()

    result = resize(aws, request)

    assert result["status"] == "SUCCEEDED", result
    assert aws.ec2_calls.calls == [], "the schedule stops and starts the host later, not now"
    pair = schedules_of(instance_id)
    stop, start = pair[f"rightsizer-{instance_id}-stop"], pair[f"rightsizer-{instance_id}-start"]
    assert (stop["ScheduleExpression"], start["ScheduleExpression"]) == (
        OFFICE_HOURS_PLAN.stop_cron,
        OFFICE_HOURS_PLAN.start_cron,
    )
    assert stop["ScheduleExpressionTimezone"] == start["ScheduleExpressionTimezone"] == "Europe/Berlin"
    assert stop["Target"]["Arn"] == "arn:aws:scheduler:::aws-sdk:ec2:stopInstances"
    assert start["Target"]["Arn"] == "arn:aws:scheduler:::aws-sdk:ec2:startInstances"
    assert stop["Target"]["RoleArn"] == f"arn:aws:iam::{ACCOUNT}:role/GpuRightsizerScheduler"
    assert json.loads(stop["Target"]["Input"]) == json.loads(start["Target"]["Input"]) == {"InstanceIds": [instance_id]}
    assert stop["FlexibleTimeWindow"] == {"Mode": "OFF"} and "approved by U0APPROVER" in stop["Description"]
    assert audit_events(aws, request.recommendation_id) == [
        "schedule_started",
        "validated",
        "start_scheduled",  # the start half first: alone it is harmless
        "stop_scheduled",
        "scheduled",
    ]

    deliver_everything(aws, result["executionArn"], slack)
    record = aws.store.schedule(ACCOUNT, REGION, instance_id)
    assert record is not None and record.plan == OFFICE_HOURS_PLAN and record.created_by == "U0APPROVER"
    assert record in aws.store.schedules()
    assert slack.roots[0].startswith(f":white_check_mark: Scheduled: `{instance_id}`")
    assert f"Scheduled: {instance_id} starts 07:45 Mon-Fri, stops 19:00 Mon-Fri (Europe/Berlin)" in slack.replies[-1]


def _refusing(monkeypatch: pytest.MonkeyPatch, half: str) -> None:
    create = EventBridgeSchedulerBackend.create_schedule

    def refuse(self: EventBridgeSchedulerBackend, **kwargs: Any) -> Any:
        if kwargs["name"].endswith(half):
            from moto.scheduler.exceptions import ValidationException

            raise ValidationException("The schedule quota of the account is exhausted")
        return create(self, **kwargs)

    monkeypatch.setattr(EventBridgeSchedulerBackend, "create_schedule", refuse)


def test_a_pair_that_cannot_be_completed_is_taken_back(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    _refusing(monkeypatch, "-stop")  # the second half
    instance_id = aws.launch("g5.xlarge")
    request = action(instance_id, ActionKind.SCHEDULE, "g5.xlarge")

    result = resize(aws, request)

    assert (result["status"], result["error"]) == ("FAILED", "ResizeRolledBack")
    assert "the stop schedule could not be created" in result["cause"] and "deleted again" in result["cause"]
    assert schedules_of(instance_id) == {}, "the start half alone is taken back too"
    assert audit_events(aws, request.recommendation_id)[-2:] == ["start_scheduled", "rolled_back"]
    assert aws.describe(instance_id) == ("g5.xlarge", "running")


def test_a_pair_whose_first_half_fails_leaves_nothing_behind(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    _refusing(monkeypatch, "-start")  # the first half: nothing was created
    instance_id = aws.launch("g5.xlarge")
    request = action(instance_id, ActionKind.SCHEDULE, "g5.xlarge")

    result = resize(aws, request)

    assert (result["status"], result["error"]) == ("FAILED", "ResizeUnchanged")
    assert "the start schedule could not be created" in result["cause"]
    assert schedules_of(instance_id) == {}


def _scheduled(aws: Aws, instance_type: str) -> str:
    """A managed host that already runs on a stop/start pair the workflow created."""
    instance_id = aws.launch(instance_type, tags={MANAGED: "true"})
    created = action(instance_id, ActionKind.SCHEDULE, instance_type)
    assert resize(aws, created)["status"] == "SUCCEEDED"
    assert len(schedules_of(instance_id)) == 2
    aws.ec2_calls.calls.clear()
    return instance_id


@pytest.mark.parametrize(("kind", "to_type"), [(ActionKind.STOP, "stopped"), (ActionKind.RESIZE, "g5.4xlarge")])
def test_a_stop_or_resize_of_a_host_on_a_schedule_is_refused_in_words(aws: Aws, kind: ActionKind, to_type: str) -> None:
    # Before: a stop ended "Stopped", and the pair's start half restarted the host at its next busy window.
    instance_id = _scheduled(aws, "g5.12xlarge")
    resizing = approval(instance_id, "g5.12xlarge", to_type, rec_id=f"rec-resize-{instance_id[2:]}")
    request = resizing if kind is ActionKind.RESIZE else action(instance_id, kind, "g5.12xlarge")

    result = resize(aws, request)

    _refused(aws, result, request, "runs on a stop/start schedule")
    assert f"this {'stop' if kind is ActionKind.STOP else 'resize to g5.4xlarge'} is refused" in result["cause"]
    assert "remove the schedule first" in result["cause"]
    assert aws.describe(instance_id) == ("g5.12xlarge", "running") and len(schedules_of(instance_id)) == 2


def test_a_pair_deleted_outside_the_bot_leaves_the_registry_at_the_next_check(aws: Aws) -> None:
    # Before: a pair deleted by hand (or by a removal that ended "needs a person" after Scheduler had deleted it)
    # stayed in /gpu schedules for ever, and every new schedule or stop of the host was refused "remove it first".
    from rightsizer.adapters.aws.scheduler import SchedulerPairs
    from rightsizer.services.schedule_registry import reconcile_schedules

    instance_id = aws.launch("g5.xlarge", tags={MANAGED: "true"})
    created = action(instance_id, ActionKind.SCHEDULE, "g5.xlarge")
    approved(aws, created)
    result = resize(aws, created)
    deliver_everything(aws, result["executionArn"], RecordingSlack())  # the notifier records the pair
    assert aws.store.schedule(ACCOUNT, REGION, instance_id) is not None
    stop_name, start_name = f"rightsizer-{instance_id}-stop", f"rightsizer-{instance_id}-start"
    scheduler().delete_schedule(Name=stop_name, GroupName="default")

    half = reconcile_schedules(aws.store, SchedulerPairs(scheduler(), REGION), ACCOUNT, REGION)
    listed = aws.store.schedule(ACCOUNT, REGION, instance_id)
    assert half.incomplete == (instance_id,) and listed is not None and listed.missing == (stop_name,)

    scheduler().delete_schedule(Name=start_name, GroupName="default")
    gone = reconcile_schedules(aws.store, SchedulerPairs(scheduler(), REGION), ACCOUNT, REGION)
    assert gone.forgotten == (instance_id,)
    assert aws.store.schedule(ACCOUNT, REGION, instance_id) is None
    assert instance_id not in {record.instance_id for record in aws.store.schedules()}
