"""SageMakerInventory and SageMakerMetrics (adapters/aws/sagemaker.py).

Against moto in-process (its SageMaker takes only older instance types: ml.g4dn, ml.p3, ml.inf1), and botocore's
Stubber where moto lacks an API or a behaviour (ListInferenceComponents, GetMetricData pages, refusals). CloudWatch
datapoints are sparse (a few every 3 hours): moto rescans every period it is asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import numpy as np
import pytest
from botocore.exceptions import EndpointConnectionError
from botocore.stub import ANY, Stubber

from rightsizer.adapters.aws.sagemaker import SageMakerInventory, SageMakerMetrics
from rightsizer.domain.sagemaker.usage import NotebookSeries
from rightsizer.domain.sagemaker_models import EndpointVariant, NotebookInstance, TrainingFamily, TrainingJob
from rightsizer.domain.usage.series import EMPTY, Series
from rightsizer.services.ports import SourceUnavailable, Window
from tests.factories import NOW

REGION = "us-east-1"
ACCOUNT = "123456789012"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sagemaker-execution"
IMAGE = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/serve:1"
SCALABLE_DIMENSION = "sagemaker:variant:DesiredInstanceCount"
ENDPOINTS = "/aws/sagemaker/Endpoints"
INVOCATIONS = "AWS/SageMaker"
TRAINING = "/aws/sagemaker/TrainingJobs"
WINDOW = Window(NOW - timedelta(days=2), NOW)
T0 = WINDOW.start
# Ten minutes past every third hour: a 5-minute bucket and an hourly one start at different stamps.
EVERY_3H = [T0 + timedelta(hours=3 * step, minutes=10) for step in range(16)]
CREATED = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def epochs(times: list[datetime]) -> list[int]:
    return [int(at.timestamp()) for at in times]


def hour_of(at: datetime) -> datetime:
    return at.replace(minute=0, second=0, microsecond=0)


# Clients and what botocore sent ------------------------------------------------------------------------


@pytest.fixture
def sagemaker(moto_aws: None) -> Any:
    return boto3.client("sagemaker", region_name=REGION)


@pytest.fixture
def autoscaling(moto_aws: None) -> Any:
    return boto3.client("application-autoscaling", region_name=REGION)


@pytest.fixture
def cloudwatch(moto_aws: None) -> Any:
    return boto3.client("cloudwatch", region_name=REGION)


@dataclass
class Sent:
    """Requests as botocore saw them: each operation's parameters, one entry per request sent."""

    params: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def count(self, operation: str) -> int:
        return len(self.params.get(operation, []))

    def queries(self) -> list[dict[str, Any]]:
        return [q for params in self.params.get("GetMetricData", []) for q in params["MetricDataQueries"]]


def record(client: Any) -> Sent:
    """Hook botocore's `before-parameter-build`, which fires once per request with its parameters."""
    sent = Sent()

    def on_params(params: dict[str, Any], model: Any, **_: Any) -> None:
        sent.params.setdefault(model.name, []).append(dict(params))

    client.meta.events.register("before-parameter-build", on_params)
    return sent


# Building resources in moto -----------------------------------------------------------------------------


def production_variant(name: str, instance_type: str, count: int) -> dict[str, Any]:
    return {"VariantName": name, "ModelName": "model", "InstanceType": instance_type, "InitialInstanceCount": count}


def create_endpoint(client: Any, name: str, variants: list[dict[str, Any]], tags: dict[str, str] | None = None) -> str:
    if not client.list_models(NameContains="model")["Models"]:
        client.create_model(ModelName="model", ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE})
    client.create_endpoint_config(EndpointConfigName=f"{name}-config", ProductionVariants=variants)
    tag_list = [{"Key": key, "Value": value} for key, value in (tags or {}).items()]
    return str(
        client.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-config", Tags=tag_list)["EndpointArn"]
    )


def create_training_job(client: Any, name: str, instance_type: str, count: int = 1, *, spot: bool = False) -> None:
    client.create_training_job(
        TrainingJobName=name,
        AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": "File"},
        RoleArn=ROLE,
        OutputDataConfig={"S3OutputPath": "s3://models/out"},
        ResourceConfig={"InstanceType": instance_type, "InstanceCount": count, "VolumeSizeInGB": 50},
        StoppingCondition={"MaxRuntimeInSeconds": 3600},
        EnableManagedSpotTraining=spot,
    )


def put(client: Any, namespace: str, name: str, dims: dict[str, str], points: list[tuple[datetime, float]]) -> None:
    dimensions = [{"Name": key, "Value": value} for key, value in dims.items()]
    data = [{"MetricName": name, "Dimensions": dimensions, "Timestamp": at, "Value": value} for at, value in points]
    for start in range(0, len(data), 1000):
        client.put_metric_data(Namespace=namespace, MetricData=data[start : start + 1000])


def pair(low: float, high: float, times: list[datetime] = EVERY_3H) -> list[tuple[datetime, float]]:
    """Two readings a minute apart at each time: a 5-minute Average reads their mean, an hourly Maximum the higher
    and an hourly Sum both."""
    return [point for at in times for point in ((at, low), (at + timedelta(minutes=1), high))]


# Domain objects the metrics are read for ----------------------------------------------------------------


