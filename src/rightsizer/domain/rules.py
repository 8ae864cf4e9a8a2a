"""The analyzer's rules, one small function each, in the order they are asked.

- `GATES` look at the host alone (exclusions, data sufficiency) and return a draft or nothing.
- `FINDINGS` look at measured usage; the first that returns a draft decides. `optimized` always answers,
  but only once every rule before it had the data to compare.
- `ADJUSTMENTS` then refine whatever was decided: hosts someone else owns (Auto Scaling, Spot), types
  no longer offered, unpriced types.

Adding a finding means one rule here, one `Finding` member and its label (Slack, README).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from rightsizer.domain.commitments import CapacityKind, Change, net_savings
from rightsizer.domain.facts import Facts, Measured
from rightsizer.domain.models import (
    CENT,
    HOURS_PER_MONTH,
    ZERO,
    AcceleratorData,
    AcceleratorKind,
    Alternative,
    Confidence,
    Finding,
    InstanceTypeSpec,
    monthly,
)
from rightsizer.domain.schedule import WeeklyPattern
from rightsizer.domain.schedule_plan import busy_runs, one_pair_fits
from rightsizer.domain.sizing import (
    Candidate,
    candidates,
    memory_total,
    neuron_alternatives,
    out_of_memory_risk,
    resize_reasons,
)
from rightsizer.domain.usage import HOURS_PER_WEEK
from rightsizer.domain.wording import gib, index_ranges, pct, usd


@dataclass(frozen=True)
class Draft:
    """A finding being assembled; frozen into a Recommendation at the end."""

    finding: Finding
    reasons: tuple[str, ...]
    target: InstanceTypeSpec | None = None
    cost_after: Decimal | None = None  # None: the host keeps costing what it costs now
    confidence: Confidence = Confidence.HIGH
    actionable: bool = False
    alternatives: tuple[Alternative, ...] = ()
    pattern: WeeklyPattern | None = None
    net_savings: Decimal | None = None  # None: the list-price savings are what the bill saves

    def noting(self, reason: str, *, first: bool = False) -> Draft:
        return replace(self, reasons=(reason, *self.reasons) if first else (*self.reasons, reason))

    def capped(self, level: Confidence) -> Draft:
        return replace(self, confidence=self.confidence.at_most(level))


Gate = Callable[[Facts], Draft | None]
Rule = Callable[[Measured], Draft | None]
Adjustment = Callable[[Facts, Draft], Draft]


# =============================================================================================
# Gates: hosts that are reported but not analysed, and hosts without enough data.


def opted_out(facts: Facts) -> Draft | None:
    tag = facts.policy.opt_out_tag
    if tag not in facts.instance.tags:
        return None
    value = facts.instance.tags[tag]
    return Draft(Finding.EXCLUDED, (f"opted out by tag {tag}" + (f"={value!r}" if value else ""),))


def reserved_capacity(facts: Facts) -> Draft | None:
    lifecycle = facts.instance.lifecycle
    if lifecycle not in ("capacity-block", "scheduled"):
        return None
    return Draft(Finding.EXCLUDED, (f"{lifecycle} instance: capacity is reserved for this type",))


def not_running(facts: Facts) -> Draft | None:
    if facts.instance.is_running:
        return None
    state = facts.instance.state
    return Draft(Finding.EXCLUDED, (f"{state}: reported, not resized (a stopped host costs no compute)",))


def instance_store_root(facts: Facts) -> Draft | None:
    if facts.instance.root_device_type == "ebs":
        return None
    return Draft(Finding.EXCLUDED, ("instance-store root volume: the host cannot be stopped, so not resized",))


def _insufficient(*reasons: str) -> Draft:
    return Draft(Finding.INSUFFICIENT_DATA, reasons, confidence=Confidence.LOW)


def unknown_type(facts: Facts) -> Draft | None:
    if facts.spec is not None:
        return None
    return _insufficient(f"{facts.instance.instance_type} is not in the instance catalog")


def unmonitored_accelerator(facts: Facts) -> Draft | None:
    spec = facts.spec
    if spec is None or spec.accelerator_kind is not AcceleratorKind.UNMONITORED:
        return None
    name = spec.accelerator_model or "this accelerator"
    return _insufficient(f"{name} publishes no utilisation metrics the bot can read")


def no_accelerator_metrics(facts: Facts) -> Draft | None:
    spec, usage = facts.spec, facts.usage
    if spec is None or (usage is not None and usage.accelerator_data is not AcceleratorData.NONE):
        return None
    source = (
        "neuron-monitor (NeuronCore utilisation)"
        if spec.accelerator_kind is AcceleratorKind.NEURON
        else "the CloudWatch agent's nvidia_gpu section"
    )
    days = facts.policy.lookback_days
    return _insufficient(f"no {spec.unit_name} metrics in the last {days} days: install {source} (see README)")


def short_history(facts: Facts) -> Draft | None:
    spec, usage, policy = facts.spec, facts.usage, facts.policy
    if spec is None or usage is None or usage.accelerator_days >= policy.min_days:
        return None
    return _insufficient(
        f"only {usage.accelerator_days:.1f} days of {spec.unit_name} metrics; at least {policy.min_days:g} are needed"
    )


def thin_coverage(facts: Facts) -> Draft | None:
    spec, usage, policy = facts.spec, facts.usage, facts.policy
    if spec is None or usage is None or usage.accelerator_coverage >= policy.min_coverage:
        return None
    return _insufficient(
        f"{spec.unit_name} metrics cover only {usage.accelerator_coverage:.0%} of the window "
        f"(at least {policy.min_coverage:.0%} is needed): is the agent running all the time?"
    )


GATES: tuple[Gate, ...] = (
    opted_out,
    reserved_capacity,
    not_running,
    instance_store_root,
    unknown_type,
    unmonitored_accelerator,
    no_accelerator_metrics,
    short_history,
    thin_coverage,
)


# =============================================================================================
# Findings from measured usage.


def _stop_risks(m: Measured) -> list[str]:
    """What stopping this host costs besides downtime."""
    risks = []
    if m.spec.instance_storage_gb:
        risks.append(
            f"its {m.spec.instance_storage_gb:,} GB of instance store (local NVMe) is wiped on every stop: "
            "keep data on EBS or S3"
        )
    if m.scarce:
        risks.append(
            f"{m.spec.family} capacity is scarce: once stopped, a start can fail with InsufficientInstanceCapacity "
            "(a Capacity Reservation or Capacity Block keeps it available)"
        )
    return risks


def _quiet_units_text(m: Measured) -> str:
    policy = m.policy
    peak = max((d.utilization_peak or 0.0) for d in m.usage.devices)
    count = m.spec.compute_units
    which = f"the {m.unit} is" if count == 1 else f"all {count} {m.unit}s are"
    return (
        f"{which} unused: p99 below {policy.idle_util_pct:g}% and no hour above "
        f"{policy.activity_peak_pct:g}% (peak {pct(peak)})"
    )


def _memory_held_text(m: Measured) -> str | None:
    held = [
        d
        for d in m.usage.devices
        if d.memory_used_peak_mib is not None
        and d.memory_used_peak_mib / memory_total(d, m.spec) * 100 >= m.policy.in_use_memory_pct
    ]
    if not held:
        return None
    most = max(d.memory_used_peak_mib or 0.0 for d in held)
    return (
        f"{m.unit}s {index_ranges([d.index for d in held])} hold up to {gib(most)} (a model is loaded but gets "
        "no work): check that nothing still calls it"
    )


def idle(m: Measured) -> Draft | None:
    """No unit ever worked and the host itself is quiet: the whole cost is waste."""
    if m.accelerators_active or m.host_busy:
        return None
    held = _memory_held_text(m)
    draft = Draft(
        Finding.IDLE,
        (
            f"{_quiet_units_text(m)}; {m.host_text}",
            m.observed_text,
            *([held] if held else []),
            *_stop_risks(m),
            "stop the host (one click: a guarded stop that never terminates and keeps its EBS volumes), or "
            "terminate it by hand if nobody claims it (snapshot its volumes first)",
        ),
        cost_after=ZERO if m.cost_now is not None else None,
        confidence=m.data_confidence,
        actionable=True,
    )
    if m.cpu_p95 is None or held:
        draft = draft.capped(Confidence.MEDIUM)
    return draft


def unused_accelerator(m: Measured) -> Draft | None:
    """The accelerators do nothing while the host works: the work belongs on a non-GPU instance."""
    if m.accelerators_active or not m.host_busy:
        return None
    return Draft(
        Finding.NOT_GPU_BOUND,
        (
            f"{_quiet_units_text(m)} while the host works ({m.host_text}): the work here does not use the "
            f"accelerator; move it to a non-GPU instance type sized for its CPU, memory and network, then stop "
            "this host (savings depend on the type chosen)",
            m.observed_text,
        ),
        confidence=m.data_confidence,
    )


def _upgrade(m: Measured, best: Candidate, reasons: list[str], *, actionable: bool) -> Draft:
    """A paid upgrade: never with high confidence, and at most medium whatever the evidence."""
    return Draft(
        Finding.UNDERPROVISIONED,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        actionable=actionable,
    )


def cpu_bound(m: Measured) -> Draft | None:
    """The accelerator waits for a saturated CPU: more vCPUs help, a smaller accelerator would not."""
    cpu, policy, spec, unit = m.cpu_p95, m.policy, m.spec, m.unit
    if cpu is None or cpu < policy.cpu_saturated_pct or m.demand.unit_util_p95 >= policy.gpu_light_pct:
        return None
    needed_vcpus = -(-spec.vcpus * cpu // policy.target_max_cpu_pct)
    # Keep every accelerator (the loader feeds all of them) and the RAM; only the vCPUs must grow.
    more_cpu = replace(
        m.demand,
        units=spec.compute_units,
        vcpus=max(int(needed_vcpus), spec.vcpus + 1),
        host_memory_mib=max(m.demand.host_memory_mib, float(spec.memory_mib)),
    )
    reasons = [
        f"CPU-bound: CPU p95 {pct(cpu)} while the busiest {unit} p95 is only {pct(m.demand.unit_util_p95)}: "
        "more vCPUs (data loading, preprocessing) will raise accelerator use; a smaller accelerator would not",
        m.units_text,
        m.host_text,
        m.observed_text,
        *m.demand_notes,
    ]
    options = candidates(m.instance, spec, m.facts.catalog, m.facts.prices, more_cpu, same_model_only=True)
    if not options:
        reasons.append(f"no offered {spec.accelerator_model} type with more vCPUs was found")
        return Draft(Finding.NOT_GPU_BOUND, tuple(reasons), confidence=m.data_confidence)
    best = options[0]
    reasons.extend(resize_reasons(spec, best, more_cpu, policy))
    return Draft(
        Finding.NOT_GPU_BOUND,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM if best.cross_family else Confidence.HIGH),
        actionable=True,
    )


def out_of_memory(m: Measured) -> Draft | None:
    """A working set that follows the load up to nearly all of the GPU's memory: a real OOM risk."""
    spec, policy, unit = m.spec, m.policy, m.unit
    at_risk = [d for d in m.view.busy if out_of_memory_risk(d, spec, policy)]
    if not at_risk:
        return None
    worst = max(at_risk, key=lambda d: d.memory_used_peak_mib or 0.0)
    peak = worst.memory_used_peak_mib or 0.0
    total = memory_total(worst, spec)
    bigger = replace(
        m.demand,
        units=max(m.demand.units, spec.compute_units),
        memory_per_unit_mib=peak * policy.memory_headroom,
        memory_measured=True,
        memory_basis=f"peak x {policy.memory_headroom:g} ({gib(peak * policy.memory_headroom)})",
        # Fixing memory must not shrink anything else; as busy as today is fine, it is out of memory.
        vcpus=max(m.demand.vcpus, spec.vcpus),
        host_memory_mib=max(m.demand.host_memory_mib, float(spec.memory_mib)),
        util_ceiling=max(policy.target_max_util_pct, m.demand.unit_util_p95),
        burst_ceiling=max(policy.burst_max_util_pct, m.demand.unit_util_burst),
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
    options = [
        c
        for c in candidates(m.instance, spec, m.facts.catalog, m.facts.prices, bigger)
        if c.spec.memory_per_unit_mib > spec.memory_per_unit_mib
    ]
    if not options:
        reasons.append(m.comparison_gap or "no larger offered type fits: consider sharding the model")
        return Draft(Finding.UNDERPROVISIONED, tuple(reasons), confidence=m.data_confidence.at_most(Confidence.MEDIUM))
    best = options[0]
    reasons.extend(resize_reasons(spec, best, bigger, policy))
    return _upgrade(m, best, reasons, actionable=True)


def pinned(m: Measured) -> Draft | None:
    """Busy nearly all the time: well used; a faster accelerator is advice, never a one-click upgrade."""
    spec, policy, unit, demand = m.spec, m.policy, m.unit, m.demand
    medians = [d.utilization.p50 for d in m.view.busy if d.utilization is not None]
    if not medians or max(medians) < policy.saturated_util_pct:
        return None
    faster = replace(
        demand,
        units=max(demand.units, spec.compute_units),
        memory_per_unit_mib=max(demand.memory_per_unit_mib, spec.memory_per_unit_mib),
        memory_basis=f"today's {gib(spec.memory_per_unit_mib)}",
        vcpus=max(demand.vcpus, spec.vcpus),
        host_memory_mib=max(demand.host_memory_mib, float(spec.memory_mib)),
        util_ceiling=max(policy.target_max_util_pct, demand.unit_util_p95),
        burst_ceiling=max(policy.burst_max_util_pct, demand.unit_util_burst),
    )
    reasons = [
        f"{unit} median utilisation {pct(max(medians))}: busy nearly all the time. That is good use of the "
        f"hardware; a faster {unit} only pays if the work is too slow (queueing, missed deadlines)",
        m.units_text,
        m.host_text,
        m.observed_text,
    ]
    options = [
        c
        for c in candidates(m.instance, spec, m.facts.catalog, m.facts.prices, faster)
        if c.projected_util < demand.unit_util_p95
    ]
    if not options:
        gap = m.comparison_gap
        reasons.append(gap or f"no faster offered type fits: consider spreading the work over more {unit}s")
        return Draft(Finding.UNDERPROVISIONED, tuple(reasons), confidence=m.data_confidence.at_most(Confidence.MEDIUM))
    reasons.extend(resize_reasons(spec, options[0], faster, policy))
    return _upgrade(m, options[0], reasons, actionable=False)


def _schedule_saving(m: Measured, pattern: WeeklyPattern) -> Decimal:
    cost = m.cost_now or ZERO
    return (cost * pattern.idle_hours / HOURS_PER_WEEK).quantize(CENT)


def _usable_pattern(m: Measured) -> WeeklyPattern | None:
    return m.pattern if m.cost_now else None


def _resize_saving(m: Measured) -> Decimal | None:
    if not m.downsizes or m.facts.list_cost is None:
        return None
    return m.facts.list_cost - m.downsizes[0].monthly


def schedulable(m: Measured) -> Draft | None:
    """Busy only some hours of the week: stop the host outside them (when that beats any resize)."""
    pattern = _usable_pattern(m)
    if pattern is None or m.cost_now is None:
        return None
    saved = _schedule_saving(m, pattern)
    resize_saving = _resize_saving(m)
    if resize_saving is not None and resize_saving > saved:
        return None  # the resize saves more: `overprovisioned` answers and names the schedule
    policy = m.policy
    reasons = [
        f"busy only {pattern.windows}; idle {pattern.idle_hours} of {HOURS_PER_WEEK} hours a week (every "
        f"{m.unit} below {policy.idle_util_pct:g}%, CPU below {policy.cpu_idle_pct:g}% and network below "
        f"{policy.network_active_gbps:g} Gbps in those hours)",
        m.units_text,
        m.host_text,
        m.observed_text,
    ]
    confidence = m.data_confidence
    if pattern.irregular:
        reasons.append(
            "the busy hours differ from week to week: no fixed schedule fits; start the host when the work "
            "needs it (or run the work as a batch job) instead of keeping it up"
        )
        confidence = Confidence.LOW
    elif not pattern.repeats:
        if pattern.weeks_observed < 2:
            reasons.append("the pattern was seen in one week only")
        elif pattern.recurring_share is None:
            reasons.append("whether the busy hours repeat every week could not be checked (no hourly history)")
        else:
            reasons.append(f"only {pattern.recurring_share:.0%} of the busy hours repeat in both weeks")
        confidence = confidence.at_most(Confidence.MEDIUM)
    risks = _stop_risks(m)
    if m.scarce:
        confidence = confidence.at_most(Confidence.MEDIUM)
    reasons.extend(risks)
    one_click = False
    if not pattern.irregular:
        reasons.append(
            "stop the host outside the busy hours (an EventBridge Scheduler stop/start pair), "
            "allowing a few minutes for it to boot"
        )
        one_click, why_not = _one_click_schedule(pattern)
        if why_not:
            reasons.append(why_not)
    if resize_saving is not None:
        reasons.append(
            f"also possible: resizing to {m.downsizes[0].spec.instance_type}, saving {usd(resize_saving)}/month"
        )
    return Draft(
        Finding.SCHEDULABLE,
        tuple(reasons),
        cost_after=m.cost_now - saved,
        confidence=confidence,
        pattern=pattern,
        actionable=one_click,
    )


def _one_click_schedule(pattern: WeeklyPattern) -> tuple[bool, str | None]:
    """Whether approving can create the schedule pair, and why not when it cannot."""
    if not pattern.repeats:
        return False, "no one-click schedule until the busy hours have repeated in two weeks of history"
    if not one_pair_fits(busy_runs(pattern.busy)):
        return False, "the busy hours differ from day to day: one stop/start pair cannot follow them, schedule by hand"
    return True, None


def not_comparable(m: Measured) -> Draft | None:
    """Nothing to compare with (unknown accelerator, no price): say so instead of claiming "optimized"."""
    gap = m.comparison_gap
    if gap is None:
        return None
    context = (m.units_text, m.host_text, m.observed_text)
    idle_units = len(m.view.idle)
    if idle_units and m.usage.accelerator_data is AcceleratorData.PER_DEVICE:
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
    if not m.downsizes:
        return None
    best, spec, demand = m.downsizes[0], m.spec, m.demand
    reasons = [m.units_text, m.host_text, m.observed_text, *m.demand_notes]
    reasons.extend(resize_reasons(spec, best, demand, m.policy))
    confidence = m.data_confidence
    actionable = True
    if best.cross_family or best.cross_hypervisor or not demand.memory_measured:
        confidence = confidence.at_most(Confidence.MEDIUM)
    if not demand.host_memory_measured and best.spec.memory_mib < spec.memory_mib:
        reasons.append(m.unmeasured_ram_text)
        confidence = confidence.at_most(Confidence.MEDIUM)
        actionable = False
    pattern = _usable_pattern(m)
    if pattern is not None:
        saving = _schedule_saving(m, pattern)
        reasons.append(f"also possible: a stop schedule (busy only {pattern.windows}), saving {usd(saving)}/month")
    return Draft(
        Finding.OVERPROVISIONED,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=confidence,
        actionable=actionable,
        alternatives=neuron_alternatives(m.instance, spec, m.facts.catalog, m.facts.prices, demand, best.hourly),
    )


def optimized(m: Measured) -> Draft:
    """Every comparison was made and no cheaper type fits (with less certainty when part of the demand
    had to be assumed: GPU memory not measured, units that published nothing)."""
    below = m.cost_now / HOURS_PER_MONTH if m.cost_now else None
    alternatives = (
        neuron_alternatives(m.instance, m.spec, m.facts.catalog, m.facts.prices, m.demand, below) if below else ()
    )
    return Draft(
        Finding.OPTIMIZED,
        (
            m.units_text,
            m.host_text,
            m.observed_text,
            *m.demand_notes,
            "no cheaper type fits the measured demand, its busiest hours and headroom",
        ),
        confidence=m.data_confidence
        if m.demand.memory_measured and m.demand.load_known
        else m.data_confidence.at_most(Confidence.MEDIUM),
        alternatives=alternatives,
    )


FINDINGS: tuple[Rule, ...] = (
    idle,
    unused_accelerator,
    cpu_bound,
    out_of_memory,
    pinned,
    schedulable,
    not_comparable,
    overprovisioned,
    optimized,
)


# =============================================================================================
# Adjustments: refine whatever was decided.


def no_longer_offered(facts: Facts, draft: Draft) -> Draft:
    instance = facts.instance
    if facts.spec is None or facts.catalog.is_offered(instance.instance_type) is not False:
        return draft
    where = f"{instance.instance_type} is no longer offered in {instance.region}"
    gone = f"{where}: once stopped, this host may not get its type back"
    if draft.finding is Finding.IDLE:
        # Nobody uses it: stopping it is still the advice, with the risk in plain sight (and in the confirmation).
        return draft.noting(f"{gone}; nothing uses it, so stopping it is still the advice")
    draft = draft.noting(f"{gone}, so no one-click resize or schedule is offered (migrate in a maintenance window)")
    if not draft.actionable and draft.target is None:
        return draft
    capped = draft.capped(Confidence.MEDIUM) if draft.target is not None else draft
    return replace(capped, actionable=False)


def unpriced(facts: Facts, draft: Draft) -> Draft:
    if facts.cost_now is not None or facts.spec is None or any("no on-demand price" in r for r in draft.reasons):
        return draft
    instance = facts.instance
    source = facts.prices.source
    return draft.noting(f"no on-demand price for {instance.instance_type} in {instance.region} ({source})", first=True)


def _owned_elsewhere(draft: Draft, who: str, change: str) -> Draft:
    """Advice for a host that something else creates: the finding is kept in words, never acted on."""
    if draft.finding in (Finding.EXCLUDED, Finding.INSUFFICIENT_DATA):
        return draft.noting(f"{who}: never resized in place", first=True)
    to = f" to {draft.target.instance_type}" if draft.target else ""
    lead = f"would be {draft.finding.value}{to}, but this is {who}: {change}{to}; never resized in place"
    return replace(draft.noting(lead, first=True), finding=Finding.EXCLUDED, actionable=False)


def auto_scaling_member(facts: Facts, draft: Draft) -> Draft:
    group = facts.instance.asg_name
    if not group:
        return draft
    change = f"change the launch template of Auto Scaling group '{group}'" if draft.target else f"adjust '{group}'"
    return _owned_elsewhere(draft, f"a member of Auto Scaling group '{group}'", change)


def spot_host(facts: Facts, draft: Draft) -> Draft:
    instance, prices = facts.instance, facts.prices
    if instance.lifecycle != "spot":
        return draft
    rate = "its Spot price" if instance.instance_type in prices.spot else "the on-demand rate (no recent Spot price)"
    draft = _owned_elsewhere(draft, f"a Spot instance (cost at {rate})", "change the request or fleet that launches it")
    if draft.target is None:
        return draft
    # A resize's saving is only known at the target's Spot price; on-demand figures would mislead.
    target_spot = prices.spot.get(draft.target.instance_type)
    return replace(draft, cost_after=monthly(target_spot) if target_spot is not None else None)


def reservations(facts: Facts, draft: Draft) -> Draft:
    """Savings that match the bill: a host a capacity reservation, Capacity Block, Reserved Instance or Savings Plan
    pays for saves what the bill drops by, not its list price (domain/commitments.py has the arithmetic)."""
    cover, cost_now, instance = facts.cover, facts.cost_now, facts.instance
    if cover is None or not cover.covered or cost_now is None or instance.lifecycle == "spot":
        return draft
    cost_after = draft.cost_after if draft.cost_after is not None else cost_now
    in_block = cover.capacity is not None and cover.capacity.kind is CapacityKind.CAPACITY_BLOCK
    if cost_after == cost_now and not in_block:
        return draft  # no change, nothing to price
    schedule = draft.finding is Finding.SCHEDULABLE and cost_now > 0
    change = Change(
        cost_now=cost_now,
        cost_after=cost_after,
        target_type=draft.target.instance_type if draft.target else None,
        running_share=float(cost_after / cost_now) if schedule else 0.0,
    )
    net = net_savings(instance, cover, change)
    if net is None:
        return draft
    return replace(draft.noting(net.reason), net_savings=net.amount)


ADJUSTMENTS: tuple[Adjustment, ...] = (no_longer_offered, unpriced, auto_scaling_member, spot_host, reservations)
