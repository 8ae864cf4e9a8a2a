"""SageMaker: the accelerated endpoint variants, notebook instances and training jobs of one account in one region,
and the CloudWatch series the domain's SageMaker analysis (domain/sagemaker/) reads for them.

The inventory reads the SageMaker API (and Application Auto Scaling, for who else changes a variant's count) and keeps
only `ml.*` types with GPUs or Neuron devices: the bot sizes accelerators, and a CPU endpoint's cost is someone else's
question. A resource deleted between the listing and its Describe call is skipped, not reported as a failure.
Inference components and scalable targets only refine the picture (what a variant hosts, who scales it): when they
cannot be read the inventory still answers and says so in `warnings`; every other failure is a `SourceUnavailable`
whose message names the call, e.g. "sagemaker:ListEndpoints in us-east-1: AccessDeniedException (...)".

The series are fetched as raw as the domain wants them (its dataclasses' comments name each metric, statistic and
period): 5-minute Averages and hourly Maximums or Sums, percentiles computed by the domain, never by CloudWatch.
Notebook instances publish no usage metrics of their own: only the CloudWatch agent, where the owner's lifecycle
configuration runs it with a `NotebookInstanceName` dimension, says how busy their GPUs are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import numpy as np
from botocore import xform_name
from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

# The usage adapter's readers of GetMetricData pages (timestamps in any of the parser's forms; pages merged into
# one ascending series without duplicates): SageMaker's series are read the same way as the EC2 hosts'.
from rightsizer.adapters.aws.cloudwatch import MAX_QUERIES_PER_CALL, _merge, metric_stat_query
from rightsizer.adapters.aws.metric_data import epochs, floats
from rightsizer.adapters.aws.session import describe_aws_error
from rightsizer.domain.sagemaker.usage import JobSeries, NotebookSeries, TrainingSeries, VariantSeries
from rightsizer.domain.sagemaker_models import (
    EndpointVariant,
    NotebookInstance,
    TrainingFamily,
    TrainingJob,
    accelerated,
    training_family,
)
from rightsizer.domain.usage.devices import device_order
from rightsizer.domain.usage.series import EMPTY, Floats, Ints, Series
from rightsizer.domain.workflow_contract import ENDPOINT_COPY_HELD_BACK
from rightsizer.services.ports import SourceUnavailable, Window

T = TypeVar("T")

# A job created this long before the window may still have run inside it (ListTrainingJobs filters on creation).
TRAINING_LOOKBACK = timedelta(days=1)
_SCALABLE_DIMENSION = "sagemaker:variant:DesiredInstanceCount"
# What SageMaker answers a Describe call for a name it no longer has ("Could not find endpoint ...").
_GONE = frozenset({"ValidationException", "ResourceNotFound", "ResourceNotFoundException"})
# A failure to get an answer the adapter can read. ResponseParserError is no BotoCoreError: an endpoint without the
# API (moto's server, LocalStack) or a proxy answers with a page the parser cannot read. In-process moto raises
# NotImplementedError for an API it lacks.
_FAILURES = (ClientError, BotoCoreError, ResponseParserError, NotImplementedError)
_MESSAGE_LIMIT = 300

ENDPOINTS_NAMESPACE = "/aws/sagemaker/Endpoints"
INVOCATIONS_NAMESPACE = "AWS/SageMaker"
TRAINING_NAMESPACE = "/aws/sagemaker/TrainingJobs"
AGENT_NAMESPACE = "CWAgent"
_NOTEBOOK_DIMENSION = "NotebookInstanceName"
_GPU_INDEX_DIMENSION = "index"  # the agent's per-GPU dimension (nvidia_smi)
_FIVE_MINUTES = 300
_HOUR = 3600

# VariantSeries field -> (namespace, metric, statistic, period), as the dataclass documents each field.
_VARIANT_FIELDS: Mapping[str, tuple[str, str, str, int]] = {
    "gpu_avg": (ENDPOINTS_NAMESPACE, "GPUUtilization", "Average", _FIVE_MINUTES),
    "gpu_max": (ENDPOINTS_NAMESPACE, "GPUUtilization", "Maximum", _HOUR),
    "gpu_memory_max": (ENDPOINTS_NAMESPACE, "GPUMemoryUtilization", "Maximum", _HOUR),
    "cpu_avg": (ENDPOINTS_NAMESPACE, "CPUUtilization", "Average", _FIVE_MINUTES),
    "memory_max": (ENDPOINTS_NAMESPACE, "MemoryUtilization", "Maximum", _HOUR),
    "invocations": (INVOCATIONS_NAMESPACE, "Invocations", "Sum", _HOUR),
    "invocations_per_instance": (INVOCATIONS_NAMESPACE, "InvocationsPerInstance", "Sum", _HOUR),
    "latency_avg": (INVOCATIONS_NAMESPACE, "ModelLatency", "Average", _HOUR),
}
# Enhanced metrics (EndpointConfig MetricsConfig.EnableEnhancedMetrics) publish GPUUtilization per GPU too, with the
# instance's InstanceId and the GPU's AcceleratorId: each one GPU's reading, 0-100, not a sum.
_ACCELERATOR_DIMENSION = "AcceleratorId"
_INSTANCE_DIMENSION = "InstanceId"
_ACCELERATOR_FIELDS: Mapping[str, tuple[str, int]] = {
    "gpu_accelerator_avg": ("Average", _FIVE_MINUTES),
    "gpu_accelerator_max": ("Maximum", _HOUR),
}
# An inference component's requests are counted under its own name: the variant's traffic is their sum where the
# variant's own series is missing or smaller.
_COMPONENT_INVOCATIONS = "component_invocations"
_COMPONENT_DIMENSION = "InferenceComponentName"
# The agent's metric -> (NotebookSeries field, statistic, period).
_NOTEBOOK_FIELDS: Mapping[str, tuple[tuple[str, str, int], ...]] = {
    "nvidia_smi_utilization_gpu": (("gpu_avg", "Average", _FIVE_MINUTES), ("gpu_max", "Maximum", _HOUR)),
    "nvidia_smi_memory_used": (("memory_used_max", "Maximum", _HOUR),),
}
# JobSeries field -> (metric, statistic, period), per host.
_JOB_FIELDS: Mapping[str, tuple[str, str, int]] = {
    "gpu_avg": ("GPUUtilization", "Average", _FIVE_MINUTES),
    "gpu_memory_max": ("GPUMemoryUtilization", "Maximum", _HOUR),
    # What a smaller type for the next run must still carry (light GPUs often wait on the CPU).
    "cpu_avg": ("CPUUtilization", "Average", _FIVE_MINUTES),
    "memory_max": ("MemoryUtilization", "Maximum", _HOUR),
}
_OK_STATUSES = frozenset({"Complete", "PartialData"})  # PartialData: the rest follows under NextToken

Dimensions = tuple[tuple[str, str], ...]
_Chunk = tuple[Ints, Floats]


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MESSAGE_LIMIT else line[: _MESSAGE_LIMIT - 3] + "..."


def _unavailable(call: str, region: str | None, error: BaseException) -> SourceUnavailable:
    """One line naming the call and what AWS said: "sagemaker:ListEndpoints in us-east-1: AccessDeniedException
    (User ... is not authorized ...)"."""
    where = f" in {region}" if region else ""
    if isinstance(error, ClientError):
        code = str(error.response.get("Error", {}).get("Code") or "Unknown")
        message = _one_line(str(error.response.get("Error", {}).get("Message") or ""))
        return SourceUnavailable(f"{call}{where}: {code} ({message})" if message else f"{call}{where}: {code}")
    if isinstance(error, NotImplementedError):
        return SourceUnavailable(f"{call}{where}: not implemented by the endpoint ({_one_line(str(error))})")
    return SourceUnavailable(_one_line(f"{call}: {describe_aws_error(error, region)}"))


