"""The demo's seeded GPU fleet: hosts, their workloads, and the finding each one deserves.

Workloads are deterministic (seeded random) so the demo prints the same report every time.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from rightsizer.domain.signals import Signal

STEP = timedelta(minutes=5)
MIB_PER_GIB = 1024

# (hour of week 0 = Monday 00:00 UTC, random source) -> value
Shape = Callable[[datetime, random.Random], float]


@dataclass(frozen=True)
class Gpu:
    """One GPU's workload: utilisation (%), memory used (MiB), memory-controller activity (%, published like
    the agent's utilization_memory, which the bot does not read), and its video encoder (NVENC): open sessions
    and their average frame rate (None: no sessions)."""

    utilization: Shape
    memory_used_mib: Shape
    memory_activity: Shape | None = None
    encoder_sessions: Shape | None = None
    encoder_fps: Shape | None = None
    # DCGM's signals (percent), published by agent/dcgm/publish-dcgm-metrics.py where the host runs it.
    dcgm: tuple[tuple[Signal, Shape], ...] = ()


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
    # NetworkIn per 5 minutes (out is 0.6 of it): 2e7 is ~0.9 Mbit/s in + out, the agents and time sync of a quiet host
    network_bytes_per_5min: Shape = lambda t, r: 2e7
    host_memory_pct: Shape | None = lambda t, r: 30.0
    gpu_memory_total_mib: float = 22888
    tags: dict[str, str] = field(default_factory=dict)
    spot: bool = False
    asg: str | None = None
    stopped: bool = False
    capacity_reservation: str | None = None  # the On-Demand Capacity Reservation the host runs in
    gpu_dimensions: tuple[str, ...] = (
        "name",
        "InstanceType",
    )  # what the agent appends besides InstanceId/index
    gpu_name: str = "NVIDIA A10G"
    # The shipped agent config publishes the video encoder's stats for every GPU (0 sessions unless a Gpu encodes).
    encoder_stats: bool = True
    # A Kubernetes node without the agent: its GPUs are published by Container Insights with enhanced observability
    # (namespace ContainerInsights, node_gpu_* per GpuDevice) for this EKS cluster.
    container_insights_cluster: str | None = None
    network_out_ratio: float = 0.6  # NetworkOut per 5 minutes as a share of NetworkIn
    # AWS/EC2's EBS metrics: bytes and operations read + written per 5 minutes (four fifths reads); None: not published.
    ebs_bytes_per_5min: Shape | None = None
    ebs_ops_per_5min: Shape | None = None
    image: tuple[str, str] | None = None  # the AMI it runs (name, description), registered for it; None: the demo's


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


def diurnal_level(t: datetime, low: float, high: float) -> float:
    """The noiseless daily cycle under `diurnal`: memory that follows the load uses it too."""
    phase = math.cos((t.hour + t.minute / 60 - 15) / 24 * 2 * math.pi)
    return low + (high - low) * (phase + 1) / 2


def follows_load(low_mib: float, high_mib: float, spread: float = 60.0, cap: float | None = None) -> Shape:
    """GPU memory that grows with the daily load (a KV cache or batches that grow with traffic)."""
    return lambda t, r: min(cap or high_mib, max(0.0, diurnal_level(t, low_mib, high_mib) + r.gauss(0, spread)))


def reserved(level_mib: float, spread: float = 2.0) -> Shape:
    """A framework's up-front reservation (vLLM gpu_memory_utilization, JAX preallocation, TensorFlow):
    flat from the process start, whatever the load."""
    return lambda t, r: level_mib + r.gauss(0, spread)


def bursts(base: Shape, burst: float = 100.0, every_hours: int = 6, minutes: int = 10) -> Shape:
    """Steady light load with short bursts to `burst` every few hours (batch arrivals, traffic spikes)."""
    return lambda t, r: burst if t.hour % every_hours == 0 and t.minute < minutes else base(t, r)


def weekly_job(busy: Shape, weekday: int = 6, hour: int = 2, hours: int = 1) -> Shape:
    """Idle except for one job a week (e.g. Sunday 02:00-03:00 UTC)."""
    return lambda t, r: busy(t, r) if t.weekday() == weekday and hour <= t.hour < hour + hours else r.uniform(0, 0.4)


IDLE_GPU = Gpu(utilization=noisy(0.2, 0.3, hi=2.0), memory_used_mib=constant(0.0), memory_activity=constant(0.0))


def rate(base: float, spread: float) -> Shape:
    """A level without noisy()'s cap at 100 (bytes, operations)."""
    return lambda t, r: max(0.0, r.gauss(base, spread))


