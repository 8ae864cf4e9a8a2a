"""CloudWatchUsage: metric discovery, query plan, batching and result mapping.

Against moto's CloudWatch in-process (a few sparse datapoints keep moto's per-period rescans quick),
and botocore's Stubber where moto cannot show a behaviour (GetMetricData pagination, bad statuses).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import boto3
import numpy as np
import pytest
from botocore.stub import ANY, Stubber

from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
from rightsizer.adapters.bundled import legacy_specs
from rightsizer.domain.models.hosts import AcceleratorKind
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.signals import Signal
from rightsizer.domain.usage.series import RawUsage
from rightsizer.domain.usage.summary import summarize
from rightsizer.services.ports import NullProgress, SourceUnavailable, UsageSource, Window
from rightsizer.settings import MetricNames
from tests.factories import NOW, RecordingProgress, api_specs, instance

WINDOW = Window(NOW - timedelta(days=2), NOW)
T0 = WINDOW.start
EPOCH0 = int(T0.timestamp())
EVERY_3H = [T0 + timedelta(hours=3 * step) for step in range(16)]
UTIL = "nvidia_smi_utilization_gpu"
MEM_USED = "nvidia_smi_memory_used"
MEM_TOTAL = "nvidia_smi_memory_total"
MEM_ACTIVITY = "nvidia_smi_utilization_memory"
ENC_SESSIONS = "nvidia_smi_encoder_stats_session_count"
ENC_FPS = "nvidia_smi_encoder_stats_average_fps"
UNMONITORED = AcceleratorKind.UNMONITORED


@pytest.fixture(scope="module", autouse=True)
def _specs_loaded() -> None:
    api_specs()  # parsed once per session (~1 s): paid in setup, not in the first test's timing


@pytest.fixture
def cloudwatch(moto_aws: None) -> Any:
    return boto3.client("cloudwatch", region_name="us-east-1")


@dataclass
class Calls:
    """GetMetricData / ListMetrics calls as botocore saw them: an independent count."""

    get_metric_data: list[dict[str, Any]] = field(default_factory=list)  # each call's parameters
    list_metrics: list[dict[str, Any]] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=lambda: {"GetMetricData": 0, "ListMetrics": 0})

    @property
    def queries(self) -> list[dict[str, Any]]:
        return [q for params in self.get_metric_data for q in params["MetricDataQueries"]]

    def queried_instances(self) -> set[str]:
        return {
            d["Value"]
            for q in self.queries
            for d in q["MetricStat"]["Metric"]["Dimensions"]
            if d["Name"] in ("InstanceId", "instance")
        }


def record(client: Any) -> Calls:
    """Hook botocore: `before-call` fires once per request sent, `before-parameter-build` has the params."""
    calls = Calls()

    def on_params(params: dict[str, Any], model: Any, **_: Any) -> None:
        target = calls.get_metric_data if model.name == "GetMetricData" else calls.list_metrics
        target.append(dict(params))

    def on_call(model: Any, **_: Any) -> None:
        calls.sent[model.name] += 1

    for operation in ("GetMetricData", "ListMetrics"):
        client.meta.events.register(f"before-parameter-build.cloudwatch.{operation}", on_params)
        client.meta.events.register(f"before-call.cloudwatch.{operation}", on_call)
    return calls


def put(client: Any, namespace: str, name: str, dims: dict[str, str], points: list[tuple[datetime, float]]) -> None:
    dimensions = [{"Name": key, "Value": value} for key, value in dims.items()]
    data = [{"MetricName": name, "Dimensions": dimensions, "Timestamp": at, "Value": value} for at, value in points]
    for start in range(0, len(data), 1000):
        client.put_metric_data(Namespace=namespace, MetricData=data[start : start + 1000])


def gpu_dims(iid: str, index: str, instance_type: str = "g5.12xlarge", **extra: str) -> dict[str, str]:
    return {
        "InstanceId": iid,
        "index": index,
        "name": "NVIDIA A10G",
        "InstanceType": instance_type,
        "ImageId": "ami-0123456789abcdef0",
        **extra,
    }


def constant(value: float, times: list[datetime] = EVERY_3H) -> list[tuple[datetime, float]]:
    return [(at, value) for at in times]


# 1. Discovery with the agent's varied dimension sets -------------------------------------------------


def test_discovery_merges_dimension_sets_and_picks_per_gpu_or_rollup(cloudwatch: Any) -> None:
    per_gpu, rollup_only, no_metrics = "i-0000000000000000a", "i-0000000000000000b", "i-0000000000000000c"
    stranger = "i-00000000000000999"
    # GPU 0 before a driver upgrade (no `arch`) and after it (with `arch`), overlapping for 4 points.
    before, after = EVERY_3H[:10], EVERY_3H[6:]
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(per_gpu, "0"), constant(10.0, before))
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(per_gpu, "0", arch="Ampere"), constant(20.0, after))
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(per_gpu, "1", arch="Ampere"), constant(30.0))
    put(cloudwatch, "CWAgent", MEM_USED, gpu_dims(per_gpu, "0"), constant(5000.0))
    # Published while the host was a g5.2xlarge: other hardware, skipped.
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(per_gpu, "2", "g5.2xlarge"), constant(99.0))
    # The agent's aggregation_dimensions [["InstanceId"]] roll-up: ignored next to per-GPU series.
    put(cloudwatch, "CWAgent", UTIL, {"InstanceId": per_gpu}, constant(77.0))
    put(
        cloudwatch,
        "CWAgent",
        UTIL,
        {"InstanceId": rollup_only, "InstanceType": "g5.12xlarge"},
        constant(40.0),
    )
    put(cloudwatch, "CWAgent", MEM_USED, {"InstanceId": rollup_only}, constant(9000.0))
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(stranger, "0"), constant(50.0))  # not in the inventory
    put(cloudwatch, "CWAgent", UTIL, {"index": "0", "host": "ip-10-0-0-1"}, constant(60.0))  # no InstanceId
    calls = record(cloudwatch)
    instances = [instance(instance_id=iid) for iid in (per_gpu, rollup_only, no_metrics)]

    usage = CloudWatchUsage(cloudwatch, MetricNames())
    raw = usage.fetch(instances, api_specs(), WINDOW)

    assert set(raw) == {per_gpu, rollup_only, no_metrics}
    gpus = raw[per_gpu]
    assert gpus.accelerator_data is AcceleratorData.PER_DEVICE
    assert [d.index for d in gpus.devices] == ["0", "1"]
    gpu0 = gpus.devices[0]
    # 16 distinct timestamps, not 10 + 10: the overlap is merged, keeping the larger value.
    assert list(gpu0.utilization_avg.timestamps) == [int(at.timestamp()) for at in EVERY_3H]
    assert list(gpu0.utilization_avg.values) == [10.0] * 6 + [20.0] * 10
    assert set(gpu0.memory_used_max.values) == {5000.0}
    assert not gpus.devices[1].memory_used_max
    everything = {v for d in gpus.devices for v in (*d.utilization_avg.values, *d.utilization_max.values)}
    assert everything == {10.0, 20.0, 30.0}  # no 77 (roll-up), 99 (stale type) or 50 (stranger)

    rolled = raw[rollup_only]
    assert rolled.accelerator_data is AcceleratorData.ROLLUP
    assert [d.index for d in rolled.devices] == ["*"]
    assert set(rolled.devices[0].utilization_max.values) == {40.0}
    assert set(rolled.devices[0].memory_used_max.values) == {9000.0}

    assert raw[no_metrics].accelerator_data is AcceleratorData.NONE
    assert raw[no_metrics].devices == ()
    assert summarize(raw[no_metrics]).accelerator_data is AcceleratorData.NONE

    # ListMetrics once per metric name (5 of nvidia_smi and 6 of DCGM per GPU, host memory, diskio read and write,
    # procstat), never per instance.
    assert usage.list_metrics_calls == len(calls.list_metrics) == calls.sent["ListMetrics"] == 15
    assert all("Dimensions" not in params for params in calls.list_metrics)
    # GPU 0 util x2 dimension sets, GPU 1 util, GPU 0 memory; roll-up util + memory; EC2 x3 and EBS x4 each.
    assert usage.queries == len(calls.queries) == (3 * 2 + 1 + 3 + 4) + (2 + 1 + 3 + 4) + 3 + 4
    assert stranger not in calls.queried_instances()
    assert usage.get_metric_data_calls == calls.sent["GetMetricData"] == 1


def test_queries_use_exactly_the_listed_dimension_sets(cloudwatch: Any) -> None:
    iid = "i-0000000000000000a"
    dims = gpu_dims(iid, "3", arch="Hopper", AutoScalingGroupName="trainers")
    put(cloudwatch, "CWAgent", UTIL, dims, constant(12.0))
    calls = record(cloudwatch)

    CloudWatchUsage(cloudwatch, MetricNames()).fetch([instance(instance_id=iid)], api_specs(), WINDOW)

    gpu_queries = [q for q in calls.queries if q["MetricStat"]["Metric"]["Namespace"] == "CWAgent"]
    assert len(gpu_queries) == 2
    for query in gpu_queries:
        sent = {d["Name"]: d["Value"] for d in query["MetricStat"]["Metric"]["Dimensions"]}
        assert sent == dims


def test_unmonitored_and_unknown_types_get_no_accelerator_queries(cloudwatch: Any) -> None:
    amd, unknown = "i-0000000000000000a", "i-0000000000000000b"
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(amd, "0", "g4ad.xlarge"), constant(50.0))
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(unknown, "0", "x9.unknown"), constant(50.0))
    radeon = replace(api_specs()["g4dn.xlarge"], instance_type="g4ad.xlarge", accelerator_kind=UNMONITORED)
    calls = record(cloudwatch)

    hosts = [instance("g4ad.xlarge", amd), instance("x9.unknown", unknown)]
    raw = CloudWatchUsage(cloudwatch, MetricNames()).fetch(hosts, {"g4ad.xlarge": radeon}, WINDOW)

    assert [raw[iid].accelerator_data for iid in (amd, unknown)] == [AcceleratorData.NONE] * 2
    host_metrics = ["mem_used_percent", "diskio_read_bytes", "diskio_write_bytes", "procstat_lookup_pid_count"]
    assert [p["MetricName"] for p in calls.list_metrics] == host_metrics
    assert {q["MetricStat"]["Metric"]["Namespace"] for q in calls.queries} == {"AWS/EC2"}
    assert len(calls.queries) == 2 * (3 + 4)  # CPU, network in and out; EBS bytes and operations read and written


# 2. Neuron, with configurable names ------------------------------------------------------------------


def test_neuron_discovery_with_custom_namespace_metric_and_dimensions(cloudwatch: Any) -> None:
    names = MetricNames(
        neuron_namespace="Custom/Neuron",
        neuron_utilization="NeuronCoreUtilization",
        neuron_core_dimension="core",
        instance_dimension="instance",
        instance_type_dimension="type",
    )
    per_core, rollup_only = "i-000000000000000n1", "i-000000000000000n2"

    def neuron(dims: dict[str, str], points: list[tuple[datetime, float]]) -> None:
        put(cloudwatch, "Custom/Neuron", "NeuronCoreUtilization", dims, points)

    neuron({"instance": per_core, "core": "0"}, constant(35.0))
    neuron({"instance": per_core, "core": "1"}, constant(65.0))
    # A second dimension set for core 1 (e.g. with the type appended), merged by the larger value.
    neuron({"instance": per_core, "core": "1", "type": "inf2.xlarge"}, constant(70.0, EVERY_3H[:2]))
    neuron({"instance": per_core}, constant(88.0))  # a roll-up, ignored next to per-core series
    neuron({"instance": per_core, "core": "5", "type": "inf2.48xlarge"}, constant(99.0))  # before a resize
    neuron({"instance": rollup_only, "type": "trn1.2xlarge"}, constant(45.0))
    # The default names are not read when others are configured.
    put(
        cloudwatch,
        "NeuronMonitor",
        "neuroncore_utilization",
        {"InstanceId": per_core, "NeuronCore": "0"},
        constant(1.0),
    )
    calls = record(cloudwatch)
    hosts = [
        instance("inf2.xlarge", per_core),
        instance("trn1.2xlarge", rollup_only),
    ]

    raw = CloudWatchUsage(cloudwatch, names).fetch(hosts, api_specs(), WINDOW)

    cores = raw[per_core]
    assert cores.accelerator_data is AcceleratorData.PER_DEVICE
    assert [d.index for d in cores.devices] == ["0", "1"]
    assert set(cores.devices[0].utilization_avg.values) == {35.0}
    assert list(cores.devices[1].utilization_max.values)[:2] == [70.0, 70.0]
    assert set(list(cores.devices[1].utilization_max.values)[2:]) == {65.0}
    assert cores.devices[0].utilization_max.period_seconds == 3600
    rolled = raw[rollup_only]
    assert rolled.accelerator_data is AcceleratorData.ROLLUP
    assert [d.index for d in rolled.devices] == ["*"]
    assert set(rolled.devices[0].utilization_avg.values) == {45.0}
    # No NVIDIA discovery for a Neuron-only fleet; one Neuron ListMetrics, one each for the agent's host metrics.
    assert [(p["Namespace"], p["MetricName"]) for p in calls.list_metrics] == [
        ("Custom/Neuron", "NeuronCoreUtilization"),
        ("CWAgent", "mem_used_percent"),
        ("CWAgent", "diskio_read_bytes"),
        ("CWAgent", "diskio_write_bytes"),
        ("CWAgent", "procstat_lookup_pid_count"),
    ]


# 3. Values land in the right fields ------------------------------------------------------------------


def test_dcgm_signals_are_read_per_gpu_as_five_minute_averages_and_occupancy_only_where_sm_active_is_missing(
    cloudwatch: Any,
) -> None:
    iid = "i-0000000000000d0a1"
    names = MetricNames()
    for index in "01":
        put(cloudwatch, "CWAgent", UTIL, gpu_dims(iid, index), constant(97.0))
        dims = {"InstanceId": iid, "InstanceType": "g5.12xlarge", "index": index}
        for name, value in (
            (names.gpu_tensor_active, 4.0),
            (names.gpu_dram_active, 11.0),
            (names.gpu_encoder_util, 0.0),
            (names.gpu_decoder_util, 35.0),
            (names.gpu_sm_occupancy, 9.0),
        ):
            put(cloudwatch, "CWAgent", name, dims, constant(value))
        if index == "0":  # GPU 1's SM active is not published: its occupancy stands in
            put(cloudwatch, "CWAgent", names.gpu_sm_active, dims, constant(18.0))
    calls = record(cloudwatch)

    raw = CloudWatchUsage(cloudwatch, names).fetch([instance(instance_id=iid)], api_specs(), WINDOW)[iid]

    gpu0, gpu1 = raw.devices
    assert [signal for signal, _ in gpu0.signals] == [
        Signal.SM_ACTIVE,
        Signal.TENSOR_ACTIVE,
        Signal.DRAM_ACTIVE,
        Signal.ENCODER,
        Signal.DECODER,
    ]
    assert set(gpu0.signal(Signal.SM_ACTIVE).values) == {18.0}
    assert set(gpu0.signal(Signal.DECODER).values) == {35.0}
    assert set(gpu1.signal(Signal.SM_OCCUPANCY).values) == {9.0} and not gpu1.signal(Signal.SM_ACTIVE)
    dcgm = [q["MetricStat"] for q in calls.queries if q["MetricStat"]["Metric"]["MetricName"].startswith("dcgm_")]
    assert {(stat["Stat"], stat["Period"]) for stat in dcgm} == {("Average", 300)}
    # 5 signals a GPU; GPU 0's occupancy, which SM active answers, is not asked for.
    assert len(dcgm) == 10
    assert not [
        s
        for s in dcgm
        if s["Metric"]["MetricName"] == names.gpu_sm_occupancy
        and ("index", "0") in {(d["Name"], d["Value"]) for d in s["Metric"]["Dimensions"]}
    ]


def test_mig_instances_are_read_per_gpu_instance_with_their_profile_and_framebuffer(cloudwatch: Any) -> None:
    """A p4d's GPU 0 in MIG mode: utilization.gpu is [N/A], only memory and each GPU instance's DCGM series are
    published. Each instance's load (occupancy only where SM active is missing) and framebuffer land in its slice."""
    iid = "i-0000000000000d0a2"
    names = MetricNames()
    put(cloudwatch, "CWAgent", MEM_USED, gpu_dims(iid, "0", "p4d.24xlarge"), constant(9000.0))

    def sliced(gpu_instance: str, profile: str) -> dict[str, str]:
        return {"InstanceId": iid, "InstanceType": "p4d.24xlarge", "index": "0", "gpu_instance": gpu_instance,
                "mig_profile": profile}  # fmt: skip

    put(cloudwatch, "CWAgent", names.gpu_instance_sm_active, sliced("2", "3g.20gb"), constant(9.0))
    put(cloudwatch, "CWAgent", names.gpu_instance_sm_occupancy, sliced("2", "3g.20gb"), constant(4.0))
    put(cloudwatch, "CWAgent", names.gpu_instance_memory_used, sliced("2", "3g.20gb"), constant(3100.0))
    put(cloudwatch, "CWAgent", names.gpu_instance_sm_occupancy, sliced("9", "1g.5gb"), constant(40.0))
    put(cloudwatch, "CWAgent", names.gpu_instance_memory_used, sliced("9", "1g.5gb"), constant(2000.0))
    calls = record(cloudwatch)

    raw = CloudWatchUsage(cloudwatch, names).fetch(
        [instance("p4d.24xlarge", instance_id=iid)], {**api_specs(), **legacy_specs()}, WINDOW
    )[iid]

    (gpu,) = raw.devices
    three, one = gpu.slices
    assert (three.gpu_instance, three.profile, three.signal) == ("2", "3g.20gb", Signal.SM_ACTIVE)
    assert set(three.load.values) == {9.0} and set(three.memory_used_max.values) == {3100.0}
    assert (one.gpu_instance, one.profile, one.signal) == ("9", "1g.5gb", Signal.SM_OCCUPANCY)
    assert set(one.load.values) == {40.0} and set(one.memory_used_max.values) == {2000.0}
    assert not gpu.utilization_avg and not gpu.signals, "the slices are not the GPU's own series"
    mig = [q["MetricStat"] for q in calls.queries if q["MetricStat"]["Metric"]["MetricName"].startswith("dcgm_mig")]
    # The 3g.20gb's occupancy, which its SM active answers, is not asked for.
    assert sorted((s["Metric"]["MetricName"], s["Stat"], s["Period"]) for s in mig) == [
        (names.gpu_instance_memory_used, "Maximum", 3600),
        (names.gpu_instance_memory_used, "Maximum", 3600),
        (names.gpu_instance_sm_active, "Average", 300),
        (names.gpu_instance_sm_occupancy, "Average", 300),
    ]
    summary = summarize(raw)
    assert [(s.profile, s.load.p95, s.memory_used_peak_mib) for s in summary.devices[0].slices] == [
        ("3g.20gb", 9.0, 3100.0),
        ("1g.5gb", 40.0, 2000.0),
    ]


