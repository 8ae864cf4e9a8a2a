"""An expert fleet: workload archetypes, each with the finding a GPU expert expects for it and why.

Each archetype is one host: what it does (the story), its type, region and ownership, the series the CloudWatch
agent and neuron-monitor would publish for it (tests/unit/shapes.py `Workload`), and the EXPECTATION, written from
the workload before the analyzer was run on it: the findings an expert would accept (usually one), and the
invariants that matter for this host (never a stop for a host that works, one click or not, what a target must
keep). `violations()` says where a recommendation breaks them; tests/unit/test_expert_fleet.py asserts there are
none (or marks a disagreement with the analyzer as a strict xfail), and `make bench` prints the table
(bench/expert_fleet_bench.py).

Figures quoted in the reasons are sourced: framework documentation for memory reservations, the NVIDIA video
support matrix for NVENC counts (also in src/rightsizer/domain/data/accelerators.json), and the cluster studies
collected in the project's reference data (`gpu_utilization_studies.json`, shared/reference).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cache

from demo.fleet import (
    IDLE_GPU,
    Gpu,
    Shape,
    bursts,
    business_hours,
    constant,
    diurnal,
    follows_load,
    noisy,
    reserved,
    training,
    weekly_job,
)

from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.models import ActionKind, Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.signals import Signal
from rightsizer.domain.summaries import summarize_one
from rightsizer.domain.usage.series import DeviceSeries, Series
from rightsizer.services.analyze import analyze_hosts
from tests import factories
from tests.factories import NOW
from tests.unit.shapes import Slice, Workload, raw_usage

GIB = 1024.0
# nvidia-smi's memory.total (MiB) per GPU model, as the agent publishes it.
T4 = 15360.0
A10G = 23028.0
L4 = 23034.0
L40S = 46068.0
V100 = 16160.0
A100 = 40960.0
H100 = 81559.0

WINDOWS = ("Windows", "RunInstances:0002")

# Sources quoted by the reasons below.
VLLM = "vLLM reserves gpu_memory_utilization=0.9 of each GPU up front (https://docs.vllm.ai/en/stable/api/vllm/config/cache/)"
PYTORCH = (
    "PyTorch's caching allocator keeps freed blocks, so nvidia-smi shows the high-water mark "
    "(https://pytorch.org/docs/stable/notes/cuda.html#memory-management)"
)
JAX = "JAX preallocates 75 % of each GPU at the first operation (https://docs.jax.dev/en/latest/gpu_memory_allocation.html)"
PAI = (
    "in Alibaba PAI's 2020 trace the median instance used 1.5 % of its GPU and 34.5 % sat at exactly 0 % "
    "(gpu_utilization_studies.json)"
)
GAO = (
    "Gao et al. (ICSE 2024) found data operations behind 46 % of low-GPU-utilisation issues in 400 jobs "
    "(gpu_utilization_studies.json)"
)
PHILLY = "in Microsoft's Philly trace even jobs over 24 h sat idle 25 % of the time (gpu_utilization_studies.json)"
NVENC = (
    "NVENC engines per GPU: T4 1, A10G 1, L4 2, L40S 3, V100 3, A100/H100 none (NVIDIA Video Encode and Decode GPU "
    "Support Matrix, https://developer.nvidia.com/video-encode-and-decode-gpu-support-matrix-new)"
)
SM_ONLY = (
    "utilization.gpu is the share of time a kernel ran on the SMs: NVENC/NVDEC work is not in it "
    "(NVENC Application Note: the encoder is independent of the CUDA cores)"
)
NEURON_MONITOR = (
    "neuron-monitor reports only the NeuronCores a running application uses (neuron-monitor user guide, "
    "neuron_monitoring.json)"
)
BANDWIDTH = (
    "memory bandwidth A10G 600 GB/s, L4 300 GB/s, T4 320 GB/s, L40S 864 GB/s, A100 1555 GB/s (accelerators.json)"
)
DCV = "DCV streams the desktop as video encoded on the GPU's NVENC where there is one (Amazon DCV Administrator Guide)"
EBS_OPTIMIZED = (
    "a type sustains its EBS baseline; the smaller sizes burst to their maximum for 30 minutes a day at most "
    "(EbsOptimizedInfo in DescribeInstanceTypes; Amazon EBS-optimized instances, AWS EC2 User Guide)"
)
NETWORK_BASELINE = (
    "'up to 10 Gigabit' is a burst on credits: a flow held for hours gets the baseline, and bandwidth applies to each "
    "direction on its own (BaselineBandwidthInGbps; 'Amazon EC2 instance network bandwidth', AWS EC2 User Guide)"
)
XID79 = (
    "Xid 79 is 'GPU has fallen off the bus': the GPU is gone from the PCIe bus until the host is reset (NVIDIA Xid "
    "catalog, docs.nvidia.com/deploy/xid-errors); a stop and start moves an instance to other hardware, a reboot does "
    "not, and a stop wipes the instance store (AWS EC2 User Guide: stop and start, instance store lifetime)"
)
NO_GRAPHICS = (
    "A100, H100 and H200 have no display engine or RT cores, and only two of an H100's TPCs run graphics shaders "
    "(NVIDIA H100 Tensor Core GPU Architecture); AWS offers GRID/RTX vWS and gaming drivers for G3, G4dn, G5, G6, Gr6 "
    "and G6e only (AWS EC2 User Guide: NVIDIA drivers)"
)
MIG = (
    "in MIG mode nvidia-smi reports utilization.gpu as [N/A] per GPU "
    "(https://docs.nvidia.com/datacenter/tesla/mig-user-guide/)"
)


class Category(StrEnum):
    TRAINING = "training"
    FINE_TUNING = "fine-tuning"
    BATCH_INFERENCE = "batch inference"
    ONLINE_INFERENCE = "online inference"
    LLM_SERVING = "LLM serving"
    VIDEO = "video transcoding"
    GRAPHICS = "graphics workstation"
    NOTEBOOK = "notebook"
    CPU_SERVICE = "CPU service on a GPU host"
    REGIME = "job that ends or starts inside the window"
    NEURON_TRAINING = "Neuron training"
    NEURON_INFERENCE = "Neuron inference"
    OPERATIONS = "agent gaps and ownership"
    OWNED = "nodes a cluster, node group or fleet launches"
    STORAGE = "storage-bound work (EBS, the instance store)"
    NETWORK = "network-bound work and nodes that work together"
    GPU_LOST = "a GPU gone from the bus"
    HELD = "GPU memory held, no work"
    SIGNALS = "decided by DCGM's signals, not kernel time"


# The capabilities of issue 28, each tested by several archetypes of varied workloads, types and families.
LIMIT_CATEGORIES = (Category.STORAGE, Category.NETWORK, Category.GPU_LOST, Category.HELD, Category.GRAPHICS)


@dataclass(frozen=True)
class TargetMust:
    """What a target (when one is named) must keep. All constraints hold only where a target is named, except
    `present` and `absent`."""

    present: bool = False  # a target must be named
    absent: bool = False  # no target may be named
    units: int | None = None  # exactly this many GPUs / NeuronCores
    models: frozenset[str] = frozenset()  # the target's accelerator is one of these
    min_encoders: int = 0  # NVENC engines per GPU
    min_vcpus: int = 0
    min_memory_per_unit_mib: float = 0.0
    graphics: bool = False  # the target's GPU runs graphics (OpenGL, Vulkan, DirectX)
    min_ebs_mbps: float = 0.0  # EBS throughput at the target's baseline (MB/s)
    min_ebs_iops: float = 0.0
    min_network_gbps: float = 0.0  # network at the target's baseline, per direction
    min_instance_store_gb: int = 0
    ena_express: bool = False
    min_network_cards: int = 1


ANY_TARGET = TargetMust()
NO_TARGET = TargetMust(absent=True)


@dataclass(frozen=True)
class Archetype:
    name: str
    category: Category
    story: str  # one sentence: what the host does
    instance_type: str
    workload: Workload
    findings: frozenset[Finding]  # what an expert accepts: usually one
    why: str  # the expert's reasoning (sources where a figure is quoted)
    region: str = "us-east-1"
    platform: tuple[str, str] | None = None  # (PlatformDetails, UsageOperation) when not Linux
    tags: Mapping[str, str] = field(default_factory=dict)
    lifecycle: str = "on-demand"
    asg_name: str | None = None
    uses_efa: bool = False
    may_stop: bool = False  # False: the host works; never `idle`, never a stop or schedule action
    one_click: bool | None = None  # None: either is acceptable
    target: TargetMust = ANY_TARGET
    max_confidence: Confidence | None = None
    priced: bool = True  # the advice must show what the host costs
    # neuron-monitor stops reporting the cores when the application exits (None: they report throughout).
    cores_report_until: datetime | None = None
    architecture: str = "x86_64"
    tenancy: str = "default"
    # Words the reasons must say (what is missing, who owns the host, ...), each found in some reason.
    says: tuple[str, ...] = ()
    # How the host was set up: its AMI's name and description (DescribeImages), its placement group, ENA Express on an
    # interface, the network cards its interfaces use.
    image: str = ""
    placement_group: str = ""
    ena_express: bool = False
    network_cards: int = 1
    # What the host would publish with the shipped agent configuration instead of DCGM's (Category.SIGNALS): kernel time
    # alone must lead the analyzer away from the expert's answer, or the archetype proves nothing about the signals.
    without_dcgm: Workload | None = None

    @property
    def expected(self) -> str:
        return "|".join(sorted(f.value for f in self.findings))


def expect(*findings: Finding) -> frozenset[Finding]:
    return frozenset(findings)


# ---------------------------------------------------------------------------------------------
# Shapes (what a GPU, CPU or link does over time); demo/fleet.py has the basic ones.


def switch(when: datetime, before: Shape, after: Shape) -> Shape:
    """One behaviour until `when`, another since (a job that ended or started)."""
    return lambda t, r: before(t, r) if t < when else after(t, r)


def switch_gpu(when: datetime, before: Gpu, after: Gpu) -> Gpu:
    return Gpu(
        utilization=switch(when, before.utilization, after.utilization),
        memory_used_mib=switch(when, before.memory_used_mib, after.memory_used_mib),
    )


def daily(busy: Shape, idle: Shape, start: int, hours: int) -> Shape:
    """Busy `hours` hours from `start` (UTC) every day, across midnight if need be."""
    return lambda t, r: busy(t, r) if (t.hour - start) % 24 < hours else idle(t, r)


def office(busy: Shape, idle: Shape, start: int = 8, end: int = 19) -> Shape:
    return business_hours(busy, idle, start, end)


def sporadic(busy: Shape, idle: Shape, seed: str) -> Shape:
    """A person's GPU use: on some weekdays, two hours starting at a different time each day."""
    rng = random.Random(seed)
    day = (NOW - timedelta(days=15)).date()
    used = set()
    while day <= NOW.date():
        if day.weekday() < 5 and rng.random() < 0.6:
            start = rng.randint(9, 16)
            used |= {(day, start), (day, start + 1)}
        day += timedelta(days=1)
    return lambda t, r: busy(t, r) if (t.date(), t.hour) in used else idle(t, r)


def idle_pct(t: datetime, r: random.Random) -> float:
    return r.uniform(0.0, 0.4)


def quiet_cpu(t: datetime, r: random.Random) -> float:
    return max(0.2, r.gauss(1.5, 0.4))


def quiet_network(t: datetime, r: random.Random) -> float:
    return max(0.0, r.gauss(0.001, 0.0003))


def sessions(count: float) -> Shape:
    """NVENC sessions open (hourly maximum of the agent's encoder_stats_session_count)."""
    return lambda t, r: float(r.choice([count - 1, count, count])) if count > 1 else count


def transcoder(count: float, fps: float, sm: float = 1.5) -> Gpu:
    """ffmpeg -hwaccel cuda ... -c:v h264_nvenc: decode and encode on the video engines, SMs nearly idle (more with
    CUDA filters such as scale_cuda)."""
    return Gpu(
        noisy(sm, sm * 0.4, hi=sm * 2.5),
        mib(1.2 * GIB, 30),
        encoder_sessions=sessions(count),
        encoder_fps=noisy(fps, 3, lo=1),
    )


def profiled(util: Shape, memory_mib: Shape, **signals: Shape) -> Gpu:
    """A GPU whose host runs agent/dcgm's publisher: kernel time and memory from the agent, and DCGM's `signals` (by
    their Signal value: sm_active, tensor_active, dram_active, encoder_util, decoder_util), each in percent."""
    return Gpu(util, memory_mib, dcgm=tuple((Signal(name), shape) for name, shape in signals.items()))


def kernel_only(work: Workload, **changes: object) -> Workload:
    """The same host with the shipped agent configuration: kernel time, memory and the encoder stats, no DCGM."""
    gpus = tuple(replace(g, dcgm=()) for g in work.gpus)
    return replace(work, gpus=gpus, encoder_stats=True, **changes)  # type: ignore[arg-type]


def around(level: float, spread: float) -> Shape:
    """A rate (MB/s, operations a second, Gbps) around `level`, never below 0 and without noisy()'s cap at 100."""
    return noisy(level, spread, lo=0.0, hi=float("inf"))


def mib(level: float, spread: float, cap: float | None = None) -> Shape:
    """GPU memory used (MiB) around `level`, never above `cap` (nvidia-smi's memory.total)."""
    return noisy(level, spread, lo=0.0, hi=cap if cap is not None else float("inf"))


def gpu(util: Shape, memory_mib: Shape | float) -> Gpu:
    return Gpu(util, constant(memory_mib) if isinstance(memory_mib, float) else memory_mib)


def held(memory_mib: float) -> Gpu:
    """A GPU that holds a loaded model and gets no work."""
    return Gpu(noisy(0.2, 0.3, hi=2.0), mib(memory_mib, 20))


def neuron(util: Shape) -> Gpu:
    """A NeuronCore in use: neuron-monitor publishes its utilisation only."""
    return Gpu(util, constant(0.0))


NOT_PUBLISHED = float("nan")  # a period nothing was published for (the series has a gap there)


def until(when: datetime, shape: Shape) -> Shape:
    """Published until `when`, nothing after (an agent that stopped)."""
    return lambda t, r: shape(t, r) if t < when else NOT_PUBLISHED


def every(hours: int, minutes: int, busy: Shape, idle: Shape) -> Shape:
    """Busy the first `minutes` of every `hours`-th hour (a cron job)."""
    return lambda t, r: busy(t, r) if t.hour % hours == 0 and t.minute < minutes else idle(t, r)


def ramp(start: float, end: float, spread: float = 3.0) -> Shape:
    """A level that moves steadily from `start` to `end` over the 14 days (growth, or a slow decline)."""
    first = NOW - timedelta(days=14)
    return lambda t, r: min(
        100.0, max(0.0, start + (end - start) * (t - first) / timedelta(days=14) + r.gauss(0, spread))
    )


