"""The Notifier function's wiring: its use-case (services/workflow_events.py) over the home table, the Slack thread
notifier and the tables whose instance locks it releases."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.adapters.slack.client import DEFAULT_API_URL, bot_client
from rightsizer.adapters.slack.notifier import SlackThreadNotifier
from rightsizer.bootstrap import Wiring
from rightsizer.services.workflow_events import Dependencies


def notifier_dependencies(wiring: Wiring, count_outcome: Callable[[str], None]) -> Dependencies:
    """The home table (the approvals, the audit, the Slack messages, the locks), the thread notifier, whose client is
    made when it first posts, and the regional tables."""
    settings = wiring.settings
    secret_name, api_url = settings.slack.secret_name, settings.slack.api_url
    return Dependencies(
        wiring.store,
        SlackThreadNotifier(lambda: slack_client(secret_name, api_url), wiring.store),
        home_region=settings.home_region,
        regional_locks=regional_locks(wiring),
        count_outcome=count_outcome,
    )


def slack_client(secret_name: str, api_url: str = DEFAULT_API_URL) -> Any:
    """The bot's client, made when the notifier first posts (replaced in the unit tests)."""
    return bot_client(secret_name, api_url)


def regional_locks(wiring: Wiring) -> Callable[[str], DynamoStore] | None:
    """The table of an action region, by region, where a regional copy of the workflow keeps its instance locks; None
    without regional tables (every lock is in the home table)."""
    name = wiring.settings.regional_table_name
    if not name:
        return None

    def table(region: str) -> DynamoStore:
        return DynamoStore.from_name(wiring.session.boto3_session, name, region)

    return table
