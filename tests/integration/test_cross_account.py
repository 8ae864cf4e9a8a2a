"""One click in member accounts and other regions: the stack's instance workflow acts in a second moto account through
the action role member-account/template.yaml creates there (Step Functions task Credentials, emulated by
`task_credentials`: moto itself ignores them), refuses, in words, a host whose account has no such role, and a host
in another region is acted on by that region's copy of the workflow (regional/template.yaml), reporting home."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from moto.ec2.models import ec2_backends

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import ActionKind
from rightsizer.domain.scope import ActionScope
from rightsizer.services import workflow_events
from tests.integration.resize_world import (
    ACCOUNT,
    MANAGED,
    REGION,
    Aws,
    RecordingSlack,
    action,
    approval,
    audit_events,
    create_action_roles,
    deliver_everything,
    render_definition,
    status_change_event,
    wait_for,
)

pytestmark = pytest.mark.integration

MEMBER = "444455556666"  # deployed member-account/template.yaml with EnableActions=true
BARE = "777788889999"  # collected (read-only role) but never given the action role


@dataclass
class Account:
    account_id: str
    ec2: Any

    def launch(self, ami: str, instance_type: str = "g5.12xlarge") -> str:
        instance_id: str = self.ec2.run_instances(
            ImageId=ami,
            MinCount=1,
            MaxCount=1,
            InstanceType=instance_type,
            Placement={"AvailabilityZone": f"{REGION}a"},
            TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": MANAGED, "Value": "true"}]}],
        )["Instances"][0]["InstanceId"]
        moto_instance: Any = ec2_backends[self.account_id][REGION].get_instance(instance_id)
        moto_instance.ena_support = True  # as resize_world.launch: moto leaves EnaSupport unset
        return instance_id

    def describe(self, instance_id: str) -> tuple[str, str]:
        found = self.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
        return found["InstanceType"], found["State"]["Name"]


def _session(account_id: str) -> boto3.Session:
    """An administrator of `account_id` (moto's STS lets one assume any role there)."""
    keys = boto3.client("sts", region_name=REGION).assume_role(
        RoleArn=f"arn:aws:iam::{account_id}:role/admin", RoleSessionName="setup"
    )["Credentials"]
    return boto3.Session(
        aws_access_key_id=keys["AccessKeyId"],
        aws_secret_access_key=keys["SecretAccessKey"],
        aws_session_token=keys["SessionToken"],
        region_name=REGION,
    )


@pytest.fixture(scope="module")
def accounts(_mocked: Any) -> Iterator[dict[str, Account]]:
    member, bare = _session(MEMBER), _session(BARE)
    create_action_roles(member.client("iam"))
    yield {MEMBER: Account(MEMBER, member.client("ec2")), BARE: Account(BARE, bare.client("ec2"))}


def reaching_members(aws: Aws) -> Any:
    return aws.workflow(scope=ActionScope.of(ACCOUNT, {REGION}, member_accounts=True))


@pytest.mark.parametrize("kind", [ActionKind.RESIZE, ActionKind.STOP, ActionKind.SCHEDULE])
def test_the_hubs_workflow_acts_in_a_member_account_through_its_action_role(
    aws: Aws, accounts: dict[str, Account], task_credentials: list[str], kind: ActionKind
) -> None:
    member = accounts[MEMBER]
    instance_id = member.launch(aws.ami)
    if kind is ActionKind.RESIZE:
        request = replace(approval(instance_id, rec_id=f"rec-member-{instance_id[2:]}"), account_id=MEMBER)
    else:
        request = action(instance_id, kind, account_id=MEMBER)

    arn = reaching_members(aws).start(request)
    result = wait_for(aws, arn)

    assert result["status"] == "SUCCEEDED", result
    role = f"arn:aws:iam::{MEMBER}:role/GpuRightsizerAction"
    assert task_credentials and set(task_credentials) == {role}, "every EC2 and Scheduler call ran as that role"
    expected = {ActionKind.RESIZE: ("g5.2xlarge", "running"), ActionKind.STOP: ("g5.12xlarge", "stopped")}
    assert member.describe(instance_id) == expected.get(kind, ("g5.12xlarge", "running"))
    with pytest.raises(aws.ec2.exceptions.ClientError):  # nothing of the kind in the hub's own account
        aws.ec2.describe_instances(InstanceIds=[instance_id])
    if kind is ActionKind.SCHEDULE:
        scheduler = _session(MEMBER).client("scheduler")
        names = {s["Name"] for s in scheduler.list_schedules(NamePrefix=f"rightsizer-{instance_id}-")["Schedules"]}
        assert names == {f"rightsizer-{instance_id}-stop", f"rightsizer-{instance_id}-start"}
        stop = scheduler.get_schedule(Name=f"rightsizer-{instance_id}-stop")
        assert stop["Target"]["RoleArn"] == f"arn:aws:iam::{MEMBER}:role/GpuRightsizerScheduler"
        assert json.loads(stop["Target"]["Input"]) == {"InstanceIds": [instance_id]}
    # The audit trail and the progress stay with the hub.
    log = audit_events(aws, request.recommendation_id)
    assert log[0] == f"{kind.value}_started" and log[-1] in ("succeeded", "scheduled")


def test_a_host_in_an_account_without_the_action_role_is_refused_in_words(
    aws: Aws, accounts: dict[str, Account], task_credentials: list[str]
) -> None:
    bare = accounts[BARE]
    instance_id = bare.launch(aws.ami)
    request = action(instance_id, ActionKind.STOP, account_id=BARE)
    aws.store.create_approval(request)
    aws.store.update_approval(request.recommendation_id, status=ApprovalStatus.RUNNING)
    slack = RecordingSlack()

    arn = reaching_members(aws).start(request)
    result = wait_for(aws, arn)
    deliver_everything(aws, arn, slack)

    assert (result["status"], result["error"]) == ("FAILED", "ResizeRefused")
    told = slack.replies[-1]
    assert f"account {BARE} has no action role this stack can assume" in told
    assert f"arn:aws:iam::{BARE}:role/GpuRightsizerAction" in told
    assert "deploy member-account/template.yaml there with EnableActions=true" in told
    assert "Exception" not in told and "ClientError" not in told, "words, not exception names"
    assert bare.describe(instance_id) == ("g5.12xlarge", "running"), "nothing was touched"
    assert task_credentials == [], "the role was never assumed"
    closed = aws.store.approval(request.recommendation_id)
    assert closed is not None and closed.status is ApprovalStatus.REFUSED
    assert slack.roots[0].startswith(":no_entry_sign: Stop refused:")


# ------------------------------------------------------------------------------- other regions

OTHER_REGION = "eu-west-1"


@pytest.fixture(scope="module")
def regional_copy(_mocked: Any) -> Iterator[str]:
    """regional/template.yaml in eu-west-1: its table and the same definition, named like the stack's."""
    from demo.aws_table import create_table_from_template

    table = create_table_from_template(boto3.client("dynamodb", region_name=OTHER_REGION), "gpu-rightsizer-actions")
    arn: str = boto3.client("stepfunctions", region_name=OTHER_REGION).create_state_machine(
        name="gpu-rightsizer-resize",
        definition=render_definition({"TableName": table}),
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/gpu-rightsizer-{OTHER_REGION}-workflow",
    )["stateMachineArn"]
    yield arn


def test_a_host_in_another_region_is_acted_on_by_that_regions_copy_and_reported_home(
    aws: Aws, regional_copy: str
) -> None:
    ec2 = boto3.client("ec2", region_name=OTHER_REGION)
    ami = ec2.describe_images(Filters=[{"Name": "architecture", "Values": ["x86_64"]}])["Images"][0]["ImageId"]
    instance_id = ec2.run_instances(
        ImageId=ami,
        MinCount=1,
        MaxCount=1,
        InstanceType="p3.8xlarge",
        TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": MANAGED, "Value": "true"}]}],
    )["Instances"][0]["InstanceId"]
    request = replace(action(instance_id, ActionKind.STOP, "p3.8xlarge"), region=OTHER_REGION)
    aws.store.create_approval(request)
    aws.store.update_approval(request.recommendation_id, status=ApprovalStatus.RUNNING)
    workflow = aws.workflow(
        scope=ActionScope.of(ACCOUNT, {REGION, OTHER_REGION}),
        client_for=lambda region: boto3.client("stepfunctions", region_name=region),
    )

    arn = workflow.start(request)

    assert arn.startswith(f"arn:aws:states:{OTHER_REGION}:{ACCOUNT}:execution:gpu-rightsizer-resize:")
    assert wait_for(aws, arn)["status"] == "SUCCEEDED"
    found = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
    assert found["State"]["Name"] == "stopped"
    regional = DynamoStore(boto3.resource("dynamodb", region_name=OTHER_REGION).Table("gpu-rightsizer-actions"))
    assert [e.event for e in regional.audit_log(request.recommendation_id)][-1] == "succeeded"
    # An end the copy could not catch leaves its lock in its own table: the notifier, at home, releases it there.
    regional._table.put_item(Item={"PK": f"LOCK#{instance_id}", "SK": "LOCK", "holder": arn})
    deps = workflow_events.Dependencies(
        aws.store,
        RecordingSlack(),
        home_region=REGION,
        regional_locks=lambda region: DynamoStore(
            boto3.resource("dynamodb", region_name=region).Table("gpu-rightsizer-actions")
        ),
    )
    workflow_events.process(status_change_event(aws, arn, OTHER_REGION), deps, datetime.now(UTC))
    assert regional._table.get_item(Key={"PK": f"LOCK#{instance_id}", "SK": "LOCK"}).get("Item") is None
    closed = aws.store.approval(request.recommendation_id)
    assert closed is not None and closed.status is ApprovalStatus.SUCCEEDED, "the approval lives at home"
