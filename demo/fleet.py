"""The demo's seeded GPU fleet: hosts, their workloads, and the finding each one deserves.

Workloads are deterministic (seeded random) so the demo prints the same report every time.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

STEP = timedelta(minutes=5)
MIB_PER_GIB = 1024

# (hour of week 0 = Monday 00:00 UTC, random source) -> value
Shape = Callable[[datetime, random.Random], float]


@dataclass(frozen=True)
class Gpu:
    """One GPU's workload: utilisation (%), memory used (MiB), memory-controller activity (%)."""

    utilization: Shape
    memory_used_mib: Shape
    memory_activity: Shape | None = None


@dataclass(frozen=True)
class Host:
    key: str
    region: str
    instance_type: str
    name: str
    expected: str  # the finding the workload deserves
    gpus: tuple[Gpu, ...] = ()  # empty: no accelerator metrics published
    neuron_cores: dict[int, Shape] = field(default_factory=dict)  # only cores in use report
    cpu: Shape = lambda t, r: 5.0
    network_bytes_per_5min: Shape = lambda t, r: 2e8
    host_memory_pct: Shape | None = lambda t, r: 30.0
    gpu_memory_total_mib: float = 22888
    tags: dict[str, str] = field(default_factory=dict)
    spot: bool = False
    asg: str | None = None
    stopped: bool = False
    gpu_dimensions: tuple[str, ...] = (
        "name",
        "InstanceType",
    )  # what the agent appends besides InstanceId/index
    gpu_name: str = "NVIDIA A10G"


def noisy(base: float, spread: float, lo: float = 0.0, hi: float = 100.0) -> Shape:
    return lambda t, r: min(hi, max(lo, r.gauss(base, spread)))


def diurnal(low: float, high: float, spread: float = 3.0) -> Shape:
    """Daily cycle peaking at 15:00 UTC, as an inference service follows its users."""

    def shape(t: datetime, r: random.Random) -> float:
        phase = math.cos((t.hour + t.minute / 60 - 15) / 24 * 2 * math.pi)
        return min(100.0, max(0.0, low + (high - low) * (phase + 1) / 2 + r.gauss(0, spread)))

    return shape


def business_hours(busy: Shape, idle: Shape, start: int = 8, end: int = 19) -> Shape:
    return lambda t, r: busy(t, r) if t.weekday() < 5 and start <= t.hour < end else idle(t, r)


def training(base: float = 90.0) -> Shape:
    """Flat-out training with a checkpoint dip every two hours."""

    def shape(t: datetime, r: random.Random) -> float:
        if t.minute < 5 and t.hour % 2 == 0:
            return r.uniform(20, 40)
        return min(100.0, max(60.0, r.gauss(base, 4)))

    return shape


def constant(value: float) -> Shape:
    return lambda t, r: value


IDLE_GPU = Gpu(utilization=noisy(0.2, 0.3, hi=2.0), memory_used_mib=constant(0.0), memory_activity=constant(0.0))