def ended(when: datetime, before: Shape, after: Shape) -> Shape:
    """`before` until `when`, `after` from then on: work that ended (or began) inside the window."""
    return lambda t, r: before(t, r) if t < when else after(t, r)


# Recommendations for groups of nodes, by resource id, and the finding each deserves (the nodes' own are above).
GROUPS: dict[str, str] = {
    "eks-nodegroup/ml/gpu-inference": "overprovisioned",
    "auto-scaling-group/serving-asg": "overprovisioned",  # its one member uses 1 of 4 GPUs
}


# The team that runs each bare host (the `team` tag: showback's groups, a schedule's time zone). Hosts someone else
# launches (node groups, Auto Scaling, Spot) are tagged by their owner; the teams keep part-used hosts of one type in
# one zone apart, so that no consolidation is advised the demo does not mean.
TEAMS: dict[str, str] = {
    "idle-p3": "research",
    "train-p4d": "llm",
    "one-of-four": "search",
    "t4-inference": "speech",
    "t4-memory-full": "llm",
    "loader-bound": "research",
    "no-agent": "media",
    "opted-out": "research",
    "legacy-light": "search",
    "inferentia-low": "search",
    "vllm-idle": "llm",
    "light-a100": "search",
    "video-transcoder": "media",
    "weekly-job": "research",
    "finetune-ended": "research",
    "stopped": "research",
    "ebs-bound": "data",
    "network-bound": "platform",
    "gpu-lost": "vision",
    "held-unused": "research",
    "graphics-workstation": "studio",
    "small-batch-server": "search",
    "live-transcoder": "media",
}


def fleet() -> list[Host]:
    """Every demo host, its team tagged (TEAMS)."""
    return [
        replace(host, tags={**host.tags, "team": TEAMS[host.key]}) if host.key in TEAMS else host for host in _hosts()
    ]


