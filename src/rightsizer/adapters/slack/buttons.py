"""The buttons: each action id, the value it carries and its handler, in one map (`BUTTONS`).

A click is acknowledged at once (`app.register`); `press`, the lazy listener of every button, reads the
button's value with the parser its entry names (a recommendation id, or a schedule's key) and runs the handler.
What the Slack report promises, the handlers keep: the services refuse what is stale, hidden or out of reach.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from aws_lambda_powertools.logging import Logger
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.deps import Deps, Respond
from rightsizer.adapters.slack.messages import MessageBoard
from rightsizer.domain.models import Recommendation
from rightsizer.services import approvals
from rightsizer.services.approvals import ActionResult, Outcome
from rightsizer.services.ports import Approval, Decision

logger = Logger(child=True)

V = TypeVar("V")

SUPERSEDED = (
    "This recommendation has been superseded by a newer analysis (or has expired). "
    "`{command} show <instance-id>` shows the current advice."
)


@dataclass(frozen=True)
class Click:
    user: str
    action_id: str
    value: str  # what the button carries, as sent (its entry in BUTTONS says how to read it)
    channel: str
    message_ts: str
    ephemeral: bool
    message_blocks: tuple[dict[str, Any], ...]
    message_text: str

    @classmethod
    def of(cls, body: dict[str, Any]) -> Click:
        container = body.get("container") or {}
        message = body.get("message") or {}
        action = (body.get("actions") or [{}])[0]
        return cls(
            user=str((body.get("user") or {}).get("id", "")),
            action_id=str(action.get("action_id", "")),
            value=str(action.get("value", ""))[:200],
            channel=str(container.get("channel_id") or (body.get("channel") or {}).get("id", "")),
            message_ts=str(container.get("message_ts") or message.get("ts", "")),
            ephemeral=bool(container.get("is_ephemeral")) or not message,
            message_blocks=tuple(message.get("blocks") or ()),
            message_text=str(message.get("text") or "GPU recommendation"),
        )


@dataclass(frozen=True)
class ScheduleKey:
    """The Remove button's value: the stop/start pair's key, `<account>#<region>#<instance id>`."""

    account_id: str
    region: str
    instance_id: str

    @classmethod
    def parse(cls, value: str) -> ScheduleKey | None:
        parts = value.split("#")
        return cls(*parts) if len(parts) == 3 and all(parts) else None

    def __str__(self) -> str:
        return f"{self.account_id}#{self.region}#{self.instance_id}"


def recommendation_id(value: str) -> str:
    """The value of Approve, Dismiss and Snooze: the recommendation id (the services judge it)."""
    return value


class Conversation:
    """Answers to one click: private notes to the clicker, and in-place updates of the messages."""

    def __init__(self, click: Click, web: WebClient, respond: Respond, board: MessageBoard) -> None:
        self.click = click
        self.web = web
        self._respond = respond
        self._board = board

    def tell(self, text: str) -> None:
        if not self.click.ephemeral and self.click.channel:
            try:
                self.web.chat_postEphemeral(channel=self.click.channel, user=self.click.user, text=text)
                return
            except SlackApiError as error:  # e.g. a channel the bot left: the response_url still works
                logger.warning("chat.postEphemeral failed", extra={"error": str(error.response.get("error"))})
        self._respond(text=text, response_type="ephemeral", replace_original=False)

    def mark(self, rec: Recommendation, note: str) -> None:
        """Replace the recommendation's buttons with `note`: in the clicked message, and in every saved
        report message that shows them too (a decision hides the advice everywhere). Saved messages are edited
        from their latest saved copy, not from the click's (which predates any edit made since it was shown)."""
        clicked = (self.click.channel, self.click.message_ts)
        if self.click.ephemeral:
            # Ephemeral messages cannot be read back or chat.update'd: replace through response_url.
            self._respond(text=note, blocks=blocks.resolved_blocks(rec, note), replace_original=True)
        else:
            self._board.retire(
                *clicked, rec.recommendation_id, note, text=self.click.message_text, blocks=self.click.message_blocks
            )
        self._board.resolve(rec.recommendation_id, note, except_in=None if self.click.ephemeral else clicked)


@dataclass(frozen=True)
class Button(Generic[V]):
    """A button's value parser and its handler."""

    value_of: Callable[[str], V]
    handler: Callable[[Deps, Conversation, V], None]

    def run(self, deps: Deps, talk: Conversation) -> None:
        self.handler(deps, talk, self.value_of(talk.click.value))


# -- the lazy listener --------------------------------------------------------------------------------


def press(deps: Deps, body: dict[str, Any], client: WebClient, respond: Respond) -> None:
    """Every button's lazy listener (registered for each action id in BUTTONS)."""
    talk = Conversation(Click.of(body), client, respond, MessageBoard(client, deps.store))
    try:
        BUTTONS[talk.click.action_id].run(deps, talk)
    except Exception:
        logger.exception("button handler failed", extra={"action": talk.click.action_id, "value": talk.click.value})
        talk.tell(":warning: Something went wrong; it has been logged. Please try again.")


# -- handlers -----------------------------------------------------------------------------------------


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


def remove_schedule(deps: Deps, talk: Conversation, key: ScheduleKey | None) -> None:
    result = (
        approvals.remove_schedule(
            deps.store,
            deps.workflow_factory,
            str(key),
            talk.click.user,
            is_approver=is_approver_via(deps, talk.web),
            now=deps.clock(),
            open_thread=open_thread_in(deps, talk.web),
            actions_enabled=deps.settings.actions_enabled,
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


def dismiss(deps: Deps, talk: Conversation, recommendation_id: str) -> None:
    result = approvals.dismiss(deps.store, recommendation_id, talk.click.user, now=deps.clock())
    if result.outcome is Outcome.DISMISSED and result.recommendation is not None:
        talk.mark(result.recommendation, blocks.dismissed_note(talk.click.user))
    else:
        talk.tell(SUPERSEDED.format(command=deps.command_name))


def snooze(deps: Deps, talk: Conversation, recommendation_id: str) -> None:
    result = approvals.snooze(deps.store, recommendation_id, talk.click.user, now=deps.clock())
    if result.outcome is Outcome.SNOOZED and result.recommendation is not None and result.until is not None:
        talk.mark(result.recommendation, blocks.snoozed_note(talk.click.user, result.until))
    else:
        talk.tell(SUPERSEDED.format(command=deps.command_name))


BUTTONS: dict[str, Button[Any]] = {
    blocks.ACTION_APPROVE: Button(recommendation_id, approve_action),
    blocks.ACTION_APPROVE_SCARCE: Button(recommendation_id, approve_with_capacity_risk),
    blocks.ACTION_REMOVE_SCHEDULE: Button(ScheduleKey.parse, remove_schedule),
    blocks.ACTION_DISMISS: Button(recommendation_id, dismiss),
    blocks.ACTION_SNOOZE: Button(recommendation_id, snooze),
}


# -- what the handlers share ----------------------------------------------------------------------------


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
