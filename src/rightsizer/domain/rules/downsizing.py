"""The sizing verdicts, asked last: a cheaper type that carries the measured demand (overprovisioned), units that never
work with no cheaper type to keep the others (partly idle), nothing to compare with (not comparable), and, once
every comparison was made, optimized (which always answers).
"""

from __future__ import annotations

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.rules.draft import Draft, Rule
from rightsizer.domain.rules.saturation import pinned_median, pinned_text
from rightsizer.domain.rules.schedule import schedule_saving
from rightsizer.domain.rules.video import VIDEO_HELD_BACK
from rightsizer.domain.sizing.neuron import neuron_alternatives
from rightsizer.domain.sizing.reasons import resize_reasons
from rightsizer.domain.wording import index_ranges, usd


def not_comparable(m: Measured) -> Draft | None:
    """Nothing to compare with (unknown accelerator, no price): say so instead of claiming "optimized"."""
    gap = m.comparison_gap
    if gap is None:
        return None
    context = (m.units_text, m.host_text, m.observed_text)
    if m.unused_units and m.usage.accelerator_data is AcceleratorData.PER_DEVICE:
        needed, total = m.view.needed, m.spec.compute_units
        return Draft(
            Finding.OVERPROVISIONED,
            (
                f"{needed} of {total} {m.unit}s do all the work: a type with {needed} {m.unit}(s) would do, but "
                f"no target can be named: {gap}",
                *context,
            ),
            confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        )
    return Draft(Finding.INSUFFICIENT_DATA, (f"cannot compare: {gap}", *context), confidence=Confidence.LOW)


def overprovisioned(m: Measured) -> Draft | None:
    """A cheaper type carries the measured demand, its bursts and headroom."""
    best, spec, demand = m.downsize, m.spec, m.demand
    if best is None:
        return None
    reasons = [m.units_text, m.host_text, m.observed_text, *m.demand_notes]
    reasons.extend(resize_reasons(spec, best, demand, m.policy))
    confidence = m.data_confidence
    actionable = True
    if best.cross_family or best.cross_hypervisor or m.caveats:
        confidence = confidence.at_most(Confidence.MEDIUM)
    held_back = None
    if not demand.host_memory_measured and best.spec.memory_mib < spec.memory_mib:
        reasons.append(m.unmeasured_ram_text)
        confidence = confidence.at_most(Confidence.MEDIUM)
        actionable = False
        held_back = "host memory not measured: publish mem_used_percent first"
    dropped = [d.index for d in m.view.holding][: max(0, len(m.view.holding) + m.view.needed - best.spec.compute_units)]
    if dropped and actionable:
        # A process holds memory on them: on a type without them it fails at its next start (cuda:1 is gone).
        reasons.append(
            f"{m.unit}s {index_ranges(dropped)} hold memory for processes that would lose their device on "
            f"{best.spec.instance_type}: stop or move what runs there first"
        )
        confidence = confidence.at_most(Confidence.MEDIUM)
        actionable = False
        held_back = f"{m.unit}s {index_ranges(dropped)} hold models: move them first"
    recent = m.recent_rise
    if recent is not None and actionable:
        reasons.append(f"{recent}: too recent to be a change of regime, so this downsize waits until it settles")
        actionable = False
        held_back = "the load rose in the last day: wait until it settles"
    if m.video_unknown and best.spec.compute_units < spec.compute_units and actionable:
        reasons.append(m.video_unknown_text)
        confidence = confidence.at_most(Confidence.MEDIUM)
        actionable = False
        held_back = VIDEO_HELD_BACK
    median = pinned_median(m)
    if median is not None:
        reasons.append(pinned_text(m, median))
    pattern = m.pattern
    saving = schedule_saving(m, pattern) if pattern is not None else None
    if pattern is not None and saving is not None:
        reasons.append(f"also possible: a stop schedule (busy only {pattern.windows}), saving {usd(saving)}/month")
    return Draft(
        Finding.OVERPROVISIONED,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=confidence,
        actionable=actionable,
        alternatives=neuron_alternatives(m.instance, spec, m.facts.catalog, m.facts.prices, demand, best.hourly),
        held_back=held_back,
    )


def partly_idle(m: Measured) -> Draft | None:
    """Some units never work, yet no cheaper type keeps the others: the waste is named, not hidden."""
    if not m.unused_units or m.usage.accelerator_data is not AcceleratorData.PER_DEVICE:
        return None
    needed, total, unit = m.view.needed, m.spec.compute_units, m.unit
    return Draft(
        Finding.OVERPROVISIONED,
        (
            f"{needed} of {total} {unit}s do all the work, but no cheaper type offered here keeps {needed} "
            f"{unit}(s) with the vCPUs, RAM, network, storage and interconnect this host needs",
            *([m.shortfalls] if m.shortfalls else []),
            m.units_text,
            m.host_text,
            m.observed_text,
            *m.demand_notes,
        ),
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        advice=f"consolidate the work onto fewer hosts or give the idle {unit}s work",
    )


def optimized(m: Measured) -> Draft:
    """Every comparison was made and no cheaper type fits (with less certainty when part of the demand
    had to be assumed: GPU memory not measured, units that published nothing)."""
    hourly = m.facts.prices.hourly(m.spec.instance_type)
    prices, catalog = m.facts.prices, m.facts.catalog
    alternatives = neuron_alternatives(m.instance, m.spec, catalog, prices, m.demand, hourly) if hourly else ()
    draft = Draft(
        Finding.OPTIMIZED,
        (
            m.units_text,
            m.host_text,
            m.observed_text,
            *m.demand_notes,
            "no cheaper type fits the measured demand, its busiest hours and headroom",
            *([m.shortfalls] if m.shortfalls else []),
        ),
        confidence=m.data_confidence.at_most(Confidence.MEDIUM) if m.caveats else m.data_confidence,
        alternatives=alternatives,
    )
    return _light_and_video_unknown(m, draft)


def _light_and_video_unknown(m: Measured, draft: Draft) -> Draft:
    """SMs that only tick over (a steady few percent, under the idle threshold at p99) on GPUs whose encoders nobody
    measured: the GPU is kept, but what it does is unknown (a transcoder's scaling kernels look like this)."""
    light = all(d.utilization is None or d.utilization.p99 < m.policy.idle_util_pct for d in m.view.busy)
    if not (m.video_unknown and light):
        return draft
    return draft.noting(m.video_unknown_text).capped(Confidence.LOW)


# Asked in this order (registry.FINDING_RULES places this module's rules among the others').
RULES: tuple[Rule, ...] = (
    not_comparable,
    overprovisioned,
    partly_idle,
    optimized,
)
