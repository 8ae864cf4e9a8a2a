"""A moto world for the serverless pipeline: the demo fleet in two accounts x two regions, the table
built from template.yaml, and the pipeline state machine. Shared by the pipeline and IAM tests."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from tests.environment import use_fake_aws
from tests.events import load_event
from tests.integration.step_functions import pipeline_stack

MEMBER = "111111111111"
HOME = "123456789012"
ROLES = f"arn:aws:iam::{HOME}:role/GpuRightsizerCollector,arn:aws:iam::{MEMBER}:role/GpuRightsizerCollector"
REGIONS = ("us-east-1", "eu-west-1")
DAYS = 4
HOST_KEYS = {"idle-p3", "one-of-four", "no-agent", "spot-batch", "inferentia-low", "stopped"}


BUCKET = "gpu-rightsizer-plans"
FUNCTIONS = {
    name: f"arn:aws:lambda:us-east-1:{HOME}:function:{name.lower()}" for name in ("Collect", "Analyze", "Report")
}


def run_day() -> dict[str, Any]:
    """What the pipeline state machine does, handler by handler (tests/integration/test_pipeline_shards.py runs
    the state machine itself): start, plan each target, collect each shard, rank."""
    from demo.lambda_context import FakeLambdaContext

    from rightsizer.handlers import analyze, collect

    started = collect.handler(load_event("collect.json"), FakeLambdaContext())
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    execution = sfn.list_executions(stateMachineArn=os.environ["PIPELINE_STATE_MACHINE_ARN"])["executions"][0]
    pipeline_input = json.loads(sfn.describe_execution(executionArn=execution["executionArn"])["input"])
    plan = pipeline_input["plan"]
    body = boto3.client("s3", region_name="us-east-1").get_object(Bucket=plan["Bucket"], Key=plan["Key"])["Body"]
    targets = json.loads(body.read())
    run, mode = pipeline_input["run"], pipeline_input["mode"]
    plans = [
        collect.handler({"action": "plan", "run": run, "mode": mode, "target": target}, FakeLambdaContext())
        for target in targets
    ]
    shards = [shard for planned in plans for shard in planned["shards"]]
    collected = [collect.handler({"action": "collect", **shard}, FakeLambdaContext()) for shard in shards]
    analysis = analyze.handler({"action": "rank", "run": run}, FakeLambdaContext())
    return {
        "started": started,
        "input": pipeline_input,
        "targets": targets,
        "collected": collected,
        "analysis": analysis,
    }


@pytest.fixture(scope="module")
def world() -> Iterator[dict[str, Any]]:
    """moto with the fleet seeded in two accounts and two regions, the table and the pipeline."""
    from demo.fleet import fleet
    from demo.seed import seed

    patch = pytest.MonkeyPatch()
    use_fake_aws(patch, AWS_REGION="us-east-1", TZ="UTC")
    time.tzset()
    try:
        with pipeline_stack(BUCKET, FUNCTIONS, HOME) as stack:
            table, machine = stack.table, stack.machine
            end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
            hosts = [h for h in fleet() if h.key in HOST_KEYS]
            home_seeded = seed(end, days=DAYS, hosts=hosts)
            credentials = boto3.client("sts").assume_role(RoleArn=ROLES.split(",")[1], RoleSessionName="seed")[
                "Credentials"
            ]
            member = boto3.Session(
                aws_access_key_id=credentials["AccessKeyId"],
                aws_secret_access_key=credentials["SecretAccessKey"],
                aws_session_token=credentials["SessionToken"],
            )
            member_seeded = seed(end, days=DAYS, hosts=hosts, session=member, account_id=MEMBER)
            for name, value in {
                "TABLE_NAME": table,
                "REGIONS": ",".join(REGIONS),
                "ACCOUNT_ROLE_ARNS": ROLES,
                "LOOKBACK_DAYS": str(DAYS),
                "PRICE_SOURCE": "auto",
                "PIPELINE_STATE_MACHINE_ARN": machine,
                "PLAN_BUCKET": BUCKET,
                "SHARD_SIZE": "4",  # several shards per region
                "AWS_ENDPOINT_URL_PRICING": "http://127.0.0.1:9",
            }.items():
                patch.setenv(name, value)
            yield {"machine": machine, "home": home_seeded, "member": member_seeded, "table": table}
    finally:
        patch.undo()
        time.tzset()
