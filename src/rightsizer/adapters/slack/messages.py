"""Edits of messages the bot posted: a decision or an outcome replaces a recommendation's buttons wherever
they are shown (the daily report and its thread), through the copies the store keeps of those messages.

Slack cannot be asked for a message back without the channels:history scope, so the daily report poster
saves each message it sends (see poster.py), and every edit goes through that copy: two edits of the same
message (a snooze here, a dismissal there, an approval's outcome) compose instead of undoing each other.

Each edit starts from the latest saved copy (never from the copy a click carries, which may predate other
edits), changes only its recommendation's line, and saves the result with a conditional write on the copy's
version: of two edits racing, the one that lost re-reads and redoes its change on top of the winner's. The
saved copy is then sent to Slack with chat.update; an edit that finds the copy moved on after its own update
sends the newer copy, so that Slack ends on the last version whichever chat.update arrives last.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from enum import Enum
from typing import Any, Protocol

from aws_lambda_powertools.logging import Logger
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rightsizer.adapters.slack.blocks import actions_id, resolve_in_message
from rightsizer.services.ports import PostedMessage

logger = Logger(child=True)

MAX_ATTEMPTS = 8  # conditional writes per edit: each loss means another edit of the same message won
MAX_RESENDS = 3  # chat.update calls to catch up with edits saved while this one was being sent


class MessageStore(Protocol):
    """The copies of posted messages (DynamoStore in AWS)."""

    def message(self, channel: str, ts: str) -> PostedMessage | None: ...

    def messages_showing(self, recommendation_id: str) -> list[PostedMessage]: ...

    def replace_message_if(self, message: PostedMessage) -> bool:
        """Save `message` over the saved copy only if that copy is still at `message.version` (it then is at
        version + 1); False when another edit came first (or the copy is gone)."""
        ...


class _Edit(Enum):
    NOT_SAVED = "not_saved"  # no copy of the message is kept (never saved, or expired)
    UNCHANGED = "unchanged"  # the change had nothing left to do (e.g. the buttons are already gone)
    EDITED = "edited"
    CONTENDED = "contended"  # other edits kept winning: given up (logged)
    FAILED = "failed"  # saved, but Slack refused the update (logged; the next edit sends the saved copy)


Change = Callable[[PostedMessage], PostedMessage | None]


class MessageBoard:
    def __init__(self, client: WebClient, store: MessageStore) -> None:
        self._client = client
        self._store = store

    def resolve(self, recommendation_id: str, note: str, *, except_in: tuple[str, str] | None = None) -> int:
        """Replace the recommendation's buttons with `note` in every saved message showing them (but the
        message `except_in`, (channel, ts), which the caller edits itself). Returns how many were edited."""
        edited = 0
        for message in self._store.messages_showing(recommendation_id):
            if (message.channel, message.ts) == except_in:
                continue
            if (
                self._edit(message.channel, message.ts, _retiring(recommendation_id, note), raises=False)
                is _Edit.EDITED
            ):
                edited += 1
        return edited

    def retire(
        self,
        channel: str,
        ts: str,
        recommendation_id: str,
        note: str,
        *,
        text: str,
        blocks: Sequence[Mapping[str, Any]],
    ) -> None:
        """Replace the recommendation's buttons with `note` in the message a click came from. `text` and
        `blocks` are the click's copy, used only for a message whose copy is not kept (e.g. a thread opened for
        one approval). Where the line shows no buttons any more (an outcome or another decision came first),
        it is left alone and Slack is shown the saved copy. Raises SlackApiError."""
        outcome = self._edit(channel, ts, _retiring(recommendation_id, note), raises=True)
        if outcome is _Edit.NOT_SAVED:
            updated = resolve_in_message(blocks, recommendation_id, note)
            self._client.chat_update(channel=channel, ts=ts, text=text, blocks=updated)
        elif outcome is _Edit.UNCHANGED:
            saved = self._store.message(channel, ts)
            if saved is not None:  # the clicker saw buttons that are gone: show them the message as it is
                self._send(saved)

    def settle(self, channel: str, ts: str, recommendation_id: str, text: str) -> None:
        """An approval's outcome on the message it was approved from: in a saved report, only that
        recommendation's line changes; a thread opened for the approval alone is replaced whole.
        Raises SlackApiError."""

        def outcome(saved: PostedMessage) -> PostedMessage:
            return replace(saved, blocks=tuple(resolve_in_message(saved.blocks, recommendation_id, text)))

        if self._edit(channel, ts, outcome, raises=True) is _Edit.NOT_SAVED:
            block = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
            self._client.chat_update(channel=channel, ts=ts, text=text, blocks=[block])

    def _edit(self, channel: str, ts: str, change: Change, *, raises: bool) -> _Edit:
        """Apply `change` to the latest saved copy, save it conditionally (redoing it on top of any edit that
        came first), then show the result in Slack."""
        for _ in range(MAX_ATTEMPTS):
            saved = self._store.message(channel, ts)
            if saved is None:
                return _Edit.NOT_SAVED
            changed = change(saved)
            if changed is None:
                return _Edit.UNCHANGED
            if self._store.replace_message_if(replace(changed, version=saved.version)):
                return self._publish(replace(changed, version=saved.version + 1), raises=raises)
        logger.warning("gave up editing a posted message: other edits kept coming first", extra={"ts": ts})
        return _Edit.CONTENDED

    def _publish(self, written: PostedMessage, *, raises: bool) -> _Edit:
        """chat.update with the copy just saved; then, while the saved copy is newer than what was sent (an edit
        saved meanwhile, whose own chat.update may have reached Slack first), send the newer one."""
        sent = written
        try:
            self._send(sent)
            for _ in range(MAX_RESENDS):
                latest = self._store.message(sent.channel, sent.ts)
                if latest is None or latest.version <= sent.version:
                    break
                sent = latest
                self._send(sent)
        except SlackApiError as error:  # e.g. message_not_found: someone deleted it
            if raises:
                raise
            logger.warning(
                "could not edit a posted message",
                extra={"channel": sent.channel, "ts": sent.ts, "error": str(error.response.get("error"))},
            )
            return _Edit.FAILED
        return _Edit.EDITED

    def _send(self, message: PostedMessage) -> None:
        self._client.chat_update(
            channel=message.channel, ts=message.ts, text=message.text, blocks=[dict(b) for b in message.blocks]
        )


def _retiring(recommendation_id: str, note: str) -> Change:
    """The change a decision makes: the recommendation's buttons become `note`; nothing where there are none."""

    def change(saved: PostedMessage) -> PostedMessage | None:
        if not _shows_buttons(saved, recommendation_id):
            return None
        return replace(saved, blocks=tuple(resolve_in_message(saved.blocks, recommendation_id, note)))

    return change


def _shows_buttons(message: PostedMessage, recommendation_id: str) -> bool:
    target = actions_id(recommendation_id)
    return any(block.get("block_id") == target and block.get("type") == "actions" for block in message.blocks)