def variant(endpoint: str = "chat", name: str = "Blue", components: tuple[str, ...] = ()) -> EndpointVariant:
    return EndpointVariant(
        account_id=ACCOUNT,
        region=REGION,
        endpoint_name=endpoint,
        variant_name=name,
        endpoint_arn=f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{endpoint}",
        endpoint_status="InService",
        endpoint_config_name=f"{endpoint}-config",
        instance_type="ml.g5.12xlarge",
        instance_count=2,
        created=CREATED,
        last_modified=CREATED,
        model_name="" if components else "model",
        inference_components=components,
    )


def notebook(name: str) -> NotebookInstance:
    return NotebookInstance(
        account_id=ACCOUNT,
        region=REGION,
        name=name,
        arn=f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:notebook-instance/{name}",
        status="InService",
        instance_type="ml.g5.12xlarge",
        created=CREATED,
        last_modified=CREATED,
    )


def family(*jobs: tuple[str, int]) -> TrainingFamily:
    return TrainingFamily(
        account_id=ACCOUNT,
        region=REGION,
        name="nightly-retrain",
        instance_type="ml.p4d.24xlarge",
        jobs=tuple(
            TrainingJob(name, "Completed", "ml.p4d.24xlarge", count, started=T0, ended=T0 + timedelta(hours=5))
            for name, count in jobs
        ),
    )


# 1. Endpoint variants --------------------------------------------------------------------------------


def test_endpoint_variants_keeps_accelerated_variants_with_counts_scaling_and_tags(
    sagemaker: Any, autoscaling: Any
) -> None:
    managed = {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 4}
    blue = {**production_variant("Blue", "ml.g4dn.12xlarge", 2), "ManagedInstanceScaling": managed}
    green = {**production_variant("Green", "ml.p3.2xlarge", 3), "InitialVariantWeight": 0.5}
    arn = create_endpoint(
        sagemaker, "chat", [blue, green, production_variant("Cpu", "ml.m5.large", 1)], tags={"team": "search"}
    )
    create_endpoint(sagemaker, "vision", [production_variant("AllTraffic", "ml.inf1.xlarge", 1)])
    create_endpoint(sagemaker, "cpu-only", [production_variant("AllTraffic", "ml.m5.large", 2)])
    autoscaling.register_scalable_target(
        ServiceNamespace="sagemaker",
        ResourceId="endpoint/chat/variant/Green",
        ScalableDimension=SCALABLE_DIMENSION,
        MinCapacity=2,
        MaxCapacity=6,
    )
    scaling_calls = record(autoscaling)

    inventory = SageMakerInventory(sagemaker, ACCOUNT, REGION, autoscaling)
    found = {v.resource_id: v for v in inventory.endpoint_variants()}

    assert sorted(found) == [
        "sagemaker-endpoint/chat/Blue",
        "sagemaker-endpoint/chat/Green",
        "sagemaker-endpoint/vision/AllTraffic",
    ]
    blue_found, green_found = found["sagemaker-endpoint/chat/Blue"], found["sagemaker-endpoint/chat/Green"]
    assert (blue_found.account_id, blue_found.region, blue_found.endpoint_arn) == (ACCOUNT, REGION, arn)
    assert (blue_found.endpoint_status, blue_found.endpoint_config_name) == ("InService", "chat-config")
    assert (blue_found.instance_type, blue_found.instance_count, blue_found.desired_instance_count) == (
        "ml.g4dn.12xlarge",
        2,
        2,
    )
    assert (blue_found.model_name, blue_found.inference_components) == ("model", ())
    assert blue_found.managed_scaling == (1, 4)
    assert blue_found.autoscaling is None
    assert blue_found.scaled_by == "managed instance scaling (1-4 instances)"
    assert dict(blue_found.tags) == {"team": "search"}
    assert blue_found.created.tzinfo is UTC and blue_found.last_modified >= blue_found.created
    assert (green_found.instance_type, green_found.instance_count, green_found.weight) == ("ml.p3.2xlarge", 3, 0.5)
    assert green_found.managed_scaling is None
    assert green_found.autoscaling == (2, 6)
    assert green_found.scaled_by == "Application Auto Scaling (2-6 instances)"
    assert dict(found["sagemaker-endpoint/vision/AllTraffic"].tags) == {}
    # Scalable targets are read once for the region, not once per endpoint.
    assert scaling_calls.count("DescribeScalableTargets") == 1
    assert scaling_calls.params["DescribeScalableTargets"][0] == {"ServiceNamespace": "sagemaker"}
    assert inventory.warnings == []


def test_without_an_autoscaling_client_no_scalable_target_is_read(sagemaker: Any, autoscaling: Any) -> None:
    create_endpoint(sagemaker, "chat", [production_variant("Blue", "ml.g4dn.xlarge", 1)])
    autoscaling.register_scalable_target(
        ServiceNamespace="sagemaker",
        ResourceId="endpoint/chat/variant/Blue",
        ScalableDimension=SCALABLE_DIMENSION,
        MinCapacity=1,
        MaxCapacity=2,
    )

    (found,) = SageMakerInventory(sagemaker, ACCOUNT, REGION).endpoint_variants()

    assert found.autoscaling is None and found.scaled_by == ""


