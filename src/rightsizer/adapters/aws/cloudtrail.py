"""CloudTrail: the instance-type changes EC2 recorded in one region, the `ResizeHistory` port.

The agent's GPU series carry the `InstanceType` they were published on, which shows most resizes; an agent config
without that dimension does not, and then only the account's own record does. CloudTrail's event history keeps
90 days of management events without a trail: one LookupEvents query for `ModifyInstanceAttribute` per region
(pages of 50, at most 2 requests a second) finds every change of `instanceType`, the bot's own included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from rightsizer.adapters.aws.session import read_source
from rightsizer.domain.models.usage import Resize

_EVENT = "ModifyInstanceAttribute"


def _new_type(parameters: Mapping[str, Any]) -> str | None:
    """The type a ModifyInstanceAttribute request set, in either of the API's forms: `InstanceType.Value`, or
    `Attribute=instanceType` with `Value`."""
    value = parameters.get("instanceType")
    if isinstance(value, Mapping):
        found = value.get("value")
        return str(found) if found else None
    if parameters.get("attribute") == "instanceType" and parameters.get("value"):
        return str(parameters["value"])
    return None


def parse_event(event: Mapping[str, Any]) -> tuple[str, Resize] | None:
    """(instance id, the resize) from one LookupEvents entry; None for other attributes, refused calls or entries
    that cannot be read."""
    try:
        detail = json.loads(str(event.get("CloudTrailEvent") or "{}"))
    except ValueError:
        return None
    if not isinstance(detail, dict) or detail.get("errorCode"):
        return None  # a refused call changed nothing
    parameters = detail.get("requestParameters")
    if not isinstance(parameters, dict):
        return None
    instance_id, new_type, at = parameters.get("instanceId"), _new_type(parameters), event.get("EventTime")
    if not isinstance(instance_id, str) or new_type is None or not isinstance(at, datetime):
        return None
    return instance_id, Resize(at=at, instance_type=new_type)


class CloudTrailResizes:
    """Implements the ResizeHistory port with a boto3 'cloudtrail' client of the region."""

    def __init__(self, client: Any, region: str) -> None:
        self._client = client
        self._region = region

    def resizes(self, start: datetime, end: datetime) -> dict[str, Resize]:
        """The last instance-type change of each instance between `start` and `end`."""

        def read() -> dict[str, Resize]:
            latest: dict[str, Resize] = {}
            for event in self._events(start, end):
                found = parse_event(event)
                if found is not None and (found[0] not in latest or found[1].at > latest[found[0]].at):
                    latest[found[0]] = found[1]
            return latest

        return read_source("CloudTrail LookupEvents", self._region, read)

    def _events(self, start: datetime, end: datetime) -> Iterator[Mapping[str, Any]]:
        paginator = self._client.get_paginator("lookup_events")
        pages = paginator.paginate(
            LookupAttributes=[{"AttributeKey": "EventName", "AttributeValue": _EVENT}], StartTime=start, EndTime=end
        )
        for page in pages:
            yield from page.get("Events", [])
