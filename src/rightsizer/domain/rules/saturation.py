"""Accelerators that read busy nearly all the time: saturated (a faster one is advice, never one click), or, where
DCGM's SM active shows most SMs waiting, occupied but not used (use what it pays for first).
"""

from __future__ import annotations

from dataclasses import replace

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.hosts import AcceleratorKind
from rightsizer.domain.rules.draft import Draft, Rule, no_target
from rightsizer.domain.signals import KERNEL_TIME
from rightsizer.domain.sizing.demand import keep_today
from rightsizer.domain.sizing.reasons import resize_reasons
from rightsizer.domain.sizing.targets import candidates, fewest_units
from rightsizer.domain.wording import gib, pct

# GPUs that partition into MIG instances (Multi-Instance GPU): several small workloads each get a slice.
_MIG = frozenset({"A100", "H100", "H200", "B200", "A30"})


def pinned(m: Measured) -> Draft | None:
    """Busy nearly all the time: well used; a faster accelerator is advice, never a one-click upgrade.
    (When idle units make a cheaper type possible, that saving answers first and names this.)"""
    median = pinned_median(m)
    if median is None or m.downsize is not None:
        return None
    spec, policy, demand = m.spec, m.policy, m.demand
    faster = replace(
        keep_today(demand, spec, policy),
        memory_per_unit_mib=max(demand.memory_per_unit_mib, spec.memory_per_unit_mib),
        memory_basis=f"today's {gib(spec.memory_per_unit_mib)}",
    )
    reasons = [pinned_text(m, median), m.units_text, m.host_text, m.observed_text]
    if (blind := _kernel_time_only(m)) is not None:
        reasons.append(blind)
    fitting = candidates(m.instance, spec, m.facts.catalog, m.facts.prices, faster)
    best = next(iter(fewest_units(c for c in fitting if c.projected_util < demand.unit_util_p95)), None)
    if best is None:
        fallback = f"no faster offered type fits: consider spreading the work over more {m.unit}s"
        return no_target(m, Finding.UNDERPROVISIONED, reasons, fallback)
    reasons.extend(resize_reasons(spec, best, faster, policy))
    return Draft(
        Finding.UNDERPROVISIONED,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        held_back="a faster accelerator is advice: approve a resize only if the work is too slow",
    )


def busy_not_saturated(m: Measured) -> Draft | None:
    """Kernel time reads pinned while DCGM's SM active shows most SMs waiting: the GPU is occupied, not used. A smaller
    GPU that carries what the SMs do answers first (`overprovisioned`, sized on the SMs); without one, the advice is how
    to use the GPU it pays for."""
    compute, kernel = m.loads[0], _kernel_median(m)
    if not compute.measured or kernel is None or compute.p95 >= m.policy.underused_sm_pct or m.downsize is not None:
        return None
    unit = m.unit
    mig = f", or MIG slices of the {m.spec.accelerator_model}" if m.spec.accelerator_model in _MIG else ""
    reasons = (
        f"{unit} {compute.label} p95 {pct(compute.p95)} (DCGM) while {KERNEL_TIME} reads a median of {pct(kernel)}: "
        f"kernels keep the {unit} occupied all the time, but most of its SMs wait (small batches, one request at a "
        "time, kernel launches or the CPU between kernels)",
        *([m.shortfalls] if m.shortfalls else []),
        m.units_text,
        m.host_text,
        m.observed_text,
        *m.demand_notes,
    )
    return Draft(
        Finding.OVERPROVISIONED,
        reasons,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        advice=f"use the {unit} it pays for before buying more: batch requests (larger or dynamic batches in the model "
        f"server), run several workloads on it (CUDA streams, MPS{mig}), or move the work to a smaller {unit} once one "
        "carries what its SMs really do",
    )


def _kernel_median(m: Measured) -> float | None:
    """The busiest unit's median kernel time when it reads pinned (None: it does not)."""
    medians = [d.utilization.p50 for d in m.view.busy if d.utilization is not None]
    top = max(medians, default=None)
    return top if top is not None and top >= m.policy.saturated_util_pct else None


def pinned_median(m: Measured) -> float | None:
    """The busiest unit's median load when it is saturated: on DCGM's SM active where the GPUs publish it (kernel time
    reads 100 % while most SMs idle), else on kernel time."""
    compute = m.loads[0]
    if compute.measured:
        return compute.p50 if compute.p50 >= m.policy.saturated_sm_pct else None
    return _kernel_median(m)


def pinned_text(m: Measured, median: float) -> str:
    compute = m.loads[0]
    busy = (
        f"{compute.label} median {pct(median)} (DCGM): its SMs are saturated, not only busy"
        if compute.measured
        else f"median utilisation {pct(median)}: busy nearly all the time"
    )
    return (
        f"{m.unit} {busy}. That is good use of the hardware; a faster {m.unit} only pays if the work is too slow "
        "(queueing, missed deadlines)"
    )


def _kernel_time_only(m: Measured) -> str | None:
    """Why pinned kernel time alone does not prove a saturated GPU, and what would (None: DCGM measured the SMs, or the
    accelerator has no DCGM)."""
    if m.loads[0].measured or m.spec.accelerator_kind is not AcceleratorKind.NVIDIA:
        return None
    return (
        f"{KERNEL_TIME} counts a {m.unit} busy while any kernel runs, however few of its SMs work: publish DCGM's SM "
        f"active (agent/dcgm) to tell a saturated {m.unit} from one waiting between small kernels before paying for a "
        "faster one"
    )


# Asked in this order (registry.FINDING_RULES places this module's rules among the others').
RULES: tuple[Rule, ...] = (
    pinned,
    busy_not_saturated,
)
