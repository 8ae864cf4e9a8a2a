"""The resize state machine's moto world: EC2, DynamoDB (the template's table), EventBridge to SQS, and the
real ASL executed by moto. Shared by the resize workflow tests.

What moto does not model, and how these tests stand in for it (see ../shared/notes/library-facts.md):
  * moto's EC2 never refuses a modify or start and stops instantly: failures are injected by patching
    `EC2Backend` methods, and every EC2 mutation is recorded so refusals can prove nothing was touched.
  * moto never reports `EnaSupport` in DescribeInstances: `launch()` sets the flag on moto's instance
    model, as EC2 does for every AMI that is ENA-enabled.
  * Wait states sleep for real: the executions run with `wait_seconds=0` and a small `max_polls`; Retry
    intervals sleep for real too, so `retry_waits` records them instead.
  * moto names every EC2 error `ec2.ec2Exception` (AWS: `Ec2.Ec2Exception`); the ASL's retriers list both.
  * moto ignores a task's `Credentials` (every SDK call runs in its default account) and its STS lets anyone assume
    any role. The `task_credentials` fixture does what Step Functions does: it assumes the task's role (refused, as
    STS refuses, when the role does not exist in its account) and makes the call with that role's credentials, so
    the call lands in the role's account.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.ec2.models import EC2Backend, ec2_backends

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.adapters.aws.workflow import StepFunctionsResizeWorkflow, execution_name
from rightsizer.domain.models import ActionKind
from rightsizer.domain.workflow_contract import RESIZE_EVENT_SOURCE
from rightsizer.services import workflow_events
from rightsizer.services.ports import Approval
from tests.slack_double import OFFICE_HOURS_PLAN

ROOT = Path(__file__).resolve().parents[2]
ASL_PATH = ROOT / "statemachine" / "resize.asl.json"
TEMPLATE_PATH = ROOT / "template.yaml"
REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account
TABLE = "gpu-rightsizer-test"
MANAGED = "rightsizer:managed"
OPT_OUT = "rightsizer:ignore"
APPROVED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
EXECUTION_TIMEOUT_S = 20.0  # a bound on the status poll below; executions take about a second
WORKFLOW_ROLE = f"arn:aws:iam::{ACCOUNT}:role/gpu-rightsizer-us-east-1-workflow"  # the state machine's own role


def render_definition(substitutions: Mapping[str, str]) -> str:
    """What SAM does with DefinitionSubstitutions: replace each ${Name}; leave none behind."""
    text = ASL_PATH.read_text()
    for name, value in substitutions.items():
        text = text.replace("${" + name + "}", value)
    leftover = sorted(set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", text)))
    assert not leftover, f"unsubstituted placeholders in the ASL: {leftover}"
    return text


@dataclass
class Ec2Calls:
    """Every EC2 mutation moto received, in order: ("stop"|"start"|"modify", instance id, detail)."""

    calls: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return [kind for kind, _, _ in self.calls]


@dataclass
class Aws:
    ec2: Any
    sfn: Any
    sqs: Any
    queue_url: str
    store: DynamoStore
    table: Any
    state_machine_arn: str
    ec2_calls: Ec2Calls
    ami: str

    def workflow(self, **kwargs: Any) -> StepFunctionsResizeWorkflow:
        options: dict[str, Any] = {"wait_seconds": 0, "max_polls": 3, "table_name": TABLE}
        options.update(kwargs)
        return StepFunctionsResizeWorkflow(self.sfn, self.state_machine_arn, **options)

    def launch(
        self,
        instance_type: str = "g5.12xlarge",
        *,
        tags: Mapping[str, str] | None = None,
        managed: bool = True,
        state: str = "running",
        zone: str = "us-east-1a",
        spot: bool = False,
        ena: bool = True,
    ) -> str:
        all_tags = {"Name": "gpu-host", **({MANAGED: "true"} if managed else {}), **(tags or {})}
        kwargs: dict[str, Any] = {
            "ImageId": self.ami,
            "MinCount": 1,
            "MaxCount": 1,
            "InstanceType": instance_type,
            "Placement": {"AvailabilityZone": zone},
            "TagSpecifications": [
                {"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in all_tags.items()]}
            ],
        }
        if spot:
            kwargs["InstanceMarketOptions"] = {"MarketType": "spot"}
        instance_id: str = self.ec2.run_instances(**kwargs)["Instances"][0]["InstanceId"]
        moto_instance(instance_id).ena_support = ena
        if state == "stopped":
            self.ec2.stop_instances(InstanceIds=[instance_id])
        self.ec2_calls.calls.clear()  # only the workflow's own calls count
        return instance_id

    def describe(self, instance_id: str) -> tuple[str, str]:
        instance = self.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
        return instance["InstanceType"], instance["State"]["Name"]

    def events(self) -> list[dict[str, Any]]:
        """Progress events delivered by the EventBridge rule to the queue, oldest first."""
        received: list[dict[str, Any]] = []
        while True:
            messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not messages:
                break
            for message in messages:
                received.append(json.loads(message["Body"]))
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return received


def moto_instance(instance_id: str) -> Any:
    return ec2_backends[ACCOUNT][REGION].get_instance(instance_id)


@dataclass
class _Mocked:
    ec2: Any
    sfn: Any
    sqs: Any
    queue_url: str
    table: Any
    state_machine_arn: str
    ami: str


@pytest.fixture(scope="module")
def _mocked() -> Iterator[_Mocked]:
    """One moto world per module: loading moto's AMIs and parsing the 100-state ASL take about a second
    each, so they happen once. Tests stay independent: each launches its own hosts, and everything the
    workflow writes is keyed by the recommendation id, which is derived from the instance id."""
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
        ec2 = session.client("ec2")
        table = _create_table(session.resource("dynamodb"))
        sqs = session.client("sqs")
        queue_url = sqs.create_queue(QueueName="resize-progress")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        events = session.client("events")
        events.put_rule(Name="resize-progress", EventPattern=json.dumps({"source": [RESIZE_EVENT_SOURCE]}))
        events.put_targets(Rule="resize-progress", Targets=[{"Id": "queue", "Arn": queue_arn}])
        sfn = session.client("stepfunctions")
        arn = sfn.create_state_machine(
            name="gpu-rightsizer-resize",
            definition=render_definition({"TableName": TABLE}),
            roleArn=WORKFLOW_ROLE,
        )["stateMachineArn"]
        create_action_roles(session.client("iam"))
        images = ec2.describe_images(
            Filters=[
                {"Name": "virtualization-type", "Values": ["hvm"]},
                {"Name": "architecture", "Values": ["x86_64"]},
            ]
        )["Images"]
        yield _Mocked(ec2, sfn, sqs, queue_url, table, arn, images[0]["ImageId"])


def create_action_roles(iam: Any) -> None:
    """The stack's action and scheduler roles (member-account/template.yaml's names), in the account of `iam`."""
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole"}]})
    for name in ("GpuRightsizerAction", "GpuRightsizerScheduler"):
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust)


@pytest.fixture
def task_credentials(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Step Functions' task Credentials in moto: the call runs as the assumed role, in its account. Returns the
    roles assumed, in order."""
    from botocore.config import Config
    from botocore.exceptions import ClientError
    from moto.iam.models import iam_backends
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service_aws_sdk
    from moto.stepfunctions.parser.asl.utils.boto_client import boto_client_for as default

    assumed: list[str] = []
    make_client: Any = boto3.client  # typed per service literal

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        role = getattr(state_credentials, "role_arn", "") or ""
        if role == WORKFLOW_ROLE or ":role/" not in role:
            return default(region=region, service=service, state_credentials=state_credentials)
        account = role.split(":")[4]
        if not any(r.arn == role for r in iam_backends[account]["global"].roles.values()):
            raise ClientError(
                {
                    "Error": {
                        "Code": "AccessDenied",
                        "Message": f"User: {WORKFLOW_ROLE} is not authorized to perform: sts:AssumeRole on {role}",
                    },
                    "ResponseMetadata": {  # type: ignore[typeddict-item]  # what STS's refusal carries that matters
                        "HTTPStatusCode": 403,
                        "RequestId": "assume-role-refused",
                    },
                },
                "AssumeRole",
            )
        assumed.append(role)
        keys = boto3.client("sts", region_name=region).assume_role(RoleArn=role, RoleSessionName="states")[
            "Credentials"
        ]
        return make_client(
            service,
            region_name=region,
            aws_access_key_id=keys["AccessKeyId"],
            aws_secret_access_key=keys["SecretAccessKey"],
            aws_session_token=keys["SessionToken"],
            config=Config(parameter_validation=False, retries={"total_max_attempts": 1}),
        )

    monkeypatch.setattr(state_task_service_aws_sdk, "boto_client_for", boto_client_for)
    return assumed