def _hosts() -> list[Host]:
    gib = MIB_PER_GIB
    # A fine-tuning run that finished four days before the analysis (the demo's window ends at the current hour).
    finished = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(days=4)
    # A GPU that fell off the bus three days before: its series stop (NaN is "not published").
    fell_off = finished + timedelta(days=1)
    gone = float("nan")
    return [
        Host(
            "idle-p3",
            "us-east-1",
            "p3.8xlarge",
            "legacy-train-01",
            "idle",
            tags={"rightsizer:managed": "true"},  # one click may stop it (the action role's tag condition)
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
            # The KV cache grows with traffic, up to 97 % of nvidia-smi's memory.total: a real OOM risk.
            gpus=(Gpu(diurnal(40, 70), follows_load(9 * gib, 14.55 * gib, cap=15360), noisy(50, 5)),),
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
            tags={"rightsizer:managed": "true", "team": "notebooks"},  # schedules use the team's time zone
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
        # An EKS managed node group of 4-GPU nodes whose pods each use one GPU, watched by Container Insights (no
        # CloudWatch agent on the nodes): one recommendation for the node group, the nodes pointing at it.
        *(
            Host(
                f"eks-node-{letter}",
                "us-east-1",
                "g5.12xlarge",
                f"eks-gpu-inference-{letter}",
                "excluded",
                gpus=(
                    Gpu(diurnal(20 + shift, 50 + shift), noisy(7 * gib, 150, lo=0, hi=22888)),
                    IDLE_GPU,
                    IDLE_GPU,
                    IDLE_GPU,
                ),
                cpu=diurnal(4, 9, 1),
                host_memory_pct=noisy(12, 1),
                tags={
                    "eks:nodegroup-name": "gpu-inference",
                    "eks:cluster-name": "ml",
                    "kubernetes.io/cluster/ml": "owned",
                },
                container_insights_cluster="ml",
            )
            for letter, shift in (("a", 0), ("b", 5))
        ),
        Host(
            "vllm-idle",
            "us-east-1",
            "p4d.24xlarge",
            "llm-serving-vllm",
            "held_unused",
            # Kept in an On-Demand Capacity Reservation, billed whether used or not: stopping it saves nothing
            # until the reservation is reduced (net savings 0).
            capacity_reservation="cr-0d3adc0ffee0p4d01",
            # vLLM reserves 90 % of each GPU at start (gpu_memory_utilization): flat, whatever the load.
            gpus=(Gpu(noisy(0.2, 0.3, hi=2.0), reserved(0.9 * 40960), constant(0.0)),) * 8,
            cpu=noisy(2, 0.5, lo=0.1),
            network_bytes_per_5min=noisy(5e6, 1e6, lo=0, hi=1e12),
            host_memory_pct=noisy(6, 0.5),
            gpu_memory_total_mib=40960,
            gpu_name="NVIDIA A100-SXM4-40GB",
        ),
        Host(
            "light-a100",
            "us-east-1",
            "p4d.24xlarge",
            "embeddings-a100",
            "overprovisioned",
            tags={"rightsizer:managed": "true"},
            # One A100 at 25-40 %: an L4 would need 5x its bandwidth; an L40S carries it.
            gpus=(Gpu(diurnal(25, 40, 2), follows_load(6 * gib, 9 * gib, cap=40960), noisy(20, 3)),) + (IDLE_GPU,) * 7,
            cpu=noisy(2.5, 0.4, lo=0.1),
            network_bytes_per_5min=noisy(5e7, 1e7, lo=0, hi=1e12),
            host_memory_pct=noisy(2, 0.1),
            gpu_memory_total_mib=40960,
            gpu_name="NVIDIA A100-SXM4-40GB",
        ),
        Host(
            "weekly-job",
            "eu-west-1",
            "g5.2xlarge",
            "weekly-retrain",
            "schedulable",
            # A retraining job every Sunday 02:00-04:00 UTC; idle the rest of the week (p99 < 5 %).
            gpus=(Gpu(weekly_job(noisy(92, 4), hours=2), weekly_job(constant(12 * gib), hours=2)),),
            cpu=weekly_job(noisy(60, 5), hours=2),
            host_memory_pct=noisy(20, 1),
        ),
        Host(
            "video-transcoder",
            "us-east-1",
            "g4dn.2xlarge",
            "vod-transcode",
            "overprovisioned",
            # ffmpeg with NVDEC/NVENC (h264_nvenc): the SMs stay near 3 %, the encoder has 3-4 sessions all day. The
            # only GPU work is on the video engines: not idle, not "move off GPUs", and only to a GPU with NVENC.
            gpus=(
                Gpu(
                    noisy(3, 1, hi=8),
                    noisy(1.2 * gib, 30, lo=0),
                    encoder_sessions=lambda t, r: float(r.choice((3, 4, 4))),
                    encoder_fps=noisy(58, 3, lo=1),
                ),
            ),
            cpu=noisy(22, 3),
            network_bytes_per_5min=noisy(1.2e10, 1e9, lo=0, hi=1e12),
            host_memory_pct=noisy(25, 1),
            gpu_memory_total_mib=15360,
            gpu_name="Tesla T4",
        ),
        Host(
            "finetune-ended",
            "us-east-1",
            "g5.12xlarge",
            "llama-finetune",
            "idle",
            # Four A10Gs fine-tuned flat out for ten days; the run ended four days ago and nothing has run since. Over
            # the whole window its p95 is still ~90 %: read as one regime it would be "optimized".
            gpus=(
                Gpu(
                    ended(finished, training(88), noisy(0.2, 0.3, hi=2.0)),
                    ended(finished, noisy(19 * gib, 200, lo=0, hi=22888), constant(0.0)),
                ),
            )
            * 4,
            cpu=ended(finished, noisy(30, 3), noisy(1.5, 0.4, lo=0.1)),
            network_bytes_per_5min=ended(finished, noisy(2e9, 2e8, lo=0, hi=1e12), constant(1e5)),
            host_memory_pct=ended(finished, noisy(40, 2), noisy(6, 0.3)),
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
        # Issue 28: a limit of the host no GPU metric shows, one host each.
        Host(
            "ebs-bound",
            "us-east-1",
            "g5.12xlarge",
            "parquet-preprocess",
            "overprovisioned",
            # Reads ~1.7 GB/s of parquet shards from EBS all day for one A10G: a one-GPU target must sustain ~2 GB/s at
            # its EBS baseline, which rules out every g5 and the smaller g6.
            gpus=(Gpu(noisy(28, 4), noisy(9 * gib, 100, lo=0, hi=22888)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
            cpu=noisy(30, 3),
            host_memory_pct=noisy(35, 2),
            ebs_bytes_per_5min=rate(1.7e9 * 300, 2e10),
            ebs_ops_per_5min=rate(14_000 * 300, 2e5),
        ),
        Host(
            "network-bound",
            "us-east-1",
            "g5.2xlarge",
            "artifact-packager",
            "overprovisioned",
            # Pushes ~3.2 Gbps of containers out all day: "up to 10 Gigabit" types hold 2.5 at baseline.
            gpus=(Gpu(bursts(noisy(8, 3), 40, every_hours=2, minutes=10), noisy(3 * gib, 50, lo=0, hi=22888)),),
            cpu=noisy(18, 3),
            network_bytes_per_5min=rate(0.35e9 / 8 * 300, 1e7),
            network_out_ratio=9.0,
            host_memory_pct=noisy(30, 2),
        ),
        Host(
            "gpu-lost",
            "us-east-1",
            "g5.12xlarge",
            "ranker-replicas",
            "gpu_lost",
            # Four inference replicas; GPU 2's series stop three days ago while the others serve on: Xid 79.
            gpus=(
                Gpu(diurnal(30, 55), noisy(12 * gib, 100, lo=0, hi=22888)),
                Gpu(diurnal(30, 55), noisy(12 * gib, 100, lo=0, hi=22888)),
                Gpu(
                    ended(fell_off, diurnal(30, 55), constant(gone)),
                    ended(fell_off, noisy(12 * gib, 100, lo=0, hi=22888), constant(gone)),
                ),
                Gpu(diurnal(30, 55), noisy(12 * gib, 100, lo=0, hi=22888)),
            ),
            cpu=diurnal(10, 20, 2),
            host_memory_pct=noisy(30, 2),
        ),
        Host(
            "held-unused",
            "eu-west-1",
            "g5.xlarge",
            "notebook-tensors",
            "held_unused",
            # A notebook kernel keeps 14 GiB of tensors on the GPU; nobody has run a cell in two weeks.
            gpus=(Gpu(noisy(0.2, 0.2, hi=1.5), noisy(14 * gib, 20, lo=0, hi=22888)),),
            cpu=noisy(1.2, 0.3, lo=0.1),
            host_memory_pct=noisy(35, 1),
        ),
        Host(
            "graphics-workstation",
            "us-east-1",
            "g6.8xlarge",
            "artist-workstation",
            "overprovisioned",
            # A Maya viewport over Amazon DCV (the DCV AMI) at ~15 % of an L4, one NVENC stream all day: a smaller
            # type, but one whose GPU runs graphics, never an A100.
            gpus=(
                Gpu(
                    noisy(15, 4),
                    noisy(5 * gib, 100, lo=0, hi=22888),
                    encoder_sessions=constant(1.0),
                    encoder_fps=noisy(30, 5, lo=1),
                ),
            ),
            cpu=noisy(8, 2),
            host_memory_pct=noisy(25, 1),
            gpu_name="NVIDIA L4",
            image=("DCV-AmazonLinux2-x86_64-2023.1-NVIDIA-535", "Amazon DCV server with the NVIDIA GRID driver"),
        ),
        # Two hosts that publish DCGM's signals (agent/dcgm: its agent config leaves the session count out).
        Host(
            "small-batch-server",
            "us-east-1",
            "g6e.xlarge",
            "recs-ranker",
            "overprovisioned",
            # One request at a time on an L40S: a kernel in flight 97 % of the time, its SMs 18 % busy. Kernel time
            # alone would sell it a faster GPU; its SMs fit an L4.
            gpus=(
                Gpu(
                    noisy(97, 1.5),
                    noisy(8 * gib, 150, lo=0, hi=46068),
                    dcgm=(
                        (Signal.SM_ACTIVE, noisy(18, 3)),
                        (Signal.TENSOR_ACTIVE, noisy(5, 1)),
                        (Signal.DRAM_ACTIVE, noisy(11, 2)),
                        (Signal.ENCODER, constant(0.0)),
                        (Signal.DECODER, constant(0.0)),
                    ),
                ),
            ),
            cpu=noisy(20, 3),
            host_memory_pct=noisy(30, 1),
            gpu_memory_total_mib=46068,
            gpu_name="NVIDIA L40S",
            encoder_stats=False,
        ),
        Host(
            "live-transcoder",
            "us-east-1",
            "g6e.2xlarge",
            "live-transcode-01",
            "overprovisioned",
            # Live streams decoded and re-encoded on the video engines: the L40S's 3 NVENC 20 % busy, NVDEC 15 %, SMs
            # ~3 %. In percent of the engines the work is under one NVENC's: an L4's two carry it.
            gpus=(
                Gpu(
                    noisy(4, 1),
                    noisy(3 * gib, 50, lo=0, hi=46068),
                    dcgm=(
                        (Signal.SM_ACTIVE, noisy(3, 1)),
                        (Signal.TENSOR_ACTIVE, constant(0.0)),
                        (Signal.DRAM_ACTIVE, noisy(5, 1)),
                        (Signal.ENCODER, noisy(20, 3)),
                        (Signal.DECODER, noisy(15, 3)),
                    ),
                ),
            ),
            cpu=noisy(25, 3),
            host_memory_pct=noisy(35, 1),
            gpu_memory_total_mib=46068,
            gpu_name="NVIDIA L40S",
            encoder_stats=False,
        ),
    ]


def timeline(end: datetime, days: int) -> Iterator[datetime]:
    """5-minute timestamps over `days` days ending at `end` (exclusive), oldest first."""
    start = end - timedelta(days=days)
    t = start
    while t < end:
        yield t
        t += STEP
