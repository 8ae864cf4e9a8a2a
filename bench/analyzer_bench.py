"""Summarise + analyse 10,000 synthetic instances x 14 days of 5-minute data, streaming, on one core.

Raw series come from a pool of pre-generated workloads (generating 600 million random numbers would
measure `random`, not the analyzer); every instance still gets its own RawUsage, summary and analysis.
"""

from __future__ import annotations

import gc
import random
import resource
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

from rightsizer.adapters import bundled
from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import AcceleratorData, AcceleratorKind, Instance
from rightsizer.domain.policy import Policy
from rightsizer.domain.summaries import CHUNK, summarize_all
from rightsizer.domain.usage import EMPTY, DeviceSeries, RawUsage, Series

INSTANCES = int(__import__("os").environ.get("BENCH_INSTANCES", "10000"))
DAYS = 14
END = datetime(2026, 12, 1, tzinfo=UTC)
NEURON = AcceleratorKind.NEURON
TYPES = ("g5.xlarge", "g5.2xlarge", "g5.12xlarge", "g4dn.xlarge", "g6.xlarge", "p4d.24xlarge", "inf2.xlarge")


def _catalog() -> Catalog:
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    from rightsizer.adapters.aws.ec2 import parse_instance_type

    table = bundled.accelerator_table()
    specs = dict(bundled.legacy_specs())
    for name, raw in INSTANCE_TYPES.items():
        if name.split(".")[0].startswith(("p", "g", "inf", "trn")):
            spec = parse_instance_type(raw, table)
            if spec is not None:
                specs[name] = spec
    return Catalog("us-east-1", specs, table, frozenset(specs))


def _pool(rng: random.Random, period: int, count: int, size: int) -> list[Series]:
    start = int((END - timedelta(days=DAYS)).timestamp())
    # Lists of floats, as boto3 hands CloudWatch results over.
    stamps = list(range(start, start + size * period, period))
    pool = []
    for n in range(count):
        # About a third of GPUs in shared clusters sit at exactly 0% (Alibaba PAI trace 2020, 34.5%:
        # see the project's reference data); the rest work at some level.
        if n % 3 == 0:
            values = [0.0] * size
        else:
            level = rng.uniform(0, 90)
            values = [min(100.0, max(0.0, rng.gauss(level, 8))) for _ in range(size)]
        pool.append(Series(period, stamps, values))
    return pool


