"""What every button shares: the click as Slack sends it, the values buttons carry, the conversation that answers
the clicker, and `Button` (a value parser and a handler), the registry's entry."""

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
from rightsizer.domain.models.advice import Recommendation

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
