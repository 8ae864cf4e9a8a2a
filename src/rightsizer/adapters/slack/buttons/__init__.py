"""The buttons: one module each (its handler and its `BUTTONS` entry: action id, value parser, handler), one registry.

A click is acknowledged at once (`app.register`); `press`, the lazy listener of every button, reads the
button's value with the parser its entry names (a recommendation id, or a schedule's key) and runs the handler.
What the Slack report promises, the handlers keep: the services refuse what is stale, hidden or out of reach.
A new button is a module with its `BUTTONS` and its name here (bolt-python's app template: listeners/actions/).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import Logger
from slack_sdk import WebClient

from rightsizer.adapters.slack.buttons import approve, dismiss, remove_schedule, snooze
from rightsizer.adapters.slack.buttons.button import Button, Click, Conversation
from rightsizer.adapters.slack.deps import Deps, Respond
from rightsizer.adapters.slack.messages import MessageBoard

logger = Logger(child=True)

BUTTONS: dict[str, Button[Any]] = {
    **approve.BUTTONS,
    **remove_schedule.BUTTONS,
    **dismiss.BUTTONS,
    **snooze.BUTTONS,
}


def press(deps: Deps, body: dict[str, Any], client: WebClient, respond: Respond) -> None:
    """Every button's lazy listener (registered for each action id in BUTTONS)."""
    talk = Conversation(Click.of(body), client, respond, MessageBoard(client, deps.store))
    try:
        BUTTONS[talk.click.action_id].run(deps, talk)
    except Exception:
        logger.exception("button handler failed", extra={"action": talk.click.action_id, "value": talk.click.value})
        talk.tell(":warning: Something went wrong; it has been logged. Please try again.")


__all__ = ["BUTTONS", "Click", "Conversation", "press"]
