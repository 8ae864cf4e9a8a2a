"""Stop/start pairs from busy hours (domain/schedule.py) and where one click reaches (settings, domain/scope.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rightsizer.domain.schedule_plan import (
    NoSchedulePair,
    busy_runs,
    one_pair_fits,
    pair_stopped_hours,
    schedule_plan,
    stopped_hours,
)
from rightsizer.domain.scope import ActionScope
from rightsizer.settings import ConfigError, Settings

WINTER, SUMMER = datetime(2026, 12, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC)


def week(*windows: tuple[int, int, int]) -> list[bool]:
    """Busy hours from (day, first hour, last hour exclusive) triples, Monday = 0, UTC."""
    busy = [False] * 168
    for day, start, end in windows:
        for hour in range(start, end):
            busy[day * 24 + hour] = True
    return busy


OFFICE = week(*((day, 8, 19) for day in range(5)))


def test_busy_runs_join_the_hours_across_sunday_midnight() -> None:
    assert busy_runs(OFFICE) == tuple((day * 24 + 8, 11) for day in range(5))
    assert busy_runs(week((6, 22, 24), (0, 0, 2))) == ((166, 4),)
    assert busy_runs([False] * 168) == () and busy_runs([True] * 168) == ((0, 168),)


def test_office_hours_follow_the_teams_clock_through_summer_time() -> None:
    winter = schedule_plan(busy_runs(OFFICE), "Europe/Berlin", WINTER)
    summer = schedule_plan(busy_runs(OFFICE), "Europe/Berlin", SUMMER)

    # 08:00-19:00 UTC is 09:00-20:00 in Berlin in winter, 10:00-21:00 in summer. The start is 15 minutes early
    # for the boot, the stop 30 minutes late for work that runs long, and Berlin changes its clock: work that
    # follows UTC instead of the clock moves an hour against the pair, so an hour more each side.
    assert (winter.start_cron, winter.stop_cron) == ("cron(45 7 ? * MON-FRI *)", "cron(30 21 ? * MON-FRI *)")
    assert (summer.start_cron, summer.stop_cron) == ("cron(45 8 ? * MON-FRI *)", "cron(30 22 ? * MON-FRI *)")
    assert winter.time_zone == "Europe/Berlin"
    assert winter.description == (
        "starts 07:45 Mon-Fri, stops 21:30 Mon-Fri (Europe/Berlin, an hour's margin each side for the clock change)"
    )


def test_a_zone_without_a_clock_change_keeps_only_the_boot_and_late_work_margins() -> None:
    for zone in ("UTC", "Asia/Tokyo"):
        plan = schedule_plan(busy_runs(OFFICE), zone, SUMMER)
        assert "clock change" not in plan.description
    tokyo = schedule_plan(busy_runs(OFFICE), "Asia/Tokyo", SUMMER)  # UTC+9 all year
    assert (tokyo.start_cron, tokyo.stop_cron) == ("cron(45 16 ? * MON-FRI *)", "cron(30 4 ? * TUE-SAT *)")
    # The southern hemisphere changes its clock too (summer time in January).
    assert "clock change" in schedule_plan(busy_runs(OFFICE), "Australia/Sydney", WINTER).description


def test_a_window_across_midnight_stops_on_the_next_day_and_half_hour_zones_keep_their_minutes() -> None:
    nights = schedule_plan(
        busy_runs(week(*((day, 22, 24) for day in range(5)), *((day, 0, 2) for day in range(1, 6)))), "UTC", WINTER
    )
    assert (nights.start_cron, nights.stop_cron) == ("cron(45 21 ? * MON-FRI *)", "cron(30 2 ? * TUE-SAT *)")
    india = schedule_plan(busy_runs(OFFICE), "Asia/Kolkata", WINTER)  # UTC+05:30, no clock change
    assert (india.start_cron, india.stop_cron) == ("cron(15 13 ? * MON-FRI *)", "cron(0 1 ? * TUE-SAT *)")


def test_idle_gaps_the_margins_would_eat_get_no_pair_and_the_saving_counts_stopped_hours() -> None:
    # Busy 00:00-23:00 every day: one idle hour less 2.75 hours of margins leaves nothing to stop.
    long_days = busy_runs(week(*((day, 0, 23) for day in range(7))))
    assert not one_pair_fits(long_days)
    with pytest.raises(NoSchedulePair, match="under an hour stopped"):
        schedule_plan(long_days, "UTC", WINTER)
    # Office hours: 113 idle hours, 5 windows x 2.75 hours of margins.
    assert stopped_hours(busy_runs(OFFICE)) == 113 - 5 * 2.75


@pytest.mark.parametrize(
    ("zone", "stopped"),
    [("UTC", 113 - 5 * 0.75), ("Asia/Tokyo", 113 - 5 * 0.75), ("Europe/Berlin", 113 - 5 * 2.75)],
)
def test_a_pair_stops_the_host_for_the_idle_hours_less_the_margins_its_zone_keeps(zone: str, stopped: float) -> None:
    """What the saving of a schedule counts: the pair approving it creates, in its zone. A zone without summer time
    needs no clock-change hour either side; the least over every zone stays `stopped_hours`."""
    plan = schedule_plan(busy_runs(OFFICE), zone, WINTER)

    assert pair_stopped_hours(busy_runs(OFFICE), zone, WINTER) == stopped
    running = 168 - stopped  # ...which is what the pair's own clock times keep it running: 5 days of start to stop
    start, stop = (int(cron.split()[1]) * 60 + int(cron.split()[0][5:]) for cron in (plan.start_cron, plan.stop_cron))
    assert running == 5 * ((stop - start) % (24 * 60)) / 60  # Tokyo: 17:00 to 04:00 the next day
    assert pair_stopped_hours(busy_runs(OFFICE), zone, WINTER) >= stopped_hours(busy_runs(OFFICE))
    with pytest.raises(NoSchedulePair, match="not an IANA time zone"):
        pair_stopped_hours(busy_runs(OFFICE), "Mars/Olympus", WINTER)


def test_hours_that_differ_from_day_to_day_or_an_unknown_zone_get_no_pair() -> None:
    uneven = busy_runs(week((0, 8, 19), (1, 10, 19)))
    assert not one_pair_fits(uneven)
    with pytest.raises(NoSchedulePair, match="different times on different days"):
        schedule_plan(uneven, "UTC", WINTER)
    with pytest.raises(NoSchedulePair, match="not an IANA time zone"):
        schedule_plan(busy_runs(OFFICE), "Mars/Olympus", WINTER)
    assert one_pair_fits(busy_runs(OFFICE))


def test_settings_say_where_one_click_acts_and_which_zone_a_team_lives_in() -> None:
    env = {
        "AWS_REGION": "us-east-1",
        "HOME_ACCOUNT_ID": "111122223333",
        "ACTION_REGIONS": "eu-west-1, us-west-2",
        "MEMBER_ACTIONS": "true",
        "TEAM_TIME_ZONES": "research=Europe/Berlin, ads=America/New_York",
        "SCHEDULE_TIMEZONE": "Asia/Tokyo",
    }
    settings = Settings.from_env(env)

    assert settings.action_scope == ActionScope.of(
        "111122223333", {"us-east-1", "eu-west-1", "us-west-2"}, member_accounts=True
    )
    assert settings.time_zone_of("research") == "Europe/Berlin" and settings.time_zone_of("") == "Asia/Tokyo"
    # The analyzer prices each schedule in the zone the approval creates it in: the same zones, in its policy.
    assert settings.policy.time_zones.of("research") == "Europe/Berlin"
    assert (
        settings.policy.time_zones.of("ads") == "America/New_York" and settings.policy.time_zones.of("") == "Asia/Tokyo"
    )
    with pytest.raises(ConfigError, match="TEAM_TIME_ZONES must be comma-separated key=value pairs"):
        Settings.from_env({**env, "TEAM_TIME_ZONES": "research"})


def test_without_home_account_id_the_workflow_arn_names_the_home_account() -> None:
    arn = "arn:aws:states:eu-west-1:444455556666:stateMachine:gpu-rightsizer-resize"
    settings = Settings.from_env({"AWS_REGION": "eu-west-1", "RESIZE_STATE_MACHINE_ARN": arn})

    assert settings.home_account == "444455556666"
    assert settings.action_scope.covers("444455556666", "eu-west-1")
    assert not settings.action_scope.covers("111122223333", "eu-west-1")  # members only with MEMBER_ACTIONS