def test_a_region_without_a_mig_capable_gpu_lists_no_per_instance_metric(cloudwatch: Any) -> None:
    iid = "i-0000000000000d0a3"
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(iid, "0"), constant(50.0))
    calls = record(cloudwatch)

    CloudWatchUsage(cloudwatch, MetricNames()).fetch([instance(instance_id=iid)], api_specs(), WINDOW)

    assert not [p for p in calls.list_metrics if str(p.get("MetricName", "")).startswith("dcgm_mig")]


def test_statistics_and_periods_land_in_the_right_fields(cloudwatch: Any) -> None:
    iid = "i-0000000000000000a"
    hour = T0 + timedelta(hours=5)
    dims = gpu_dims(iid, "0")
    minutes = [hour + timedelta(minutes=m) for m in (0, 5, 10, 15)]
    put(cloudwatch, "CWAgent", UTIL, dims, list(zip(minutes, [10.0, 50.0, 30.0, 20.0], strict=True)))
    put(
        cloudwatch,
        "CWAgent",
        MEM_USED,
        dims,
        [(hour, 100.0), (hour + timedelta(minutes=20), 400.0), (hour + timedelta(minutes=40), 200.0)],
    )
    put(cloudwatch, "CWAgent", MEM_TOTAL, dims, [(T0 + timedelta(hours=h), 23028.0) for h in (1, 30, 40)])
    # The agent publishes memory-controller activity too; no rule reads it, so it is never asked for.
    put(cloudwatch, "CWAgent", MEM_ACTIVITY, dims, [(hour, 10.0), (hour + timedelta(minutes=2), 30.0)])
    host = {"InstanceId": iid, "InstanceType": "g5.12xlarge", "ImageId": "ami-0123456789abcdef0"}
    put(cloudwatch, "CWAgent", "mem_used_percent", host, [(hour, 41.0), (hour + timedelta(minutes=30), 62.5)])
    ec2 = {"InstanceId": iid}
    put(cloudwatch, "AWS/EC2", "NetworkIn", ec2, [(hour, 1000.0), (hour + timedelta(minutes=1), 2000.0)])
    put(cloudwatch, "AWS/EC2", "NetworkOut", ec2, [(hour, 7.0)])
    put(cloudwatch, "AWS/EC2", "CPUUtilization", ec2, [(hour, 20.0), (hour + timedelta(minutes=3), 40.0)])

    calls = record(cloudwatch)

    raw = CloudWatchUsage(cloudwatch, MetricNames()).fetch([instance(instance_id=iid)], api_specs(), WINDOW)[iid]

    at = int(hour.timestamp())
    gpu = raw.devices[0]
    assert (gpu.utilization_avg.period_seconds, list(gpu.utilization_avg.timestamps)) == (
        300,
        [at, at + 300, at + 600, at + 900],
    )
    assert list(gpu.utilization_avg.values) == [10.0, 50.0, 30.0, 20.0]
    assert (list(gpu.utilization_max.timestamps), list(gpu.utilization_max.values)) == ([at], [50.0])
    assert (list(gpu.memory_used_max.timestamps), list(gpu.memory_used_max.values)) == ([at], [400.0])
    # Daily buckets start at the window start.
    assert gpu.memory_total_max.period_seconds == 86400
    assert list(gpu.memory_total_max.timestamps) == [EPOCH0, EPOCH0 + 86400]
    assert MEM_ACTIVITY not in {p["MetricName"] for p in calls.list_metrics}
    assert MEM_ACTIVITY not in {q["MetricStat"]["Metric"]["MetricName"] for q in calls.queries}
    # Per GPU: utilisation Average and Maximum, memory used Maximum, memory total Maximum; host memory; AWS/EC2's CPU
    # and network, and its EBS bytes and operations (hourly Sums).
    assert len(calls.queries) == 4 + 1 + 3 + 4
    assert (raw.host_memory_max.period_seconds, list(raw.host_memory_max.values)) == (3600, [62.5])
    assert (list(raw.network_in_sum.timestamps), list(raw.network_in_sum.values)) == ([at], [3000.0])
    assert list(raw.network_out_sum.values) == [7.0]
    assert list(raw.cpu_avg.values) == [30.0]
    for series in (gpu.utilization_avg, gpu.memory_total_max, raw.cpu_avg, raw.network_in_sum):
        # Compact arrays of whole epoch seconds, ascending and unique.
        assert series.stamps.dtype == np.int64 and series.array.dtype == np.float64
        assert list(series.timestamps) == sorted(set(series.timestamps))
    assert (raw.window_start, raw.window_end) == (WINDOW.start, WINDOW.end)


