"""`rightsizer analyze` end to end, as a person runs it: the CLI in a fresh process, against a local AWS.

EC2 is moto's server (demo/server.py) seeded with the synthetic fleet (bench/synthetic_fleet.py: 1/4/8-GPU hosts,
team and Name tags, EKS node groups, 20 % of hosts with a gap); CloudWatch is the paging double
(bench/cloudwatch_double.py) over HTTP, so the CLI reads, pages and parses every datapoint as it would from AWS.
Measured: the child's CPU time (user + system, interpreter start included, from outside) per host, and its own peak
RSS (VmHWM, which the child writes when it exits: its `ru_maxrss` would be at least the bench's own RSS, moto's seeded
fleet included, see bench/machine.py's `own_peak_rss_mib`), at 2,000 hosts and at 10,000 (`BENCH_CLI_HOSTS`).
`BENCH_PROFILE=FILE` runs the first size under cProfile and writes its stats to FILE (`python -m pstats FILE`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

from bench import synthetic_fleet

ROOT = Path(__file__).resolve().parent.parent
SIZES = tuple(int(n) for n in os.environ.get("BENCH_CLI_HOSTS", "2000,10000").split(","))
CPU_GOAL_MS = 10.0  # per host (issue 29)
MEMORY_GOAL = 0.10  # peak RSS at 10,000 hosts within 10 % of 2,000
_AMI = "ami-760aaa0f"  # amzn-ami-hvm (Linux), one of the images moto ships in every region (demo/seed.py)
_REGION = "us-east-1"
# moto's server takes a while to describe thousands of instances: the CLI's 20 s read timeout is for a person waiting
# on AWS, not for an emulator.
_PATIENT = ("--cli-read-timeout", "600")
# The child's first argument names the file it writes its own peak RSS to as it exits (after everything else).
_PEAK = (
    "import atexit, sys; from bench.machine import own_peak_rss_mib; peak_file = sys.argv.pop(1); "
    "atexit.register(lambda: open(peak_file, 'w').write(str(own_peak_rss_mib())))"
)
_CLI = f"{_PEAK}; from rightsizer.cli.main import main; sys.exit(main())"
_PROFILED = f"{_PEAK}; import cProfile; from rightsizer.cli.main import main; cProfile.run('main()', sys.argv.pop(1))"


@dataclass(frozen=True)
class CliRun:
    hosts: int
    cpu_seconds: float
    wall_seconds: float
    peak_rss_mib: float
    datapoints: int
    get_metric_data_calls: int
    recommendations_bytes: int
    warnings: int

    @property
    def cpu_ms_per_host(self) -> float:
        return self.cpu_seconds / self.hosts * 1000


def seed(count: int) -> list[synthetic_fleet.Host]:
    """The synthetic fleet's hosts launched in moto's EC2, tagged; the hosts carry the ids EC2 gave them.

    Each host is a reservation of its own: moto pages DescribeInstances by reservation (MaxResults of them a page),
    where EC2 pages by instance. Launched a thousand to a reservation, the whole region came back in one page, and the
    CLI's peak memory grew with it as it never would against EC2 (its pages hold at most 1,000 instances). Launched
    through moto's backend, as the tags are: one RunInstances and CreateTags call per host over HTTP takes minutes."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends

    backend = ec2_backends[DEFAULT_ACCOUNT_ID][_REGION]
    launched = []
    for host in synthetic_fleet.fleet(count):
        reservation = backend.run_instances(
            _AMI,
            1,
            None,
            [],
            instance_type=host.instance_type,
            is_instance_type_default=False,
            placement=host.zone,
        )
        (instance,) = reservation.instances
        backend.create_tags([instance.id], host.tags)
        launched.append(replace(host, instance_id=str(instance.id)))
    return launched


def analyze_once(count: int, profile: str | None = None) -> CliRun:
    """One `rightsizer analyze --output json` of a fresh region of `count` hosts, in a fresh interpreter."""
    from demo.server import local_aws

    from bench.cloudwatch_double import PagingCloudWatch, serve

    with local_aws() as endpoint, tempfile.TemporaryDirectory() as scratch:
        # moto's backends live in this process across its servers: without a reset, the second size's region held the
        # first's hosts too (2,000 more, without metrics, in the 10,000-host run).
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")).close()
        hosts = seed(count)
        double = PagingCloudWatch(hosts)
        with serve(double) as cloudwatch:
            env = {
                **os.environ,
                "AWS_ENDPOINT_URL_CLOUDWATCH": cloudwatch,
                "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}",
                "AWS_REGION": _REGION,
            }
            out, err, peak = Path(scratch, "out.json"), Path(scratch, "err.txt"), Path(scratch, "peak")
            code = [_PROFILED, str(peak), profile] if profile else [_CLI, str(peak)]
            options = ["--region", _REGION, "--output", "json", "--no-progress", *_PATIENT]
            command = [sys.executable, "-c", *code, "analyze", *options]
            started = time.perf_counter()
            with out.open("wb") as stdout, err.open("wb") as stderr:
                child = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env, cwd=scratch)
                _, status, usage = os.wait4(child.pid, 0)
                child.returncode = os.waitstatus_to_exitcode(status)
            wall = time.perf_counter() - started
            if child.returncode != 0:
                raise RuntimeError(f"rightsizer analyze failed ({child.returncode}): {err.read_text()[-2000:]}")
            warnings = sum(1 for line in err.read_text().splitlines() if "warning" in line)
            return CliRun(
                hosts=count,
                cpu_seconds=usage.ru_utime + usage.ru_stime,
                wall_seconds=wall,
                peak_rss_mib=float(peak.read_text()),
                datapoints=double.datapoints,
                get_metric_data_calls=double.get_metric_data_calls,
                recommendations_bytes=out.stat().st_size,
                warnings=warnings,
            )


def run() -> list[CliRun]:
    print(
        "CLI: `rightsizer analyze --output json` end to end in a fresh process (moto's EC2 with the synthetic fleet, "
        "the paging CloudWatch double over HTTP)"
    )
    profile = os.environ.get("BENCH_PROFILE")
    runs = []
    for n, count in enumerate(SIZES):
        result = analyze_once(count, profile if n == 0 else None)
        runs.append(result)
        verdict = "met" if result.cpu_ms_per_host <= CPU_GOAL_MS else "MISSED"
        print(
            f"  {count:>6,} hosts: {result.cpu_seconds:.1f} s CPU = {result.cpu_ms_per_host:.1f} ms per host "
            f"(goal <= {CPU_GOAL_MS:.0f} ms: {verdict}) | peak RSS {result.peak_rss_mib:.0f} MiB | "
            f"{result.datapoints / 1e6:.1f}M datapoints in {result.get_metric_data_calls} GetMetricData pages | "
            f"{result.wall_seconds:.0f} s wall | JSON {result.recommendations_bytes / 1e6:.1f} MB, "
            f"{result.warnings} warning lines"
        )
    if len(runs) >= 2:
        small, large = runs[0], runs[-1]
        growth = large.peak_rss_mib / small.peak_rss_mib - 1
        verdict = "met" if growth <= MEMORY_GOAL else "MISSED"
        print(
            f"  peak RSS at {large.hosts:,} hosts vs {small.hosts:,}: {large.peak_rss_mib:.0f} vs "
            f"{small.peak_rss_mib:.0f} MiB = {growth:+.0%} (goal within {MEMORY_GOAL:.0%}: {verdict})"
        )
    if profile:
        print(f"  cProfile of the {SIZES[0]:,}-host run: {profile}")
    return runs
