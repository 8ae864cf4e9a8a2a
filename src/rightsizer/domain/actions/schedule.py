"""Schedule: an EventBridge Scheduler stop/start pair for an EC2 host, created once the host is validated (the start
half first: alone it is harmless), and deleted again when anything fails."""

from __future__ import annotations

from rightsizer.domain.action_spec import DESCRIBE, HOST_GUARDS, ActionSpec, PairChange, kind_of
from rightsizer.domain.guards import Source
from rightsizer.domain.workflow.asl import Format, Path, State, fmt
from rightsizer.domain.workflow.fragments import (
    AUDIT_ERROR,
    CAUSE,
    FAILURE,
    IN,
    ROLLBACK_FAILURE,
    SCHEDULE_FIELDS,
    SCHEDULE_IN,
    SUCCEEDED,
    audit,
    delete_schedule,
    ends_as,
    health,
    note,
    scheduler,
)
from rightsizer.domain.workflow.plugs import Entry, Fragment, Route

SPEC = ActionSpec(
    kind_of(__name__),
    name="Schedule",
    done="Scheduled",
    becomes="stop/start schedule",
    change="stop/start schedule ({schedule})",
    target_text="stop/start on a schedule",
    approve_label="Approve schedule",
    confirm_title="Schedule this host?",
    confirm_button="Create schedule",
    confirm_text="stop and start the {type} on a schedule ({schedule}).",
    stops_host=True,
    pair=PairChange.CREATES,
    guarded_by=HOST_GUARDS | {Source.OFFERINGS},  # ...and its type offered, to start again every day
    # DeleteSchedule: the rollback deletes a half-created pair; PassRole: each half runs as the scheduler role.
    permissions=DESCRIBE | {"scheduler:CreateSchedule", "scheduler:DeleteSchedule", "iam:PassRole"},
)


def _create_schedule(half: str, next_state: str, on_error: str) -> State:
    """One half of the pair (`half`: "start" or "stop"), as the approver approved it."""
    return scheduler(
        "createSchedule",
        {
            "Name": getattr(SCHEDULE_IN, f"{half}_name"),
            "GroupName": SCHEDULE_IN.group,
            "ScheduleExpression": getattr(SCHEDULE_IN, f"{half}_cron"),
            "ScheduleExpressionTimezone": SCHEDULE_IN.time_zone,
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "State": "ENABLED",
            "Description": fmt(
                f"GPU Rightsizer: {half} {{}} ({{}}), approved by {{}}",
                IN.instance_id,
                SCHEDULE_IN.description,
                IN.approver,
            ),
            "Target": getattr(SCHEDULE_IN, f"{half}_target"),
        },
        next_state,
        on_error=on_error,
    )


def _scheduled(half: str) -> Format:
    return fmt(
        "schedule {} in group {}: {} in {}",
        getattr(SCHEDULE_IN, f"{half}_name"),
        SCHEDULE_IN.group,
        getattr(SCHEDULE_IN, f"{half}_cron"),
        SCHEDULE_IN.time_zone,
    )


def schedules() -> dict[str, State]:
    """Create the pair, the start half first (alone it is harmless); undo what was created when anything fails."""
    delete_stop_again = delete_schedule(
        "stop",
        "DeleteStartScheduleAgain",
        "ScheduleUndoFailed",
        "Undo, the stop half first: a start half left alone is harmless.",
    )
    return {
        "CreateStartSchedule": _create_schedule("start", "RecordStartScheduled", "StartScheduleFailed"),
        "RecordStartScheduled": audit(
            "start_scheduled", _scheduled("start"), "CreateStopSchedule", on_error="ScheduleAuditFailed"
        ),
        "CreateStopSchedule": _create_schedule("stop", "RecordStopScheduled", "StopScheduleFailed"),
        "RecordStopScheduled": audit(
            "stop_scheduled", _scheduled("stop"), "ScheduleCreated", on_error="ScheduleAuditFailedAfterBoth"
        ),
        "ScheduleCreated": health(fmt("schedule created: {}", SCHEDULE_IN.description), "OutcomeScheduled"),
        "StopScheduleFailed": note(
            FAILURE, fmt("the stop schedule could not be created: {}", CAUSE), "DeleteStartScheduleAgain"
        ),
        "StartScheduleFailed": note(
            FAILURE, fmt("the start schedule could not be created: {}", CAUSE), "OutcomeScheduleUnchanged"
        ),
        "ScheduleAuditFailed": note(
            FAILURE, fmt("audit log unavailable: {}", AUDIT_ERROR.dot("Cause")), "DeleteStartScheduleAgain"
        ),
        "ScheduleAuditFailedAfterBoth": note(
            FAILURE, fmt("audit log unavailable: {}", AUDIT_ERROR.dot("Cause")), "DeleteStopScheduleAgain"
        ),
        "DeleteStartScheduleAgain": delete_schedule("start", "OutcomeScheduleRolledBack", "ScheduleUndoFailed"),
        "DeleteStopScheduleAgain": delete_stop_again,
        "ScheduleUndoFailed": note(
            ROLLBACK_FAILURE,
            fmt("deleting it again failed: {}", Path("$.delete_error.Cause")),
            "OutcomeScheduleRollbackFailed",
        ),
    }


def outcomes() -> dict[str, State]:
    reason, rollback_reason = FAILURE.dot("reason"), ROLLBACK_FAILURE.dot("reason")
    return {
        "OutcomeScheduled": ends_as(
            SUCCEEDED,
            "scheduled",
            fmt(
                "Scheduled: {} {} (EventBridge Scheduler {} and {} in group {}).",
                IN.instance_id,
                SCHEDULE_IN.description,
                SCHEDULE_IN.stop_name,
                SCHEDULE_IN.start_name,
                SCHEDULE_IN.group,
            ),
        ),
        "OutcomeScheduleUnchanged": ends_as(
            "unchanged",
            "unchanged",
            fmt("Nothing was changed: {} keeps running as before; {}", IN.instance_id, reason),
        ),
        "OutcomeScheduleRolledBack": ends_as(
            "rolled_back",
            "rolled_back",
            fmt(
                "Rolled back: {}, so the schedules created for {} were deleted again: it keeps running as before.",
                reason,
                IN.instance_id,
            ),
        ),
        "OutcomeScheduleRollbackFailed": ends_as(
            "rollback_failed",
            "rollback_failed",
            fmt(
                "Needs a person: {} and {}. Check the schedules rightsizer-{}-* in group {} ({}).",
                reason,
                rollback_reason,
                IN.instance_id,
                SCHEDULE_IN.group,
                IN.region,
            ),
        ),
    }


def states() -> dict[str, State]:
    return {**schedules(), **outcomes()}


WORKFLOW = Fragment(states, routes={Entry.VALIDATED: Route("CreateStartSchedule")}, request=SCHEDULE_FIELDS)
