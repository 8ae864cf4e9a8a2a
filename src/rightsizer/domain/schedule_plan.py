"""Stop/start schedule pairs for EventBridge Scheduler, from a host's busy hours, in a team's time zone.

Light on purpose (no usage maths): the Slack app's approval path builds pairs, and its cold start stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rightsizer.domain.wording import day_ranges, day_runs

BOOT_LEAD_MINUTES = 15  # the start fires this long before the busy hours, so the host has booted by then
# The stop fires this long after the last busy hour: a job that runs a little longer than usual is not cut off.
STOP_GRACE_MINUTES = 30
# In a zone that changes its clock, the schedule follows the clock, but the work may follow UTC (a cron job on a
# UTC host): an hour more each side keeps both kinds of work inside the running hours all year.
CLOCK_CHANGE_MARGIN_MINUTES = 60
# The running hours a pair adds to each busy window at most, in every zone: what the saving leaves out.
MARGIN_HOURS_PER_WINDOW = (BOOT_LEAD_MINUTES + STOP_GRACE_MINUTES + 2 * CLOCK_CHANGE_MARGIN_MINUTES) / 60
_MIN_STOPPED_MINUTES = 60  # a pair whose stop and next start come closer than this stops nothing worth a reboot
_HOURS_PER_WEEK = 7 * 24
_MINUTES_PER_DAY = 24 * 60
_MINUTES_PER_WEEK = 7 * _MINUTES_PER_DAY
_CRON_DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")


def describe_windows(busy: Sequence[bool]) -> str:
    """'Mon-Fri 08:00-19:00 UTC' style description of the busy hours of the week."""
    by_day: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for day in range(7):
        windows: list[tuple[int, int]] = []
        hour = 0
        while hour < 24:
            if busy[day * 24 + hour]:
                start = hour
                while hour < 24 and busy[day * 24 + hour]:
                    hour += 1
                windows.append((start, hour))
            else:
                hour += 1
        if windows:
            by_day.setdefault(tuple(windows), []).append(day)
    parts = []
    for day_windows, days in by_day.items():
        hours = ", ".join(f"{start:02d}:00-{end:02d}:00" for start, end in day_windows)
        parts.append(f"{day_ranges(days)} {hours}")
    return "; ".join(parts) + " UTC" if parts else "never"


def busy_runs(busy: Sequence[bool]) -> tuple[tuple[int, int], ...]:
    """The busy hours of the week as (first hour of week, hours) runs; a run through Sunday midnight is one run."""
    if all(busy):
        return ((0, len(busy)),) if busy else ()
    if not any(busy):
        return ()
    size = len(busy)
    start = next(hour for hour in range(size) if busy[hour] and not busy[hour - 1])  # busy[-1] wraps
    runs: list[tuple[int, int]] = []
    hour = start
    for _ in range(size):
        if busy[hour % size] and not busy[(hour - 1) % size]:
            length = 0
            while busy[(hour + length) % size]:
                length += 1
            runs.append((hour % size, length))
        hour += 1
    return tuple(sorted(runs))


def schedule_names(instance_id: str) -> tuple[str, str]:
    """The EventBridge Scheduler pair of one host (one pair per host; the workflow lists `rightsizer-<id>-*`)."""
    return f"rightsizer-{instance_id}-stop", f"rightsizer-{instance_id}-start"


class NoSchedulePair(ValueError):
    """The busy hours cannot be expressed as one stop/start pair; the message says why, for people."""


@dataclass(frozen=True)
class SchedulePlan:
    """One EventBridge Scheduler pair: stop when the idle hours begin, start (a little early) when they end."""

    stop_cron: str  # e.g. "cron(0 19 ? * MON-FRI *)", in `time_zone`
    start_cron: str
    time_zone: str  # IANA name, EventBridge Scheduler's ScheduleExpressionTimezone
    description: str  # e.g. "starts 07:45 Mon-Fri, stops 19:00 Mon-Fri (Europe/Berlin)"


def schedule_plan(windows: Sequence[tuple[int, int]], time_zone: str, at: datetime) -> SchedulePlan:
    """The pair for busy `windows` (UTC hours of the week, as `busy_runs` gives them), written in `time_zone` at
    its offset at `at`: the schedule then follows that zone's clock (summer time included), as office hours do.

    Raises NoSchedulePair when no single pair fits (busy hours that differ from day to day) or the zone is unknown.
    """
    if not windows:
        raise NoSchedulePair("the host has no busy hours to schedule around")
    zone = _zone(time_zone)
    offset = at.astimezone(zone).utcoffset()
    shift = int(offset.total_seconds() // 60) if offset is not None else 0
    clock_margin = _clock_margin(zone, at)
    lead, grace = BOOT_LEAD_MINUTES + clock_margin, STOP_GRACE_MINUTES + clock_margin
    _check_stopped_time(windows, lead + grace)
    shapes: set[tuple[int, int]] = set()
    start_days: list[int] = []
    stop_days: list[int] = []
    for first_hour, hours in windows:
        start = (first_hour * 60 - lead + shift) % _MINUTES_PER_WEEK
        stop = ((first_hour + hours) * 60 + grace + shift) % _MINUTES_PER_WEEK
        shapes.add((start % _MINUTES_PER_DAY, stop % _MINUTES_PER_DAY))
        start_days.append(start // _MINUTES_PER_DAY)
        stop_days.append(stop // _MINUTES_PER_DAY)
    if len(shapes) != 1:
        raise NoSchedulePair(
            f"the busy hours ({describe_runs(windows)}) start or end at different times on different days: "
            "one stop/start pair cannot follow them"
        )
    ((start_minute, stop_minute),) = shapes
    start_cron = _cron(start_minute, start_days)
    stop_cron = _cron(stop_minute, stop_days)
    description = (
        f"starts {_clock(start_minute)} {day_ranges(sorted(set(start_days)))}, "
        f"stops {_clock(stop_minute)} {day_ranges(sorted(set(stop_days)))} ({time_zone}"
        + (", an hour's margin each side for the clock change)" if clock_margin else ")")
    )
    return SchedulePlan(stop_cron=stop_cron, start_cron=start_cron, time_zone=time_zone, description=description)


def _zone(time_zone: str) -> ZoneInfo:
    try:
        return ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise NoSchedulePair(f"{time_zone!r} is not an IANA time zone (e.g. Europe/Berlin)") from None


def _clock_margin(zone: ZoneInfo, at: datetime) -> int:
    return CLOCK_CHANGE_MARGIN_MINUTES if changes_clock(zone, at.year) else 0


def pair_stopped_hours(windows: Sequence[tuple[int, int]], time_zone: str, at: datetime) -> float:
    """The hours a week the pair `schedule_plan(windows, time_zone, at)` keeps the host stopped: the idle hours less
    the margins that zone's pair keeps (boot lead, late-work grace, and the clock-change hour each side only where the
    clock changes). What approving it saves. Raises NoSchedulePair for an unknown zone."""
    clock_margin = _clock_margin(_zone(time_zone), at)
    margin = BOOT_LEAD_MINUTES + STOP_GRACE_MINUTES + 2 * clock_margin
    running = sum(hours * 60 + margin for _, hours in windows)
    return max(0.0, (_MINUTES_PER_WEEK - running) / 60)


def changes_clock(zone: ZoneInfo, year: int) -> bool:
    """Whether the zone's UTC offset differs between midwinter and midsummer (summer time, either hemisphere)."""
    offsets = {datetime(year, month, 15, 12, tzinfo=UTC).astimezone(zone).utcoffset() for month in (1, 7)}
    return len(offsets) > 1


