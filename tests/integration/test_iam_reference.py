"""The instance workflow's roles against AWS's Service Authorization Reference (tests/iam_reference.py).

Every action kind runs through the real ASL in moto (resize, a lock held by another execution, stop, schedule and its
removal, an endpoint update, a notebook stop), and every AWS call the workflow makes is recorded with its parameters
and the credentials that signed it: the workflow's own role, or the action role a task's Credentials assumed. Each
call, and what it makes AWS authorise besides (the action role assumed, the scheduler role passed, the tags of a new
endpoint config, the rollback alarm UpdateEndpoint reads, what each schedule does as the scheduler role when it
fires), is checked against the templates' policies with the resources' tags as they are when the call is made:
every resource type AWS requires granted, every condition met, every condition key one the reference lists, and no
granted action unused. Every Task of the definition is among the calls, so no integration goes unchecked.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import boto3
import pytest
from samtranslator.yaml_helper import yaml_parse

from rightsizer.domain.models import ActionKind
from tests.api_calls import UNAUTHORISED_OK, ApiCall, record_api_call_details
from tests.botocore_samples import input_shape
from tests.botocore_samples import problems as problems_of_request
from tests.iam_reference import (
    TRACING,
    Request,
    Resource,
    Statement,
    dependent_requests,
    granted,
    problems,
    request_of,
    role_policy,
    state_machine_service_calls,
    unsupported_conditions,
    unused,
)
from tests.integration.resize_world import (
    ACCOUNT,
    ASL_PATH,
    REGION,
    TABLE,
    WORKFLOW_ROLE,
    Aws,
    action,
    approval,
    resize,
    wait_for,
)
from tests.integration.test_sagemaker_workflow import (  # the SageMaker world and its approvals
    SageMaker,
    approved,
    endpoint_update,
    notebook_stop,
    run,
    sagemaker,
)

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
ACTION_ROLE = f"arn:aws:iam::{ACCOUNT}:role/GpuRightsizerAction"  # the test world's roles (resize_world)
SCHEDULER_ROLE = f"arn:aws:iam::{ACCOUNT}:role/GpuRightsizerScheduler"
STACK = "gpu-rightsizer"
__all__ = ["sagemaker"]  # the fixture, used by name


@cache
def template(path: str) -> Mapping[str, Any]:
    loaded: Mapping[str, Any] = yaml_parse((ROOT / path).read_text())
    return loaded


def deployment(**extra: str) -> dict[str, str]:
    """The test world as a deployment: this account and region, the stack's name, its table, its roles."""
    table_arn = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{TABLE}"
    return {
        "AWS::Partition": "aws",
        "AWS::AccountId": ACCOUNT,
        "AWS::Region": REGION,
        "AWS::StackName": STACK,
        "Table": TABLE,
        "Table.Arn": table_arn,
        "ActionRole.Arn": ACTION_ROLE,
        "SchedulerRole.Arn": SCHEDULER_ROLE,
        "HubStackName": STACK,
        "RightsizerAccountId": ACCOUNT,
        "MemberActions": "true",
        "EnableActions": "true",
        **extra,
    }


# Each role of the world, and the template roles that must allow what it does (the same documents: tests keep them
# equal, and each is checked here on its own).
ROLES: Mapping[str, tuple[tuple[str, str], ...]] = {
    WORKFLOW_ROLE: (("template.yaml", "ResizeStateMachineRole"), ("regional/template.yaml", "WorkflowRole")),
    ACTION_ROLE: (("template.yaml", "ActionRole"), ("member-account/template.yaml", "ActionRole")),
    SCHEDULER_ROLE: (("template.yaml", "SchedulerRole"), ("member-account/template.yaml", "SchedulerRole")),
}
# The state machines whose role is the workflow role: what Step Functions does in its name (logs, X-Ray).
MACHINES = (("template.yaml", "ResizeStateMachine"), ("regional/template.yaml", "StateMachine"))


def policy_of(path: str, logical_id: str) -> list[Statement]:
    return role_policy(template(path), logical_id, deployment())


