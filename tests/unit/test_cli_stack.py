"""`rightsizer report|show|act --stack NAME` against a deployment in moto: the CloudFormation stack (its parameters and
outputs), the DynamoDB table as template.yaml declares it holding what the pipeline stored, and the instance workflow's
state machine holding the repository's definition. `act --dry-run` for every kind of action."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from demo.aws_table import create_table_from_template

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.adapters.slack import blocks
from rightsizer.cli.errors import aws_failure
from rightsizer.cli.verbs.act import CHECKOUT_DEFINITION
from rightsizer.cli.verbs.act_dryrun import substituted
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import DecisionKind, Recommendation
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker_models import SageMakerDetail
from rightsizer.services.ports import Decision
from tests.slack_double import ACCOUNT, idle, publish, recommendation, schedulable, schedule_record
from tests.unit.test_cli import Run, assert_one_error, run
from tests.unit.test_commitments_unreadable import Failing, failing  # noqa: F401 -- the fixture

REGION = "us-east-1"
STACK = "gpu-rightsizer"
PIPELINE_ARN = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:gpu-rightsizer-pipeline"


def endpoint(number: int) -> Recommendation:
    rec = recommendation(number, instance_type="ml.g5.12xlarge", target_type="ml.g5.2xlarge", name="chat")
    detail = SageMakerDetail(
        endpoint_name="chat",
        variant_name="AllTraffic",
        model_name="chat-model",
        endpoint_config_name="chat-config-1",
        instance_count=2,
        target_instance_count=1,
    )
    return replace(
        rec, kind=ResourceKind.SAGEMAKER_ENDPOINT, instance_id="sagemaker-endpoint/chat/AllTraffic", sagemaker=detail
    )


def notebook(number: int) -> Recommendation:
    rec = recommendation(
        number, finding=Finding.IDLE, instance_type="ml.p3.2xlarge", target_type=None, cost_after="0", name="nb-alice"
    )
    detail = SageMakerDetail(notebook_name="nb-alice", instance_count=1)
    return replace(
        rec, kind=ResourceKind.SAGEMAKER_NOTEBOOK, instance_id="sagemaker-notebook/nb-alice", sagemaker=detail
    )


RESIZE, STOP, SCHEDULE, STOPPED_RESIZE, UNTAGGED = (
    recommendation(1),
    idle(2),
    schedulable(3),
    replace(recommendation(4, name="stopped-box"), state="stopped"),
    recommendation(5, name="untagged", managed=False),
)
ENDPOINT, NOTEBOOK = endpoint(6), notebook(7)
SCHEDULED = recommendation(8, name="office-hours")
SCARCE = replace(
    idle(10, instance_type="p4d.24xlarge", cost="23922.80"),
    instance_name="scarce",
    risks=("its 8,000 GB instance store (local NVMe) is wiped when it stops",),
)


@dataclass(frozen=True)
class Deployment:
    store: DynamoStore
    table: str


def template(table: str, resize_arn: str, **outputs: str) -> dict[str, Any]:
    """The stack as describe_stacks shows it: a few of template.yaml's parameters, the outputs the CLI reads."""
    return {
        "Parameters": {
            "ActionsEnabled": {"Type": "String", "Default": "false"},  # report-only: a dry run is what is wanted
            "LookbackDays": {"Type": "String", "Default": "14"},
            "ManagedTagKey": {"Type": "String", "Default": "rightsizer:managed"},
        },
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {
            key: {"Value": value}
            for key, value in {
                "TableName": table,
                "ResizeStateMachineArn": resize_arn,
                "PipelineStateMachineArn": PIPELINE_ARN,
                **outputs,
            }.items()
            if value
        },
    }


def create_stack(name: str, body: dict[str, Any]) -> None:
    boto3.client("cloudformation", region_name=REGION).create_stack(StackName=name, TemplateBody=json.dumps(body))


