"""Instance workflow progress (resize, stop, schedule, schedule removal) -> approval status, audit trail, the
recommendation's Slack thread, and the registry of schedule pairs (`/gpu schedules`).

Two kinds of events arrive (see the NotifierFunction in template.yaml):
  * the instance workflow's own milestones (`workflow_contract.RESIZE_EVENT_SOURCE`), detailed and in its words;
  * Step Functions' "Execution Status Change" for every end of an execution, including the ends the
    state machine cannot catch itself (a timeout, an abort, a run-time error, invalid input).
EventBridge delivers at least once and in no guaranteed order, so this use-case is written for
duplicates and stragglers: the approval lifecycle (`domain.approval`) lets an outcome be recorded once,
and only the write that records it posts it.

Every message names its action (resize, stop, schedule, schedule removal): the event's `action` when it has one,
else the approval's (older events and the status changes carry none); never "resize" by default. Texts reach
Slack capped (`SLACK_TEXT_MAX`), the audit entry holds them whole. An approval or an event in a state this version
does not know (written by a newer one) is answered as skipped, never retried.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from rightsizer.domain.action_spec import PairChange
from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.approval import TERMINAL, ApprovalStatus, attempt_of
from rightsizer.domain.models import ActionKind
from rightsizer.domain.schedule_plan import schedule_names
from rightsizer.domain.workflow_contract import InputKey, WorkflowError
from rightsizer.services.ports import Approval, ApprovalRecords, AuditEntry, ScheduleRecord, ScheduleWriter

PROGRESS_STATUSES = frozenset({ApprovalStatus.RUNNING}) | TERMINAL
NOTIFIER_ACTOR = "rightsizer"
# Slack: a section block's text holds 3,000 characters (the root message is one), and chat.postMessage's `text` is
# cut at 40,000; past 3,000 a thread reply is hard to read anyway. The audit entry keeps the whole text.
SLACK_TEXT_MAX = 3000
SLACK_POST_TEXT_MAX = 40_000
TRUNCATED = "…(truncated, full text in the audit log)"
# An audit entry is one DynamoDB item (at most 400 KB with its keys): its detail stops short of that.
AUDIT_DETAIL_MAX_BYTES = 350_000
AUDIT_TRUNCATED = "…(truncated: an audit entry holds at most 350,000 bytes)"
_DETAIL_FIELDS = ("recommendation_id", "instance_id", "step", "status", "message", "from_type", "to_type")
_ICONS = {
    ApprovalStatus.RUNNING: ":hourglass_flowing_sand:",
    ApprovalStatus.SUCCEEDED: ":white_check_mark:",
    ApprovalStatus.ROLLED_BACK: ":leftwards_arrow_with_hook:",
    ApprovalStatus.UNCHANGED: ":heavy_minus_sign:",
    ApprovalStatus.REFUSED: ":no_entry_sign:",
    ApprovalStatus.FAILED: ":rotating_light:",
}
UNNAMED_WORKFLOW = "instance workflow"  # before the approval has said which action ran
_ENDINGS = {
    ApprovalStatus.ROLLED_BACK: "rolled back",
    ApprovalStatus.UNCHANGED: "failed, nothing was changed",
    ApprovalStatus.REFUSED: "refused",
    ApprovalStatus.FAILED: "failed, needs a person",
}


def headline(action: ActionKind, status: ApprovalStatus) -> str:
    """'Resized', 'Stop refused', 'Schedule removal failed, needs a person', ..."""
    spec = ACTIONS[action]
    if status is ApprovalStatus.SUCCEEDED:
        return spec.done
    return f"{spec.name} {_ENDINGS.get(status, status.value)}"


def workflow_name(action: ActionKind | None) -> str:
    """'resize workflow', 'stop workflow', 'schedule removal workflow'; 'instance workflow' when not known."""
    return ACTIONS[action].workflow if action is not None else UNNAMED_WORKFLOW


def for_slack(text: str, limit: int = SLACK_TEXT_MAX) -> str:
    """`text` as Slack takes it: at most `limit` characters, a cut one saying where the rest is."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(TRUNCATED))].rstrip() + TRUNCATED