def test_ebs_the_disks_and_graphics_processes_are_read_where_published(cloudwatch: Any) -> None:
    iid, xen = "i-0000000000000000a", "i-0000000000000000x"
    hour = T0 + timedelta(hours=5)
    ec2 = {"InstanceId": iid}
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(iid, "0"), [(hour, 10.0)])
    # AWS/EC2's EBS metrics (5-minute sums on basic monitoring): the hourly Sum adds them up.
    put(cloudwatch, "AWS/EC2", "EBSReadBytes", ec2, [(hour, 6e9), (hour + timedelta(minutes=5), 4e9)])
    put(cloudwatch, "AWS/EC2", "EBSWriteBytes", ec2, [(hour, 1e9)])
    put(cloudwatch, "AWS/EC2", "EBSReadOps", ec2, [(hour, 36_000.0)])
    put(cloudwatch, "AWS/EC2", "EBSWriteOps", ec2, [(hour, 3_600.0)])
    # The agent's diskio on two disks (the root EBS volume and the instance store), read and written.
    for disk, read, written in (("nvme0n1", 1e9, 2e9), ("nvme1n1", 3e10, 1e10)):
        dims = {"InstanceId": iid, "InstanceType": "g5.12xlarge", "name": disk}
        put(cloudwatch, "CWAgent", "diskio_read_bytes", dims, [(hour, read)])
        put(cloudwatch, "CWAgent", "diskio_write_bytes", dims, [(hour, written)])
    # procstat watches a DCV server (running) and sshd (not a graphics process: never queried).
    put(
        cloudwatch,
        "CWAgent",
        "procstat_lookup_pid_count",
        {**ec2, "exe": "dcvserver", "pid_finder": "native"},
        [(hour, 1.0)],
    )
    put(
        cloudwatch,
        "CWAgent",
        "procstat_lookup_pid_count",
        {**ec2, "exe": "sshd", "pid_finder": "native"},
        [(hour, 3.0)],
    )
    put(cloudwatch, "AWS/EC2", "EBSReadBytes", {"InstanceId": xen}, [(hour, 1e9)])
    calls = record(cloudwatch)
    hosts = [instance(instance_id=iid), instance("p3.2xlarge", xen)]

    raw = CloudWatchUsage(cloudwatch, MetricNames()).fetch(hosts, {**legacy_specs(), **api_specs()}, WINDOW)

    at = int(hour.timestamp())
    nitro = raw[iid]
    assert (nitro.ebs_read_bytes.period_seconds, list(nitro.ebs_read_bytes.timestamps)) == (3600, [at])
    assert list(nitro.ebs_read_bytes.values) == [1e10]
    assert (list(nitro.ebs_write_bytes.values), list(nitro.ebs_read_ops.values)) == ([1e9], [36_000.0])
    assert list(nitro.ebs_write_ops.values) == [3_600.0]
    # Every disk's reads and writes added up per hour.
    assert (list(nitro.disk_bytes.timestamps), list(nitro.disk_bytes.values)) == ([at], [4.3e10])
    assert nitro.graphics_processes == ("dcvserver",)
    processes = [q for q in calls.queries if q["MetricStat"]["Metric"]["MetricName"] == "procstat_lookup_pid_count"]
    assert [{d["Name"]: d["Value"] for d in q["MetricStat"]["Metric"]["Dimensions"]}["exe"] for q in processes] == [
        "dcvserver"
    ]
    # A Xen host's EBS metrics are per volume (AWS/EBS), never asked per instance.
    xen_queries = [
        q for q in calls.queries if {"Name": "InstanceId", "Value": xen} in q["MetricStat"]["Metric"]["Dimensions"]
    ]
    assert {q["MetricStat"]["Metric"]["MetricName"] for q in xen_queries} == {
        "CPUUtilization",
        "NetworkIn",
        "NetworkOut",
    }
    assert not raw[xen].ebs_read_bytes


