"""The demo's SageMaker resources: an endpoint nobody calls, an oversized endpoint variant and a notebook instance left
running, created through moto's SageMaker API with 14 days of the metrics SageMaker and the CloudWatch agent publish.

moto's SageMaker accepts only older `ml.*` types (ml.g4dn, ml.p3, ml.inf1): the demo uses those. GPUUtilization is
published as SageMaker does, summed over the instance's GPUs (0-100 % x GPUs).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import boto3

from demo.fleet import Shape, constant, diurnal, noisy, timeline

ROLE = "arn:aws:iam::123456789012:role/SageMakerExecution"
MANAGED = {"Key": "rightsizer:managed", "Value": "true"}


@dataclass(frozen=True)
class Endpoint:
    name: str
    region: str
    instance_type: str
    count: int
    gpus: int
    expected: str  # the finding its traffic deserves
    gpu_per_gpu: Shape  # per GPU; published summed over the instance's GPUs
    invocations_per_5min: Shape
    latency_ms: Shape = field(default=constant(40.0))
    gpu_memory_per_gpu: Shape = field(default=constant(20.0))
    host_memory_pct: float = 22.0  # MemoryUtilization: the model server's RAM, a share of the instance's


@dataclass(frozen=True)
class Notebook:
    name: str
    region: str
    instance_type: str
    gpus: int
    expected: str
    running_days: float  # InService since
    gpu: Shape | None  # the CloudWatch agent's utilization per GPU, via the notebook's lifecycle configuration


ENDPOINTS = (
    Endpoint(
        "fraud-scorer-v1",
        "us-east-1",
        "ml.g4dn.2xlarge",
        1,
        1,
        "idle",
        gpu_per_gpu=noisy(0.3, 0.2, hi=2),
        invocations_per_5min=constant(0.0),
    ),
    Endpoint(
        "chat-summarizer",
        "us-east-1",
        "ml.g4dn.12xlarge",
        1,
        4,
        "overprovisioned",
        gpu_per_gpu=diurnal(4, 14, 1.5),
        invocations_per_5min=diurnal(30, 240, 10),
        latency_ms=diurnal(60, 90, 5),
        gpu_memory_per_gpu=noisy(12, 1),
        host_memory_pct=4.0,
    ),
)
NOTEBOOKS = (Notebook("research-nb-alice", "us-east-1", "ml.p3.2xlarge", 1, "idle", 5.0, gpu=noisy(0.2, 0.2, hi=1.5)),)


@dataclass(frozen=True)
class SeededSageMaker:
    resource_id: str
    expected: str


def seed_sagemaker(
    end: datetime, days: int, account_id: str, session: boto3.Session | None = None
) -> list[SeededSageMaker]:
    """Create the endpoints and notebooks and store their metric history ending at `end`."""
    from demo import moto_sagemaker
    from demo.seed import _store_metrics

    moto_sagemaker.install()
    session = session or boto3.Session()
    seeded = []
    for endpoint in ENDPOINTS:
        client = session.client("sagemaker", region_name=endpoint.region)
        model = f"{endpoint.name}-model"
        client.create_model(ModelName=model, ExecutionRoleArn=ROLE, PrimaryContainer={"Image": "123.dkr.ecr/x:1"})
        client.create_endpoint_config(
            EndpointConfigName=f"{endpoint.name}-config-1",
            ProductionVariants=[
                {
                    "VariantName": "AllTraffic",
                    "ModelName": model,
                    "InitialInstanceCount": endpoint.count,
                    "InstanceType": endpoint.instance_type,
                    "InitialVariantWeight": 1.0,
                }
            ],
        )
        client.create_endpoint(
            EndpointName=endpoint.name, EndpointConfigName=f"{endpoint.name}-config-1", Tags=[MANAGED]
        )
        _created(account_id, endpoint, end - timedelta(days=days + 30))
        _store_metrics(account_id, endpoint.region, _endpoint_datums(endpoint, end, days))
        seeded.append(SeededSageMaker(f"sagemaker-endpoint/{endpoint.name}/AllTraffic", endpoint.expected))
    for notebook in NOTEBOOKS:
        client = session.client("sagemaker", region_name=notebook.region)
        client.create_notebook_instance(
            NotebookInstanceName=notebook.name, InstanceType=notebook.instance_type, RoleArn=ROLE, Tags=[MANAGED]
        )
        _running_since(account_id, notebook, end - timedelta(days=notebook.running_days))
        if notebook.gpu is not None:
            _store_metrics(
                account_id, notebook.region, _notebook_datums(notebook, end, min(days, notebook.running_days))
            )
        seeded.append(SeededSageMaker(f"sagemaker-notebook/{notebook.name}", notebook.expected))
    return seeded


def _created(account_id: str, endpoint: Endpoint, at: datetime) -> None:
    """moto creates an endpoint now: backdate it, as one serving for weeks looks."""
    from moto.sagemaker.models import sagemaker_backends

    found = sagemaker_backends[account_id][endpoint.region].endpoints[endpoint.name]
    found.creation_time = found.last_modified_time = at.astimezone(UTC).replace(tzinfo=None)  # moto: naive UTC


def _running_since(account_id: str, notebook: Notebook, since: datetime) -> None:
    """moto starts a notebook InService at creation: backdate it, as one started days ago looks."""
    from moto.sagemaker.models import sagemaker_backends

    found = sagemaker_backends[account_id][notebook.region].notebook_instances[notebook.name]
    found.creation_time = found.last_modified_time = since.astimezone(UTC).replace(tzinfo=None)  # moto: naive UTC
    found.status = "InService"


def _endpoint_datums(
    endpoint: Endpoint, end: datetime, days: int
) -> Iterable[tuple[str, str, dict[str, str], datetime, float]]:
    rng = random.Random(endpoint.name)
    dims = {"EndpointName": endpoint.name, "VariantName": "AllTraffic"}
    for t in timeline(end, days):
        yield "/aws/sagemaker/Endpoints", "GPUUtilization", dims, t, endpoint.gpu_per_gpu(t, rng) * endpoint.gpus
        yield "/aws/sagemaker/Endpoints", "CPUUtilization", dims, t, 3.0 * endpoint.gpus
        if t.minute == 0:
            memory = endpoint.gpu_memory_per_gpu(t, rng) * endpoint.gpus
            yield "/aws/sagemaker/Endpoints", "GPUMemoryUtilization", dims, t, memory
            yield "/aws/sagemaker/Endpoints", "MemoryUtilization", dims, t, endpoint.host_memory_pct
        calls = endpoint.invocations_per_5min(t, rng)
        if calls > 0:  # SageMaker publishes Invocations only for periods with requests
            yield "AWS/SageMaker", "Invocations", dims, t, calls
            yield "AWS/SageMaker", "InvocationsPerInstance", dims, t, calls / endpoint.count
            yield "AWS/SageMaker", "ModelLatency", dims, t, endpoint.latency_ms(t, rng) * 1000.0  # microseconds


def _notebook_datums(
    notebook: Notebook, end: datetime, days: float
) -> Iterable[tuple[str, str, dict[str, str], datetime, float]]:
    rng = random.Random(notebook.name)
    assert notebook.gpu is not None
    start = end - timedelta(days=days)
    for t in timeline(end, int(days) + 1):
        if t < start:
            continue
        for index in range(notebook.gpus):
            dims = {"NotebookInstanceName": notebook.name, "index": str(index)}
            yield "CWAgent", "nvidia_smi_utilization_gpu", dims, t, notebook.gpu(t, rng)
            if t.minute == 0:
                yield "CWAgent", "nvidia_smi_memory_used", dims, t, 300.0
