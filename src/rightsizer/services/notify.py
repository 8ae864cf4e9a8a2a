"""Instance workflow progress (resize, stop, schedule, schedule removal) -> approval status, audit trail, the
recommendation's Slack thread, and the registry of schedule pairs (`/gpu schedules`).

Two kinds of events arrive (see the NotifierFunction in template.yaml):
  * the resize state machine's own milestones (`ports.RESIZE_EVENT_SOURCE`), detailed and in its words;
  * Step Functions' "Execution Status Change" for every end of a resize execution, including the ends the
    state machine cannot catch itself (a timeout, an abort, a run-time error, invalid input).
EventBridge delivers at least once and in no guaranteed order, so this use-case is written for
duplicates and stragglers: the approval lifecycle (`domain.approval`) lets an outcome be recorded once,
and only the write that records it posts it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from rightsizer.domain.approval import TERMINAL, ApprovalStatus
from rightsizer.domain.models import ActionKind
from rightsizer.domain.schedule_plan import schedule_names
from rightsizer.services.ports import Approval, ApprovalRecords, AuditEntry, ScheduleRecord

PROGRESS_STATUSES = frozenset({ApprovalStatus.RUNNING}) | TERMINAL
NOTIFIER_ACTOR = "rightsizer"
_DETAIL_FIELDS = ("recommendation_id", "instance_id", "step", "status", "message", "from_type", "to_type")
_ICONS = {
    ApprovalStatus.RUNNING: ":hourglass_flowing_sand:",
    ApprovalStatus.SUCCEEDED: ":white_check_mark:",
    ApprovalStatus.ROLLED_BACK: ":leftwards_arrow_with_hook:",
    ApprovalStatus.UNCHANGED: ":heavy_minus_sign:",
    ApprovalStatus.REFUSED: ":no_entry_sign:",
    ApprovalStatus.FAILED: ":rotating_light:",
}
_DONE = {
    ActionKind.RESIZE: "Resized",
    ActionKind.STOP: "Stopped",
    ActionKind.SCHEDULE: "Scheduled",
    ActionKind.UNSCHEDULE: "Schedule removed",
}
_ACTION_WORDS = {
    ActionKind.RESIZE: "Resize",
    ActionKind.STOP: "Stop",
    ActionKind.SCHEDULE: "Schedule",
    ActionKind.UNSCHEDULE: "Schedule removal",
}
_ENDINGS = {
    ApprovalStatus.ROLLED_BACK: "rolled back",
    ApprovalStatus.UNCHANGED: "failed, nothing was changed",
    ApprovalStatus.REFUSED: "refused",
    ApprovalStatus.FAILED: "failed, needs a person",
}


def headline(action: ActionKind, status: ApprovalStatus) -> str:
    """'Resized', 'Stop refused', 'Schedule removal failed, needs a person', ..."""
    if status is ApprovalStatus.SUCCEEDED:
        return _DONE[action]
    return f"{_ACTION_WORDS[action]} {_ENDINGS.get(status, status.value)}"


class MalformedProgress(ValueError):
    """The event detail does not follow the schema in ports.py."""


class NotificationFailed(Exception):
    """Slack did not take the message; the message says why in one sentence."""


@dataclass(frozen=True)
class ResizeProgress:
    recommendation_id: str
    instance_id: str
    step: str
    status: ApprovalStatus  # running, or an outcome
    message: str
    from_type: str
    to_type: str
    execution_arn: str = ""

    @classmethod
    def from_detail(cls, detail: Mapping[str, Any], execution_arn: str = "") -> ResizeProgress:
        missing = [name for name in _DETAIL_FIELDS if not isinstance(detail.get(name), str)]
        if missing:
            raise MalformedProgress(f"resize progress detail lacks {', '.join(missing)}")
        values = {name: str(detail[name]) for name in _DETAIL_FIELDS}
        if not values["recommendation_id"]:
            raise MalformedProgress("resize progress detail has an empty recommendation_id")
        if values["status"] not in PROGRESS_STATUSES:
            raise MalformedProgress(f"unknown resize status {values['status']!r}")
        status = ApprovalStatus(values.pop("status"))
        return cls(**values, status=status, execution_arn=execution_arn)

    @property
    def terminal(self) -> bool:
        return self.status.terminal


# ---------------------------------------------------------------------------------------------
# Step Functions "Execution Status Change": every end of an execution, in the notifier's words

# The resize state machine's Fail states (statemachine/resize.asl.json) and the outcome each one means.
# Their causes are written for people by the state machine itself.
_FAIL_OUTCOMES = {
    "ResizeRefused": ApprovalStatus.REFUSED,
    "InvalidRequest": ApprovalStatus.REFUSED,
    "ResizeUnchanged": ApprovalStatus.UNCHANGED,
    "AuditUnavailable": ApprovalStatus.UNCHANGED,
    "ResizeRolledBack": ApprovalStatus.ROLLED_BACK,
    "RollbackFailed": ApprovalStatus.FAILED,
}
_UNCATCHABLE = {
    "TIMED_OUT": "The resize workflow ran out of time (its TimeoutSeconds)",
    "ABORTED": "The resize workflow was stopped by hand (StopExecution)",
}
_ENDS = {"SUCCEEDED", "FAILED", *_UNCATCHABLE}


def progress_of_execution_end(detail: Mapping[str, Any]) -> ResizeProgress | None:
    """The outcome an execution status change reports; None while the execution still runs.

    Raises MalformedProgress when the detail names no recommendation (e.g. a hand-started execution
    with an input the state machine refused before anything ran)."""
    status = str(detail.get("status") or "")
    if status not in _ENDS:
        return None
    run = _json_object(detail.get("input"))
    recommendation_id = run.get("recommendation_id")
    if not isinstance(recommendation_id, str) or not recommendation_id:
        raise MalformedProgress("the execution's input names no recommendation_id")
    instance_id = str(run.get("instance_id") or "the host")
    outcome, message = _describe_end(status, detail, instance_id, str(detail.get("name") or ""))
    return ResizeProgress(
        recommendation_id=recommendation_id,
        instance_id=instance_id,
        step=f"execution_{status.lower()}",
        status=outcome,
        message=message,
        from_type=str(run.get("expected_type") or "?"),
        to_type=str(run.get("target_type") or "?"),
        execution_arn=str(detail.get("executionArn") or ""),
    )


def _describe_end(status: str, detail: Mapping[str, Any], instance_id: str, name: str) -> tuple[ApprovalStatus, str]:
    check = f"Check `{instance_id}` and the execution `{name}` in the Step Functions console."
    if status == "SUCCEEDED":
        output = _json_object(detail.get("output"))
        if isinstance(output.get("message"), str) and output["message"]:
            return ApprovalStatus.SUCCEEDED, str(output["message"])[:1500]  # the workflow's own words
        now_is = f"{output.get('to_type', '?')} and {output.get('state', '?')}"
        return ApprovalStatus.SUCCEEDED, f"Done: {instance_id} is now {now_is} ({output.get('health', '')})."
    if status in _UNCATCHABLE:
        return ApprovalStatus.FAILED, f"{_UNCATCHABLE[status]}; the host may be in any state. {check}"
    outcome = _FAIL_OUTCOMES.get(str(detail.get("error") or ""))
    if outcome is None:
        return ApprovalStatus.FAILED, f"The resize workflow failed unexpectedly. {check}"
    cause = str(detail.get("cause") or "").strip()
    return outcome, cause[:1500] or f"The resize workflow ended without a reason. {check}"


def _json_object(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if not isinstance(value, str):
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


# ---------------------------------------------------------------------------------------------
# the use-case


class ScheduleRegistry(Protocol):
    """The schedule pairs `/gpu schedules` lists (DynamoStore in AWS)."""

    def put_schedule(self, record: ScheduleRecord) -> None: ...

    def delete_schedule(self, account_id: str, region: str, instance_id: str) -> None: ...


class NotifyRecords(ApprovalRecords, ScheduleRegistry, Protocol):
    """What the use-case writes."""


class ThreadNotifier(Protocol):
    """Slack, seen from here. Implementations raise NotificationFailed."""

    def reply(self, channel: str, thread_ts: str, text: str) -> None: ...

    def update_root(self, channel: str, ts: str, recommendation_id: str, text: str) -> None:
        """Show the outcome on the message the resize was approved from (its thread's root)."""
        ...


class Outcome(StrEnum):
    POSTED = "posted"  # status recorded and the thread told
    RECORDED = "recorded"  # status recorded; no Slack thread to tell, or Slack failed (see detail)
    DUPLICATE = "duplicate"  # the same outcome again: nothing to do
    UNKNOWN = "unknown"  # no approval with this recommendation id


@dataclass(frozen=True)
class NotifyResult:
    outcome: Outcome
    status: str = ""  # the approval's status afterwards
    detail: str = ""
    closed: bool = False  # this call recorded the approval's outcome (exactly one call does)


def handle_progress(
    progress: ResizeProgress, store: NotifyRecords, notifier: ThreadNotifier, now: datetime
) -> NotifyResult:
    if store.approval(progress.recommendation_id) is None:
        # Retrying cannot make an approval appear: answer instead of failing the invocation.
        return NotifyResult(Outcome.UNKNOWN, detail=f"no approval for {progress.recommendation_id}")
    update = store.update_approval(
        progress.recommendation_id, status=progress.status, execution_arn=progress.execution_arn or None
    )
    approval = update.approval
    if progress.terminal and not update.moved and approval.status == progress.status:
        return NotifyResult(Outcome.DUPLICATE, status=approval.status)
    store.audit(
        AuditEntry(
            recommendation_id=progress.recommendation_id,
            at=now,
            actor=NOTIFIER_ACTOR,
            event=f"notified_{progress.step}",
            detail=f"{progress.status}: {progress.message}"[:1000],
        )
    )
    closed = update.moved and progress.terminal
    if closed and approval.status is ApprovalStatus.SUCCEEDED:
        _register_schedule(approval, store)
    if not update.moved:
        # A "stopping..." (or a second, different outcome) posted under the outcome would mislead.
        return NotifyResult(Outcome.RECORDED, status=approval.status, detail=f"late {progress.step} event")
    if not (approval.slack_channel and approval.slack_ts):
        return NotifyResult(Outcome.RECORDED, status=approval.status, detail="no Slack thread recorded", closed=closed)
    try:
        notifier.reply(approval.slack_channel, approval.slack_ts, thread_text(progress))
        if progress.terminal:
            notifier.update_root(
                approval.slack_channel, approval.slack_ts, approval.recommendation_id, root_text(progress, approval)
            )
    except NotificationFailed as error:
        # The status and audit entry are written; a retry would only repeat them. Say so and move on.
        return NotifyResult(Outcome.RECORDED, status=approval.status, detail=f"Slack: {error}", closed=closed)
    return NotifyResult(Outcome.POSTED, status=approval.status, closed=closed)


def _register_schedule(approval: Approval, registry: ScheduleRegistry) -> None:
    """A created pair joins the `/gpu schedules` registry, a removed one leaves it (written once: the outcome is)."""
    if approval.action is ActionKind.UNSCHEDULE:
        registry.delete_schedule(approval.account_id, approval.region, approval.instance_id)
    elif approval.action is ActionKind.SCHEDULE and approval.schedule is not None:
        stop_name, start_name = schedule_names(approval.instance_id)
        registry.put_schedule(
            ScheduleRecord(
                account_id=approval.account_id,
                region=approval.region,
                instance_id=approval.instance_id,
                instance_type=approval.from_type,
                recommendation_id=approval.recommendation_id,
                stop_name=stop_name,
                start_name=start_name,
                plan=approval.schedule,
                created_by=approval.approver,
                created_at=approval.approved_at,
            )
        )


def thread_text(progress: ResizeProgress) -> str:
    icon = _ICONS.get(progress.status, "")
    return f"{icon} `{progress.instance_id}` {progress.from_type} → {progress.to_type}: {progress.message}".strip()


def root_text(progress: ResizeProgress, approval: Approval) -> str:
    return (
        f"{_ICONS.get(progress.status, '')} {headline(approval.action, progress.status)}: `{progress.instance_id}` "
        f"{progress.from_type} → {progress.to_type} (approved by <@{approval.approver}>). Details in the thread."
    ).strip()
