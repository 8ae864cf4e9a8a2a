"""Issue 21, item 2: edits of a saved report message compose. Each starts from the latest saved copy, changes only
its recommendation's line and saves conditionally on the copy's version; when two edits race, neither undoes the
other, in the store or in Slack."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from slack_sdk import WebClient

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.messages import MessageBoard
from rightsizer.services.ports import PostedMessage
from tests.fakes import MemoryStore

CHANNEL, TS = "C0REPORT", "1764590400.000100"
RECS = ("rec-a", "rec-b", "rec-c")


def report() -> PostedMessage:
    lines: list[dict[str, Any]] = []
    for rec in RECS:
        lines.append({"type": "section", "block_id": f"rec:{rec}", "text": {"type": "mrkdwn", "text": rec}})
        lines.append({"type": "actions", "block_id": blocks.actions_id(rec), "elements": []})
    return PostedMessage(CHANNEL, TS, "GPU fleet report", tuple(lines), RECS)


class Slack:
    """chat.update as Slack applies it: the last call wins. `during` runs inside the next call (a concurrent edit
    that lands while this one is on the wire)."""

    def __init__(self) -> None:
        self.shown: list[dict[str, Any]] = []
        self.calls = 0
        self.during: Callable[[], None] | None = None

    def chat_update(self, *, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls += 1
        hook, self.during = self.during, None
        if hook is not None:
            hook()
        self.shown = [dict(b) for b in blocks]
        return {"ok": True}


def store_with_report() -> MemoryStore:
    store = MemoryStore()
    saved = report()
    store.messages[(saved.channel, saved.ts)] = saved
    return store


def lines(message_blocks: Any) -> dict[str, str]:
    """recommendation id -> what its line shows: "buttons", or the note's text."""
    shown = {}
    for block in message_blocks:
        block_id = str(block.get("block_id") or "")
        if block_id.startswith("act:"):
            note = "buttons" if block["type"] == "actions" else json.dumps(block["elements"])
            shown[block_id.removeprefix("act:")] = note
    return shown


def board(store: MemoryStore, slack: Slack) -> MessageBoard:
    return MessageBoard(cast(WebClient, slack), store)


def test_a_click_edits_the_saved_copy_not_its_own_stale_copy() -> None:
    store, slack = store_with_report(), Slack()
    stale = report().blocks  # what both clicks carry: the message as first posted

    board(store, slack).retire(CHANNEL, TS, "rec-a", "A started", text="GPU fleet report", blocks=stale)
    board(store, slack).retire(CHANNEL, TS, "rec-b", "B started", text="GPU fleet report", blocks=stale)

    saved = store.message(CHANNEL, TS)
    assert saved is not None and saved.version == 2
    shown = lines(saved.blocks)
    assert "A started" in shown["rec-a"] and "B started" in shown["rec-b"] and shown["rec-c"] == "buttons"
    assert lines(slack.shown) == lines(saved.blocks), "Slack shows the saved copy"


def test_two_edits_racing_both_survive_in_the_store_and_in_slack() -> None:
    store, slack = store_with_report(), Slack()

    # While A's chat.update is on the wire, B's edit runs start to end (another Lambda invocation).
    def dismiss_b() -> None:
        board(store, slack).resolve("rec-b", "B dismissed")

    slack.during = dismiss_b

    board(store, slack).resolve("rec-a", "A snoozed")

    saved = store.message(CHANNEL, TS)
    assert saved is not None
    assert "A snoozed" in lines(saved.blocks)["rec-a"] and "B dismissed" in lines(saved.blocks)["rec-b"]
    assert lines(slack.shown) == lines(saved.blocks), "A's late chat.update is followed by the newer copy"


def test_a_conditional_write_that_loses_redoes_its_change_on_the_winners_copy() -> None:
    store, slack = store_with_report(), Slack()
    original = store.replace_message_if
    raced: list[bool] = []

    def first_loses(message: PostedMessage) -> bool:
        if not raced:  # B's edit is saved between A's read and A's write
            raced.append(True)
            other = store.message(CHANNEL, TS)
            assert other is not None
            changed = blocks.resolve_in_message(other.blocks, "rec-b", "B stopped")
            assert original(PostedMessage(CHANNEL, TS, other.text, tuple(changed), RECS, other.version))
        return original(message)

    store.replace_message_if = first_loses  # type: ignore[method-assign]

    board(store, slack).settle(CHANNEL, TS, "rec-a", "A resized")

    saved = store.message(CHANNEL, TS)
    assert saved is not None and saved.version == 2
    assert "A resized" in lines(saved.blocks)["rec-a"] and "B stopped" in lines(saved.blocks)["rec-b"]
    assert lines(saved.blocks)["rec-c"] == "buttons"
    assert lines(slack.shown) == lines(saved.blocks)


def test_a_decision_does_not_overwrite_an_outcome_already_on_the_line() -> None:
    store, slack = store_with_report(), Slack()
    board(store, slack).settle(CHANNEL, TS, "rec-a", "A refused: not tagged")  # the workflow answered first

    board(store, slack).retire(CHANNEL, TS, "rec-a", "A started", text="GPU fleet report", blocks=report().blocks)

    saved = store.message(CHANNEL, TS)
    assert saved is not None and "A refused" in lines(saved.blocks)["rec-a"]
    assert "A refused" in lines(slack.shown)["rec-a"], "the clicker is shown the message as it is"


def test_a_message_that_was_never_saved_is_edited_from_the_clicks_copy() -> None:
    store, slack = MemoryStore(), Slack()

    board(store, slack).retire(CHANNEL, TS, "rec-c", "C dismissed", text="thread", blocks=report().blocks)

    assert "C dismissed" in lines(slack.shown)["rec-c"] and lines(slack.shown)["rec-a"] == "buttons"
    assert store.message(CHANNEL, TS) is None
