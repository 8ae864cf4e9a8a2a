"""`/gpu why <instance-id>`: the reasoning behind a host's advice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.commands.verb import AboutHost, Asked, Verb
from rightsizer.domain.models.advice import Recommendation


@dataclass(frozen=True)
class Why(AboutHost):
    verb: ClassVar[str] = "why"

    def about(self, rec: Recommendation, asked: Asked) -> blocks.Message:
        return blocks.why_message(rec)


VERB = Verb("why", "why <instance-id>", "the reasoning behind the advice", Why.parse)
