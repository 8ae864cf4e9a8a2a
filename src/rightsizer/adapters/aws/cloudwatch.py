"""CloudWatch: per-GPU / per-NeuronCore and host usage series for the accelerated fleet.

Discovery asks ListMetrics once per metric name (never per instance: a fleet of hundreds would cost
hundreds of calls) and queries exactly the dimension sets it returns, because the CloudWatch agent's
dimensions vary with its config, driver version and `append_dimensions`. Queries are packed into
GetMetricData calls of up to 500 (the API limit).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from rightsizer.domain.models import AcceleratorData, AcceleratorKind, Instance, InstanceTypeSpec
from rightsizer.domain.usage import EMPTY, DeviceSeries, RawUsage, Series
from rightsizer.services.ports import Progress, SourceUnavailable, Window
from rightsizer.settings import MetricNames

MAX_QUERIES_PER_CALL = 500  # GetMetricData's limit on MetricDataQueries
ROLLUP_INDEX = "*"

_EC2_NAMESPACE = "AWS/EC2"
_EC2_INSTANCE_DIMENSION = "InstanceId"  # fixed by AWS, unlike the agent's configurable dimensions
_OK_STATUSES = frozenset({"Complete", "PartialData"})  # PartialData: the rest follows under NextToken

# DeviceSeries field -> (statistic, period seconds). Hourly Maximums keep short spikes that 5-minute
# Averages smooth out; memory total hardly changes, so one point a day is enough.
_GPU_FIELDS: Mapping[str, tuple[tuple[str, str, int], ...]] = {
    "utilization": (("utilization_avg", "Average", 300), ("utilization_max", "Maximum", 3600)),
    "memory_used": (("memory_used_max", "Maximum", 3600),),
    "memory_total": (("memory_total_max", "Maximum", 86400),),
    "memory_activity": (("memory_activity_max", "Maximum", 3600),),
}
_NEURON_FIELDS: tuple[tuple[str, str, int], ...] = (
    ("utilization_avg", "Average", 300),
    ("utilization_max", "Maximum", 3600),
)
_HOST_MEMORY_FIELD = ("host_memory_max", "Maximum", 3600)
_EC2_FIELDS: tuple[tuple[str, str, str, int], ...] = (
    ("CPUUtilization", "cpu_avg", "Average", 300),
    ("NetworkIn", "network_in_sum", "Sum", 300),
    ("NetworkOut", "network_out_sum", "Sum", 300),
)

Dimensions = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _Found:
    """One dimension set ListMetrics returned for an instance; device None means a roll-up."""

    metric_name: str
    dimensions: Dimensions
    device: str | None

    @property
    def device_index(self) -> str:
        return self.device if self.device is not None else ROLLUP_INDEX


@dataclass(frozen=True, slots=True)
class _Query:
    instance_id: str
    device: str | None  # None: an instance-level field of RawUsage
    field: str
    namespace: str
    metric_name: str
    dimensions: Dimensions
    stat: str
    period: int

    def request(self, query_id: str) -> dict[str, Any]:
        return {
            "Id": query_id,
            "MetricStat": {
                "Metric": {
                    "Namespace": self.namespace,
                    "MetricName": self.metric_name,
                    "Dimensions": [{"Name": name, "Value": value} for name, value in self.dimensions],
                },
                "Period": self.period,
                "Stat": self.stat,
            },
        }

    def describe(self) -> str:
        where = f" {self.device}" if self.device is not None else ""
        return f"{self.namespace}/{self.metric_name} {self.stat} for {self.instance_id}{where}"


@dataclass
class _Problems:
    """Bad statuses and messages, gathered so a fleet-wide outage makes a few warnings, not thousands."""

    statuses: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    messages: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def warnings(self) -> Iterator[str]:
        for status, queries in sorted(self.statuses.items()):
            example = ", ".join(queries[:3])
            more = f" and {len(queries) - 3} more" if len(queries) > 3 else ""
            yield (
                f"CloudWatch answered {status} for {len(queries)} usage queries ({example}{more}); "
                "those series may be missing or incomplete"
            )
        for message, count in sorted(self.messages.items()):
            times = f" ({count} times)" if count > 1 else ""
            yield f"CloudWatch GetMetricData message: {message}{times}"


class CloudWatchUsage:
    """The `UsageSource` port over a boto3 CloudWatch client.

    Counters describe the last `fetch()`: `list_metrics_calls`, `get_metric_data_calls` (every page),
    `pages_beyond_first` (GetMetricData pages that only continued a batch, i.e. the server paginated),
    `batches` (first pages) and `queries`; `warnings` repeats what went to `progress.warn`.
    """

    def __init__(
        self,
        client: Any,
        metrics: MetricNames,
        progress: Progress | None = None,
        max_queries_per_call: int = MAX_QUERIES_PER_CALL,
    ) -> None:
        if not 1 <= max_queries_per_call <= MAX_QUERIES_PER_CALL:
            raise ValueError(f"max_queries_per_call must be 1..{MAX_QUERIES_PER_CALL}, got {max_queries_per_call}")
        self._client = client
        self._metrics = metrics
        self._progress = progress
        self._max_queries = max_queries_per_call
        self.list_metrics_calls = 0
        self.get_metric_data_calls = 0
        self.pages_beyond_first = 0
        self.batches = 0
        self.queries = 0
        self.warnings: list[str] = []

    def fetch(
        self, instances: Sequence[Instance], specs: Mapping[str, InstanceTypeSpec], window: Window
    ) -> dict[str, RawUsage]:
        self.list_metrics_calls = self.get_metric_data_calls = self.pages_beyond_first = 0
        self.batches = self.queries = 0
        self.warnings = []
        # Stopped hosts are not queried at all: their series would only describe a past that the
        # analyzer does not act on, and GetMetricData is billed per metric.
        running = {i.instance_id: i for i in instances if i.is_running}
        kinds = {iid: _kind(specs.get(inst.instance_type)) for iid, inst in running.items()}
        plan = self._plan(running, kinds)
        self.queries = len(plan)
        points = self._run(plan, window)
        by_instance: dict[str, list[int]] = defaultdict(list)
        for position, query in enumerate(plan):
            by_instance[query.instance_id].append(position)
        return {
            inst.instance_id: _raw_usage(
                inst, [(plan[p], points.get(p, {})) for p in by_instance[inst.instance_id]], window
            )
            for inst in instances
        }

    # Discovery -----------------------------------------------------------------------------------

    def _plan(self, running: Mapping[str, Instance], kinds: Mapping[str, AcceleratorKind | None]) -> list[_Query]:
        m = self._metrics
        nvidia = {iid: running[iid] for iid, kind in kinds.items() if kind is AcceleratorKind.NVIDIA}
        neuron = {iid: running[iid] for iid, kind in kinds.items() if kind is AcceleratorKind.NEURON}
        gpu_metrics = {
            m.gpu_utilization: "utilization",
            m.gpu_memory_used: "memory_used",
            m.gpu_memory_total: "memory_total",
            m.gpu_memory_activity: "memory_activity",
        }
        gpu_found: dict[str, list[_Found]] = defaultdict(list)
        if nvidia:
            for metric_name in gpu_metrics:
                listed = self._discover(m.gpu_namespace, metric_name, nvidia, m.gpu_index_dimension)
                for iid, series in listed.items():
                    gpu_found[iid].extend(series)
        neuron_found = (
            self._discover(m.neuron_namespace, m.neuron_utilization, neuron, m.neuron_core_dimension) if neuron else {}
        )
        host_found = self._discover(m.gpu_namespace, m.host_memory_used_pct, running, None) if running else {}

        plan: list[_Query] = []
        for iid in running:
            for found in _per_device_or_rollup(gpu_found.get(iid, [])):
                fields = _GPU_FIELDS[gpu_metrics[found.metric_name]]
                plan.extend(_queries(iid, found, m.gpu_namespace, fields, device=found.device_index))
            for found in _per_device_or_rollup(neuron_found.get(iid, [])):
                plan.extend(_queries(iid, found, m.neuron_namespace, _NEURON_FIELDS, device=found.device_index))
            for found in host_found.get(iid, []):
                plan.extend(_queries(iid, found, m.gpu_namespace, (_HOST_MEMORY_FIELD,), device=None))
            for metric_name, field_name, stat, period in _EC2_FIELDS:
                dimensions = ((_EC2_INSTANCE_DIMENSION, iid),)
                plan.append(_Query(iid, None, field_name, _EC2_NAMESPACE, metric_name, dimensions, stat, period))
        return plan

    def _discover(
        self, namespace: str, metric_name: str, wanted: Mapping[str, Instance], device_dimension: str | None
    ) -> dict[str, list[_Found]]:
        """Dimension sets of one metric, grouped by instance; stale-type and foreign series dropped."""
        m = self._metrics
        found: dict[str, list[_Found]] = defaultdict(list)
        seen: set[frozenset[tuple[str, str]]] = set()
        for metric in self._list_metrics(namespace, metric_name):
            dimensions: Dimensions = tuple((str(d["Name"]), str(d["Value"])) for d in metric.get("Dimensions", []))
            key = frozenset(dimensions)
            if key in seen:  # a store may list one series more than once; query it once
                continue
            seen.add(key)
            values = dict(dimensions)
            instance = wanted.get(values.get(m.instance_dimension, ""))
            if instance is None:
                continue
            recorded_type = values.get(m.instance_type_dimension)
            if recorded_type is not None and recorded_type != instance.instance_type:
                continue  # published before a resize: it describes other hardware
            device = values.get(device_dimension) if device_dimension else None
            found[instance.instance_id].append(_Found(metric_name, dimensions, device))
        return found

    def _list_metrics(self, namespace: str, metric_name: str) -> Iterator[Mapping[str, Any]]:
        request: dict[str, Any] = {"Namespace": namespace, "MetricName": metric_name}
        while True:
            self.list_metrics_calls += 1
            response = self._call("list_metrics", request)
            yield from response.get("Metrics", [])
            token = response.get("NextToken")
            if not token:
                return
            request["NextToken"] = token

    # Queries -------------------------------------------------------------------------------------

    def _run(self, plan: Sequence[_Query], window: Window) -> dict[int, dict[int, float]]:
        """Datapoints per plan position, timestamp -> value; a timestamp seen twice keeps the larger."""
        points: dict[int, dict[int, float]] = defaultdict(dict)
        problems = _Problems()
        batches = [
            range(start, min(start + self._max_queries, len(plan))) for start in range(0, len(plan), self._max_queries)
        ]
        if self._progress is not None:
            self._progress.stage("usage", len(batches))
        for batch in batches:
            self.batches += 1
            request: dict[str, Any] = {
                # Ids are plan positions, so results map back without a lookup table.
                "MetricDataQueries": [plan[position].request(f"q{position}") for position in batch],
                "StartTime": window.start,
                "EndTime": window.end,
                "ScanBy": "TimestampAscending",
            }
            first = True
            while True:
                self.get_metric_data_calls += 1
                if not first:
                    self.pages_beyond_first += 1
                first = False
                response = self._call("get_metric_data", request)
                for result in response.get("MetricDataResults", []):
                    _collect(result, plan, points, problems)
                for message in response.get("Messages", []):
                    problems.messages[f"{message.get('Code', '?')}: {message.get('Value', '')}"] += 1
                token = response.get("NextToken")
                if not token:
                    break
                # A query's values can continue on the next page: they are appended in _collect.
                request["NextToken"] = token
            if self._progress is not None:
                self._progress.advance()
        for warning in problems.warnings():
            self.warnings.append(warning)
            if self._progress is not None:
                self._progress.warn(warning)
        return points

    def _call(self, operation: str, request: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            response: Mapping[str, Any] = getattr(self._client, operation)(**request)
        except (ClientError, BotoCoreError) as exc:
            raise SourceUnavailable(f"CloudWatch {operation} failed: {exc}") from exc
        return response


def _kind(spec: InstanceTypeSpec | None) -> AcceleratorKind | None:
    return spec.accelerator_kind if spec is not None else None


def _per_device_or_rollup(found: Sequence[_Found]) -> list[_Found]:
    """Per-device series when there are any; else the roll-ups, whose max is the busiest device."""
    per_device = [f for f in found if f.device is not None]
    return per_device or list(found)


def _queries(
    iid: str, found: _Found, namespace: str, fields: Sequence[tuple[str, str, int]], *, device: str | None
) -> Iterator[_Query]:
    for field_name, stat, period in fields:
        yield _Query(iid, device, field_name, namespace, found.metric_name, found.dimensions, stat, period)


def _collect(
    result: Mapping[str, Any],
    plan: Sequence[_Query],
    points: dict[int, dict[int, float]],
    problems: _Problems,
) -> None:
    query_id = str(result.get("Id", ""))
    if not query_id.startswith("q") or not query_id[1:].isdigit() or int(query_id[1:]) >= len(plan):
        problems.messages[f"a result for an unknown query id {query_id!r} was ignored"] += 1
        return
    position = int(query_id[1:])
    status = str(result.get("StatusCode", "Complete"))
    if status not in _OK_STATUSES:
        problems.statuses[status].append(plan[position].describe())
    for message in result.get("Messages", []):
        problems.messages[f"{message.get('Code', '?')}: {message.get('Value', '')}"] += 1
    series = points[position]
    for timestamp, value in zip(result.get("Timestamps", []), result.get("Values", []), strict=False):
        epoch = _epoch(timestamp)
        number = float(value)
        if math.isnan(number):
            continue
        previous = series.get(epoch)
        if previous is None or number > previous:
            series[epoch] = number


def _epoch(timestamp: datetime | int | float) -> int:
    if isinstance(timestamp, datetime):
        return int(timestamp.timestamp())
    return int(timestamp)


def _merge(parts: Sequence[Mapping[int, float]], period: int) -> Series:
    """One series from several dimension sets of the same device: the larger value per timestamp."""
    merged: dict[int, float] = {}
    for part in parts:
        for epoch, value in part.items():
            previous = merged.get(epoch)
            if previous is None or value > previous:
                merged[epoch] = value
    if not merged:
        return EMPTY
    ordered = sorted(merged)
    return Series(period, tuple(ordered), tuple(merged[epoch] for epoch in ordered))


def _device_order(index: str) -> tuple[int, int, str]:
    return (0, int(index), "") if index.isdigit() else (1, 0, index)


def _raw_usage(instance: Instance, results: Sequence[tuple[_Query, Mapping[int, float]]], window: Window) -> RawUsage:
    parts: dict[tuple[str | None, str], list[Mapping[int, float]]] = defaultdict(list)
    periods: dict[str, int] = {}
    for query, datapoints in results:
        parts[(query.device, query.field)].append(datapoints)
        periods[query.field] = query.period
    device_fields: dict[str, dict[str, Series]] = defaultdict(dict)
    host: dict[str, Series] = {}
    for (device, field_name), series_parts in parts.items():
        series = _merge(series_parts, periods[field_name])
        if device is None:
            host[field_name] = series
        elif series:
            device_fields[device][field_name] = series
    # A device listed by ListMetrics but without a datapoint in the window is left out: the analyzer
    # counts it as unseen (assumed busy) rather than as an idle device.
    devices = tuple(
        DeviceSeries(
            index=index,
            utilization_avg=fields.get("utilization_avg", EMPTY),
            utilization_max=fields.get("utilization_max", EMPTY),
            memory_used_max=fields.get("memory_used_max", EMPTY),
            memory_total_max=fields.get("memory_total_max", EMPTY),
            memory_activity_max=fields.get("memory_activity_max", EMPTY),
        )
        for index, fields in sorted(device_fields.items(), key=lambda item: _device_order(item[0]))
    )
    if not devices:
        data = AcceleratorData.NONE
    elif devices[0].index == ROLLUP_INDEX:
        data = AcceleratorData.ROLLUP
    else:
        data = AcceleratorData.PER_DEVICE
    return RawUsage(
        instance_id=instance.instance_id,
        window_start=window.start,
        window_end=window.end,
        accelerator_data=data,
        devices=devices,
        cpu_avg=host.get("cpu_avg", EMPTY),
        network_in_sum=host.get("network_in_sum", EMPTY),
        network_out_sum=host.get("network_out_sum", EMPTY),
        host_memory_max=host.get("host_memory_max", EMPTY),
    )