def _principal(call: ApiCall) -> str | None:
    """The role whose credentials signed `call`: moto's Step Functions signs as the state machine's role ("ak"), a
    task's Credentials as the role it assumed; anything else is the test's own calls."""
    if call.access_key == "ak":
        return WORKFLOW_ROLE
    from moto.sts.models import sts_backends

    for backend in sts_backends.values():
        for assumed in backend["global"].assumed_roles:
            if assumed.access_key_id == call.access_key:
                return str(assumed.role_arn)
    return None


def _tags(arn: str) -> Mapping[str, str]:
    """What a resource is tagged with (read after the runs: instances, endpoints and configs keep their tags)."""
    if ":ec2:" in arn:
        instance = arn.rsplit("/", 1)[1]
        described = boto3.client("ec2", region_name=REGION).describe_tags(
            Filters=[{"Name": "resource-id", "Values": [instance]}]
        )
        return {tag["Key"]: tag["Value"] for tag in described["Tags"]}
    if ":sagemaker:" in arn:
        listed = boto3.client("sagemaker", region_name=REGION).list_tags(ResourceArn=arn)["Tags"]
        return {tag["Key"]: tag["Value"] for tag in listed}
    return {}


def requests_by_role(calls: list[ApiCall]) -> dict[str, list[Request]]:
    """Every call of the runs as a Request, by the role that makes it, with what each call brings in besides."""
    by_role: dict[str, list[Request]] = defaultdict(list)
    for call in calls:
        role = _principal(call)
        if role is None or call.action in UNAUTHORISED_OK:
            continue
        request = request_of(call.action, call.params, call.region, ACCOUNT, f"{call.action} as {role}", _tags)
        by_role[role].append(request)
        by_role[role].extend(dependent_requests(request, call.params))
        if role != WORKFLOW_ROLE:  # the task's Credentials: the workflow role assumes it first
            by_role[WORKFLOW_ROLE].append(
                Request("sts:AssumeRole", (Resource("role", role),), {}, f"Credentials of {call.action}")
            )
        if call.action == "scheduler:CreateSchedule":  # what the schedule does when it fires, as its role
            target = call.params["Target"]
            fired = f"ec2:{target['Arn'].rsplit(':', 1)[1][0].upper()}{target['Arn'].rsplit(':', 1)[1][1:]}"
            by_role[target["RoleArn"]].append(
                request_of(fired, json.loads(target["Input"]), call.region, ACCOUNT, f"schedule fires {fired}", _tags)
            )
    for path, machine in MACHINES:
        properties = template(path)["Resources"][machine]["Properties"]
        by_role[WORKFLOW_ROLE] += state_machine_service_calls(properties, f"{path} {machine}")
    return by_role


def _task_resources(states: Mapping[str, Any]) -> Iterator[str]:
    for state in states.values():
        if state["Type"] == "Task":
            yield str(state["Resource"])
        if "ItemProcessor" in state:
            yield from _task_resources(state["ItemProcessor"]["States"])


def _iam_action(resource: str) -> str:
    """arn:aws:states:::aws-sdk:ec2:stopInstances -> ec2:StopInstances; arn:aws:states:::dynamodb:putItem -> ..."""
    service, operation = resource.split(":::", 1)[1].removeprefix("aws-sdk:").split(":")[:2]
    return f"{service}:{operation[0].upper()}{operation[1:]}"


