"""`/gpu schedules`: the stop/start schedules approved here, each with a Remove button."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.commands.verb import Asked, Command, Defaults, Malformed, Payload, Verb, no_arguments


@dataclass(frozen=True)
class Schedules:
    verb: ClassVar[str] = "schedules"

    def answer(self, asked: Asked) -> list[Payload]:
        settings = asked.deps.settings
        return [blocks.schedules_message(asked.deps.store.schedules(), settings.actions_enabled).payload()]


def parse(args: Sequence[str], defaults: Defaults) -> Command | Malformed:
    return no_arguments("schedules", args, Schedules())


VERB = Verb("schedules", "schedules", "the stop/start schedules approved here, each with a Remove button", parse)
