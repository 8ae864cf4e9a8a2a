"""The instance workflow's input and error names, as Python spells them (the ASL's side: test_statemachine_build)."""

from __future__ import annotations

from dataclasses import fields

from rightsizer.domain.models import ActionKind
from rightsizer.domain.workflow_contract import InputKey, SageMakerInput, ScheduleInput, SchedulePair, WorkflowInput


def _input(**changes: object) -> WorkflowInput:
    values: dict[str, object] = {
        "recommendation_id": "rec-1",
        "instance_id": "i-1",
        "account_id": "123456789012",
        "region": "us-east-1",
        "action": ActionKind.STOP,
        "change": "stop",
        "action_role_arn": "arn:aws:iam::123456789012:role/GpuRightsizerAction",
        "expected_type": "g5.xlarge",
        "target_type": "g5.xlarge",
        "expected_state": "running",
        "approver": "U1",
        "approved_at": "2026-12-01T12:00:00+00:00",
        "managed_tag_key": "rightsizer:managed",
        "opt_out_tag": "rightsizer:ignore",
        "wait_seconds": 0,
        "table_name": "t",
        "max_polls": 3,
        "audit_expiration": "1",
        "lock_expires_at": "2026-12-01T15:10:00Z",
        "lock_expiration": "2",
        "pair": SchedulePair("default", "rightsizer-i-1-stop", "rightsizer-i-1-start"),
    }
    values.update(changes)
    return WorkflowInput(**values)  # type: ignore[arg-type]


def test_input_keys_are_the_fields_of_the_input() -> None:
    assert {key.value for key in InputKey} == {f.name for f in fields(WorkflowInput)}


def test_the_json_is_plain_and_has_a_schedule_only_when_there_is_one() -> None:
    data = _input().to_json()
    assert set(data) == {key.value for key in InputKey} - {InputKey.SCHEDULE, InputKey.SAGEMAKER}
    assert data["action"] == "stop" and type(data["action"]) is str
    assert data["pair"] == {
        "group": "default",
        "stop_name": "rightsizer-i-1-stop",
        "start_name": "rightsizer-i-1-start",
    }

    target = {"Arn": "arn:aws:scheduler:::aws-sdk:ec2:stopInstances", "RoleArn": "r", "Input": "{}"}
    schedule = ScheduleInput(
        "default", "s", "t", "cron(0 19 * * ? *)", "cron(0 7 * * ? *)", "UTC", "d", "r", target, {}
    )
    data = _input(action=ActionKind.SCHEDULE, schedule=schedule).to_json()
    assert data["schedule"]["stop_target"] == target and type(data["schedule"]["stop_target"]) is dict
    assert set(data["schedule"]) == {f.name for f in fields(ScheduleInput)}


def test_a_sagemaker_action_carries_its_resource_and_nothing_else_does() -> None:
    resource = SageMakerInput(
        name="chat",
        arn="arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat",
        variant_name="AllTraffic",
        expected_config="chat-config-1",
        new_config_name="rightsizer-chat-0123456789ab",
        target_count=1,
        alarm_name="rightsizer-chat-rollback",
        max_polls=150,
    )

    data = _input(action=ActionKind.UPDATE_ENDPOINT, sagemaker=resource).to_json()

    assert data["action"] == "update_endpoint"
    assert data["sagemaker"] == {f.name: getattr(resource, f.name) for f in fields(SageMakerInput)}
    assert "sagemaker" not in _input().to_json()
