"""Projection: the same work on another accelerator, by the largest of the tensor-throughput, memory-bandwidth and
FP32 ratios."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rightsizer.domain.models.hosts import AcceleratorSpec
from rightsizer.domain.signals import FIGURE, PROJECTED


def _per_unit(acc: AcceleratorSpec, value: float | None) -> float | None:
    return None if value is None else value / (acc.neuroncores_per_device or 1)


@dataclass(frozen=True)
class Projection:
    """How much slower (ratio > 1) or faster the target is for this work, and what decided it."""

    ratio: float
    basis: str
    ratios: Mapping[str, float] = field(default_factory=dict)  # by figure: "tensor", "memory bandwidth", "FP32"

    def of(self, utilization: float) -> float:
        return utilization * self.ratio

    def engine_ratios(self) -> tuple[float, ...]:
        """The ratio of each projected engine (signals.PROJECTED's order; 0: a figure missing on either side)."""
        return tuple(self.ratios.get(FIGURE[engine], 0.0) for engine in PROJECTED)


SAME_ACCELERATOR = Projection(1.0, "", {figure: 1.0 for figure in FIGURE.values()})


def projection(source: AcceleratorSpec, target: AcceleratorSpec) -> Projection | None:
    """The largest of the tensor, bandwidth and FP32 ratios (source / target); None when not comparable.

    Deep-learning kernels run on tensor cores and are often bound by memory bandwidth; FP32 is only a
    floor for work that uses neither. Whichever the target is weakest at decides.
    """
    if source.model == target.model:
        return SAME_ACCELERATOR
    ratios: dict[str, float] = {}
    for name, source_value, target_value in (
        ("tensor", source.tensor_tflops, target.tensor_tflops),
        ("memory bandwidth", source.memory_bandwidth_gbps, target.memory_bandwidth_gbps),
        ("FP32", source.fp32_tflops, target.fp32_tflops),
    ):
        source_unit, target_unit = _per_unit(source, source_value), _per_unit(target, target_value)
        if source_unit and target_unit:
            ratios[name] = source_unit / target_unit
    if source.tensor_tflops and not target.tensor_tflops:
        return None  # the work may use tensor cores the target's figures cannot speak for
    if "tensor" not in ratios and "FP32" not in ratios:
        return None  # no compute figure on both sides: the accelerators cannot be compared
    bound = max(ratios, key=lambda name: ratios[name])
    detail = ", ".join(f"{name} x{value:.2f}" for name, value in ratios.items())
    return Projection(ratios[bound], f" ({bound}-bound: {detail})", ratios)