@pytest.fixture
def deployment(moto_aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Deployment]:
    for name in ("COLUMNS", "NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    table = create_table_from_template(boto3.client("dynamodb", region_name=REGION))
    store = DynamoStore(boto3.resource("dynamodb", region_name=REGION).Table(table))
    publish(store, RESIZE, STOP, SCHEDULE, STOPPED_RESIZE, UNTAGGED, ENDPOINT, NOTEBOOK, SCHEDULED, SCARCE)
    store.put_schedule(schedule_record(SCHEDULED))
    definition = substituted(CHECKOUT_DEFINITION.read_text(), {"TableName": table})
    machine = boto3.client("stepfunctions", region_name=REGION).create_state_machine(
        name="gpu-rightsizer-resize", definition=definition, roleArn=f"arn:aws:iam::{ACCOUNT}:role/workflow"
    )
    create_stack(STACK, template(table, machine["stateMachineArn"]))
    yield Deployment(store, table)


def stack(*args: str) -> Run:
    return run(*args, "--stack", STACK, "--region", REGION)


# ---------------------------------------------------------------------------------------------
# report --stack


def test_report_reads_the_ranking_the_pipeline_stored(deployment: Deployment) -> None:
    result = stack("report")

    assert result.code == 0, result.err
    lines = result.lines
    assert lines[0].split()[:3] == ["INSTANCE", "NAME", "REGION"]
    listed = [line.split()[0] for line in lines if line.startswith(("i-", "sagemaker-"))]
    assert "i-00000000000000002" in listed  # the idle host: the largest saving
    # The whole fleet's totals, counted by kind: the SageMaker endpoint variant and notebook apart from the hosts.
    assert any(line.startswith("7 EC2 hosts and 2 other resources (1 SageMaker endpoint variant, 1 ") for line in lines)
    assert "report-only" in result.out  # the stack's ActionsEnabled=false, in every ACT no


def test_report_as_json_validates_its_totals(deployment: Deployment) -> None:
    document = json.loads(stack("report", "--output", "json").out)

    assert document["totals"]["instances"] == 9
    assert all(rec["actionable"] is False for rec in document["recommendations"])  # report-only


def test_report_with_a_query(deployment: Deployment) -> None:
    result = stack("report", "--output", "text", "--query", "totals.instances")

    assert (result.code, result.out) == (0, "9\n")


def test_report_as_the_page(deployment: Deployment) -> None:
    result = stack("report", "--format", "html")

    assert result.code == 0, result.err
    assert result.out.lstrip().lower().startswith("<!doctype html>") and "i-00000000000000002" in result.out


def test_report_all_lists_every_latest_recommendation(deployment: Deployment) -> None:
    document = json.loads(stack("report", "--all", "--output", "json").out)

    assert len(document["recommendations"]) == 9


def test_report_says_what_people_hid_in_slack(deployment: Deployment) -> None:
    now = datetime.now(UTC)
    deployment.store.put_decision(
        Decision(DecisionKind.SNOOZE, ACCOUNT, REGION, STOP.instance_id, "U1", now, until=now + timedelta(days=3))
    )

    result = stack("report")

    assert "rightsizer: warning: 1 recommendation(s) snoozed or dismissed in Slack are listed too" in result.err


def test_report_before_the_first_run_says_so(moto_aws: None) -> None:
    table = create_table_from_template(boto3.client("dynamodb", region_name=REGION))
    create_stack(STACK, template(table, ""))

    assert_one_error(stack("report"), 1, "has no report yet", PIPELINE_ARN)
    assert_one_error(stack("report", "--all"), 1, "has no report yet")


def test_an_unknown_stack_is_a_usage_error(moto_aws: None) -> None:
    assert_one_error(run("report", "--stack", "nope", "--region", REGION), 2, "no stack 'nope' in us-east-1")


def test_a_stack_without_a_table_is_no_rightsizer_stack(moto_aws: None) -> None:
    create_stack("other", {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}})

    assert_one_error(run("report", "--stack", "other", "--region", REGION), 2, "has no TableName output")