# 4. Batching -----------------------------------------------------------------------------------------


@pytest.fixture
def fast_moto(moto_aws: None) -> Iterator[None]:
    from demo import fast_cloudwatch

    fast_cloudwatch.install()
    try:
        yield
    finally:
        fast_cloudwatch.uninstall()


def test_more_than_500_queries_are_packed_into_batches_of_whole_instances(fast_moto: None) -> None:
    client = boto3.client("cloudwatch", region_name="us-east-1")
    hosts = [instance(instance_id=f"i-{n:017x}", instance_type="g5.48xlarge") for n in range(45)]
    at = T0 + timedelta(hours=1)
    rows: list[dict[str, Any]] = []
    for host in hosts:
        for index in "01234567":
            dims = [{"Name": k, "Value": v} for k, v in gpu_dims(host.instance_id, index, "g5.48xlarge").items()]
            for name in (UTIL, MEM_USED, MEM_TOTAL, MEM_ACTIVITY):
                rows.append({"MetricName": name, "Dimensions": dims, "Timestamp": at, "Value": 1.0 + int(index)})
        host_dims = [{"Name": "InstanceId", "Value": host.instance_id}]
        rows.append({"MetricName": "mem_used_percent", "Dimensions": host_dims, "Timestamp": at, "Value": 30.0})
    for start in range(0, len(rows), 1000):
        client.put_metric_data(Namespace="CWAgent", MetricData=rows[start : start + 1000])  # type: ignore[arg-type]
    calls = record(client)
    progress = RecordingProgress()

    usage = CloudWatchUsage(client, MetricNames(), progress)
    raw = usage.fetch(hosts, api_specs(), WINDOW)

    expected_queries = 45 * (8 * 4 + 1 + 3 + 4)  # 4 per GPU, host memory, 3 AWS/EC2, 4 EBS
    assert usage.queries == len(calls.queries) == expected_queries
    assert usage.get_metric_data_calls == calls.sent["GetMetricData"] == math.ceil(expected_queries / 500) == 4
    assert usage.pages_beyond_first == 0
    # 40 queries per host: 12 hosts fill a request as far as whole hosts can (a host's series stay together).
    assert [len(params["MetricDataQueries"]) for params in calls.get_metric_data] == [480, 480, 480, 360]
    for params in calls.get_metric_data:  # ids are unique within a request, as the API requires
        ids = [q["Id"] for q in params["MetricDataQueries"]]
        assert len(set(ids)) == len(ids)
        assert all(re.fullmatch(r"[a-z][a-zA-Z0-9_]*", query_id) for query_id in ids)
    for params in calls.get_metric_data:
        assert (params["StartTime"], params["EndTime"], params["ScanBy"]) == (
            WINDOW.start,
            WINDOW.end,
            "TimestampAscending",
        )
    assert usage.list_metrics_calls == calls.sent["ListMetrics"] == 15  # one per metric name (see above)
    assert progress.stages == [("usage", 4)] and progress.advanced == 4
    for host in hosts:
        usage_of = raw[host.instance_id]
        assert usage_of.accelerator_data is AcceleratorData.PER_DEVICE
        assert [list(d.memory_total_max.values) for d in usage_of.devices] == [[float(i)] for i in range(1, 9)]
        assert list(usage_of.host_memory_max.values) == [30.0]


