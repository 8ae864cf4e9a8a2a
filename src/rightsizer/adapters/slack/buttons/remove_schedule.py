"""Remove (`/gpu schedules`): the schedule removal workflow deletes a host's stop/start pair."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import Logger

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.buttons.approvers import approve_answer, is_approver_via, open_thread_in
from rightsizer.adapters.slack.buttons.button import Button, Conversation, ScheduleKey
from rightsizer.adapters.slack.deps import Deps
from rightsizer.services import approvals
from rightsizer.services.approvals import ActionResult, Outcome

logger = Logger(child=True)


def remove_schedule(deps: Deps, talk: Conversation, key: ScheduleKey | None) -> None:
    result = (
        approvals.remove_schedule(
            deps.store,
            deps.workflow_factory,
            approvals.RemovalRequest(str(key), talk.click.user, deps.clock()),
            approvals.ApprovalRules(is_approver_via(deps, talk.web), scope=deps.settings.report_scope),
            open_thread=open_thread_in(deps, talk.web),
        )
        if key is not None
        else ActionResult(Outcome.NOT_FOUND, detail=talk.click.value)
    )
    if result.outcome is Outcome.STARTED and result.approval is not None:
        approval = result.approval
        where = f" Progress in <#{approval.slack_channel}>." if approval.slack_channel else ""
        talk.tell(f":wastebasket: Removing the stop/start schedule of `{approval.instance_id}`.{where}")
        return
    if result.cause:
        logger.error("schedule removal not started", extra={"cause": result.cause, "schedule": str(key)})
    if result.outcome is Outcome.NOT_FOUND:
        talk.tell(f"There is no schedule for that host any more (`{deps.command_name} schedules` lists them).")
        return
    talk.tell(approve_answer(deps, result))


BUTTONS: dict[str, Button[Any]] = {blocks.ACTION_REMOVE_SCHEDULE: Button(ScheduleKey.parse, remove_schedule)}
