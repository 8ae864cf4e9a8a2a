"""What approving and removing a schedule share: who may approve, the thread an approval opens, and the answer a
click gets when nothing started."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.logging import Logger
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.buttons.button import SUPERSEDED
from rightsizer.adapters.slack.deps import Deps
from rightsizer.services.approvals import ActionResult, Outcome
from rightsizer.services.ports import Approval, Decision

logger = Logger(child=True)


def is_approver_via(deps: Deps, web: WebClient) -> Callable[[str], bool]:
    slack = deps.settings.slack

    def is_approver(user: str) -> bool:
        if user in slack.approvers:
            return True
        if not slack.approver_group:
            return False
        try:
            members = web.usergroups_users_list(usergroup=slack.approver_group).get("users") or []
        except SlackApiError as error:  # fail closed: no proof of membership, no approval
            logger.warning("usergroups.users.list failed", extra={"error": str(error.response.get("error"))})
            return False
        return user in members

    return is_approver


def open_thread_in(deps: Deps, web: WebClient) -> Callable[[Approval], tuple[str, str] | None]:
    channel = deps.settings.slack.channel

    def open_thread(approval: Approval) -> tuple[str, str] | None:
        # Approved from an ephemeral answer (`top`, `show`, `schedules`), which has no thread: open one in the
        # report channel, before the workflow starts, so the notifier finds it for the very first event.
        if not channel:
            return None
        rec = deps.store.recommendation(approval.recommendation_id)
        head = [blocks.recommendation_section(rec).to_dict()] if rec is not None else []
        try:
            root = web.chat_postMessage(
                channel=channel,
                text=blocks.approved_note(approval),
                blocks=[*head, blocks.note_block(approval)],
                unfurl_links=False,
            )
        except SlackApiError as error:  # e.g. not_in_channel: approve anyway, without a thread
            logger.warning("could not open a thread", extra={"error": str(error.response.get("error"))})
            return None
        return channel, str(root["ts"])

    return open_thread


def refusal(deps: Deps) -> str:
    slack = deps.settings.slack
    who = [f"<@{user}>" for user in slack.approvers]
    if slack.approver_group:
        who.append(f"members of <!subteam^{slack.approver_group}>")
    names = ", ".join(who) or "nobody (no approvers are configured: see docs/connect-slack.md)"
    return f":lock: Only approvers can approve actions: {names}. Your attempt was recorded in the audit log."


def approve_answer(deps: Deps, result: ActionResult) -> str:
    command_name = deps.command_name
    if result.outcome is Outcome.NOT_APPROVER:
        return refusal(deps)
    if result.outcome in (Outcome.STALE, Outcome.NOT_FOUND):
        return SUPERSEDED.format(command=command_name)
    if result.outcome is Outcome.ALREADY_APPROVED:
        existing = result.approval
        if existing is None:
            return "This has already been approved."
        execution = f", execution `{existing.execution_arn.rsplit(':', 1)[-1]}`" if existing.execution_arn else ""
        return (
            f"Already approved by <@{existing.approver}> (status {existing.status}{execution}). "
            "Nothing was started twice."
        )
    if result.outcome is Outcome.NOT_ACTIONABLE:
        return "There is no one-click action to approve for this recommendation (see `show` for the advice)."
    if result.outcome is Outcome.OUT_OF_SCOPE:
        return f":no_entry_sign: Not approved: {blocks.escape(result.detail)}."
    if result.outcome is Outcome.NEEDS_CONFIRMATION:
        return (
            f":warning: Not approved: {blocks.escape(result.detail)}. Use the button that names the capacity risk "
            f"(`{command_name} show <instance-id>` shows it) if the host may stay stopped."
        )
    if result.outcome is Outcome.NO_SCHEDULE:
        return f":calendar: Not approved: {blocks.escape(result.detail)}."
    if result.outcome is Outcome.HIDDEN and result.decision is not None:
        return _hidden_answer(result.decision, command_name)
    return f":x: Not started: {blocks.escape(result.detail)}. Approve again in a minute to retry."


def _hidden_answer(decision: Decision, command_name: str) -> str:
    if decision.kind == "snooze" and decision.until is not None:
        why = f"<@{decision.actor}> snoozed this host until {decision.until:%Y-%m-%d %H:%M} UTC"
    else:
        why = f"<@{decision.actor}> dismissed this recommendation"
    return (
        f":zzz: Not approved: {why}, so it is no longer offered. "
        f"`{command_name} show <instance-id>` shows the advice and who decided."
    )
