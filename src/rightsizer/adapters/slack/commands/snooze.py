"""`/gpu snooze <instance-id> <duration>`: hide a host's advice for a while (reports and buttons included)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.commands.verb import (
    EXAMPLE_INSTANCE,
    Asked,
    Defaults,
    Malformed,
    Payload,
    Verb,
    instance_id_of,
    unknown_instance,
)
from rightsizer.services import approvals
from rightsizer.services.approvals import DurationError, Outcome


@dataclass(frozen=True)
class Snooze:
    instance_id: str
    duration: timedelta
    verb: ClassVar[str] = "snooze"

    def answer(self, asked: Asked) -> list[Payload]:
        result = approvals.snooze_instance(
            asked.deps.store, self.instance_id, asked.user, now=asked.now, duration=self.duration
        )
        if result.outcome is not Outcome.SNOOZED or result.until is None or result.recommendation is None:
            return [unknown_instance(self.instance_id, asked.deps.command_name)]
        # The report already in the channel must not keep offering buttons for the snoozed host.
        asked.board.resolve(result.recommendation.recommendation_id, blocks.snoozed_note(asked.user, result.until))
        note = f"`{self.instance_id}` is snoozed until {result.until:%Y-%m-%d %H:%M} UTC: reports leave it out."
        return [{"text": note}]


def parse(args: Sequence[str], defaults: Defaults) -> Snooze | Malformed:
    instance_id = instance_id_of("snooze", args, f"snooze {EXAMPLE_INSTANCE} 3d")
    if not isinstance(instance_id, str):
        return instance_id
    if len(args) < 2:
        return Malformed("`snooze` needs a duration after the instance id, e.g. 12h, 3d or 2w.")
    try:
        duration = approvals.parse_duration(" ".join(args[1:]))
    except DurationError as error:
        return Malformed(f"{blocks.escape(str(error))}.")
    return Snooze(instance_id, duration)


VERB = Verb(
    "snooze",
    "snooze <instance-id> <duration>",
    "hide a host's advice for e.g. 12h, 3d or 2w (at most 90d)",
    parse,
)
