"""An accelerator waiting for a saturated CPU: more vCPUs help, a smaller accelerator would not; a CPU pinned whatever
the load may be spinning rather than short of vCPUs.
"""

from __future__ import annotations

from dataclasses import replace

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.rules.draft import Draft, Rule
from rightsizer.domain.sizing.demand import keep_today, vcpus_needed
from rightsizer.domain.sizing.reasons import resize_reasons
from rightsizer.domain.sizing.targets import candidates
from rightsizer.domain.wording import pct


def cpu_bound(m: Measured) -> Draft | None:
    """The accelerator waits for a saturated CPU: more vCPUs help, a smaller accelerator would not."""
    cpu, policy, spec, unit = m.cpu_p95, m.policy, m.spec, m.unit
    if cpu is None or cpu < policy.cpu_saturated_pct or m.demand.unit_util_p95 >= policy.gpu_light_pct:
        return None
    # The accelerators in use and the RAM stay; only the vCPUs must grow.
    more_cpu = replace(
        keep_today(m.demand, spec, policy), vcpus=max(vcpus_needed(spec.vcpus, m.usage, policy), spec.vcpus + 1)
    )
    reasons = [
        f"CPU-bound: CPU p95 {pct(cpu)} while the busiest {unit} p95 is only {pct(m.demand.unit_util_p95)}: "
        "more vCPUs (data loading, preprocessing) will raise accelerator use; a smaller accelerator would not",
        m.units_text,
        m.host_text,
        m.observed_text,
        *m.demand_notes,
    ]
    facts = m.facts
    best = next(candidates(m.instance, spec, facts.catalog, facts.prices, more_cpu, same_model_only=True), None)
    # A saturated CPU hides how much more it needs: a type with more vCPUs than today that costs less (it sheds GPUs
    # nobody uses) beats one that meets the 70 % projection of a censored reading at a higher price.
    cost = facts.list_cost
    if best is not None and cost is not None and best.monthly > cost:
        more = replace(more_cpu, vcpus=spec.vcpus + 1)
        cheaper = next(
            candidates(m.instance, spec, facts.catalog, facts.prices, more, same_model_only=True, max_monthly=cost),
            None,
        )
        if cheaper is not None:
            best, more_cpu = cheaper, more
            reasons.append(
                f"{cheaper.spec.instance_type} has more vCPUs than today ({cheaper.spec.vcpus} of the "
                f"{vcpus_needed(spec.vcpus, m.usage, policy)} a 70 % CPU would take) and costs less: the CPU is "
                "saturated, so its real need is unknown; measure again after the move"
            )
    if best is None:
        reasons.append(f"no offered {spec.accelerator_model} type with more vCPUs was found")
        return Draft(Finding.NOT_GPU_BOUND, tuple(reasons), confidence=m.data_confidence)
    reasons.extend(resize_reasons(spec, best, more_cpu, policy))
    draft = Draft(
        Finding.NOT_GPU_BOUND,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM if best.cross_family else Confidence.HIGH),
        actionable=True,
    )
    spinning = _cpu_pinned_whatever_the_load(m)
    if spinning is None or cost is None or best.monthly <= cost:
        return draft
    return replace(
        draft.noting(spinning).capped(Confidence.LOW),
        actionable=False,
        held_back="a CPU pinned whatever the load may be spinning, not short of vCPUs: check before paying more",
    )


def _cpu_pinned_whatever_the_load(m: Measured) -> str | None:
    """A CPU saturated in every hour of the week while the accelerator load rises and falls does not follow the
    work: threads that spin while they wait (busy polling) read 100 % on any number of vCPUs."""
    cpu = [v for v in m.usage.hourly_cpu_mean if v is not None]
    load = [v for v in m.usage.hourly_accelerator_peak if v is not None]
    if len(cpu) < len(m.usage.hourly_cpu_mean) // 2 or not load:
        return None
    low, high = min(load), max(load)
    # The load must really swing (its busiest hours at least twice its quietest): a steady loader-bound job keeps
    # both flat, and there the CPU is the bottleneck.
    if min(cpu) < m.policy.cpu_saturated_pct or high < 2 * low or high - low < m.policy.activity_peak_pct:
        return None
    return (
        f"the CPU is at {pct(min(cpu))} or more in every hour of the week while the {m.unit} load moves between "
        f"{pct(low)} and {pct(high)}: a CPU that does not follow the work is often threads that spin while they "
        "wait (busy polling), which more vCPUs would not relieve; check what burns it (top, perf) before paying more"
    )


# Asked in this order (registry.FINDING_RULES places this module's rules among the others').
RULES: tuple[Rule, ...] = (cpu_bound,)