def _gone(error: SourceUnavailable) -> bool:
    cause = error.__cause__
    return isinstance(cause, ClientError) and cause.response.get("Error", {}).get("Code") in _GONE


class _Api:
    """One client's calls; each failure becomes a one-line SourceUnavailable naming the service and operation."""

    def __init__(self, client: Any, service: str, region: str | None) -> None:
        self._client = client
        self._service = service
        self.region = region

    def _guard(self, operation: str, read: Callable[[], T]) -> T:
        try:
            return read()
        except _FAILURES as error:
            raise _unavailable(f"{self._service}:{operation}", self.region, error) from error

    def call(self, operation: str, **request: Any) -> Mapping[str, Any]:
        answer: Mapping[str, Any] = self._guard(
            operation, lambda: getattr(self._client, xform_name(operation))(**request)
        )
        return answer

    def items(self, operation: str, key: str, **request: Any) -> list[Mapping[str, Any]]:
        """Every item under `key` of every page (boto3's paginator follows NextToken)."""

        def read() -> list[Mapping[str, Any]]:
            pages = self._client.get_paginator(xform_name(operation)).paginate(**request)
            return [item for page in pages for item in page.get(key, [])]

        return self._guard(operation, read)

    def describe(self, operation: str, **request: Any) -> Mapping[str, Any] | None:
        """The answer, or None when the resource was deleted since it was listed."""
        try:
            return self.call(operation, **request)
        except SourceUnavailable as error:
            if _gone(error):
                return None
            raise


