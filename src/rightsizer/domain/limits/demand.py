"""What the work needs of a target (`Demand`): from the host's measured work, with its headroom, and from what it is
set up to use (`Setup`: the architecture, EFA, ENA, graphics; `StorageNeed`: EBS and the instance store); and what it
needs of each limit (`floors`, read through the table)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from rightsizer.domain.limits.table import LIMITS
from rightsizer.domain.signals import PROJECTED, Engine, Load


@dataclass(frozen=True, slots=True)
class StorageNeed:
    """EBS (read + write) at the target's baseline, MB/s and IOPS, and the busiest hour within its maximum; the
    instance store the work uses. 0: not measured, or a trickle."""

    ebs_mbps: float = 0.0
    ebs_burst_mbps: float = 0.0
    ebs_iops: float = 0.0
    ebs_basis: str = ""
    local_storage_gb: float = 0.0
    local_basis: str = ""


NO_STORAGE_NEED = StorageNeed()


@dataclass(frozen=True, slots=True)
class Setup:
    """What the host is set up to use, whatever its load: a target must keep it."""

    architecture: str = "x86_64"
    efa: bool = False
    without_ena: bool = False  # its AMI has no ENA driver: a type that requires ENA would not boot it
    ena_express: bool = False
    network_cards: int = 1
    placement_group: str = ""
    graphics: tuple[str, ...] = ()  # why the host needs a GPU with graphics (empty: it does not)
    ray_tracing: bool = False  # ...and RT cores (a renderer on a GPU that has them)


NO_SETUP = Setup()


@dataclass(frozen=True)
class Demand:
    """What a target must provide, derived from measurements (or from today's size where unmeasured) and from what the
    host is set up to use."""

    units: int  # GPUs / NeuronCores that must remain
    memory_per_unit_mib: float
    memory_measured: bool
    vcpus: int
    host_memory_mib: float
    host_memory_measured: bool
    network_gbps: float  # per direction, at the target's baseline
    unit_util_p95: float  # busiest unit
    unit_util_burst: float  # busiest unit's p99 of hourly maxima
    util_ceiling: float  # projected p95 allowed on a target
    burst_ceiling: float  # projected burst allowed on a target
    # False when a unit that must stay published no utilisation at all: its load cannot be projected,
    # so only accelerators at least as fast qualify.
    load_known: bool = True
    memory_basis: str = ""  # how memory_per_unit_mib was set, for the reasons
    # Video engines (NVENC, NVDEC) a target's GPUs must have: today's where the encoders work (their load is not
    # published as a percentage, so it cannot be projected onto fewer engines), one of each where nobody measured
    # them on a GPU that has them, none where they were measured idle.
    video_encoders: int = 0
    video_decoders: int = 0
    # The network's 5-minute peak per direction x headroom: what a type's "up to" (burst) must reach. 0: not measured.
    network_burst_gbps: float = 0.0
    network_basis: str = ""  # how network_gbps was set, for the reasons ("" where it was not measured)
    storage: StorageNeed = field(default_factory=lambda: NO_STORAGE_NEED)
    setup: Setup = field(default_factory=lambda: NO_SETUP)
    # The busiest unit's load of each engine a target's speed is projected on (signals.PROJECTED's order), from DCGM's
    # signals where the GPUs publish them. Empty: every engine carries the kernel time above.
    loads: tuple[Load, ...] = ()

    @cached_property
    def engine_loads(self) -> tuple[Load, ...]:
        """Each projected engine's load: DCGM's measure where there is one, else kernel time."""
        if self.loads:
            return self.loads
        return tuple(Load(engine, 0.0, self.unit_util_p95, self.unit_util_burst) for engine in PROJECTED)

    @property
    def measured_loads(self) -> bool:
        """Does any projected engine's load rest on a DCGM signal?"""
        return any(load.measured for load in self.engine_loads)

    def room(self, load: Load) -> float:
        """How much slower a target's engine may run this load: at least as fast always carries it; a slower one must
        keep the projected p95 and busiest hours within their ceilings."""
        if not self.load_known:
            return 1.0
        room = min(
            self.util_ceiling / load.p95 if load.p95 > 0 else float("inf"),
            self.burst_ceiling / load.burst if load.burst > 0 else float("inf"),
        )
        return max(1.0, room)

    @property
    def graphics(self) -> tuple[str, ...]:
        return self.setup.graphics

    @property
    def ray_tracing(self) -> bool:
        return self.setup.ray_tracing

    @cached_property
    def floors(self) -> tuple[float, ...]:
        """What each limit needs, in LIMITS' order (worked out once per demand)."""
        return tuple([limit.needs(self) for limit in LIMITS])

    @cached_property
    def floor_array(self) -> npt.NDArray[np.float64]:
        """`floors` as an array, held against a matrix of what types offer (sizing.targets.candidates)."""
        return np.array(self.floors, dtype=np.float64)

    @property
    def max_ratio(self) -> float:
        """How much slower a target's accelerator may run the kernel time: at least as fast always carries today's
        load; a slower one must keep the projected p95 and busiest hours within their ceilings."""
        return self.room(Load(Engine.COMPUTE, 0.0, self.unit_util_p95, self.unit_util_burst))
