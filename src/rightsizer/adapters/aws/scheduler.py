"""EventBridge Scheduler: the stop/start pairs the instance workflow created in one account and region.

What Scheduler has is the truth about a host's schedule; the registry in the table is a copy the Slack app can
read without reaching every account. The daily plan lists the pairs (the `SchedulerListing` port) and
`services/schedule_registry.py` corrects the copy.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from rightsizer.adapters.aws.session import describe_aws_error
from rightsizer.services.ports import SourceUnavailable

SCHEDULE_GROUP = "default"  # the group the workflow creates its pairs in (docs/resize-workflow.md, 2b)
NAME_PREFIX = "rightsizer-"  # schedule_plan.schedule_names: rightsizer-<instance id>-stop / -start


class SchedulerPairs:
    """Implements the SchedulerListing port with a boto3 'scheduler' client of the region."""

    def __init__(self, client: Any, region: str) -> None:
        self._client = client
        self._region = region

    def names(self) -> frozenset[str]:
        """The names of the bot's schedules in the region (both halves of every pair)."""
        try:
            pages = self._client.get_paginator("list_schedules").paginate(
                GroupName=SCHEDULE_GROUP, NamePrefix=NAME_PREFIX
            )
            names = {str(entry.get("Name", "")) for page in pages for entry in page.get("Schedules", [])}
        except (ClientError, BotoCoreError, ResponseParserError) as error:
            raise SourceUnavailable(
                f"EventBridge Scheduler ListSchedules: {describe_aws_error(error, self._region)}"
            ) from error
        return frozenset(name for name in names if name.startswith(NAME_PREFIX))  # an emulator may ignore the prefix
