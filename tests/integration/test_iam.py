"""Least privilege, checked against behaviour: each function's IAM policy in template.yaml names exactly
the AWS actions its code calls when it runs (recorded at the botocore layer against moto), and allows each call on
every resource AWS's Service Authorization Reference requires for it, under conditions the reference lists and the
call meets (tests/iam_reference.py). (botocore validates these requests itself: the functions' clients keep its
parameter validation on.)"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from demo.lambda_context import FakeLambdaContext

from rightsizer import bootstrap
from tests.api_calls import UNAUTHORISED_OK, ApiCall, policy_actions, record_api_call_details
from tests.events import load_event
from tests.iam_reference import problems, request_of, role_policy, unsupported_conditions
from tests.integration.pipeline_world import BUCKET, HOME, ROLES

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pricing"


def _canned_products(params: dict[str, Any]) -> dict[str, Any]:
    sample = json.loads((FIXTURES / "SYNTHETIC_getproducts_g4dn_xlarge_us-east-1.json").read_text())
    return {"FormatVersion": "aws_v1", "PriceList": sample["PriceList"]}


def _canned_savings_plans(params: dict[str, Any]) -> dict[str, Any]:
    """moto has no Savings Plans service: one Compute Savings Plan, as the API describes it."""
    plan = {"savingsPlanId": "sp-0123", "savingsPlanType": "Compute", "commitment": "1.5", "state": "active"}
    return {"savingsPlans": [plan]}


def _canned_rates(params: dict[str, Any]) -> dict[str, Any]:
    rate = {
        "rate": "0.7",
        "usageType": "BoxUsage:g4dn.xlarge",
        "properties": [{"name": "instanceType", "value": "g4dn.xlarge"}, {"name": "region", "value": "us-east-1"}],
    }
    return {"savingsPlanId": params["savingsPlanId"], "searchResults": [rate]}


SAVINGS_PLANS = {
    "savingsplans:DescribeSavingsPlans": _canned_savings_plans,
    "savingsplans:DescribeSavingsPlanRates": _canned_rates,
    # moto has no inference components: the world's endpoint without a model has one.
    "sagemaker:ListInferenceComponents": lambda params: {
        "InferenceComponents": [{"InferenceComponentName": "llama-3-8b", "EndpointName": params["EndpointNameEquals"]}]
    },
}


def assert_least_privilege(function: str, calls: list[ApiCall], table: str, secret: str = "") -> None:
    needed = {call.action for call in calls} - UNAUTHORISED_OK
    granted = policy_actions(function)
    assert granted - needed == set(), f"{function} is granted actions its code never calls"
    assert needed - granted == set(), f"{function} calls actions its policy does not grant"
    assert_reference(function, calls, table, secret)


def _secret_arn(name: str) -> str:
    return str(boto3.client("secretsmanager", region_name="us-east-1").describe_secret(SecretId=name)["ARN"])


def assert_reference(function: str, calls: list[ApiCall], table: str, secret: str) -> None:
    """Each call against the function's policy as deployed with the world's names (AWS's authorization reference)."""
    from samtranslator.yaml_helper import yaml_parse

    from tests.integration.test_iam_reference import ROOT

    deployed = {
        "AWS::Partition": "aws",
        "AWS::AccountId": HOME,
        "AWS::Region": "us-east-1",
        "AWS::StackName": "gpu-rightsizer",
        "Table.Arn": f"arn:aws:dynamodb:us-east-1:{HOME}:table/{table}",
        "PlanBucket.Arn": f"arn:aws:s3:::{BUCKET}",
        "SlackSecret": _secret_arn(secret) if secret else "",
        "AccountRoleArns": ROLES,
        "UseOrganizations": "true",
    }
    policy = role_policy(yaml_parse((ROOT / "template.yaml").read_text()), function, deployed)
    assert unsupported_conditions(policy) == [], function
    refused = []
    for call in calls:
        if call.action in UNAUTHORISED_OK:
            continue
        params = dict(call.params)
        if call.action == "secretsmanager:GetSecretValue":
            params["SecretId"] = _secret_arn(str(params["SecretId"]))  # IAM sees the secret's ARN, however named
        request = request_of(call.action, params, call.region, HOME, f"{function}: {call.action}", lambda arn: {})
        refused += problems(policy, request)
    assert sorted(set(refused)) == [], f"{function}'s policy would refuse:\n" + "\n".join(sorted(set(refused)))


def test_collect_function_policy(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from rightsizer.adapters.aws.store import DynamoStore
    from rightsizer.handlers import collect
    from rightsizer.services.ports import ScheduleRecord
    from tests.slack_double import OFFICE_HOURS_PLAN

    # A pair the registry lists but EventBridge Scheduler no longer has: the plan forgets it (DeleteItem).
    store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(world["table"]))
    gone = "i-0000000000000dead"
    store.put_schedule(
        ScheduleRecord(
            account_id="111111111111",
            region="us-east-1",
            instance_id=gone,
            instance_type="g5.xlarge",
            recommendation_id="rec-gone",
            stop_name=f"rightsizer-{gone}-stop",
            start_name=f"rightsizer-{gone}-start",
            plan=OFFICE_HOURS_PLAN,
            created_by="U0APPROVER",
            created_at=datetime(2026, 11, 1, tzinfo=UTC),
        )
    )
    with record_api_call_details(SAVINGS_PLANS) as calls:
        collect.handler(load_event("collect.json"), FakeLambdaContext())
        item = load_event("collect_target.json")
        role = "arn:aws:iam::111111111111:role/GpuRightsizerCollector"
        target = {"account_id": "111111111111", "region": "us-east-1", "role_arn": role}
        planned = collect.handler({**item, "target": target}, FakeLambdaContext())
        assert planned["schedule_registry"] == [f"pairs gone from EventBridge Scheduler, forgotten: {gone}"]
        assert store.schedule("111111111111", "us-east-1", gone) is None
        for shard in planned["shards"]:
            collect.handler({**load_event("collect_shard.json"), **shard}, FakeLambdaContext())
        planned_again = collect.handler({**item, "target": target}, FakeLambdaContext())  # a retried plan
        # The Organizations variant of planning (UseOrganizations=true).
        boto3.client("organizations", region_name="us-east-1").create_organization(FeatureSet="ALL")
        monkeypatch.setenv("ACCOUNT_ROLE_ARNS", "")
        monkeypatch.setenv("USE_ORGANIZATIONS", "true")
        bootstrap.lambda_wiring.cache_clear()  # another deployment: a new container
        collect.handler({**load_event("collect.json"), "detail": "{}"}, FakeLambdaContext())

    assert planned_again["shards"] == planned["shards"]
    called = {call.action for call in calls}
    assert "organizations:ListAccounts" in called and "sts:AssumeRole" in called
    made = [call for call in calls if call.action != "organizations:CreateOrganization"]
    assert_least_privilege("CollectFunction", made, world["table"])


def test_analyze_function_policy(world: dict[str, Any]) -> None:
    from rightsizer.handlers import analyze, collect

    planned = collect.handler(load_event("collect_target.json"), FakeLambdaContext())
    for shard in planned["shards"]:
        collect.handler({**load_event("collect_shard.json"), **shard}, FakeLambdaContext())
    from rightsizer.adapters.aws.store import DynamoStore

    store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(world["table"]))
    store.forget_instances([world["home"][0].instance_id])  # advice the catch-up has to write again
    with record_api_call_details() as calls:
        analyzed = [
            analyze.handler({**shard, "action": "analyze", "mode": "analyze"}, FakeLambdaContext())
            for shard in planned["shards"]
        ]
        result = analyze.handler(load_event("analyze_rank.json"), FakeLambdaContext())
        started = analyze.handler(load_event("analyze.json"), FakeLambdaContext())  # the catch-up schedule

    assert result["instances"] > 0 and all(a["status"] == "analysed" for a in analyzed)
    assert started["status"] == "started" and started["mode"] == "analyze"
    assert_least_privilege("AnalyzeFunction", calls, world["table"])


