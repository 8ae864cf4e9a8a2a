"""`/gpu top [N]`: the N biggest savings, with buttons."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.commands.report import ranking
from rightsizer.adapters.slack.commands.verb import Asked, Defaults, Malformed, Payload, Verb
from rightsizer.services.showback import FilterError, Filters, filters_of

COUNT = re.compile(r"[0-9]{1,4}")  # ASCII digits only: str.isdigit() also accepts "¹" and "①", int() does not


@dataclass(frozen=True)
class Top:
    count: int
    filters: Filters = field(default_factory=Filters)
    verb: ClassVar[str] = "top"

    def answer(self, asked: Asked) -> list[Payload]:
        ranked = ranking(asked)
        messages = blocks.top_messages(
            ranked.report,
            ranked.decisions,
            self.count,
            asked.now,
            asked.deps.settings.report_scope,
            ranked.hidden_elsewhere,
            ranked.approvals,
            self.filters,
        )
        return [message.payload() for message in messages]


EXAMPLE = "`top 5 finding=idle team=search min-savings=100 tag=env=prod kind=ec2`"


def parse(args: Sequence[str], defaults: Defaults) -> Top | Malformed:
    """`top [N] [name=value ...]`: the count, then filters as the CLI's (services.showback: finding, min-savings,
    team, tag KEY=VALUE, kind)."""
    words = list(args)
    count = defaults.top_n
    if words and COUNT.fullmatch(words[0]):
        if int(words[0]) <= 0:
            return Malformed(f"`top` takes a positive number, e.g. {EXAMPLE}.")
        count = int(words.pop(0))
    terms = []
    for word in words:
        name, equals, value = word.partition("=")
        if not equals:
            return Malformed(
                f"`top` takes a number and filters written name=value (got `{blocks.escape(word[:40])}`), "
                f"e.g. {EXAMPLE}."
            )
        terms.append((name, value))
    try:
        return Top(count, filters_of(terms))
    except FilterError as error:
        return Malformed(f"`top`: {blocks.escape(str(error)[:300])}.")


VERB = Verb(
    "top",
    "top [N] [finding=… team=… tag=KEY=VALUE min-savings=… kind=…]",
    f"the N biggest savings, with buttons (default 10, at most {blocks.MAX_TOP}), of those the filters keep",
    parse,
)
