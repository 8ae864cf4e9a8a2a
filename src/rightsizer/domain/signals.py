"""What a GPU's work is measured by: NVIDIA DCGM's profiling signals, where a host publishes them, and nvidia-smi's
kernel time (`utilization.gpu`) everywhere else.

`utilization.gpu` is the share of time any kernel ran: it reads 100 % while most SMs sit idle (a small-batch inference
server, a kernel-launch-bound loop) and 0 % while the video engines work. DCGM measures the hardware itself. Each signal
is one entry of `SIGNALS`: NVIDIA's field, its definition (dcgmlib/dcgm_fields.h, github.com/NVIDIA/DCGM) and the engine
whose load it measures. All are read in percent (the profiling fields are ratios 0-1, published x 100).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Signal(StrEnum):
    """A DCGM signal, by the name the collector files its series under."""

    SM_ACTIVE = "sm_active"
    SM_OCCUPANCY = "sm_occupancy"
    TENSOR_ACTIVE = "tensor_active"
    DRAM_ACTIVE = "dram_active"
    ENCODER = "encoder_util"
    DECODER = "decoder_util"


class Engine(StrEnum):
    """The part of the GPU whose load a signal measures."""

    COMPUTE = "compute"  # the SMs
    TENSOR = "tensor"  # the tensor cores
    MEMORY_BANDWIDTH = "memory bandwidth"  # the device memory interface
    ENCODER = "NVENC"
    DECODER = "NVDEC"


@dataclass(frozen=True, slots=True)
class SignalSpec:
    signal: Signal
    label: str  # how the reasons name it: "SM active"
    field: str  # NVIDIA's field
    engine: Engine
    definition: str  # NVIDIA's, from dcgm_fields.h


SIGNALS: dict[Signal, SignalSpec] = {
    spec.signal: spec
    for spec in (
        SignalSpec(
            Signal.SM_ACTIVE,
            "SM active",
            "DCGM_FI_PROF_SM_ACTIVE",
            Engine.COMPUTE,
            "the ratio of cycles an SM has at least 1 warp assigned",
        ),
        SignalSpec(
            Signal.SM_OCCUPANCY,
            "SM occupancy",
            "DCGM_FI_PROF_SM_OCCUPANCY",
            Engine.COMPUTE,
            "the ratio of number of warps resident on an SM, to the theoretical maximum",
        ),
        SignalSpec(
            Signal.TENSOR_ACTIVE,
            "tensor active",
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
            Engine.TENSOR,
            "the ratio of cycles any tensor pipe is active",
        ),
        SignalSpec(
            Signal.DRAM_ACTIVE,
            "DRAM active",
            "DCGM_FI_PROF_DRAM_ACTIVE",
            Engine.MEMORY_BANDWIDTH,
            "the ratio of cycles the device memory interface is active sending or receiving data",
        ),
        SignalSpec(Signal.ENCODER, "NVENC utilisation", "DCGM_FI_DEV_ENC_UTIL", Engine.ENCODER, "encoder utilization"),
        SignalSpec(Signal.DECODER, "NVDEC utilisation", "DCGM_FI_DEV_DEC_UTIL", Engine.DECODER, "decoder utilization"),
    )
}


# The engines a target's speed is projected on, and the accelerator table's figure that scales each one's load (the
# names sizing.projection.projection gives its ratios): SM work by FP32 throughput, tensor work by dense tensor
# TFLOPS, memory traffic by bandwidth.
PROJECTED: tuple[Engine, ...] = (Engine.COMPUTE, Engine.TENSOR, Engine.MEMORY_BANDWIDTH)
FIGURE: dict[Engine, str] = {
    Engine.COMPUTE: "FP32",
    Engine.TENSOR: "tensor",
    Engine.MEMORY_BANDWIDTH: "memory bandwidth",
}
# The signals that read each engine's load, best first: SM occupancy stands in for SM active (it counts warps
# resident, not SMs busy, so the advice resting on it is at most medium confidence).
READS: dict[Engine, tuple[Signal, ...]] = {
    Engine.COMPUTE: (Signal.SM_ACTIVE, Signal.SM_OCCUPANCY),
    Engine.TENSOR: (Signal.TENSOR_ACTIVE,),
    Engine.MEMORY_BANDWIDTH: (Signal.DRAM_ACTIVE,),
    Engine.ENCODER: (Signal.ENCODER,),
    Engine.DECODER: (Signal.DECODER,),
}
# Each signal that stands in for a better one of its engine (read only where that one is not published): the later
# entries of READS, each for its engine's first.
STANDS_IN_FOR: dict[Signal, Signal] = {later: reads[0] for reads in READS.values() for later in reads[1:]}
STANDS_IN: frozenset[Signal] = frozenset(STANDS_IN_FOR)
KERNEL_TIME = "utilization.gpu"  # nvidia-smi's: the share of time any kernel ran
# A video engine (NVENC, NVDEC) at or above this utilisation (%) is at work: an idle engine reads 0.
VIDEO_ACTIVE_PCT = 1.0


@dataclass(frozen=True, slots=True)
class Load:
    """What one engine of the busiest GPU carries: its median, steady level (p95) and busiest hours, in percent, and
    the signal that measured it (None: kernel time, where no DCGM signal measures the engine)."""

    engine: Engine
    p50: float
    p95: float
    burst: float
    signal: Signal | None = None

    @property
    def measured(self) -> bool:
        """Measured by DCGM, not read off kernel time."""
        return self.signal is not None

    @property
    def label(self) -> str:
        return SIGNALS[self.signal].label if self.signal is not None else KERNEL_TIME