def test_an_endpoint_without_cloudformation_is_one_line_and_exit_1(
    failing: Failing,  # noqa: F811 -- the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What `make serve` answered before its moto had CloudFormation: an HTML 500 page botocore cannot parse."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", failing.url)

    line = assert_one_error(stack("report"), 1, "is not an AWS response", "an endpoint or proxy without this API?")

    assert "unexpected" not in line and "<html" not in line and failing.calls["DescribeStacks"] >= 1


def test_any_aws_failure_a_verb_meets_is_described_not_unexpected() -> None:
    from botocore.exceptions import EndpointConnectionError
    from botocore.parsers import ResponseParserError

    assert aws_failure(ResponseParserError("Unable to parse response (...), invalid XML received.")) == (
        "the answer from AWS is not an AWS response (Unable to parse response (...), invalid XML received): "
        "an endpoint or proxy without this API?"
    )
    assert "cannot reach AWS" in str(aws_failure(EndpointConnectionError(endpoint_url="http://127.0.0.1:9")))
    assert aws_failure(ValueError("a bug")) is None


def test_report_needs_a_stack() -> None:
    assert_one_error(run("report"), 2, "--stack")


def test_a_stack_has_one_region(moto_aws: None) -> None:
    assert_one_error(run("report", "--stack", STACK, "--region", "a", "--region", "b"), 2, "one --region")


# ---------------------------------------------------------------------------------------------
# show --stack


@pytest.mark.parametrize("host", ["i-00000000000000002", "training-2", "TRAINING-2"])
def test_show_reads_the_stored_advice(deployment: Deployment, host: str) -> None:
    result = stack("show", host)

    assert result.code == 0, result.err
    assert result.lines[0] == "training-2 (i-00000000000000002)"
    assert "FINDING  idle" in result.out


def test_show_a_resource_by_its_id(deployment: Deployment) -> None:
    document = json.loads(stack("show", "sagemaker-endpoint/chat/AllTraffic", "--output", "json").out)

    assert (document["kind"], document["target_type"]) == (ResourceKind.SAGEMAKER_ENDPOINT.value, "ml.g5.2xlarge")


def test_show_says_what_people_decided(deployment: Deployment) -> None:
    now = datetime.now(UTC)
    deployment.store.put_decision(
        Decision(DecisionKind.SNOOZE, ACCOUNT, REGION, STOP.instance_id, "U0ALICE", now, until=now + timedelta(days=3))
    )

    result = stack("show", "training-2")
    document = json.loads(stack("show", "training-2", "--output", "json").out)

    assert "In Slack:" in result.out and "snooze by U0ALICE" in result.out
    assert [(d["kind"], d["actor"]) for d in document["decisions"]] == [("snooze", "U0ALICE")]


def test_show_of_an_unknown_host_lists_close_names(deployment: Deployment) -> None:
    line = assert_one_error(stack("show", "trainig-2"), 1, "no recommendation for 'trainig-2'", STACK)

    assert "training-2" in line


# ---------------------------------------------------------------------------------------------
# act --dry-run: the calls, from the deployed definition, for each kind of action


def calls(host: str, *more: str) -> list[dict[str, Any]]:
    result = stack("act", host, "--dry-run", "--output", "json", *more)
    assert result.code == 0, result.err
    document: dict[str, Any] = json.loads(result.out)
    listed: list[dict[str, Any]] = document["calls"]
    return listed


def changes(listed: list[dict[str, Any]]) -> list[str]:
    return [call["api"] for call in listed if call["effect"] == "changes"]


def test_a_resize_stops_modifies_and_starts_the_host_as_the_action_role(deployment: Deployment) -> None:
    listed = calls("i-00000000000000001")

    assert changes(listed) == ["ec2:StopInstances", "ec2:ModifyInstanceAttribute", "ec2:StartInstances"]
    modify = next(call for call in listed if call["api"] == "ec2:ModifyInstanceAttribute")
    assert modify["parameters"] == {"InstanceId": "i-00000000000000001", "InstanceType": {"Value": "g5.xlarge"}}
    assert modify["role"] == f"arn:aws:iam::{ACCOUNT}:role/GpuRightsizerAction"
    apis = [call["api"] for call in listed]
    assert apis[:4] == ["dynamodb:PutItem", "sts:GetCallerIdentity", "dynamodb:PutItem", "ec2:DescribeInstances"]
    assert apis[-1] == "dynamodb:DeleteItem"  # the lock is released
    assert all(
        call["parameters"]["TableName"] == deployment.table for call in listed if call["api"].startswith("dynamodb")
    )


def test_the_nvme_check_is_listed_with_its_condition(deployment: Deployment) -> None:
    nvme = next(call for call in calls("i-00000000000000001") if call["step"] == "CountNvmeReadyTag")

    assert "only when" in nvme["condition"] and "NvmeSupport" in nvme["condition"]


def test_a_stopped_hosts_resize_only_modifies_it(deployment: Deployment) -> None:
    assert changes(calls("stopped-box")) == ["ec2:ModifyInstanceAttribute"]


def test_a_stop_stops(deployment: Deployment) -> None:
    listed = calls("training-2")

    assert changes(listed) == ["ec2:StopInstances"]
    stop = next(call for call in listed if call["api"] == "ec2:StopInstances")
    assert stop["parameters"] == {"InstanceIds": ["i-00000000000000002"]}


def test_a_schedule_creates_its_pair(deployment: Deployment) -> None:
    listed = calls("training-3")

    assert changes(listed) == ["scheduler:CreateSchedule", "scheduler:CreateSchedule"]
    names = [call["parameters"]["Name"] for call in listed if call["api"] == "scheduler:CreateSchedule"]
    assert names == [f"rightsizer-{SCHEDULE.instance_id}-start", f"rightsizer-{SCHEDULE.instance_id}-stop"]
    assert all(
        call["parameters"]["ScheduleExpression"].startswith("cron(") for call in listed if "Name" in call["parameters"]
    )


def test_an_endpoint_update_creates_a_config_and_updates_the_endpoint(deployment: Deployment) -> None:
    listed = calls("sagemaker-endpoint/chat/AllTraffic")

    assert changes(listed) == [
        "cloudwatch:PutMetricAlarm",
        "sagemaker:CreateEndpointConfig",
        "sagemaker:UpdateEndpoint",
    ]
    update = next(call for call in listed if call["api"] == "sagemaker:UpdateEndpoint")
    assert update["parameters"]["EndpointName"] == "chat"


def test_a_notebook_stop_stops_the_notebook(deployment: Deployment) -> None:
    listed = calls("sagemaker-notebook/nb-alice")

    assert changes(listed) == ["sagemaker:StopNotebookInstance"]
    stop = next(call for call in listed if call["api"] == "sagemaker:StopNotebookInstance")
    assert stop["parameters"] == {"NotebookInstanceName": "nb-alice"}


def test_a_schedules_removal_deletes_its_pair(deployment: Deployment) -> None:
    listed = calls("office-hours", "--remove-schedule")

    assert changes(listed) == ["scheduler:DeleteSchedule", "scheduler:DeleteSchedule"]


def test_the_dry_run_writes_nothing(deployment: Deployment) -> None:
    before = boto3.client("dynamodb", region_name=REGION).scan(TableName=deployment.table)["Items"]

    stack("act", "training-1", "--dry-run")

    after = boto3.client("dynamodb", region_name=REGION).scan(TableName=deployment.table)["Items"]
    assert after == before
    assert deployment.store.approval(RESIZE.recommendation_id) is None


def test_the_dry_run_for_people(deployment: Deployment) -> None:
    result = stack("act", "training-1", "--dry-run")

    assert result.code == 0, result.err
    assert result.lines[0] == "Dry run: nothing was called and nothing changed."
    assert "resize of i-00000000000000001" in result.out and "g5.12xlarge → g5.xlarge" in result.out
    assert any("ec2:ModifyInstanceAttribute" in line and "changes" in line for line in result.lines)


def test_the_dry_run_lists_every_risk_slacks_confirmation_asks_the_approver_to_accept(deployment: Deployment) -> None:
    """The scarce type's restart (no capacity reservation holds it) and what the analysis found: the same list as the
    Approve button's confirmation, in the same words."""
    scarce = stack("act", "scarce", "--dry-run")
    plain = stack("act", "training-2", "--dry-run")
    document = json.loads(stack("act", "scarce", "--dry-run", "--output", "json").out)

    risks = [
        "restart capacity is not guaranteed: p4d.24xlarge is scarce, a stopped host may not start again",
        "its 8,000 GB instance store (local NVMe) is wiped when it stops",
    ]
    assert scarce.lines[-3:] == [
        "Slack's confirmation first asks the approver to accept these risks:",
        *(f"  ! {risk}" for risk in risks),
    ]
    assert document["risks"] == risks and document["approval"]["capacity_risk_confirmed"]
    confirm = blocks.approve_confirm(SCARCE).to_dict()["text"]["text"]
    assert all(risk in confirm for risk in risks)
    assert "risks" not in plain.out and "may not start again" not in plain.out


def test_a_query_over_the_dry_run(deployment: Deployment) -> None:
    result = stack("act", "training-2", "--dry-run", "--output", "text", "--query", "calls[?effect=='changes'].api")

    assert result.out == "ec2:StopInstances\n"


def test_an_approval_that_would_be_refused_says_why(deployment: Deployment) -> None:
    assert_one_error(stack("act", "untagged", "--dry-run"), 1, "would be refused", "rightsizer:managed=true")


def test_advice_without_an_action_has_nothing_to_dry_run(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(deployment.store, replace(recommendation(9, name="fine"), actionable=False), run="run-2")

    assert_one_error(stack("act", "fine", "--dry-run"), 1, "would be refused", "no one-click action")


def test_a_host_without_a_schedule_has_no_removal(deployment: Deployment) -> None:
    assert_one_error(stack("act", "training-1", "--dry-run", "--remove-schedule"), 1, "no stop/start schedule")


def test_without_dry_run_the_cli_refuses_to_act(deployment: Deployment) -> None:
    assert_one_error(stack("act", "training-1"), 2, "the CLI does not act", "Slack", "--dry-run")


def test_a_definition_file_instead_of_the_deployed_one(deployment: Deployment) -> None:
    listed = calls("training-2", "--definition", str(CHECKOUT_DEFINITION))

    assert changes(listed) == ["ec2:StopInstances"]


def test_each_stack_setting_is_read_from_the_output_template_yaml_gives_it() -> None:
    from demo.aws_table import template

    from rightsizer.cli.deployment import output_key
    from rightsizer.settings import SETTINGS, SetBy

    outputs = set(template()["Outputs"])
    read = {setting.name: output_key(setting.name) for setting in SETTINGS if setting.source is SetBy.STACK}

    assert read["SLACK_SECRET_NAME"] == "SlackSecretArn"  # the secret's Ref is its ARN, which the functions get
    # The account comes from the stack's id; the plan bucket and the regional table are no outputs (nothing reads them).
    assert {name for name, key in read.items() if key not in outputs} == {
        "HOME_ACCOUNT_ID",
        "PLAN_BUCKET",
        "REGIONAL_TABLE_NAME",
    }


def test_report_filters_and_groups_read_every_stored_recommendation(deployment: Deployment) -> None:
    """A filter's totals must be those of everything it keeps, not of the ranking's head: `report` then reads every
    latest recommendation, as --all does."""
    document = json.loads(stack("report", "--finding", "idle", "--kind", "ec2", "--output", "json").out)
    grouped = json.loads(stack("report", "--group-by", "account", "--output", "json").out)

    assert sorted(rec["instance_id"] for rec in document["recommendations"]) == sorted(
        rec.instance_id for rec in (STOP, SCARCE)
    )
    assert document["totals"]["by_finding"]["idle"] == 2 and document["filters"] == "finding idle; kind ec2"
    (account,) = grouped["showback"]["groups"]
    assert (account["key"], account["resources"]) == (ACCOUNT, 9)
