"""Seed a moto-backed AWS with the demo fleet: EC2 instances through the API, metrics into moto's store.

Instances, launch templates and the Auto Scaling group are created through boto3, like a real
account. The ~350,000 metric datapoints (14 days x 5 minutes x ~120 series) would take moto about a
minute to parse through PutMetricData, so they are written straight into moto's CloudWatch store;
the product then reads them back over HTTP with ListMetrics and GetMetricData like any account.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from demo.fleet import Host, fleet, timeline
from rightsizer.settings import MetricNames

DEMO_AMI = "ami-760aaa0f"  # amzn-ami-hvm (Linux), one of the images moto ships in every region
HOURLY = timedelta(hours=1)
DCGM_METRICS = {signal: name for name, signal in MetricNames().signal_metrics.items()}  # as agent/dcgm publishes


@dataclass(frozen=True)
class Seeded:
    host: Host
    instance_id: str


def _launch(host: Host, account_ami: str, session: boto3.Session) -> str:
    ec2 = session.client("ec2", region_name=host.region)
    if host.image is not None:  # the AMI it was built from (a DCV workstation's), registered as EC2 would list it
        name, description = host.image
        account_ami = str(ec2.register_image(Name=name, Description=description)["ImageId"])
    tags = [{"Key": "Name", "Value": host.name}, *({"Key": k, "Value": v} for k, v in host.tags.items())]
    if host.asg:
        ec2.create_launch_template(
            LaunchTemplateName=f"{host.asg}-template",
            LaunchTemplateData={"ImageId": account_ami, "InstanceType": host.instance_type},
        )
        autoscaling = session.client("autoscaling", region_name=host.region)
        autoscaling.create_auto_scaling_group(
            AutoScalingGroupName=host.asg,
            LaunchTemplate={"LaunchTemplateName": f"{host.asg}-template"},
            MinSize=1,
            MaxSize=1,
            DesiredCapacity=1,
            AvailabilityZones=[f"{host.region}a"],
            Tags=[{"Key": "Name", "Value": host.name, "PropagateAtLaunch": True}],
        )
        group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[host.asg])
        return str(group["AutoScalingGroups"][0]["Instances"][0]["InstanceId"])
    extra: dict[str, Any] = {"InstanceMarketOptions": {"MarketType": "spot"}} if host.spot else {}
    response = ec2.run_instances(
        ImageId=account_ami,
        InstanceType=host.instance_type,
        MinCount=1,
        MaxCount=1,
        Placement={"AvailabilityZone": f"{host.region}a"},
        TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
        **extra,
    )
    instance_id = str(response["Instances"][0]["InstanceId"])
    _with_ena(instance_id, host.region, session)
    if host.capacity_reservation:
        _in_capacity_reservation(instance_id, host, session)
    if host.stopped:
        ec2.stop_instances(InstanceIds=[instance_id])
    return instance_id


def _with_ena(instance_id: str, region: str, session: boto3.Session) -> None:
    """Current AMIs support ENA and EC2 reports EnaSupport=true; moto leaves the attribute unset."""
    from moto.ec2.models import ec2_backends

    account = session.client("sts", region_name=region).get_caller_identity()["Account"]
    ec2_backends[account][region].get_instance(instance_id).ena_support = True


def _in_capacity_reservation(instance_id: str, host: Host, session: boto3.Session) -> None:
    """A host launched into an ODCR: EC2 names the reservation on the instance (moto keeps no reservations:
    demo/moto_commitments.py answers DescribeCapacityReservations)."""
    from moto.ec2.models import ec2_backends

    from demo import moto_commitments

    assert host.capacity_reservation is not None
    account = session.client("sts", region_name=host.region).get_caller_identity()["Account"]
    ec2_backends[account][host.region].get_instance(instance_id).capacity_reservation_id = host.capacity_reservation
    zone = f"{host.region}a"
    moto_commitments.add_capacity_reservation(
        account, host.region, host.capacity_reservation, host.instance_type, zone, total=1, available=0
    )


def _datums(seeded: Seeded, end: datetime, days: int) -> Iterable[tuple[str, str, dict[str, str], datetime, float]]:
    """(namespace, metric, dimensions, timestamp, value) for one host, as its agents would publish."""
    host = seeded.host
    rng = random.Random(host.key)  # deterministic per host
    instance = {"InstanceId": seeded.instance_id}
    ec2_dims = dict(instance)
    for t in timeline(end, days):
        yield "AWS/EC2", "CPUUtilization", ec2_dims, t, host.cpu(t, rng)
        traffic = host.network_bytes_per_5min(t, rng)
        yield "AWS/EC2", "NetworkIn", ec2_dims, t, traffic
        yield "AWS/EC2", "NetworkOut", ec2_dims, t, traffic * host.network_out_ratio
        for shape, read, written in (
            (host.ebs_bytes_per_5min, "EBSReadBytes", "EBSWriteBytes"),
            (host.ebs_ops_per_5min, "EBSReadOps", "EBSWriteOps"),
        ):
            if shape is not None:  # AWS/EC2's EBS metrics of a Nitro host, four fifths of them reads
                amount = shape(t, rng)
                yield "AWS/EC2", read, ec2_dims, t, amount * 0.8
                yield "AWS/EC2", written, ec2_dims, t, amount * 0.2
        hourly = t.minute == 0
        if host.host_memory_pct is not None and hourly and host.container_insights_cluster is None:
            yield "CWAgent", "mem_used_percent", instance, t, host.host_memory_pct(t, rng)
        if host.container_insights_cluster is not None:
            yield from _container_insights(host, seeded.instance_id, t, rng)
            continue
        for index, gpu in enumerate(host.gpus):
            dims = {**instance, "index": str(index)}
            if "name" in host.gpu_dimensions:
                dims["name"] = host.gpu_name
            if "arch" in host.gpu_dimensions:
                dims["arch"] = "Ampere"
            if "InstanceType" in host.gpu_dimensions:
                dims["InstanceType"] = host.instance_type
            yield "CWAgent", "nvidia_smi_utilization_gpu", dims, t, gpu.utilization(t, rng)
            if gpu.memory_activity is not None:  # published as the agent does; the bot does not read it
                yield "CWAgent", "nvidia_smi_utilization_memory", dims, t, gpu.memory_activity(t, rng)
            if hourly:
                yield "CWAgent", "nvidia_smi_memory_used", dims, t, gpu.memory_used_mib(t, rng)
                yield "CWAgent", "nvidia_smi_memory_total", dims, t, host.gpu_memory_total_mib
            if hourly and host.encoder_stats:  # hourly is all the bot reads of them (Maximum, Average per hour)
                sessions = gpu.encoder_sessions(t, rng) if gpu.encoder_sessions else 0.0
                fps = gpu.encoder_fps(t, rng) if gpu.encoder_fps and sessions else 0.0
                yield "CWAgent", "nvidia_smi_encoder_stats_session_count", dims, t, sessions
                yield "CWAgent", "nvidia_smi_encoder_stats_average_fps", dims, t, fps
            # agent/dcgm's StatsD gauges: the agent's append_dimensions and the GPU's index tag.
            statsd = {**instance, "InstanceType": host.instance_type, "index": str(index)}
            for signal, shape in gpu.dcgm:
                yield "CWAgent", DCGM_METRICS[signal], statsd, t, shape(t, rng)
        for core, shape in host.neuron_cores.items():
            dims = {**instance, "NeuronCore": str(core)}
            yield "NeuronMonitor", "neuroncore_utilization", dims, t, shape(t, rng)


def _container_insights(
    host: Host, instance_id: str, t: datetime, rng: random.Random
) -> Iterable[tuple[str, str, dict[str, str], datetime, float]]:
    """A node's GPUs as Container Insights with enhanced observability publishes them: per GpuDevice, memory in
    bytes, and the node's memory utilisation (where the agent would publish mem_used_percent)."""
    node = {
        "ClusterName": host.container_insights_cluster or "",
        "InstanceId": instance_id,
        "InstanceType": host.instance_type,
        "NodeName": f"ip-10-0-{sum(map(ord, instance_id)) % 250}-5.ec2.internal",
    }
    if host.host_memory_pct is not None and t.minute == 0:
        yield "ContainerInsights", "node_memory_utilization", node, t, host.host_memory_pct(t, rng)
    for index, gpu in enumerate(host.gpus):
        dims = {**node, "GpuDevice": f"nvidia{index}"}
        yield "ContainerInsights", "node_gpu_utilization", dims, t, gpu.utilization(t, rng)
        if t.minute == 0:
            mib = 1024.0 * 1024.0
            yield "ContainerInsights", "node_gpu_memory_used", dims, t, gpu.memory_used_mib(t, rng) * mib
            yield "ContainerInsights", "node_gpu_memory_total", dims, t, host.gpu_memory_total_mib * mib