def test_a_smaller_batch_size_makes_more_calls(cloudwatch: Any) -> None:
    put(cloudwatch, "CWAgent", UTIL, gpu_dims("i-0000000000000000a", "0"), constant(5.0, EVERY_3H[:2]))
    calls = record(cloudwatch)
    usage = CloudWatchUsage(cloudwatch, MetricNames(), max_queries_per_call=2)
    usage.fetch([instance(instance_id="i-0000000000000000a")], api_specs(), WINDOW)
    assert usage.queries == 9  # utilization x2, EC2 x3, EBS x4
    assert usage.get_metric_data_calls == calls.sent["GetMetricData"] == 5
    with pytest.raises(ValueError, match="max_queries_per_call"):
        CloudWatchUsage(cloudwatch, MetricNames(), max_queries_per_call=501)


# 5. GetMetricData pagination and bad statuses (Stubber: moto never paginates) ------------------------


def _listed(iid: str, index: str) -> dict[str, Any]:
    dims = gpu_dims(iid, index)
    return {
        "Namespace": "CWAgent",
        "MetricName": UTIL,
        "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()],
    }


def test_get_metric_data_pages_are_followed_and_appended() -> None:
    iid = "i-0000000000000000a"
    client = boto3.client("cloudwatch", region_name="us-east-1")
    stubber = Stubber(client)
    # ListMetrics for utilization in two pages; the other GPU metrics and host memory: none.
    stubber.add_response(
        "list_metrics",
        {"Metrics": [_listed(iid, "0")], "NextToken": "lm2"},
        {"Namespace": "CWAgent", "MetricName": UTIL},
    )
    stubber.add_response(
        "list_metrics",
        {"Metrics": [_listed(iid, "1")]},
        {"Namespace": "CWAgent", "MetricName": UTIL, "NextToken": "lm2"},
    )
    other_names = (MEM_USED, MEM_TOTAL, ENC_SESSIONS, ENC_FPS, *MetricNames().signal_metrics, "mem_used_percent")
    host_names = ("diskio_read_bytes", "diskio_write_bytes", "procstat_lookup_pid_count")
    for name in (*other_names, *host_names):
        stubber.add_response("list_metrics", {"Metrics": []}, {"Namespace": "CWAgent", "MetricName": name})
    # Plan: q0/q1 GPU 0 avg/max, q2/q3 GPU 1 avg/max, q4-q6 CPU, NetworkIn, NetworkOut.
    t = [T0 + timedelta(minutes=5 * step) for step in range(4)]
    first_page = {
        "MetricDataResults": [
            {
                "Id": "q0",
                "Label": "a",
                "Timestamps": t[:2],
                "Values": [11.0, 12.0],
                "StatusCode": "PartialData",
            },
            {"Id": "q2", "Label": "c", "Timestamps": [], "Values": [], "StatusCode": "Forbidden"},
            {"Id": "q4", "Label": "e", "Timestamps": [t[0]], "Values": [3.0], "StatusCode": "Complete"},
        ],
        "NextToken": "page2",
        "Messages": [{"Code": "MaxMetricsExceeded", "Value": "too many datapoints"}],
    }
    second_page = {
        "MetricDataResults": [
            # Continued values for q0, the last of them repeated from page one with a larger value.
            {
                "Id": "q0",
                "Label": "a",
                "Timestamps": [t[3], t[2], t[1]],
                "Values": [14.0, 13.0, 15.0],
                "StatusCode": "Complete",
            },
            {"Id": "q3", "Label": "d", "Timestamps": [], "Values": [], "StatusCode": "InternalError"},
        ]
    }
    expected = {
        "MetricDataQueries": ANY,
        "StartTime": WINDOW.start,
        "EndTime": WINDOW.end,
        "ScanBy": "TimestampAscending",
    }
    stubber.add_response("get_metric_data", first_page, expected)
    stubber.add_response("get_metric_data", second_page, {**expected, "NextToken": "page2"})
    progress = RecordingProgress()

    with stubber:
        usage = CloudWatchUsage(client, MetricNames(), progress)
        raw = usage.fetch([instance(instance_id=iid)], api_specs(), WINDOW)
        stubber.assert_no_pending_responses()

    gpu0 = raw[iid].devices[0]
    assert list(gpu0.utilization_avg.timestamps) == [int(x.timestamp()) for x in t]
    assert list(gpu0.utilization_avg.values) == [11.0, 15.0, 13.0, 14.0]
    assert [d.index for d in raw[iid].devices] == ["0"]  # GPU 1 has no datapoint: left out
    assert list(raw[iid].cpu_avg.values) == [3.0]
    assert (usage.get_metric_data_calls, usage.pages_beyond_first, usage.batches) == (2, 1, 1)
    assert usage.list_metrics_calls == 16  # utilization in two pages, the other 14 names in one each
    assert progress.stages == [("usage", 1)] and progress.advanced == 1
    text = "\n".join(progress.warnings)
    assert "Forbidden for 1 usage queries" in text and "InternalError" in text
    assert f"nvidia_smi_utilization_gpu Average for {iid} 1" in text
    assert "MaxMetricsExceeded: too many datapoints" in text
    assert "PartialData" not in text
    assert usage.warnings == progress.warnings


