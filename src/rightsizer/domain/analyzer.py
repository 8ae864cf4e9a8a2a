"""Turn one instance's usage summary into one recommendation. Pure functions only.

The rules live in `rules/`, one module per concern, asked in the order `rules/registry.py` gives: gates
(exclusions, data sufficiency), findings from measured usage (the first that answers decides), then adjustments.
Safety rules enforced there and tested one by one:
- missing or short accelerator history is `insufficient_data`, never `idle` or a resize;
- GPU memory that looks reserved by a framework is not a working set: it neither shrinks a target nor
  proves an out-of-memory risk; a measured peak x headroom is the floor of every downsizing target;
- a target carries the steady load (p95) and the busiest hours (p99 of hourly maxima), projected by the
  largest of the tensor, bandwidth and FP32 ratios;
- host RAM that was not measured keeps its share of today's RAM, and such a resize is not one click;
- opted-out, Spot, Auto Scaling, stopped and instance-store hosts are never offered an in-place resize.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import HostCover
from rightsizer.domain.facts.host import Facts
from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.guards import Gap
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Evidence, Recommendation, advice_id
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.money import CENT, HOURS_PER_MONTH
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.rules.draft import Draft
from rightsizer.domain.rules.registry import ADJUSTMENTS, FINDING_RULES, GATES
from rightsizer.domain.schedule_plan import busy_runs
from rightsizer.domain.sizing.load import busiest
from rightsizer.domain.sizing.memory import memory_reserved
from rightsizer.domain.sizing.targets import host_prices
from rightsizer.domain.sizing.units import unit_view


def recommendation_id(instance: Instance, finding: Finding, target_type: str | None) -> str:
    """An EC2 host's advice id (models.advice_id)."""
    return advice_id(
        instance.account_id, instance.region, instance.instance_id, instance.instance_type, finding, target_type or ""
    )


def decide(facts: Facts) -> tuple[Draft, Measured | None]:
    """The draft the rules give this host, and the measured view when the gates let it through."""
    measured: Measured | None = None
    draft = next((d for gate in GATES if (d := gate(facts)) is not None), None)
    if draft is None:
        if facts.spec is None or facts.usage is None:  # the gates answer for both: a broken rule order
            raise RuntimeError(f"{facts.instance.instance_id} passed the gates without a spec and usage")
        measured = Measured(facts, facts.spec, facts.usage)
        draft = next(d for rule in FINDING_RULES if (d := rule(measured)) is not None)
    for adjust in ADJUSTMENTS:
        draft = adjust(facts, draft)
    return draft, measured


def analyze_instance(
    instance: Instance,
    usage: UsageSummary | None,
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    now: datetime,
    cover: HostCover | None = None,
    gaps: tuple[Gap, ...] = (),
) -> Recommendation:
    """`gaps`: what could not be read of the host's region or shard; the one clicks it guards are held back."""
    facts = Facts(instance, usage, catalog, host_prices(catalog, prices, instance.billing), policy, cover, gaps)
    draft, measured = decide(facts)
    draft = part_time(facts, draft)
    share = Decimal(str(facts.running_share))
    cost_now = _at(facts.cost_now, share)
    cost_after = _at(draft.cost_after, share) if draft.cost_after is not None else cost_now
    target_type = draft.target.instance_type if draft.target else None
    list_savings = None if cost_now is None or cost_after is None else cost_now - cost_after
    return Recommendation(
        recommendation_id=recommendation_id(instance, draft.finding, target_type),
        generated_at=now,
        account_id=instance.account_id,
        region=instance.region,
        instance_id=instance.instance_id,
        instance_name=instance.name,
        instance_type=instance.instance_type,
        availability_zone=instance.availability_zone,
        state=instance.state,
        finding=draft.finding,
        target_type=target_type,
        monthly_cost=cost_now,
        monthly_cost_after=cost_after,
        confidence=draft.confidence,
        actionable=draft.actionable,
        reasons=(*draft.reasons, draft.advice) if draft.advice else draft.reasons,
        evidence=_evidence(facts, measured, draft),
        alternatives=draft.alternatives,
        asg_name=instance.asg_name,
        owner=owner.description if (owner := instance.owner) is not None else None,
        lifecycle=instance.lifecycle,
        held_back=draft.held_back,
        lookback_days=policy.lookback_days,
        team=instance.tags.get(policy.team_tag, ""),
        monthly_savings_net=_at(draft.net_savings, share) if draft.net_savings is not None else list_savings,
        managed=instance.tags.get(policy.managed_tag_key) == "true",
        capacity_reservation=_reservation(instance, cover),
        would_be=draft.would_be,
        risks=draft.risks,
        tags=dict(instance.tags),
    )