def test_prices_function_policy(world: dict[str, Any]) -> None:
    from rightsizer.handlers import prices

    with record_api_call_details({"pricing:GetProducts": _canned_products}) as calls:
        result = prices.handler(load_event("prices.json"), FakeLambdaContext())

    assert result["regions"]["us-east-1"] >= 1  # the canned g4dn.xlarge price was cached
    assert_least_privilege("PricesFunction", calls, world["table"])


@pytest.fixture
def slack_secret(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A filled Slack secret in moto and a local Slack API double the functions post to."""
    from demo.slack_double import BOT_TOKEN, SIGNING_SECRET, SlackDouble

    slack = SlackDouble().start()
    name = f"gpu-rightsizer/slack-{time.monotonic_ns()}"  # Powertools caches secrets by name
    boto3.client("secretsmanager", region_name="us-east-1").create_secret(
        Name=name, SecretString=json.dumps({"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET})
    )
    for key, value in {
        "SLACK_SECRET_NAME": name,
        "SLACK_CHANNEL": "C0GPUREPORT",
        "SLACK_API_URL": slack.api_url,
    }.items():
        monkeypatch.setenv(key, value)
    try:
        yield name
    finally:
        slack.stop()


def test_report_function_policy(world: dict[str, Any], slack_secret: str) -> None:
    from rightsizer.handlers import analyze, collect, report

    planned = collect.handler(load_event("collect_target.json"), FakeLambdaContext())
    for shard in planned["shards"]:
        collect.handler({**load_event("collect_shard.json"), **shard}, FakeLambdaContext())
    analyze.handler(load_event("analyze_rank.json"), FakeLambdaContext())
    with record_api_call_details() as calls:
        result = report.handler({**load_event("report.json"), "post": True}, FakeLambdaContext())

    assert result["posted"], "the daily report was posted to Slack"
    assert_least_privilege("ReportFunction", calls, world["table"], slack_secret)


def test_notifier_function_policy(world: dict[str, Any], slack_secret: str) -> None:
    from rightsizer.adapters.aws.store import DynamoStore
    from rightsizer.domain.approval import ApprovalStatus
    from rightsizer.handlers import notify
    from rightsizer.services.ports import Approval

    event, ended = load_event("notify.json"), load_event("notify_execution_ended.json")
    detail = event["detail"]
    store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(world["table"]))
    store.create_approval(
        Approval(
            recommendation_id=detail["recommendation_id"],
            account_id="123456789012",
            region="us-east-1",
            instance_id=detail["instance_id"],
            from_type=detail["from_type"],
            to_type=detail["to_type"],
            approver="U0DEMOLEAD",
            approved_at=datetime.now(UTC),
            status=ApprovalStatus.RUNNING,
            slack_channel="C0GPUREPORT",
            slack_ts="1764590400.000001",
        )
    )
    # The instance lock the execution would hold, so that the status change releases it.
    store._table.put_item(
        Item={"PK": f"LOCK#{detail['instance_id']}", "SK": "LOCK", "holder": ended["detail"]["executionArn"]}
    )
    notify.dependencies.cache_clear()
    with record_api_call_details() as calls:
        result = notify.handler(event, FakeLambdaContext())
        late = notify.handler(ended, FakeLambdaContext())  # the status change of the same execution
    notify.dependencies.cache_clear()

    assert result["status"] == "succeeded" and late["outcome"] == "recorded"
    assert_least_privilege("NotifierFunction", calls, world["table"], slack_secret)
