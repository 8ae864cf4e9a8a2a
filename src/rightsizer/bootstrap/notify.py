"""The Notifier function's wiring: the tables whose instance locks it releases (handlers/notify.py builds the rest of
its `Dependencies`: the home table and the Slack thread notifier)."""

from __future__ import annotations

from collections.abc import Callable

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.bootstrap import Wiring


def regional_locks(wiring: Wiring) -> Callable[[str], DynamoStore] | None:
    """The table of an action region, by region, where a regional copy of the workflow keeps its instance locks; None
    without regional tables (every lock is in the home table)."""
    name = wiring.settings.regional_table_name
    if not name:
        return None

    def table(region: str) -> DynamoStore:
        return DynamoStore.from_name(wiring.session.boto3_session, name, region)

    return table
