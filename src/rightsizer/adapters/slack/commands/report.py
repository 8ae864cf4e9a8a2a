"""`/gpu report`: the fleet summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.commands.verb import Asked, Command, Defaults, Malformed, Payload, Verb, no_arguments
from rightsizer.services.ranking import RankedReport, ranked_report


@dataclass(frozen=True)
class Report:
    verb: ClassVar[str] = "report"

    def answer(self, asked: Asked) -> list[Payload]:
        ranked = ranking(asked)
        message = blocks.report_summary_message(
            ranked.report, ranked.decisions, asked.now, asked.deps.settings.report_scope, ranked.hidden_elsewhere
        )
        return [message.payload()]


def ranking(asked: Asked) -> RankedReport:
    """The latest ranking, without what people decided about (`report` and `top` read the same)."""
    settings = asked.deps.settings
    return ranked_report(
        asked.deps.store, asked.now, settings.lookback_days, settings.report_scope, settings.managed_tag_key
    )


def parse(args: Sequence[str], defaults: Defaults) -> Command | Malformed:
    return no_arguments("report", args, Report())


VERB = Verb("report", "report", "the fleet summary", parse)