def test_unreadable_scalable_targets_leave_the_variants_and_say_so(sagemaker: Any) -> None:
    create_endpoint(sagemaker, "chat", [production_variant("Blue", "ml.g4dn.xlarge", 1)])
    autoscaling = boto3.client("application-autoscaling", region_name=REGION)
    with Stubber(autoscaling) as stub:
        stub.add_client_error("describe_scalable_targets", "AccessDeniedException", "not authorized")
        inventory = SageMakerInventory(sagemaker, ACCOUNT, REGION, autoscaling)
        (found,) = inventory.endpoint_variants()
        stub.assert_no_pending_responses()

    assert found.variant_name == "Blue" and found.autoscaling is None
    assert inventory.warnings == [
        "application-autoscaling:DescribeScalableTargets in us-east-1: AccessDeniedException (not authorized); "
        "which endpoint variants auto scaling sets is not known"
    ]


def test_an_endpoint_whose_config_was_deleted_is_skipped_with_a_warning(sagemaker: Any) -> None:
    create_endpoint(sagemaker, "orphan", [production_variant("AllTraffic", "ml.g4dn.xlarge", 1)])
    create_endpoint(sagemaker, "chat", [production_variant("Blue", "ml.g4dn.xlarge", 1)])
    sagemaker.delete_endpoint_config(EndpointConfigName="orphan-config")

    inventory = SageMakerInventory(sagemaker, ACCOUNT, REGION)

    assert [v.endpoint_name for v in inventory.endpoint_variants()] == ["chat"]
    assert len(inventory.warnings) == 1 and "orphan" in inventory.warnings[0]
    assert "orphan-config was deleted" in inventory.warnings[0]


def _endpoint_summary(name: str) -> dict[str, Any]:
    return {
        "EndpointName": name,
        "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{name}",
        "CreationTime": CREATED,
        "LastModifiedTime": CREATED + timedelta(days=3),
        "EndpointStatus": "Updating",
    }


def test_inference_components_serverless_variants_and_counts_while_updating() -> None:
    """An endpoint of inference components (no ModelName), updating (no CurrentInstanceCount yet), with a serverless
    variant; and an endpoint deleted between ListEndpoints and DescribeEndpoint. moto has no inference components."""
    client = boto3.client("sagemaker", region_name=REGION)
    summary = _endpoint_summary("llm")
    with Stubber(client) as stub:
        stub.add_response("list_endpoints", {"Endpoints": [summary, _endpoint_summary("gone")]}, {})
        stub.add_response(
            "describe_endpoint",
            {
                **summary,
                "EndpointConfigName": "llm-config-v2",
                "ProductionVariants": [
                    {"VariantName": "AllTraffic", "DesiredInstanceCount": 3},
                    {"VariantName": "Lite"},
                ],
            },
            {"EndpointName": "llm"},
        )
        stub.add_response(
            "describe_endpoint_config",
            {
                "EndpointConfigName": "llm-config-v2",
                "EndpointConfigArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/llm-config-v2",
                "CreationTime": CREATED,
                "ProductionVariants": [
                    {"VariantName": "AllTraffic", "InstanceType": "ml.g5.12xlarge", "InitialInstanceCount": 2},
                    {"VariantName": "Lite", "ServerlessConfig": {"MemorySizeInMB": 4096, "MaxConcurrency": 5}},
                ],
            },
            {"EndpointConfigName": "llm-config-v2"},
        )
        stub.add_response(
            "list_tags",
            {"Tags": [{"Key": "owner", "Value": "nlp"}], "NextToken": "more"},
            {"ResourceArn": summary["EndpointArn"]},
        )
        stub.add_response(
            "list_tags",
            {"Tags": [{"Key": "cost-center", "Value": "42"}]},
            {"ResourceArn": summary["EndpointArn"], "NextToken": "more"},
        )
        components = [
            {
                "InferenceComponentName": name,
                "InferenceComponentArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/{name}",
                "EndpointName": "llm",
                "EndpointArn": summary["EndpointArn"],
                "VariantName": "AllTraffic",
                "CreationTime": CREATED,
                "LastModifiedTime": CREATED,
            }
            for name in ("mistral-7b", "llama-8b")
        ]
        stub.add_response(
            "list_inference_components",
            {"InferenceComponents": components},
            {"EndpointNameEquals": "llm", "VariantNameEquals": "AllTraffic"},
        )
        stub.add_client_error(
            "describe_endpoint",
            "ValidationException",
            f"Could not find endpoint 'arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/gone'.",
            expected_params={"EndpointName": "gone"},
        )
        inventory = SageMakerInventory(client, ACCOUNT, REGION)
        (found,) = inventory.endpoint_variants()
        stub.assert_no_pending_responses()

    assert found.resource_id == "sagemaker-endpoint/llm/AllTraffic"
    assert (found.endpoint_status, found.endpoint_config_name) == ("Updating", "llm-config-v2")
    assert (found.instance_count, found.desired_instance_count, found.weight) == (2, 3, None)
    assert (found.model_name, found.inference_components) == ("", ("llama-8b", "mistral-7b"))
    assert (found.created, found.last_modified) == (CREATED, CREATED + timedelta(days=3))
    assert dict(found.tags) == {"owner": "nlp", "cost-center": "42"}
    assert inventory.warnings == []