def for_audit(text: str) -> str:
    """`text` whole, unless it would not fit in one DynamoDB item (EventBridge events, at most 256 KB, always do)."""
    encoded = text.encode()
    if len(encoded) <= AUDIT_DETAIL_MAX_BYTES:
        return text
    room = AUDIT_DETAIL_MAX_BYTES - len(AUDIT_TRUNCATED.encode())
    return encoded[:room].decode(errors="ignore") + AUDIT_TRUNCATED


class MalformedProgress(ValueError):
    """The event detail does not follow the schema in ports.py."""


class UnknownState(MalformedProgress):
    """The event is in a state this version does not know (a newer workflow's): skipped, not retried."""


class NotificationFailed(Exception):
    """Slack did not take the message; the message says why in one sentence."""


@dataclass(frozen=True)
class ResizeProgress:
    """One milestone or end of an instance workflow execution (any action, despite the name)."""

    recommendation_id: str
    instance_id: str
    step: str
    status: ApprovalStatus  # running, or an outcome
    message: str
    from_type: str
    to_type: str
    execution_arn: str = ""
    action: ActionKind | None = None  # None: the event did not say (`for_action` takes the approval's)
    # A status change's detail: its message is said again in the words of the action, once that is known.
    execution_end: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_detail(cls, detail: Mapping[str, Any], execution_arn: str = "") -> ResizeProgress:
        missing = [name for name in _DETAIL_FIELDS if not isinstance(detail.get(name), str)]
        if missing:
            raise MalformedProgress(f"workflow progress detail lacks {', '.join(missing)}")
        values = {name: str(detail[name]) for name in _DETAIL_FIELDS}
        if not values["recommendation_id"]:
            raise MalformedProgress("workflow progress detail has an empty recommendation_id")
        if values["status"] not in PROGRESS_STATUSES:
            raise UnknownState(
                f"unknown status {values['status'][:80]!r} in the progress of {values['recommendation_id'][:120]} "
                f"(this version knows {', '.join(sorted(PROGRESS_STATUSES))})"
            )
        return cls(
            recommendation_id=values["recommendation_id"],
            instance_id=values["instance_id"],
            step=values["step"],
            status=ApprovalStatus(values["status"]),
            message=values["message"],
            from_type=values["from_type"],
            to_type=values["to_type"],
            execution_arn=execution_arn,
            action=known_action(detail.get("action")),
        )

    @property
    def terminal(self) -> bool:
        return self.status.terminal

    def for_action(self, action: ActionKind) -> ResizeProgress:
        """This event in the words of `action` (the approval's) unless the event named its own."""
        if self.action is not None:
            return self
        message = self.message
        if self.execution_end is not None:
            _, message = _describe_end(self.execution_end, self.instance_id, action)
        return replace(self, action=action, message=message)


def known_action(value: Any) -> ActionKind | None:
    """The action an event names, if this version knows it (else the approval's is used)."""
    try:
        return ActionKind(value) if isinstance(value, str) and value else None
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
# Step Functions "Execution Status Change": every end of an execution, in the notifier's words