def _time(value: Any) -> datetime | None:
    """UTC, whatever the parser gave (moto's answers carry the local zone)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            return _time(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _tags(items: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    return {str(tag["Key"]): str(tag.get("Value", "")) for tag in items if "Key" in tag}


# What keeps the workflow from copying the config for an update of one variant (the keys of ENDPOINT_COPY_HELD_BACK;
# domain/actions/update_endpoint.py refuses the same).
_HELD_BACK_TESTS: Mapping[str, Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], Mapping[str, Any]], bool]] = {
    "components": lambda config, every, variant: any(not v.get("ModelName") for v in every),
    "serverless": lambda config, every, variant: any("ServerlessConfig" in v for v in every),
    "instance_pools": lambda config, every, variant: bool(variant.get("InstancePools")),
    "capacity_reservation": lambda config, every, variant: bool(variant.get("CapacityReservationConfig")),
    "gpu_partitions": lambda config, every, variant: bool(variant.get("AcceleratorPartitionLayouts")),
    "execution_role": lambda config, every, variant: bool(config.get("ExecutionRoleArn")),
}


def _copy_held_back(config: Mapping[str, Any], variant: Mapping[str, Any]) -> tuple[str, ...]:
    """Why the endpoint update would refuse to copy `config` for a change of `variant`, in the workflow's words."""
    every = [*config.get("ProductionVariants", []), *config.get("ShadowProductionVariants", [])]
    return tuple(
        words for key, words in ENDPOINT_COPY_HELD_BACK.items() if _HELD_BACK_TESTS[key](config, every, variant)
    )