def test_every_call_of_every_action_is_allowed_by_the_templates_roles(
    aws: Aws, sagemaker: SageMaker, task_credentials: list[str]
) -> None:
    with record_api_call_details() as calls:
        host = aws.launch()
        assert resize(aws, approval(host))["status"] == "SUCCEEDED"
        contended = aws.launch()
        aws.table.put_item(
            Item={"PK": f"LOCK#{contended}", "SK": "LOCK", "holder": "arn:other", "expires_at": "2999-01-01T00:00:00Z"}
        )
        assert resize(aws, approval(contended))["error"] == "ResizeRefused"  # ReadLockHolder names the holder
        stopped = aws.launch()
        assert wait_for(aws, aws.workflow().start(action(stopped, ActionKind.STOP)))["status"] == "SUCCEEDED"
        scheduled = aws.launch()
        schedule = action(scheduled, ActionKind.SCHEDULE)
        aws.store.create_approval(schedule)
        assert wait_for(aws, aws.workflow().start(schedule))["status"] == "SUCCEEDED"
        removal = action(scheduled, ActionKind.UNSCHEDULE)
        assert wait_for(aws, aws.workflow().start(removal))["status"] == "SUCCEEDED"
        update = endpoint_update("iam-endpoint", sagemaker.endpoint("iam-endpoint"))
        approved(aws, update)
        assert run(aws, update)["status"] == "SUCCEEDED"
        notebook = notebook_stop("iam-notebook", sagemaker.notebook("iam-notebook"))
        assert run(aws, notebook)["status"] == "SUCCEEDED"

    by_role = requests_by_role(calls)
    # moto's Step Functions calls with botocore's validation off: hold every request to the service's model.
    rejected = [
        f"{call.action}: {said}"
        for call in calls
        if _principal(call) is not None and (said := problems_of_request(call.params, input_shape(*call.api)))
    ]
    assert rejected == [], "\n".join(rejected)

    made = {request.action for requests in by_role.values() for request in requests}
    in_definition = {_iam_action(r) for r in _task_resources(json.loads(ASL_PATH.read_text())["States"])}
    assert in_definition - made - UNAUTHORISED_OK == set(), (
        "Tasks of the definition no run made: add a run that reaches them"
    )
    for role, templates in ROLES.items():
        requests = by_role[role]
        assert requests, f"no call as {role}"
        for path, logical_id in templates:
            policy = policy_of(path, logical_id)
            refused = [problem for request in requests for problem in problems(policy, request)]
            assert refused == [], f"{path} {logical_id} would refuse:\n" + "\n".join(sorted(set(refused)))
            assert unsupported_conditions(policy) == [], f"{path} {logical_id}"
            assert sorted(unused(policy, requests)) == [], f"{path} {logical_id} grants actions no call makes"