def _check_stopped_time(windows: Sequence[tuple[int, int]], margin_minutes: int) -> None:
    """Raise NoSchedulePair when, with the margins, a gap between busy windows leaves the host barely stopped."""
    ordered = sorted(windows)
    for (first, hours), (next_first, _) in zip(ordered, ordered[1:] + ordered[:1], strict=True):
        gap = ((next_first - first - hours) % _HOURS_PER_WEEK) * 60 - margin_minutes
        if gap < _MIN_STOPPED_MINUTES:
            raise NoSchedulePair(
                f"the busy hours ({describe_runs(windows)}) leave under an hour stopped between them once the "
                "host's boot time and a margin for late-running work are kept: a schedule saves nothing"
            )


def one_pair_fits(windows: Sequence[tuple[int, int]]) -> bool:
    """Whether a single stop/start pair can follow these busy hours in every time zone (margins for a clock
    change included, which only some zones need)."""
    try:
        _check_stopped_time(windows, round(MARGIN_HOURS_PER_WINDOW * 60))
        schedule_plan(windows, "UTC", datetime(2026, 1, 5, tzinfo=UTC))
    except NoSchedulePair:
        return False
    return True


def stopped_hours(windows: Sequence[tuple[int, int]]) -> float:
    """The hours a week a pair keeps the host stopped at least: the idle hours less every margin, in any zone (where
    the zone is known, `pair_stopped_hours` is exact)."""
    idle = _HOURS_PER_WEEK - sum(hours for _, hours in windows)
    return max(0.0, idle - len(windows) * MARGIN_HOURS_PER_WINDOW)


def describe_runs(windows: Sequence[tuple[int, int]]) -> str:
    busy = [False] * _HOURS_PER_WEEK
    for first_hour, hours in windows:
        for hour in range(first_hour, first_hour + hours):
            busy[hour % _HOURS_PER_WEEK] = True
    return describe_windows(busy)


def _clock(minute_of_day: int) -> str:
    return f"{minute_of_day // 60:02d}:{minute_of_day % 60:02d}"


def _cron(minute_of_day: int, days: Sequence[int]) -> str:
    """EventBridge Scheduler's cron(minutes hours day-of-month month day-of-week year)."""
    names = ",".join(
        _CRON_DAYS[a] if a == b else f"{_CRON_DAYS[a]}-{_CRON_DAYS[b]}" for a, b in day_runs(sorted(set(days)))
    )
    return f"cron({minute_of_day % 60} {minute_of_day // 60} ? * {names} *)"
