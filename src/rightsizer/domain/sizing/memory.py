"""GPU memory: a working set that was measured, or a framework's reservation that says nothing about need; and
the out-of-memory risk a load-following line shows."""

from __future__ import annotations

from dataclasses import dataclass

from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.usage import DeviceUsage
from rightsizer.domain.policy import Policy
from rightsizer.domain.sizing.units import UnitView, memory_total


def memory_reserved(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """A flat, high line: a framework reserved the memory up front, so the reading is not the need."""
    peak, low = device.memory_used_peak_mib, device.memory_used_low_mib
    if peak is None or low is None:
        return False
    total = memory_total(device, spec)
    high = peak >= total * policy.reserved_memory_min_pct / 100
    flat = peak - low <= total * policy.flat_memory_band_pct / 100
    return high and flat


def memory_follows_load(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """The memory line rises and falls with the work: its peak is a real working set."""
    peak, low = device.memory_used_peak_mib, device.memory_used_low_mib
    if peak is None or low is None or device.memory_load_correlation is None:
        return False
    moves = peak - low > memory_total(device, spec) * policy.flat_memory_band_pct / 100
    return moves and device.memory_load_correlation >= policy.memory_follows_load


def _nearly_full(used_mib: float, device: DeviceUsage, policy: Policy) -> bool:
    return device.memory_total_mib is not None and used_mib >= device.memory_total_mib * policy.oom_memory_pct / 100


def out_of_memory_risk(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """Real evidence, still current: a load-following line that reaches nearly all of what nvidia-smi says exists,
    in the window and in its last days (a risk that ended with a smaller model or a fix is no reason to pay more)."""
    if device.memory_used_peak_mib is None or device.memory_total_mib is None:
        return False  # without nvidia-smi's own total, "nearly full" cannot be told from rounding
    recent = device.memory_recent_peak_mib
    if recent is not None and not _nearly_full(recent, device, policy):
        return False
    return _nearly_full(device.memory_used_peak_mib, device, policy) and memory_follows_load(device, spec, policy)


def memory_risk_ended(device: DeviceUsage, spec: InstanceTypeSpec, policy: Policy) -> bool:
    """The line reached nearly all of memory.total with the load earlier in the window, but not in its last days."""
    recent, peak = device.memory_recent_peak_mib, device.memory_used_peak_mib
    if recent is None or peak is None or _nearly_full(recent, device, policy):
        return False
    return _nearly_full(peak, device, policy) and memory_follows_load(device, spec, policy)


@dataclass(frozen=True)
class MemoryReading:
    """GPU memory of the busy units: a measured working-set peak, or nothing usable."""

    peak_mib: float | None  # busiest unit's peak; None when not measured or reserved
    reserved: tuple[str, ...]  # indexes of the units whose line looked reserved


def read_memory(spec: InstanceTypeSpec, view: UnitView, policy: Policy) -> MemoryReading:
    reserved = tuple(d.index for d in view.busy if memory_reserved(d, spec, policy))
    peaks = [d.memory_used_peak_mib for d in view.busy if d.memory_used_peak_mib is not None]
    if reserved or not peaks:
        return MemoryReading(peak_mib=None, reserved=reserved)
    return MemoryReading(peak_mib=max(peaks), reserved=())