def fleet() -> list[Host]:
    gib = MIB_PER_GIB
    return [
        Host(
            "idle-p3",
            "us-east-1",
            "p3.8xlarge",
            "legacy-train-01",
            "idle",
            gpus=(IDLE_GPU,) * 4,
            cpu=noisy(1.5, 0.5, lo=0.2),
            gpu_memory_total_mib=16384,
            gpu_name="Tesla V100-SXM2-16GB",
            gpu_dimensions=("name",),
        ),
        Host(
            "train-p4d",
            "us-east-1",
            "p4d.24xlarge",
            "llm-pretrain",
            "optimized",
            gpus=(Gpu(training(), noisy(30 * gib, 300, lo=0, hi=40960), noisy(55, 5)),) * 8,
            cpu=noisy(38, 4),
            network_bytes_per_5min=noisy(6e10, 5e9, lo=0, hi=1e12),
            host_memory_pct=noisy(45, 2),
            gpu_memory_total_mib=40960,
            gpu_name="NVIDIA A100-SXM4-40GB",
            gpu_dimensions=("name", "arch", "InstanceType"),
        ),
        Host(
            "one-of-four",
            "us-east-1",
            "g5.12xlarge",
            "embeddings-api",
            "overprovisioned",
            tags={"rightsizer:managed": "true"},  # the resize workflow may touch it (IAM tag condition)
            gpus=(
                Gpu(diurnal(25, 60), noisy(7.6 * gib, 150, lo=0, hi=22888), noisy(18, 4)),
                IDLE_GPU,
                IDLE_GPU,
                IDLE_GPU,
            ),
            cpu=diurnal(4, 9, 1),
            host_memory_pct=noisy(11, 1),
        ),
        Host(
            "t4-inference",
            "us-east-1",
            "g4dn.xlarge",
            "asr-inference",
            "optimized",
            gpus=(Gpu(diurnal(30, 58), noisy(9 * gib, 200, lo=0, hi=15360), noisy(35, 5)),),
            cpu=diurnal(20, 38, 2),
            host_memory_pct=noisy(42, 2),
            gpu_memory_total_mib=15360,
            gpu_name="Tesla T4",
        ),
        Host(
            "t4-memory-full",
            "us-east-1",
            "g4dn.xlarge",
            "llm-chat-t4",
            "underprovisioned",
            gpus=(Gpu(diurnal(40, 70), noisy(14.4 * gib, 80, lo=0, hi=15360), noisy(50, 5)),),
            cpu=diurnal(15, 30, 2),
            host_memory_pct=noisy(55, 2),
            gpu_memory_total_mib=15360,
            gpu_name="Tesla T4",
        ),
        Host(
            "loader-bound",
            "us-east-1",
            "g5.2xlarge",
            "vision-train-dl",
            "not_gpu_bound",
            gpus=(Gpu(noisy(26, 5), noisy(12 * gib, 200, lo=0, hi=22888), noisy(20, 4)),),
            cpu=noisy(95, 2.5),
            host_memory_pct=noisy(62, 3),
        ),
        Host(
            "office-hours",
            "us-east-1",
            "g5.xlarge",
            "notebook-team-a",
            "schedulable",
            gpus=(
                Gpu(
                    business_hours(noisy(62, 8), noisy(0.3, 0.3, hi=1.5)),
                    noisy(10 * gib, 100, lo=0, hi=22888),
                    business_hours(noisy(30, 5), constant(0.0)),
                ),
            ),
            cpu=business_hours(noisy(35, 5), noisy(2, 0.5, lo=0.1)),
            host_memory_pct=noisy(48, 2),
        ),
        Host(
            "no-agent",
            "us-east-1",
            "g5.4xlarge",
            "render-node",
            "insufficient_data",
            cpu=noisy(3, 1, lo=0.1),
            host_memory_pct=None,
        ),
        Host(
            "opted-out",
            "us-east-1",
            "g5.8xlarge",
            "research-sandbox",
            "excluded",
            gpus=(Gpu(noisy(3, 1), noisy(2 * gib, 50, lo=0), noisy(1, 0.5, lo=0)),),
            tags={"rightsizer:ignore": "benchmarks in January"},
        ),
        Host(
            "spot-batch",
            "us-east-1",
            "g5.2xlarge",
            "batch-spot",
            "excluded",
            gpus=(Gpu(noisy(40, 15), noisy(6 * gib, 300, lo=0, hi=22888), noisy(20, 5)),),
            spot=True,
        ),
        Host(
            "legacy-light",
            "us-east-1",
            "p3.2xlarge",
            "legacy-inference",
            "overprovisioned",
            gpus=(Gpu(diurnal(8, 20), noisy(5 * gib, 100, lo=0, hi=16384), noisy(8, 2)),),
            cpu=diurnal(5, 12, 1),
            host_memory_pct=noisy(20, 1),
            gpu_memory_total_mib=16384,
            gpu_name="Tesla V100-SXM2-16GB",
        ),
        Host(
            "inferentia-low",
            "eu-west-1",
            "inf1.6xlarge",
            "recsys-inferentia",
            "overprovisioned",
            neuron_cores={core: diurnal(8, 22, 2) for core in range(4)},
            cpu=diurnal(6, 12, 1),
            host_memory_pct=noisy(18, 1),
        ),
        Host(
            "asg-member",
            "eu-west-1",
            "g5.12xlarge",
            "serving-asg-node",
            "excluded",
            gpus=(
                Gpu(diurnal(25, 55), noisy(8 * gib, 150, lo=0, hi=22888), noisy(15, 4)),
                IDLE_GPU,
                IDLE_GPU,
                IDLE_GPU,
            ),
            cpu=diurnal(4, 9, 1),
            host_memory_pct=noisy(10, 1),
            asg="serving-asg",
        ),
        Host(
            "stopped",
            "eu-west-1",
            "g4dn.2xlarge",
            "old-experiment",
            "excluded",
            stopped=True,
            host_memory_pct=None,
        ),
    ]


def timeline(end: datetime, days: int) -> Iterator[datetime]:
    """5-minute timestamps over `days` days ending at `end` (exclusive), oldest first."""
    start = end - timedelta(days=days)
    t = start
    while t < end:
        yield t
        t += STEP
