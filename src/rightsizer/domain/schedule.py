"""Weekly patterns: which hours of the week a host works, and whether that repeats week after week."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.schedule_plan import describe_windows
from rightsizer.domain.usage.stats import HOURS_PER_WEEK, hour_of_week

# A week of hour-of-week buckets may miss a few hours (agent restarts): tolerate this many unknown.
_MAX_UNKNOWN_HOURS = 8


@dataclass(frozen=True)
class WeeklyPattern:
    """The busy hours of a host's week, from the hour-of-week maxima of accelerator, CPU and network."""

    busy: tuple[bool, ...]  # one per hour of the week, Monday 00:00 UTC first
    weeks_observed: int  # full weeks of accelerator history behind the pattern
    # Share of the accelerator's busy hours-of-week that were busy in at least two different weeks:
    # 1.0 for office hours or a weekly job at a fixed time, low when activity wanders. None: unknown.
    recurring_share: float | None

    @property
    def idle_hours(self) -> int:
        return self.busy.count(False)

    @property
    def windows(self) -> str:
        return describe_windows(self.busy)

    @property
    def repeats(self) -> bool:
        return self.weeks_observed >= 2 and self.recurring_share is not None and self.recurring_share >= 1.0

    @property
    def irregular(self) -> bool:
        return self.recurring_share is not None and self.recurring_share < 0.5


def weekly_pattern(usage: UsageSummary, policy: Policy, vcpus: int = 0) -> WeeklyPattern | None:
    """The host's busy hours of the week when a stop schedule is worth it: a week of nearly complete
    history and at least the policy's idle hours a week (but not the whole week). An hour is busy when an
    accelerator works, an encoder session is open, the CPU's mean reaches the policy's share of the host or of
    `vcpus` whole vCPUs busy, a job reaches its activity level in that hour every week, or the network serves."""
    if usage.accelerator_days < policy.min_schedule_days:
        return None
    peaks = usage.hourly_accelerator_peak
    # One pass over the 168 hours, no call per hour: every host of the fleet is asked this. List
    # comprehensions, not generators: resuming a generator 168 times costs more than the comparisons; and
    # `is None` costs less than tuple.count(None), which asks each float whether it equals None.
    if len(peaks) != HOURS_PER_WEEK or len([peak for peak in peaks if peak is None]) > _MAX_UNKNOWN_HOURS:
        return None
    idle_util, network_active = policy.idle_util_pct, policy.network_active_gbps
    # A CPU mean is work from this share of the host, or from a whole busy vCPU on a large one.
    cpu_idle = min(policy.cpu_idle_pct, 100 * policy.busy_vcpus / vcpus) if vcpus else policy.cpu_idle_pct
    if len([peak for peak in peaks if peak is not None and peak < idle_util]) < policy.min_schedule_idle_hours:
        return None  # idle hours are quiet accelerator hours first: too few of those already
    busy = tuple(
        [
            peak is None  # an hour without accelerator data cannot be shown idle
            or peak >= idle_util
            or (cpu is not None and cpu >= cpu_idle)
            or (network is not None and network >= network_active)
            for peak, cpu, network in zip(
                peaks,
                _week_or_unknown(usage.hourly_cpu_mean),
                _week_or_unknown(usage.hourly_network_mean_gbps),
                strict=True,
            )
        ]
    )
    if usage.hourly_encoder_sessions:  # an hour with an encoder session open is busy, whatever the SMs did
        busy = tuple(
            [
                hour_busy or (sessions is not None and sessions >= 1)
                for hour_busy, sessions in zip(busy, _week_or_unknown(usage.hourly_encoder_sessions), strict=True)
            ]
        )
    if usage.hourly_cpu_peak:  # a job at that hour every week (a nightly cron of a few minutes) keeps its hour
        cpu_active = policy.cpu_activity_pct
        busy = tuple(
            [
                hour_busy or (peak is not None and peak >= cpu_active)
                for hour_busy, peak in zip(busy, _week_or_unknown(usage.hourly_cpu_peak), strict=True)
            ]
        )
    idle = busy.count(False)
    if idle < policy.min_schedule_idle_hours or idle == HOURS_PER_WEEK:
        return None  # too few idle hours to be worth a schedule (or never busy: that is idle)
    weeks, recurring = _recurrence(usage, policy)
    return WeeklyPattern(busy=busy, weeks_observed=weeks, recurring_share=recurring)


def _week_or_unknown(values: Sequence[float | None]) -> Sequence[float | None]:
    return values if len(values) == HOURS_PER_WEEK else (None,) * HOURS_PER_WEEK


def _recurrence(usage: UsageSummary, policy: Policy) -> tuple[int, float | None]:
    """(weeks of the hourly timeline with data, share of busy hours-of-week busy in two or more of them)."""
    timeline = usage.accelerator_hour_peaks
    if not timeline:
        return int(usage.accelerator_days // 7), None
    start = int(usage.window_start.timestamp())
    first_bucket = hour_of_week(start - start % 3600)
    weeks_with_data = {
        week
        for week in range(len(timeline) // HOURS_PER_WEEK)
        if sum(v is not None for v in timeline[week * HOURS_PER_WEEK : (week + 1) * HOURS_PER_WEEK])
        >= HOURS_PER_WEEK - _MAX_UNKNOWN_HOURS
    }
    encoders = usage.encoder_hour_sessions
    if len(encoders) != len(timeline):
        encoders = (None,) * len(timeline)
    weeks_by_bucket: dict[int, set[int]] = {}
    for offset, (peak, sessions) in enumerate(zip(timeline, encoders, strict=True)):
        week = offset // HOURS_PER_WEEK
        busy = (peak is not None and peak >= policy.idle_util_pct) or (sessions is not None and sessions >= 1)
        if week in weeks_with_data and busy:
            weeks_by_bucket.setdefault((first_bucket + offset) % HOURS_PER_WEEK, set()).add(week)
    if len(weeks_with_data) < 2 or not weeks_by_bucket:
        return len(weeks_with_data), None
    recurring = sum(1 for seen in weeks_by_bucket.values() if len(seen) >= 2)
    return len(weeks_with_data), recurring / len(weeks_by_bucket)