def test_unreadable_inference_components_leave_the_variant_with_none() -> None:
    client = boto3.client("sagemaker", region_name=REGION)
    summary = _endpoint_summary("llm")
    with Stubber(client) as stub:
        stub.add_response("list_endpoints", {"Endpoints": [summary]}, {})
        stub.add_response(
            "describe_endpoint",
            {
                **summary,
                "EndpointConfigName": "c",
                "ProductionVariants": [{"VariantName": "A", "CurrentInstanceCount": 1}],
            },
        )
        stub.add_response(
            "describe_endpoint_config",
            {
                "EndpointConfigName": "c",
                "EndpointConfigArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/c",
                "CreationTime": CREATED,
                "ProductionVariants": [{"VariantName": "A", "InstanceType": "ml.g6.xlarge", "InitialInstanceCount": 4}],
            },
        )
        stub.add_response("list_tags", {"Tags": []})
        stub.add_client_error("list_inference_components", "AccessDeniedException", "no\nListInferenceComponents")
        inventory = SageMakerInventory(client, ACCOUNT, REGION)
        (found,) = inventory.endpoint_variants()

    assert (found.instance_count, found.inference_components) == (1, ())
    assert inventory.warnings == [
        "sagemaker:ListInferenceComponents in us-east-1: AccessDeniedException (no ListInferenceComponents); "
        "the inference components of llm/A are not known"
    ]


# 2. Notebooks ----------------------------------------------------------------------------------------


def test_notebooks_keeps_accelerated_types_with_status_lifecycle_volume_and_tags(sagemaker: Any) -> None:
    sagemaker.create_notebook_instance(
        NotebookInstanceName="lab-gpu",
        InstanceType="ml.p3.2xlarge",
        RoleArn=ROLE,
        VolumeSizeInGB=50,
        LifecycleConfigName="cloudwatch-agent",
        Tags=[{"Key": "owner", "Value": "ana"}],
    )
    sagemaker.create_notebook_instance(NotebookInstanceName="lab-cpu", InstanceType="ml.t3.medium", RoleArn=ROLE)
    sagemaker.create_notebook_instance(NotebookInstanceName="lab-big", InstanceType="ml.p3.8xlarge", RoleArn=ROLE)
    sagemaker.stop_notebook_instance(NotebookInstanceName="lab-big")
    calls = record(sagemaker)

    found = {n.name: n for n in SageMakerInventory(sagemaker, ACCOUNT, REGION).notebooks()}

    assert sorted(found) == ["lab-big", "lab-gpu"]
    gpu, big = found["lab-gpu"], found["lab-big"]
    assert gpu.resource_id == "sagemaker-notebook/lab-gpu"
    assert gpu.arn == f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:notebook-instance/lab-gpu"
    assert (gpu.status, gpu.in_service, gpu.instance_type) == ("InService", True, "ml.p3.2xlarge")
    assert (gpu.lifecycle_config, gpu.volume_gb, dict(gpu.tags)) == ("cloudwatch-agent", 50, {"owner": "ana"})
    assert gpu.created.tzinfo is UTC
    assert (big.status, big.in_service, big.lifecycle_config, dict(big.tags)) == ("Stopped", False, "", {})
    # One Describe per accelerated notebook: the CPU one costs no call.
    described = [p["NotebookInstanceName"] for p in calls.params["DescribeNotebookInstance"]]
    assert sorted(described) == ["lab-big", "lab-gpu"]


# 3. Training families --------------------------------------------------------------------------------


def test_training_families_group_runs_by_name_prefix_and_type(sagemaker: Any) -> None:
    create_training_job(sagemaker, "nightly-retrain-2026-11-30-02-00-04-123", "ml.p3.8xlarge", 2, spot=True)
    create_training_job(sagemaker, "nightly-retrain-2026-12-01-02-00-04-456", "ml.p3.8xlarge", 2)
    create_training_job(sagemaker, "nightly-retrain-2026-12-02-02-00-04-789", "ml.g4dn.xlarge")
    create_training_job(sagemaker, "feature-prep-2026-12-01-01-00-00-001", "ml.m5.large")
    create_training_job(sagemaker, "adhoc-finetune", "ml.p3.2xlarge")
    now = datetime.now(UTC)  # moto stamps jobs with the clock's time
    calls = record(sagemaker)

    families = SageMakerInventory(sagemaker, ACCOUNT, REGION).training_families(now - timedelta(days=2), now)

    assert [(f.name, f.instance_type, len(f.jobs)) for f in families] == [
        ("adhoc-finetune", "ml.p3.2xlarge", 1),
        ("nightly-retrain", "ml.g4dn.xlarge", 1),
        ("nightly-retrain", "ml.p3.8xlarge", 2),
    ]
    nightly = families[2]
    assert nightly.resource_id == "sagemaker-training/nightly-retrain"
    assert (nightly.account_id, nightly.region) == (ACCOUNT, REGION)
    first, second = nightly.jobs
    assert (first.name, second.name) == (
        "nightly-retrain-2026-11-30-02-00-04-123",
        "nightly-retrain-2026-12-01-02-00-04-456",
    )
    assert (first.status, first.instance_type, first.instance_count) == ("Completed", "ml.p3.8xlarge", 2)
    assert (first.spot, second.spot) == (True, False)
    assert first.started is not None and first.ended is not None and first.started.tzinfo is UTC
    assert first.hosts == (
        "nightly-retrain-2026-11-30-02-00-04-123/algo-1",
        "nightly-retrain-2026-11-30-02-00-04-123/algo-2",
    )
    (listing,) = calls.params["ListTrainingJobs"]
    assert listing["CreationTimeAfter"] == now - timedelta(days=3)
    assert listing["CreationTimeBefore"] == now


