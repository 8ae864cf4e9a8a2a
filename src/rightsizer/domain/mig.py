"""MIG (Multi-Instance GPU): a GPU partitioned into GPU instances, each with its own SMs and memory, that several small
workloads share. nvidia-smi reads such a GPU's utilization.gpu as [N/A]; DCGM measures each instance (agent/dcgm
publishes its SM active and framebuffer per instance), so each slice is sized on its own: the smallest profile of its
GPU that carries what it does.

The profiles per GPU model are NVIDIA's: the Multi-Instance GPU User Guide, "Supported MIG Profiles"
(https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html). A profile's name is its geometry,
"<compute slices>g.<memory>gb": the compute slices are GPCs (an A100 or H100 has 7, an A30 4), the memory is the
instance's in GB. The "+me" variants (media extensions: the NVDEC/NVJPG/OFA units) have the same compute and memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.usage import SliceUsage
from rightsizer.domain.policy import Policy
from rightsizer.domain.signals import SIGNALS
from rightsizer.domain.wording import gib, pct

_NAME = re.compile(r"^(\d+)g\.(\d+)gb(?:\+me)?$")
_BYTES_PER_MIB = 2**20


@dataclass(frozen=True, slots=True)
class MigProfile:
    name: str  # "1g.5gb"
    compute_slices: int  # the "1g": GPCs of the GPU's
    memory_gb: int  # the ".5gb"

    @property
    def memory_mib(self) -> float:
        """The memory a workload may count on, in MiB: the name's GB read as 10^9 bytes, which is below what nvidia-smi
        shows such an instance ("3g.20gb": 20224 MiB on an A100-SXM4-40GB), so a fit is never overstated."""
        return self.memory_gb * 1e9 / _BYTES_PER_MIB


def profile(name: str) -> MigProfile | None:
    """The profile a name describes ("3g.20gb", "MIG 1g.10gb+me"); None: not a GPU instance profile's name."""
    bare = name.strip().removeprefix("MIG ")
    found = _NAME.match(bare)
    return MigProfile(bare, int(found[1]), int(found[2])) if found else None


def _table(*names: str) -> tuple[MigProfile, ...]:
    found = tuple(one for name in names if (one := profile(name)) is not None)
    return tuple(sorted(found, key=lambda one: (one.compute_slices, one.memory_gb)))


@dataclass(frozen=True, slots=True)
class MigGpu:
    """A MIG-capable GPU: the model family as the accelerator table names it, its memory, and its profiles."""

    family: str  # the accelerator table's model starts with it: "A100" (A100-SXM4-40GB, A100-SXM4-80GB)
    memory_gb: int
    profiles: tuple[MigProfile, ...]


# NVIDIA MIG User Guide, "Supported MIG Profiles" (the "+me" variants left out: same compute and memory).
GPUS: tuple[MigGpu, ...] = (
    MigGpu("A30", 24, _table("1g.6gb", "2g.12gb", "4g.24gb")),
    MigGpu("A100", 40, _table("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")),
    MigGpu("A100", 80, _table("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")),
    MigGpu("H100", 80, _table("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")),
    MigGpu("H200", 141, _table("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")),
)
_FAMILIES = frozenset(gpu.family for gpu in GPUS)


def mig_gpu(spec: InstanceTypeSpec) -> MigGpu | None:
    """The MIG-capable GPU of an instance type (None: its GPUs do not partition): the family's entry whose memory is
    nearest the GPU's (EC2 says "A100" for the 40 and 80 GB parts alike)."""
    family = next((one for one in _FAMILIES if spec.accelerator_model.startswith(one)), None)
    if family is None:
        return None
    gib = spec.accelerator_memory_mib / 1024
    return min((gpu for gpu in GPUS if gpu.family == family), key=lambda gpu: abs(gpu.memory_gb - gib))


def mig_capable(spec: InstanceTypeSpec | None) -> bool:
    """Can the type's GPUs run in MIG mode (so publish per-instance readings)? Unknown types are asked too."""
    return spec is None or mig_gpu(spec) is not None


@dataclass(frozen=True, slots=True)
class SliceFit:
    """What one slice needs: the smallest profile of its GPU that carries its load (None: none does), against the
    profile it has."""

    gpu: str  # the GPU's index
    usage: SliceUsage
    current: MigProfile
    smallest: MigProfile | None
    saturated: bool  # its own profile does not carry it

    @property
    def smaller(self) -> bool:
        """A smaller profile carries it (the table's order puts it before the one it has)."""
        return not self.saturated and self.smallest is not None and self.smallest.name != self.current.name


