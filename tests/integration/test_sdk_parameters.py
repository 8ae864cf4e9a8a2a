"""Calls AWS would accept: every Task of every state machine, held to botocore's model of the API it calls.

moto accepts parameters AWS rejects, and its Step Functions calls with botocore's validation turned off. Here each
Task's `Parameters` (JSONPath) or `Arguments` (JSONata) of statemachine/resize.asl.json and pipeline.asl.json
becomes a request: constants as written; a path into the execution input resolved from the inputs the adapter
really writes (one per action kind); an intrinsic function, or a path into what an earlier state wrote, stood in by
a value of the member's own type after checking the intrinsic yields that type; a JSONata expression that computes
a whole request evaluated (jsonata-python) on data shaped like what the workflow reads. botocore's ParamValidator
then fails an unknown member, a missing required one and a wrong type. The requests built by hand that boto3 never
sees are checked the same way: what each EventBridge Scheduler target sends when it fires (its `Input`).
tests/integration/test_iam_reference.py checks the requests the executions really made, too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import boto3
import jsonata
import pytest
from botocore.model import Shape

from rightsizer.adapters.aws.workflow import StepFunctionsResizeWorkflow
from rightsizer.domain.actions.update_endpoint import DESCRIBED_ONLY
from rightsizer.domain.models import ActionKind
from rightsizer.services.ports import Approval
from tests.botocore_samples import every_member, input_shape, problems
from tests.integration.resize_world import ACCOUNT, REGION, TABLE, action, approval
from tests.integration.step_functions import pipeline_definition
from tests.integration.test_sagemaker_workflow import BIG, endpoint_update, notebook_stop

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
# The SDK integration's service names that botocore spells otherwise.
BOTOCORE_SERVICE = {"sfn": "stepfunctions"}
# Optimized integrations: the API each one calls.
OPTIMIZED = {
    "dynamodb:putItem": ("dynamodb", "PutItem"),
    "dynamodb:getItem": ("dynamodb", "GetItem"),
    "dynamodb:deleteItem": ("dynamodb", "DeleteItem"),
    "events:putEvents": ("events", "PutEvents"),
    "lambda:invoke": ("lambda", "Invoke"),
    "s3:getObject": ("s3", "GetObject"),
}
# What an intrinsic function yields, as botocore's shape types name it.
INTRINSIC_TYPES = {
    "States.Format": "string",
    "States.JsonToString": "string",
    "States.UUID": "string",
    "States.Array": "list",
    "States.ArrayLength": "integer",
    "States.MathAdd": "integer",
}
NUMBERS = {"integer", "long"}


def api_of(resource: str) -> tuple[str, str]:
    integration = resource.split(":::", 1)[1]
    if integration in OPTIMIZED:
        return OPTIMIZED[integration]
    service, operation = integration.removeprefix("aws-sdk:").split(":")[:2]
    return BOTOCORE_SERVICE.get(service, service), operation[0].upper() + operation[1:]


def sample_inputs() -> list[dict[str, Any]]:
    """The execution input the adapter writes for each action kind (as the Slack app starts the workflow)."""
    workflow = StepFunctionsResizeWorkflow(
        boto3.client("stepfunctions", region_name=REGION),
        f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:gpu-rightsizer-resize",
        wait_seconds=0,
        table_name=TABLE,
    )
    host = "i-0123456789abcdef0"
    endpoint_arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/chat"
    notebook_arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:notebook-instance/nb"
    approvals: list[Approval] = [
        approval(host),
        action(host, ActionKind.STOP),
        action(host, ActionKind.SCHEDULE),
        action(host, ActionKind.UNSCHEDULE),
        endpoint_update("chat", endpoint_arn),
        notebook_stop("nb", notebook_arn),
    ]
    return [workflow.workflow_input(a, "running").to_json() for a in approvals]


def _lookup(data: Any, path: str) -> Any:
    """`$.a.b[0].c` in `data`; KeyError when it is not there (an earlier state writes it)."""
    for name, index in re.findall(r"\.([A-Za-z_][\w]*)|\[(\d+)\]", path[1:]):
        data = data[name] if name else data[int(index)]
    return data


def _from_inputs(path: str, inputs: list[dict[str, Any]]) -> Any:
    for data in inputs:
        try:
            return _lookup(data, path)
        except (KeyError, IndexError, TypeError):
            continue
    raise KeyError(path)


def _yields(expression: str) -> str | None:
    function = expression.split("(", 1)[0]
    return INTRINSIC_TYPES.get(function)


def stand_in(template: Any, shape: Shape | None, inputs: list[dict[str, Any]], where: str, found: list[str]) -> Any:
    """The request `template` makes, for validation: see the module's docstring. Type mismatches go to `found`."""
    if isinstance(template, dict):
        members: Mapping[str, Shape] = getattr(shape, "members", {}) or {}
        value: Any = getattr(shape, "value", None)  # a map's values
        request: dict[str, Any] = {}
        for key, item in template.items():
            name = key[:-2] if key.endswith(".$") else key
            member = members.get(name) or value
            if key.endswith(".$"):
                request[name] = _dynamic(str(item), member, inputs, f"{where}.{name}", found)
            elif isinstance(item, str) and item.startswith("{%"):
                request[name] = _jsonata_value(item, member, inputs, f"{where}.{name}", found)
            else:
                request[name] = stand_in(item, member, inputs, f"{where}.{name}", found)
        return request
    if isinstance(template, list):
        item_shape = getattr(shape, "member", None)
        return [stand_in(item, item_shape, inputs, f"{where}[]", found) for item in template]
    return template