def _store_metrics(
    account_id: str, region: str, rows: Iterable[tuple[str, str, dict[str, str], datetime, float]]
) -> int:
    from moto.cloudwatch.models import MetricDatum, cloudwatch_backends

    backend = cloudwatch_backends[account_id][region]
    count = 0
    for namespace, name, dims, timestamp, value in rows:
        if math.isnan(value):  # not published (a GPU that fell off the bus)
            continue
        dimensions = [{"Name": k, "Value": v} for k, v in dims.items()]
        # moto keeps timestamps as naive UTC, as its PutMetricData parser produces them.
        naive = timestamp.astimezone(UTC).replace(tzinfo=None)
        backend.metric_data.append(MetricDatum(namespace, name, float(value), dimensions, naive, None))
        count += 1
    return count


def seed(
    end: datetime,
    days: int = 14,
    hosts: list[Host] | None = None,
    session: boto3.Session | None = None,
    account_id: str | None = None,
) -> list[Seeded]:
    """Create the fleet and its metric history ending at `end` in one account (default: moto's own).

    Pass the boto3 session of an assumed role and its account id to seed a second account.
    """
    from moto.core.models import DEFAULT_ACCOUNT_ID

    session = session or boto3.Session()
    seeded: list[Seeded] = []
    for host in hosts or fleet():
        seeded.append(Seeded(host, _launch(host, DEMO_AMI, session)))
    for item in seeded:
        if not item.host.stopped:
            _store_metrics(account_id or DEFAULT_ACCOUNT_ID, item.host.region, _datums(item, end, days))
    return seeded


