"""The Notifier function's use-case: an instance workflow's event (EventBridge) -> approval status, audit, Slack
thread, instance lock (handlers/notify.py runs it; bootstrap/notify.py wires it).

Two rules deliver here (template.yaml): the workflow's own progress events (every action: resize, stop, schedule,
schedule removal), and Step Functions' "Execution Status Change" for its state machine, which reports every end of
an execution, also the ones the state machine cannot catch (a timeout, an abort).

Whatever a retry cannot fix is answered, not raised (EventBridge would retry it into the dead-letter queue): a
malformed event, an unknown recommendation, and an event or approval in a state this version does not know
(written by a newer version), which is logged as a warning and reported as skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from aws_lambda_powertools import Logger

from rightsizer.domain.workflow_contract import RESIZE_EVENT_SOURCE
from rightsizer.services.notify import (
    MalformedProgress,
    NotifyRecords,
    Outcome,
    ResizeProgress,
    ThreadNotifier,
    UnknownState,
    handle_progress,
    known_action,
    progress_of_execution_end,
)

logger = Logger(child=True)
EXECUTION_STATUS_CHANGE = "Step Functions Execution Status Change"


class InstanceLocks(Protocol):
    def release_instance_lock(self, instance_id: str, holder: str) -> bool: ...


class NotifierStore(NotifyRecords, InstanceLocks, Protocol):
    """What the notifier reads and writes (DynamoStore in AWS)."""


def _uncounted(status: str) -> None:
    """Counts no outcome (the tests' and the local runs' dependencies)."""


@dataclass(frozen=True)
class Dependencies:
    store: NotifierStore
    notifier: ThreadNotifier
    home_region: str = ""
    # The locks of an execution of a regional copy of the workflow live in that region's table.
    regional_locks: Callable[[str], InstanceLocks] | None = None
    # Counts the status of each closed approval (the dashboard's outcomes: the handler's metric).
    count_outcome: Callable[[str], None] = _uncounted

    def locks_of(self, execution_arn: str) -> InstanceLocks:
        parts = execution_arn.split(":")
        region = parts[3] if len(parts) > 3 else ""
        if not region or region == self.home_region or self.regional_locks is None:
            return self.store
        return self.regional_locks(region)


def process(event: Mapping[str, Any], deps: Dependencies, now: datetime) -> dict[str, str]:
    try:
        progress = progress_from_event(event)
    except UnknownState as error:
        # A newer workflow's state: this version cannot act on it, and retrying will not teach it.
        logger.warning(
            "workflow event skipped: unknown state", extra={"reason": str(error), "event_id": event.get("id")}
        )
        return {"outcome": Outcome.SKIPPED.value, "detail": str(error)}
    except MalformedProgress as error:
        # Retries cannot fix a malformed event: log it and let EventBridge's delivery end here.
        logger.error("malformed workflow event", extra={"reason": str(error), "event_id": event.get("id")})
        return {"outcome": "malformed", "detail": str(error)}
    if progress is None:
        return {"outcome": "ignored", "detail": "the execution has not ended"}
    if event.get("detail-type") == EXECUTION_STATUS_CHANGE and progress.execution_arn:
        # The state machine releases its lock at every end it can catch; a timeout or an abort cannot.
        released = deps.locks_of(progress.execution_arn).release_instance_lock(
            progress.instance_id, progress.execution_arn
        )
        if released:
            logger.info("instance lock released", extra={"instance_id": progress.instance_id})
    result = handle_progress(progress, deps.store, deps.notifier, now)
    if result.closed:  # the dashboard's outcomes (of every action; the metric keeps its first name)
        deps.count_outcome(result.status)
    answer = {"outcome": result.outcome.value, "status": result.status, "detail": result.detail}
    extra = {"recommendation_id": progress.recommendation_id, "step": progress.step, **answer}
    if result.outcome is Outcome.SKIPPED:
        logger.warning("workflow event skipped: unknown approval state", extra={**extra, "event_id": event.get("id")})
    else:
        logger.info("workflow progress", extra={**extra, "action": str(progress.action or "")})
    return answer


def progress_from_event(event: Mapping[str, Any]) -> ResizeProgress | None:
    detail = event.get("detail")
    if not isinstance(detail, Mapping):
        raise MalformedProgress("event has no detail object")
    if event.get("detail-type") == EXECUTION_STATUS_CHANGE:
        return progress_of_execution_end(detail)
    if event.get("source") != RESIZE_EVENT_SOURCE:
        raise MalformedProgress(f"unexpected event source {str(event.get('source'))[:80]!r}")
    # Step Functions' putEvents integration lists the state machine and execution ARNs in `resources`.
    resources = event.get("resources") or []
    execution = next((str(r) for r in resources if ":execution:" in str(r)), "")
    progress = ResizeProgress.from_detail(detail, execution_arn=execution)
    named = detail.get("action")
    if named and known_action(named) is None:
        logger.warning(
            "workflow event names an action this version does not know: the approval's is used",
            extra={"action": str(named)[:80], "event_id": event.get("id")},
        )
    return progress
