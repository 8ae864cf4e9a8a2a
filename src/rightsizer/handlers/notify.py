"""NotifierFunction: instance workflow events (EventBridge) -> approval status, audit, Slack thread, instance lock.
Use-case: services/workflow_events.py; wiring: bootstrap/notify.py."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache, partial
from typing import Any

from aws_lambda_powertools import Logger

from rightsizer.bootstrap import lambda_wiring
from rightsizer.bootstrap.notify import notifier_dependencies
from rightsizer.handlers.metrics import count_by
from rightsizer.services.workflow_events import Dependencies, process

logger = Logger()
OUTCOME_METRIC = "ResizeOutcomes"  # one datapoint per closed approval, dimension "outcome"


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    return process(event, dependencies(), datetime.now(UTC))


@cache  # built on the first invocation, reused while the function is warm
def dependencies() -> Dependencies:
    return notifier_dependencies(lambda_wiring(), partial(count_by, OUTCOME_METRIC, "outcome"))