def run() -> None:
    rng = random.Random(7)
    five_min = DAYS * 288
    hourly = DAYS * 24
    fine = _pool(rng, 300, 40, five_min)
    coarse = _pool(rng, 3600, 40, hourly)
    catalog = _catalog()
    prices = bundled.snapshot_prices("us-east-1")
    assert prices is not None
    policy = Policy()
    launch = END - timedelta(days=90)
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    findings: Counter[str] = Counter()
    fine_series = coarse_series = 0
    # CPU of the summarise and analyse calls only: building each host's synthetic input is not their work.
    summarising = analysing = baseline = 0.0
    wall = time.perf_counter()
    for first in range(0, INSTANCES, CHUNK):
        # The collector hands summarize_all its hosts as they arrive; here a chunk's input is built first
        # (not timed: building synthetic input is not the analyzer's work), then summarised and analysed.
        hosts: list[tuple[Instance, RawUsage]] = []
        for n in range(first, min(first + CHUNK, INSTANCES)):
            instance_type = TYPES[n % len(TYPES)]
            spec = catalog.specs[instance_type]
            devices = tuple(
                DeviceSeries(
                    index=str(i),
                    utilization_avg=fine[(n + i) % len(fine)],
                    utilization_max=coarse[(n + i) % len(coarse)],
                    # The collector reads no memory for NeuronCores (neuron-monitor's is per device).
                    memory_used_max=EMPTY if spec.accelerator_kind is NEURON else coarse[(n * 3 + i) % len(coarse)],
                )
                for i in range(spec.compute_units)
            )
            raw = RawUsage(
                instance_id=f"i-{n:017x}",
                window_start=END - timedelta(days=DAYS),
                window_end=END,
                accelerator_data=AcceleratorData.PER_DEVICE,
                devices=devices,
                cpu_avg=fine[n % len(fine)],
                network_in_sum=fine[(n + 1) % len(fine)],
                network_out_sum=fine[(n + 2) % len(fine)],
                host_memory_max=coarse[n % len(coarse)],
            )
            # Per unit: 5-minute utilisation, hourly utilisation and memory maxima; per host: CPU and network in
            # and out every 5 minutes, host memory hourly.
            fine_series += len(devices) + 3
            coarse_series += sum(2 if device.memory_used_max else 1 for device in devices) + 1
            instance = Instance(
                instance_id=raw.instance_id,
                account_id="123456789012",
                region="us-east-1",
                availability_zone="us-east-1a",
                instance_type=instance_type,
                state="running",
                launch_time=launch,
            )
            hosts.append((instance, raw))
        before = time.process_time()
        summaries = list(summarize_all(raw for _, raw in hosts))
        summarised = time.process_time()
        for (instance, _), summary in zip(hosts, summaries, strict=True):
            recommendation = analyze_instance(instance, summary, catalog, prices, policy, END)
            findings[recommendation.finding.value] += 1
        analysed = time.process_time()
        summarising += summarised - before
        analysing += analysed - summarised
        # The yardstick right after, on the same chunk: both sides of the ratio see the same machine.
        baseline += _numpy_pass([series for _, raw in hosts for series in _series(raw)])
    wall = time.perf_counter() - wall
    cpu = summarising + analysing
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    series_count = fine_series + coarse_series
    points = fine_series * five_min + coarse_series * hourly
    print(
        f"Analyzer: {INSTANCES:,} synthetic instances x {DAYS} days "
        f"({series_count:,} series, ~{points / 1e6:.0f}M datapoints)"
    )
    print(
        f"  summarise + analyse: {cpu:.1f} s CPU on one core (goal < 20 s; "
        f"{wall:.1f} s wall for the whole loop, building the input included); "
        f"per host {summarising / INSTANCES * 1e3:.2f} ms summarise + {analysing / INSTANCES * 1e3:.2f} ms analyse"
    )
    print(
        f"  peak memory: process max RSS {rss_after / 1024:.0f} MiB, of which "
        f"{(rss_after - rss_before) / 1024:.0f} MiB grew while analysing (goal < 1 GB)"
    )
    print(
        f"  a vectorised numpy pass over the same samples (np.sort of every series, nearest-rank p50/p95/p99, "
        f"mean, max): {baseline:.1f} s CPU -> summarise + analyse = {cpu / baseline:.1f}x that (goal <= 3x); "
        f"summarise alone {summarising:.1f} s = {summarising / baseline:.1f}x, analyse {analysing:.1f} s"
    )
    print("  findings: " + ", ".join(f"{name} {count}" for name, count in sorted(findings.items())))


def _series(raw: RawUsage) -> list[Series]:
    """Every series of a host the loop summarised."""
    series = [raw.cpu_avg, raw.network_in_sum, raw.network_out_sum, raw.host_memory_max]
    for device in raw.devices:
        series += [device.utilization_avg, device.utilization_max, device.memory_used_max]
    return [one for one in series if one]


def _numpy_pass(series: list[Series]) -> float:
    """CPU seconds of the textbook numpy reduction of `series`, one at a time."""
    import numpy as np

    started = time.process_time()
    for one in series:
        ordered = np.sort(one.array)
        count = len(ordered)
        ranks = [-(-pct * count // 100) - 1 for pct in (50, 95, 99)]
        _ = [ordered[rank] for rank in ranks], ordered.sum() / count, ordered[-1]
    return time.process_time() - started
