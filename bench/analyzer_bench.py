"""Summarise + analyse 10,000 hosts x 14 days against a bare numpy pass over the same samples, on one core (issue 29).

The fleet is bench/synthetic_fleet.py's: every host has series of its own (dense, nothing pooled), team tags and
EKS node groups, so the analysis runs as a collection shard runs it (services.analyze.analyze_hosts: each host, then
consolidation across the shard's hosts, then one recommendation per node group). It runs twice in the same process,
shard by shard in turn: the complete fleet, and the same fleet with 20 % of hosts missing a few hours of one GPU.
Only the summarise and analyse calls are timed (building the synthetic input is not the analyzer's work); the numpy
pass (np.sort of every series, nearest-rank p50/p95/p99, mean, max, one series at a time) is timed right after each
chunk, on the same samples, so both sides of the ratio see the same machine at the same moment.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np

from bench import machine, synthetic_fleet
from bench.synthetic_fleet import END, START, Host
from rightsizer.adapters import bundled
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import Commitments, coverage
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import AcceleratorData, UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.summaries import CHUNK, summarize_all
from rightsizer.domain.usage.series import EMPTY, DeviceSeries, RawUsage, Series
from rightsizer.services.analyze import analyze_hosts

INSTANCES = int(os.environ.get("BENCH_INSTANCES", "10000"))
SHARD = 500  # a collection shard's hosts (settings' SHARD_SIZE): consolidation and node groups look within one
GOALS = {"complete": 2.0, "gaps": 2.3}  # summarise + analyse / numpy pass (issue 29)
_PERIODS = {name: period for name, period in (*synthetic_fleet.GPU_FIELDS, *synthetic_fleet.HOST_FIELDS)}


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


@dataclass
class Tally:
    """One fleet's measured CPU seconds and what it was measured on."""

    summarising: float = 0.0
    analysing: float = 0.0
    floor: float = 0.0
    series: int = 0
    datapoints: int = 0
    findings: Counter[str] = field(default_factory=Counter)

    @property
    def work(self) -> float:
        return self.summarising + self.analysing

    @property
    def ratio(self) -> float:
        return self.work / self.floor