def after_resize(item: Seeded, since: datetime, end: datetime) -> Seeded:
    """The host once the instance workflow resized it: the CloudWatch agent starts with the host again and, as
    InstanceType is among the dimensions it appends, publishes under the new type from `since` to `end` (the same work,
    on as many GPUs as the new type has). Without this a resized host of the demo's world would publish nothing under
    its new type, as no agent runs there. Returns the host as it now is."""
    region = item.host.region
    ec2 = boto3.client("ec2", region_name=region)
    (reservation,) = ec2.describe_instances(InstanceIds=[item.instance_id])["Reservations"]
    new_type = str(reservation["Instances"][0]["InstanceType"])
    (gpu,) = ec2.describe_instance_types(InstanceTypes=[new_type])["InstanceTypes"][0]["GpuInfo"]["Gpus"]
    now_is = Seeded(
        replace(
            item.host,
            instance_type=new_type,
            gpus=item.host.gpus[: gpu["Count"]],
            gpu_memory_total_mib=float(gpu["MemoryInfo"]["SizeInMiB"]),
            gpu_name=f"{gpu['Manufacturer']} {gpu['Name']}",
        ),
        item.instance_id,
    )
    if "InstanceType" in item.host.gpu_dimensions:  # otherwise its series go on under the same dimensions
        # A world seeded in an hour's last minutes ends its history at that hour: a click in its last five minutes,
        # or after it, would leave the new type without a datapoint (`doctor` would call the host silent). They run
        # to the hour after the click's next one, on the same 5-minute grid.
        end = max(end, since.replace(minute=0, second=0, microsecond=0) + timedelta(hours=2))
        days = (end - since).days + 1
        account = boto3.client("sts", region_name=region).get_caller_identity()["Account"]
        _store_metrics(
            account,
            region,
            (row for row in _datums(now_is, end, days) if row[3] >= since and "InstanceType" in row[2]),
        )
    return now_is