def test_training_jobs_over_before_the_window_are_not_described(sagemaker: Any) -> None:
    create_training_job(sagemaker, "nightly-retrain-2026-11-30-02-00-04-123", "ml.p3.8xlarge", 2)
    later = datetime.now(UTC) + timedelta(hours=1)  # the job ended (in moto: at creation) before this window
    calls = record(sagemaker)

    assert SageMakerInventory(sagemaker, ACCOUNT, REGION).training_families(later, later + timedelta(hours=1)) == []
    assert calls.count("ListTrainingJobs") == 1 and calls.count("DescribeTrainingJob") == 0


# 4. CloudWatch series --------------------------------------------------------------------------------


def test_variant_series_maps_each_metric_statistic_and_period_to_its_field(cloudwatch: Any) -> None:
    dims = {"EndpointName": "chat", "VariantName": "Blue"}
    put(cloudwatch, ENDPOINTS, "GPUUtilization", dims, pair(100.0, 200.0))
    put(cloudwatch, ENDPOINTS, "GPUMemoryUtilization", dims, pair(40.0, 80.0))
    put(cloudwatch, ENDPOINTS, "CPUUtilization", dims, pair(10.0, 30.0))
    put(cloudwatch, ENDPOINTS, "MemoryUtilization", dims, pair(50.0, 60.0))
    put(cloudwatch, INVOCATIONS, "Invocations", dims, pair(5.0, 7.0))
    put(cloudwatch, INVOCATIONS, "InvocationsPerInstance", dims, pair(2.0, 4.0))
    put(cloudwatch, INVOCATIONS, "ModelLatency", dims, pair(1000.0, 3000.0))
    calls = record(cloudwatch)
    blue, green = variant(name="Blue"), variant(name="Green")

    found = SageMakerMetrics(cloudwatch).variant_series([blue, green], WINDOW)

    assert set(found) == {blue.resource_id, green.resource_id}
    raw = found[blue.resource_id]
    assert (raw.resource_id, raw.window_start, raw.window_end) == (blue.resource_id, WINDOW.start, WINDOW.end)
    five_minutes, hours = epochs(EVERY_3H), epochs([hour_of(at) for at in EVERY_3H])
    expected = {
        "gpu_avg": (300, five_minutes, 150.0),
        "gpu_max": (3600, hours, 200.0),
        "gpu_memory_max": (3600, hours, 80.0),
        "cpu_avg": (300, five_minutes, 20.0),
        "memory_max": (3600, hours, 60.0),
        "invocations": (3600, hours, 12.0),
        "invocations_per_instance": (3600, hours, 6.0),
        "latency_avg": (3600, hours, 2000.0),
    }
    for name, (period, stamps, value) in expected.items():
        series: Series = getattr(raw, name)
        assert series.period_seconds == period, name
        assert series.stamps.tolist() == stamps, name
        assert series.array.tolist() == [value] * len(stamps), name
    assert raw.instance_metrics
    quiet = found[green.resource_id]
    assert all(not getattr(quiet, name) for name in expected) and not quiet.instance_metrics

    # What was asked: each field's metric, statistic and period, for each variant's dimensions, in one request.
    (request,) = calls.params["GetMetricData"]
    assert (request["StartTime"], request["EndTime"], request["ScanBy"]) == (
        WINDOW.start,
        WINDOW.end,
        "TimestampAscending",
    )
    asked = {
        (
            q["MetricStat"]["Metric"]["Namespace"],
            q["MetricStat"]["Metric"]["MetricName"],
            q["MetricStat"]["Stat"],
            q["MetricStat"]["Period"],
        )
        for q in calls.queries()
        if q["MetricStat"]["Metric"]["Dimensions"] == [{"Name": k, "Value": v} for k, v in dims.items()]
    }
    assert asked == {
        (ENDPOINTS, "GPUUtilization", "Average", 300),
        (ENDPOINTS, "GPUUtilization", "Maximum", 3600),
        (ENDPOINTS, "GPUMemoryUtilization", "Maximum", 3600),
        (ENDPOINTS, "CPUUtilization", "Average", 300),
        (ENDPOINTS, "MemoryUtilization", "Maximum", 3600),
        (INVOCATIONS, "Invocations", "Sum", 3600),
        (INVOCATIONS, "InvocationsPerInstance", "Sum", 3600),
        (INVOCATIONS, "ModelLatency", "Average", 3600),
    }
    assert len(calls.queries()) == 16


def test_enhanced_metrics_per_gpu_series_are_read_per_instance_and_gpu_as_published(cloudwatch: Any) -> None:
    base = {"EndpointName": "chat", "VariantName": "Blue"}
    put(cloudwatch, ENDPOINTS, "GPUUtilization", base, pair(100.0, 200.0))  # summed over the instance's GPUs
    for instance_id, accelerator, low, high in (("i-1", "0", 90.0, 100.0), ("i-1", "1", 10.0, 20.0)):
        dims = {**base, "InstanceId": instance_id, "AcceleratorId": accelerator}
        put(cloudwatch, ENDPOINTS, "GPUUtilization", dims, pair(low, high))
    # Another endpoint's GPU: not this variant's.
    put(cloudwatch, ENDPOINTS, "GPUUtilization", {**base, "EndpointName": "other", "AcceleratorId": "0"}, pair(5, 5))
    calls = record(cloudwatch)
    blue = variant(name="Blue")

    raw = SageMakerMetrics(cloudwatch).variant_series([blue], WINDOW)[blue.resource_id]

    assert [one.array.tolist() for one in raw.gpu_accelerators_avg] == [[95.0] * 16, [15.0] * 16]  # not divided
    assert [one.array.tolist() for one in raw.gpu_accelerators_max] == [[100.0] * 16, [20.0] * 16]
    assert {one.period_seconds for one in raw.gpu_accelerators_avg} == {300}
    assert raw.gpu_avg.array.tolist() == [150.0] * 16  # the variant's own series stays summed
    assert calls.params["ListMetrics"] == [{"Namespace": ENDPOINTS, "MetricName": "GPUUtilization"}]