def _dynamic(expression: str, member: Shape | None, inputs: list[dict[str, Any]], where: str, found: list[str]) -> Any:
    if member is None:
        return "unknown-member"  # the validator names it
    if expression.startswith("States."):
        kind, function = _yields(expression), expression.split("(", maxsplit=1)[0]
        if kind is None:
            found.append(f"{where}: {function} has no known result type")
        elif kind != member.type_name and not (kind in NUMBERS and member.type_name in NUMBERS):
            found.append(f"{where}: {function} yields a {kind}, the API takes a {member.type_name}")
        return every_member(member)
    if expression.startswith("$$."):
        if member.type_name != "string":
            found.append(f"{where}: the context object's {expression} is text, the API takes a {member.type_name}")
        return every_member(member)
    try:
        return _from_inputs(expression, inputs)
    except KeyError:
        return every_member(member)  # an earlier state's answer: of the member's type by construction


def _jsonata_value(text: str, member: Shape | None, inputs: list[dict[str, Any]], where: str, found: list[str]) -> Any:
    expression = text.removeprefix("{%").removesuffix("%}").strip()
    path = re.fullmatch(r"\$states\.input((?:\.[A-Za-z_]\w*)+)", expression)
    if path:
        return _dynamic("$" + path.group(1), member, inputs, where, found)
    return every_member(member) if member is not None else "unknown-member"


def _tasks(states: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for name, state in states.items():
        if state["Type"] == "Task":
            yield name, state
        if "ItemReader" in state:
            yield f"{name}.ItemReader", state["ItemReader"]
        if "ItemProcessor" in state:
            yield from _tasks(state["ItemProcessor"]["States"])


def definitions() -> dict[str, dict[str, Any]]:
    resize = json.loads((ROOT / "statemachine" / "resize.asl.json").read_text().replace("${TableName}", TABLE))
    functions = {
        name: f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}" for name in ("Collect", "Analyze", "Report")
    }
    pipeline = json.loads(pipeline_definition(TABLE, functions))
    return {"resize": resize, "pipeline": pipeline}


def config_read_data(data: dict[str, Any]) -> dict[str, Any]:
    """What the copy of an endpoint config reads (what DescribeEndpoint, DescribeEndpointConfig and ListTags left in
    the execution's data), with every member botocore documents for the config set."""
    described = every_member(input_shape("sagemaker", "CreateEndpointConfig"))
    described.pop("Tags")
    variant = {**described["ProductionVariants"][0], "VariantName": data["sagemaker"]["variant_name"]}
    variant["InstanceType"] = BIG
    described["ProductionVariants"] = [variant]
    config = {k: v for k, v in described.items() if k not in DESCRIBED_ONLY}
    live = [{"VariantName": variant["VariantName"], "DesiredInstanceCount": 3, "DesiredWeight": 1.0}]
    return {
        **data,
        "endpoint": {"Status": "InService", "Config": data["sagemaker"]["expected_config"], "Variants": live},
        "endpoint_config": config,
        "config_tags": [{"Key": "team", "Value": "search"}],
    }


