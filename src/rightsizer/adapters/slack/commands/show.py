"""`/gpu show <instance-id>`: one host's advice and evidence, with its buttons and who decided what."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.commands.verb import AboutHost, Asked, Verb
from rightsizer.domain.models.advice import Recommendation


@dataclass(frozen=True)
class Show(AboutHost):
    verb: ClassVar[str] = "show"

    def about(self, rec: Recommendation, asked: Asked) -> blocks.Message:
        store, settings = asked.deps.store, asked.deps.settings
        return blocks.detail_message(
            rec,
            decisions=store.decisions_about(rec, asked.now),
            approval=store.approval(rec.recommendation_id),
            now=asked.now,
            scope=settings.report_scope,
            managed_tag_key=settings.managed_tag_key,
        )


VERB = Verb("show", "show <instance-id>", "one host's advice and evidence", Show.parse)
