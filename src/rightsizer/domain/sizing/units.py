"""Which units (GPUs / NeuronCores) of a host did real work, which never did, and which published nothing."""

from __future__ import annotations

from dataclasses import dataclass

from rightsizer.domain.models.hosts import AcceleratorKind, InstanceTypeSpec
from rightsizer.domain.models.usage import AcceleratorData, DeviceUsage, UsageSummary
from rightsizer.domain.policy import Policy


@dataclass(frozen=True)
class UnitView:
    busy: tuple[DeviceUsage, ...]  # did real work at some point in the window
    idle: tuple[DeviceUsage, ...]  # never did (some may hold memory: see `holding`)
    unseen: int  # units the spec has but no series was published for, counted as busy
    holding: tuple[DeviceUsage, ...] = ()  # idle units that hold memory: a loaded model nobody calls

    @property
    def needed(self) -> int:
        return max(1, len(self.busy) + self.unseen)


def memory_total(device: DeviceUsage, spec: InstanceTypeSpec) -> float:
    """nvidia-smi's own memory.total when published (it is what the framework sees), else the spec's."""
    return device.memory_total_mib or spec.memory_per_unit_mib


def unit_active(device: DeviceUsage, policy: Policy) -> bool:
    """Did this unit do real work at any time in the window (steadily, or in recurring hours)?"""
    if device.encodes or (device.profile and device.decodes):
        return True  # the video engines work, whatever the SMs (utilization.gpu) say
    if device.utilization is None:
        return True  # no utilisation series: it cannot be shown idle
    if device.utilization.p99 >= policy.idle_util_pct or device.utilization.p50 >= policy.steady_util_pct:
        return True
    return (device.utilization_peak or 0.0) >= policy.activity_peak_pct


def holds_memory(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """Does the unit hold a real share of its memory (a loaded model), whatever it computes?"""
    if device.memory_used_peak_mib is None:
        return False
    return device.memory_used_peak_mib / memory_total(device, spec) * 100 >= policy.in_use_memory_pct


def unit_view(spec: InstanceTypeSpec, usage: UsageSummary, policy: Policy) -> UnitView:
    """Which units worked. A unit that only holds memory for 14 days does no work: a model shard would
    compute with its siblings, so it is an idle replica or a stale process; it is named, not kept."""
    busy_list: list[DeviceUsage] = []
    idle_list: list[DeviceUsage] = []
    for device in usage.devices:
        (busy_list if unit_active(device, policy) else idle_list).append(device)
    busy, idle = tuple(busy_list), tuple(idle_list)
    holding = tuple(d for d in idle if holds_memory(d, spec, policy))
    if usage.accelerator_data is AcceleratorData.ROLLUP:
        # A roll-up (max over GPUs) cannot tell how many GPUs work: assume all of them, unless idle.
        return UnitView(busy=busy, idle=idle, unseen=spec.compute_units - 1 if busy else 0, holding=holding)
    if spec.accelerator_kind is AcceleratorKind.NEURON:
        # neuron-monitor reports only the NeuronCores a running application uses: silence means unused.
        return UnitView(busy=busy, idle=idle, unseen=0, holding=holding)
    # nvidia-smi reports every GPU it sees; a silent GPU is a fault, so count it as needed.
    unseen = max(0, spec.compute_units - len(usage.devices))
    return UnitView(busy=busy, idle=idle, unseen=unseen, holding=holding)
