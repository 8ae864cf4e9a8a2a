"""A measured host's views of its usage, each derived once: its units (busy, idle, unseen), GPU memory, the busiest
unit's load by engine, the demand a target must carry, why it is a graphics host, its weekly pattern."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from rightsizer.domain.facts.host import Facts
from rightsizer.domain.graphics import graphics_evidence
from rightsizer.domain.limits.demand import Demand
from rightsizer.domain.models.hosts import AcceleratorSpec, Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.schedule import WeeklyPattern, weekly_pattern
from rightsizer.domain.signals import PROJECTED, Engine, Load
from rightsizer.domain.sizing.demand import demand, host_setup
from rightsizer.domain.sizing.load import busiest, engine_load, video_engines
from rightsizer.domain.sizing.memory import MemoryReading, read_memory
from rightsizer.domain.sizing.units import UnitView, unit_view


@dataclass(frozen=True)
class MeasuredViews:
    """A running host with a known spec and enough accelerator history, and the views of its usage (`Measured` adds
    what the rules conclude from them, `MeasuredWords` how they read)."""

    facts: Facts
    spec: InstanceTypeSpec
    usage: UsageSummary

    # Shortcuts -------------------------------------------------------------------------------

    @property
    def instance(self) -> Instance:
        return self.facts.instance

    @property
    def policy(self) -> Policy:
        return self.facts.policy

    @property
    def cost_now(self) -> Decimal | None:
        return self.facts.cost_now

    @property
    def unit(self) -> str:
        return self.spec.unit_name

    @cached_property
    def accelerator(self) -> AcceleratorSpec | None:
        return self.facts.catalog.accelerator(self.spec)

    # Usage views -----------------------------------------------------------------------------

    @cached_property
    def view(self) -> UnitView:
        return unit_view(self.spec, self.usage, self.policy)

    @cached_property
    def memory(self) -> MemoryReading:
        return read_memory(self.spec, self.view, self.policy)

    @cached_property
    def load(self) -> tuple[float, float, float]:
        """(p95, burst, peak) of the busiest unit(s): where the demand and the evidence both start."""
        return busiest(self.usage.devices)

    @cached_property
    def profiled(self) -> bool:
        """Does any unit publish a DCGM signal? (Most hosts do not: their loads are kernel time, read once.)"""
        return any(device.profile for device in self.usage.devices)

    @cached_property
    def loads(self) -> tuple[Load, ...]:
        """The busiest unit's load of each engine a target's speed is projected on: DCGM's measure where every GPU
        publishes one, else kernel time (signals.READS)."""
        if not self.profiled:  # kernel time for every engine: read once
            kernel = engine_load(self.usage.devices, Engine.COMPUTE, self.load)
            return tuple(Load(engine, kernel.p50, kernel.p95, kernel.burst) for engine in PROJECTED)
        return tuple(engine_load(self.usage.devices, engine, self.load) for engine in PROJECTED)

    @cached_property
    def demand(self) -> Demand:
        profiled = self.profiled
        video = video_engines(self.accelerator, self.usage, self.policy, self.video_loads if profiled else ())
        setup = host_setup(self.instance, self.accelerator, self.graphics)
        loads = self.loads if profiled and any(load.measured for load in self.loads) else ()
        return demand(self.spec, self.usage, self.view, self.memory, self.load, self.policy, video, setup, loads)

    @cached_property
    def graphics(self) -> tuple[str, ...]:
        """Why the host is a graphics host (a remote workstation, a renderer): its AMI, tags, processes. Only read on a
        GPU that runs graphics (elsewhere the work runs on CUDA, see domain/graphics.py)."""
        acc, instance = self.accelerator, self.instance
        if acc is None or not acc.graphics:
            return ()
        return graphics_evidence(instance.image, instance.tags, self.usage.graphics_processes)

    @cached_property
    def video_unknown(self) -> bool:
        """The GPUs have video encoders nobody measured: quiet SMs may still be encoding video."""
        acc = self.accelerator
        return bool(acc and acc.video_encoders) and not self.usage.encoder_measured

    @cached_property
    def pattern(self) -> WeeklyPattern | None:
        return weekly_pattern(self.usage, self.policy, self.spec.vcpus)

    @property
    def cpu_p95(self) -> float | None:
        return self.usage.cpu.p95 if self.usage.cpu else None

    @property
    def network_p95(self) -> float | None:
        return self.usage.network_p95_gbps

    @cached_property
    def video_loads(self) -> tuple[Load, ...]:
        """The video engines' loads (NVENC, NVDEC), where DCGM measures them on every GPU (none elsewhere)."""
        if not self.profiled:
            return ()
        return tuple(engine_load(self.usage.devices, engine, self.load) for engine in (Engine.ENCODER, Engine.DECODER))