def test_the_checker_refuses_what_aws_refuses() -> None:
    """The reference check itself: UpdateEndpoint needs the endpoint AND the config, each under its conditions."""
    policy = policy_of("template.yaml", "ActionRole")
    endpoint = Resource("endpoint", f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/e", {"rightsizer:managed": "true"})
    config = Resource("endpoint-config", f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/rightsizer-e-1")
    untagged = Request("sagemaker:UpdateEndpoint", (endpoint, config), {}, "a config without the managed tag")
    only_endpoint = Request("sagemaker:UpdateEndpoint", (endpoint,), {}, "the endpoint alone")
    tagged = replace(untagged, resources=(endpoint, replace(config, tags={"rightsizer:managed": "true"})))
    foreign = replace(tagged, resources=(endpoint, replace(config, arn=config.arn.replace("rightsizer-", "x-"))))

    assert any("no statement allows it on" in p and "endpoint-config" in p for p in problems(policy, untagged))
    assert any("names no endpoint-config" in p for p in problems(policy, only_endpoint))
    assert problems(policy, tagged) == []
    assert problems(policy, foreign) != []
    assert "sagemaker:UpdateEndpoint" in granted(policy)


# ---------------------------------------------------------------------------------------------- the daily pipeline


def _format(template_text: str, data: Mapping[str, Any]) -> str:
    """A Parameters value as Step Functions computes it: States.Format('..{}..', $.a, ...) or a path, from `data`."""
    import re

    def value(path: str) -> str:
        found: Any = data
        for name in path.removeprefix("$.").split("."):
            found = found.get(name, "x") if isinstance(found, dict) else "x"
        return str(found)

    call = re.fullmatch(r"States\.Format\('([^']*)',\s*(.*)\)", template_text)
    if call is None:
        return value(template_text)
    text, args = call.group(1), [arg.strip() for arg in call.group(2).split(",")]
    for arg in args:
        text = text.replace("{}", value(arg), 1)
    return text


def _resolved(parameters: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    resolved: dict[str, Any] = {}
    for key, item in parameters.items():
        if key.endswith(".$"):
            resolved[key[:-2]] = _format(str(item), data)
        elif isinstance(item, dict):
            resolved[key] = _resolved(item, data)
        else:
            resolved[key] = item
    return resolved


def test_the_pipeline_role_allows_every_integration_of_its_definition() -> None:
    """The pipeline's definition, Task by Task, as the role SAM makes of PipelineStateMachine's Policies (the
    Distributed Map: its ItemReader, and the child executions it starts, follows and stops in its name)."""
    from rightsizer.services.pipeline import Mode, pipeline_input

    bucket, functions = "gpu-rightsizer-planbucket-1", ("Collect", "Analyze", "Report")
    values = deployment(
        **{f"{name}Function": f"{STACK}-{name.lower()}" for name in functions},
        **{"PlanBucket": bucket, "PlanBucket.Arn": f"arn:aws:s3:::{bucket}"},
    )
    resource = template("template.yaml")["Resources"]["PipelineStateMachine"]
    policy = role_policy(template("template.yaml"), "PipelineStateMachine", values)
    text = (ROOT / "statemachine" / "pipeline.asl.json").read_text()
    for name, value in {
        **{f"{n}FunctionArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{STACK}-{n.lower()}" for n in functions},
        "TableName": TABLE,
        "TargetConcurrency": "10",
        "ShardsPerRegion": "2",
    }.items():
        text = text.replace("${" + name + "}", value)
    started = pipeline_input("2026-12-01", Mode.COLLECT, bucket)
    data = {**started, "target": {"account_id": ACCOUNT, "region": REGION}, "account_id": ACCOUNT, "region": REGION}
    machine = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{STACK}-pipeline"
    requests = state_machine_service_calls(resource["Properties"], "PipelineStateMachine")

    def walk(states: Mapping[str, Any]) -> None:
        for name, state in states.items():
            if state["Type"] == "Task":
                action = _iam_action(str(state["Resource"]))
                action = "lambda:InvokeFunction" if action == "lambda:Invoke" else action
                params = _resolved(state.get("Parameters", {}), data)
                requests.append(request_of(action, params, REGION, ACCOUNT, f"pipeline {name}", lambda arn: {}))
            if "ItemReader" in state:
                reader = state["ItemReader"]
                params = _resolved(reader["Parameters"], data)
                requests.append(
                    request_of(_iam_action(reader["Resource"]), params, REGION, ACCOUNT, name, lambda a: {})
                )
            if state.get("ItemProcessor", {}).get("ProcessorConfig", {}).get("Mode") == "DISTRIBUTED":
                # AWS: a Distributed Map starts each child as an execution of this state machine, and describes and
                # stops them, in the state machine role's name ("IAM policies for using Distributed Map states").
                child = f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{STACK}-pipeline/map:child"
                requests.append(Request("states:StartExecution", (Resource("statemachine", machine),), {}, name))
                for verb in ("DescribeExecution", "StopExecution"):
                    requests.append(Request(f"states:{verb}", (Resource("execution", child),), {}, name))
            if "ItemProcessor" in state:
                walk(state["ItemProcessor"]["States"])

    walk(json.loads(text)["States"])
    # SAM gives a state machine with Tracing the AWS managed policy AWSXrayWriteOnlyAccess (the translator's
    # stepfunctions generator), which grants X-Ray's write calls on "*".
    managed = [Statement("Allow", TRACING, ("*",), sid="AWSXrayWriteOnlyAccess")]

    refused = [problem for request in requests for problem in problems([*policy, *managed], request)]
    assert refused == [], "\n".join(refused)
    assert unsupported_conditions(policy) == []
    assert sorted(unused(policy, requests)) == []
