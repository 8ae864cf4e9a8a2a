"""Schedule removal: delete a host's stop/start pair (`/gpu schedules` → Remove), right after the action role is
proven: it takes no lock and never describes the host. It decides from what Scheduler still lists."""

from __future__ import annotations

from rightsizer.domain.action_spec import ActionSpec, PairChange, kind_of
from rightsizer.domain.workflow.asl import Path, State, equals, fmt, goto, intrinsic, state
from rightsizer.domain.workflow.fragments import (
    CAUSE,
    IN,
    PAIR_PREFIX,
    ROLLBACK_FAILURE,
    SCHEDULE_FIELDS,
    SCHEDULE_IN,
    SUCCEEDED,
    audit,
    delete_schedule,
    done,
    ends_as,
    note,
    scheduler,
)
from rightsizer.domain.workflow.plugs import Entry, Fragment, Route

SPEC = ActionSpec(
    kind_of(__name__),
    name="Schedule removal",
    done="Schedule removed",
    becomes="no schedule",
    change="removal of the stop/start schedule",
    pair=PairChange.REMOVES,
    # ListSchedules: the removal decides from what is left, never from error names.
    permissions=frozenset({"scheduler:DeleteSchedule", "scheduler:ListSchedules"}),
)


def unschedule() -> dict[str, State]:
    """Delete both halves, then decide from what Scheduler still lists (a half deleted by hand is no error)."""
    delete_stop = delete_schedule(
        "stop",
        "DeleteStartSchedule",
        "DeleteStartSchedule",
        "A schedule deleted by hand is no error: the listing below decides, from what exists, never from error names.",
    )
    return {
        "DeleteStopSchedule": delete_stop,
        "DeleteStartSchedule": delete_schedule("start", "ListRemainingSchedules", "ListRemainingSchedules"),
        "ListRemainingSchedules": scheduler(
            "listSchedules",
            {"GroupName": SCHEDULE_IN.group, "NamePrefix": fmt(PAIR_PREFIX, IN.instance_id)},
            "SchedulesGone",
            on_error="RemovalUnverified",
            result=Path("$.remaining"),
            selector={"count": intrinsic("ArrayLength", Path("$.Schedules"))},
        ),
        "SchedulesGone": state(
            "Choice",
            Choices=[goto(equals(Path("$.remaining.count"), 0), "RecordUnscheduled")],
            Default="RemovalIncomplete",
        ),
        "RecordUnscheduled": audit(
            "schedules_deleted",
            fmt(
                "schedules {} and {} deleted from group {}",
                SCHEDULE_IN.stop_name,
                SCHEDULE_IN.start_name,
                SCHEDULE_IN.group,
            ),
            "OutcomeUnscheduled",
        ),
        "RemovalUnverified": note(
            ROLLBACK_FAILURE, fmt("the schedules could not be listed: {}", CAUSE), "OutcomeUnscheduleFailed"
        ),
        "RemovalIncomplete": note(
            ROLLBACK_FAILURE,
            fmt("{} schedule(s) of {} are still there", Path("$.remaining.count"), IN.instance_id),
            "OutcomeUnscheduleFailed",
        ),
    }


def outcomes() -> dict[str, State]:
    rollback_reason = ROLLBACK_FAILURE.dot("reason")
    return {
        "OutcomeUnscheduled": ends_as(
            SUCCEEDED,
            "unscheduled",
            fmt(
                "Removed: {} no longer stops and starts on a schedule ({} and {} deleted).",
                IN.instance_id,
                SCHEDULE_IN.stop_name,
                SCHEDULE_IN.start_name,
            ),
        ),
        "OutcomeUnscheduleFailed": ends_as(
            "rollback_failed",
            "unschedule_failed",
            fmt(
                "Needs a person: removing the schedules of {} failed ({}). Check group {} in {}.",
                IN.instance_id,
                rollback_reason,
                SCHEDULE_IN.group,
                IN.region,
            ),
        ),
        "DoneUnscheduled": done(
            "unchanged", "no instance change", "A removal never describes the host: its output says what was removed."
        ),
    }


def states() -> dict[str, State]:
    return {**unschedule(), **outcomes()}


WORKFLOW = Fragment(
    states,
    routes={Entry.ROLE_CHECKED: Route("DeleteStopSchedule")},
    request=SCHEDULE_FIELDS,
    done="DoneUnscheduled",
)
