"""SageMaker resources as the inventory reads them, and what a SageMaker recommendation carries for its action.

Pure data (no I/O, no imports of the analyzer): `models.Recommendation.sagemaker` holds a `SageMakerDetail`, and the
Slack app's cold start imports models.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from rightsizer.domain.resources import ResourceKind, resource_id

ML_PREFIX = "ml."
# SageMaker families with accelerators (GPUs, Inferentia, Trainium): what the bot looks at, as for EC2 hosts.
_ACCELERATED = re.compile(r"^ml\.(?:p[0-9]|g[0-9]|inf[0-9]|trn[0-9])[a-z0-9-]*\.")
# A training job name ending in a timestamp or a run counter (SageMaker's SDK appends -YYYY-MM-DD-HH-MM-SS-mmm): the
# jobs of one recurring run share the rest of the name.
_RUN_SUFFIX = re.compile(r"(?:-[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}(?:-[0-9]{3})?|-[0-9]{6,})$")


def ec2_type(ml_type: str) -> str:
    """The EC2 instance type a SageMaker `ml.*` type runs on, by name: ml.g5.12xlarge -> g5.12xlarge."""
    return ml_type[len(ML_PREFIX) :] if ml_type.startswith(ML_PREFIX) else ml_type


def ml_type(ec2: str) -> str:
    return ec2 if ec2.startswith(ML_PREFIX) else ML_PREFIX + ec2


def accelerated(instance_type: str) -> bool:
    """An `ml.*` type with GPUs or Neuron devices (ml.g5.xlarge, ml.p4d.24xlarge, ml.inf2.xlarge, ml.trn1.2xlarge)."""
    return bool(_ACCELERATED.match(instance_type))


def training_family(job_name: str) -> str:
    """The name a recurring training run's jobs share: `nightly-retrain-2026-11-30-02-00-04-123` ->
    `nightly-retrain`."""
    return _RUN_SUFFIX.sub("", job_name) or job_name


@dataclass(frozen=True, slots=True)
class EndpointVariant:
    """One production variant of a real-time endpoint (DescribeEndpoint + DescribeEndpointConfig)."""

    account_id: str
    region: str
    endpoint_name: str
    variant_name: str
    endpoint_arn: str
    endpoint_status: str  # InService, Updating, Failed, ...
    endpoint_config_name: str
    instance_type: str  # "" for a serverless variant
    instance_count: int  # CurrentInstanceCount
    created: datetime
    last_modified: datetime
    desired_instance_count: int | None = None
    weight: float | None = None  # CurrentWeight: a variant with weight 0 gets only requests that target it
    serverless: bool = False
    model_name: str = ""  # "": the models are inference components
    inference_components: tuple[str, ...] = ()
    # ManagedInstanceScaling of the endpoint config (min, max) when enabled: SageMaker places and scales the instances.
    managed_scaling: tuple[int, int] | None = None
    # Application Auto Scaling's (min, max) for the variant's DesiredInstanceCount, when a scalable target exists.
    autoscaling: tuple[int, int] | None = None
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)
    # Why the one-click update (a copy of the whole config with this variant's new type and count) would be refused,
    # in the workflow's words (workflow_contract.ENDPOINT_COPY_HELD_BACK): "it has serverless variants", ...
    copy_held_back: tuple[str, ...] = ()

    @property
    def resource_id(self) -> str:
        return resource_id(ResourceKind.SAGEMAKER_ENDPOINT, self.endpoint_name, self.variant_name)

    @property
    def in_service(self) -> bool:
        return self.endpoint_status == "InService"

    @property
    def scaled_by(self) -> str:
        """Who changes the variant's instance count besides its owner ("" nobody)."""
        if self.autoscaling is not None:
            low, high = self.autoscaling
            return f"Application Auto Scaling ({low}-{high} instances)"
        if self.managed_scaling is not None:
            low, high = self.managed_scaling
            return f"managed instance scaling ({low}-{high} instances)"
        return ""


