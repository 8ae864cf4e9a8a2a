"""The resize state machine, executed for real by moto against moto EC2, DynamoDB and EventBridge
(the world and what it stands in for: resize_world.py)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any

import boto3
import pytest
from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models import EC2Backend

from rightsizer.adapters.aws.workflow import (
    IDEMPOTENCY_PK,
    StepFunctionsResizeWorkflow,
    execution_arn,
    execution_name,
)
from rightsizer.domain.workflow_contract import RESIZE_EVENT_DETAIL_TYPE, RESIZE_EVENT_SOURCE
from rightsizer.services.ports import Approval
from tests.integration.resize_world import (
    ACCOUNT,
    APPROVED_AT,
    ASL_PATH,
    MANAGED,
    OPT_OUT,
    REGION,
    TABLE,
    Aws,
    approval,
    audit_events,
    ec2_attempts,
    executions_for,
    moto_instance,
    resize,
    wait_for,
)

pytestmark = pytest.mark.integration


# ------------------------------------------------------------------------------- the happy paths


def test_running_host_is_resized_and_running_again(aws: Aws) -> None:
    instance_id = aws.launch("g5.12xlarge")
    request = approval(instance_id)

    result = resize(aws, request)

    assert result["status"] == "SUCCEEDED", result
    output = json.loads(result["output"])
    assert output == {
        "recommendation_id": request.recommendation_id,
        "instance_id": instance_id,
        "action": "resize",
        "status": "succeeded",
        "from_type": "g5.12xlarge",
        "to_type": "g5.2xlarge",
        "state": "running",
        "health": "status checks ok",
        "message": f"Done: {instance_id} is now g5.2xlarge and running (status checks ok).",
    }
    assert aws.describe(instance_id) == ("g5.2xlarge", "running")
    # stop, then modify only once stopped, then start on the new type
    assert aws.ec2_calls.calls == [
        ("stop", instance_id, ""),
        ("modify", instance_id, "instance_type=g5.2xlarge"),
        ("start", instance_id, "g5.2xlarge"),
    ]

    log = aws.store.audit_log(request.recommendation_id)
    assert [e.event for e in log] == [
        "resize_started",
        "validated",
        "stop_requested",
        "stopped",
        "modified",
        "start_requested",
        "running",
        "succeeded",
    ]
    assert log[0].actor == "U0APPROVER"
    assert "approved by U0APPROVER at 2026-12-01T12:00:00+00:00" in log[0].detail
    assert {e.actor for e in log[1:]} == {"resize-workflow"}
    assert "g5.12xlarge -> g5.2xlarge" in log[4].detail
    items = aws.table.query(
        KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": f"AUDIT#{request.recommendation_id}"}
    )["Items"]
    assert {int(item["expiration"]) for item in items} == {int(APPROVED_AT.timestamp()) + 800 * 86400}

    events = aws.events()
    assert {(e["source"], e["detail-type"]) for e in events} == {(RESIZE_EVENT_SOURCE, RESIZE_EVENT_DETAIL_TYPE)}
    details = [e["detail"] for e in events]
    assert [(d["step"], d["status"]) for d in details] == [
        ("validated", "running"),
        ("modified", "running"),
        ("succeeded", "succeeded"),
    ]
    for detail in details:
        fields = {"recommendation_id", "instance_id", "step", "status", "message", "from_type", "to_type", "action"}
        assert set(detail) == fields and detail["action"] == "resize"
        assert (detail["recommendation_id"], detail["instance_id"]) == (request.recommendation_id, instance_id)
        assert (detail["from_type"], detail["to_type"]) == ("g5.12xlarge", "g5.2xlarge")
    assert "is now g5.2xlarge and running" in details[-1]["message"]
    # Step Functions names the execution in the event's resources, so the notifier can link it
    assert any(":execution:" in resource for resource in events[-1]["resources"])


def test_stopped_host_is_modified_and_stays_stopped(aws: Aws) -> None:
    instance_id = aws.launch("g5.12xlarge", state="stopped")
    request = approval(instance_id)

    result = resize(aws, request, expected_state="stopped")

    assert result["status"] == "SUCCEEDED", result
    assert json.loads(result["output"])["state"] == "stopped"
    assert aws.describe(instance_id) == ("g5.2xlarge", "stopped")
    assert aws.ec2_calls.kinds == ["modify"]
    assert audit_events(aws, request.recommendation_id) == ["resize_started", "validated", "modified", "succeeded"]
    assert [e["detail"]["status"] for e in aws.events()] == ["running", "succeeded"]


def test_host_without_status_data_is_accepted_only_because_it_is_running(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(EC2Backend, "describe_instance_status", lambda self, *args, **kwargs: [])
    instance_id = aws.launch()

    result = resize(aws, approval(instance_id))

    assert result["status"] == "SUCCEEDED", result
    assert json.loads(result["output"])["health"].startswith("no status checks reported")
    assert aws.describe(instance_id) == ("g5.2xlarge", "running")


def test_nvme_ready_tag_allows_moving_a_xen_host_to_an_nvme_type(aws: Aws) -> None:
    instance_id = aws.launch("c4.large", tags={"rightsizer:nvme-ready": "true"})

    result = resize(aws, approval(instance_id, "c4.large", "g5.2xlarge"))

    assert result["status"] == "SUCCEEDED", result
    assert aws.describe(instance_id) == ("g5.2xlarge", "running")


# ------------------------------------------------------------------------------- rollback


def _fail_start_as(monkeypatch: pytest.MonkeyPatch, aws: Aws, instance_type: str) -> None:
    recorded_start = EC2Backend.start_instances  # the recording wrapper from the fixture

    def start_instances(self: EC2Backend, instance_ids: list[str]) -> Any:
        if any(self.get_instance(i).instance_type == instance_type for i in instance_ids):
            aws.ec2_calls.calls.extend(("start", i, f"refused as {instance_type}") for i in instance_ids)
            raise EC2ClientError(
                "InsufficientInstanceCapacity",
                f"We currently do not have sufficient {instance_type} capacity in the Availability Zone you requested.",
            )
        return recorded_start(self, instance_ids)

    monkeypatch.setattr(EC2Backend, "start_instances", start_instances)


def test_capacity_failure_on_start_rolls_back_to_the_original_type_and_state(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance_id = aws.launch("g5.12xlarge")
    _fail_start_as(monkeypatch, aws, "g5.2xlarge")
    request = approval(instance_id)

    result = resize(aws, request)

    assert result["status"] == "FAILED"
    assert result["error"] == "ResizeRolledBack"
    assert "starting as g5.2xlarge failed" in result["cause"]
    assert "sufficient g5.2xlarge capacity" in result["cause"]
    assert aws.describe(instance_id) == ("g5.12xlarge", "running")
    # EC2 names no error apart (every one is Ec2.Ec2Exception), so the start is retried before the rollback
    assert aws.ec2_calls.calls == [
        ("stop", instance_id, ""),
        ("modify", instance_id, "instance_type=g5.2xlarge"),
        *[("start", instance_id, "refused as g5.2xlarge")] * ec2_attempts("StartInstance"),
        ("modify", instance_id, "instance_type=g5.12xlarge"),
        ("start", instance_id, "g5.12xlarge"),
    ]
    assert audit_events(aws, request.recommendation_id) == [
        "resize_started",
        "validated",
        "stop_requested",
        "stopped",
        "modified",
        "rollback_started",
        "rollback_modified",
        "rollback_start_requested",
        "rolled_back",
    ]
    details = [e["detail"] for e in aws.events()]
    assert [(d["step"], d["status"]) for d in details] == [
        ("validated", "running"),
        ("modified", "running"),
        ("rollback", "running"),
        ("rolled_back", "rolled_back"),
    ]
    assert "g5.12xlarge and running again" in details[-1]["message"]


def test_refused_modify_rolls_back_without_changing_the_type(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    recorded_modify = EC2Backend.modify_instance_attribute

    def modify_instance_attribute(self: EC2Backend, instance_id: str, key: str, value: Any) -> Any:
        if key == "instance_type" and value == "g5.2xlarge":
            raise EC2ClientError("Unsupported", "The requested configuration is currently not supported.")
        return recorded_modify(self, instance_id, key, value)

    monkeypatch.setattr(EC2Backend, "modify_instance_attribute", modify_instance_attribute)
    instance_id = aws.launch("g5.12xlarge")
    request = approval(instance_id)

    result = resize(aws, request)

    assert (result["status"], result["error"]) == ("FAILED", "ResizeRolledBack")
    assert aws.describe(instance_id) == ("g5.12xlarge", "running")
    # the described type never changed, so the rollback only starts the host again
    assert aws.ec2_calls.calls == [("stop", instance_id, ""), ("start", instance_id, "g5.12xlarge")]
    assert audit_events(aws, request.recommendation_id)[-3:] == [
        "rollback_started",
        "rollback_start_requested",
        "rolled_back",
    ]


def test_failing_status_checks_roll_back_through_stop_modify_start(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.ec2.models.instances import Instance

    healthy = Instance.instance_status

    def instance_status(self: Instance) -> dict[str, Any]:
        if self.instance_type == "g5.2xlarge" and self.state == "running":
            return {"Status": "impaired", "Details": [{"Name": "reachability", "Status": "failed"}]}
        return dict(healthy.fget(self))  # type: ignore[attr-defined]

    monkeypatch.setattr(Instance, "instance_status", property(instance_status))
    instance_id = aws.launch("g5.12xlarge")
    request = approval(instance_id)

    result = resize(aws, request, max_polls=2)

    assert (result["status"], result["error"]) == ("FAILED", "ResizeRolledBack")
    assert "status checks not ok after 2 polls (instance impaired, system ok)" in result["cause"]
    assert aws.describe(instance_id) == ("g5.12xlarge", "running")
    assert aws.ec2_calls.kinds == ["stop", "modify", "start", "stop", "modify", "start"]
    assert audit_events(aws, request.recommendation_id)[-5:] == [
        "rollback_started",
        "rollback_stop_requested",
        "rollback_modified",
        "rollback_start_requested",
        "rolled_back",
    ]


# ------------------------------------------------------------------------------- refusals


def _assert_refused(aws: Aws, result: dict[str, Any], rec_id: str, fragment: str) -> None:
    assert (result["status"], result["error"]) == ("FAILED", "ResizeRefused"), result
    assert fragment in result["cause"]
    assert aws.ec2_calls.calls == [], "a refused resize must not touch the host"
    log = aws.store.audit_log(rec_id)
    assert [e.event for e in log] == ["resize_started", "refused"]
    assert fragment in log[-1].detail
    details = [e["detail"] for e in aws.events()]
    assert [(d["step"], d["status"]) for d in details] == [("refused", "refused")]
    assert fragment in details[0]["message"]


def test_stale_recommendation_is_refused_without_touching_the_host(aws: Aws) -> None:
    instance_id = aws.launch("g5.16xlarge")  # someone resized it after the recommendation was made
    request = approval(instance_id, from_type="g5.12xlarge")

    result = resize(aws, request)

    _assert_refused(
        aws, result, request.recommendation_id, "is now g5.16xlarge, the recommendation was for g5.12xlarge"
    )
    assert aws.describe(instance_id) == ("g5.16xlarge", "running")


def test_host_stopped_since_the_recommendation_is_refused(aws: Aws) -> None:
    instance_id = aws.launch("g5.12xlarge", state="stopped")
    request = approval(instance_id)

    result = resize(aws, request, expected_state="running")

    _assert_refused(aws, result, request.recommendation_id, "is stopped, the recommendation expected running")
    assert aws.describe(instance_id) == ("g5.12xlarge", "stopped")


@pytest.mark.parametrize(
    ("launch", "from_type", "to_type", "fragment"),
    [
        pytest.param({"tags": {OPT_OUT: "yes"}}, "g5.12xlarge", "g5.2xlarge", "opt-out tag", id="opted-out"),
        pytest.param({"managed": False}, "g5.12xlarge", "g5.2xlarge", "is not tagged", id="not-managed"),
        pytest.param(
            {"managed": False, "tags": {MANAGED: "false"}},
            "g5.12xlarge",
            "g5.2xlarge",
            "is not tagged",
            id="managed-false",
        ),
        pytest.param({"spot": True}, "g5.12xlarge", "g5.2xlarge", "is a spot instance", id="spot"),
        pytest.param(
            {"tags": {"aws:autoscaling:groupName": "inference"}},
            "g5.12xlarge",
            "g5.2xlarge",
            "Auto Scaling group",
            id="asg-member",
        ),
        pytest.param(
            {"tags": {"karpenter.sh/nodepool": "gpu", "kubernetes.io/cluster/ml": "owned"}},
            "g5.12xlarge",
            "g5.2xlarge",
            "node group, cluster or fleet",
            id="karpenter-node",
        ),
        # moto's offerings data has no inf2 in us-east-1d
        pytest.param(
            {"zone": "us-east-1d"}, "g5.12xlarge", "inf2.xlarge", "is not offered in us-east-1d", id="not-offered"
        ),
        pytest.param({}, "g5.12xlarge", "g5g.xlarge", "does not support the x86_64 architecture", id="architecture"),
        pytest.param({"ena": False}, "g5.12xlarge", "g5.2xlarge", "ENA) is not enabled", id="ena"),
        pytest.param({}, "c4.large", "g5.2xlarge", "exposes EBS volumes as NVMe", id="nvme"),
        pytest.param({}, "g5.12xlarge", "g5.12xlarge", "invalid request", id="same-type"),
    ],
)
def test_unsafe_resizes_are_refused_before_anything_is_touched(
    aws: Aws, launch: dict[str, Any], from_type: str, to_type: str, fragment: str
) -> None:
    instance_id = aws.launch(from_type, **launch)
    request = approval(instance_id, from_type, to_type)

    result = resize(aws, request)

    _assert_refused(aws, result, request.recommendation_id, fragment)
    assert aws.describe(instance_id) == (from_type, "running")


def test_incomplete_input_fails_before_anything_runs(aws: Aws) -> None:
    instance_id = aws.launch()
    request = approval(instance_id)
    payload = aws.workflow().execution_input(request, "running")
    del payload["max_polls"]  # a missing path after the stop would be an uncatchable States.Runtime error
    arn = aws.sfn.start_execution(
        stateMachineArn=aws.state_machine_arn, name=f"partial-{instance_id}", input=json.dumps(payload)
    )["executionArn"]

    result = wait_for(aws, arn)

    assert (result["status"], result["error"]) == ("FAILED", "InvalidRequest")
    assert aws.ec2_calls.calls == []
    assert aws.store.audit_log(request.recommendation_id) == []


def test_instance_store_root_is_refused(aws: Aws) -> None:
    instance_id = aws.launch()
    moto_instance(instance_id).root_device_type = "instance-store"  # moto always launches EBS-backed
    request = approval(instance_id)

    _assert_refused(aws, resize(aws, request), request.recommendation_id, "is not EBS-backed")


# ------------------------------------------------------------------------------- idempotency


def test_double_approval_yields_one_execution(aws: Aws) -> None:
    instance_id = aws.launch()
    request = approval(instance_id)
    workflow = aws.workflow()

    first = workflow.start(request)
    second = workflow.start(request)  # while the first may still run
    wait_for(aws, first)
    third = workflow.start(request)  # after it closed: ExecutionAlreadyExists, answered with its ARN

    assert first == second == third == execution_arn(aws.state_machine_arn, execution_name(request.recommendation_id))
    assert executions_for(aws, request) == [first]
    assert aws.ec2_calls.kinds == ["stop", "modify", "start"]


# Outside Lambda there is no remaining time to bound the in-progress record; start() copes (see workflow.py).
@pytest.mark.filterwarnings("ignore:Couldn't determine the remaining time left")
def test_powertools_idempotency_answers_a_retry_from_the_table(aws: Aws) -> None:
    instance_id = aws.launch()
    request = approval(instance_id)
    starts: list[dict[str, Any]] = []

    class CountingClient:
        def __init__(self, client: Any) -> None:
            self._client = client

        def start_execution(self, **kwargs: Any) -> Any:
            starts.append(kwargs)
            return self._client.start_execution(**kwargs)

    dynamodb = boto3.client("dynamodb", region_name=REGION)
    workflow = StepFunctionsResizeWorkflow.with_idempotency(
        CountingClient(aws.sfn), aws.state_machine_arn, TABLE, dynamodb_client=dynamodb, wait_seconds=0, max_polls=3
    )

    first = workflow.start(request)
    second = workflow.start(request)
    wait_for(aws, first)

    assert first == second
    assert len(starts) == 1, "the retry was answered from the idempotency record"
    query = {"KeyConditionExpression": "PK = :pk", "ExpressionAttributeValues": {":pk": IDEMPOTENCY_PK}}
    record = aws.table.query(**query)["Items"]
    assert len(record) == 1
    assert record[0]["SK"].startswith("resize-start#")
    assert record[0]["status"] == "COMPLETED"
    assert int(record[0]["expiration"]) > time.time() + 80 * 86400
    assert executions_for(aws, request) == [first]


@pytest.mark.filterwarnings("ignore:Couldn't determine the remaining time left")
def test_a_starter_that_died_mid_start_does_not_block_the_retry(aws: Aws) -> None:
    instance_id = aws.launch()
    request = approval(instance_id)
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    workflow = StepFunctionsResizeWorkflow.with_idempotency(
        aws.sfn, aws.state_machine_arn, TABLE, dynamodb_client=dynamodb, wait_seconds=0, max_polls=3
    )
    first = workflow.start(request)
    wait_for(aws, first)
    # What a crash between Powertools' "in progress" write and its "completed" write leaves behind.
    aws.table.update_item(
        Key={"PK": IDEMPOTENCY_PK, "SK": _idempotency_sk(aws)},
        UpdateExpression="SET #s = :s REMOVE #d",
        ExpressionAttributeNames={"#s": "status", "#d": "data"},
        ExpressionAttributeValues={":s": "INPROGRESS"},
    )

    assert workflow.start(request) == first
    assert executions_for(aws, request) == [first]


def _idempotency_sk(aws: Aws) -> str:
    items = aws.table.query(KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": IDEMPOTENCY_PK})
    newest = max(items["Items"], key=lambda item: int(item["expiration"]))
    return str(newest["SK"])


# ------------------------------------------------------------------------------- the starter, offline


def test_execution_names_are_valid_and_stable() -> None:
    assert execution_name("rec-0123456789abcdef0123") == "rec-0123456789abcdef0123"
    odd = execution_name("rec:with/odd chars#" + "x" * 100)
    assert len(odd) <= 80
    assert re.fullmatch(r"[A-Za-z0-9_-]+", odd)
    assert odd == execution_name("rec:with/odd chars#" + "x" * 100)
    assert execution_name("a/b") != execution_name("a:b"), "sanitised alike, still distinct"
    with pytest.raises(ValueError):
        execution_name("")


def test_execution_arn_is_built_from_the_state_machine_arn() -> None:
    arn = "arn:aws:states:us-east-1:123456789012:stateMachine:stack-resize"
    assert execution_arn(arn, "rec-1") == "arn:aws:states:us-east-1:123456789012:execution:stack-resize:rec-1"
    with pytest.raises(ValueError):
        execution_arn("arn:aws:states:us-east-1:123456789012:activity:x", "rec-1")


def test_execution_input_carries_the_whole_request() -> None:
    class NoClient:
        def start_execution(self, **kwargs: Any) -> Any:
            raise AssertionError("not called")

    arn = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:stack-resize"
    workflow = StepFunctionsResizeWorkflow(
        NoClient(),
        arn,
        wait_seconds=15,
        managed_tag_key="team:managed",
        opt_out_tag="team:ignore",
        table_name="t",
        clock=lambda: APPROVED_AT + timedelta(minutes=5),
    )
    payload = workflow.execution_input(approval("i-0abc"), "stopped")

    assert payload == {
        "recommendation_id": "rec-0abc",
        "instance_id": "i-0abc",
        "account_id": ACCOUNT,
        "region": REGION,
        "action": "resize",
        "change": "resize to g5.2xlarge",
        # the host's account's action role (ActionRoles: the stack's own role at home, GpuRightsizerAction elsewhere)
        "action_role_arn": f"arn:aws:iam::{ACCOUNT}:role/GpuRightsizerAction",
        "expected_type": "g5.12xlarge",
        "target_type": "g5.2xlarge",
        "expected_state": "stopped",
        "approver": "U0APPROVER",
        "approved_at": "2026-12-01T12:00:00+00:00",
        "managed_tag_key": "team:managed",
        "opt_out_tag": "team:ignore",
        "wait_seconds": 15,
        "table_name": "t",
        "max_polls": 30,
        "audit_expiration": str(int(APPROVED_AT.timestamp()) + 800 * 86400),
        # the clock's now + the execution's TimeoutSeconds (3 h) + 10 minutes
        "lock_expires_at": "2026-12-01T15:15:00Z",
        "lock_expiration": str(int(APPROVED_AT.timestamp()) + 3 * 3600 + 15 * 60),
        # the host's stop/start pair, if any: a resize or a stop is refused while EventBridge Scheduler has one
        "pair": {"group": "default", "stop_name": "rightsizer-i-0abc-stop", "start_name": "rightsizer-i-0abc-start"},
    }


def test_starter_refuses_other_regions_accounts_and_states() -> None:
    class NoClient:
        def start_execution(self, **kwargs: Any) -> Any:
            raise AssertionError("not called")

    workflow = StepFunctionsResizeWorkflow(NoClient(), f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:s")
    elsewhere = Approval(**{**approval("i-0abc").__dict__, "region": "eu-west-1"})
    with pytest.raises(ValueError, match=r"regional/template\.yaml"):
        workflow.start(elsewhere)
    member = Approval(**{**approval("i-0abc").__dict__, "account_id": "444455556666"})
    with pytest.raises(ValueError, match="EnableActions=true"):
        workflow.start(member)
    with pytest.raises(ValueError, match="expected_state"):
        workflow.start(approval("i-0abc"), expected_state="terminated")


def test_expected_state_comes_from_the_lookup_when_not_given() -> None:
    seen: list[dict[str, Any]] = []

    class Client:
        def start_execution(self, **kwargs: Any) -> Any:
            seen.append(json.loads(kwargs["input"]))
            return {"executionArn": "arn:x"}

    arn = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:s"
    StepFunctionsResizeWorkflow(Client(), arn, expected_state_of=lambda rec_id: "stopped").start(approval("i-1"))
    StepFunctionsResizeWorkflow(Client(), arn).start(approval("i-2"))
    assert [s["expected_state"] for s in seen] == ["stopped", "running"]


def test_from_settings_uses_the_stack_tag_keys() -> None:
    from rightsizer.domain.policy import Policy
    from rightsizer.settings import Settings

    seen: list[dict[str, Any]] = []

    class Client:
        def start_execution(self, **kwargs: Any) -> Any:
            seen.append(json.loads(kwargs["input"]))
            return {"executionArn": "arn:x"}

    settings = Settings(
        resize_state_machine_arn=f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:s",
        managed_tag_key="team:managed",
        policy=Policy(opt_out_tag="team:ignore"),
    )
    StepFunctionsResizeWorkflow.from_settings(settings, Client()).start(approval("i-1"))
    assert (seen[0]["managed_tag_key"], seen[0]["opt_out_tag"]) == ("team:managed", "team:ignore")
    with pytest.raises(ValueError, match="RESIZE_STATE_MACHINE_ARN"):
        StepFunctionsResizeWorkflow.from_settings(Settings(), Client())


# ------------------------------------------------------------------------------- the template


def _template() -> dict[str, Any]:
    """template.yaml with its Fn::ForEach loops expanded, as the Serverless transform sees it."""
    from tests.unit.test_template import sam

    return sam()


EC2_WRITE = re.compile(r"^ec2:(Stop|Start|Modify|Terminate|Reboot|Run|Create|Delete|Attach|Detach|Associate)", re.I)


def _statements(resource: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    props = resource.get("Properties", {})
    for policy in props.get("Policies", []) or []:
        document = policy.get("PolicyDocument", policy) if isinstance(policy, dict) else None
        if isinstance(document, dict) and "Fn::Sub" in document:
            document = json.loads(document["Fn::Sub"])
        if isinstance(document, dict):
            yield from document.get("Statement", [])


def test_only_the_action_and_scheduler_roles_change_instances_and_only_managed_ones() -> None:
    resources = _template()["Resources"]
    writers: dict[str, list[dict[str, Any]]] = {}
    for name, resource in resources.items():
        for statement in _statements(resource):
            actions = statement.get("Action", [])
            actions = [actions] if isinstance(actions, str) else actions
            if any(isinstance(a, str) and EC2_WRITE.match(a) for a in actions):
                writers.setdefault(name, []).append(statement)
    # The workflow's own role changes nothing: it assumes the action role of the host's account for each EC2 call.
    assert set(writers) == {"ActionRole", "SchedulerRole"}
    (action,) = writers["ActionRole"]
    (scheduler,) = writers["SchedulerRole"]
    assert sorted(action["Action"]) == ["ec2:ModifyInstanceAttribute", "ec2:StartInstances", "ec2:StopInstances"]
    assert sorted(scheduler["Action"]) == ["ec2:StartInstances", "ec2:StopInstances"]
    for statement in (action, scheduler):
        assert statement["Condition"] == {
            "StringEquals": {"aws:ResourceTag/${ManagedTagKey}": "true"},
            "Null": {"aws:ResourceTag/${OptOutTagKey}": "true"},  # opted out: never touched, schedules included
        }
        assert statement["Resource"] == "arn:${AWS::Partition}:ec2:*:${AWS::AccountId}:instance/*"
    assert "ec2:TerminateInstances" not in json.dumps(resources)


def test_template_wires_the_state_machine_and_the_notifier() -> None:
    resources = _template()["Resources"]
    machine = resources["ResizeStateMachine"]["Properties"]
    assert machine["Name"] == {"Fn::Sub": "${AWS::StackName}-resize"}
    assert machine["DefinitionUri"] == "statemachine/resize.asl.json"
    placeholders = set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", ASL_PATH.read_text()))
    assert placeholders == set(machine["DefinitionSubstitutions"])
    notifier = resources["NotifierFunction"]["Properties"]
    assert notifier["Handler"] == "rightsizer.handlers.notify.handler"
    progress, ended = notifier["Events"]["ResizeProgress"], notifier["Events"]["ExecutionEnded"]
    assert progress["Type"] == ended["Type"] == "EventBridgeRule"
    assert progress["Properties"]["Pattern"]["source"] == [RESIZE_EVENT_SOURCE]
    (machines,) = ended["Properties"]["Pattern"]["detail"]["stateMachineArn"]  # this region's and regional copies
    assert machines["wildcard"]["Fn::Sub"].endswith(":stateMachine:${AWS::StackName}-resize")
    assert "NotifierLogs" in resources
    assert "ResizeStateMachineArn" in _template()["Outputs"]


def test_the_definition_passes_cfn_lint_step_functions_checks() -> None:
    """`make template` lints template.yaml, where the ASL is only a DefinitionUri: lint it inline here."""
    from cfnlint.api import lint

    template = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "Machine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {
                    "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/resize-workflow",
                    "Definition": json.loads(ASL_PATH.read_text()),
                    "DefinitionSubstitutions": {"TableName": TABLE},
                },
            }
        },
    }
    matches = lint(json.dumps(template), regions=[REGION])
    # cfn-lint 1.58's schema takes a Task's Arguments as an object only; the Amazon States Language allows "a JSON
    # text, or a JSONata string that evaluates to a JSON text" (states-language.net, "Using Arguments and Output").
    # The one state written so (a copy of a whole endpoint config) is named here, and its request is evaluated and
    # held to botocore's model by tests/integration/test_sdk_parameters.py instead.
    definition: dict[str, Any] = json.loads(ASL_PATH.read_text())["States"]
    spec_allows = {
        ("E3601", "CreateEndpointConfig")
        for m in matches
        if m.rule.id == "E3601"
        and m.path[-1] == "Arguments"
        and str(definition[m.path[-2]]["Arguments"]).startswith("{%")
    }
    assert spec_allows == {("E3601", "CreateEndpointConfig")}
    assert [str(m) for m in matches if (m.rule.id, m.path[-2]) not in spec_allows] == []


def test_every_state_is_reachable_and_every_transition_exists() -> None:
    states: dict[str, dict[str, Any]] = json.loads(ASL_PATH.read_text())["States"]

    def targets(state: Mapping[str, Any]) -> list[str]:
        found = [state[k] for k in ("Next", "Default") if k in state]
        found += [rule["Next"] for rule in state.get("Choices", [])]
        found += [rule["Next"] for rule in state.get("Catch", [])]
        return found

    reached, todo = set(), [json.loads(ASL_PATH.read_text())["StartAt"]]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            assert name in states, f"transition to a missing state {name}"
            todo.extend(targets(states[name]))
    assert reached == set(states)
    # every EC2 mutation is caught: a failure must lead to the rollback or a failure report, never out
    for name, state in states.items():
        if state.get("Resource", "").split(":")[-1] in {"stopInstances", "startInstances", "modifyInstanceAttribute"}:
            assert state["Catch"][0]["ErrorEquals"] == ["States.ALL"], name
