"""CloudWatch: per-GPU / per-NeuronCore and host usage series for the accelerated fleet.

Discovery asks ListMetrics once per metric name (never per instance: a fleet of hundreds would cost
hundreds of calls) and queries exactly the dimension sets it returns, because the CloudWatch agent's
dimensions vary with its config, driver version and `append_dimensions`. Where a region is far larger
than the instances asked for (one shard of a big region), ListMetrics is asked per instance instead
(a dimension filter on InstanceId), so discovery costs grow with the shard, not the region.

Usage is read in batches of whole instances (every query of an instance in one batch), summarised by
the caller as it arrives and dropped: peak memory depends on the batch, not on the region. A batch
holds at most 500 queries (the API limit) and is sized so its datapoints fill GetMetricData's pages of
100,800 (a request's results continue on further pages under NextToken): the call count stays within a
few percent of the physical minimum, ceil(datapoints / 100,800). Values are kept in numpy arrays.

Kubernetes nodes (`Instance.owner`) without the agent's GPU series fall back to Container Insights with enhanced
observability (namespace `ContainerInsights`: `node_gpu_utilization`, `node_gpu_memory_used` and `_total` in bytes,
per `GpuDevice` with `ClusterName`, `InstanceId`, `InstanceType`, `NodeName`; `node_memory_utilization` for host
RAM). Only those nodes are looked up there, so hosts with the agent's metrics cost no more than before.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from botocore.exceptions import BotoCoreError, ClientError

from rightsizer.adapters.aws.metric_data import epochs, floats
from rightsizer.domain.graphics import signs_in
from rightsizer.domain.mig import mig_capable
from rightsizer.domain.models.hosts import AcceleratorKind, Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.signals import STANDS_IN_FOR, Signal
from rightsizer.domain.usage.devices import device_order
from rightsizer.domain.usage.series import EMPTY, DeviceSeries, Floats, Ints, RawUsage, Series, SliceSeries
from rightsizer.services.ports import Progress, SourceUnavailable, Window
from rightsizer.settings import MetricNames

MAX_QUERIES_PER_CALL = 500  # GetMetricData's limit on MetricDataQueries
DATAPOINTS_PER_CALL = 100_800  # GetMetricData's page: more datapoints continue under NextToken
ROLLUP_INDEX = "*"
# ListMetrics pages hold 500 metrics; a region-wide listing costs about (series in the region) / 500 calls
# per metric name, a per-instance listing one call per instance and namespace.
_LIST_PAGE = 500


def metric_stat_query(
    query_id: str, namespace: str, metric_name: str, dimensions: Dimensions, stat: str, period: int
) -> dict[str, Any]:
    """One GetMetricData query of a statistic of one series."""
    return {
        "Id": query_id,
        "MetricStat": {
            "Metric": {
                "Namespace": namespace,
                "MetricName": metric_name,
                "Dimensions": [{"Name": name, "Value": value} for name, value in dimensions],
            },
            "Period": period,
            "Stat": stat,
        },
    }


_EC2_NAMESPACE = "AWS/EC2"
_EC2_INSTANCE_DIMENSION = "InstanceId"  # fixed by AWS, unlike the agent's configurable dimensions
_OK_STATUSES = frozenset({"Complete", "PartialData"})  # PartialData: the rest follows under NextToken

# DeviceSeries field -> (statistic, period seconds). Hourly Maximums keep short spikes that 5-minute
# Averages smooth out; memory total hardly changes, so one point a day is enough.
_GPU_FIELDS: Mapping[str, tuple[tuple[str, str, int], ...]] = {
    "utilization": (("utilization_avg", "Average", 300), ("utilization_max", "Maximum", 3600)),
    "memory_used": (("memory_used_max", "Maximum", 3600),),
    "memory_total": (("memory_total_max", "Maximum", 86400),),
    # Encoder sessions and frame rate, only where the agent publishes them: hourly, as the busy hours are read.
    "encoder_sessions": (("encoder_sessions_max", "Maximum", 3600),),
    "encoder_fps": (("encoder_fps_avg", "Average", 3600),),
    # DCGM's signals (domain/signals.py), only where a host publishes them: 5-minute Averages, whose p95 is the steady
    # load and whose peak the busiest hours a target must carry (one query each: kernel time keeps its hourly Maximum).
    **{signal.value: ((signal.value, "Average", 300),) for signal in Signal},
}
# A MIG GPU instance's series (agent/dcgm publishes them per instance, beside its GPU's index): its SMs' load read as
# the GPU's DCGM signals are (5-minute Averages), its framebuffer as the agent's GPU memory (hourly Maximums). Only
# hosts that publish them are asked: a host without MIG costs no query more.
_SLICE_LOAD_FIELD = ("slice_load", "Average", 300)
_SLICE_MEMORY_FIELD = ("slice_memory_used_max", "Maximum", 3600)
_NEURON_FIELDS: tuple[tuple[str, str, int], ...] = (
    ("utilization_avg", "Average", 300),
    ("utilization_max", "Maximum", 3600),
)
_HOST_MEMORY_FIELD = ("host_memory_max", "Maximum", 3600)
# Container Insights with enhanced observability (EKS): the DCGM-derived node metrics, their fields and unit scale
# (memory in bytes, the agent's in MiB), and its dimensions, which AWS fixes.
CONTAINER_INSIGHTS_NAMESPACE = "ContainerInsights"
_CI_INSTANCE_DIMENSION = "InstanceId"
_CI_TYPE_DIMENSION = "InstanceType"
_CI_DEVICE_DIMENSION = "GpuDevice"
_BYTES_PER_MIB = 1024.0 * 1024.0
_CI_GPU_METRICS: Mapping[str, tuple[str, float]] = {  # metric -> (DeviceSeries field group, scale to our unit)
    "node_gpu_utilization": ("utilization", 1.0),
    "node_gpu_memory_used": ("memory_used", 1 / _BYTES_PER_MIB),
    "node_gpu_memory_total": ("memory_total", 1 / _BYTES_PER_MIB),
    # DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, in percent: the one profiling signal Container Insights publishes per GPU.
    "node_gpu_tensor_core_utilization": (Signal.TENSOR_ACTIVE.value, 1.0),
}
_CI_HOST_MEMORY = "node_memory_utilization"  # working set / limit, percent: host RAM where the agent has none
_EC2_FIELDS: tuple[tuple[str, str, str, int], ...] = (
    ("CPUUtilization", "cpu_avg", "Average", 300),
    ("NetworkIn", "network_in_sum", "Sum", 300),
    ("NetworkOut", "network_out_sum", "Sum", 300),
)
# EBS on Nitro hosts (AWS/EC2 publishes these per instance; a Xen host's EBS metrics are per volume, in AWS/EBS):
# bytes and operations per hour, what a target must carry at its EBS baseline. Hourly, so they cost 336 datapoints
# each over 14 days rather than 4,032.
_EBS_FIELDS: tuple[tuple[str, str, str, int], ...] = (
    ("EBSReadBytes", "ebs_read_bytes", "Sum", 3600),
    ("EBSWriteBytes", "ebs_write_bytes", "Sum", 3600),
    ("EBSReadOps", "ebs_read_ops", "Sum", 3600),
    ("EBSWriteOps", "ebs_write_ops", "Sum", 3600),
)
_DISK_FIELD = ("disk_bytes", "Sum", 3600)  # every disk's read and write bytes, added up per hour
_PROCESS_FIELD = ("graphics_process", "Maximum", 3600)  # processes found, per hour
# Fields summed over their dimension sets (every disk) rather than merged as copies of one series.
_SUMMED_FIELDS = frozenset({_DISK_FIELD[0]})
# procstat names what it watches by one of these dimensions (the agent's config: exe, pattern or pid_file).
_PROCESS_DIMENSIONS = ("exe", "pattern", "pidfile", "pid_file")

Dimensions = tuple[tuple[str, str], ...]
# The value of a listed series' instance dimension, in the dimension set discovery keeps: the hosts of one type publish
# their series under the same dimension sets but for their own id, so one copy of each (metric, set, device) serves
# every host of a region (the set is filled in with the host's id when a query is sent). Memory then holds a few bytes
# per series, not a copy of each, while a region's discovery waits to be read (the CLI reads a whole region).
_THIS_HOST = "\x00this host"


@dataclass(frozen=True, slots=True)
class _Found:
    """One dimension set ListMetrics returned for an instance (its instance dimension's value `_THIS_HOST`); device
    None means a roll-up."""

    metric_name: str
    dimensions: Dimensions
    device: str | None

    @property
    def device_index(self) -> str:
        return self.device if self.device is not None else ROLLUP_INDEX


@dataclass(frozen=True, slots=True)
class _Part:
    """A MIG GPU instance of a GPU, as its series' dimensions name it, and the signal a series of its load carries."""

    gpu_instance: str
    profile: str
    signal: Signal | None  # None: its framebuffer's series


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
    scale: float = 1.0  # multiplies every value: Container Insights' bytes to the agent's MiB
    label: str = ""  # what a host-level query is about beyond its field (a process's name)
    part: _Part | None = None  # the MIG GPU instance of `device` the query reads (None: the device itself)

    def request(self, query_id: str) -> dict[str, Any]:
        iid = self.instance_id
        dimensions = tuple((name, iid if value == _THIS_HOST else value) for name, value in self.dimensions)
        return metric_stat_query(query_id, self.namespace, self.metric_name, dimensions, self.stat, self.period)

    def describe(self) -> str:
        where = f" {self.device}" if self.device is not None else ""
        return f"{self.namespace}/{self.metric_name} {self.stat} for {self.instance_id}{where}"


@dataclass
class _Problems:
    """Bad statuses and messages, gathered so a fleet-wide outage makes a few warnings, not thousands."""

    statuses: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    messages: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # instance id -> its series answered with such a status, named: no one click rests on them (domain/guards.py)
    hosts: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

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

    Counters describe the last read: `list_metrics_calls`, `get_metric_data_calls` (every page),
    `pages_beyond_first` (GetMetricData pages that only continued a batch, i.e. the server paginated),
    `batches` (first pages), `queries` and `datapoints` (values received); `warnings` repeats what went to
    `progress.warn`. `region_units` (the region's accelerators, when known) lets a shard of a large region
    discover its series per instance.
    """

    def __init__(
        self,
        client: Any,
        metrics: MetricNames,
        progress: Progress | None = None,
        max_queries_per_call: int = MAX_QUERIES_PER_CALL,
        datapoints_per_call: int = DATAPOINTS_PER_CALL,
        region_units: int | None = None,
        recently_active: str | None = None,
    ) -> None:
        if not 1 <= max_queries_per_call <= MAX_QUERIES_PER_CALL:
            raise ValueError(f"max_queries_per_call must be 1..{MAX_QUERIES_PER_CALL}, got {max_queries_per_call}")
        self._client = client
        self._metrics = metrics
        self._progress = progress
        self._max_queries = max_queries_per_call
        self._page = datapoints_per_call
        self._region_units = region_units
        self._recently_active = recently_active  # "PT3H": discover only series with data in the last 3 hours
        self._reset()

    def _reset(self) -> None:
        self.list_metrics_calls = 0
        self.get_metric_data_calls = 0
        self.pages_beyond_first = 0
        self.batches = 0
        self.queries = 0
        self.datapoints = 0
        self.warnings: list[str] = []
        # instance id -> the types its agent series were published on before a resize (those series are not read)
        self._earlier_types: dict[str, set[str]] = defaultdict(set)
        # One copy of each metric name, dimension (name, value) pair, dimension set and `_Found` the listings return,
        # kept by every series and host that has it (see _THIS_HOST): a region's discovery then holds a reference per
        # series instead of every listed string (the CLI discovers a whole region at once).
        self._shared: dict[Any, Any] = {}
        self._identities: dict[_Found, tuple[str, frozenset[tuple[str, str]]]] = {}

    @property
    def minimum_get_metric_data_calls(self) -> int:
        """The physical minimum for the last read: every query asked, every datapoint received."""
        by_queries = math.ceil(self.queries / self._max_queries)
        return max(by_queries, math.ceil(self.datapoints / self._page))

    def fetch(
        self, instances: Sequence[Instance], specs: Mapping[str, InstanceTypeSpec], window: Window
    ) -> dict[str, RawUsage]:
        """Every instance's series at once (tests, one-off reads); `read` keeps memory bounded."""
        return {raw.instance_id: raw for raw in self.read(instances, specs, window)}

    def read(
        self, instances: Sequence[Instance], specs: Mapping[str, InstanceTypeSpec], window: Window
    ) -> Iterator[RawUsage]:
        """Raw usage per instance, one batch of whole instances at a time: drop each after summarising."""
        self._reset()
        # Stopped hosts are not queried at all: their series would only describe a past that the
        # analyzer does not act on, and GetMetricData is billed per metric.
        running = {i.instance_id: i for i in instances if i.is_running}
        for inst in instances:
            if not inst.is_running:
                yield _raw_usage(inst, [], window)
        kinds = {iid: _kind(specs.get(inst.instance_type)) for iid, inst in running.items()}
        nitro = frozenset(iid for iid, inst in running.items() if _nitro(specs.get(inst.instance_type)))
        plan = self._plan(running, kinds, nitro, _mig_hosts(running, kinds, specs))
        sizes = [_size(iid, plan(iid, False), window) for iid in running]
        self.queries = sum(queries for _, queries, _ in sizes)
        batches = _pack(sizes, self._max_queries, self._page)
        if self._progress is not None:
            self._progress.stage("usage", len(batches))
        problems = _Problems()
        for batch in batches:
            planned = [(iid, plan(iid, True)) for iid in batch]
            queries = [query for _, instance_queries in planned for query in instance_queries]
            points = self._run(queries, window, problems)
            start = 0
            for iid, instance_queries in planned:
                stop = start + len(instance_queries)
                found = list(zip(instance_queries, points[start:stop], strict=True))
                # neuron-monitor reports only the cores an application holds: silence while running is idleness.
                raw = _raw_usage(running[iid], found, window, silence_is_idle=kinds[iid] is AcceleratorKind.NEURON)
                yield replace(
                    raw,
                    previous_types=tuple(sorted(self._earlier_types.get(iid, ()))),
                    incomplete=tuple(dict.fromkeys(problems.hosts.get(iid, ()))),
                )
                start = stop
            if self._progress is not None:
                self._progress.advance()
        for warning in problems.warnings():
            self.warnings.append(warning)
            if self._progress is not None:
                self._progress.warn(warning)

    def accelerator_series(
        self, instances: Sequence[Instance], specs: Mapping[str, InstanceTypeSpec]
    ) -> dict[str, frozenset[str]]:
        """Where each running instance's accelerator series are published, as `read` would find them: the namespaces
        of its per-GPU or per-NeuronCore series (the agent's, Container Insights', neuron-monitor's), empty where
        there are none. Discovery only (ListMetrics): nothing is read."""
        running = {i.instance_id: i for i in instances if i.is_running}
        kinds = {iid: _kind(specs.get(inst.instance_type)) for iid, inst in running.items()}
        # The accelerators' series only: no EBS to ask.
        plan = self._plan(running, kinds, nitro=frozenset(), mig=_mig_hosts(running, kinds, specs))
        return {iid: frozenset(q.namespace for q in plan(iid, True) if q.device is not None) for iid in running}

    # Discovery -----------------------------------------------------------------------------------

    def _per_instance(self, running: Mapping[str, Instance], neuron_hosts: int) -> bool:
        """True when listing each instance's series costs no more calls than listing the region's: one listing
        per host (Neuron hosts one more, in their namespace) against every page of the region's metrics. On a
        tie the shard lists its own hosts: a region's pages carry mostly other shards' series, all parsed and
        dropped, so the work per host would grow with the region."""
        if self._region_units is None:
            return False
        # The GPU metrics, the MIG instances' three, host memory, diskio, procstat, NeuronCore utilisation.
        metric_names = len(_GPU_FIELDS) + 3 + 5
        return metric_names * math.ceil(self._region_units / _LIST_PAGE) >= len(running) + neuron_hosts

    def _plan(
        self,
        running: Mapping[str, Instance],
        kinds: Mapping[str, AcceleratorKind | None],
        nitro: frozenset[str],
        mig: frozenset[str],
    ) -> Callable[[str, bool], list[_Query]]:
        """Discovery, then each running host's queries as they are asked for: a batch's hosts' queries exist while the
        batch is read, not the region's (the CLI reads a whole region), and what was found of a host goes once its
        batch has its queries (`last`). `mig`: the hosts whose GPUs may run in MIG mode, the only ones whose
        per-instance series are looked for (a region without one lists no metric name more)."""
        m = self._metrics
        nvidia = {iid: running[iid] for iid, kind in kinds.items() if kind is AcceleratorKind.NVIDIA}
        neuron = {iid: running[iid] for iid, kind in kinds.items() if kind is AcceleratorKind.NEURON}
        gpu_metrics = {
            m.gpu_utilization: "utilization",
            m.gpu_memory_used: "memory_used",
            m.gpu_memory_total: "memory_total",
            m.gpu_encoder_sessions: "encoder_sessions",
            m.gpu_encoder_fps: "encoder_fps",
            **{name: signal.value for name, signal in m.signal_metrics.items()},
        }
        slice_metrics = (*m.slice_signal_metrics, m.gpu_instance_memory_used)
        gpu_metrics.update({name: _SLICE_LOAD_FIELD[0] for name in slice_metrics})
        host_metrics = (m.host_memory_used_pct, m.disk_read_bytes, m.disk_write_bytes, m.process_count)
        agent_metrics = (*gpu_metrics, *host_metrics)
        per_instance = self._per_instance(running, len(neuron))
        if per_instance:
            agent = self._discover_per_instance(m.gpu_namespace, agent_metrics, running, m.gpu_index_dimension)
            neuron_found = self._discover_per_instance(
                m.neuron_namespace, (m.neuron_utilization,), neuron, m.neuron_core_dimension
            )
        else:
            agent = defaultdict(list)
            for metric_name in gpu_metrics if nvidia else ():
                wanted = {iid: nvidia[iid] for iid in mig} if metric_name in slice_metrics else nvidia
                if not wanted:
                    continue
                for iid, series in self._discover(m.gpu_namespace, metric_name, wanted, m.gpu_index_dimension).items():
                    agent[iid].extend(series)
            neuron_found = (
                self._discover(m.neuron_namespace, m.neuron_utilization, neuron, m.neuron_core_dimension)
                if neuron
                else {}
            )
            for metric_name in host_metrics if running else ():
                for iid, series in self._discover(m.gpu_namespace, metric_name, running, None).items():
                    agent[iid].extend(series)

        # Kubernetes nodes without the agent's GPU series: Container Insights' instead, where it publishes them.
        without_agent = {
            iid: node
            for iid, node in nvidia.items()
            if _kubernetes_node(node) and not any(f.metric_name in gpu_metrics for f in agent.get(iid, []))
        }
        insights = self._discover_insights(without_agent, per_instance=per_instance)

        def plan(iid: str, last: bool = False) -> list[_Query]:
            """The host's queries; `last`: the host's series found are dropped (its batch is being read)."""
            found = agent.get(iid, [])
            ci_found, neuron_series = insights.get(iid, []), neuron_found.get(iid, [])
            if last:
                for discovered in (agent, insights, neuron_found):
                    discovered.pop(iid, None)
            gpu_found = [f for f in found if f.metric_name in gpu_metrics] if iid in nvidia else []
            slices_found = [f for f in gpu_found if f.metric_name in slice_metrics] if iid in mig else []
            gpu_found = [f for f in gpu_found if f.metric_name not in slice_metrics]
            queries: list[_Query] = list(self._slice_queries(iid, slices_found))
            for one in _without_fallbacks(_per_device_or_rollup(gpu_found), m.signal_metrics):
                fields = _GPU_FIELDS[gpu_metrics[one.metric_name]]
                queries.extend(_queries(iid, one, m.gpu_namespace, fields, device=one.device_index))
            for one in _per_device_or_rollup([f for f in ci_found if f.metric_name in _CI_GPU_METRICS]):
                group, scale = _CI_GPU_METRICS[one.metric_name]
                ci_queries = _queries(
                    iid, one, CONTAINER_INSIGHTS_NAMESPACE, _GPU_FIELDS[group], device=one.device_index
                )
                queries.extend(replace(query, scale=scale) for query in ci_queries)
            for one in _per_device_or_rollup(neuron_series):
                queries.extend(_queries(iid, one, m.neuron_namespace, _NEURON_FIELDS, device=one.device_index))
            host_memory = [f for f in found if f.metric_name == m.host_memory_used_pct]
            for one in host_memory:
                host = _Found(one.metric_name, one.dimensions, None)
                queries.extend(_queries(iid, host, m.gpu_namespace, (_HOST_MEMORY_FIELD,), device=None))
            if not host_memory:
                for one in (f for f in ci_found if f.metric_name == _CI_HOST_MEMORY):
                    host = _Found(one.metric_name, one.dimensions, None)
                    fields = (_HOST_MEMORY_FIELD,)
                    queries.extend(_queries(iid, host, CONTAINER_INSIGHTS_NAMESPACE, fields, device=None))
            queries.extend(self._host_queries(iid, found, nitro=iid in nitro))
            return queries

        return plan

    def _slice_queries(self, iid: str, found: Sequence[_Found]) -> Iterator[_Query]:
        """Each MIG GPU instance's load (SM occupancy only where it publishes no SM active) and framebuffer."""
        m = self._metrics
        signals = m.slice_signal_metrics
        parts = [(one, _part(one, m, signals)) for one in found if one.device is not None]
        measured = {(one.device, part.gpu_instance) for one, part in parts if part and part.signal is Signal.SM_ACTIVE}
        for one, part in parts:
            if part is None or (part.signal in STANDS_IN_FOR and (one.device, part.gpu_instance) in measured):
                continue
            field_name, stat, period = _SLICE_MEMORY_FIELD if part.signal is None else _SLICE_LOAD_FIELD
            yield _Query(
                iid, one.device, field_name, m.gpu_namespace, one.metric_name, one.dimensions, stat, period, part=part
            )

    def _host_queries(self, iid: str, found: Sequence[_Found], *, nitro: bool) -> Iterator[_Query]:
        """AWS/EC2's CPU and network (and EBS, on a Nitro host), the disks' bytes where the agent publishes diskio, and
        the watched graphics processes (domain/graphics.py) where procstat publishes them."""
        m = self._metrics
        dimensions = ((_EC2_INSTANCE_DIMENSION, iid),)
        for metric_name, field_name, stat, period in (*_EC2_FIELDS, *(_EBS_FIELDS if nitro else ())):
            yield _Query(iid, None, field_name, _EC2_NAMESPACE, metric_name, dimensions, stat, period)
        field_name, stat, period = _DISK_FIELD
        for one in found:
            if one.metric_name in (m.disk_read_bytes, m.disk_write_bytes):
                yield _Query(iid, None, field_name, m.gpu_namespace, one.metric_name, one.dimensions, stat, period)
        field_name, stat, period = _PROCESS_FIELD
        for one in found:
            process = _process_name(one) if one.metric_name == m.process_count else ""
            if process and signs_in(process):
                yield _Query(
                    iid, None, field_name, m.gpu_namespace, one.metric_name, one.dimensions, stat, period, label=process
                )

    def _discover(
        self, namespace: str, metric_name: str, wanted: Mapping[str, Instance], device_dimension: str | None
    ) -> dict[str, list[_Found]]:
        """Dimension sets of one metric across the region, grouped by instance; stale-type and foreign
        series dropped."""
        return self._keep(
            self._list_metrics({"Namespace": namespace, "MetricName": metric_name}), wanted, device_dimension
        )

    def _discover_per_instance(
        self,
        namespace: str,
        metric_names: Sequence[str],
        wanted: Mapping[str, Instance],
        device_dimension: str,
        dimensions: tuple[str, str] | None = None,
    ) -> dict[str, list[_Found]]:
        """Dimension sets of `metric_names` for each wanted instance: one listing per instance. `dimensions`: the
        (instance, instance type) dimension names where they are not the agent's (Container Insights)."""
        found: dict[str, list[_Found]] = defaultdict(list)
        names = set(metric_names)
        instance_dimension = dimensions[0] if dimensions else self._metrics.instance_dimension
        for iid in wanted:
            request = {"Namespace": namespace, "Dimensions": [{"Name": instance_dimension, "Value": iid}]}
            listed = (metric for metric in self._list_metrics(request) if metric.get("MetricName") in names)
            for key, series in self._keep(listed, {iid: wanted[iid]}, device_dimension, dimensions).items():
                found[key].extend(series)
        return found

    def _discover_insights(self, wanted: Mapping[str, Instance], *, per_instance: bool) -> dict[str, list[_Found]]:
        """Container Insights' GPU and host-memory series of `wanted` (nodes without the agent's GPU series): one
        listing per node, or one per metric name across the region, whichever the shard already chose."""
        if not wanted:
            return {}
        names = (*_CI_GPU_METRICS, _CI_HOST_MEMORY)
        dimensions = (_CI_INSTANCE_DIMENSION, _CI_TYPE_DIMENSION)
        namespace = CONTAINER_INSIGHTS_NAMESPACE
        if per_instance:
            return self._discover_per_instance(namespace, names, wanted, _CI_DEVICE_DIMENSION, dimensions)
        found: dict[str, list[_Found]] = defaultdict(list)
        for name in names:
            listed = self._list_metrics({"Namespace": namespace, "MetricName": name})
            device = _CI_DEVICE_DIMENSION if name in _CI_GPU_METRICS else None
            for iid, series in self._keep(listed, wanted, device, dimensions).items():
                found[iid].extend(series)
        return found

    def _keep(
        self,
        listed: Iterator[Mapping[str, Any]],
        wanted: Mapping[str, Instance],
        device_dimension: str | None,
        dimension_names: tuple[str, str] | None = None,
    ) -> dict[str, list[_Found]]:
        m = self._metrics
        instance_dimension, type_dimension = dimension_names or (m.instance_dimension, m.instance_type_dimension)
        found: dict[str, list[_Found]] = defaultdict(list)
        for metric in listed:
            listed_dimensions = [(str(d["Name"]), str(d["Value"])) for d in metric.get("Dimensions", [])]
            values = dict(listed_dimensions)
            instance = wanted.get(values.get(instance_dimension, ""))
            if instance is None:  # another shard's host: nothing of it is kept (memory stays flat)
                continue
            recorded_type = values.get(type_dimension)
            if recorded_type is not None and recorded_type != instance.instance_type:
                # Published before a resize: it describes other hardware. The resize itself is evidence: the samples
                # before the first on the current type are not judged, CloudTrail or not (domain/summaries.py).
                self._earlier_types[instance.instance_id].add(recorded_type)
                continue
            template: Dimensions = self._one(
                tuple(
                    self._one((name, _THIS_HOST if name == instance_dimension else value))
                    for name, value in listed_dimensions
                )
            )
            device = values.get(device_dimension) if device_dimension else None
            one: _Found = self._one(_Found(self._one(str(metric.get("MetricName", ""))), template, device))
            mine = found[instance.instance_id]
            if any(self._series(other) == self._series(one) for other in mine):
                continue  # a store may list one series more than once (its dimensions in any order): query it once
            mine.append(one)
        return found

    def _one(self, value: Any) -> Any:
        """The copy of `value` this read keeps (the first seen)."""
        return self._shared.setdefault(value, value)

    def _series(self, found: _Found) -> tuple[str, frozenset[tuple[str, str]]]:
        """Which series `found` is, whatever the order of its dimensions."""
        series = self._identities.get(found)
        if series is None:
            series = self._identities[found] = (found.metric_name, frozenset(found.dimensions))
        return series

    def _list_metrics(self, request: dict[str, Any]) -> Iterator[Mapping[str, Any]]:
        if self._recently_active:
            request = {**request, "RecentlyActive": self._recently_active}
        while True:
            self.list_metrics_calls += 1
            response = self._call("list_metrics", request)
            yield from response.get("Metrics", [])
            token = response.get("NextToken")
            if not token:
                return
            request["NextToken"] = token

    # Queries -------------------------------------------------------------------------------------

    def _run(self, plan: Sequence[_Query], window: Window, problems: _Problems) -> list[list[_Chunk]]:
        """Datapoints per query of one batch, as the pages delivered them (a query may span pages)."""
        points: list[list[_Chunk]] = [[] for _ in plan]
        for start in range(0, len(plan), self._max_queries):
            chunk = range(start, min(start + self._max_queries, len(plan)))
            self.batches += 1
            request: dict[str, Any] = {
                # Ids are positions in the batch, so results map back without a lookup table.
                "MetricDataQueries": [plan[position].request(f"q{position}") for position in chunk],
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
                    self.datapoints += _collect(result, plan, points, problems)
                for message in response.get("Messages", []):
                    problems.messages[f"{message.get('Code', '?')}: {message.get('Value', '')}"] += 1
                token = response.get("NextToken")
                if not token:
                    break
                # A query's values can continue on the next page: they are appended in _collect.
                request["NextToken"] = token
        return points

    def _call(self, operation: str, request: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            response: Mapping[str, Any] = getattr(self._client, operation)(**request)
        except (ClientError, BotoCoreError) as exc:
            raise SourceUnavailable(f"CloudWatch {operation} failed: {exc}") from exc
        return response


_Chunk = tuple[Ints, Floats]  # (epoch seconds, values) of one page of one query's result


def _expected_points(query: _Query, window: Window) -> int:
    return max(1, int((window.end - window.start).total_seconds()) // query.period)


def _size(iid: str, queries: Sequence[_Query], window: Window) -> tuple[str, int, int]:
    """(instance id, its queries, the datapoints they are expected to answer): what packing reads of a host."""
    return iid, len(queries), sum(_expected_points(query, window) for query in queries)


def _pack(sizes: Sequence[tuple[str, int, int]], max_queries: int, page: int) -> list[list[str]]:
    """Batches of whole instances (their `_size`s): at most `max_queries` queries each (an instance with more gets a
    batch of its own, asked in several requests), each as close as can be to a whole number of full pages.

    From each position, every prefix that fits is scored by how full its last page would be (expected
    datapoints / pages x page); the fullest wins, the longer on a tie. A batch whose pages are full costs
    exactly the minimum; the shard as a whole wastes less than a page per batch only where sizes force it.
    """
    batches: list[list[str]] = []
    start = 0
    while start < len(sizes):
        best, best_fill, queries, points = start + 1, -1.0, 0, 0
        for end in range(start, len(sizes)):
            _, instance_queries, instance_points = sizes[end]
            if end > start and queries + instance_queries > max_queries:
                break
            queries += instance_queries
            points += instance_points
            pages = max(math.ceil(queries / max_queries), math.ceil(points / page))
            fill = points / (pages * page)
            if fill >= best_fill - 1e-9:
                best, best_fill = end + 1, fill
        batches.append([iid for iid, _, _ in sizes[start:best]])
        start = best
    return batches


def _mig_hosts(
    running: Mapping[str, Instance], kinds: Mapping[str, AcceleratorKind | None], specs: Mapping[str, InstanceTypeSpec]
) -> frozenset[str]:
    """The NVIDIA hosts whose GPUs may run in MIG mode (an unknown type too), whose per-instance series are read."""
    return frozenset(
        iid
        for iid, inst in running.items()
        if kinds[iid] is AcceleratorKind.NVIDIA and mig_capable(specs.get(inst.instance_type))
    )


def _kubernetes_node(instance: Instance) -> bool:
    """A node Container Insights may watch: one whose owner is a Kubernetes node group or NodePool."""
    return instance.owner is not None and instance.owner.kubernetes


def _kind(spec: InstanceTypeSpec | None) -> AcceleratorKind | None:
    return spec.accelerator_kind if spec is not None else None


def _nitro(spec: InstanceTypeSpec | None) -> bool:
    """Nitro hosts (EBS on NVMe) get AWS/EC2's per-instance EBS metrics; a type not known is asked too."""
    return spec is None or spec.nvme_support != "unsupported"


def _process_name(found: _Found) -> str:
    """What a procstat series watches: its exe, pattern or pid file."""
    values = dict(found.dimensions)
    return next((values[name] for name in _PROCESS_DIMENSIONS if values.get(name)), "")


def _part(found: _Found, metrics: MetricNames, signals: Mapping[str, Signal]) -> _Part | None:
    """The MIG GPU instance a per-instance series reads (None: its dimensions do not name one)."""
    values = dict(found.dimensions)
    instance = values.get(metrics.gpu_instance_dimension)
    if not instance:
        return None
    return _Part(instance, values.get(metrics.mig_profile_dimension, ""), signals.get(found.metric_name))


def _per_device_or_rollup(found: Sequence[_Found]) -> list[_Found]:
    """Per-device series when there are any; else the roll-ups, whose max is the busiest device."""
    per_device = [f for f in found if f.device is not None]
    return per_device or list(found)


def _without_fallbacks(found: Sequence[_Found], signals: Mapping[str, Signal]) -> list[_Found]:
    """The series to read: a fallback signal's (SM occupancy) only on a device that does not publish the signal it
    stands in for (SM active), which is not billed twice for one answer."""
    published = {(f.device, signals[f.metric_name]) for f in found if f.metric_name in signals}
    return [
        f
        for f in found
        if f.metric_name not in signals
        or (primary := STANDS_IN_FOR.get(signals[f.metric_name])) is None
        or (f.device, primary) not in published
    ]


def _queries(
    iid: str, found: _Found, namespace: str, fields: Sequence[tuple[str, str, int]], *, device: str | None
) -> Iterator[_Query]:
    for field_name, stat, period in fields:
        yield _Query(iid, device, field_name, namespace, found.metric_name, found.dimensions, stat, period)


def _collect(
    result: Mapping[str, Any],
    plan: Sequence[_Query],
    points: list[list[_Chunk]],
    problems: _Problems,
) -> int:
    """File one page of one query's result; returns how many datapoints it carried."""
    query_id = str(result.get("Id", ""))
    if not query_id.startswith("q") or not query_id[1:].isdigit() or int(query_id[1:]) >= len(plan):
        problems.messages[f"a result for an unknown query id {query_id!r} was ignored"] += 1
        return 0
    position = int(query_id[1:])
    status = str(result.get("StatusCode", "Complete"))
    if status not in _OK_STATUSES:
        query = plan[position]
        problems.statuses[status].append(query.describe())
        problems.hosts[query.instance_id].append(f"{query.metric_name} {query.stat}: {status}")
    for message in result.get("Messages", []):
        problems.messages[f"{message.get('Code', '?')}: {message.get('Value', '')}"] += 1
    # Arrays from the client's GetMetricData parser (adapters/aws/metric_data.py); lists where botocore's own parser
    # read the page, converted alike.
    timestamps, values = result.get("Timestamps", []), result.get("Values", [])
    count = min(len(timestamps), len(values))
    if count:
        array = floats(values[:count])
        scale = plan[position].scale
        points[position].append((epochs(timestamps[:count]), array * scale if scale != 1.0 else array))
    return count


def _readings(parts: Sequence[Sequence[_Chunk]]) -> tuple[Ints, Floats, int] | None:
    """Every page's timestamps and values of some queries, NaN readings dropped, and how many pages there were (None:
    no reading)."""
    chunks = [chunk for part in parts for chunk in part]
    if not chunks:
        return None
    if len(chunks) == 1:  # most series: one page's result, as it came
        stamps, values = chunks[0]
    else:
        stamps = np.concatenate([chunk[0] for chunk in chunks])
        values = np.concatenate([chunk[1] for chunk in chunks])
    if math.isnan(values.sum()):  # one pass where there is no NaN (most series); the sum of +inf and -inf looks too
        keep = ~np.isnan(values)
        stamps, values = stamps[keep], values[keep]
    return (stamps, values, len(chunks)) if len(values) else None


def _merge(parts: Sequence[Sequence[_Chunk]], period: int) -> Series:
    """One series from every page of every dimension set of the same device: ascending timestamps, the
    larger value where a timestamp is seen twice, NaN readings dropped."""
    found = _readings(parts)
    if found is None:
        return EMPTY
    stamps, values, chunks = found
    if chunks > 1 or (len(stamps) > 1 and not bool(np.all(stamps[1:] > stamps[:-1]))):
        order = np.lexsort((values, stamps))  # by timestamp, then value: the last of a timestamp is its largest
        stamps, values = stamps[order], values[order]
        last = np.append(stamps[1:] != stamps[:-1], True)
        stamps, values = stamps[last], values[last]
    return Series(period, stamps, values)


def _raw_usage(
    instance: Instance,
    results: Sequence[tuple[_Query, list[_Chunk]]],
    window: Window,
    *,
    silence_is_idle: bool = False,
) -> RawUsage:
    parts: dict[tuple[str | None, str], list[list[_Chunk]]] = defaultdict(list)
    slice_parts: dict[tuple[str, str, str], dict[str, list[list[_Chunk]]]] = defaultdict(lambda: defaultdict(list))
    slice_signals: dict[tuple[str, str, str], Signal] = {}
    periods: dict[str, int] = {}
    for query, datapoints in results:
        periods[query.field] = query.period
        if query.part is not None and query.device is not None:
            key = (query.device, query.part.gpu_instance, query.part.profile)
            slice_parts[key][query.field].append(datapoints)
            if query.part.signal is not None:
                slice_signals[key] = query.part.signal
            continue
        parts[(query.device, query.field)].append(datapoints)
    device_fields: dict[str, dict[str, Series]] = defaultdict(dict)
    host: dict[str, Series] = {}
    processes = sorted(
        {
            query.label
            for query, datapoints in results
            if query.field == _PROCESS_FIELD[0] and _any_at_least(datapoints, 1)
        }
    )
    for (device, field_name), series_parts in parts.items():
        if field_name == _PROCESS_FIELD[0]:
            continue
        merge = _sum if field_name in _SUMMED_FIELDS else _merge
        series = merge(series_parts, periods[field_name])
        if device is None:
            host[field_name] = series
        elif series:
            device_fields[device][field_name] = series
    slices: dict[str, list[SliceSeries]] = defaultdict(list)
    for key, fields in slice_parts.items():
        device, gpu_instance, profile = key
        load = _merge(fields.get(_SLICE_LOAD_FIELD[0], []), _SLICE_LOAD_FIELD[2])
        if load:  # a framebuffer alone does not size a slice
            memory = _merge(fields.get(_SLICE_MEMORY_FIELD[0], []), _SLICE_MEMORY_FIELD[2])
            slices[device].append(SliceSeries(gpu_instance, profile, slice_signals[key], load, memory))
    for device in slices:
        device_fields.setdefault(device, {})  # a GPU in MIG mode whose only readings are its slices'
    # A device listed by ListMetrics but without a datapoint in the window is left out: the analyzer
    # counts it as unseen (assumed busy) rather than as an idle device.
    devices = tuple(
        DeviceSeries(
            index=index,
            utilization_avg=fields.get("utilization_avg", EMPTY),
            utilization_max=fields.get("utilization_max", EMPTY),
            memory_used_max=fields.get("memory_used_max", EMPTY),
            memory_total_max=fields.get("memory_total_max", EMPTY),
            encoder_sessions_max=fields.get("encoder_sessions_max", EMPTY),
            encoder_fps_avg=fields.get("encoder_fps_avg", EMPTY),
            signals=tuple((signal, fields[signal.value]) for signal in Signal if signal.value in fields),
            slices=tuple(slices.get(index, ())),
        )
        for index, fields in sorted(device_fields.items(), key=lambda item: device_order(item[0]))
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
        silence_is_idle=silence_is_idle,
        ebs_read_bytes=host.get("ebs_read_bytes", EMPTY),
        ebs_write_bytes=host.get("ebs_write_bytes", EMPTY),
        ebs_read_ops=host.get("ebs_read_ops", EMPTY),
        ebs_write_ops=host.get("ebs_write_ops", EMPTY),
        disk_bytes=host.get("disk_bytes", EMPTY),
        graphics_processes=tuple(processes),
    )


def _any_at_least(chunks: Sequence[_Chunk], level: float) -> bool:
    return any(bool((values >= level).any()) for _, values in chunks)


def _sum(parts: Sequence[Sequence[_Chunk]], period: int) -> Series:
    """One series from several (every disk's reads and writes): the values added up at each timestamp, NaN dropped."""
    found = _readings(parts)
    if found is None:
        return EMPTY
    stamps, values, _ = found
    unique, where = np.unique(stamps, return_inverse=True)
    return Series(period, unique, np.bincount(where, weights=values, minlength=len(unique)).astype(np.float64))