def evaluate(expression: str, data: dict[str, Any]) -> Any:
    """A JSONata field as Step Functions evaluates it: `$states.input` bound to the state's input."""
    body = expression.removeprefix("{%").removesuffix("%}").strip()
    return jsonata.Jsonata(f"($states := {json.dumps({'input': data})}; {body})").evaluate(None)


@pytest.mark.parametrize("machine", ["resize", "pipeline"])
def test_every_task_sends_a_request_the_api_accepts(machine: str) -> None:
    inputs = sample_inputs()
    found: list[str] = []
    checked = 0
    for name, task in _tasks(definitions()[machine]["States"]):
        service, operation = api_of(str(task["Resource"]))
        shape = input_shape(service, operation)
        arguments = task.get("Arguments", task.get("Parameters", {}))
        if isinstance(arguments, str):  # a JSONata expression computes the whole request
            (update,) = [data for data in inputs if data["action"] == ActionKind.UPDATE_ENDPOINT.value]
            request = evaluate(arguments, config_read_data(update))
        else:
            request = stand_in(arguments, shape, inputs, f"{machine}.{name}", found)
        for entry in request.get("Entries", []) if (service, operation) == ("events", "PutEvents") else []:
            entry["Detail"] = json.dumps(entry["Detail"])  # the optimized integration sends a Detail object as JSON
        if (service, operation) == ("lambda", "Invoke") and "Payload" in request:
            request["Payload"] = json.dumps(request["Payload"])  # ...and a Payload object likewise
        said = problems(request, shape)
        if said:
            found.append(f"{machine}.{name} ({service}:{operation}): {said}")
        checked += 1

    assert checked > 0
    assert found == [], "\n".join(found)


def test_the_endpoint_config_copy_is_a_request_create_endpoint_config_accepts_with_every_member() -> None:
    (update,) = [data for data in sample_inputs() if data["action"] == ActionKind.UPDATE_ENDPOINT.value]
    task = definitions()["resize"]["States"]["CreateEndpointConfig"]
    data = config_read_data(update)

    request = evaluate(task["Arguments"], data)

    shape = input_shape("sagemaker", "CreateEndpointConfig")
    assert problems(request, shape) == ""
    assert set(request) == set(shape.members)  # type: ignore[attr-defined]  # every member carried over
    (variant,) = request["ProductionVariants"]
    assert (variant["InstanceType"], variant["InitialInstanceCount"]) == (update["target_type"], 1)
    assert request["Tags"] == [{"Key": "team", "Value": "search"}, {"Key": update["managed_tag_key"], "Value": "true"}]


def test_what_each_schedule_sends_when_it_fires_is_a_request_ec2_accepts() -> None:
    (scheduled,) = [data for data in sample_inputs() if data["action"] == ActionKind.SCHEDULE.value]
    for half in ("stop_target", "start_target"):
        target = scheduled["schedule"][half]
        service, operation = api_of(target["Arn"].replace("arn:aws:scheduler:::", "arn:aws:states:::"))
        assert problems(target, input_shape("scheduler", "CreateSchedule").members["Target"]) == ""  # type: ignore[attr-defined]
        assert problems(json.loads(target["Input"]), input_shape(service, operation)) == "", half


def test_a_wrong_request_is_caught() -> None:
    """The check itself: an unknown member, a missing required one, a wrong type, an intrinsic of the wrong type."""
    shape = input_shape("ec2", "StopInstances")
    found: list[str] = []

    assert "Unknown parameter" in problems({"InstanceIds": ["i-1"], "Instance": "x"}, shape)
    assert "Missing required parameter" in problems({}, shape)
    assert "Invalid type" in problems({"InstanceIds": "i-1"}, shape)
    stand_in({"Force.$": "States.Format('{}', $.x)"}, shape, [], "t", found)
    assert found == ["t.Force: States.Format yields a string, the API takes a boolean"]
