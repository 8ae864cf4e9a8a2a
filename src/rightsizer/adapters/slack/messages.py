"""Edits of messages the bot posted: a decision or an outcome replaces a recommendation's buttons wherever
they are shown (the daily report and its thread), through the copies the store keeps of those messages.

Slack cannot be asked for a message back without the channels:history scope, so the daily report poster
saves each message it sends (see poster.py), and every edit goes through that copy: two edits of the same
message (a snooze here, a dismissal there) compose instead of undoing each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from aws_lambda_powertools.logging import Logger
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rightsizer.adapters.slack.blocks import actions_id, resolve_in_message
from rightsizer.services.ports import PostedMessage

logger = Logger(child=True)


class MessageStore(Protocol):
    """The copies of posted messages (DynamoStore in AWS)."""

    def message(self, channel: str, ts: str) -> PostedMessage | None: ...

    def messages_showing(self, recommendation_id: str) -> list[PostedMessage]: ...

    def replace_message(self, message: PostedMessage) -> None: ...


class MessageBoard:
    def __init__(self, client: WebClient, store: MessageStore) -> None:
        self._client = client
        self._store = store

    def resolve(self, recommendation_id: str, note: str, *, except_in: tuple[str, str] | None = None) -> int:
        """Replace the recommendation's buttons with `note` in every saved message showing them (but the
        message `except_in`, (channel, ts), which the caller edits itself). Returns how many were edited."""
        edited = 0
        for message in self._store.messages_showing(recommendation_id):
            if (message.channel, message.ts) == except_in or not _shows_buttons(message, recommendation_id):
                continue
            blocks = resolve_in_message(message.blocks, recommendation_id, note)
            if self._update(replace(message, blocks=tuple(blocks))):
                edited += 1
        return edited

    def edited(self, channel: str, ts: str, text: str, blocks: Sequence[Mapping[str, Any]]) -> None:
        """The caller changed a message itself (from a click's copy): keep the saved copy in step."""
        saved = self._store.message(channel, ts)
        if saved is not None:
            self._store.replace_message(replace(saved, text=text, blocks=tuple(blocks)))

    def settle(self, channel: str, ts: str, recommendation_id: str, text: str) -> None:
        """An approval's outcome on the message it was approved from: in a saved report, only that
        recommendation's line changes; a thread opened for the approval alone is replaced whole.
        Raises SlackApiError."""
        saved = self._store.message(channel, ts)
        if saved is None:
            block = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
            self._client.chat_update(channel=channel, ts=ts, text=text, blocks=[block])
            return
        blocks = resolve_in_message(saved.blocks, recommendation_id, text)
        self._client.chat_update(channel=channel, ts=ts, text=saved.text, blocks=blocks)
        self._store.replace_message(replace(saved, blocks=tuple(blocks)))

    def _update(self, message: PostedMessage) -> bool:
        try:
            self._client.chat_update(
                channel=message.channel, ts=message.ts, text=message.text, blocks=[dict(b) for b in message.blocks]
            )
        except SlackApiError as error:  # e.g. message_not_found: someone deleted it
            logger.warning(
                "could not edit a posted message",
                extra={"channel": message.channel, "ts": message.ts, "error": str(error.response.get("error"))},
            )
            return False
        self._store.replace_message(message)
        return True


def _shows_buttons(message: PostedMessage, recommendation_id: str) -> bool:
    target = actions_id(recommendation_id)
    return any(block.get("block_id") == target and block.get("type") == "actions" for block in message.blocks)