def carries(usage: SliceUsage, current: MigProfile, candidate: MigProfile, policy: Policy) -> bool:
    """Does `candidate` carry the slice now on `current`? Its SM load (measured on the current profile's SMs) scaled
    by the compute slices stays within the policy's target at p95 and within its burst limit at the busiest 5 minutes;
    its memory peak x headroom fits (without a per-instance memory reading, no less memory than it has now)."""
    scale = current.compute_slices / candidate.compute_slices
    if usage.load.p95 * scale > policy.target_max_util_pct or usage.load.peak * scale > policy.burst_max_util_pct:
        return False
    if usage.memory_used_peak_mib is None:
        return candidate.memory_gb >= current.memory_gb
    return usage.memory_used_peak_mib * policy.memory_headroom <= candidate.memory_mib


def fit(gpu: str, usage: SliceUsage, table: MigGpu, policy: Policy) -> SliceFit | None:
    """The slice's fit on its GPU's profiles (None: its profile is not one this GPU has, so nothing is projected)."""
    current = next((one for one in table.profiles if one.name == _bare(usage.profile)), None)
    if current is None:
        return None
    smallest = next((one for one in table.profiles if carries(usage, current, one, policy)), None)
    return SliceFit(gpu, usage, current, smallest, saturated=not carries(usage, current, current, policy))


def _bare(name: str) -> str:
    return name.removeprefix("MIG ").removesuffix("+me")


def fit_text(one: SliceFit) -> str:
    """What the slice does and what carries it: 'MIG instance 3g.20gb on GPU 0 (GPU instance 2): SM active p95 9%,
    busiest 5 minutes 11% (DCGM), memory peak 3.1 GiB: a 1g.5gb carries it'."""
    usage = one.usage
    label = SIGNALS[usage.signal].label
    memory = (
        f"memory peak {gib(usage.memory_used_peak_mib)}"
        if usage.memory_used_peak_mib is not None
        else "memory not published per instance (kept as it is)"
    )
    lead = (
        f"MIG instance {usage.profile} on GPU {one.gpu} (GPU instance {usage.gpu_instance}): {label} p95 "
        f"{pct(usage.load.p95)}, busiest 5 minutes {pct(usage.load.peak)} (DCGM), {memory}"
    )
    if one.smallest is None:
        return f"{lead}: no profile of this GPU carries it within the policy's limits"
    if one.saturated:
        return f"{lead}: it needs a {one.smallest.name}"
    if one.smaller:
        return f"{lead}: a {one.smallest.name} carries it"
    return f"{lead}: its profile fits"


def fits(gpus: Sequence[tuple[str, Sequence[SliceUsage]]], table: MigGpu, policy: Policy) -> list[SliceFit]:
    """Every slice's fit, GPU by GPU: those with `policy.min_days` of readings, on a profile the GPU has (the others
    are left out: `unsized` names them)."""
    return [
        found
        for gpu, slices in gpus
        for usage in slices
        if days_read(usage) >= policy.min_days and (found := fit(gpu, usage, table, policy)) is not None
    ]


def unsized(
    gpus: Sequence[tuple[str, Sequence[SliceUsage]]], found: Sequence[SliceFit], model: str, policy: Policy
) -> list[str]:
    """The slices `fits` left out, and why: too few days of readings (a slice created lately), or a profile the GPU's
    table does not have."""
    sized = {(one.gpu, one.usage.gpu_instance) for one in found}
    return [
        f"MIG instance {usage.profile} on GPU {gpu}: "
        + (
            f"only {days_read(usage):.1f} days of readings (at least {policy.min_days:g} are needed)"
            if days_read(usage) < policy.min_days
            else f"not one of the {model}'s MIG profiles"
        )
        for gpu, slices in gpus
        for usage in slices
        if (gpu, usage.gpu_instance) not in sized
    ]


# The collector reads a slice's load as 5-minute Averages (adapters/aws/cloudwatch.py): each is 300 s of readings.
_LOAD_PERIOD_SECONDS = 300


def days_read(usage: SliceUsage) -> float:
    """Days of readings of the slice's load (its 5-minute averages)."""
    return usage.load.samples * _LOAD_PERIOD_SECONDS / 86400