def test_variant_invocations_take_the_larger_of_the_variant_and_its_inference_components(cloudwatch: Any) -> None:
    h1, h2, h3 = (T0 + timedelta(hours=hour) for hour in (1, 2, 3))
    put(cloudwatch, INVOCATIONS, "Invocations", {"InferenceComponentName": "ic-a"}, [(h1, 3.0), (h2, 4.0)])
    put(cloudwatch, INVOCATIONS, "Invocations", {"InferenceComponentName": "ic-b"}, [(h1, 5.0)])
    put(
        cloudwatch,
        INVOCATIONS,
        "Invocations",
        {"EndpointName": "llm", "VariantName": "AllTraffic"},
        [(h2, 10.0), (h3, 1.0)],
    )
    llm = variant("llm", "AllTraffic", components=("ic-a", "ic-b"))

    raw = SageMakerMetrics(cloudwatch).variant_series([llm], WINDOW)[llm.resource_id]

    assert raw.invocations.period_seconds == 3600
    assert raw.invocations.stamps.tolist() == epochs([h1, h2, h3])
    assert raw.invocations.array.tolist() == [8.0, 10.0, 1.0]


def test_notebook_series_per_gpu_from_the_agent_merging_its_dimension_sets(cloudwatch: Any) -> None:
    lab = {"NotebookInstanceName": "lab-gpu"}
    # GPU 0 before an agent config change (no `name`) and after it; GPU 1 throughout.
    before, after = EVERY_3H[:8], EVERY_3H[8:]
    put(cloudwatch, "CWAgent", "nvidia_smi_utilization_gpu", {**lab, "index": "0"}, pair(10.0, 30.0, before))
    put(
        cloudwatch,
        "CWAgent",
        "nvidia_smi_utilization_gpu",
        {**lab, "index": "0", "name": "Tesla V100"},
        pair(50.0, 70.0, after),
    )
    put(
        cloudwatch, "CWAgent", "nvidia_smi_utilization_gpu", {**lab, "index": "1", "name": "Tesla V100"}, pair(0.0, 2.0)
    )
    put(
        cloudwatch,
        "CWAgent",
        "nvidia_smi_memory_used",
        {**lab, "index": "1", "name": "Tesla V100"},
        pair(900.0, 1200.0),
    )
    put(cloudwatch, "CWAgent", "mem_used_percent", lab, pair(20.0, 25.0))  # host memory: not a GPU series
    put(
        cloudwatch,
        "CWAgent",
        "nvidia_smi_utilization_gpu",
        {"NotebookInstanceName": "lab-gpu-2", "index": "0"},
        pair(99.0, 99.0),
    )
    calls = record(cloudwatch)
    measured, quiet = notebook("lab-gpu"), notebook("quiet")

    metrics = SageMakerMetrics(cloudwatch)
    found = metrics.notebook_series([measured, quiet], WINDOW)

    raw = found[measured.resource_id]
    assert (raw.window_start, raw.window_end) == (WINDOW.start, WINDOW.end)
    gpu0_avg, gpu1_avg = raw.gpu_avg
    assert gpu0_avg.period_seconds == 300 and gpu0_avg.stamps.tolist() == epochs(EVERY_3H)
    assert gpu0_avg.array.tolist() == [20.0] * 8 + [60.0] * 8
    assert gpu1_avg.array.tolist() == [1.0] * 16
    gpu0_max, gpu1_max = raw.gpu_max
    assert gpu0_max.period_seconds == 3600 and gpu0_max.stamps.tolist() == epochs([hour_of(at) for at in EVERY_3H])
    assert gpu0_max.array.tolist() == [30.0] * 8 + [70.0] * 8 and gpu1_max.array.tolist() == [2.0] * 16
    gpu0_memory, gpu1_memory = raw.memory_used_max
    assert gpu0_memory is EMPTY  # GPU 0 publishes no memory: its place is kept, empty
    assert gpu1_memory.period_seconds == 3600 and gpu1_memory.array.tolist() == [1200.0] * 16
    assert found[quiet.resource_id] == NotebookSeries(quiet.resource_id, WINDOW.start, WINDOW.end)

    assert [p["Dimensions"] for p in calls.params["ListMetrics"]] == [
        [{"Name": "NotebookInstanceName", "Value": "lab-gpu"}],
        [{"Name": "NotebookInstanceName", "Value": "quiet"}],
    ]
    assert {p["Namespace"] for p in calls.params["ListMetrics"]} == {"CWAgent"}
    assert metrics.list_metrics_calls == 2
    # Utilisation: 2 dimension sets of GPU 0 and 1 of GPU 1, each twice (Average, Maximum); memory of GPU 1 once.
    assert len(calls.queries()) == 7
    assert {q["MetricStat"]["Metric"]["MetricName"] for q in calls.queries()} == {
        "nvidia_smi_utilization_gpu",
        "nvidia_smi_memory_used",
    }


