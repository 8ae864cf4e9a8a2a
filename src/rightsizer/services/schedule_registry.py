"""The schedule registry kept true to EventBridge Scheduler, whose own list of pairs is the truth.

The registry (what `/gpu schedules` lists, what refuses a second pair or a stop of a scheduled host) is written by
the notifier when the workflow reports a pair created or removed. A pair someone deleted by hand, a removal that
ended "needs a person" after Scheduler had deleted the pair, or a half left by an abort make it wrong; the daily
plan corrects it per account and region.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from rightsizer.domain.schedule_plan import schedule_names
from rightsizer.services.ports import ScheduleRegistry, SourceUnavailable


class SchedulerListing(Protocol):
    def names(self) -> frozenset[str]:
        """The bot's schedule names in one account and region; raises SourceUnavailable."""
        ...


@dataclass(frozen=True)
class Reconciled:
    """What one account and region's check changed in the registry (instance ids), or why it could not check."""

    forgotten: tuple[str, ...] = ()  # both halves gone from Scheduler: the record is deleted
    incomplete: tuple[str, ...] = ()  # one half gone: the record says which, Remove deletes the other
    restored: tuple[str, ...] = ()  # a half reported missing earlier is back
    unrecorded: tuple[str, ...] = ()  # a pair in Scheduler the registry does not list (created by hand?)
    warning: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.forgotten or self.incomplete or self.restored)


def reconcile_schedules(
    registry: ScheduleRegistry, listing: SchedulerListing, account_id: str, region: str
) -> Reconciled:
    """Correct the registry's pairs of one account and region from Scheduler's list of them."""
    # The registry is read before Scheduler is asked: the notifier records a pair only after the workflow created
    # it, so a record read first has its pair in the later list unless the pair really went away.
    records = [r for r in registry.schedules() if (r.account_id, r.region) == (account_id, region)]
    try:
        names = listing.names()
    except SourceUnavailable as error:
        return Reconciled(
            warning=f"{account_id}/{region}: the schedule registry was not checked against EventBridge Scheduler "
            f"({error}); /gpu schedules lists what the bot recorded"
        )
    forgotten: list[str] = []
    incomplete: list[str] = []
    restored: list[str] = []
    for record in records:
        missing = tuple(name for name in (record.stop_name, record.start_name) if name not in names)
        if len(missing) == 2:
            registry.delete_schedule(record.account_id, record.region, record.instance_id)
            forgotten.append(record.instance_id)
        elif missing != record.missing:
            registry.put_schedule(replace(record, missing=missing))
            (incomplete if missing else restored).append(record.instance_id)
    recorded = {r.instance_id for r in records}
    return Reconciled(
        forgotten=tuple(forgotten),
        incomplete=tuple(incomplete),
        restored=tuple(restored),
        unrecorded=_unrecorded(names, recorded),
    )


def _unrecorded(names: frozenset[str], recorded: set[str]) -> tuple[str, ...]:
    found = []
    for name in sorted(names):
        for suffix in ("-stop", "-start"):
            if name.endswith(suffix):
                instance_id = name[len("rightsizer-") : -len(suffix)]
                if instance_id and instance_id not in recorded and name in schedule_names(instance_id):
                    found.append(instance_id)
    return tuple(sorted(set(found)))


def describe(reconciled: Reconciled) -> Sequence[str]:
    """One line per kind of correction, for the plan's log."""
    lines = []
    if reconciled.forgotten:
        lines.append(f"pairs gone from EventBridge Scheduler, forgotten: {', '.join(reconciled.forgotten)}")
    if reconciled.incomplete:
        lines.append(f"pairs with a half missing in EventBridge Scheduler: {', '.join(reconciled.incomplete)}")
    if reconciled.unrecorded:
        lines.append(f"pairs in EventBridge Scheduler the bot did not record: {', '.join(reconciled.unrecorded)}")
    return lines
