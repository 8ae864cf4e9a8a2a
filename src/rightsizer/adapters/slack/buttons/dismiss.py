"""Dismiss: the advice is hidden everywhere it shows, until the host's advice changes."""

from __future__ import annotations

from typing import Any

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.buttons.button import SUPERSEDED, Button, Conversation, recommendation_id
from rightsizer.adapters.slack.deps import Deps
from rightsizer.services import approvals
from rightsizer.services.approvals import Outcome


def dismiss(deps: Deps, talk: Conversation, recommendation_id: str) -> None:
    result = approvals.dismiss(deps.store, recommendation_id, talk.click.user, now=deps.clock())
    if result.outcome is Outcome.DISMISSED and result.recommendation is not None:
        talk.mark(result.recommendation, blocks.dismissed_note(talk.click.user))
    else:
        talk.tell(SUPERSEDED.format(command=deps.command_name))


BUTTONS: dict[str, Button[Any]] = {blocks.ACTION_DISMISS: Button(recommendation_id, dismiss)}
