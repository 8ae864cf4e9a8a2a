"""The composition root: settings wired to the services and the adapters. It only wires: each Lambda's use-case lives in
services/, each handler calls its function's wiring here, one module per function so a handler loads only its own.

  __init__   what every Lambda container builds once: the settings, the AWS session, the table (`Wiring`)
  regions    one region's readers (EC2, CloudWatch, prices, commitments, CloudTrail, SageMaker): the pipeline's and
             the CLI's (cli/wiring.py)
  pipeline   the day's pipeline: its start, a target's plan, a shard's collection, the ranking and the catch-up
  report     the daily report: the Slack poster, the page in the bucket, the savings chart
  prices     the weekly price refresh
  slack      the Slack app: Bolt with the table, the bot's client and the resize workflow it starts on an approval
  notify     the notifier's regional tables (the instance locks of a regional workflow)
"""

from __future__ import annotations

from functools import cache

from rightsizer.adapters.aws.session import AwsSession
from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.settings import ConfigError, Settings


def store(session: AwsSession, settings: Settings) -> DynamoStore:
    if not settings.table_name:
        raise ConfigError("TABLE_NAME is not set")
    return DynamoStore.from_name(session.boto3_session, settings.table_name, settings.home_region)


class Wiring:
    """What one Lambda container builds once and reuses while warm: settings, the AWS session, the store."""

    def __init__(self, settings: Settings, session: AwsSession) -> None:
        self.settings = settings
        self.session = session
        self._store: DynamoStore | None = None

    @property
    def store(self) -> DynamoStore:
        if self._store is None:
            self._store = store(self.session, self.settings)
        return self._store


@cache
def lambda_wiring() -> Wiring:
    """The container's wiring, from its environment (template.yaml). Tests and the demo, which change the
    environment between stacks, call `lambda_wiring.cache_clear()`."""
    return Wiring(Settings.from_env(), AwsSession())