def test_api_errors_become_source_unavailable() -> None:
    client = boto3.client("cloudwatch", region_name="us-east-1")
    stubber = Stubber(client)
    stubber.add_client_error("list_metrics", "AccessDenied", "not allowed")
    with stubber, pytest.raises(SourceUnavailable, match="list_metrics"):
        CloudWatchUsage(client, MetricNames()).fetch([instance()], api_specs(), WINDOW)


# 6. Hosts that are not running -----------------------------------------------------------------------


def test_non_running_instances_get_an_empty_entry_and_no_queries(cloudwatch: Any) -> None:
    stopped, running = "i-0000000000000000s", "i-0000000000000000r"
    for iid in (stopped, running):
        put(cloudwatch, "CWAgent", UTIL, gpu_dims(iid, "0"), constant(50.0))
    calls = record(cloudwatch)
    usage = CloudWatchUsage(cloudwatch, MetricNames())

    only_stopped = usage.fetch([instance(instance_id=stopped, state="stopped")], api_specs(), WINDOW)
    assert only_stopped[stopped] == RawUsage(stopped, WINDOW.start, WINDOW.end, AcceleratorData.NONE)
    assert (usage.queries, usage.get_metric_data_calls, usage.list_metrics_calls) == (0, 0, 0)
    assert calls.sent == {"GetMetricData": 0, "ListMetrics": 0}

    hosts = [instance(instance_id=stopped, state="stopped"), instance(instance_id=running)]
    both = usage.fetch(hosts, api_specs(), WINDOW)
    assert both[stopped].devices == () and not both[stopped].cpu_avg
    assert both[running].accelerator_data is AcceleratorData.PER_DEVICE
    assert calls.queried_instances() == {running}
    assert usage.queries == 9