def test_training_series_one_per_host_keyed_by_family(cloudwatch: Any) -> None:
    job = "nightly-retrain-2026-11-30-02-00-04-123"
    put(cloudwatch, TRAINING, "GPUUtilization", {"Host": f"{job}/algo-1"}, pair(300.0, 500.0))
    put(cloudwatch, TRAINING, "GPUMemoryUtilization", {"Host": f"{job}/algo-1"}, pair(200.0, 600.0))
    put(cloudwatch, TRAINING, "GPUUtilization", {"Host": f"{job}/algo-2"}, pair(100.0, 100.0, EVERY_3H[:2]))
    nightly = family((job, 3), ("nightly-retrain-2026-12-01-02-00-04-456", 1))
    calls = record(cloudwatch)

    found = SageMakerMetrics(cloudwatch).training_series([nightly], WINDOW)

    raw = found["sagemaker-training/nightly-retrain"]
    assert (raw.resource_id, raw.window_start, raw.window_end) == (nightly.resource_id, WINDOW.start, WINDOW.end)
    first, second = raw.jobs
    assert (first.job, second.job) == (job, "nightly-retrain-2026-12-01-02-00-04-456")
    host1, host2, host3 = first.gpu_avg
    assert host1.period_seconds == 300 and host1.array.tolist() == [400.0] * 16
    assert host2.array.tolist() == [100.0, 100.0] and host3 is EMPTY
    memory1, memory2, memory3 = first.gpu_memory_max
    assert memory1.period_seconds == 3600 and memory1.array.tolist() == [600.0] * 16
    assert memory2 is EMPTY and memory3 is EMPTY
    assert second.gpu_avg == (EMPTY,) and second.gpu_memory_max == (EMPTY,)
    asked = {
        (
            q["MetricStat"]["Metric"]["Namespace"],
            q["MetricStat"]["Metric"]["MetricName"],
            q["MetricStat"]["Stat"],
            q["MetricStat"]["Period"],
        )
        for q in calls.queries()
    }
    assert asked == {
        (TRAINING, "GPUUtilization", "Average", 300),
        (TRAINING, "GPUMemoryUtilization", "Maximum", 3600),
        (TRAINING, "CPUUtilization", "Average", 300),
        (TRAINING, "MemoryUtilization", "Maximum", 3600),
    }
    assert sorted(q["MetricStat"]["Metric"]["Dimensions"][0]["Value"] for q in calls.queries())[:2] == [
        f"{job}/algo-1",
        f"{job}/algo-1",
    ]
    assert len(calls.queries()) == 16  # 4 metrics (GPU, GPU memory, CPU, RAM) x (3 + 1) hosts


def test_queries_are_split_into_requests_of_at_most_max_queries(cloudwatch: Any) -> None:
    put(cloudwatch, ENDPOINTS, "GPUUtilization", {"EndpointName": "chat", "VariantName": "Blue"}, pair(100.0, 200.0))
    blue = variant(name="Blue")
    whole = SageMakerMetrics(cloudwatch).variant_series([blue], WINDOW)
    calls = record(cloudwatch)

    metrics = SageMakerMetrics(cloudwatch, max_queries_per_call=3)
    split = metrics.variant_series([blue], WINDOW)

    assert [len(p["MetricDataQueries"]) for p in calls.params["GetMetricData"]] == [3, 3, 2]
    assert metrics.get_metric_data_calls == 3
    assert (
        split[blue.resource_id].gpu_avg.array.tolist() == whole[blue.resource_id].gpu_avg.array.tolist() == [150.0] * 16
    )
    assert split[blue.resource_id].gpu_max.array.tolist() == [200.0] * 16
    for bad in (0, 501):
        with pytest.raises(ValueError, match="max_queries_per_call"):
            SageMakerMetrics(cloudwatch, max_queries_per_call=bad)


def test_get_metric_data_pages_are_followed_sorted_and_deduplicated() -> None:
    """moto never paginates: the Stubber answers two pages, the second repeating a timestamp of the first."""
    client = boto3.client("cloudwatch", region_name=REGION)
    job = "nightly-retrain-2026-11-30-02-00-04-123"
    t1, t2, t3 = (T0 + timedelta(minutes=5 * step) for step in (1, 2, 3))
    expected = {
        "MetricDataQueries": ANY,
        "StartTime": WINDOW.start,
        "EndTime": WINDOW.end,
        "ScanBy": "TimestampAscending",
    }
    with Stubber(client) as stub:
        stub.add_response(
            "get_metric_data",
            {
                "MetricDataResults": [
                    {"Id": "q0", "Timestamps": [t2, t1], "Values": [20.0, 10.0], "StatusCode": "PartialData"},
                    {"Id": "q1", "Timestamps": [], "Values": [], "StatusCode": "Complete"},
                ],
                "NextToken": "page-2",
            },
            expected,
        )
        stub.add_response(
            "get_metric_data",
            {
                "MetricDataResults": [
                    {"Id": "q0", "Timestamps": [t1, t3], "Values": [10.0, 30.0], "StatusCode": "Complete"},
                    {"Id": "q1", "Timestamps": [t3], "Values": [55.0], "StatusCode": "InternalError"},
                ]
            },
            {**expected, "NextToken": "page-2"},
        )
        metrics = SageMakerMetrics(client)
        found = metrics.training_series([family((job, 1))], WINDOW)
        stub.assert_no_pending_responses()

    (host,) = found["sagemaker-training/nightly-retrain"].jobs[0].gpu_avg
    assert host.stamps.tolist() == epochs([t1, t2, t3])
    assert host.array.tolist() == [10.0, 20.0, 30.0]
    assert isinstance(host.array, np.ndarray)
    assert metrics.get_metric_data_calls == 2
    assert len(metrics.warnings) == 1
    assert metrics.warnings[0].startswith("CloudWatch answered InternalError for 1 SageMaker queries")
    assert f"{job}/algo-1" in metrics.warnings[0]


