"""The lifecycle of an approved action: one status at a time, and it only moves forward within an attempt.

    pending ──► running ──► succeeded | rolled_back | unchanged | refused | failed
       │  ▲        ▲                       │
       ▼  │        │                       │ an approver retries: the next attempt starts as pending
    start_failed ──┘                       ▼ (pending and start_failed may also jump straight to an outcome)

An outcome other than success is final for its attempt, not for the approval: an approver may try again
(`retry`), which opens attempt n + 1 with its own execution. Writes about attempt n never touch attempt n + 1
(the store conditions every write on the attempt), so a straggler of a failed execution cannot close a retry.

Writers (the Slack app, the notifier, the store and the tests' fakes) never decide a move themselves:
they ask `transition`, and the store turns `sources_of` into the condition of its DynamoDB write, so a
late or repeated write can never undo an outcome.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class ApprovalStatus(StrEnum):
    PENDING = "pending"  # approved; the workflow has not been started yet
    START_FAILED = "start_failed"  # StartExecution failed: approving again retries
    RUNNING = "running"  # the resize workflow runs
    SUCCEEDED = "succeeded"  # the host runs (or stays stopped) on the target type
    ROLLED_BACK = "rolled_back"  # the host was changed, then restored to its original type and state
    UNCHANGED = "unchanged"  # the resize failed before anything changed (e.g. the stop failed)
    REFUSED = "refused"  # validation refused it; nothing was touched
    FAILED = "failed"  # the host may be in any state (rollback failed, timeout, abort): a person must look

    @property
    def terminal(self) -> bool:
        return self in TERMINAL

    @property
    def open(self) -> bool:
        """Still waiting for an outcome (listed by the store's pending-approvals index)."""
        return not self.terminal


TERMINAL = frozenset(
    {
        ApprovalStatus.SUCCEEDED,
        ApprovalStatus.ROLLED_BACK,
        ApprovalStatus.UNCHANGED,
        ApprovalStatus.REFUSED,
        ApprovalStatus.FAILED,
    }
)

# Moves to a different status. A fast refusal can reach the notifier before the Slack app records
# "running", so an open status may jump straight to an outcome; an outcome is final.
_MOVES: Mapping[ApprovalStatus, frozenset[ApprovalStatus]] = {
    ApprovalStatus.PENDING: frozenset({ApprovalStatus.RUNNING, ApprovalStatus.START_FAILED}) | TERMINAL,
    ApprovalStatus.START_FAILED: frozenset({ApprovalStatus.RUNNING}) | TERMINAL,
    ApprovalStatus.RUNNING: TERMINAL,
    **{status: frozenset() for status in TERMINAL},
}


# Outcomes an approver may try again after: the host may have changed since (a tag added, a schedule removed, a
# person fixed what needed one). A success is done.
RETRYABLE = frozenset(
    {ApprovalStatus.FAILED, ApprovalStatus.UNCHANGED, ApprovalStatus.ROLLED_BACK, ApprovalStatus.REFUSED}
)


def retryable(current: ApprovalStatus) -> bool:
    return current in RETRYABLE


def allowed(current: ApprovalStatus, requested: ApprovalStatus) -> bool:
    """May a write of `requested` replace `current`? Re-writing an open status is a harmless no-op;
    an outcome is written exactly once, so a repeated one is refused (its writer is the duplicate)."""
    if current == requested:
        return not requested.terminal
    return requested in _MOVES[current]


def transition(current: ApprovalStatus, requested: ApprovalStatus) -> ApprovalStatus:
    """The status after asking to move `current` to `requested`: `requested` when allowed, else `current`.
    Never raises: late and repeated writes are expected (Slack retries, EventBridge stragglers)."""
    return requested if allowed(current, requested) else current


def sources_of(requested: ApprovalStatus) -> frozenset[ApprovalStatus]:
    """Every status a write of `requested` may replace: the condition of the store's conditional write."""
    return frozenset(status for status in ApprovalStatus if allowed(status, requested))


def attempt_key(recommendation_id: str, attempt: int) -> str:
    """What names one attempt's execution: the first keeps the recommendation's id (as before retries existed), a
    retry gets a name of its own (Step Functions keeps a name for 90 days)."""
    return recommendation_id if attempt <= 1 else f"{recommendation_id}-attempt-{attempt}"


def attempt_of(execution: str) -> int:
    """The attempt an execution (ARN or name) belongs to (see attempt_key)."""
    name = execution.rsplit(":", 1)[-1]
    head, _, number = name.rpartition("-attempt-")
    return int(number) if head and number.isascii() and number.isdigit() else 1