def raw_usage(host: Host) -> RawUsage:
    """A host's series as the collector hands them over: numpy arrays on CloudWatch's clock, gaps left out."""
    window = int((END - START).total_seconds())
    start = int(START.timestamp())

    def one(name: str, gpu: int | None) -> Series:
        period = _PERIODS[name]
        index = synthetic_fleet.present(host, gpu, period, window // period)
        values = synthetic_fleet.series(host, name, gpu, period, window // period, index)
        return Series(period, start + index * period, values)

    devices = tuple(
        DeviceSeries(
            str(gpu),
            utilization_avg=one("utilization_avg", gpu),
            utilization_max=one("utilization_max", gpu),
            memory_used_max=one("memory_used_max", gpu),
            memory_total_max=one("memory_total_max", gpu),
            encoder_sessions_max=one("encoder_sessions_max", gpu),
            encoder_fps_avg=one("encoder_fps_avg", gpu),
        )
        for gpu in range(host.gpus)
    )
    return RawUsage(
        instance_id=host.instance_id,
        window_start=START,
        window_end=END,
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=devices,
        cpu_avg=one("cpu_avg", None),
        network_in_sum=one("network_in_sum", None),
        network_out_sum=one("network_out_sum", None),
        host_memory_max=one("host_memory_max", None),
    )


def instance(host: Host) -> Instance:
    return Instance(
        instance_id=host.instance_id,
        account_id="123456789012",
        region="us-east-1",
        availability_zone=host.zone,
        instance_type=host.instance_type,
        state="running",
        launch_time=END - timedelta(days=90),
        tags=host.tags,
    )


def _every_series(raw: RawUsage) -> list[Series]:
    """Every series of a host that the summariser reads."""
    series = [raw.cpu_avg, raw.network_in_sum, raw.network_out_sum, raw.host_memory_max]
    for device in raw.devices:
        series += [
            device.utilization_avg,
            device.utilization_max,
            device.memory_used_max,
            device.memory_total_max,
            device.encoder_sessions_max,
            device.encoder_fps_avg,
        ]
    return [one for one in series if one is not EMPTY and one]


def numpy_pass(series: Sequence[Series]) -> float:
    """CPU seconds of the textbook numpy reduction of `series`, one at a time: the floor the issue measures against."""
    started = time.process_time()
    for one in series:
        ordered = np.sort(one.array)
        count = len(ordered)
        ranks = [-(-pct * count // 100) - 1 for pct in (50, 95, 99)]
        _ = [ordered[rank] for rank in ranks], ordered.sum() / count, ordered[-1]
    return time.process_time() - started


def _shard(hosts: Sequence[Host], tally: Tally, catalog: Catalog, prices: PriceBook, policy: Policy) -> None:
    """Summarise a shard chunk by chunk as its series arrive (each chunk's yardstick right after it); analyse it."""
    usage: dict[str, UsageSummary] = {}
    for first in range(0, len(hosts), CHUNK):
        raws = [raw_usage(host) for host in hosts[first : first + CHUNK]]  # not timed: synthetic input
        before = time.process_time()
        for summary in summarize_all(raws):
            usage[summary.instance_id] = summary
        tally.summarising += time.process_time() - before
        series = [one for raw in raws for one in _every_series(raw)]
        tally.floor += numpy_pass(series)
        tally.series += len(series)
        tally.datapoints += sum(len(one.array) for one in series)
    instances = [instance(host) for host in hosts]
    covers = coverage(instances, Commitments(), prices.on_demand)
    before = time.process_time()
    recommendations = analyze_hosts(instances, usage, catalog, prices, policy, END, covers)
    tally.analysing += time.process_time() - before
    tally.findings.update(rec.finding.value for rec in recommendations)


@dataclass
class Measured:
    tallies: dict[str, Tally]
    grew_mib: float  # how far the process's own peak RSS rose while measuring
    peak_mib: float  # the process's own peak RSS (bench/machine.py's `own_peak_rss_mib`)
    wall: float


def measure() -> Measured:
    """Both fleets, shard by shard in turn (the same machine for both), in this process."""
    catalog = _catalog()
    prices = bundled.snapshot_prices("us-east-1")
    assert prices is not None
    policy = Policy()
    fleets = {
        "complete": synthetic_fleet.fleet(INSTANCES, gap_share=0.0),
        "gaps": synthetic_fleet.fleet(INSTANCES),
    }
    tallies = {name: Tally() for name in fleets}
    gc.collect()
    peak_before = machine.own_peak_rss_mib()
    wall = time.perf_counter()
    for first in range(0, INSTANCES, SHARD):
        for name, hosts in fleets.items():
            _shard(hosts[first : first + SHARD], tallies[name], catalog, prices, policy)
    wall = time.perf_counter() - wall
    peak = machine.own_peak_rss_mib()
    return Measured(tallies, peak - peak_before, peak, wall)


def plain(measured: Measured) -> dict[str, Any]:
    """`measured` as JSON's types (dataclasses.asdict would turn the Counter's items into its keys)."""
    tallies = {name: {**vars(tally), "findings": dict(tally.findings)} for name, tally in measured.tallies.items()}
    return {**vars(measured), "tallies": tallies}


def _measured_with(disabled: str) -> Measured:
    """`measure()` in a fresh interpreter whose numpy skips the SIMD levels `disabled` (NPY_DISABLE_CPU_FEATURES)."""
    code = "import json; from bench.analyzer_bench import measure, plain; print(json.dumps(plain(measure())))"
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": disabled, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    tallies = {name: Tally(**{**t, "findings": Counter(t["findings"])}) for name, t in found["tallies"].items()}
    return Measured(tallies, found["grew_mib"], found["peak_mib"], found["wall"])


def _ratios(measured: Measured, floor: str) -> None:
    for name, tally in measured.tallies.items():
        goal = GOALS[name]
        verdict = "met" if tally.ratio <= goal else "MISSED"
        label = "complete fleet" if name == "complete" else f"{synthetic_fleet.GAP_SHARE:.0%} of hosts with gaps"
        print(
            f"  {label:>24}: summarise {tally.summarising:.1f} s + analyse {tally.analysing:.1f} s = "
            f"{tally.work:.1f} s CPU ({tally.work / INSTANCES * 1e3:.2f} ms per host); numpy pass ({floor}) "
            f"{tally.floor:.1f} s -> {tally.ratio:.2f}x (goal <= {goal}x: {verdict})"
        )


def run() -> dict[str, Tally]:
    speeds = machine.sort_speeds()
    measured = measure()
    complete = measured.tallies["complete"]
    print(
        f"Analyzer: {INSTANCES:,} hosts x {synthetic_fleet.DAYS} days, summarise + analyse on one core "
        f"({complete.series:,} series, {complete.datapoints / 1e6:.0f}M datapoints, every series its host's own; "
        f"shards of {SHARD} with consolidation and node groups)"
    )
    for line in machine.describe(speeds):
        print(f"  {line}")
    _ratios(measured, f"np.sort {machine.sort_path()}")
    print(
        f"  peak memory: process peak RSS {measured.peak_mib:.0f} MiB, of which {measured.grew_mib:.0f} MiB grew while "
        f"analysing; {measured.wall:.0f} s wall for both fleets, building the input included"
    )
    print(
        "  findings (gaps fleet): "
        + ", ".join(f"{k} {n}" for k, n in sorted(measured.tallies["gaps"].findings.items()))
    )
    faster = machine.faster_sort(speeds)
    if faster is not None:
        label, disabled = faster
        # The floor is only as fast as the sort numpy picks: where a lower SIMD level sorts faster on this CPU, the
        # same measurement with numpy told to skip the slower one (both sides of the ratio run on it).
        print(f"  again with NPY_DISABLE_CPU_FEATURES={disabled!r}: np.sort is faster {label} on this CPU")
        _ratios(_measured_with(disabled), "np.sort " + label.split(" (")[0])
    return measured.tallies
