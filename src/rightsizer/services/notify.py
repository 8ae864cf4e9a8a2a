"""Resize progress -> approval status, audit trail and the recommendation's Slack thread.

The resize state machine puts one EventBridge event per milestone (see `ports.RESIZE_EVENT_SOURCE`).
EventBridge delivers at least once and in no guaranteed order, so this use-case is written for
duplicates and stragglers: a terminal status is never overwritten by a late "running" event, and a
repeated terminal event changes nothing and posts nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from rightsizer.services.ports import Approval, AuditEntry

TERMINAL_STATUSES = frozenset({"succeeded", "rolled_back", "refused", "failed"})
PROGRESS_STATUSES = frozenset({"running"}) | TERMINAL_STATUSES
NOTIFIER_ACTOR = "rightsizer"
_DETAIL_FIELDS = ("recommendation_id", "instance_id", "step", "status", "message", "from_type", "to_type")
_ICONS = {
    "running": ":hourglass_flowing_sand:",
    "succeeded": ":white_check_mark:",
    "rolled_back": ":leftwards_arrow_with_hook:",
    "refused": ":no_entry_sign:",
    "failed": ":rotating_light:",
}
_HEADLINES = {
    "succeeded": "Resized",
    "rolled_back": "Resize rolled back",
    "refused": "Resize refused",
    "failed": "Resize failed, needs a person",
}


class MalformedProgress(ValueError):
    """The event detail does not follow the schema in ports.py."""


class NotificationFailed(Exception):
    """Slack did not take the message; the message says why in one sentence."""


@dataclass(frozen=True)
class ResizeProgress:
    recommendation_id: str
    instance_id: str
    step: str
    status: str  # running | succeeded | rolled_back | refused | failed
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
        return cls(**values, execution_arn=execution_arn)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


class ApprovalRecords(Protocol):
    """The part of the store (DynamoStore in AWS) this use-case needs."""

    def approval(self, recommendation_id: str) -> Approval | None: ...

    def update_approval(self, recommendation_id: str, **changes: Any) -> Approval: ...

    def audit(self, entry: AuditEntry) -> None: ...


class ThreadNotifier(Protocol):
    """Slack, seen from here. Implementations raise NotificationFailed."""

    def reply(self, channel: str, thread_ts: str, text: str) -> None: ...

    def update_root(self, channel: str, ts: str, text: str) -> None: ...


class Outcome(StrEnum):
    POSTED = "posted"  # status recorded and the thread told
    RECORDED = "recorded"  # status recorded; no Slack thread to tell, or Slack failed (see detail)
    DUPLICATE = "duplicate"  # the same terminal status again: nothing to do
    UNKNOWN = "unknown"  # no approval with this recommendation id


@dataclass(frozen=True)
class NotifyResult:
    outcome: Outcome
    status: str = ""  # the approval's status afterwards
    detail: str = ""


def handle_progress(
    progress: ResizeProgress, store: ApprovalRecords, notifier: ThreadNotifier, now: datetime
) -> NotifyResult:
    approval = store.approval(progress.recommendation_id)
    if approval is None:
        # Retrying cannot make an approval appear: answer instead of failing the invocation.
        return NotifyResult(Outcome.UNKNOWN, detail=f"no approval for {progress.recommendation_id}")
    if progress.terminal and approval.status == progress.status:
        return NotifyResult(Outcome.DUPLICATE, status=approval.status)

    new_status = _next_status(approval.status, progress.status)
    straggler = new_status != progress.status  # a "running" event that arrived after the outcome
    changes: dict[str, Any] = {}
    if new_status != approval.status:
        changes["status"] = new_status
    if progress.execution_arn and not approval.execution_arn:
        changes["execution_arn"] = progress.execution_arn
    if changes:
        approval = store.update_approval(progress.recommendation_id, **changes)
    store.audit(
        AuditEntry(
            recommendation_id=progress.recommendation_id,
            at=now,
            actor=NOTIFIER_ACTOR,
            event=f"notified_{progress.step}",
            detail=f"{progress.status}: {progress.message}"[:1000],
        )
    )

    if straggler:
        # Posting "stopping..." under "done" would mislead whoever reads the thread.
        return NotifyResult(Outcome.RECORDED, status=approval.status, detail=f"late {progress.step} event")
    if not (approval.slack_channel and approval.slack_ts):
        return NotifyResult(Outcome.RECORDED, status=approval.status, detail="no Slack thread recorded")
    try:
        notifier.reply(approval.slack_channel, approval.slack_ts, thread_text(progress))
        if progress.terminal:
            notifier.update_root(approval.slack_channel, approval.slack_ts, root_text(progress, approval))
    except NotificationFailed as error:
        # The status and audit entry are written; a retry would only repeat them. Say so and move on.
        return NotifyResult(Outcome.RECORDED, status=approval.status, detail=f"Slack: {error}")
    return NotifyResult(Outcome.POSTED, status=approval.status)


def _next_status(current: str, incoming: str) -> str:
    """Statuses only move forward: pending -> running -> one terminal status."""
    if current in TERMINAL_STATUSES and incoming == "running":
        return current  # a straggler from earlier in the run
    return incoming


def thread_text(progress: ResizeProgress) -> str:
    icon = _ICONS.get(progress.status, "")
    return f"{icon} `{progress.instance_id}` {progress.from_type} → {progress.to_type}: {progress.message}".strip()


def root_text(progress: ResizeProgress, approval: Approval) -> str:
    headline = _HEADLINES.get(progress.status, progress.status)
    return (
        f"{_ICONS.get(progress.status, '')} {headline}: `{progress.instance_id}` "
        f"{progress.from_type} → {progress.to_type} (approved by <@{approval.approver}>). Details in the thread."
    ).strip()