# 5. Failures -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "code", "message", "read", "expected"),
    [
        (
            "list_endpoints",
            "AccessDeniedException",
            "User: arn:aws:sts::123456789012:assumed-role/reader is not authorized\n"
            "to perform: sagemaker:ListEndpoints",
            lambda inventory: inventory.endpoint_variants(),
            "sagemaker:ListEndpoints in us-east-1: AccessDeniedException (User: arn:aws:sts::123456789012:assumed-role/"
            "reader is not authorized to perform: sagemaker:ListEndpoints)",
        ),
        (
            "list_notebook_instances",
            "ThrottlingException",
            "Rate exceeded",
            lambda inventory: inventory.notebooks(),
            "sagemaker:ListNotebookInstances in us-east-1: ThrottlingException (Rate exceeded)",
        ),
        (
            "list_training_jobs",
            "InternalFailure",
            "",
            lambda inventory: inventory.training_families(WINDOW.start, WINDOW.end),
            "sagemaker:ListTrainingJobs in us-east-1: InternalFailure",
        ),
    ],
)
def test_sagemaker_refusals_become_one_line_source_unavailable(
    operation: str, code: str, message: str, read: Any, expected: str
) -> None:
    client = boto3.client("sagemaker", region_name=REGION)
    with Stubber(client) as stub:
        stub.add_client_error(operation, code, message)
        with pytest.raises(SourceUnavailable) as caught:
            read(SageMakerInventory(client, ACCOUNT, REGION))
    assert str(caught.value) == expected
    assert "\n" not in str(caught.value)


def test_a_refused_describe_is_not_taken_for_a_deleted_resource() -> None:
    client = boto3.client("sagemaker", region_name=REGION)
    with Stubber(client) as stub:
        stub.add_response("list_endpoints", {"Endpoints": [_endpoint_summary("llm")]})
        stub.add_client_error("describe_endpoint", "AccessDeniedException", "not authorized")
        with pytest.raises(SourceUnavailable, match=r"^sagemaker:DescribeEndpoint in us-east-1: AccessDeniedException"):
            SageMakerInventory(client, ACCOUNT, REGION).endpoint_variants()


class _Unreachable:
    """A client whose every request fails before an answer: the network, or an API the endpoint lacks."""

    def __init__(self, error: Exception) -> None:
        self._error = error

    def get_paginator(self, _operation: str) -> Any:
        raise self._error


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            EndpointConnectionError(endpoint_url="https://api.sagemaker.us-east-1.amazonaws.com/"),
            "sagemaker:ListNotebookInstances: cannot reach AWS in us-east-1 "
            "(https://api.sagemaker.us-east-1.amazonaws.com/): check the network or AWS_ENDPOINT_URL",
        ),
        (
            NotImplementedError("The list_notebook_instances action has not been implemented"),
            "sagemaker:ListNotebookInstances in us-east-1: not implemented by the endpoint "
            "(The list_notebook_instances action has not been implemented)",
        ),
    ],
)
def test_unreachable_or_unimplemented_apis_become_source_unavailable(error: Exception, expected: str) -> None:
    with pytest.raises(SourceUnavailable) as caught:
        SageMakerInventory(_Unreachable(error), ACCOUNT, REGION).notebooks()
    assert str(caught.value) == expected
    assert caught.value.__cause__ is error


@pytest.fixture
def stubbed_cloudwatch() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("cloudwatch", region_name=REGION)
    with Stubber(client) as stub:
        yield client, stub


def test_cloudwatch_refusals_become_one_line_source_unavailable(stubbed_cloudwatch: tuple[Any, Stubber]) -> None:
    client, stub = stubbed_cloudwatch
    stub.add_response("list_metrics", {"Metrics": []})  # the variants' per-GPU series (enhanced metrics): none
    stub.add_client_error(
        "get_metric_data", "AccessDenied", "User is not authorized\nto perform cloudwatch:GetMetricData"
    )
    stub.add_client_error("list_metrics", "Throttling", "Rate exceeded")
    metrics = SageMakerMetrics(client)

    with pytest.raises(SourceUnavailable) as denied:
        metrics.variant_series([variant()], WINDOW)
    with pytest.raises(SourceUnavailable) as throttled:
        metrics.notebook_series([notebook("lab-gpu")], WINDOW)

    assert str(denied.value) == (
        "cloudwatch:GetMetricData in us-east-1: AccessDenied "
        "(User is not authorized to perform cloudwatch:GetMetricData)"
    )
    assert str(throttled.value) == "cloudwatch:ListMetrics in us-east-1: Throttling (Rate exceeded)"
