"""A moto world for the serverless pipeline: the demo fleet in two accounts x two regions, the table
built from template.yaml, and the pipeline state machine. Shared by the pipeline and IAM tests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.environment import use_fake_aws

MEMBER = "111111111111"
HOME = "123456789012"
ROLES = f"arn:aws:iam::{HOME}:role/GpuRightsizerCollector,arn:aws:iam::{MEMBER}:role/GpuRightsizerCollector"
REGIONS = ("us-east-1", "eu-west-1")
DAYS = 4
HOST_KEYS = {"idle-p3", "one-of-four", "no-agent", "spot-batch", "inferentia-low", "stopped"}


def _pipeline_definition() -> str:
    text = (Path(__file__).resolve().parents[2] / "statemachine" / "pipeline.asl.json").read_text()
    for name, value in {
        "CollectFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:collect",
        "AnalyzeFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:analyze",
        "ReportFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:report",
        "MaxConcurrency": "10",
    }.items():
        text = text.replace("${" + name + "}", value)
    return text


@pytest.fixture(scope="module")
def world() -> Iterator[dict[str, Any]]:
    """moto with the fleet seeded in two accounts and two regions, the table and the pipeline."""
    from demo import fast_cloudwatch, moto_commitments
    from demo.aws_table import create_table_from_template
    from demo.fleet import fleet
    from demo.seed import seed
    from moto import mock_aws

    patch = pytest.MonkeyPatch()
    use_fake_aws(patch, AWS_REGION="us-east-1", TZ="UTC")
    time.tzset()
    mock = mock_aws()
    mock.start()
    fast_cloudwatch.install(list_once=True)
    commitments = moto_commitments.installed()  # RIs and capacity reservations, which moto lacks
    commitments.__enter__()
    try:
        table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        machine = sfn.create_state_machine(
            name="gpu-rightsizer-pipeline",
            definition=_pipeline_definition(),
            roleArn=f"arn:aws:iam::{HOME}:role/pipeline",
        )["stateMachineArn"]
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
            "AWS_ENDPOINT_URL_PRICING": "http://127.0.0.1:9",
        }.items():
            patch.setenv(name, value)
        yield {"machine": machine, "home": home_seeded, "member": member_seeded, "table": table}
    finally:
        commitments.__exit__(None, None, None)
        fast_cloudwatch.uninstall()
        mock.stop()
        patch.undo()
        time.tzset()