# The resize state machine's Fail states (statemachine/resize.asl.json) and the outcome each one means.
# Their causes are written for people by the state machine itself.
_FAIL_OUTCOMES: Mapping[str, ApprovalStatus] = {
    WorkflowError.REFUSED: ApprovalStatus.REFUSED,
    WorkflowError.INVALID_REQUEST: ApprovalStatus.REFUSED,
    WorkflowError.UNCHANGED: ApprovalStatus.UNCHANGED,
    WorkflowError.AUDIT_UNAVAILABLE: ApprovalStatus.UNCHANGED,
    WorkflowError.ROLLED_BACK: ApprovalStatus.ROLLED_BACK,
    WorkflowError.ROLLBACK_FAILED: ApprovalStatus.FAILED,
}
_UNCATCHABLE = {  # {workflow}: the action's, e.g. "The stop workflow ran out of time"
    "TIMED_OUT": "The {workflow} ran out of time (its TimeoutSeconds)",
    "ABORTED": "The {workflow} was stopped by hand (StopExecution)",
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
    recommendation_id = run.get(InputKey.RECOMMENDATION_ID)
    if not isinstance(recommendation_id, str) or not recommendation_id:
        raise MalformedProgress("the execution's input names no recommendation_id")
    instance_id = str(run.get(InputKey.INSTANCE_ID) or "the host")
    # The execution input's action is not used: the approval's is (ResizeProgress.for_action), as for old events.
    outcome, message = _describe_end(detail, instance_id, None)
    return ResizeProgress(
        recommendation_id=recommendation_id,
        instance_id=instance_id,
        step=f"execution_{status.lower()}",
        status=outcome,
        message=message,
        from_type=str(run.get(InputKey.EXPECTED_TYPE) or "?"),
        to_type=str(run.get(InputKey.TARGET_TYPE) or "?"),
        execution_arn=str(detail.get("executionArn") or ""),
        execution_end=dict(detail),
    )


def _describe_end(detail: Mapping[str, Any], instance_id: str, action: ActionKind | None) -> tuple[ApprovalStatus, str]:
    """The outcome and its sentence; the workflow's own words where it left some (whole: Slack gets them capped)."""
    status, workflow = str(detail.get("status") or ""), workflow_name(action)
    check = f"Check `{instance_id}` and the execution `{detail.get('name') or ''}` in the Step Functions console."
    if status == "SUCCEEDED":
        output = _json_object(detail.get("output"))
        if isinstance(output.get("message"), str) and output["message"]:
            return ApprovalStatus.SUCCEEDED, str(output["message"])  # the workflow's own words
        now_is = f"{output.get('to_type', '?')} and {output.get('state', '?')}"
        return ApprovalStatus.SUCCEEDED, f"Done: {instance_id} is now {now_is} ({output.get('health', '')})."
    if status in _UNCATCHABLE:
        ended = _UNCATCHABLE[status].format(workflow=workflow)
        return ApprovalStatus.FAILED, f"{ended}; the host may be in any state. {check}"
    outcome = _FAIL_OUTCOMES.get(str(detail.get("error") or ""))
    if outcome is None:
        return ApprovalStatus.FAILED, f"The {workflow} failed unexpectedly. {check}"
    cause = str(detail.get("cause") or "").strip()
    return outcome, cause or f"The {workflow} ended without a reason. {check}"


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


class NotifyRecords(ApprovalRecords, ScheduleWriter, Protocol):
    """What the use-case writes."""


class ThreadNotifier(Protocol):
    """Slack, seen from here. Implementations raise NotificationFailed."""

    def reply(self, channel: str, thread_ts: str, text: str) -> None: ...

    def update_root(self, channel: str, ts: str, recommendation_id: str, text: str) -> None:
        """Show the outcome on the message the action was approved from (its thread's root)."""
        ...


class Outcome(StrEnum):
    POSTED = "posted"  # status recorded and the thread told
    RECORDED = "recorded"  # status recorded; no Slack thread to tell, or Slack failed (see detail)
    DUPLICATE = "duplicate"  # the same outcome again: nothing to do
    STALE = "stale"  # about an earlier attempt of an approval that was retried since: nothing to do
    UNKNOWN = "unknown"  # no approval with this recommendation id
    SKIPPED = "skipped"  # the approval is in a state this version cannot read (a newer version's): left alone


@dataclass(frozen=True)
class NotifyResult:
    outcome: Outcome
    status: str = ""  # the approval's status afterwards
    detail: str = ""
    closed: bool = False  # this call recorded the approval's outcome (exactly one call does)


# What decoding a stored approval raises when a newer version wrote it: an unknown status or action (ValueError,
# from the enum), a field this version requires and that one dropped (TypeError, KeyError).
_UNREADABLE = (ValueError, TypeError, KeyError)


def handle_progress(
    progress: ResizeProgress, store: NotifyRecords, notifier: ThreadNotifier, now: datetime
) -> NotifyResult:
    try:
        known = store.approval(progress.recommendation_id)
    except _UNREADABLE as error:
        # Retrying cannot teach this version the state: answer (the handler logs it) and leave the item alone.
        return _skipped(progress, error)
    if known is None:
        # Retrying cannot make an approval appear: answer instead of failing the invocation.
        return NotifyResult(Outcome.UNKNOWN, detail=f"no approval for {progress.recommendation_id}")
    progress = progress.for_action(known.action)
    attempt = attempt_of(progress.execution_arn) if progress.execution_arn else None
    if attempt is not None and attempt != known.attempt:
        # A straggler of an execution that an approver has retried since: it must not close the retry.
        return NotifyResult(Outcome.STALE, status=known.status, detail=f"attempt {attempt} of {known.attempt}")
    try:
        update = store.update_approval(
            progress.recommendation_id,
            status=progress.status,
            execution_arn=progress.execution_arn or None,
            attempt=attempt,
        )
    except KeyError:  # deleted since it was read
        return NotifyResult(Outcome.UNKNOWN, detail=f"no approval for {progress.recommendation_id}")
    except (ValueError, TypeError) as error:  # rewritten by a newer version since it was read
        return _skipped(progress, error)
    approval = update.approval
    if attempt is not None and approval.attempt != attempt:  # retried between the read and the write
        return NotifyResult(Outcome.STALE, status=approval.status, detail=f"attempt {attempt} of {approval.attempt}")
    if progress.terminal and not update.moved and approval.status == progress.status:
        return NotifyResult(Outcome.DUPLICATE, status=approval.status)
    store.audit(
        AuditEntry(
            recommendation_id=progress.recommendation_id,
            at=now,
            actor=NOTIFIER_ACTOR,
            event=f"notified_{progress.step}",
            detail=for_audit(f"{progress.status}: {progress.message}"),  # whole: Slack gets it capped
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


def _skipped(progress: ResizeProgress, error: Exception) -> NotifyResult:
    return NotifyResult(
        Outcome.SKIPPED,
        detail=(
            f"approval {progress.recommendation_id} is in a state this version cannot read ({str(error)[:300]}): "
            f"its {progress.step} event ({progress.status}) was not recorded"
        ),
    )


def _register_schedule(approval: Approval, registry: ScheduleWriter) -> None:
    """A created pair joins the `/gpu schedules` registry, a removed one leaves it (written once: the outcome is)."""
    pair = ACTIONS[approval.action].pair
    if pair is PairChange.REMOVES:
        registry.delete_schedule(approval.account_id, approval.region, approval.instance_id)
    elif pair is PairChange.CREATES and approval.schedule is not None:
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
                instance_name=approval.instance_name,
            )
        )


def thread_text(progress: ResizeProgress) -> str:
    """The thread reply, at most SLACK_TEXT_MAX characters (the audit entry has the whole message)."""
    icon = _ICONS.get(progress.status, "")
    text = f"{icon} `{progress.instance_id}` {progress.from_type} → {progress.to_type}: {progress.message}".strip()
    return for_slack(text)


def root_text(progress: ResizeProgress, approval: Approval) -> str:
    """The outcome on the message it was approved from (a section block: at most SLACK_TEXT_MAX characters)."""
    action = progress.action or approval.action
    text = (
        f"{_ICONS.get(progress.status, '')} {headline(action, progress.status)}: `{progress.instance_id}` "
        f"{progress.from_type} → {progress.to_type} (approved by <@{approval.approver}>). Details in the thread."
    ).strip()
    return for_slack(text)
