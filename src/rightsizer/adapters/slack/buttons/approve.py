"""Approve, and Approve with the capacity risk named: the advice's one-click action, started once."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import Logger

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.buttons.approvers import approve_answer, is_approver_via, open_thread_in
from rightsizer.adapters.slack.buttons.button import Button, Conversation, recommendation_id
from rightsizer.adapters.slack.deps import Deps
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services import approvals
from rightsizer.services.approvals import Outcome
from rightsizer.services.ports import Approval

logger = Logger(child=True)


def approve_action(deps: Deps, talk: Conversation, recommendation_id: str) -> None:
    _approve(deps, talk, recommendation_id, capacity_risk_confirmed=False)


def approve_with_capacity_risk(deps: Deps, talk: Conversation, recommendation_id: str) -> None:
    _approve(deps, talk, recommendation_id, capacity_risk_confirmed=True)


def _approve(deps: Deps, talk: Conversation, recommendation_id: str, *, capacity_risk_confirmed: bool) -> None:
    click, settings = talk.click, deps.settings
    request = approvals.ApprovalRequest(
        recommendation_id,
        click.user,
        deps.clock(),
        capacity_risk_confirmed=capacity_risk_confirmed,
        slack_channel="" if click.ephemeral else click.channel,
        slack_ts="" if click.ephemeral else click.message_ts,
    )
    rules = approvals.ApprovalRules(
        is_approver_via(deps, talk.web),
        scope=settings.report_scope,
        time_zone=lambda rec: settings.time_zone_of(rec.team),
        managed_tag_key=settings.managed_tag_key,
    )
    result = approvals.approve(
        deps.store, deps.workflow_factory, request, rules, open_thread=open_thread_in(deps, talk.web)
    )
    if result.outcome is Outcome.STARTED and result.approval is not None and result.recommendation is not None:
        _started(talk, result.recommendation, result.approval)
        return
    if result.cause:  # for operators; the clicker gets a sentence without exception names
        logger.error("action not started", extra={"cause": result.cause, "recommendation": recommendation_id})
    talk.tell(approve_answer(deps, result))


def _started(talk: Conversation, rec: Recommendation, approval: Approval) -> None:
    note = blocks.started_note(approval)
    talk.mark(rec, note)
    thread = (approval.slack_channel, approval.slack_ts)
    if talk.click.ephemeral and all(thread):
        talk.web.chat_update(
            channel=thread[0],
            ts=thread[1],
            text=note,
            blocks=[blocks.recommendation_section(rec).to_dict(), blocks.note_block(approval)],
        )


BUTTONS: dict[str, Button[Any]] = {
    blocks.ACTION_APPROVE: Button(recommendation_id, approve_action),
    blocks.ACTION_APPROVE_SCARCE: Button(recommendation_id, approve_with_capacity_risk),
}