def test_accelerator_series_says_where_each_running_host_publishes_from_listmetrics_alone(cloudwatch: Any) -> None:
    """What `rightsizer doctor` asks: which hosts read() would find GPU series for, only series with recent data."""
    publishes, resized, silent, stopped = (f"i-000000000000000{c}" for c in "abcd")
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(publishes, "0"), constant(40.0))
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(resized, "0", "g5.2xlarge"), constant(40.0))  # only as its old type
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(stopped, "0"), constant(40.0))
    calls = record(cloudwatch)
    usage = CloudWatchUsage(cloudwatch, MetricNames(), recently_active="PT3H")
    hosts = [instance(instance_id=iid) for iid in (publishes, resized, silent)]

    series = usage.accelerator_series([*hosts, instance(instance_id=stopped, state="stopped")], api_specs())

    assert series == {publishes: frozenset({"CWAgent"}), resized: frozenset(), silent: frozenset()}
    assert calls.list_metrics and all(params["RecentlyActive"] == "PT3H" for params in calls.list_metrics)
    assert calls.sent["GetMetricData"] == 0
    CloudWatchUsage(cloudwatch, MetricNames()).accelerator_series(hosts, api_specs())
    assert calls.list_metrics[-1].get("RecentlyActive") is None  # read() discovers every series in the window


