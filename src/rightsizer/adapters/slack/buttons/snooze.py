"""Snooze: the advice is hidden for the snooze period, everywhere it shows."""

from __future__ import annotations

from typing import Any

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.buttons.button import SUPERSEDED, Button, Conversation, recommendation_id
from rightsizer.adapters.slack.deps import Deps
from rightsizer.services import approvals
from rightsizer.services.approvals import Outcome


def snooze(deps: Deps, talk: Conversation, recommendation_id: str) -> None:
    result = approvals.snooze(deps.store, recommendation_id, talk.click.user, now=deps.clock())
    if result.outcome is Outcome.SNOOZED and result.recommendation is not None and result.until is not None:
        talk.mark(result.recommendation, blocks.snoozed_note(talk.click.user, result.until))
    else:
        talk.tell(SUPERSEDED.format(command=deps.command_name))


BUTTONS: dict[str, Button[Any]] = {blocks.ACTION_SNOOZE: Button(recommendation_id, snooze)}