def _reservation(instance: Instance, cover: HostCover | None) -> str | None:
    """The ODCR or Capacity Block the host runs in: as the commitments matched it, else as EC2 names it."""
    if cover is not None and cover.capacity is not None:
        return cover.capacity.reservation_id
    return instance.capacity_reservation_id


def _at(amount: Decimal | None, share: Decimal) -> Decimal | None:
    """A full-time monthly amount for a host that runs `share` of the time."""
    if amount is None or share == 1:
        return amount
    return (amount * share).quantize(CENT)


def part_time(facts: Facts, draft: Draft) -> Draft:
    """The rules price on 730 hours a month; a host that stops itself is priced on the hours it runs (the analyzer
    scales every amount by its running share), and the reasons say so."""
    share = facts.running_share
    if share >= 1:
        return draft
    hours = float(HOURS_PER_MONTH) * share
    return draft.noting(
        f"priced on the ~{hours:.0f} hours a month it runs ({share:.0%} of the last week, or of the last three "
        "days where lower: AWS/EC2 publishes CPUUtilization only while an instance runs), not on 730"
    )


def _evidence(facts: Facts, measured: Measured | None, draft: Draft) -> Evidence:
    usage, spec = facts.usage, facts.spec
    if usage is None or spec is None:
        return Evidence()
    has_devices = bool(usage.devices)
    p95, burst, peak = measured.load if measured is not None else busiest(usage.devices)
    memory_peaks = [d.memory_used_peak_mib for d in usage.devices if d.memory_used_peak_mib is not None]
    view = measured.view if measured is not None else unit_view(spec, usage, facts.policy)
    return Evidence(
        observed_days=round(usage.accelerator_days, 2),
        coverage=round(usage.accelerator_coverage, 3),
        busy_units=len(view.busy) + view.unseen if has_devices else 0,
        total_units=spec.compute_units,
        accelerator_p95=round(p95, 1) if has_devices else None,
        accelerator_peak=round(peak, 1) if has_devices else None,
        accelerator_burst=round(burst, 1) if has_devices else None,
        memory_peak_mib=max(memory_peaks) if memory_peaks else None,
        memory_per_unit_mib=spec.memory_per_unit_mib,
        memory_reserved=any(memory_reserved(d, spec, facts.policy) for d in usage.devices),
        cpu_p95=round(usage.cpu.p95, 1) if usage.cpu else None,
        network_peak_gbps=round(usage.network_peak_gbps, 3) if usage.network_peak_gbps is not None else None,
        network_p95_gbps=round(usage.network_p95_gbps, 3) if usage.network_p95_gbps is not None else None,
        host_memory_peak_pct=usage.host_memory_peak_pct,
        daily_accelerator_mean=tuple([None if v is None else round(v, 1) for v in usage.daily_accelerator_mean]),
        idle_hours_per_week=draft.pattern.idle_hours if draft.pattern else None,
        schedule=draft.pattern.windows if draft.pattern else None,
        busy_windows=busy_runs(draft.pattern.busy) if draft.pattern else (),
        schedule_plan=draft.plan.description if draft.plan else None,
        daily_busiest_unit=daily_busiest(usage.accelerator_hour_peaks, len(usage.daily_accelerator_mean)),
    )


def daily_busiest(hour_peaks: Sequence[float | None], days: int) -> tuple[float | None, ...]:
    """The busiest unit day by day: the mean of its hourly peaks over each of the last `days` days of the window
    (oldest first; None for a day without a reading)."""
    if not any(peak is not None for peak in hour_peaks):
        return ()
    end, found = len(hour_peaks), []
    for back in range(days):
        day = [peak for peak in hour_peaks[max(0, end - 24 * (back + 1)) : max(0, end - 24 * back)] if peak is not None]
        found.append(round(sum(day) / len(day), 1) if day else None)
    return tuple(reversed(found))


def analyze_fleet(
    instances: Iterable[Instance],
    usage: Mapping[str, UsageSummary],
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    now: datetime,
    covers: Mapping[str, HostCover] | None = None,
    gaps: tuple[Gap, ...] = (),
) -> list[Recommendation]:
    """One recommendation per host of one region; `covers` (domain.commitments.coverage) say which reservation or
    plan pays for which host, so that savings are priced as the bill will see them; `gaps`, which of the region's
    sources could not be read (domain/guards.py)."""
    found = covers or {}
    return [
        analyze_instance(
            instance,
            usage.get(instance.instance_id),
            catalog,
            prices,
            policy,
            now,
            found.get(instance.instance_id),
            gaps,
        )
        for instance in instances
    ]