@dataclass(frozen=True, slots=True)
class NotebookInstance:
    """A SageMaker notebook instance (ListNotebookInstances + DescribeNotebookInstance)."""

    account_id: str
    region: str
    name: str
    arn: str
    status: str  # Pending, InService, Stopping, Stopped, Failed, Deleting, Updating
    instance_type: str
    created: datetime
    last_modified: datetime  # a start, a stop and an update set it: InService since then at least
    lifecycle_config: str = ""  # the NotebookInstanceLifecycleConfigName, "" when none
    volume_gb: int = 0
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def resource_id(self) -> str:
        return resource_id(ResourceKind.SAGEMAKER_NOTEBOOK, self.name)

    @property
    def in_service(self) -> bool:
        return self.status == "InService"


@dataclass(frozen=True, slots=True)
class TrainingJob:
    """One training job of the window (ListTrainingJobs + DescribeTrainingJob's ResourceConfig and times)."""

    name: str
    status: str  # InProgress, Completed, Failed, Stopping, Stopped
    instance_type: str
    instance_count: int
    started: datetime | None
    ended: datetime | None
    training_seconds: int = 0  # TrainingTimeInSeconds
    billable_seconds: int | None = None  # BillableTimeInSeconds (managed Spot bills less than it ran)
    spot: bool = False  # EnableManagedSpotTraining

    @property
    def hosts(self) -> tuple[str, ...]:
        """The Host dimension values of its /aws/sagemaker/TrainingJobs metrics: <job>/algo-1 ... algo-N."""
        return tuple(f"{self.name}/algo-{n}" for n in range(1, self.instance_count + 1))


@dataclass(frozen=True, slots=True)
class TrainingFamily:
    """The jobs of the window that share a name prefix and an instance type: one recurring run, whose next run is
    what advice can change."""

    account_id: str
    region: str
    name: str  # training_family() of its jobs' names
    instance_type: str
    jobs: tuple[TrainingJob, ...]

    @property
    def resource_id(self) -> str:
        return resource_id(ResourceKind.SAGEMAKER_TRAINING, self.name)


@dataclass(frozen=True, slots=True)
class SageMakerDetail:
    """What a SageMaker recommendation is about beyond `Recommendation`'s fields, as the analysis saw it: what an
    action acts on (names, counts, the endpoint config in force) and the numbers people read (per-GPU use, traffic,
    latency). Empty strings and None: not known or not applicable to the kind."""

    endpoint_name: str = ""
    variant_name: str = ""
    model_name: str = ""  # the variant's model ("": its models are inference components)
    copy_held_back: tuple[str, ...] = ()  # EndpointVariant.copy_held_back: why an update is not one click
    # The endpoint config in force at analysis: an endpoint whose config changed since is not the one advised on.
    endpoint_config_name: str = ""
    instance_count: int = 0  # instances of the variant now (notebooks 1; training: the largest job's count)
    # The count the advice sizes for (None: unchanged, or no change advised). With target_type: the variant's new
    # instance type and count; a target type equal to today's with a lower count is "fewer instances".
    target_instance_count: int | None = None
    inference_components: tuple[str, ...] = ()
    scaled_by: str = ""  # who scales the variant besides its owner ("" nobody): never a one-click count change
    serverless: bool = False
    notebook_name: str = ""
    lifecycle_config: str = ""  # the notebook's lifecycle configuration ("" none)
    running_since: datetime | None = None  # InService at least since (a notebook's LastModifiedTime)
    last_modified: datetime | None = None  # the resource's LastModifiedTime at analysis
    gpus_per_instance: int = 0
    # GPUUtilization as SageMaker publishes it (summed over the instance's GPUs: 0-100 x GPUs), p95 of 5-minute
    # averages; the Evidence's accelerator figures are this divided by the GPUs (per GPU).
    gpu_summed_p95_pct: float | None = None
    invocations: float | None = None  # AWS/SageMaker Invocations over the window (None: no datapoint at all)
    invocation_hours: int | None = None  # hours of the window with at least one invocation
    peak_invocations_per_instance: float | None = None  # the busiest hour's InvocationsPerInstance
    latency_p95_ms: float | None = None  # ModelLatency: p95 of the hourly averages
    latency_mean_ms: float | None = None
    jobs: int = 0  # training: jobs of the family in the window
    gpu_hours: float | None = None  # training: GPU hours the jobs were billed for
    metrics: str = ""  # which CloudWatch series were read (or were missing), in words
