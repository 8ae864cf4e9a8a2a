"""The dry run's walk through a state machine definition: three-valued choices, what a passed check teaches,
conditions on calls that depend on an answer, intrinsic functions, and the refusal of definitions it cannot walk."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rightsizer.cli.verbs.act import CHECKOUT_DEFINITION
from rightsizer.cli.verbs.act_dryrun import (
    Answer,
    DryRunError,
    Machine,
    Unknown,
    api_of,
    assume,
    effect_of,
    evaluate,
    get,
    resolve,
    rule_text,
)
from rightsizer.domain.models import ActionKind

ROLE = {"RoleArn.$": "$.role"}


def task(resource: str, following: str | None, **fields: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"Type": "Task", "Resource": f"arn:aws:states:::aws-sdk:{resource}", **fields}
    state.update({"Next": following} if following else {"End": True})
    return state


def machine(states: dict[str, Any], start: str) -> Machine:
    return Machine({"StartAt": start, "States": states})


FAIL = {"Type": "Fail", "Error": "Refused"}


def test_a_check_on_an_answer_is_assumed_passed_and_what_it_compared_is_then_known() -> None:
    states = {
        "Describe": task(
            "ec2:describeInstances",
            "Check",
            Parameters={"InstanceIds.$": "States.Array($.id)"},
            ResultSelector={"Instance.$": "$.Reservations[0].Instances[0]"},
            ResultPath="$.described",
            Credentials=ROLE,
        ),
        "Check": {
            "Type": "Choice",
            "Choices": [
                {"Not": {"Variable": "$.described.Instance.State.Name", "StringEqualsPath": "$.state"}, "Next": "No"}
            ],
            "Default": "Running",
        },
        "Running": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.described.Instance.State.Name", "StringEquals": "running", "Next": "Stop"}],
            "Default": "Modify",
        },
        "Stop": task(
            "ec2:stopInstances", "Modify", Parameters={"InstanceIds.$": "States.Array($.id)"}, ResultPath=None
        ),
        "Modify": task("ec2:modifyInstanceAttribute", None, Parameters={"InstanceId.$": "$.id"}, ResultPath=None),
        "No": FAIL,
    }

    running = machine(states, "Describe").calls({"id": "i-1", "state": "running", "role": "arn:role"})
    stopped = machine(states, "Describe").calls({"id": "i-1", "state": "stopped", "role": "arn:role"})

    assert [call.api for call in running] == [
        "ec2:DescribeInstances",
        "ec2:StopInstances",
        "ec2:ModifyInstanceAttribute",
    ]
    assert [call.api for call in stopped] == ["ec2:DescribeInstances", "ec2:ModifyInstanceAttribute"]
    assert running[0].role == "arn:role" and running[0].parameters == {"InstanceIds": ["i-1"]}
    assert all(call.condition == "" for call in running)


def test_a_call_on_a_way_that_depends_on_an_answer_carries_its_condition_until_the_ways_meet() -> None:
    states = {
        "Describe": task("ec2:describeInstanceTypes", "Needs", ResultPath="$.info"),
        "Needs": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.info.Nvme", "StringEquals": "required", "Next": "CountTag"}],
            "Default": "Act",
        },
        "CountTag": task("ec2:describeInstances", "Act", ResultPath="$.tag"),
        "Act": task("ec2:modifyInstanceAttribute", None, ResultPath=None),
    }

    calls = machine(states, "Describe").calls({})

    assert [(call.step, call.condition) for call in calls] == [
        ("Describe", ""),
        ("CountTag", 'only when $.info.Nvme = "required"'),
        ("Act", ""),
    ]


def test_a_way_that_ends_in_a_fail_state_is_dropped_and_none_left_is_an_error() -> None:
    refusing = {
        "Read": task("ec2:describeInstances", "Check", ResultPath="$.r"),
        "Check": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.r.ok", "BooleanEquals": True, "Next": "No"}],
            "Default": "No",
        },
        "No": FAIL,
    }

    with pytest.raises(DryRunError, match=r"Fail states reached: No\)"):
        machine(refusing, "Read").calls({})


def test_a_poll_loop_is_left_by_its_exit() -> None:
    states = {
        "Stop": task("ec2:stopInstances", "Wait", ResultPath=None),
        "Wait": {"Type": "Wait", "Seconds": 5, "Next": "Poll"},
        "Poll": task("ec2:describeInstances", "Stopped", ResultPath="$.d"),
        "Stopped": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.d.State", "StringEquals": "stopped", "Next": "Done"}],
            "Default": "Wait",
        },
        "Done": {"Type": "Succeed"},
    }

    calls = machine(states, "Stop").calls({})

    assert [call.api for call in calls] == ["ec2:StopInstances", "ec2:DescribeInstances"]
    assert calls[1].condition == ""  # the loop reaches the exit whatever the first answer


def test_choices_on_the_input_are_decided() -> None:
    rule = {
        "Or": [{"Variable": "$.action", "StringEquals": "resize"}, {"Variable": "$.action", "StringEquals": "stop"}]
    }

    assert evaluate(rule, {"action": "stop"}) is True
    assert evaluate(rule, {"action": "schedule"}) is False
    assert evaluate({"Variable": "$.missing", "IsPresent": True}, {}) is False
    assert evaluate({"Variable": "$.missing", "IsPresent": False}, {}) is True
    assert evaluate({"Variable": "$.n", "NumericGreaterThanEqualsPath": "$.max"}, {"n": 3, "max": 3}) is True
    assert evaluate({"Variable": "$.a.b", "StringEquals": "x"}, {"a": Answer()}) is None
    assert (
        evaluate(
            {"And": [{"Variable": "$.a.b", "IsPresent": True}, {"Variable": "$.c", "IsString": True}]},
            {"a": Answer(), "c": 1},
        )
        is False
    )


def test_what_an_assumed_rule_teaches() -> None:
    data: dict[str, Any] = {"expected": "g5.xlarge", "d": Answer()}
    equal = {"Variable": "$.d.Instance.Type", "StringEqualsPath": "$.expected"}

    assumed = assume({"Not": equal}, False, data)

    assert get(assumed, "$.d.Instance.Type") == "g5.xlarge"
    assert isinstance(get(assumed, "$.d.Instance.State"), Unknown)  # the rest of the answer stays unknown
    assert assume({"Variable": "$.d.x", "StringEquals": "a"}, False, {"d": Answer()}) == {"d": Answer()}


def test_intrinsic_functions_and_paths() -> None:
    data = {"id": "i-1", "n": 2, "tags": ["a", "b"], "answer": Answer()}

    resolved = resolve(
        {
            "Ids.$": "States.Array($.id)",
            "Text.$": "States.Format('{} has {} tag(s), it\\'s {}', $.id, States.ArrayLength($.tags), $.answer.State)",
            "Next.$": "States.MathAdd($.n, 1)",
            "Has.$": "States.ArrayContains($.tags, 'b')",
            "When.$": "$$.State.EnteredTime",
            "Fixed": {"Mode": "OFF"},
        },
        data,
    )

    assert resolved["Ids"] == ["i-1"] and resolved["Next"] == 3 and resolved["Has"] is True
    assert resolved["Fixed"] == {"Mode": "OFF"}
    assert isinstance(resolved["Text"], Unknown)
    assert resolved["Text"].text == "i-1 has 2 tag(s), it's <$.answer.State>"
    assert resolved["When"] == Unknown("<$$.State.EnteredTime>")


def test_paths_into_lists() -> None:
    data = {"tags": [{"Key": "a"}, {"Key": "b"}], "answer": Answer()}

    assert get(data, "$.tags[*].Key") == ["a", "b"]
    assert get(data, "$.tags[1].Key") == "b"
    assert isinstance(get(data, "$.answer.Tags[*].Key"), Unknown)
    with pytest.raises(KeyError):
        get(data, "$.tags[5]")


def test_a_maps_item_calls_are_listed_once_for_each_item() -> None:
    item = {"StartAt": "Tag", "States": {"Tag": task("ec2:createTags", None, ResultPath=None)}}
    states = {
        "Each": {"Type": "Map", "ItemsPath": "$.ids", "ItemProcessor": item, "ResultPath": "$.tagged", "Next": "Done"},
        "Done": {"Type": "Succeed"},
    }

    (call,) = machine(states, "Each").calls({"ids": ["i-1", "i-2"]})

    assert (call.api, call.effect, call.condition) == ("ec2:CreateTags", "changes", "for each item of Each")


def test_apis_and_what_they_do() -> None:
    assert api_of("arn:aws:states:::aws-sdk:ec2:stopInstances") == "ec2:StopInstances"
    assert api_of("arn:aws:states:::dynamodb:putItem") == "dynamodb:PutItem"
    assert api_of("arn:aws:states:::states:startExecution.sync:2") == "states:StartExecution"
    assert [effect_of(api) for api in ("ec2:DescribeInstances", "ec2:StopInstances", "dynamodb:PutItem")] == [
        "reads",
        "changes",
        "records",
    ]


def test_rules_in_words() -> None:
    rule = {"And": [{"Variable": "$.a", "IsPresent": True}, {"Not": {"Variable": "$.n", "NumericGreaterThan": 0}}]}

    assert rule_text(rule) == "$.a is present and not ($.n > 0)"


def execution(kind: ActionKind) -> dict[str, Any]:
    """An execution input of `kind`, shaped as adapters/aws/workflow.py builds it."""
    target = {"Arn": "arn:aws:scheduler:::aws-sdk:ec2:stopInstances", "RoleArn": "arn:aws:iam::1:role/S", "Input": "{}"}
    return {
        "recommendation_id": "rec-1", "instance_id": "i-0123456789abcdef0", "account_id": "123456789012",
        "region": "us-east-1", "action": kind.value, "change": "a change", "action_role_arn": "arn:aws:iam::1:role/A",
        "expected_type": "g5.12xlarge", "target_type": "g5.xlarge", "expected_state": "running", "approver": "U1",
        "approved_at": "2026-12-01T09:00:00+00:00", "managed_tag_key": "rightsizer:managed",
        "opt_out_tag": "rightsizer:ignore", "wait_seconds": 30, "table_name": "t", "max_polls": 30,
        "audit_expiration": "1", "lock_expires_at": "2026-12-01T12:10:00Z", "lock_expiration": "2",
        "pair": {"group": "default", "stop_name": "stop", "start_name": "start"},
        "schedule": {"group": "default", "stop_name": "stop", "start_name": "start", "stop_cron": "cron(0 19 * * ? *)",
                     "start_cron": "cron(0 8 * * ? *)", "time_zone": "UTC", "description": "d",
                     "scheduler_role_arn": "arn:aws:iam::1:role/S", "stop_target": target, "start_target": target},
        "sagemaker": {"name": "chat", "arn": "arn:aws:sagemaker:us-east-1:1:endpoint/chat",
                      "variant_name": "AllTraffic", "expected_config": "c1",
                      "new_config_name": "c2", "target_count": 1, "alarm_name": "a", "max_polls": 150},
    }  # fmt: skip


@pytest.mark.parametrize("kind", list(ActionKind))
def test_every_action_walks_the_repositorys_definition_to_a_success(kind: ActionKind) -> None:
    calls = Machine(json.loads(CHECKOUT_DEFINITION.read_text())).calls(execution(kind))

    assert any(call.effect == "changes" for call in calls), kind
    assert calls[-1].api == "dynamodb:DeleteItem"  # every success releases the lock last


def test_an_input_the_workflow_would_refuse_names_where_the_ways_end() -> None:
    broken = {**execution(ActionKind.SCHEDULE), "schedule": {"group": "default"}}

    with pytest.raises(DryRunError, match="InvalidRequest"):
        Machine(json.loads(CHECKOUT_DEFINITION.read_text())).calls(broken)


def test_a_state_reading_a_path_the_input_lacks_fails_as_step_functions_fails_it() -> None:
    states = {
        "Describe": task("ec2:describeInstances", "Stop", ResultPath="$.described"),
        "Stop": task(
            "ec2:stopInstances",
            None,
            Parameters={"InstanceIds.$": "States.Array($.instance_id)", "Hibernate.$": "$.described.Hibernate"},
        ),
    }
    walk = machine(states, "Describe")

    # What an answer holds is known only when the workflow runs: shown, never a failure.
    (_, stop) = walk.calls({"instance_id": "i-1"})
    assert stop.parameters["Hibernate"] == Unknown("<$.described.Hibernate>")
    # A path the input lacks, even inside an intrinsic function: States.Runtime, which no Catch takes.
    with pytest.raises(DryRunError, match=r"Stop would fail with States.Runtime .*\$\.instance_id: not in the input"):
        walk.calls({})


def _without(document: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """`document` less the field at `path`."""
    head, *rest = path
    if not rest:
        return {key: value for key, value in document.items() if key != head}
    return {**document, head: _without(document[head], tuple(rest))}


def _fields(document: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for key, value in document.items():
        found.append((*prefix, key))
        if isinstance(value, dict):
            found.extend(_fields(value, (*prefix, key)))
    return found


@pytest.mark.parametrize("kind", list(ActionKind))
def test_an_action_missing_any_field_it_reads_is_refused_before_anything_runs(kind: ActionKind) -> None:
    """Step Functions cannot catch a missing path (States.Runtime): every field an action's path reads must be proved
    present by the request checks, so a new action's fragment comes with its own checks."""
    definition = Machine(json.loads(CHECKOUT_DEFINITION.read_text()))
    complete = execution(kind)
    for path in _fields(complete):
        try:
            calls = definition.calls(_without(complete, path))
        except DryRunError as refused:
            assert "InvalidRequest" in str(refused), (kind, path, str(refused))
        else:
            assert any(call.effect == "changes" for call in calls), (kind, path)
