"""Collection of one shard over the paging CloudWatch double (bench/cloudwatch_double.py), at several region
sizes: each shard invocation runs in a fresh interpreter, as a Lambda invocation would, and reports its peak RSS,
its time per instance and its GetMetricData calls against the physical minimum (every datapoint received,
100,800 per response; every query, 500 per request). A second measurement reads a smaller shard through botocore's own
response parser (datetimes and all), to show what the GetMetricData parser (adapters/aws/metric_data.py) saves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import synthetic_fleet
from bench.machine import own_peak_rss_mib

ROOT = Path(__file__).resolve().parent.parent
REGION_SIZES = tuple(int(n) for n in os.environ.get("BENCH_REGIONS", "300,3000,30000").split(","))
SHARD = int(os.environ.get("BENCH_SHARD", "500"))  # the default SHARD_SIZE
PARSER_SHARD = int(os.environ.get("BENCH_PARSER_SHARD", "60"))
# Mixed fleet: half single-GPU hosts, 30 % four-GPU (publishing DCGM's signals too), 20 % eight-GPU
# (bench/synthetic_fleet.py).
MIX = synthetic_fleet.MIX


def shard_invocation(region_size: int, shard: int, metric_arrays: bool) -> dict[str, Any]:
    """In this (fresh) process: collect and summarise the first shard of a region of `region_size` hosts."""
    import boto3

    from bench.analyzer_bench import _catalog
    from bench.cloudwatch_double import PagingCloudWatch
    from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
    from rightsizer.adapters.aws.session import AwsSession
    from rightsizer.domain.models.hosts import Instance
    from rightsizer.domain.summaries import summarize_all
    from rightsizer.services.collect import lookback_window
    from rightsizer.settings import MetricNames

    region = synthetic_fleet.fleet(region_size)
    double = PagingCloudWatch(region)
    session = AwsSession(
        boto3.Session(aws_access_key_id="bench", aws_secret_access_key="bench", region_name="us-east-1")
    )
    client = double.install(session.client("cloudwatch", "us-east-1", metric_arrays=metric_arrays))
    catalog = _catalog()
    now = datetime(2026, 12, 1, tzinfo=UTC)
    launch = now - timedelta(days=90)
    instances = [
        Instance(h.instance_id, "123456789012", "us-east-1", "us-east-1a", h.instance_type, "running", launch)
        for h in region[:shard]
    ]
    usage = CloudWatchUsage(client, MetricNames(), region_units=sum(h.gpus for h in region))
    started, cpu = time.perf_counter(), time.process_time()
    summaries = list(summarize_all(usage.read(instances, catalog.specs, lookback_window(now, 14))))
    return {
        "region": region_size,
        "shard": len(summaries),
        "seconds": time.perf_counter() - started,
        "cpu": time.process_time() - cpu,
        "rss_mib": own_peak_rss_mib(),  # not ru_maxrss: that is at least the bench's RSS when it started this process
        "calls": usage.get_metric_data_calls,
        "minimum": usage.minimum_get_metric_data_calls,
        "datapoints": usage.datapoints,
        "served": double.datapoints,
        "list_calls": usage.list_metrics_calls,
        "queries": usage.queries,
    }


def _fresh(region_size: int, shard: int, raw: bool) -> dict[str, Any]:
    call = f"shard_invocation({region_size}, {shard}, {raw})"
    code = f"import json; from bench.collect_bench import shard_invocation; print(json.dumps({call}))"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'src'}", "AWS_EC2_METADATA_DISABLED": "true"}
    env.pop("AWS_ENDPOINT_URL", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run() -> dict[str, Any]:
    print(f"Collection: one shard invocation ({SHARD} hosts, 1/4/8-GPU mix, 14 days) over a paging CloudWatch double")
    runs = []
    for size in REGION_SIZES:
        result = _fresh(size, min(SHARD, size), True)
        runs.append(result)
        print(
            f"  region of {size:>6,} hosts: peak RSS {result['rss_mib']:.0f} MiB | {result['seconds']:.1f} s "
            f"({result['seconds'] / result['shard'] * 1000:.0f} ms per host, CPU {result['cpu']:.1f} s) | "
            f"GetMetricData {result['calls']} calls, minimum {result['minimum']} "
            f"(ratio {result['calls'] / result['minimum']:.3f}, goal <= 1.05) | {result['datapoints'] / 1e6:.1f}M "
            f"datapoints | ListMetrics {result['list_calls']}"
        )
    rss = [r["rss_mib"] for r in runs]
    per_host = [r["seconds"] / r["shard"] for r in runs]
    print(
        f"  peak RSS {min(rss):.0f}-{max(rss):.0f} MiB (goal <= 300 MiB, flat); time per host "
        f"{min(per_host) * 1000:.0f}-{max(per_host) * 1000:.0f} ms (flat: ratio {max(per_host) / min(per_host):.2f})"
    )
    parsed = _fresh(PARSER_SHARD, PARSER_SHARD, False)
    raw = _fresh(PARSER_SHARD, PARSER_SHARD, True)
    per_point = [r["cpu"] / r["datapoints"] * 1e6 for r in (parsed, raw)]
    print(
        f"  decoding GetMetricData ({PARSER_SHARD} hosts, {raw['datapoints'] / 1e6:.1f}M datapoints): "
        f"botocore's parser {per_point[0]:.1f} us CPU per datapoint, the GetMetricData parser {per_point[1]:.1f} us "
        f"({per_point[0] / per_point[1]:.1f}x faster; both include summarising and the double's answers)"
    )
    return {"runs": runs, "parsed": parsed, "raw": raw}
