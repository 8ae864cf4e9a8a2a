"""GetMetricData calls needed to collect 1,000 instances from moto, against the floor ceil(queries / 500)."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

INSTANCES = 1_000
MIX = ("g5.xlarge", "g5.12xlarge", "g4dn.xlarge", "p4d.24xlarge", "inf2.xlarge", "g6.2xlarge")
DATAPOINTS_PER_RESPONSE = 100_800  # CloudWatch's cap per GetMetricData response


def run() -> None:
    from demo import fast_cloudwatch
    from moto import mock_aws
    from moto.cloudwatch.models import MetricDatum, cloudwatch_backends
    from moto.core.models import DEFAULT_ACCOUNT_ID

    from rightsizer.adapters import bundled
    from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
    from rightsizer.adapters.aws.ec2 import Ec2Fleet
    from rightsizer.services.collect import lookback_window
    from rightsizer.settings import MetricNames

    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    with mock_aws():
        fast_cloudwatch.install()
        try:
            ec2: Any = boto3.client("ec2", region_name="us-east-1")  # instance types are plain strings here
            for _ in range(0, INSTANCES, len(MIX) * 25):
                for instance_type in MIX:
                    ec2.run_instances(ImageId="ami-12c6146b", InstanceType=instance_type, MinCount=25, MaxCount=25)
            fleet = Ec2Fleet(ec2, DEFAULT_ACCOUNT_ID, "us-east-1", bundled.accelerator_table())
            instances = fleet.accelerated_instances()[:INSTANCES]
            specs = {s.instance_type: s for s in fleet.accelerated_specs()}
            backend = cloudwatch_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
            stamp = (now - timedelta(hours=2)).replace(tzinfo=None)
            # One datapoint per series is enough for discovery; the call count depends on series, not points.
            for instance in instances:
                spec = specs[instance.instance_type]
                neuron = spec.accelerator_kind.value == "neuron"
                for unit in range(spec.compute_units):
                    if neuron:
                        dims = [
                            {"Name": "InstanceId", "Value": instance.instance_id},
                            {"Name": "NeuronCore", "Value": str(unit)},
                        ]
                        backend.metric_data.append(
                            MetricDatum("NeuronMonitor", "neuroncore_utilization", 10.0, dims, stamp)
                        )
                        continue
                    dims = [
                        {"Name": "InstanceId", "Value": instance.instance_id},
                        {"Name": "index", "Value": str(unit)},
                        {"Name": "name", "Value": "NVIDIA A10G"},
                    ]
                    for metric in (
                        "nvidia_smi_utilization_gpu",
                        "nvidia_smi_memory_used",
                        "nvidia_smi_memory_total",
                        "nvidia_smi_utilization_memory",
                    ):
                        backend.metric_data.append(MetricDatum("CWAgent", metric, 10.0, dims, stamp))
            cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
            usage = CloudWatchUsage(cloudwatch, MetricNames())
            started = time.perf_counter()
            usage.fetch(instances, specs, lookback_window(now, 14))
            elapsed = time.perf_counter() - started
        finally:
            fast_cloudwatch.uninstall()
    minimum = math.ceil(usage.queries / 500)
    print(f"GetMetricData: {len(instances):,} instances, {usage.queries:,} metric queries over 14 days")
    print(
        f"  calls made: {usage.get_metric_data_calls} | floor ceil(queries/500): {minimum} "
        f"| ratio {usage.get_metric_data_calls / minimum:.3f}"
    )
    print(
        "  (batches hold whole instances and are sized to fill the real API's pages of "
        f"{DATAPOINTS_PER_RESPONSE:,} datapoints, so against moto, which never pages, calls exceed this floor; the "
        "1.05 goal counts continuation pages and is measured over the paging double below)"
    )
    print(f"  ListMetrics calls (discovery, 500 metrics per page): {usage.list_metrics_calls}")
    print(f"  collected in {elapsed:.1f} s against moto")
    five_min_queries = usage.queries  # upper bound: every query at 5-minute period
    print(
        f"  note: real CloudWatch returns at most {DATAPOINTS_PER_RESPONSE:,} datapoints per response and pages "
        f"the rest with NextToken; 14 days at 5 minutes is 4,032 points per query, so up to "
        f"{math.ceil(five_min_queries * 4032 / DATAPOINTS_PER_RESPONSE):,} pages in all "
        "(hourly and daily queries need far fewer)."
    )