@dataclass
class RetryWaits:
    """The waits moto's Retry would sleep, recorded instead (Retry intervals are real sleeps in moto)."""

    seconds: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.seconds.append(seconds)


@pytest.fixture
def retry_waits(monkeypatch: pytest.MonkeyPatch) -> RetryWaits:
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    waits = RetryWaits()
    monkeypatch.setattr(retrier_decl, "time", waits)  # the module's only use of `time` is time.sleep
    return waits


@pytest.fixture
def aws(_mocked: _Mocked, monkeypatch: pytest.MonkeyPatch, retry_waits: RetryWaits) -> Aws:
    calls = Ec2Calls()
    _record_ec2_mutations(monkeypatch, calls)
    m = _mocked
    harness = Aws(m.ec2, m.sfn, m.sqs, m.queue_url, DynamoStore(m.table), m.table, m.state_machine_arn, calls, m.ami)
    harness.events()  # drop whatever an earlier test left in the queue
    return harness


def _create_table(dynamodb: Any) -> Any:
    """The table as template.yaml declares it (keys, GSI1, TTL attribute)."""
    table = dynamodb.create_table(
        TableName=TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"} for name in ("PK", "SK", "GSI1PK", "GSI1SK")
        ],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "GSI1",
                "KeySchema": [
                    {"AttributeName": "GSI1PK", "KeyType": "HASH"},
                    {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    dynamodb.meta.client.update_time_to_live(
        TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expiration"}
    )
    return table


def _record_ec2_mutations(monkeypatch: pytest.MonkeyPatch, calls: Ec2Calls) -> None:
    stop, start, modify = EC2Backend.stop_instances, EC2Backend.start_instances, EC2Backend.modify_instance_attribute

    def stop_instances(self: EC2Backend, instance_ids: list[str]) -> Any:
        calls.calls.extend(("stop", i, "") for i in instance_ids)
        return stop(self, instance_ids)

    def start_instances(self: EC2Backend, instance_ids: list[str]) -> Any:
        calls.calls.extend(("start", i, self.get_instance(i).instance_type) for i in instance_ids)
        return start(self, instance_ids)

    def modify_instance_attribute(self: EC2Backend, instance_id: str, key: str, value: Any) -> Any:
        calls.calls.append(("modify", instance_id, f"{key}={value}"))
        return modify(self, instance_id, key, value)

    monkeypatch.setattr(EC2Backend, "stop_instances", stop_instances)
    monkeypatch.setattr(EC2Backend, "start_instances", start_instances)
    monkeypatch.setattr(EC2Backend, "modify_instance_attribute", modify_instance_attribute)


def approval(
    instance_id: str, from_type: str = "g5.12xlarge", to_type: str = "g5.2xlarge", rec_id: str | None = None
) -> Approval:
    return Approval(
        recommendation_id=rec_id or f"rec-{instance_id[2:]}",
        account_id=ACCOUNT,
        region=REGION,
        instance_id=instance_id,
        from_type=from_type,
        to_type=to_type,
        approver="U0APPROVER",
        approved_at=APPROVED_AT,
        slack_channel="C0RESIZE",
        slack_ts="1733054400.000100",
    )


def action(
    instance_id: str, kind: ActionKind, instance_type: str = "g5.12xlarge", account_id: str = ACCOUNT
) -> Approval:
    """An approved stop, schedule or schedule removal of `instance_id` (as approvals.approve writes it)."""
    to_type = {ActionKind.STOP: "stopped", ActionKind.UNSCHEDULE: "no schedule"}.get(kind, "stop/start schedule")
    suffix = "-unschedule" if kind is ActionKind.UNSCHEDULE else ""
    return replace(
        approval(instance_id, instance_type, to_type, rec_id=f"rec-{kind.value}-{instance_id[2:]}{suffix}"),
        action=kind,
        account_id=account_id,
        schedule=OFFICE_HOURS_PLAN if kind in (ActionKind.SCHEDULE, ActionKind.UNSCHEDULE) else None,
    )


def wait_for(aws: Aws, arn: str) -> dict[str, Any]:
    """Bounded poll of the execution status (moto runs it on a thread); not a synchronising sleep."""
    deadline = time.monotonic() + EXECUTION_TIMEOUT_S
    sfn: Any = aws.sfn if arn.split(":")[3] == REGION else boto3.client("stepfunctions", region_name=arn.split(":")[3])
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING":
            return described
        assert time.monotonic() < deadline, f"execution still running after {EXECUTION_TIMEOUT_S}s"
        time.sleep(0.02)


def resize(aws: Aws, request: Approval, expected_state: str = "running", **workflow: Any) -> dict[str, Any]:
    arn = aws.workflow(**workflow).start(request, expected_state=expected_state)
    return wait_for(aws, arn)


def executions_for(aws: Aws, request: Approval) -> list[str]:
    """This request's executions (the module's tests share one state machine)."""
    paginator = aws.sfn.get_paginator("list_executions")
    pages = paginator.paginate(stateMachineArn=aws.state_machine_arn)
    name = execution_name(request.recommendation_id)
    return [e["executionArn"] for page in pages for e in page["executions"] if e["name"] == name]


def ec2_attempts(state: str) -> int:
    """How often the state machine calls EC2 in `state` before giving up: 1 + its Retry's MaxAttempts."""
    (retry,) = json.loads(ASL_PATH.read_text())["States"][state]["Retry"]
    return 1 + int(retry["MaxAttempts"])


def audit_events(aws: Aws, rec_id: str) -> list[str]:
    return [entry.event for entry in aws.store.audit_log(rec_id)]


# ------------------------------------------------------------------------------- through the real notifier


@dataclass
class RecordingSlack:
    replies: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self.replies.append(text)

    def update_root(self, channel: str, ts: str, recommendation_id: str, text: str) -> None:
        self.roots.append(text)


def status_change_event(aws: Aws, arn: str, region: str = REGION) -> dict[str, Any]:
    """Step Functions' "Execution Status Change" event for a finished execution, as EventBridge delivers it
    (moto does not emit it; its fields are those of DescribeExecution)."""
    described = boto3.client("stepfunctions", region_name=region).describe_execution(executionArn=arn)
    detail = {
        "executionArn": arn,
        "stateMachineArn": arn.replace(":execution:", ":stateMachine:").rsplit(":", 1)[0],
        "name": described["name"],
        "status": described["status"],
        "startDate": int(described["startDate"].timestamp() * 1000),
        "stopDate": int(described["stopDate"].timestamp() * 1000),
        "input": described["input"],
        "inputDetails": {"included": True},
        "output": described.get("output"),
        "outputDetails": {"included": True} if described.get("output") else None,
        "error": described.get("error"),
        "cause": described.get("cause"),
    }
    return {
        "version": "0",
        "id": f"status-{described['name']}",
        "detail-type": workflow_events.EXECUTION_STATUS_CHANGE,
        "source": "aws.states",
        "account": ACCOUNT,
        "time": "2026-12-01T12:10:00Z",
        "region": region,
        "resources": [arn],
        "detail": detail,
    }


def deliver_everything(aws: Aws, arn: str, slack: RecordingSlack) -> list[dict[str, str]]:
    """The state machine's own events, then the status change, through the real notifier, twice over
    (EventBridge delivers at least once)."""
    deps = workflow_events.Dependencies(aws.store, slack)
    events = [*aws.events(), status_change_event(aws, arn)]
    return [workflow_events.process(event, deps, datetime.now(UTC)) for event in events + events]