class SageMakerInventory:
    """The region's accelerated SageMaker resources. `autoscaling`: an Application Auto Scaling client of the same
    region (None: scalable targets are not read, and `EndpointVariant.autoscaling` stays None).

    `warnings` gathers what an optional read could not see (inference components, scalable targets) and the
    resources skipped because the adapter cannot describe them (an endpoint whose config was deleted, a training job
    on a heterogeneous cluster).
    """

    def __init__(self, sagemaker: Any, account_id: str, region: str, autoscaling: Any | None = None) -> None:
        self._api = _Api(sagemaker, "sagemaker", region)
        self._autoscaling = _Api(autoscaling, "application-autoscaling", region) if autoscaling is not None else None
        self._account_id = account_id
        self._region = region
        self._scalable: dict[tuple[str, str], tuple[int, int]] | None = None
        self.warnings: list[str] = []

    # Endpoints ------------------------------------------------------------------------------------

    def endpoint_variants(self) -> list[EndpointVariant]:
        """One EndpointVariant per accelerated production variant of every real-time endpoint (serverless variants
        have no instance type: none is accelerated)."""
        found: list[EndpointVariant] = []
        for summary in self._api.items("ListEndpoints", "Endpoints"):
            found.extend(self._variants(summary))
        return found

    def _variants(self, summary: Mapping[str, Any]) -> list[EndpointVariant]:
        name = str(summary["EndpointName"])
        endpoint = self._api.describe("DescribeEndpoint", EndpointName=name)
        if endpoint is None:
            return []
        config_name = str(endpoint.get("EndpointConfigName", ""))
        config = self._api.describe("DescribeEndpointConfig", EndpointConfigName=config_name)
        if config is None:
            # The config's variants are the only record of the instance types: an endpoint outlives a deleted config.
            self.warnings.append(
                f"sagemaker endpoint {name} in {self._region} skipped: its endpoint config {config_name} was deleted, "
                "so its instance types cannot be read"
            )
            return []
        chosen = [v for v in config.get("ProductionVariants", []) if accelerated(str(v.get("InstanceType", "")))]
        if not chosen:
            return []
        arn = str(endpoint.get("EndpointArn") or summary.get("EndpointArn", ""))
        live = {str(v.get("VariantName")): v for v in endpoint.get("ProductionVariants", [])}
        tags = _tags(self._api.items("ListTags", "Tags", ResourceArn=arn))
        created = _time(endpoint.get("CreationTime")) or _time(summary.get("CreationTime"))
        modified = _time(endpoint.get("LastModifiedTime")) or _time(summary.get("LastModifiedTime")) or created
        if created is None or modified is None:
            raise SourceUnavailable(f"sagemaker:DescribeEndpoint in {self._region}: no CreationTime for {name}")
        scalable = self._scalable_targets()
        variants = []
        for configured in chosen:
            variant_name = str(configured["VariantName"])
            current = live.get(variant_name, {})
            model = str(configured.get("ModelName") or "")
            count = _int(current.get("CurrentInstanceCount"))
            weight = current.get("CurrentWeight")
            variants.append(
                EndpointVariant(
                    account_id=self._account_id,
                    region=self._region,
                    endpoint_name=name,
                    variant_name=variant_name,
                    endpoint_arn=arn,
                    endpoint_status=str(endpoint.get("EndpointStatus") or summary.get("EndpointStatus", "")),
                    endpoint_config_name=config_name,
                    instance_type=str(configured["InstanceType"]),
                    instance_count=count if count is not None else _int(configured.get("InitialInstanceCount")) or 0,
                    created=created,
                    last_modified=modified,
                    desired_instance_count=_int(current.get("DesiredInstanceCount")),
                    weight=float(weight) if isinstance(weight, int | float) else None,
                    model_name=model,
                    inference_components=() if model else self._components(name, variant_name),
                    managed_scaling=_managed_scaling(configured.get("ManagedInstanceScaling")),
                    autoscaling=scalable.get((name, variant_name)),
                    tags=tags,
                    copy_held_back=_copy_held_back(config, configured),
                )
            )
        return variants

    def _components(self, endpoint: str, variant: str) -> tuple[str, ...]:
        try:
            items = self._api.items(
                "ListInferenceComponents", "InferenceComponents", EndpointNameEquals=endpoint, VariantNameEquals=variant
            )
        except SourceUnavailable as error:
            self.warnings.append(f"{error}; the inference components of {endpoint}/{variant} are not known")
            return ()
        return tuple(sorted(str(item["InferenceComponentName"]) for item in items if "InferenceComponentName" in item))

    def _scalable_targets(self) -> Mapping[tuple[str, str], tuple[int, int]]:
        """(endpoint, variant) -> Application Auto Scaling's (min, max) instances, read once per region."""
        if self._scalable is not None:
            return self._scalable
        self._scalable = {}
        if self._autoscaling is None:
            return self._scalable
        try:
            targets = self._autoscaling.items(
                "DescribeScalableTargets", "ScalableTargets", ServiceNamespace="sagemaker"
            )
        except SourceUnavailable as error:
            self.warnings.append(f"{error}; which endpoint variants auto scaling sets is not known")
            return self._scalable
        for target in targets:
            parts = str(target.get("ResourceId", "")).split("/")
            if target.get("ScalableDimension") != _SCALABLE_DIMENSION or len(parts) != 4:
                continue  # inference components' copy counts, and other shapes, are not a variant's instances
            if parts[0] != "endpoint" or parts[2] != "variant":
                continue
            low, high = _int(target.get("MinCapacity")), _int(target.get("MaxCapacity"))
            if low is not None and high is not None:
                self._scalable[(parts[1], parts[3])] = (low, high)
        return self._scalable

    # Notebooks ------------------------------------------------------------------------------------

    def notebooks(self) -> list[NotebookInstance]:
        """Accelerated notebook instances in any status (a stopped one costs its volume, and may be started)."""
        found: list[NotebookInstance] = []
        for entry in self._api.items("ListNotebookInstances", "NotebookInstances"):
            instance_type = str(entry.get("InstanceType", ""))
            if not accelerated(instance_type):
                continue
            name = str(entry["NotebookInstanceName"])
            detail = self._api.describe("DescribeNotebookInstance", NotebookInstanceName=name)
            if detail is None:
                continue
            arn = str(entry.get("NotebookInstanceArn") or detail.get("NotebookInstanceArn", ""))
            created = _time(entry.get("CreationTime")) or _time(detail.get("CreationTime"))
            modified = _time(entry.get("LastModifiedTime")) or _time(detail.get("LastModifiedTime")) or created
            if created is None or modified is None:
                raise SourceUnavailable(
                    f"sagemaker:ListNotebookInstances in {self._region}: no CreationTime for {name}"
                )
            found.append(
                NotebookInstance(
                    account_id=self._account_id,
                    region=self._region,
                    name=name,
                    arn=arn,
                    status=str(entry.get("NotebookInstanceStatus", "")),
                    instance_type=instance_type,
                    created=created,
                    last_modified=modified,
                    lifecycle_config=str(entry.get("NotebookInstanceLifecycleConfigName") or ""),
                    volume_gb=_int(detail.get("VolumeSizeInGB")) or 0,
                    tags=_tags(self._api.items("ListTags", "Tags", ResourceArn=arn)),
                )
            )
        return found

    # Training -------------------------------------------------------------------------------------

    def training_families(self, start: datetime, end: datetime) -> list[TrainingFamily]:
        """The accelerated training jobs that ran at some point between `start` and `end`, grouped by recurring run
        (`training_family` of the name) and instance type; families and their jobs in a stable order."""
        grouped: dict[tuple[str, str], list[tuple[datetime, TrainingJob]]] = defaultdict(list)
        summaries = self._api.items(
            "ListTrainingJobs",
            "TrainingJobSummaries",
            CreationTimeAfter=start - TRAINING_LOOKBACK,
            CreationTimeBefore=end,
        )
        for summary in summaries:
            listed_end = _time(summary.get("TrainingEndTime"))
            if listed_end is not None and listed_end < start:
                continue  # over before the window: not worth a Describe call
            found = self._job(summary, start, end)
            if found is not None:
                name, instance_type, began, job = found
                grouped[(training_family(name), instance_type)].append((began, job))
        return [
            TrainingFamily(
                account_id=self._account_id,
                region=self._region,
                name=family,
                instance_type=instance_type,
                jobs=tuple(job for _, job in sorted(jobs, key=lambda pair: (pair[0], pair[1].name))),
            )
            for (family, instance_type), jobs in sorted(grouped.items())
        ]

    def _job(
        self, summary: Mapping[str, Any], start: datetime, end: datetime
    ) -> tuple[str, str, datetime, TrainingJob] | None:
        name = str(summary["TrainingJobName"])
        detail = self._api.describe("DescribeTrainingJob", TrainingJobName=name)
        if detail is None:
            return None
        resources = detail.get("ResourceConfig", {})
        instance_type = str(resources.get("InstanceType") or "")
        if not instance_type and resources.get("InstanceGroups"):
            if any(accelerated(str(group.get("InstanceType", ""))) for group in resources["InstanceGroups"]):
                # One type per job in the domain; a heterogeneous cluster's hosts are not numbered per type either.
                self.warnings.append(
                    f"sagemaker training job {name} in {self._region} skipped: it runs on a heterogeneous cluster"
                )
            return None
        if not accelerated(instance_type):
            return None
        started, ended = _time(detail.get("TrainingStartTime")), _time(detail.get("TrainingEndTime"))
        # A job still provisioning has no start yet: its creation says when it began to count.
        began = started or _time(detail.get("CreationTime")) or _time(summary.get("CreationTime"))
        if began is None or began > end or (ended is not None and ended < start):
            return None
        job = TrainingJob(
            name=name,
            status=str(detail.get("TrainingJobStatus") or summary.get("TrainingJobStatus", "")),
            instance_type=instance_type,
            instance_count=_int(resources.get("InstanceCount")) or 1,
            started=started,
            ended=ended,
            training_seconds=_int(detail.get("TrainingTimeInSeconds")) or 0,
            billable_seconds=_int(detail.get("BillableTimeInSeconds")),
            spot=bool(detail.get("EnableManagedSpotTraining", False)),
        )
        return name, instance_type, began, job


