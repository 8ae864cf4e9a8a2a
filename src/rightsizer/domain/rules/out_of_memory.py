"""A working set that follows the load up to nearly all of the GPU's memory: a paid upgrade to more memory per GPU, or
why none fits (a renderer's scene cannot be sharded like a model).
"""

from __future__ import annotations

from dataclasses import replace

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.rules.draft import Draft, Rule, no_target
from rightsizer.domain.sizing.demand import keep_today
from rightsizer.domain.sizing.memory import out_of_memory_risk
from rightsizer.domain.sizing.reasons import resize_reasons
from rightsizer.domain.sizing.targets import candidates, fewest_units
from rightsizer.domain.sizing.units import memory_total
from rightsizer.domain.wording import gib, index_ranges


def out_of_memory(m: Measured) -> Draft | None:
    """A working set that follows the load up to nearly all of the GPU's memory: a real OOM risk."""
    spec, policy, unit = m.spec, m.policy, m.unit
    at_risk = [d for d in m.view.busy if out_of_memory_risk(d, spec, policy)]
    if not at_risk:
        return None
    worst = max(at_risk, key=lambda d: d.memory_used_peak_mib or 0.0)
    peak = worst.memory_used_peak_mib or 0.0
    total = memory_total(worst, spec)
    need = peak * policy.memory_headroom
    bigger = replace(
        keep_today(m.demand, spec, policy),
        memory_per_unit_mib=need,
        memory_measured=True,
        memory_basis=f"peak x {policy.memory_headroom:g} ({gib(need)})",
    )
    reasons = [
        f"{unit} {index_ranges([d.index for d in at_risk])} memory rises with the load (correlation "
        f"{worst.memory_load_correlation or 0:.2f}) up to {gib(peak)} of {gib(total)} "
        f"({peak / total:.0%} of memory.total): out-of-memory risk",
        m.units_text,
        m.host_text,
        m.observed_text,
        "a paid upgrade for memory alone: confirm out-of-memory errors (e.g. CUDA OOM in the logs) before approving",
    ]
    fitting = candidates(m.instance, spec, m.facts.catalog, m.facts.prices, bigger)
    best = next(iter(fewest_units(c for c in fitting if c.spec.memory_per_unit_mib > spec.memory_per_unit_mib)), None)
    if m.demand.graphics:
        reasons.insert(1, m.graphics_text)
    if best is None:
        return no_target(m, Finding.UNDERPROVISIONED, reasons, _nothing_larger(m, need))
    reasons.extend(resize_reasons(spec, best, bigger, policy))
    return Draft(
        Finding.UNDERPROVISIONED,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),  # memory alone: never high
        actionable=True,
    )


def _nothing_larger(m: Measured, need: float) -> str:
    """Why no type with more memory fits. A model can be sharded over more GPUs; a renderer's scene cannot: it must fit
    one GPU's memory, so a graphics host is told the most graphics memory on offer and what else fits."""
    if not m.demand.graphics:
        return "no larger offered type fits: consider sharding"
    graphics = [
        target
        for target in m.facts.catalog.resize_targets(m.spec.accelerator_kind)
        if (acc := m.facts.catalog.accelerator(target)) is not None and acc.graphics
    ]
    most = max(graphics, key=lambda target: target.memory_per_unit_mib, default=None)
    largest = (
        f"{gib(most.memory_per_unit_mib)} per GPU ({most.accelerator_model}, e.g. {most.instance_type})" if most else ""
    )
    if most is not None and most.memory_per_unit_mib >= need:
        return (
            f"the graphics GPU with most memory offered here has {largest}, but no such type also carries the rest "
            "of the host's work: a renderer's scene must fit one GPU's memory (it does not shard across GPUs like a "
            "model), so reduce what it loads (texture sizes, instancing, out-of-core rendering) or split the scene"
        )
    have = f"the most any graphics GPU offered here has is {largest}" if most else "no graphics GPU is offered here"
    return (
        f"no graphics-capable type has the {gib(need)} per GPU this scene needs: {have}. A renderer's scene must fit "
        "one GPU's memory (it does not shard across GPUs like a model): reduce what it loads (texture sizes, "
        "instancing, out-of-core rendering) or split the scene; A100 and H100 have more memory but run no graphics"
    )


# Asked in this order (registry.FINDING_RULES places this module's rules among the others').
RULES: tuple[Rule, ...] = (out_of_memory,)