def agent_stopped(when: datetime, work: Gpu) -> Gpu:
    """A GPU whose agent stopped publishing at `when` (every series ends; the work may go on)."""
    return Gpu(
        until(when, work.utilization),
        until(when, work.memory_used_mib),
        encoder_sessions=until(when, constant(0.0)),
        encoder_fps=until(when, constant(0.0)),
    )


THREE_DAYS_AGO = NOW - timedelta(days=3)
FIVE_DAYS_AGO = NOW - timedelta(days=5)
FOUR_DAYS_AGO = NOW - timedelta(days=4)
TWO_DAYS_AGO = NOW - timedelta(days=2)

SM_ACTIVE = (
    "utilization.gpu is the share of time any kernel ran; DCGM's SM active is the share of cycles an SM has a warp "
    "assigned (NVIDIA DCGM, dcgm_fields.h): a small batch keeps a kernel in flight with most SMs idle"
)
LAUNCH_BOUND_L40S = Workload(
    gpus=(
        profiled(
            noisy(97, 1.5),
            mib(8 * GIB, 200),
            sm_active=noisy(18, 3),
            tensor_active=noisy(5, 1),
            dram_active=noisy(11, 2),
            encoder_util=constant(0.0),
            decoder_util=constant(0.0),
        ),
    ),
    cpu=noisy(20, 3),
    host_memory_pct=noisy(30, 1),
)
LAUNCH_BOUND_T4 = Workload(
    gpus=(
        profiled(
            noisy(97, 1.5),
            mib(5 * GIB, 100),
            sm_active=noisy(20, 3),
            tensor_active=noisy(6, 1),
            dram_active=noisy(12, 2),
        ),
    ),
    memory_total_mib=T4,
    cpu=noisy(30, 3),
    host_memory_pct=noisy(35, 1),
)
TENSOR_HEAVY_A10G = Workload(
    gpus=(
        profiled(
            noisy(60, 2),
            mib(9 * GIB, 100),
            sm_active=noisy(50, 2),
            tensor_active=noisy(45, 2),
            dram_active=noisy(25, 2),
        ),
    ),
    cpu=noisy(12, 2),
    host_memory_pct=noisy(30, 1),
)
TRANSCODER_L40S = Workload(
    gpus=(
        profiled(
            noisy(4, 1),
            mib(3 * GIB, 50),
            sm_active=noisy(3, 1),
            tensor_active=constant(0.0),
            dram_active=noisy(5, 1),
            encoder_util=noisy(20, 3),
            decoder_util=noisy(15, 3),
        ),
    ),
    memory_total_mib=L40S,
    cpu=noisy(25, 3),
    host_memory_pct=noisy(35, 1),
    encoder_stats=False,  # agent/dcgm's configuration: NVENC utilisation replaces the session count
)

TRAINING_A100 = gpu(training(90), mib(30.5 * GIB, 40))
TRAINING_A10G = gpu(training(88), mib(20.5 * GIB, 30))


# ---------------------------------------------------------------------------------------------
# The fleet.

F = Finding

