"""`/gpu top [N]`: the N biggest savings, with buttons."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.commands.report import ranking
from rightsizer.adapters.slack.commands.verb import Asked, Defaults, Malformed, Payload, Verb

COUNT = re.compile(r"[0-9]{1,4}")  # ASCII digits only: str.isdigit() also accepts "¹" and "①", int() does not


@dataclass(frozen=True)
class Top:
    count: int
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
        )
        return [message.payload() for message in messages]


def parse(args: Sequence[str], defaults: Defaults) -> Top | Malformed:
    if not args:
        return Top(defaults.top_n)
    if len(args) == 1 and COUNT.fullmatch(args[0]) and int(args[0]) > 0:
        return Top(int(args[0]))
    return Malformed("`top` takes one optional positive number, e.g. `top 5`.")


VERB = Verb("top", "top [N]", f"the N biggest savings, with buttons (default 10, at most {blocks.MAX_TOP})", parse)