def _managed_scaling(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, Mapping) or value.get("Status") != "ENABLED":
        return None
    low, high = _int(value.get("MinInstanceCount")), _int(value.get("MaxInstanceCount"))
    return (low, high) if low is not None and high is not None else None


# =============================================================================================
# CloudWatch


@dataclass(frozen=True, slots=True)
class _Query:
    """One GetMetricData query. Queries with the same (owner, field, slot) are dimension sets of one series."""

    owner: str  # a resource id, or a training job's name
    field: str
    slot: str  # a GPU index, a training host, an inference component; "" for the resource itself
    namespace: str
    metric_name: str
    dimensions: Dimensions
    stat: str
    period: int

    def request(self, query_id: str) -> dict[str, Any]:
        return metric_stat_query(query_id, self.namespace, self.metric_name, self.dimensions, self.stat, self.period)

    def describe(self) -> str:
        where = f" {self.slot}" if self.slot else ""
        return f"{self.namespace}/{self.metric_name} {self.stat} for {self.owner}{where}"


_Key = tuple[str, str, str]  # (owner, field, slot)


class SageMakerMetrics:
    """The raw series of SageMaker resources over a window, from a boto3 CloudWatch client of their region.

    `get_metric_data_calls` and `list_metrics_calls` count the requests of the last read (every page); `warnings`
    gathers, over every read, the queries CloudWatch answered with a bad status and its messages.
    """

    def __init__(self, cloudwatch: Any, max_queries_per_call: int = MAX_QUERIES_PER_CALL) -> None:
        if not 1 <= max_queries_per_call <= MAX_QUERIES_PER_CALL:
            raise ValueError(f"max_queries_per_call must be 1..{MAX_QUERIES_PER_CALL}, got {max_queries_per_call}")
        meta = getattr(cloudwatch, "meta", None)
        self._api = _Api(cloudwatch, "cloudwatch", getattr(meta, "region_name", None))
        self._max_queries = max_queries_per_call
        self.get_metric_data_calls = 0
        self.list_metrics_calls = 0
        self.warnings: list[str] = []

    def _reset(self) -> None:
        self.get_metric_data_calls = 0
        self.list_metrics_calls = 0

    # Endpoint variants ----------------------------------------------------------------------------

    def variant_series(self, variants: Sequence[EndpointVariant], window: Window) -> dict[str, VariantSeries]:
        """Keyed by `EndpointVariant.resource_id`."""
        self._reset()
        queries: list[_Query] = []
        accelerators = self._accelerator_series(variants) if variants else {}
        for variant in variants:
            for slot, dimensions in accelerators.get(variant.resource_id, ()):
                for field_name, (stat, period) in _ACCELERATOR_FIELDS.items():
                    queries.append(
                        _Query(
                            variant.resource_id,
                            field_name,
                            slot,
                            ENDPOINTS_NAMESPACE,
                            "GPUUtilization",
                            dimensions,
                            stat,
                            period,
                        )
                    )
            dimensions = (("EndpointName", variant.endpoint_name), ("VariantName", variant.variant_name))
            for field_name, (namespace, metric, stat, period) in _VARIANT_FIELDS.items():
                queries.append(_Query(variant.resource_id, field_name, "", namespace, metric, dimensions, stat, period))
            for component in variant.inference_components:
                queries.append(
                    _Query(
                        variant.resource_id,
                        _COMPONENT_INVOCATIONS,
                        component,
                        INVOCATIONS_NAMESPACE,
                        "Invocations",
                        ((_COMPONENT_DIMENSION, component),),
                        "Sum",
                        _HOUR,
                    )
                )
        series = self._read(queries, window)
        found: dict[str, VariantSeries] = {}
        for variant in variants:
            rid = variant.resource_id

            def get(field_name: str, rid: str = rid) -> Series:
                return series.get((rid, field_name, ""), EMPTY)

            components = [
                series.get((rid, _COMPONENT_INVOCATIONS, name), EMPTY) for name in variant.inference_components
            ]
            slots = [slot for slot, _ in accelerators.get(rid, ())]
            found[rid] = VariantSeries(
                resource_id=rid,
                window_start=window.start,
                window_end=window.end,
                gpu_avg=get("gpu_avg"),
                gpu_max=get("gpu_max"),
                gpu_memory_max=get("gpu_memory_max"),
                cpu_avg=get("cpu_avg"),
                memory_max=get("memory_max"),
                invocations=_busier(get("invocations"), components),
                invocations_per_instance=get("invocations_per_instance"),
                latency_avg=get("latency_avg"),
                gpu_accelerators_avg=tuple(
                    one for slot in slots if (one := series.get((rid, "gpu_accelerator_avg", slot), EMPTY))
                ),
                gpu_accelerators_max=tuple(
                    one for slot in slots if (one := series.get((rid, "gpu_accelerator_max", slot), EMPTY))
                ),
            )
        return found

    def _accelerator_series(self, variants: Sequence[EndpointVariant]) -> dict[str, list[tuple[str, Dimensions]]]:
        """Each variant's per-GPU GPUUtilization series (enhanced metrics), as (instance/GPU, dimension set): one
        region-wide ListMetrics of the metric (a page per 500 series), whatever the number of variants."""
        wanted = {(v.endpoint_name, v.variant_name): v.resource_id for v in variants}
        request: dict[str, Any] = {"Namespace": ENDPOINTS_NAMESPACE, "MetricName": "GPUUtilization"}
        found: dict[str, dict[str, Dimensions]] = defaultdict(dict)
        while True:
            self.list_metrics_calls += 1
            answer = self._api.call("ListMetrics", **request)
            for metric in answer.get("Metrics", []):
                dimensions = tuple((str(d["Name"]), str(d["Value"])) for d in metric.get("Dimensions", []))
                values = dict(dimensions)
                rid = wanted.get((values.get("EndpointName", ""), values.get("VariantName", "")))
                accelerator = values.get(_ACCELERATOR_DIMENSION)
                if rid is not None and accelerator is not None:
                    found[rid].setdefault(f"{values.get(_INSTANCE_DIMENSION, '')}/{accelerator}", dimensions)
            token = answer.get("NextToken")
            if not token:
                break
            request["NextToken"] = token
        return {rid: sorted(slots.items()) for rid, slots in found.items()}

    # Notebooks ------------------------------------------------------------------------------------

    def notebook_series(self, notebooks: Sequence[NotebookInstance], window: Window) -> dict[str, NotebookSeries]:
        """Keyed by `NotebookInstance.resource_id`; a notebook without the agent's GPU series gets empty tuples."""
        self._reset()
        queries: list[_Query] = []
        indexes: dict[str, list[str]] = {}
        for notebook in notebooks:
            found = self._agent_series(notebook.name)
            per_gpu = [one for one in found if one[2]]
            chosen = per_gpu or found  # per-GPU series where there are any, else the agent's roll-up
            indexes[notebook.resource_id] = sorted({index for _, _, index in chosen}, key=device_order)
            for metric, dimensions, index in chosen:
                for field_name, stat, period in _NOTEBOOK_FIELDS[metric]:
                    queries.append(
                        _Query(
                            notebook.resource_id, field_name, index, AGENT_NAMESPACE, metric, dimensions, stat, period
                        )
                    )
        series = self._read(queries, window)
        result: dict[str, NotebookSeries] = {}
        for notebook in notebooks:
            rid = notebook.resource_id
            fields = ("gpu_avg", "gpu_max", "memory_used_max")
            # A GPU listed but silent all window is left out: the notebook may have been stopped throughout.
            seen = [i for i in indexes[rid] if any(series.get((rid, f, i), EMPTY) for f in fields)]

            def per_gpu_series(field_name: str, rid: str = rid, seen: list[str] = seen) -> tuple[Series, ...]:
                return tuple(series.get((rid, field_name, index), EMPTY) for index in seen)

            result[rid] = NotebookSeries(
                resource_id=rid,
                window_start=window.start,
                window_end=window.end,
                gpu_avg=per_gpu_series("gpu_avg"),
                gpu_max=per_gpu_series("gpu_max"),
                memory_used_max=per_gpu_series("memory_used_max"),
            )
        return result

    def _agent_series(self, notebook: str) -> list[tuple[str, Dimensions, str]]:
        """(metric, dimension set, GPU index or "") of the agent's GPU series the notebook publishes. The agent's
        dimensions vary with its config: every set ListMetrics returns is queried, and merged per GPU."""
        request: dict[str, Any] = {
            "Namespace": AGENT_NAMESPACE,
            "Dimensions": [{"Name": _NOTEBOOK_DIMENSION, "Value": notebook}],
        }
        found: list[tuple[str, Dimensions, str]] = []
        seen: set[tuple[str, Dimensions, str]] = set()
        while True:
            self.list_metrics_calls += 1
            answer = self._api.call("ListMetrics", **request)
            for metric in answer.get("Metrics", []):
                name = str(metric.get("MetricName", ""))
                if name not in _NOTEBOOK_FIELDS:
                    continue
                # In the listed order: CloudWatch matches a dimension set in any order, emulators may not.
                dimensions = tuple((str(d["Name"]), str(d["Value"])) for d in metric.get("Dimensions", []))
                values = dict(dimensions)
                one = (name, dimensions, values.get(_GPU_INDEX_DIMENSION, ""))
                # A listing may repeat a metric (moto does, per datapoint): each series is asked for once.
                if values.get(_NOTEBOOK_DIMENSION) == notebook and one not in seen:
                    seen.add(one)
                    found.append(one)
            token = answer.get("NextToken")
            if not token:
                return found
            request["NextToken"] = token

    # Training -------------------------------------------------------------------------------------

    def training_series(self, families: Sequence[TrainingFamily], window: Window) -> dict[str, TrainingSeries]:
        """Keyed by `TrainingFamily.resource_id`; each job's tuples hold one series per host, algo-1 first (empty
        where the host published nothing)."""
        self._reset()
        queries: list[_Query] = []
        for family in families:
            for job in family.jobs:
                for host in job.hosts:
                    for field_name, (metric, stat, period) in _JOB_FIELDS.items():
                        queries.append(
                            _Query(
                                job.name, field_name, host, TRAINING_NAMESPACE, metric, (("Host", host),), stat, period
                            )
                        )
        series = self._read(queries, window)
        return {
            family.resource_id: TrainingSeries(
                resource_id=family.resource_id,
                window_start=window.start,
                window_end=window.end,
                jobs=tuple(
                    JobSeries(
                        job.name,
                        **{
                            name: tuple(series.get((job.name, name, host), EMPTY) for host in job.hosts)
                            for name in _JOB_FIELDS
                        },
                    )
                    for job in family.jobs
                ),
            )
            for family in families
        }

    # GetMetricData --------------------------------------------------------------------------------

    def _read(self, queries: Sequence[_Query], window: Window) -> dict[_Key, Series]:
        """One series per (owner, field, slot), merged over its dimension sets and pages; keys without a datapoint
        are absent."""
        chunks = self._fetch(queries, window)
        parts: dict[_Key, list[list[_Chunk]]] = defaultdict(list)
        periods: dict[_Key, int] = {}
        for query, found in zip(queries, chunks, strict=True):
            key = (query.owner, query.field, query.slot)
            parts[key].append(found)
            periods[key] = query.period
        merged = {key: _merge(found, periods[key]) for key, found in parts.items()}
        return {key: one for key, one in merged.items() if one}

    def _fetch(self, queries: Sequence[_Query], window: Window) -> list[list[_Chunk]]:
        """Datapoints per query, as the pages delivered them: at most `max_queries_per_call` queries a request, each
        request's further pages under NextToken."""
        points: list[list[_Chunk]] = [[] for _ in queries]
        statuses: dict[str, list[str]] = defaultdict(list)
        for first in range(0, len(queries), self._max_queries):
            positions = range(first, min(first + self._max_queries, len(queries)))
            request: dict[str, Any] = {
                # Ids are positions in `queries`: results map back without a lookup table.
                "MetricDataQueries": [queries[position].request(f"q{position}") for position in positions],
                "StartTime": window.start,
                "EndTime": window.end,
                "ScanBy": "TimestampAscending",
            }
            while True:
                self.get_metric_data_calls += 1
                answer = self._api.call("GetMetricData", **request)
                for result in answer.get("MetricDataResults", []):
                    _collect(result, queries, points, statuses)
                for message in answer.get("Messages", []):
                    self.warnings.append(
                        f"CloudWatch GetMetricData: {message.get('Code', '?')}: {message.get('Value')}"
                    )
                token = answer.get("NextToken")
                if not token:
                    break
                request["NextToken"] = token
        for status, described in sorted(statuses.items()):
            more = f" and {len(described) - 3} more" if len(described) > 3 else ""
            self.warnings.append(
                f"CloudWatch answered {status} for {len(described)} SageMaker queries "
                f"({', '.join(described[:3])}{more}); those series may be incomplete"
            )
        return points