def test_is_a_usage_source(cloudwatch: Any) -> None:
    source: UsageSource = CloudWatchUsage(cloudwatch, MetricNames(), NullProgress())
    assert list(source.read([], api_specs(), WINDOW)) == []


# Kubernetes nodes without the agent: Container Insights with enhanced observability ------------------------------

CI = "ContainerInsights"


def ci_dims(iid: str, device: str | None, node: str = "ip-10-0-1-5.ec2.internal") -> dict[str, str]:
    """node_gpu_* dimensions as the CloudWatch Observability add-on publishes them (per GPU device)."""
    dims = {"ClusterName": "ml", "InstanceId": iid, "InstanceType": "g5.12xlarge", "NodeName": node}
    return {**dims, "GpuDevice": device} if device is not None else dims


def test_a_kubernetes_node_without_the_agent_is_read_from_container_insights_in_mib(cloudwatch: Any) -> None:
    node, plain = "i-0000000000000e0a1", "i-0000000000000e0a2"
    eks = {"eks:nodegroup-name": "gpu", "eks:cluster-name": "ml", "aws:autoscaling:groupName": "eks-gpu"}
    for device, util in (("nvidia0", 35.0), ("nvidia1", 0.0)):
        put(cloudwatch, CI, "node_gpu_utilization", ci_dims(node, device), constant(util))
        put(cloudwatch, CI, "node_gpu_memory_used", ci_dims(node, device), constant(6 * 1024**3))  # bytes
        put(cloudwatch, CI, "node_gpu_memory_total", ci_dims(node, device), constant(23028 * 1024**2))
    put(cloudwatch, CI, "node_memory_utilization", ci_dims(node, None), constant(41.0))
    # A host of its own with Container Insights series (someone's DaemonSet): never read there.
    put(cloudwatch, CI, "node_gpu_utilization", ci_dims(plain, "nvidia0"), constant(90.0))
    hosts = [instance(instance_id=node, tags=eks), instance(instance_id=plain)]

    raw = CloudWatchUsage(cloudwatch, MetricNames()).fetch(hosts, api_specs(), WINDOW)

    read = raw[node]
    assert read.accelerator_data is AcceleratorData.PER_DEVICE
    assert [d.index for d in read.devices] == ["nvidia0", "nvidia1"]
    assert set(read.devices[0].utilization_avg.values) == {35.0}
    assert set(read.devices[0].memory_used_max.values) == {6 * 1024.0}  # MiB, as the agent publishes
    assert set(read.devices[0].memory_total_max.values) == {23028.0}
    assert set(read.host_memory_max.values) == {41.0}
    assert not raw[plain].devices


def test_container_insights_tensor_core_utilization_is_the_nodes_tensor_signal(cloudwatch: Any) -> None:
    node = "i-0000000000000e0a4"
    eks = {"eks:nodegroup-name": "gpu", "eks:cluster-name": "ml"}
    put(cloudwatch, CI, "node_gpu_utilization", ci_dims(node, "nvidia0"), constant(95.0))
    put(cloudwatch, CI, "node_gpu_tensor_core_utilization", ci_dims(node, "nvidia0"), constant(12.5))

    raw = CloudWatchUsage(cloudwatch, MetricNames()).fetch([instance(instance_id=node, tags=eks)], api_specs(), WINDOW)

    (gpu,) = raw[node].devices
    assert set(gpu.signal(Signal.TENSOR_ACTIVE).values) == {12.5}  # percent, as published
    assert gpu.signal(Signal.TENSOR_ACTIVE).period_seconds == 300
    assert not gpu.signal(Signal.SM_ACTIVE)


def test_a_node_with_the_agents_gpu_series_is_not_read_twice(cloudwatch: Any) -> None:
    node = "i-0000000000000e0a3"
    eks = {"karpenter.sh/nodepool": "gpu", "eks:eks-cluster-name": "ml"}
    put(cloudwatch, "CWAgent", UTIL, gpu_dims(node, "0"), constant(20.0))
    put(cloudwatch, CI, "node_gpu_utilization", ci_dims(node, "nvidia0"), constant(80.0))
    calls = record(cloudwatch)

    raw = CloudWatchUsage(cloudwatch, MetricNames()).fetch([instance(instance_id=node, tags=eks)], api_specs(), WINDOW)

    assert [d.index for d in raw[node].devices] == ["0"]
    assert not any(q["MetricStat"]["Metric"]["Namespace"] == CI for q in calls.queries)
