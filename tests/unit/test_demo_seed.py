"""The demo's world as its agents would publish it (demo/seed.py): a host the demo resizes publishes under its new
type from the click on, whenever the click comes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from demo.fleet import IDLE_GPU, Host
from demo.seed import after_resize, seed

REGION = "us-east-1"
END = datetime(2026, 12, 5, 23, 0, tzinfo=UTC)  # the seeded history's end: an hour past a clock of 22:55


def _publishes_gpu_series_as(instance_type: str) -> bool:
    listed = boto3.client("cloudwatch", region_name=REGION).list_metrics(
        Namespace="CWAgent",
        MetricName="nvidia_smi_utilization_gpu",
        Dimensions=[{"Name": "InstanceType", "Value": instance_type}],
    )
    return bool(listed["Metrics"])


@pytest.mark.parametrize("click", [END - timedelta(minutes=3), END + timedelta(minutes=2)], ids=["before", "after"])
def test_a_resized_host_publishes_under_its_new_type_when_the_click_comes_before_or_after_the_history_ends(
    moto_aws: None, click: datetime
) -> None:
    (item,) = seed(
        END, days=1, hosts=[Host("resized", REGION, "g5.xlarge", "team", "overprovisioned", gpus=(IDLE_GPU,))]
    )
    ec2 = boto3.client("ec2", region_name=REGION)
    ec2.stop_instances(InstanceIds=[item.instance_id])
    ec2.modify_instance_attribute(InstanceId=item.instance_id, InstanceType={"Value": "g5.2xlarge"})

    now_is = after_resize(item, click, END)

    assert now_is.host.instance_type == "g5.2xlarge"
    assert _publishes_gpu_series_as("g5.2xlarge")  # without them, `rightsizer doctor` calls the resized host silent