ARCHETYPES: tuple[Archetype, ...] = (
    # --- training ----------------------------------------------------------------------------
    Archetype(
        "llm-pretrain-p4d",
        Category.TRAINING,
        "one node of a multi-node LLM pre-training job: 8 A100s flat out with a checkpoint dip every two hours",
        "p4d.24xlarge",
        Workload(
            gpus=(TRAINING_A100,) * 8,
            memory_total_mib=A100,
            cpu=noisy(38, 4),
            network_gbps=noisy(5, 0.5, lo=0),
            host_memory_pct=noisy(45, 2),
        ),
        expect(F.OPTIMIZED),
        "every GPU works ~90 % of the time; NCCL over NVLink and EFA keeps it on an 8-GPU P type and nothing "
        f"cheaper has eight A100-class GPUs; flat memory is the allocator's high-water mark ({PYTORCH})",
        uses_efa=True,
        target=NO_TARGET,
    ),
    Archetype(
        "comm-bound-ddp-p4d",
        Category.TRAINING,
        "data-parallel training across nodes that waits on all-reduce: 8 A100s at ~45 %",
        "p4d.24xlarge",
        Workload(
            gpus=(gpu(noisy(45, 8), mib(28 * GIB, 40)),) * 8,
            memory_total_mib=A100,
            cpu=noisy(20, 3),
            network_gbps=noisy(12, 1.5, lo=0),
            host_memory_pct=noisy(35, 2),
        ),
        expect(F.OPTIMIZED),
        "all 8 GPUs work in lockstep; the gap is communication (fix the overlap, not the host), and multi-GPU "
        f"work stays on P types with NVLink/EFA; {PHILLY}",
        uses_efa=True,
        target=NO_TARGET,
    ),
    Archetype(
        "vision-train-loader-bound",
        Category.TRAINING,
        "an image-classification training job whose JPEG decoding and augmentation saturate the 8 vCPUs",
        "g5.2xlarge",
        Workload(
            gpus=(gpu(noisy(26, 5), mib(12 * GIB, 200, cap=A10G)),),
            memory_total_mib=A10G,
            cpu=noisy(95, 2.5),
            host_memory_pct=noisy(62, 3),
        ),
        expect(F.NOT_GPU_BOUND),
        f"CPU p95 ~97 % while the GPU waits at ~26 %: more vCPUs (same A10G) feed it, a smaller GPU would not; {GAO}",
        target=TargetMust(models=frozenset({"A10G"}), min_vcpus=9),
    ),
    Archetype(
        "jax-train-p5",
        Category.TRAINING,
        "JAX training on 8 H100s at 80-90 %, memory preallocated by XLA",
        "p5.48xlarge",
        Workload(
            gpus=(gpu(training(86), reserved(0.75 * H100, 30)),) * 8,
            memory_total_mib=H100,
            cpu=noisy(25, 3),
            network_gbps=noisy(8, 1, lo=0),
            host_memory_pct=noisy(30, 2),
        ),
        expect(F.OPTIMIZED),
        f"eight busy H100s; {JAX}, so memory says nothing about need; A100s would be 3x slower on tensor work",
        uses_efa=True,
        target=NO_TARGET,
    ),
    Archetype(
        "ddp-uses-4-of-8",
        Category.TRAINING,
        "torchrun --nproc_per_node=4 on an 8-GPU host: four A10Gs train, four never get a process",
        "g5.48xlarge",
        Workload(
            gpus=(TRAINING_A10G,) * 4 + (IDLE_GPU,) * 4,
            memory_total_mib=A10G,
            cpu=noisy(20, 2),
            network_gbps=noisy(0.5, 0.1, lo=0),
            host_memory_pct=noisy(15, 1),
        ),
        expect(F.OVERPROVISIONED),
        "four GPUs never ran a kernel in 14 days: a 4-GPU A10G host with the vCPUs the loaders use (~55) carries "
        "the job; at ~88 % the busy GPUs cannot move to slower L4s",
        target=TargetMust(present=True, units=4, models=frozenset({"A10G", "L40S"})),
    ),
    Archetype(
        "capacity-block-training",
        Category.TRAINING,
        "training inside a Capacity Block: the capacity was bought up front for these days",
        "p5.48xlarge",
        Workload(gpus=(gpu(training(90), mib(60 * GIB, 50)),) * 8, memory_total_mib=H100, cpu=noisy(30, 3)),
        expect(F.EXCLUDED),
        "a Capacity Block is paid for and ends by itself: there is nothing to resize or stop",
        lifecycle="capacity-block",
        one_click=False,
        priced=False,
    ),
    # --- fine-tuning -------------------------------------------------------------------------
    Archetype(
        "deepspeed-finetune-g5-12xl",
        Category.FINE_TUNING,
        "DeepSpeed ZeRO-2 fine-tuning of a 7B model on four A10Gs",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(training(85), mib(21 * GIB, 30)),) * 4,
            memory_total_mib=A10G,
            cpu=noisy(30, 3),
            host_memory_pct=noisy(40, 2),
        ),
        expect(F.OPTIMIZED),
        f"four GPUs at ~85 %; L4s have half the bandwidth ({BANDWIDTH}), fewer GPUs would not hold the shards",
        target=NO_TARGET,
    ),
    Archetype(
        "qlora-finetune-l40s-pinned",
        Category.FINE_TUNING,
        "QLoRA fine-tuning of a 13B model on one L40S, busy every minute",
        "g6e.xlarge",
        Workload(
            gpus=(gpu(noisy(98, 1, lo=90), mib(40 * GIB, 40)),),
            memory_total_mib=L40S,
            cpu=noisy(60, 5),
            host_memory_pct=noisy(50, 2),
        ),
        expect(F.OPTIMIZED, F.UNDERPROVISIONED),
        "a GPU busy all the time is well used; a faster one is only worth it if the run is too slow, which the "
        "metrics cannot tell: advice at most, never a one-click upgrade",
        one_click=False,
        target=TargetMust(units=1),
    ),
    Archetype(
        "weekly-retrain",
        Category.FINE_TUNING,
        "a recommender retrained every Sunday 02:00-04:00 UTC; nothing else runs on the host",
        "g5.2xlarge",
        Workload(
            gpus=(gpu(weekly_job(noisy(92, 4), hours=2), weekly_job(constant(12 * GIB), hours=2)),),
            cpu=weekly_job(noisy(60, 5), hours=2),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.SCHEDULABLE),
        "2 busy hours of 168: a weekly stop/start (or a batch job) saves ~98 %; the job is real work, so never idle",
        region="eu-west-1",
        may_stop=True,
    ),
    # --- batch inference ---------------------------------------------------------------------
    Archetype(
        "nightly-embedding-backfill",
        Category.BATCH_INFERENCE,
        "embeds the day's documents on four A10Gs from 01:00 to 05:00 UTC every night; the process exits after",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(daily(noisy(92, 3), idle_pct, 1, 4), daily(constant(9 * GIB), constant(0.0), 1, 4)),) * 4,
            cpu=daily(noisy(40, 4), quiet_cpu, 1, 4),
            network_gbps=daily(noisy(0.4, 0.05, lo=0), quiet_network, 1, 4),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.SCHEDULABLE),
        "busy the same 4 hours every day, quiet (GPU, CPU and network) the other 140 hours of the week: a daily "
        "stop/start pair follows it",
        may_stop=True,
        one_click=True,
    ),
    Archetype(
        "t4-batch-overbuilt",
        Category.BATCH_INFERENCE,
        "a queue-fed image-classification worker at ~70 % of one T4 on a 16-vCPU host that uses two",
        "g4dn.4xlarge",
        Workload(
            gpus=(gpu(noisy(70, 5), mib(6 * GIB, 50)),),
            memory_total_mib=T4,
            cpu=noisy(10, 1.5),
            host_memory_pct=noisy(15, 1),
        ),
        expect(F.OVERPROVISIONED),
        "the same T4 with 4 vCPUs and 16 GiB (g4dn.xlarge) carries ~1.6 vCPUs and ~10 GiB of RAM at less than half "
        "the price",
        target=TargetMust(present=True, units=1, models=frozenset({"T4", "A10G", "L4"})),
    ),
    Archetype(
        "t4-batch-pinned",
        Category.BATCH_INFERENCE,
        "an offline scoring worker that always has a queue: one T4 at ~98 % around the clock",
        "g4dn.xlarge",
        Workload(gpus=(gpu(noisy(98, 1, lo=90), mib(9 * GIB, 100)),), memory_total_mib=T4, cpu=noisy(30, 3)),
        expect(F.OPTIMIZED, F.UNDERPROVISIONED),
        "a pinned GPU is well used; 100 % utilization.gpu means a kernel always ran, not that the SMs are full "
        "(gpu_utilization_studies.json, metric_caveat), so a faster GPU is advice, never a one-click upgrade",
        one_click=False,
        target=TargetMust(units=1),
    ),
    Archetype(
        "whisper-batch-spot",
        Category.BATCH_INFERENCE,
        "Whisper transcription batches on a Spot instance launched by a fleet request",
        "g5.2xlarge",
        Workload(gpus=(gpu(noisy(40, 15), mib(6 * GIB, 300, cap=A10G)),), cpu=noisy(20, 4)),
        expect(F.EXCLUDED),
        "the Spot request or fleet owns the host: the advice goes to whoever launches it, never an in-place change",
        lifecycle="spot",
        one_click=False,
        priced=False,
    ),
    # --- online inference --------------------------------------------------------------------
    Archetype(
        "asr-t4-diurnal",
        Category.ONLINE_INFERENCE,
        "a speech-recognition API on one T4 that follows its users: 30 % at night, 58 % in the afternoon",
        "g4dn.xlarge",
        Workload(
            gpus=(gpu(diurnal(30, 58), mib(9 * GIB, 200, cap=T4)),),
            memory_total_mib=T4,
            cpu=diurnal(20, 38, 2),
            network_gbps=diurnal(0.05, 0.2, 0.01),
            host_memory_pct=noisy(42, 2),
        ),
        expect(F.OPTIMIZED),
        "the smallest T4 host, well used all day and night; no cheaper GPU of at least its capability exists",
        target=NO_TARGET,
    ),
    Archetype(
        "triton-bursty",
        Category.ONLINE_INFERENCE,
        "a Triton server with light steady traffic and batch arrivals that saturate the A10G for 10 minutes "
        "every 6 hours, on a host with twice the vCPUs it uses",
        "g5.2xlarge",
        Workload(
            gpus=(gpu(bursts(noisy(22, 4)), mib(7 * GIB, 40)),),
            cpu=bursts(noisy(9, 1.5), burst=30.0),
            network_gbps=noisy(0.08, 0.02, lo=0),
            host_memory_pct=noisy(25, 1),
        ),
        expect(F.OVERPROVISIONED),
        "the bursts need an equally fast GPU (an L4 has half the bandwidth: the bursts would queue), but 4 vCPUs "
        "and 16 GiB carry ~2.4 vCPUs at the busiest and ~9.6 GiB: the same A10G on g5.xlarge",
        target=TargetMust(present=True, units=1, models=frozenset({"A10G"})),
    ),
    Archetype(
        "stable-diffusion-api",
        Category.ONLINE_INFERENCE,
        "an SDXL image-generation API whose afternoon peak keeps the A10G busy",
        "g5.xlarge",
        Workload(
            gpus=(gpu(diurnal(20, 92, 4), mib(14.5 * GIB, 30)),),
            cpu=diurnal(6, 12, 1),
            network_gbps=diurnal(0.02, 0.1, 0.01),
            host_memory_pct=noisy(45, 2),
        ),
        expect(F.OPTIMIZED),
        "the smallest A10G host, its busiest hours near 100 %: nothing slower or smaller carries the peak "
        f"({BANDWIDTH})",
        target=NO_TARGET,
    ),
    Archetype(
        "embeddings-one-of-four",
        Category.ONLINE_INFERENCE,
        "a single-GPU embeddings service deployed on a 4-GPU host: GPUs 1-3 never get a process",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(diurnal(25, 60), mib(7.6 * GIB, 150, cap=A10G)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
            cpu=diurnal(4, 9, 1),
            network_gbps=diurnal(0.05, 0.15, 0.01),
            host_memory_pct=noisy(11, 1),
        ),
        expect(F.OVERPROVISIONED),
        "three GPUs never ran a kernel: one A10G with the ~7 vCPUs and ~25 GiB the service uses carries it",
        target=TargetMust(present=True, units=1, models=frozenset({"A10G", "L40S"})),
    ),
    Archetype(
        "triton-idle-replicas",
        Category.ONLINE_INFERENCE,
        "four Triton model replicas, but the load balancer sends every request to GPU 0; GPUs 1-3 hold the model",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(diurnal(30, 65), mib(8 * GIB, 40)), held(8 * GIB), held(8 * GIB), held(8 * GIB)),
            cpu=diurnal(4, 9, 1),
            network_gbps=diurnal(0.05, 0.15, 0.01),
            host_memory_pct=noisy(12, 1),
        ),
        expect(F.OVERPROVISIONED),
        "replicas that never served a request in 14 days are not capacity: one A10G carries the traffic; the "
        "replicas may be a warm standby, so the advice names them and is not high confidence",
        target=TargetMust(present=True, units=1),
        max_confidence=Confidence.MEDIUM,
    ),
    Archetype(
        "recsys-light-g5-4xl",
        Category.ONLINE_INFERENCE,
        "a ranking model that uses 15 % of an A10G while feature processing keeps half of 16 vCPUs busy",
        "g5.4xlarge",
        Workload(
            gpus=(gpu(noisy(15, 3), mib(4 * GIB, 40)),),
            cpu=noisy(50, 5),
            network_gbps=noisy(0.3, 0.05, lo=0),
            host_memory_pct=noisy(35, 2),
        ),
        expect(F.OVERPROVISIONED),
        f"~20 % of an A10G is ~40 % of an L4 even bandwidth-bound ({BANDWIDTH}); the vCPUs (~14 needed) stay: "
        "a 16-vCPU L4 host is ~18 % cheaper",
        target=TargetMust(present=True, units=1, min_vcpus=14),
    ),
    Archetype(
        "legacy-p3-light",
        Category.ONLINE_INFERENCE,
        "an old inference service on a V100 at 8-20 % that nobody moved to a newer GPU",
        "p3.2xlarge",
        Workload(
            gpus=(gpu(diurnal(8, 20), mib(5 * GIB, 100, cap=V100)),),
            memory_total_mib=V100,
            cpu=diurnal(5, 12, 1),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.OVERPROVISIONED),
        "a fifth of a V100 fits a current single-GPU type (T4, A10G or L4) at a fraction of the price",
        target=TargetMust(present=True, units=1),
    ),
    # --- LLM serving -------------------------------------------------------------------------
    Archetype(
        "vllm-l40s-diurnal",
        Category.LLM_SERVING,
        "vLLM serving Llama-3.1-8B on one L40S, 30-75 % with the day",
        "g6e.xlarge",
        Workload(
            gpus=(gpu(diurnal(30, 75), reserved(0.9 * L40S)),),
            memory_total_mib=L40S,
            cpu=diurnal(15, 25, 2),
            network_gbps=diurnal(0.02, 0.08, 0.005),
            host_memory_pct=noisy(40, 2),
        ),
        expect(F.OPTIMIZED),
        f"the smallest L40S host, busy; {VLLM}: the flat 90 % is a reservation, not a need, and no out-of-memory risk",
        target=NO_TARGET,
    ),
    Archetype(
        "vllm-tp4-g5-12xl",
        Category.LLM_SERVING,
        "vLLM with tensor_parallel_size=4 serving a 30B model across four A10Gs",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(diurnal(40, 70), reserved(0.9 * A10G)),) * 4,
            cpu=diurnal(8, 14, 1),
            network_gbps=diurnal(0.02, 0.1, 0.005),
            host_memory_pct=noisy(25, 1),
        ),
        expect(F.OPTIMIZED),
        "tensor-parallel shards need all four GPUs; decoding is bandwidth-bound and L4s have half of it "
        f"({BANDWIDTH}); {VLLM}",
        target=NO_TARGET,
    ),
    Archetype(
        "vllm-idle-p4d",
        Category.LLM_SERVING,
        "a vLLM endpoint on 8 A100s that nobody has called for two weeks; only health checks reach it",
        "p4d.24xlarge",
        Workload(
            gpus=(gpu(noisy(0.2, 0.3, hi=2.0), reserved(0.9 * A100)),) * 8,
            memory_total_mib=A100,
            cpu=noisy(2, 0.5, lo=0.1),
            network_gbps=noisy(0.0002, 0.00005, lo=0),
            host_memory_pct=noisy(6, 0.5),
        ),
        expect(F.HELD_UNUSED),
        "no kernel ran in 14 days, yet a server holds every GPU (vLLM's up-front reservation): idle in all but "
        "memory; the server may still be wanted (a launch next week, a fallback), so she names what it costs and what "
        "to check, and stops nothing on one click; the p4d capacity risk is named (medium confidence at most)",
        one_click=False,
        max_confidence=Confidence.MEDIUM,
        says=("idle in all but memory", "p4d capacity is scarce"),
    ),
    Archetype(
        "kv-cache-t4-97pct",
        Category.LLM_SERVING,
        "a Hugging Face transformers chat server whose KV cache grows with traffic to 97 % of the T4",
        "g4dn.xlarge",
        Workload(
            gpus=(gpu(diurnal(40, 70), follows_load(9 * GIB, 14.55 * GIB, cap=T4)),),
            memory_total_mib=T4,
            cpu=diurnal(15, 30, 2),
            host_memory_pct=noisy(55, 2),
        ),
        expect(F.UNDERPROVISIONED),
        "memory rises with the load to 97 % of nvidia-smi's memory.total every afternoon: a real OOM risk; one GPU "
        "with more memory (A10G/L4, 24 GB) fits it; a paid change for memory is medium confidence at most",
        target=TargetMust(present=True, units=1, min_memory_per_unit_mib=17 * GIB),
        max_confidence=Confidence.MEDIUM,
    ),
    Archetype(
        "vllm-office-hours-chatbot",
        Category.LLM_SERVING,
        "an internal vLLM chatbot used in office hours only; the model stays loaded (reserved memory) at night",
        "g5.2xlarge",
        Workload(
            gpus=(gpu(office(noisy(35, 8), idle_pct), reserved(0.9 * A10G)),),
            cpu=office(noisy(12, 2), quiet_cpu),
            network_gbps=office(noisy(0.08, 0.02, lo=0.05), quiet_network),
            host_memory_pct=noisy(30, 1),
        ),
        expect(F.SCHEDULABLE),
        "nothing calls it nights and weekends (no kernel, no traffic); vLLM's up-front reservation is not work: a "
        "stop/start pair for Mon-Fri 08-19 saves ~2/3",
        may_stop=True,
    ),
    # --- video transcoding -------------------------------------------------------------------
    Archetype(
        "live-abr-ladder-t4",
        Category.VIDEO,
        "a live-streaming encoder: an ABR ladder of 4 renditions on the T4's NVENC, SMs nearly idle, network busy",
        "g4dn.2xlarge",
        Workload(
            gpus=(transcoder(4, 30),),
            memory_total_mib=T4,
            cpu=noisy(25, 3),
            network_gbps=noisy(1.5, 0.1, lo=0),
            host_memory_pct=noisy(30, 2),
        ),
        expect(F.OPTIMIZED, F.OVERPROVISIONED),
        f"the work is on NVENC, not the SMs ({SM_ONLY}); it stays on a GPU with at least the T4's encoder ({NVENC}); "
        "the smaller g4dn.xlarge would also carry its ~2 busy vCPUs",
        target=TargetMust(units=1, min_encoders=1),
    ),
    Archetype(
        "vod-transcoder-l4",
        Category.VIDEO,
        "a VOD transcoding worker on an L4: 6 NVENC sessions at ~120 fps, ffmpeg muxing on half of 4 vCPUs",
        "g6.xlarge",
        Workload(
            gpus=(transcoder(6, 120, sm=6),),
            memory_total_mib=L4,
            cpu=noisy(50, 5),
            network_gbps=noisy(0.4, 0.05, lo=0),
            host_memory_pct=noisy(35, 2),
        ),
        expect(F.OPTIMIZED),
        f"the smallest L4 host, its 2 NVENC engines busy; any move needs a GPU with 2 or more ({NVENC})",
        target=TargetMust(min_encoders=2),
    ),
    Archetype(
        "file-transcoder-quiet-host",
        Category.VIDEO,
        "batch transcoding from EBS to EBS: two NVENC sessions at 240 fps; SMs, CPU and network all quiet",
        "g4dn.2xlarge",
        Workload(
            gpus=(transcoder(2, 240),), memory_total_mib=T4, cpu=noisy(4, 1, lo=0.5), host_memory_pct=noisy(20, 1)
        ),
        expect(F.OPTIMIZED, F.OVERPROVISIONED),
        f"{SM_ONLY}; EBS traffic is not in NetworkIn/Out: the encoder sessions are the work, so never a stop; a "
        "smaller host must keep a T4-class NVENC",
        target=TargetMust(units=1, min_encoders=1),
    ),
    Archetype(
        "v100-transcoder-3-nvenc",
        Category.VIDEO,
        "a transcoder running 9 sessions on a V100's three NVENC engines",
        "p3.2xlarge",
        Workload(
            gpus=(transcoder(9, 30),),
            memory_total_mib=V100,
            cpu=noisy(12, 2),
            network_gbps=constant(0.3),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.OVERPROVISIONED, F.OPTIMIZED),
        f"9 sessions need three encoders: an L40S (3) carries them for less, a T4/A10G (1), L4 (2) or A100 (0) does "
        f"not ({NVENC})",
        target=TargetMust(units=1, min_encoders=3),
    ),
    Archetype(
        "transcoder-without-encoder-stats",
        Category.VIDEO,
        "a transcoder whose agent config predates the encoder stats: SMs ~1.5 %, CPU 30 %, network 0.4 Gbps",
        "g4dn.xlarge",
        Workload(
            gpus=(transcoder(5, 60),),
            memory_total_mib=T4,
            cpu=noisy(30, 4),
            network_gbps=noisy(0.4, 0.05, lo=0),
            encoder_stats=False,
        ),
        expect(F.NOT_GPU_BOUND, F.INSUFFICIENT_DATA, F.OPTIMIZED),
        f"{SM_ONLY}: without encoder_stats a transcoder looks like a CPU service (or, from its steady ~1.5 % SM "
        "load, like a light GPU service kept as it is); the advice must say so, at low confidence, and offer nothing "
        "that removes the GPU",
        one_click=False,
        target=NO_TARGET,
        max_confidence=Confidence.LOW,
    ),
    # --- graphics ----------------------------------------------------------------------------
    Archetype(
        "dcv-windows-workstation",
        Category.GRAPHICS,
        "a Windows CAD workstation used through DCV on weekdays 09-18 (Dublin, UTC in December)",
        "g5.2xlarge",
        Workload(
            gpus=(
                Gpu(
                    office(noisy(25, 8), idle_pct, 9, 18),
                    office(mib(6 * GIB, 200), constant(0.6 * GIB), 9, 18),
                    encoder_sessions=office(constant(1.0), constant(0.0), 9, 18),
                    encoder_fps=office(noisy(45, 8, lo=1), constant(0.0), 9, 18),
                ),
            ),
            cpu=office(noisy(20, 4), quiet_cpu, 9, 18),
            network_gbps=office(noisy(0.02, 0.005, lo=0), quiet_network, 9, 18),
            host_memory_pct=noisy(40, 2),
        ),
        expect(F.SCHEDULABLE),
        f"{DCV}: the session is the work, and it ends at 18:00; 123 of 168 hours nobody is connected: a weekday "
        "schedule saves ~70 %, and any resize keeps an NVENC",
        region="eu-west-1",
        platform=WINDOWS,
        may_stop=True,
        one_click=True,
        target=TargetMust(min_encoders=1),
    ),
    Archetype(
        "pixel-streaming-kiosk",
        Category.GRAPHICS,
        "an Unreal Engine Pixel Streaming showroom on Windows, rendering and encoding around the clock",
        "g5.2xlarge",
        Workload(
            gpus=(
                Gpu(noisy(55, 8), mib(9 * GIB, 100), encoder_sessions=constant(1.0), encoder_fps=noisy(60, 2, lo=1)),
            ),
            cpu=noisy(45, 5),
            network_gbps=noisy(0.03, 0.005, lo=0),
            host_memory_pct=noisy(55, 2),
        ),
        expect(F.OPTIMIZED),
        "renders at ~55 % and streams one NVENC session all day: the smallest A10G host with the vCPUs and RAM it uses",
        platform=WINDOWS,
        target=TargetMust(min_encoders=1),
    ),
    Archetype(
        "render-node-nightly",
        Category.GRAPHICS,
        "a Deadline render worker: artists submit at the end of the day, Redshift saturates the A10G 20:00-06:00 UTC",
        "g5.4xlarge",
        Workload(
            gpus=(gpu(daily(noisy(97, 2), idle_pct, 20, 10), daily(mib(18 * GIB, 200), constant(0.0), 20, 10)),),
            cpu=daily(noisy(35, 4), quiet_cpu, 20, 10),
            network_gbps=daily(noisy(0.3, 0.05, lo=0), quiet_network, 20, 10),
            host_memory_pct=noisy(30, 2),
        ),
        expect(F.SCHEDULABLE),
        "busy the same 10 hours every night, quiet the other 98 hours of the week: a nightly stop/start pair; the "
        "renders saturate the GPU, so no smaller type",
        may_stop=True,
        one_click=True,
    ),
    # --- storage-bound work (issue 28) ---------------------------------------------------------
    Archetype(
        "parquet-shard-reader-g5-12xl",
        Category.STORAGE,
        "a preprocessing job streams parquet shards off io2 volumes at ~1.7 GB/s around the clock, tokenises them on "
        "48 vCPUs and feeds one A10G; the other three GPUs were asked for by a later stage that never ran",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(noisy(30, 5), mib(9 * GIB, 100)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
            cpu=noisy(40, 4),
            host_memory_pct=noisy(35, 2),
            ebs_mbps=around(1700, 50),
            ebs_iops=around(14_000, 800),
        ),
        expect(F.OVERPROVISIONED, F.OPTIMIZED),
        f"three GPUs never ran a kernel, but the host reads 1.7 GB/s from EBS all day: a target needs ~2 GB/s at its "
        f"EBS baseline, which no cheaper one-GPU type has ({EBS_OPTIMIZED}); she says why nothing smaller fits",
        target=TargetMust(min_ebs_mbps=1700 * 1.2),
        says=("EBS",),
    ),
    Archetype(
        "frame-extractor-ebs-g6-4xl",
        Category.STORAGE,
        "a video-frame extractor reads ~700 MB/s of footage from st1 volumes and runs a detector on one L4 at ~30 %",
        "g6.4xlarge",
        Workload(
            gpus=(gpu(noisy(30, 5), mib(6 * GIB, 80)),),
            memory_total_mib=L4,
            cpu=noisy(22, 3),
            host_memory_pct=noisy(30, 2),
            ebs_mbps=around(700, 40),
            ebs_iops=around(3_000, 200),
        ),
        expect(F.OPTIMIZED),
        f"its vCPUs and L4 would fit a g6.2xlarge, whose EBS baseline is 250 MB/s and bursts to 625 MB/s for half an "
        f"hour a day: 700 MB/s held for hours needs a baseline of ~840 MB/s ({EBS_OPTIMIZED})",
        target=TargetMust(min_ebs_mbps=700 * 1.2),
        says=("EBS throughput",),
    ),
    Archetype(
        "checkpoint-writer-iops-g6e-8xl",
        Category.STORAGE,
        "fine-tuning on one L40S that writes small checkpoint shards and reads a random-access dataset: ~40,000 EBS "
        "operations a second, ~400 MB/s",
        "g6e.8xlarge",
        Workload(
            gpus=(gpu(noisy(50, 6), mib(30 * GIB, 100, cap=L40S)),),
            memory_total_mib=L40S,
            cpu=noisy(25, 3),
            host_memory_pct=noisy(30, 2),
            ebs_mbps=around(400, 30),
            ebs_iops=around(40_000, 1_500),
        ),
        expect(F.OPTIMIZED, F.OVERPROVISIONED),
        f"the GPU and CPU would fit a g6e.4xlarge, whose EBS baseline is 32,000 IOPS: 40,000 a second held for hours "
        f"needs ~48,000 at the baseline ({EBS_OPTIMIZED})",
        target=TargetMust(min_ebs_iops=40_000 * 1.2),
        says=("EBS IOPS",),
    ),
    Archetype(
        "nightly-features-instance-store-g4dn-8xl",
        Category.STORAGE,
        "nightly feature extraction stages ~600 GB on the local NVMe and works it at ~900 MB/s from 22:00 to 04:00 "
        "UTC; a T4 scores the features while it runs",
        "g4dn.8xlarge",
        Workload(
            gpus=(gpu(daily(noisy(60, 6), idle_pct, 22, 6), daily(mib(8 * GIB, 80), constant(0.0), 22, 6)),),
            memory_total_mib=T4,
            cpu=daily(noisy(50, 4), quiet_cpu, 22, 6),
            network_gbps=daily(noisy(0.4, 0.05, lo=0), quiet_network, 22, 6),
            host_memory_pct=noisy(30, 2),
            ebs_mbps=daily(noisy(60, 5, lo=0), noisy(1, 0.2, lo=0), 22, 6),
            local_disk_mbps=daily(around(900, 40), noisy(0.5, 0.1, lo=0), 22, 6),
        ),
        expect(F.SCHEDULABLE, F.OPTIMIZED),
        "the job stages its data each night, so a stop outside its hours loses nothing it needs; any smaller type must "
        "keep the 900 GB of instance store the job fills",
        may_stop=True,
        target=TargetMust(min_instance_store_gb=900),
    ),
    # --- network-bound work and nodes that work together (issue 28) -------------------------------
    Archetype(
        "artifact-packager-g5-2xl",
        Category.NETWORK,
        "a CI packager builds model containers and pushes ~3.3 Gbps to ECR and S3 all day; an A10G smoke-tests builds",
        "g5.2xlarge",
        Workload(
            gpus=(gpu(bursts(noisy(8, 3), 40, every_hours=2, minutes=10), mib(3 * GIB, 50)),),
            cpu=noisy(18, 3),
            network_gbps=noisy(3.6, 0.15, lo=0),
            network_out_share=0.9,
            host_memory_pct=noisy(30, 2),
        ),
        expect(F.OVERPROVISIONED, F.OPTIMIZED),
        f"~3.3 Gbps out, held: a g5.xlarge ('up to 10 Gigabit', 2.5 at baseline) would throttle it; a type with 5 "
        f"Gbps at baseline carries it, in and out counted apart ({NETWORK_BASELINE})",
        target=TargetMust(min_network_gbps=3.3 * 1.2),
        says=("network (g6.xlarge",),
    ),
    Archetype(
        "feature-fetch-ena-express-g6e-12xl",
        Category.NETWORK,
        "an embedding service fetches features from a neighbouring cache over ENA Express (SRD) for tail latency; "
        "one of its four L40S serves",
        "g6e.12xlarge",
        Workload(
            gpus=(gpu(diurnal(25, 50), mib(20 * GIB, 80, cap=L40S)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
            memory_total_mib=L40S,
            cpu=diurnal(10, 20, 2),
            network_gbps=diurnal(3, 8, 0.3),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.OVERPROVISIONED, F.OPTIMIZED),
        "three GPUs are idle, but the service was set up on ENA Express, which the smaller L40S sizes lack: the target "
        "keeps it, or the host stays",
        ena_express=True,
        target=TargetMust(ena_express=True),
    ),
    Archetype(
        "ingest-two-network-cards-g6e-24xl",
        Category.NETWORK,
        "a dataset ingest node with interfaces on both network cards (two 100-Gbit paths from two storage clusters), "
        "one L40S decoding and re-encoding samples",
        "g6e.24xlarge",
        Workload(
            gpus=(gpu(noisy(30, 5), mib(12 * GIB, 80, cap=L40S)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
            memory_total_mib=L40S,
            cpu=noisy(35, 4),
            network_gbps=noisy(60, 5, lo=0),
            network_out_share=0.1,
            host_memory_pct=noisy(40, 2),
        ),
        expect(F.OVERPROVISIONED, F.OPTIMIZED),
        f"~54 Gbps in, held, over two cards: only a type with two network cards and that baseline carries it "
        f"({NETWORK_BASELINE})",
        network_cards=2,
        target=TargetMust(min_network_cards=2, min_network_gbps=54 * 1.2),
    ),
    Archetype(
        "ddp-node-in-placement-group-g5-48xl",
        Category.NETWORK,
        "one of four g5.48xlarge nodes of a DDP job in cluster placement group 'vision-ddp', NCCL over EFA; "
        "torchrun starts four ranks per node, so four of its eight A10Gs train",
        "g5.48xlarge",
        Workload(
            gpus=(TRAINING_A10G,) * 4 + (IDLE_GPU,) * 4,
            cpu=noisy(25, 3),
            network_gbps=noisy(20, 2, lo=0),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.OVERPROVISIONED),
        "the four idle GPUs are real waste, but the node trains in lockstep with three others: resizing it alone "
        "leaves a mixed group and a job that waits for its slowest node; the advice is the group's, never one click",
        uses_efa=True,
        placement_group="vision-ddp",
        one_click=False,
        target=TargetMust(units=4),
        says=("placement group 'vision-ddp'",),
    ),
    Archetype(
        "llm-train-node-placement-group-p5",
        Category.NETWORK,
        "a node of a 16-node LLM pre-training job in cluster placement group 'llm-pretrain': 8 H100s at ~90 %, EFA at "
        "~200 Gbps each way",
        "p5.48xlarge",
        Workload(
            gpus=(gpu(training(90), mib(70 * GIB, 100, cap=H100)),) * 8,
            memory_total_mib=H100,
            cpu=noisy(30, 3),
            network_gbps=around(400, 20),
            network_out_share=0.5,
            host_memory_pct=noisy(40, 2),
        ),
        expect(F.OPTIMIZED),
        "every GPU busy and the network at 200 Gbps each way over EFA: nothing cheaper has 8 H100s and that baseline",
        uses_efa=True,
        placement_group="llm-pretrain",
        target=NO_TARGET,
    ),
    # --- a GPU gone from the bus (issue 28) --------------------------------------------------------
    Archetype(
        "xid79-training-p4d",
        Category.GPU_LOST,
        "an 8-A100 training host whose GPU 3 fell off the bus three days ago; the job restarted on the other seven",
        "p4d.24xlarge",
        Workload(
            gpus=(TRAINING_A100,) * 3 + (agent_stopped(THREE_DAYS_AGO, TRAINING_A100),) + (TRAINING_A100,) * 4,
            memory_total_mib=A100,
            cpu=noisy(35, 3),
            network_gbps=noisy(5, 0.5, lo=0),
            host_memory_pct=noisy(45, 2),
        ),
        expect(F.GPU_LOST),
        f"one GPU's series stop while its siblings train on: {XID79}; the host pays for eight GPUs and uses seven",
        uses_efa=True,
        target=NO_TARGET,
        one_click=False,
        says=("Xid 79", "stop and start", "instance store"),
    ),
    Archetype(
        "lost-gpu-serving-g5-12xl",
        Category.GPU_LOST,
        "four inference replicas on a g5.12xlarge; GPU 1 stopped reporting five days ago while the others serve on",
        "g5.12xlarge",
        Workload(
            gpus=(
                gpu(diurnal(30, 55), mib(14 * GIB, 100)),
                agent_stopped(FIVE_DAYS_AGO, gpu(diurnal(30, 55), mib(14 * GIB, 100))),
                gpu(diurnal(30, 55), mib(14 * GIB, 100)),
                gpu(diurnal(30, 55), mib(14 * GIB, 100)),
            ),
            cpu=diurnal(10, 20, 2),
            network_gbps=diurnal(0.1, 0.4, 0.02),
            host_memory_pct=noisy(30, 2),
        ),
        expect(F.GPU_LOST),
        f"{XID79}; the three replicas left carry the traffic for now, so the fix is the host's, not a smaller type",
        target=NO_TARGET,
        one_click=False,
        says=("GPU 1 stopped reporting",),
    ),
    Archetype(
        "idle-gpu-gone-g4dn-12xl",
        Category.GPU_LOST,
        "a batch-scoring host whose GPU 2 was idle, then vanished two days ago; GPU 0 scores, GPUs 1 and 3 idle",
        "g4dn.12xlarge",
        Workload(
            gpus=(
                gpu(noisy(45, 6), mib(6 * GIB, 80)),
                IDLE_GPU,
                agent_stopped(TWO_DAYS_AGO, IDLE_GPU),
                IDLE_GPU,
            ),
            memory_total_mib=T4,
            cpu=noisy(15, 2),
            host_memory_pct=noisy(25, 2),
        ),
        expect(F.GPU_LOST),
        f"the vanished GPU is not 'one more idle GPU to drop': it is a fault to fix first ({XID79})",
        target=NO_TARGET,
        one_click=False,
        says=("fallen off the bus",),
    ),
    # --- GPU memory held, no work (issue 28) -------------------------------------------------------
    Archetype(
        "triton-nobody-calls-g5-2xl",
        Category.HELD,
        "a Triton server with three models loaded (12 GiB) that no client has called for two weeks",
        "g5.2xlarge",
        Workload(
            gpus=(held(12 * GIB),),
            cpu=noisy(1.5, 0.3, lo=0.1),
            network_gbps=noisy(0.0004, 0.0001, lo=0),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.HELD_UNUSED),
        "idle in all but memory: she says what it costs and to check the server's clients before stopping it; a "
        "one-click stop could take down a service someone is about to launch",
        one_click=False,
        max_confidence=Confidence.MEDIUM,
        says=("idle in all but memory", "costs"),
    ),
    Archetype(
        "tensorflow-session-4-t4",
        Category.HELD,
        "a TensorFlow notebook session that mapped all memory on four T4s ten days before the window ended and never "
        "ran a kernel since the data scientist left for holiday",
        "g4dn.12xlarge",
        Workload(
            gpus=(gpu(noisy(0.1, 0.1, hi=1.0), reserved(0.95 * T4, 5)),) * 4,
            memory_total_mib=T4,
            cpu=noisy(1.0, 0.2, lo=0.1),
            network_gbps=noisy(0.0003, 0.0001, lo=0),
            host_memory_pct=noisy(15, 1),
        ),
        expect(F.HELD_UNUSED),
        "TensorFlow maps nearly all memory at start: a session that holds it and runs nothing is idle in all but "
        "memory; the notebook's owner decides",
        region="eu-west-1",
        one_click=False,
        max_confidence=Confidence.MEDIUM,
        says=("all 4 GPUs hold",),
    ),
    Archetype(
        "training-ended-process-holds-a100",
        Category.HELD,
        "a training run finished five days ago, but a hung data-loader process still holds 30 GiB on each of four "
        "A100s",
        "p4d.24xlarge",
        Workload(
            gpus=(
                switch_gpu(
                    FIVE_DAYS_AGO, Gpu(training(88), mib(30 * GIB, 40)), Gpu(noisy(0.1, 0.1, hi=1.0), mib(30 * GIB, 5))
                ),
            )
            * 4
            + (IDLE_GPU,) * 4,
            memory_total_mib=A100,
            cpu=switch(FIVE_DAYS_AGO, noisy(30, 3), noisy(1.2, 0.2, lo=0.1)),
            network_gbps=switch(FIVE_DAYS_AGO, noisy(2, 0.2, lo=0), quiet_network),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.HELD_UNUSED),
        "the work ended, the process did not: idle in all but memory since; stopping it is the owner's call",
        region="ap-southeast-2",
        one_click=False,
        max_confidence=Confidence.MEDIUM,
        says=("idle in all but memory",),
    ),
    # --- graphics is not compute (issue 28) --------------------------------------------------------
    Archetype(
        "dcv-artist-workstation-light-g6-8xl",
        Category.GRAPHICS,
        "an artist's Linux workstation on Amazon DCV (the DCV AMI): Maya viewport at ~15 % of an L4, all day",
        "g6.8xlarge",
        Workload(
            gpus=(
                Gpu(
                    noisy(15, 4),
                    mib(5 * GIB, 100),
                    encoder_sessions=constant(1.0),
                    encoder_fps=noisy(30, 5, lo=1),
                ),
            ),
            memory_total_mib=L4,
            cpu=noisy(8, 2),
            network_gbps=noisy(0.02, 0.004, lo=0),
            host_memory_pct=noisy(25, 1),
        ),
        expect(F.OVERPROVISIONED, F.OPTIMIZED),
        "a desktop draws with OpenGL and streams on NVENC: any smaller type keeps a GPU that runs graphics "
        f"({NO_GRAPHICS})",
        image="DCV-AmazonLinux2-x86_64-2023.1.16388-NVIDIA-535.54.03-2023-09-12T12-50-07.770Z | Amazon DCV server",
        target=TargetMust(graphics=True, min_encoders=1),
        says=("a graphics host",),
    ),
    Archetype(
        "blender-scenes-fill-l40s",
        Category.GRAPHICS,
        "a Blender render node (procstat watches blender) whose scenes fill the L40S's memory a little more each night",
        "g6e.xlarge",
        Workload(
            gpus=(gpu(diurnal(40, 95, 4), follows_load(30 * GIB, 44.5 * GIB, cap=L40S)),),
            memory_total_mib=L40S,
            cpu=diurnal(20, 40, 3),
            host_memory_pct=noisy(50, 2),
            graphics_processes=("blender",),
        ),
        expect(F.UNDERPROVISIONED),
        f"the scene is near the top of the largest graphics GPU offered; an A100 or H100 has more memory but runs no "
        f"graphics ({NO_GRAPHICS}); a scene does not shard like a model: she says what fits or why nothing does",
        target=TargetMust(graphics=True),
        says=("scene", "graphics"),
    ),
    Archetype(
        "unreal-pixel-streaming-t4-full",
        Category.GRAPHICS,
        "Unreal Engine Pixel Streaming on a T4 (tag workload=unreal-pixel-streaming): its texture pool grows with "
        "visitors up to 97 % of the T4's memory",
        "g4dn.2xlarge",
        Workload(
            gpus=(
                Gpu(
                    diurnal(35, 70),
                    follows_load(9 * GIB, 14.55 * GIB, cap=T4),
                    encoder_sessions=constant(2.0),
                    encoder_fps=noisy(60, 2, lo=1),
                ),
            ),
            memory_total_mib=T4,
            cpu=diurnal(25, 45, 3),
            network_gbps=diurnal(0.05, 0.2, 0.01),
            host_memory_pct=noisy(45, 2),
        ),
        expect(F.UNDERPROVISIONED),
        f"a real out-of-memory risk on a graphics workload: more memory on a GPU that renders and encodes (A10G, L4, "
        f"L40S), never an A100 ({NO_GRAPHICS})",
        tags={"workload": "unreal-pixel-streaming"},
        target=TargetMust(present=True, graphics=True, min_encoders=1),
        says=("a graphics host",),
    ),
    # --- notebooks ---------------------------------------------------------------------------
    Archetype(
        "jupyter-idle-model-loaded",
        Category.NOTEBOOK,
        "a Jupyter kernel left running with a 14 GiB model in GPU memory; nobody has run a cell in two weeks",
        "g5.xlarge",
        Workload(
            gpus=(held(14 * GIB),),
            cpu=noisy(1.2, 0.3, lo=0.1),
            network_gbps=noisy(0.0005, 0.0001, lo=0),
            host_memory_pct=noisy(35, 1),
        ),
        expect(F.HELD_UNUSED),
        f"a loaded model is not work: no kernel, CPU or traffic in 14 days ({PAI}); but the kernel's tensors are "
        "someone's session: she says what the host costs and to check the notebook before stopping it, never a "
        "one-click stop (medium confidence)",
        one_click=False,
        max_confidence=Confidence.MEDIUM,
        says=("idle in all but memory", "notebook"),
    ),
    Archetype(
        "office-hours-dev-box",
        Category.NOTEBOOK,
        "a team's notebook host used Mon-Fri 08-19 UTC",
        "g5.xlarge",
        Workload(
            gpus=(gpu(office(noisy(62, 8), idle_pct), mib(10 * GIB, 100, cap=A10G)),),
            cpu=office(noisy(35, 5), quiet_cpu),
            network_gbps=office(noisy(0.06, 0.01, lo=0.05), quiet_network),
            host_memory_pct=noisy(48, 2),
        ),
        expect(F.SCHEDULABLE),
        "113 of 168 hours quiet in both weeks, the same hours every weekday: a one-click stop/start pair",
        tags={"team": "notebooks"},
        may_stop=True,
        one_click=True,
    ),
    Archetype(
        "notebook-kernel-holds-memory-overnight",
        Category.NOTEBOOK,
        "a data scientist's notebook used 09-18 on weekdays; the kernel keeps its model in GPU memory overnight",
        "g5.2xlarge",
        Workload(
            gpus=(gpu(office(noisy(40, 10), idle_pct, 9, 18), mib(10 * GIB, 30)),),
            cpu=office(noisy(20, 4), quiet_cpu, 9, 18),
            network_gbps=office(noisy(0.01, 0.002, lo=0), quiet_network, 9, 18),
            host_memory_pct=noisy(40, 1),
        ),
        expect(F.SCHEDULABLE),
        "held memory is not work: the nights and weekends are quiet on the GPU, CPU and network; a weekday schedule "
        "saves ~70 % (the kernel must be restarted in the morning)",
        may_stop=True,
    ),
    Archetype(
        "sporadic-notebook",
        Category.NOTEBOOK,
        "one researcher's notebook: two hours on some weekdays, at a different time each day",
        "g5.2xlarge",
        Workload(
            gpus=(gpu(sporadic(noisy(60, 10), idle_pct, "sporadic-notebook"), mib(8 * GIB, 50)),),
            cpu=sporadic(noisy(25, 4), quiet_cpu, "sporadic-notebook"),
            network_gbps=sporadic(noisy(0.01, 0.002, lo=0), quiet_network, "sporadic-notebook"),
            host_memory_pct=noisy(30, 1),
        ),
        expect(F.SCHEDULABLE),
        "quiet ~85 % of the week, but the busy hours wander: no fixed schedule fits; start it when needed (an "
        "idle-stop), so no one-click schedule",
        may_stop=True,
        one_click=False,
    ),
    # --- CPU services on GPU hosts -----------------------------------------------------------
    Archetype(
        "cpu-web-service-g4dn",
        Category.CPU_SERVICE,
        "a Django web service deployed on a g4dn: it never touches the T4",
        "g4dn.2xlarge",
        Workload(
            gpus=(IDLE_GPU,),
            memory_total_mib=T4,
            cpu=diurnal(30, 55, 3),
            network_gbps=diurnal(0.1, 0.4, 0.02),
            host_memory_pct=noisy(45, 2),
        ),
        expect(F.NOT_GPU_BOUND),
        "the host works (CPU and network) and the GPU never ran a kernel nor opened an encoder session: move it to a "
        "CPU instance; stopping it would take the service down",
        one_click=False,
        target=NO_TARGET,
    ),
    Archetype(
        "nightly-cpu-etl",
        Category.CPU_SERVICE,
        "a nightly CPU-only ETL (01:00-03:00 UTC) on a GPU host whose GPU is never used",
        "g5.4xlarge",
        Workload(
            gpus=(IDLE_GPU,),
            cpu=daily(noisy(70, 5), quiet_cpu, 1, 2),
            network_gbps=daily(noisy(0.2, 0.03, lo=0), quiet_network, 1, 2),
            host_memory_pct=noisy(25, 1),
        ),
        expect(F.NOT_GPU_BOUND, F.SCHEDULABLE),
        "the nightly job is real work, so never idle; it needs no GPU (move it to a CPU type), or at least stop the "
        "host outside its two hours",
        may_stop=True,
        target=NO_TARGET,
    ),
    Archetype(
        "cpu-bound-preprocess-idle-gpus",
        Category.CPU_SERVICE,
        "a feature-extraction pipeline that saturates 48 vCPUs and feeds one A10G at ~30 %; GPUs 1-3 unused",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(noisy(30, 5), mib(8 * GIB, 100)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
            cpu=noisy(92, 2),
            host_memory_pct=noisy(40, 2),
        ),
        expect(F.NOT_GPU_BOUND),
        f"CPU-bound: more vCPUs with the one A10G in use (g5.16xlarge: 64 vCPUs, 1 GPU) raise GPU use; {GAO}",
        target=TargetMust(units=1, models=frozenset({"A10G"}), min_vcpus=49),
    ),
    # --- jobs that end or start inside the window --------------------------------------------
    Archetype(
        "finetune-ended-5-days-ago",
        Category.REGIME,
        "a 4-GPU fine-tuning run that finished 5 days ago; the host was left running",
        "g5.12xlarge",
        Workload(
            gpus=(switch_gpu(FIVE_DAYS_AGO, TRAINING_A10G, IDLE_GPU),) * 4,
            cpu=switch(FIVE_DAYS_AGO, noisy(30, 3), quiet_cpu),
            network_gbps=switch(FIVE_DAYS_AGO, noisy(0.5, 0.1, lo=0), quiet_network),
            host_memory_pct=switch(FIVE_DAYS_AGO, noisy(40, 2), noisy(4, 0.5)),
        ),
        expect(F.IDLE),
        "nothing has run for 5 days (process gone, GPUs, CPU and network quiet): stop it; the 9 busy days before "
        "are history, so medium confidence at most",
        may_stop=True,
        max_confidence=Confidence.MEDIUM,
    ),
    Archetype(
        "project-started-4-days-ago",
        Category.REGIME,
        "a new inference project: idle for 10 days after launch, serving 40-80 % for the last 4",
        "g5.xlarge",
        Workload(
            gpus=(switch_gpu(FOUR_DAYS_AGO, IDLE_GPU, gpu(diurnal(40, 80), mib(9 * GIB, 200))),),
            cpu=switch(FOUR_DAYS_AGO, quiet_cpu, diurnal(15, 30, 2)),
            network_gbps=switch(FOUR_DAYS_AGO, quiet_network, diurnal(0.05, 0.2, 0.01)),
            host_memory_pct=noisy(35, 2),
        ),
        expect(F.OPTIMIZED),
        "it works now: judged on the 4 days since the start it is the smallest A10G host, well used; the idle "
        "days before are no weekly pattern",
        target=NO_TARGET,
        max_confidence=Confidence.MEDIUM,
    ),
    Archetype(
        "pretraining-started-2-days-ago",
        Category.REGIME,
        "a p4d that waited 12 days for its data, then started training flat out two days ago",
        "p4d.24xlarge",
        Workload(
            gpus=(switch_gpu(TWO_DAYS_AGO, IDLE_GPU, TRAINING_A100),) * 8,
            memory_total_mib=A100,
            cpu=switch(TWO_DAYS_AGO, quiet_cpu, noisy(38, 4)),
            network_gbps=switch(TWO_DAYS_AGO, quiet_network, noisy(5, 0.5, lo=0)),
            host_memory_pct=switch(TWO_DAYS_AGO, noisy(3, 0.3), noisy(45, 2)),
        ),
        expect(F.OPTIMIZED, F.INSUFFICIENT_DATA),
        "it trains now; two days of the new work are too few to size it, and the 12 idle days before must never "
        "turn into a stop of a host that is training",
        uses_efa=True,
        target=NO_TARGET,
        max_confidence=Confidence.MEDIUM,
    ),
    Archetype(
        "traffic-moved-away",
        Category.REGIME,
        "a model served at ~85 % of an L40S until traffic moved to another region 5 days ago; ~20 % since",
        "g6e.2xlarge",
        Workload(
            gpus=(
                switch_gpu(FIVE_DAYS_AGO, gpu(noisy(85, 4), mib(9 * GIB, 100)), gpu(noisy(20, 3), mib(9 * GIB, 100))),
            ),
            memory_total_mib=L40S,
            cpu=switch(FIVE_DAYS_AGO, noisy(30, 3), noisy(8, 1)),
            network_gbps=switch(FIVE_DAYS_AGO, noisy(0.2, 0.02, lo=0), noisy(0.05, 0.01, lo=0)),
            host_memory_pct=noisy(30, 1),
        ),
        expect(F.OVERPROVISIONED, F.OPTIMIZED),
        "sized on the level since the step (~20 %), a smaller GPU carries it, but the old load may return: "
        "medium confidence at most; waiting a full window is also a sound answer",
        target=TargetMust(units=1),
        max_confidence=Confidence.MEDIUM,
    ),
    # --- Neuron training ---------------------------------------------------------------------
    Archetype(
        "trn1-pretrain-flat-out",
        Category.NEURON_TRAINING,
        "Neuron distributed training on all 32 NeuronCores of a trn1.32xlarge",
        "trn1.32xlarge",
        Workload(
            gpus=(neuron(noisy(92, 3)),) * 32,
            neuron=True,
            cpu=noisy(30, 3),
            network_gbps=noisy(20, 2, lo=0),
            host_memory_pct=noisy(35, 2),
        ),
        expect(F.OPTIMIZED),
        "every NeuronCore busy: nothing smaller holds 32 cores",
        uses_efa=True,
        target=NO_TARGET,
    ),
    Archetype(
        "trn1-half-the-cores",
        Category.NEURON_TRAINING,
        "a training job compiled for 16 NeuronCores (tp=8, dp=2) on a 32-core trn1.32xlarge",
        "trn1.32xlarge",
        Workload(
            gpus=(neuron(noisy(88, 4)),) * 16,
            neuron=True,
            cpu=noisy(20, 2),
            network_gbps=noisy(2, 0.3, lo=0),
            host_memory_pct=noisy(25, 1),
        ),
        expect(F.OVERPROVISIONED),
        f"16 of 32 cores never report ({NEURON_MONITOR}): half the host is paid for nothing, but no Trainium type has "
        "16 cores (trn1.2xlarge has 2): named, without a target, advice only",
        uses_efa=True,
        one_click=False,
        target=NO_TARGET,
    ),
    Archetype(
        "trn1-finetune-ended",
        Category.NEURON_TRAINING,
        "a fine-tuning job on a trn1.2xlarge that exited 5 days ago; neuron-monitor has reported no core since",
        "trn1.2xlarge",
        Workload(
            gpus=(neuron(noisy(90, 3)),) * 2,
            neuron=True,
            cpu=switch(FIVE_DAYS_AGO, noisy(35, 3), quiet_cpu),
            network_gbps=switch(FIVE_DAYS_AGO, noisy(0.3, 0.05, lo=0), quiet_network),
            host_memory_pct=switch(FIVE_DAYS_AGO, noisy(50, 2), noisy(5, 0.5)),
        ),
        expect(F.IDLE),
        f"{NEURON_MONITOR}, so silence since the job exited is what idle cores look like; CPU and network are quiet "
        "too: idle since then, medium confidence at most",
        may_stop=True,
        max_confidence=Confidence.MEDIUM,
        cores_report_until=FIVE_DAYS_AGO,
    ),
    # --- Neuron inference --------------------------------------------------------------------
    Archetype(
        "inf2-8xl-low-load",
        Category.NEURON_INFERENCE,
        "a BERT classifier on one Inferentia2 device at 5-20 %, on a 32-vCPU host using ~2",
        "inf2.8xlarge",
        Workload(
            gpus=(neuron(diurnal(5, 20)),) * 2,
            neuron=True,
            cpu=diurnal(3, 6, 0.5),
            network_gbps=diurnal(0.01, 0.05, 0.005),
            host_memory_pct=noisy(8, 0.5),
        ),
        expect(F.OVERPROVISIONED),
        "inf2.xlarge has the same Inferentia2 device (2 cores) with 4 vCPUs and 16 GiB, enough for ~3 vCPUs and "
        "~12 GiB, at ~40 % of the price; the compiled model runs unchanged",
        target=TargetMust(present=True, models=frozenset({"Inferentia2"}), units=2),
    ),
    Archetype(
        "inf1-recsys-eu",
        Category.NEURON_INFERENCE,
        "a recommender on 4 of 16 Inferentia NeuronCores at 8-22 %",
        "inf1.6xlarge",
        Workload(
            gpus=(neuron(diurnal(8, 22, 2)),) * 4,
            neuron=True,
            cpu=diurnal(6, 12, 1),
            host_memory_pct=noisy(18, 1),
        ),
        expect(F.OVERPROVISIONED),
        f"12 cores never report ({NEURON_MONITOR}); a 4-core inf1 with the vCPUs it uses carries the model as compiled",
        region="eu-west-1",
        target=TargetMust(present=True, models=frozenset({"Inferentia"})),
    ),
    Archetype(
        "inf2-model-loaded-no-traffic",
        Category.NEURON_INFERENCE,
        "an Inferentia2 endpoint in Sydney that holds its model on both cores but gets no requests",
        "inf2.xlarge",
        Workload(
            gpus=(neuron(noisy(0.1, 0.1, hi=1.0)),) * 2,
            neuron=True,
            cpu=noisy(1.5, 0.3, lo=0.1),
            network_gbps=noisy(0.0005, 0.0001, lo=0),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.IDLE),
        f"the cores report, so an application holds them ({NEURON_MONITOR}), but nothing runs on them: idle, naming "
        "the application, medium confidence",
        region="ap-southeast-2",
        may_stop=True,
        max_confidence=Confidence.MEDIUM,
    ),
    Archetype(
        "inf2-llm-tp12",
        Category.NEURON_INFERENCE,
        "Llama-2-13B compiled for tp_degree=12 with transformers-neuronx on inf2.24xlarge, 20-60 % with the day",
        "inf2.24xlarge",
        Workload(
            gpus=(neuron(diurnal(20, 60)),) * 12,
            neuron=True,
            cpu=diurnal(10, 20, 2),
            network_gbps=diurnal(0.02, 0.1, 0.01),
            host_memory_pct=noisy(30, 1),
        ),
        expect(F.OPTIMIZED),
        "the model is compiled for 12 cores and all 12 work: nothing smaller holds it without recompiling",
        target=NO_TARGET,
    ),
    # --- agent gaps and ownership ------------------------------------------------------------
    Archetype(
        "mig-a100",
        Category.OPERATIONS,
        "an A100 host partitioned with MIG for several teams: nvidia-smi publishes memory but no utilisation",
        "p4d.24xlarge",
        Workload(
            gpus=(gpu(noisy(40, 5), mib(20 * GIB, 200)),) * 8,
            memory_total_mib=A100,
            utilization_published=False,
            cpu=noisy(25, 3),
            host_memory_pct=noisy(30, 1),
        ),
        expect(F.INSUFFICIENT_DATA),
        f"{MIG}: memory alone cannot tell busy from idle; say which metric is missing (DCGM per GPU instance)",
        target=NO_TARGET,
    ),
    Archetype(
        "no-cuda-agent-busy",
        Category.OPERATIONS,
        "a render node whose CloudWatch agent has no nvidia_gpu section; its CPU works at ~30 %",
        "g5.4xlarge",
        Workload(gpus=(), cpu=noisy(30, 4), network_gbps=noisy(0.2, 0.03, lo=0), host_memory_pct=None),
        expect(F.INSUFFICIENT_DATA),
        "no GPU metric at all: the GPU may be busy; install the agent's nvidia_gpu section, never guess",
        target=NO_TARGET,
    ),
    Archetype(
        "no-cuda-agent-quiet",
        Category.OPERATIONS,
        "a quiet g4dn in Sydney with no GPU metrics (the agent was never configured)",
        "g4dn.xlarge",
        Workload(gpus=(), cpu=noisy(1.5, 0.4, lo=0.1), network_gbps=quiet_network, host_memory_pct=None),
        expect(F.INSUFFICIENT_DATA),
        "quiet CPU says nothing about a GPU nobody measured (NVENC from local NVMe would look the same): no stop",
        region="ap-southeast-2",
        target=NO_TARGET,
    ),
    Archetype(
        "idle-looking-without-encoder-stats",
        Category.OPERATIONS,
        "a g4dn with quiet SMs, CPU and network, whose agent config does not publish the encoder stats",
        "g4dn.xlarge",
        Workload(gpus=(IDLE_GPU,), memory_total_mib=T4, encoder_stats=False, cpu=noisy(2, 0.5, lo=0.1)),
        expect(F.IDLE, F.INSUFFICIENT_DATA),
        f"everything measured is quiet, but {SM_ONLY}: publish encoder_stats before a one-click stop",
        may_stop=True,
        one_click=False,
    ),
    Archetype(
        "asg-serving-node",
        Category.OPERATIONS,
        "an Auto Scaling group member serving one model on GPU 0 of four",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(diurnal(25, 55), mib(8 * GIB, 150, cap=A10G)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
            cpu=diurnal(4, 9, 1),
            host_memory_pct=noisy(10, 1),
        ),
        expect(F.EXCLUDED),
        "the group replaces whatever is done to the host: the advice (a 1-GPU type) goes to its launch template",
        region="eu-west-1",
        asg_name="serving-asg",
        one_click=False,
    ),
    Archetype(
        "opted-out-benchmark",
        Category.OPERATIONS,
        "a benchmark host its owner tagged rightsizer:ignore",
        "g5.8xlarge",
        Workload(gpus=(gpu(noisy(3, 1), mib(2 * GIB, 50)),), cpu=noisy(5, 1)),
        expect(F.EXCLUDED),
        "the owner opted out: reported, never touched",
        tags={"rightsizer:ignore": "benchmarks in January"},
        one_click=False,
    ),
    # --- nodes a cluster, node group or fleet launches ---------------------------------------------
    Archetype(
        "karpenter-node-idle",
        Category.OWNED,
        "a GPU node Karpenter launched for a NodePool; its pods are gone but a daemonset keeps it from being empty",
        "g5.2xlarge",
        Workload(gpus=(IDLE_GPU,), cpu=noisy(3, 0.5), host_memory_pct=noisy(12, 1)),
        expect(F.EXCLUDED),
        "Karpenter replaces a stopped node and recycles a resized one: the NodePool's disruption settings are the "
        "thing to change; a one-click stop would fight the controller",
        tags={
            "karpenter.sh/nodepool": "gpu",
            "karpenter.k8s.aws/ec2nodeclass": "default",
            "eks:eks-cluster-name": "ml",
        },
        one_click=False,
        says=("Karpenter NodePool 'gpu' (cluster 'ml')",),
    ),
    Archetype(
        "emr-rapids-core-node",
        Category.OWNED,
        "a core node of an EMR cluster running Spark RAPIDS at ~35 % of its T4",
        "g4dn.4xlarge",
        Workload(gpus=(gpu(noisy(35, 5), mib(6 * GIB, 50)),), memory_total_mib=T4, cpu=noisy(25, 3)),
        expect(F.EXCLUDED),
        "EMR owns its instance groups: a node stopped or resized in place is lost to HDFS and YARN; the instance "
        "group's type is what changes",
        tags={
            "aws:elasticmapreduce:job-flow-id": "j-2AXXXXXXGAPLF",
            "aws:elasticmapreduce:instance-group-role": "CORE",
        },
        one_click=False,
        says=("EMR cluster",),
    ),
    Archetype(
        "parallelcluster-static-node",
        Category.OWNED,
        "a static compute node of a ParallelCluster Slurm queue, idle between job waves",
        "p3.2xlarge",
        Workload(gpus=(IDLE_GPU,), memory_total_mib=V100, cpu=noisy(2, 0.5)),
        expect(F.EXCLUDED),
        "Slurm marks a node stopped behind its back as down and ParallelCluster replaces it: MinCount and "
        "ScaledownIdletime are the levers",
        tags={"parallelcluster:cluster-name": "hpc", "parallelcluster:node-type": "Compute"},
        one_click=False,
        says=("ParallelCluster",),
    ),
    Archetype(
        "ray-worker-idle",
        Category.OWNED,
        "a Ray autoscaler worker kept by min_workers",
        "g5.xlarge",
        Workload(gpus=(IDLE_GPU,), cpu=noisy(2.5, 0.5)),
        expect(F.EXCLUDED),
        "the Ray autoscaler launches and terminates its workers; min_workers keeps this one",
        tags={"ray-cluster-name": "research", "ray-node-type": "worker"},
        one_click=False,
        says=("min_workers",),
    ),
    Archetype(
        "self-managed-k8s-node",
        Category.OWNED,
        "a self-managed Kubernetes GPU node (kubeadm, no node group) running one light inference pod",
        "g5.4xlarge",
        Workload(gpus=(gpu(noisy(12, 3), mib(5 * GIB, 50)),), cpu=noisy(6, 1), host_memory_pct=noisy(20, 1)),
        expect(F.EXCLUDED),
        "the cluster schedules pods onto it and its node management replaces it: a smaller node type is advice for "
        "whoever defines the nodes",
        tags={"kubernetes.io/cluster/edge": "owned"},
        one_click=False,
    ),
    Archetype(
        "unknown-aws-service-node",
        Category.OWNED,
        "a GPU host some AWS service launched (its tags say aws:..., a prefix only AWS can set)",
        "g5.xlarge",
        Workload(gpus=(IDLE_GPU,), cpu=noisy(2, 0.5)),
        expect(F.EXCLUDED),
        "whatever set the aws: tag may replace the host: act through that service, never a stop in place",
        tags={"aws:deadline:fleet-id": "fleet-1"},
        one_click=False,
        says=("aws:deadline:fleet-id",),
    ),
    # --- more shapes no issue named ---------------------------------------------------------------
    Archetype(
        "agent-stopped-3-days-ago",
        Category.OPERATIONS,
        "an A10G inference service at 35-60 %; the CloudWatch agent crashed 3 days ago, EC2 metrics go on",
        "g5.2xlarge",
        Workload(
            gpus=(agent_stopped(THREE_DAYS_AGO, gpu(diurnal(35, 60), mib(9 * GIB, 100))),),
            cpu=diurnal(10, 20, 2),
            network_gbps=diurnal(0.05, 0.2, 0.01),
            host_memory_pct=until(THREE_DAYS_AGO, noisy(40, 2)),
        ),
        expect(F.OPTIMIZED, F.INSUFFICIENT_DATA),
        "missing is not quiet: the 11 days measured say the host works; the last 3 are unknown, so nothing is one "
        "click and the reasons say the agent stopped",
        one_click=False,
        max_confidence=Confidence.MEDIUM,
        says=("stopped on",),
    ),
    Archetype(
        "idle-before-agent-stopped",
        Category.OPERATIONS,
        "a g5 idle for 10 days whose agent then stopped; CPU still quiet",
        "g5.xlarge",
        Workload(gpus=(agent_stopped(FOUR_DAYS_AGO, IDLE_GPU),), cpu=noisy(2, 0.4, lo=0.1)),
        expect(F.IDLE),
        "idle for the 10 days measured, but what the GPU did in the last 4 is unknown: advice, not a one-click stop",
        may_stop=True,
        one_click=False,
        says=("stopped on",),
    ),
    Archetype(
        "nvdec-decode-to-cpu",
        Category.VIDEO,
        "ffmpeg decodes camera streams on NVDEC (SMs ~1 %) and OpenCV analyses the frames on 16 vCPUs",
        "g4dn.4xlarge",
        Workload(
            gpus=(gpu(noisy(1, 0.4, hi=3), mib(600, 20)),),
            memory_total_mib=T4,
            cpu=noisy(60, 5),
            network_gbps=noisy(0.05, 0.01, lo=0),
            host_memory_pct=noisy(30, 2),
        ),
        expect(F.NOT_GPU_BOUND, F.OPTIMIZED),
        f"{SM_ONLY}; NVDEC work has no Linux metric: a steady 1 % on the SMs with memory held is a GPU in use (kept), "
        "and where it reads as unused, the move off GPUs is advice to check (medium at most, naming NVDEC)",
    ),
    Archetype(
        "nvdec-decode-quiet-sms",
        Category.VIDEO,
        "the same decoder whose SMs read below 1 %: frames decoded on NVDEC, analysed on 16 busy vCPUs",
        "g4dn.4xlarge",
        Workload(
            gpus=(gpu(noisy(0.4, 0.2, hi=2), mib(600, 20)),),
            memory_total_mib=T4,
            cpu=noisy(60, 5),
            network_gbps=noisy(0.05, 0.01, lo=0),
            host_memory_pct=noisy(30, 2),
        ),
        expect(F.NOT_GPU_BOUND),
        f"{SM_ONLY}; NVDEC work has no Linux metric, and a process holding GPU memory says the GPU is open: the move "
        "off GPUs is likely right but must be checked first",
        max_confidence=Confidence.MEDIUM,
        says=("NVDEC",),
    ),
    Archetype(
        "deepstream-analytics",
        Category.VIDEO,
        "DeepStream: 16 camera streams decoded on NVDEC, a small detector on the SMs at ~12 %",
        "g4dn.2xlarge",
        Workload(
            gpus=(gpu(noisy(12, 3), mib(3 * GIB, 50)),),
            memory_total_mib=T4,
            cpu=noisy(20, 3),
            network_gbps=noisy(0.06, 0.01, lo=0),
            host_memory_pct=noisy(30, 2),
        ),
        expect(F.OPTIMIZED, F.OVERPROVISIONED),
        "the GPU works (kernels and decoders); a smaller host with the same T4 (or an NVDEC GPU) carries it",
        target=TargetMust(units=1, models=frozenset({"T4", "A10G", "L4"})),
    ),
    Archetype(
        "idle-gpu-cpu-not-measured",
        Category.OPERATIONS,
        "quiet GPU on a host whose AWS/EC2 CPU could not be read",
        "g5.xlarge",
        Workload(gpus=(IDLE_GPU,), cpu=constant(NOT_PUBLISHED), network_gbps=constant(NOT_PUBLISHED)),
        expect(F.IDLE),
        "the GPU does nothing, but a CPU service nobody measured looks the same: advice, no one-click stop",
        may_stop=True,
        one_click=False,
        max_confidence=Confidence.MEDIUM,
    ),
    Archetype(
        "windows-workstation-no-gpu-metrics",
        Category.GRAPHICS,
        "a Windows DCV workstation: the agent publishes no GPU metrics on Windows",
        "g4dn.2xlarge",
        Workload(gpus=(), cpu=office(noisy(15, 3), quiet_cpu), host_memory_pct=None),
        expect(F.INSUFFICIENT_DATA),
        "nothing measured the GPU, and the agent's nvidia_gpu section does not run on Windows: say how to publish it",
        platform=WINDOWS,
        target=NO_TARGET,
        says=("Linux only",),
    ),
    Archetype(
        "graviton-t4g-light",
        Category.ONLINE_INFERENCE,
        "an arm64 (Graviton) T4G inference service at ~15 % on 16 vCPUs it does not use",
        "g5g.4xlarge",
        Workload(gpus=(gpu(noisy(15, 3), mib(4 * GIB, 50)),), memory_total_mib=T4, cpu=noisy(5, 1)),
        expect(F.OVERPROVISIONED),
        "the arm64 build runs only on Graviton: a smaller g5g carries it, never an x86 g4dn",
        architecture="arm64",
        target=TargetMust(present=True, units=1),
    ),
    Archetype(
        "growing-traffic",
        Category.ONLINE_INFERENCE,
        "a new product's inference traffic growing from 10 % to 70 % of its A10G over the two weeks",
        "g5.xlarge",
        Workload(gpus=(gpu(ramp(10, 70), mib(8 * GIB, 100)),), cpu=ramp(3, 20, 1), host_memory_pct=noisy(30, 1)),
        expect(F.OPTIMIZED),
        "today's load (~70 %) is what a target must carry, not the two weeks' average: the smallest A10G host stays",
        target=NO_TARGET,
    ),
    Archetype(
        "cron-every-6-hours",
        Category.BATCH_INFERENCE,
        "a 30-minute scoring job every 6 hours on an A10G",
        "g5.4xlarge",
        Workload(
            gpus=(gpu(every(6, 30, noisy(90, 3), idle_pct), every(6, 30, constant(10 * GIB), constant(0.0))),),
            cpu=every(6, 30, noisy(40, 3), quiet_cpu),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.SCHEDULABLE, F.OVERPROVISIONED, F.OPTIMIZED),
        "four short runs a day: one daily stop/start pair cannot follow them (advice, or a batch job), never idle",
        one_click=False,
    ),
    Archetype(
        "weekend-only-batch",
        Category.BATCH_INFERENCE,
        "a batch pipeline that runs only on Saturdays and Sundays on four A10Gs",
        "g5.12xlarge",
        Workload(
            gpus=(gpu(lambda t, r: r.gauss(85, 4) if t.weekday() >= 5 else r.uniform(0, 0.4), mib(15 * GIB, 100)),) * 4,
            cpu=lambda t, r: r.gauss(40, 3) if t.weekday() >= 5 else r.gauss(1.5, 0.3),
            host_memory_pct=noisy(20, 1),
        ),
        expect(F.SCHEDULABLE),
        "busy the same 48 hours each week, quiet the 120 others: a weekly stop/start pair",
        may_stop=True,
    ),
    Archetype(
        "gpu-memory-leak",
        Category.ONLINE_INFERENCE,
        "a service whose GPU memory leaks from 4 to 22 GiB between weekly restarts, at ~20 % of its A10G",
        "g5.xlarge",
        Workload(
            gpus=(
                gpu(
                    noisy(20, 4),
                    lambda t, r: 4 * GIB + 18 * GIB * (t - (NOW - timedelta(days=14))) / timedelta(days=14),
                ),
            ),
            cpu=noisy(5, 1),
            host_memory_pct=noisy(30, 1),
        ),
        expect(F.OPTIMIZED, F.UNDERPROVISIONED),
        "the peak it reaches is what a target must hold (22 GiB x headroom): no T4 or L4 with less memory",
        target=TargetMust(min_memory_per_unit_mib=22 * GIB),
    ),
    Archetype(
        "oom-risk-ended-5-days-ago",
        Category.ONLINE_INFERENCE,
        "a T4 chat server whose KV cache filled the GPU with the afternoon load until a smaller model went out 5 days "
        "ago; 3-6 GiB since",
        "g4dn.xlarge",
        Workload(
            gpus=(
                gpu(
                    diurnal(30, 60),
                    lambda t, r: (
                        follows_load(6 * GIB, 15 * GIB, cap=T4 - 200)(t, r)
                        if t < FIVE_DAYS_AGO
                        else follows_load(3 * GIB, 6 * GIB)(t, r)
                    ),
                ),
            ),
            memory_total_mib=T4,
            cpu=diurnal(10, 20, 2),
            host_memory_pct=noisy(40, 2),
        ),
        expect(F.OPTIMIZED),
        "the out-of-memory risk ended with the smaller model: no paid upgrade now (the old peak still bounds any "
        "smaller target)",
        one_click=False,
        says=("no out-of-memory risk now",),
    ),
    Archetype(
        "dedicated-host-t4",
        Category.ONLINE_INFERENCE,
        "light T4 work on a Dedicated Host the company bought for licensing",
        "g4dn.4xlarge",
        Workload(gpus=(gpu(noisy(20, 3), mib(4 * GIB, 50)),), memory_total_mib=T4, cpu=noisy(5, 1)),
        expect(F.INSUFFICIENT_DATA, F.OPTIMIZED, F.OVERPROVISIONED),
        "EC2 bills the Dedicated Host, not the instance: no instance change saves money until the host is released",
        tenancy="host",
        priced=False,
        one_click=False,
        says=("Dedicated Host",),
    ),
    Archetype(
        "stops-itself-nightly",
        Category.OPERATIONS,
        "a batch-inference host that a Lambda starts at 08:00 and stops at 18:00 UTC every day",
        "g4dn.xlarge",
        Workload(
            gpus=(gpu(noisy(55, 6), mib(7 * GIB, 60)),),
            memory_total_mib=T4,
            cpu=noisy(25, 3),
            host_memory_pct=noisy(40, 2),
            runs=lambda t: 8 <= t.hour < 18,
        ),
        expect(F.OPTIMIZED),
        "while it runs the smallest T4 host is well used, and it already stops itself: priced on its ~304 hours a "
        "month (AWS/EC2 publishes CPUUtilization only while it runs), no further stop",
        target=NO_TARGET,
    ),
    Archetype(
        "resized-last-week",
        Category.OPERATIONS,
        "moved from g5.2xlarge to g5.4xlarge 5 days ago because its CPU was pinned; ~45 % of 16 vCPUs since",
        "g5.4xlarge",
        Workload(
            gpus=(gpu(noisy(45, 5), mib(10 * GIB, 100)),),
            cpu=lambda t, r: r.gauss(97, 1) if t < FIVE_DAYS_AGO else r.gauss(45, 3),
            host_memory_pct=noisy(40, 2),
            previous_type="g5.2xlarge",
            resized_at=FIVE_DAYS_AGO,
        ),
        expect(F.OPTIMIZED),
        "judged on the 5 days since the resize: ~45 % of 16 vCPUs needs ~11 at the 70 % target, so not 8 again; "
        "the old type's load buys nothing; no one click until a full window",
        one_click=False,
        target=NO_TARGET,
        max_confidence=Confidence.MEDIUM,
    ),
    Archetype(
        "ram-not-published-2-of-8",
        Category.OPERATIONS,
        "two GPUs of a g5.48xlarge serve; the agent config has no mem section (no mem_used_percent)",
        "g5.48xlarge",
        Workload(
            gpus=(gpu(diurnal(30, 50), mib(9 * GIB, 100)),) * 2 + (IDLE_GPU,) * 6,
            cpu=diurnal(3, 6, 0.5),
            host_memory_pct=None,
        ),
        expect(F.OVERPROVISIONED),
        "six GPUs never ran a kernel; a 2-or-more-GPU type is enough, but without host RAM measured the resize "
        "must wait for mem_used_percent (no one click)",
        one_click=False,
    ),
    # --- decided by DCGM's signals: kernel time alone gets each of these wrong --------------------------------------
    Archetype(
        "small-batch-server-l40s",
        Category.SIGNALS,
        "a recommendation model served one request at a time on an L40S: a kernel in flight 97 % of the time, its SMs "
        "18 % busy",
        "g6e.xlarge",
        LAUNCH_BOUND_L40S,
        expect(F.OVERPROVISIONED),
        f"{SM_ACTIVE}; at 18 % it is a few SMs' work: an L4 carries it at ~55 % (x3.0 on FP32, tensor and "
        "bandwidth); kernel time reads a saturated GPU and would sell a faster one",
        target=TargetMust(present=True, models=frozenset({"L4"})),
        says=("SM active p95", "(DCGM, busiest GPU) while utilization.gpu reads p95"),
        without_dcgm=kernel_only(LAUNCH_BOUND_L40S),
    ),
    Archetype(
        "small-kernels-t4",
        Category.SIGNALS,
        "an embedding service on the smallest T4 host: kernel time pinned at 97 %, SM active 20 %",
        "g4dn.xlarge",
        LAUNCH_BOUND_T4,
        expect(F.OVERPROVISIONED),
        f"{SM_ACTIVE}; nothing smaller than a T4 host is offered, so the GPU is told how to use what it pays for "
        "(batching, CUDA streams, MPS), not sold a faster one",
        target=NO_TARGET,
        one_click=False,
        max_confidence=Confidence.MEDIUM,
        says=("batch requests", "MPS", "most of its SMs wait"),
        without_dcgm=kernel_only(LAUNCH_BOUND_T4),
    ),
    Archetype(
        "bandwidth-bound-a10g",
        Category.SIGNALS,
        "a recommender's embedding lookups on an A10G: kernels 35 % of the time, the memory interface 60 % busy",
        "g5.2xlarge",
        Workload(
            gpus=(
                profiled(
                    noisy(35, 2),
                    mib(6 * GIB, 60),
                    sm_active=noisy(30, 2),
                    tensor_active=noisy(5, 1),
                    dram_active=noisy(60, 2),
                ),
            ),
            cpu=noisy(10, 2),
            host_memory_pct=noisy(30, 1),
        ),
        expect(F.OPTIMIZED, F.OVERPROVISIONED),
        f"DRAM active 60 % x 2.0 on an L4 is 120 %: its work is bandwidth-bound, and an L4 has half an A10G's "
        f"bandwidth ({BANDWIDTH}); kernel time's 35 % x 2.0 = 70 % would move it there",
        target=TargetMust(models=frozenset({"A10G", "L40S"})),
        says=("DRAM active p95",),
        without_dcgm=kernel_only(
            Workload(gpus=(gpu(noisy(35, 2), mib(6 * GIB, 60)),), cpu=noisy(10, 2), host_memory_pct=noisy(30, 1))
        ),
    ),
    Archetype(
        "tensor-heavy-a10g",
        Category.SIGNALS,
        "fine-tuning a small model in bf16 on an A10G: kernels 60 % of the time, tensor cores 45 %, DRAM 25 %",
        "g5.2xlarge",
        TENSOR_HEAVY_A10G,
        expect(F.OVERPROVISIONED),
        "an L4 has 1.7x an A10G's dense tensor throughput and half its bandwidth: tensor 45 % -> 26 %, DRAM 25 % -> "
        "50 %, SMs 50 % -> 52 %: it fits; kernel time x the bandwidth ratio (120 %) says nothing cheaper does",
        target=TargetMust(present=True, models=frozenset({"L4"})),
        max_confidence=Confidence.MEDIUM,
        says=("tensor active p95",),
        without_dcgm=kernel_only(TENSOR_HEAVY_A10G),
    ),
    Archetype(
        "transcoder-l40s-dcgm",
        Category.SIGNALS,
        "a live-stream transcoder on an L40S: its 3 NVENC 20 % busy, NVDEC 15 %, SMs ~3 %",
        "g6e.xlarge",
        TRANSCODER_L40S,
        expect(F.OVERPROVISIONED),
        f"NVENC utilisation 20 % of 3 engines is under one engine's work: an L4's 2 NVENC carry it ({NVENC}); session "
        "counts cannot be projected, so on them every engine is kept",
        target=TargetMust(present=True, models=frozenset({"L4"}), min_encoders=1),
        says=("NVENC utilisation p95",),
        without_dcgm=kernel_only(
            Workload(gpus=(transcoder(4, 30, sm=4),), cpu=noisy(25, 3), host_memory_pct=noisy(35, 1))
        ),
    ),
    Archetype(
        "decoder-only-a10g",
        Category.SIGNALS,
        "a video-analytics front end decoding camera streams on NVDEC for a CPU model: SMs ~1 %, 2 GiB held, "
        "NVDEC 40 %",
        "g5.xlarge",
        Workload(
            gpus=(
                profiled(
                    noisy(1, 0.5),
                    mib(2 * GIB, 30),
                    sm_active=noisy(1, 0.5),
                    tensor_active=constant(0.0),
                    dram_active=noisy(3, 1),
                    encoder_util=constant(0.0),
                    decoder_util=noisy(40, 5),
                ),
            ),
            cpu=noisy(35, 3),
            host_memory_pct=noisy(40, 1),
            encoder_stats=False,
        ),
        expect(F.OPTIMIZED, F.OVERPROVISIONED),
        f"{SM_ONLY}: DCGM's NVDEC utilisation shows the decoders at work, which no nvidia-smi field the agent "
        "publishes does; without it the GPU looks like memory held by nobody",
        target=TargetMust(models=frozenset({"A10G", "L4"})),
        says=("NVDEC utilisation p95",),
        without_dcgm=kernel_only(
            Workload(gpus=(gpu(noisy(1, 0.5), mib(2 * GIB, 30)),), cpu=noisy(35, 3), host_memory_pct=noisy(40, 1))
        ),
    ),
    Archetype(
        "mig-slices-a100",
        Category.SIGNALS,
        "an A100 host in MIG mode, each GPU cut into two 3g.20gb slices for small inference services: SM active ~9 % "
        "of a slice's SMs, 3 GiB each",
        "p4d.24xlarge",
        Workload(
            gpus=(gpu(constant(0.0), mib(6.5 * GIB, 100)),) * 8,
            memory_total_mib=A100,
            utilization_published=False,
            cpu=noisy(20, 3),
            host_memory_pct=noisy(30, 1),
            slices=tuple(
                Slice(index, instance, "3g.20gb", noisy(9, 2), mib(3 * GIB, 50))
                for index in range(8)
                for instance in "12"
            ),
        ),
        expect(F.OVERPROVISIONED),
        f"{MIG}; DCGM measures each GPU instance: 9 % of three compute slices is 27 % of one, and 3 GiB x 1.2 fits "
        "5 GB, so a 1g.5gb carries each slice and a repartition frees four of each GPU's seven compute slices "
        "(https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html)",
        target=NO_TARGET,
        says=("MIG instance 3g.20gb on GPU 0", "a 1g.5gb carries it", "(DCGM)"),
        without_dcgm=Workload(
            gpus=(gpu(constant(0.0), mib(6.5 * GIB, 100)),) * 8,
            memory_total_mib=A100,
            utilization_published=False,
            cpu=noisy(20, 3),
            host_memory_pct=noisy(30, 1),
        ),
    ),
    Archetype(
        "forgotten-experiment-p3",
        Category.OPERATIONS,
        "four V100s left running after an experiment; nothing has happened on the host for two weeks",
        "p3.8xlarge",
        Workload(gpus=(IDLE_GPU,) * 4, memory_total_mib=V100, cpu=noisy(1.5, 0.5, lo=0.2)),
        expect(F.IDLE),
        f"no kernel, encoder session, CPU or traffic in 14 days: stop it (EBS kept); {PAI}",
        region="eu-west-1",
        may_stop=True,
    ),
)

BY_NAME: dict[str, Archetype] = {a.name: a for a in ARCHETYPES}


# ---------------------------------------------------------------------------------------------
# Running the analyzer on an archetype.


def host(archetype: Archetype) -> Instance:
    digest = hashlib.sha256(archetype.name.encode()).hexdigest()[:17]
    found = factories.instance(
        archetype.instance_type,
        f"i-{digest}",
        tags={"Name": archetype.name, **archetype.tags},
        lifecycle=archetype.lifecycle,
        asg_name=archetype.asg_name,
        region=archetype.region,
        uses_efa=archetype.uses_efa,
    )
    if archetype.platform is not None:
        platform, operation = archetype.platform
        found = replace(found, platform=platform, usage_operation=operation)
    return replace(
        found,
        architecture=archetype.architecture,
        tenancy=archetype.tenancy,
        image=archetype.image,
        placement_group=archetype.placement_group,
        ena_express=archetype.ena_express,
        network_cards_used=archetype.network_cards,
    )


def _cut(series: Series, before: int) -> Series:
    keep = series.stamps < before
    return Series(series.period_seconds, series.stamps[keep], series.array[keep])


@cache
def usage(name: str) -> UsageSummary:
    """What the collector and summarize_all() make of the archetype's series (computed once per archetype)."""
    archetype = BY_NAME[name]
    raw = raw_usage(archetype.workload, instance_id=host(archetype).instance_id, seed=name)
    until = archetype.cores_report_until
    if until is not None:
        epoch = int(until.timestamp())
        devices = tuple(
            DeviceSeries(
                index=d.index,
                utilization_avg=_cut(d.utilization_avg, epoch),
                utilization_max=_cut(d.utilization_max, epoch),
            )
            for d in raw.devices
        )
        raw = replace(raw, devices=devices)
    return summarize_one(raw)


def advise(archetype: Archetype) -> Recommendation:
    region = archetype.region
    return analyze_instance(
        host(archetype), usage(archetype.name), factories.catalog(region), factories.prices(region), Policy(), NOW
    )


def advise_without_dcgm(archetype: Archetype) -> Recommendation:
    """The advice the archetype's host would get with the shipped agent configuration: kernel time, no DCGM."""
    if archetype.without_dcgm is None:
        raise ValueError(f"{archetype.name} has no kernel-time-only workload")
    instance = host(archetype)
    raw = raw_usage(archetype.without_dcgm, instance_id=instance.instance_id, seed=archetype.name)
    region = archetype.region
    catalog, prices = factories.catalog(region), factories.prices(region)
    return analyze_instance(instance, summarize_one(raw), catalog, prices, Policy(), NOW)


def violations(archetype: Archetype, rec: Recommendation) -> list[str]:
    """Where the recommendation breaks the archetype's expectation (empty: it meets it)."""
    found = []
    if rec.finding not in archetype.findings:
        found.append(f"finding {rec.finding.value}, expected {archetype.expected}")
    if not archetype.may_stop:
        if rec.finding is Finding.IDLE:
            found.append("a host that works was called idle")
        if rec.action in (ActionKind.STOP, ActionKind.SCHEDULE):
            found.append(f"a host that works gets a one-click {rec.action.value}")
    if archetype.one_click is not None and rec.actionable is not archetype.one_click:
        found.append(f"one click {rec.actionable}, expected {archetype.one_click}")
    cap = archetype.max_confidence
    if cap is not None and rec.confidence.at_most(cap) is not rec.confidence:
        found.append(f"confidence {rec.confidence.value}, at most {cap.value} expected")
    if archetype.priced and rec.monthly_cost is None:
        found.append("no monthly cost")
    saves = rec.finding in (Finding.IDLE, Finding.SCHEDULABLE) or bool(
        rec.finding is Finding.OVERPROVISIONED and rec.target_type
    )
    if saves and archetype.priced and not (rec.monthly_savings and rec.monthly_savings > 0):
        found.append(f"{rec.finding.value} without a saving ({rec.monthly_savings})")
    found.extend(_target_violations(archetype, rec))
    found.extend(f"no reason says {words!r}" for words in archetype.says if not any(words in r for r in rec.reasons))
    return found


def _target_violations(archetype: Archetype, rec: Recommendation) -> list[str]:
    must, name = archetype.target, rec.target_type
    if name is None:
        return ["a target was expected"] if must.present else []
    if must.absent:
        return [f"no target expected, got {name}"]
    catalog = factories.catalog(archetype.region)
    spec = catalog.spec(name)
    if spec is None:
        return [f"target {name} is not in the catalog"]
    found = []
    model = spec.accelerator_model or ""
    if must.units is not None and spec.compute_units != must.units:
        found.append(f"target {name} has {spec.compute_units} units, expected {must.units}")
    if must.models and model not in must.models:
        found.append(f"target {name} has {model}, expected one of {sorted(must.models)}")
    if archetype.architecture not in spec.architectures:
        found.append(f"target {name} does not run {archetype.architecture}")
    accelerator = catalog.accelerator(spec)
    encoders = accelerator.video_encoders if accelerator else 0
    if encoders < must.min_encoders:
        found.append(f"target {name} ({model}) has {encoders} NVENC, needs {must.min_encoders}")
    if spec.vcpus < must.min_vcpus:
        found.append(f"target {name} has {spec.vcpus} vCPUs, needs {must.min_vcpus}")
    if spec.memory_per_unit_mib < must.min_memory_per_unit_mib:
        found.append(
            f"target {name} has {spec.memory_per_unit_mib:.0f} MiB per unit, needs {must.min_memory_per_unit_mib:.0f}"
        )
    if must.graphics and not (accelerator and accelerator.graphics):
        found.append(f"target {name} ({model}) runs no graphics")
    if (spec.ebs_baseline_mbps or 0.0) < must.min_ebs_mbps:
        found.append(f"target {name} sustains {spec.ebs_baseline_mbps} MB/s of EBS, needs {must.min_ebs_mbps:.0f}")
    if (spec.ebs_baseline_iops or 0.0) < must.min_ebs_iops:
        found.append(f"target {name} sustains {spec.ebs_baseline_iops} EBS IOPS, needs {must.min_ebs_iops:.0f}")
    if spec.network_gbps < must.min_network_gbps:
        found.append(f"target {name} sustains {spec.network_gbps} Gbps, needs {must.min_network_gbps:.2f}")
    if spec.instance_storage_gb < must.min_instance_store_gb:
        found.append(
            f"target {name} has {spec.instance_storage_gb} GB of instance store, needs {must.min_instance_store_gb}"
        )
    if must.ena_express and not spec.ena_express:
        found.append(f"target {name} has no ENA Express")
    if spec.network_cards < must.min_network_cards:
        found.append(f"target {name} has {spec.network_cards} network card(s), needs {must.min_network_cards}")
    if archetype.uses_efa and not spec.efa_supported:
        found.append(f"target {name} has no EFA")
    return found


# ---------------------------------------------------------------------------------------------
# Teams: several hosts of one team, type and zone, whose work an expert would (or would not) put on fewer hosts
# (domain/consolidation.py). Each is read as the hosts' own series through the real summaries.


@dataclass(frozen=True)
class Team:
    name: str
    story: str
    instance_type: str
    members: tuple[Workload, ...]
    fewer_hosts: bool  # True: the expert puts the work on fewer hosts; False: each host keeps its own advice
    why: str
    keeps: int | None = None  # how many hosts the work fits (None: any fewer)
    says: tuple[str, ...] = ()  # words some reason of the consolidation advice must say
    # What the hosts would publish with the shipped agent configuration (no DCGM), where that changes the answer.
    without_dcgm: tuple[Workload, ...] | None = None


def _launch_bound_t4(sm: float, memory_gib: float) -> Workload:
    """An embedding replica on a g4dn.xlarge: a kernel always in flight (kernel time 96 %), few SMs busy."""
    return Workload(
        gpus=(
            profiled(
                noisy(96, 1.5),
                mib(memory_gib * GIB, 100),
                sm_active=noisy(sm, 2),
                tensor_active=noisy(sm / 3, 1),
                dram_active=noisy(sm / 2, 1),
            ),
        ),
        memory_total_mib=T4,
        cpu=noisy(12, 2),
        host_memory_pct=noisy(15, 1),
    )


def _dcgm_transcoder(encoder: float, decoder: float, memory_total_mib: float) -> Workload:
    """An ffmpeg NVENC transcoder on a host running agent/dcgm's publisher: the video engines work, the SMs barely."""
    return Workload(
        gpus=(
            profiled(
                noisy(4, 1),
                mib(1.5 * GIB, 40),
                sm_active=noisy(3, 1),
                tensor_active=constant(0.0),
                dram_active=noisy(4, 1),
                encoder_util=noisy(encoder, 3),
                decoder_util=noisy(decoder, 3),
            ),
        ),
        memory_total_mib=memory_total_mib,
        cpu=noisy(10, 2),
        host_memory_pct=noisy(20, 1),
        encoder_stats=False,  # agent/dcgm's configuration: NVENC utilisation replaces the session count
    )


TEAMS: tuple[Team, ...] = (
    Team(
        "embedding-replicas-t4",
        "three replicas of an embedding service, one per g4dn.xlarge: kernel time pinned at 96 %, SM active 14-18 %",
        "g4dn.xlarge",
        (_launch_bound_t4(14, 2.5), _launch_bound_t4(16, 3), _launch_bound_t4(18, 2.5)),
        True,
        f"{SM_ACTIVE}; three workloads at 14-18 % SM active fit one T4 under CUDA MPS (~50 %, memory 10 of 15 GiB); "
        "kernel time reads three saturated GPUs that nothing could share",
        keeps=1,
        says=("SM active (DCGM) p95 adding up to", "only CUDA MPS runs their kernels side by side"),
        without_dcgm=tuple(kernel_only(w) for w in (_launch_bound_t4(14, 2.5), _launch_bound_t4(16, 3))),
    ),
    Team(
        "transcode-pair-t4",
        "two live transcoders, one per g4dn.xlarge, each using a third of its T4's NVENC (DCGM's ENC utilisation)",
        "g4dn.xlarge",
        (_dcgm_transcoder(28, 20, T4), _dcgm_transcoder(24, 18, T4)),
        True,
        f"{NVENC}; the T4's one NVENC at ~30 % twice is ~60 % of it: one host carries both streams",
        keeps=1,
        says=("NVENC utilisation p95 adding up to",),
        without_dcgm=tuple(
            kernel_only(replace(w, gpus=tuple(replace(g, encoder_sessions=sessions(3)) for g in w.gpus)))
            for w in (_dcgm_transcoder(28, 20, T4), _dcgm_transcoder(24, 18, T4))
        ),
    ),
    Team(
        "busy-encoders-l4",
        "two transcoding hosts (g6.xlarge) whose SMs idle while their L4's two NVENCs are half busy each",
        "g6.xlarge",
        (_dcgm_transcoder(48, 30, L4), _dcgm_transcoder(44, 25, L4)),
        False,
        f"{NVENC}; the SMs would fit one GPU, the encoders would not: ~50 % of the NVENCs twice is past the ceiling",
    ),
    Team(
        "video-analytics-a10g",
        "three g5.xlarge decoding camera streams on NVDEC (DCGM's DEC utilisation 25-30 %) and running a small "
        "detector on the SMs",
        "g5.xlarge",
        tuple(
            Workload(
                gpus=(
                    profiled(
                        noisy(35, 3),
                        mib(4 * GIB, 100),
                        sm_active=noisy(12, 2),
                        tensor_active=noisy(6, 1),
                        dram_active=noisy(8, 1),
                        encoder_util=constant(0.0),
                        decoder_util=noisy(level, 2),
                    ),
                ),
                cpu=noisy(10, 2),
                host_memory_pct=noisy(25, 1),
                encoder_stats=False,
            )
            for level in (30, 25, 27)
        ),
        True,
        "NVDEC is the limit: three decoders at 25-30 % (p95 ~30 %) add up past one A10G's engines at the 80 % ceiling, "
        "though SM active (12 % each) and kernel time would let one GPU carry all three; two hosts carry them",
        keeps=2,
        says=("NVDEC utilisation p95 adding up to",),
    ),
)
TEAM_BY_NAME: dict[str, Team] = {t.name: t for t in TEAMS}


def team_hosts(team: Team, workloads: tuple[Workload, ...]) -> tuple[list[Instance], dict[str, UsageSummary]]:
    instances, summaries = [], {}
    for number, work in enumerate(workloads):
        name = f"{team.name}-{number}"
        digest = hashlib.sha256(name.encode()).hexdigest()[:17]
        found = factories.instance(team.instance_type, f"i-{digest}", tags={"Name": name, "team": team.name})
        instances.append(found)
        summaries[found.instance_id] = summarize_one(raw_usage(work, instance_id=found.instance_id, seed=name))
    return instances, summaries


def advise_team(team: Team, dcgm: bool = True) -> list[Recommendation]:
    """Each host's advice, then the steps across hosts, as a region's analysis makes them."""
    workloads = team.members if dcgm else team.without_dcgm
    if workloads is None:
        raise ValueError(f"{team.name} has no kernel-time-only members")
    instances, summaries = team_hosts(team, workloads)
    catalog, prices = factories.catalog(), factories.prices()
    return analyze_hosts(instances, summaries, catalog, prices, Policy(), NOW, {})


def team_violations(team: Team, recs: list[Recommendation]) -> list[str]:
    consolidated = [r for r in recs if r.finding is Finding.CONSOLIDATE]
    if not team.fewer_hosts:
        return [f"{r.instance_id} told to consolidate: {r.reasons[0]}" for r in consolidated]
    found = []
    if len(consolidated) != len(recs):
        found.append(f"{len(consolidated)} of {len(recs)} hosts told to consolidate")
    plans = {r.consolidation for r in consolidated}
    if len(plans) != 1 or None in plans:
        found.append(f"not one plan: {plans}")
    elif (plan := next(iter(plans))) is not None and len(plan.keep) >= len(recs):
        found.append(f"keeps {len(plan.keep)} of {len(recs)} hosts")
    elif plan is not None and team.keeps is not None and len(plan.keep) != team.keeps:
        found.append(f"keeps {len(plan.keep)} hosts, expected {team.keeps}")
    if consolidated and sum((r.monthly_savings or 0 for r in consolidated), 0) <= 0:
        found.append("no saving")
    if any(r.actionable for r in consolidated):
        found.append("consolidation offered as one click")
    reasons = [reason for r in consolidated for reason in r.reasons]
    found.extend(f"no reason says {words!r}" for words in team.says if not any(words in r for r in reasons))
    return found
