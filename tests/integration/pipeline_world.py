"""A moto world for the serverless pipeline: the demo fleet in two accounts x two regions, the table
built from template.yaml, and the pipeline state machine. Shared by the pipeline and IAM tests."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
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


def seed_sagemaker_world(end: datetime, member: boto3.Session) -> None:
    """The demo's endpoints and notebook in the member account's us-east-1, an endpoint whose models are inference
    components and a training job: every SageMaker call the collector makes is made."""
    from demo.sagemaker_fleet import ROLE, seed_sagemaker

    seed_sagemaker(end, DAYS, MEMBER, session=member)
    client = member.client("sagemaker", region_name="us-east-1")
    from moto.sagemaker.models import sagemaker_backends

    variant = {"VariantName": "AllTraffic", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}
    client.create_model(ModelName="components-base", ExecutionRoleArn=ROLE, PrimaryContainer={"Image": "x:1"})
    client.create_endpoint_config(
        EndpointConfigName="components-config", ProductionVariants=[{**variant, "ModelName": "components-base"}]
    )
    # moto requires a ModelName where SageMaker does not: an endpoint whose models are inference components has none.
    config = sagemaker_backends[MEMBER]["us-east-1"].endpoint_configs["components-config"]
    config.production_variants[0].pop("ModelName")
    client.create_endpoint(EndpointName="components", EndpointConfigName="components-config")
    client.create_training_job(
        TrainingJobName="nightly-retrain-2026-11-30-02-00-04-123",
        AlgorithmSpecification={"TrainingImage": "123.dkr.ecr/train:1", "TrainingInputMode": "File"},
        RoleArn=ROLE,
        OutputDataConfig={"S3OutputPath": "s3://bucket/out"},
        ResourceConfig={"InstanceType": "ml.g4dn.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 50},
        StoppingCondition={"MaxRuntimeInSeconds": 3600},
    )
    # Created inside the window (moto dates it now, after the window's last whole hour).
    job = sagemaker_backends[MEMBER]["us-east-1"].training_jobs["nightly-retrain-2026-11-30-02-00-04-123"]
    job.creation_time = job.last_modified_time = (end - timedelta(days=1)).replace(tzinfo=None)


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
            seed_sagemaker_world(end, member)
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
