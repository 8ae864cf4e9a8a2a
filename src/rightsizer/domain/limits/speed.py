"""How fast a target runs the work: on kernel time, by the largest of the accelerators' ratios; where DCGM measures the
engines, each engine's load by its own ratio (one limit per engine); and how the projection reads."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rightsizer.domain.limits.limit import Limit, Offer, Speaks
from rightsizer.domain.signals import FIGURE, PROJECTED, READS, SIGNALS, Load
from rightsizer.domain.wording import pct

if TYPE_CHECKING:  # a Demand reads its floors from LIMITS (demand.py); the limits read a Demand only when called
    from rightsizer.domain.limits.demand import Demand


def projected(offer: Offer, demand: Demand) -> str:
    """The work on the target: on kernel time, by the largest ratio; on DCGM's signals, each engine by its own."""
    unit = offer.spec.unit_name
    if not demand.measured_loads:
        p95, burst = demand.unit_util_p95 * offer.ratio, demand.unit_util_burst * offer.ratio
        return f"projected {unit} p95 {pct(p95)} and busiest hours {pct(burst)}{offer.basis}"
    parts = [_on_target(offer, load, position) for position, load in enumerate(demand.engine_loads)]
    source, target = offer.source.accelerator_model, offer.spec.accelerator_model
    moved = f"; {_moved(offer, range(len(PROJECTED)))}" if source != target else ""
    return f"projected {', '.join(parts)} (DCGM, per {unit}{moved})"


def _on_target(offer: Offer, load: Load, position: int) -> str:
    """One engine's load on the target: 'DRAM active p95 50% and busiest hours 56%'."""
    ratio = offer.ratio_of(position) or 1.0
    return f"{load.label} p95 {pct(load.p95 * ratio)} and busiest hours {pct(load.burst * ratio)}"


def _moved(offer: Offer, positions: Sequence[int]) -> str:
    """'A10G -> L4: FP32 x1.03, tensor x0.58': the figures that scale each engine's load onto the target."""
    ratios = ", ".join(f"{FIGURE[PROJECTED[p]]} x{offer.ratio_of(p) or 1.0:.2f}" for p in positions)
    return f"{offer.source.accelerator_model} -> {offer.spec.accelerator_model}: {ratios}"


def _engine_projected(offer: Offer, demand: Demand, position: int, verb: str = "projected") -> str:
    """One engine's load on the target, and the figure that scales it."""
    load = demand.engine_loads[position]
    return f"{verb} {_on_target(offer, load, position)} ({_moved(offer, (position,))})"


def kernel_speed(demand: Demand) -> float:
    """On kernel time alone, the largest of the three ratios may not exceed the room the load leaves (as a negative,
    so that "at least" reads "no slower than"); where DCGM measures the engines, each engine's limit decides instead."""
    return -math.inf if demand.measured_loads else -demand.max_ratio


def engine_speed(position: int, name: str) -> Limit:
    """A target's speed for one engine's load, where DCGM measures the engines (a negative, as above): the engine's
    ratio may not exceed the room its load leaves. Its shortfall is named; the projection is said by accelerator
    speed's sentence."""
    engine = PROJECTED[position]
    read_by = ", ".join(SIGNALS[signal].label for signal in READS[engine])
    return Limit(
        name,
        offers=lambda o: -o.ratio_of(position),
        needs=lambda d: -d.room(d.engine_loads[position]) if d.measured_loads else -math.inf,
        says=lambda o, d: _engine_projected(o, d, position),
        short=lambda o, d: _engine_projected(o, d, position, "would run at"),
        speaks=Speaks.DECIDED,
        source=f"where DCGM measures the engines: the {engine} load ({read_by}, else utilization.gpu) x the "
        f"{FIGURE[engine]} ratio (accelerators.json): p95 within 80 %, busiest hours within 100 %",
    )