def _collect(
    result: Mapping[str, Any], queries: Sequence[_Query], points: list[list[_Chunk]], statuses: dict[str, list[str]]
) -> None:
    query_id = str(result.get("Id", ""))
    if not query_id.startswith("q") or not query_id[1:].isdigit() or int(query_id[1:]) >= len(queries):
        return
    position = int(query_id[1:])
    status = str(result.get("StatusCode", "Complete"))
    if status not in _OK_STATUSES:
        statuses[status].append(queries[position].describe())
    timestamps, values = result.get("Timestamps", []), result.get("Values", [])
    count = min(len(timestamps), len(values))
    if count:
        points[position].append((epochs(timestamps[:count]), floats(values[:count])))


def _busier(variant: Series, components: Sequence[Series]) -> Series:
    """Hourly invocations of a variant: per hour, the larger of its own count and the sum of its inference
    components' (an endpoint of inference components may count requests only under the components)."""
    parts = [one for one in components if one]
    if not parts:
        return variant
    stamps = np.concatenate([one.stamps for one in parts])
    hours, position = np.unique(stamps, return_inverse=True)
    summed = np.zeros(len(hours), dtype=np.float64)
    np.add.at(summed, position, np.concatenate([one.array for one in parts]))
    if not variant:
        return Series(_HOUR, hours, summed)
    every = np.union1d(hours, variant.stamps)
    theirs = np.zeros(len(every), dtype=np.float64)
    theirs[np.searchsorted(every, hours)] = summed
    own = np.zeros(len(every), dtype=np.float64)
    own[np.searchsorted(every, variant.stamps)] = variant.array
    return Series(_HOUR, every, np.maximum(theirs, own))
