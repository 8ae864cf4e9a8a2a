"""Busy only some hours of the week: stop the host outside them when that saves more than any resize, priced on the
stop/start pair an approval creates in the team's time zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.money import CENT
from rightsizer.domain.rules.draft import Draft, Rule
from rightsizer.domain.rules.stopping import may_not_restart, with_stop_risks
from rightsizer.domain.rules.video import video_unknown
from rightsizer.domain.schedule import WeeklyPattern
from rightsizer.domain.schedule_plan import (
    BOOT_LEAD_MINUTES,
    STOP_GRACE_MINUTES,
    NoSchedulePair,
    SchedulePlan,
    busy_runs,
    one_pair_fits,
    pair_stopped_hours,
    schedule_plan,
    stopped_hours,
)
from rightsizer.domain.usage.stats import HOURS_PER_WEEK
from rightsizer.domain.wording import usd


def schedulable(m: Measured) -> Draft | None:
    """Busy only some hours of the week: stop the host outside them (when that beats any resize)."""
    pattern = m.pattern
    if pattern is None:
        return None
    saved = schedule_saving(m, pattern)
    resize_saving = _resize_saving(m)
    if resize_saving is not None and (saved is None or resize_saving > saved):
        return None  # the resize saves more: `overprovisioned` answers and names the schedule
    policy = m.policy
    pair = _pair(m, pattern)
    reasons = [
        f"busy only {pattern.windows}; idle {pattern.idle_hours} of {HOURS_PER_WEEK} hours a week (every "
        f"{m.unit} below {policy.idle_util_pct:g}%, CPU below {policy.cpu_idle_pct:g}% and network below "
        f"{policy.network_active_gbps:g} Gbps in those hours)",
        _pair_text(pair),
        m.units_text,
        m.host_text,
        m.observed_text,
    ]
    confidence, doubt = _pattern_confidence(m, pattern)
    if doubt:
        reasons.append(doubt)
    risked = with_stop_risks(m, Draft(Finding.SCHEDULABLE, tuple(reasons)))
    reasons = list(risked.reasons)
    if may_not_restart(m):
        confidence = confidence.at_most(Confidence.MEDIUM)  # the schedule itself may leave the host down
    one_click = False
    if not pattern.irregular:
        one_click, why_not = _one_click_schedule(pattern)
        if why_not:
            reasons.append(why_not)
    if resize_saving is not None and m.downsize is not None:
        reasons.append(f"also possible: resizing to {m.downsize.spec.instance_type}, saving {usd(resize_saving)}/month")
    draft = Draft(
        Finding.SCHEDULABLE,
        tuple(reasons),
        cost_after=None if m.cost_now is None or saved is None else m.cost_now - saved,
        confidence=confidence,
        pattern=pattern,
        advice=None
        if pattern.irregular
        else "stop the host outside the busy hours (an EventBridge Scheduler stop/start pair), allowing a few "
        "minutes for it to boot",
        actionable=one_click,
        risks=risked.risks,
        plan=pair.plan,
    )
    return video_unknown(m, draft)


@dataclass(frozen=True)
class Pair:
    """The stop/start pair approving a schedule creates (None: no single pair in the team's zone), and the hours a
    week it keeps the host stopped: what the advice prices."""

    plan: SchedulePlan | None
    stopped_hours: float


def _pair(m: Measured, pattern: WeeklyPattern) -> Pair:
    """The pair in the zone the approval writes it in (the team's, Policy.time_zones), at the window's end."""
    windows = busy_runs(pattern.busy)
    zone = m.policy.time_zones.of(m.instance.tags.get(m.policy.team_tag, ""))
    try:
        at = m.usage.window_end
        return Pair(schedule_plan(windows, zone, at), pair_stopped_hours(windows, zone, at))
    except NoSchedulePair:
        return Pair(None, stopped_hours(windows))  # the least any zone's pair stops it


def schedule_saving(m: Measured, pattern: WeeklyPattern) -> Decimal | None:
    """On the full-time basis the rules price in (see analyzer.part_time): the idle hours are hours the host ran,
    so on a host that runs part of the time they are a larger share of what it costs."""
    if m.cost_now is None:
        return None
    # The stopped hours, not the idle ones: the pair starts early for the boot and stops late for a long run.
    share = min(1.0, _pair(m, pattern).stopped_hours / HOURS_PER_WEEK / m.facts.running_share)
    return (m.cost_now * Decimal(str(share))).quantize(CENT)


def _resize_saving(m: Measured) -> Decimal | None:
    if m.downsize is None or m.facts.list_cost is None:
        return None
    return m.facts.list_cost - m.downsize.monthly


def _pattern_confidence(m: Measured, pattern: WeeklyPattern) -> tuple[Confidence, str | None]:
    """How far a weekly pattern can be trusted, and why not more."""
    if pattern.irregular:
        return Confidence.LOW, (
            "the busy hours differ from week to week: no fixed schedule fits; start the host when the work "
            "needs it (or run the work as a batch job) instead of keeping it up"
        )
    if pattern.repeats:
        return m.data_confidence, None
    if pattern.weeks_observed < 2:
        why = "the pattern was seen in one week only"
    elif pattern.recurring_share is None:
        why = "whether the busy hours repeat every week could not be checked (no hourly history)"
    else:
        why = f"only {pattern.recurring_share:.0%} of the busy hours repeat in both weeks"
    return m.data_confidence.at_most(Confidence.MEDIUM), why


def _pair_text(pair: Pair) -> str:
    hours = f"{pair.stopped_hours:g}"
    if pair.plan is None:
        return (
            f"the saving counts {hours} stopped hours a week: each busy window keeps {BOOT_LEAD_MINUTES} minutes to "
            f"boot, {STOP_GRACE_MINUTES} for work that runs late and, where the team's clock changes, an hour each side"
        )
    return (
        f"the saving counts the {hours} hours a week that the pair an approval creates keeps the host stopped "
        f"({BOOT_LEAD_MINUTES} minutes' lead to boot, {STOP_GRACE_MINUTES} for work that runs late): it "
        f"{pair.plan.description}"
    )


def _one_click_schedule(pattern: WeeklyPattern) -> tuple[bool, str | None]:
    """Whether approving can create the schedule pair, and why not when it cannot."""
    if not pattern.repeats:
        return False, "no one-click schedule until the busy hours have repeated in two weeks of history"
    if not one_pair_fits(busy_runs(pattern.busy)):
        return False, "the busy hours differ from day to day: one stop/start pair cannot follow them, schedule by hand"
    return True, None


# Asked in this order (registry.FINDING_RULES places this module's rules among the others').
RULES: tuple[Rule, ...] = (schedulable,)
