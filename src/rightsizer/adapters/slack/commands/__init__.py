"""The slash command's verbs: one module each (its usage, help line, parser and typed command), one registry.

`COMMANDS` is the only list of verbs: `parse` looks verbs up in it, and the help text and the Slack app
manifest's usage hint (slack/manifest.yaml; `python -m rightsizer.adapters.slack.commands.manifest` rewrites
it) are generated from it. A new verb is a module with a `VERB` and its line here.
"""

from __future__ import annotations

from dataclasses import dataclass

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.commands import help as help_command
from rightsizer.adapters.slack.commands import report, schedules, show, snooze, top, why
from rightsizer.adapters.slack.commands.verb import Asked, Command, Defaults, Help, Malformed, Payload, Verb

# In the order the help lists them.
COMMANDS: dict[str, Verb] = {
    verb.name: verb
    for verb in (report.VERB, top.VERB, show.VERB, why.VERB, snooze.VERB, schedules.VERB, help_command.VERB)
}
_BY_WORD = {word: verb for verb in COMMANDS.values() for word in (verb.name, *verb.aliases)}


@dataclass(frozen=True)
class Reply:
    """The answer given in the acknowledgement itself (help, and input that is no command): nothing lazy runs."""

    text: str


DEFAULTS = Defaults()


def parse(text: str, defaults: Defaults = DEFAULTS) -> Command | Reply:
    """Never raises: malformed input becomes a Reply that says what would work, followed by the help."""
    tokens = (text or "").split()
    verb = _BY_WORD.get(tokens[0].lower()) if tokens else help_command.VERB
    parsed = verb.parse(tokens[1:], defaults) if verb else Malformed(f"I don't know `{blocks.escape(tokens[0][:30])}`.")
    if isinstance(parsed, Help):
        return Reply(help_text(defaults.command))
    if isinstance(parsed, Malformed):
        return Reply(f"{parsed.error}\n\n{help_text(defaults.command)}")
    return parsed


def help_text(command: str) -> str:
    return "\n".join(
        [
            f"*{command}*: GPU right-sizing. Commands:",
            *(f"• `{command} {verb.usage}`: {verb.summary}" for verb in COMMANDS.values()),
            "Approve (a resize, a stop or a schedule), dismiss or snooze with the buttons under each recommendation.",
        ]
    )


def usage_hint() -> str:
    """The slash command's usage hint in the Slack app manifest."""
    return " | ".join(verb.usage for verb in COMMANDS.values())


__all__ = ["COMMANDS", "Asked", "Command", "Defaults", "Payload", "Reply", "help_text", "parse", "usage_hint"]
