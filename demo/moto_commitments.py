"""Reserved Instances, capacity reservations, Savings Plans and CloudTrail's record of resizes for moto, which does not
implement them.

moto 5.2.5 raises NotImplementedError for DescribeReservedInstances and CloudTrail's LookupEvents, has no
DescribeCapacityReservations and no Savings Plans service at all. This module answers those calls from a small
in-memory table, in the response shapes of the AWS APIs, so that the demo and the pipeline tests exercise the
product's real adapters (`adapters/aws/commitments.py`, `adapters/aws/cloudtrail.py`): the EC2 and CloudTrail calls
inside moto (in-process or its server), the Savings Plans calls in botocore before they are sent (moto would answer
404). LookupEvents answers the `ModifyInstanceAttribute` calls that changed an instance's type in moto's EC2 (the
resize workflow's own included) and those added with `add_resize`, as CloudTrail's event history records them. Like
`fast_cloudwatch`, it is demo code standing in for what the emulator lacks; nothing in `src/` knows about it. An
account without entries has no commitments, as a new one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

_RESERVED: dict[tuple[str, str], list[dict[str, Any]]] = {}
_CAPACITY: dict[tuple[str, str], list[dict[str, Any]]] = {}
_PLANS: list[dict[str, Any]] = []  # Savings Plans are an account's, answered to whoever asks (one account here)
_RATES: dict[str, list[dict[str, Any]]] = {}
_RESIZES: dict[tuple[str, str], list[dict[str, Any]]] = {}  # CloudTrail events of ModifyInstanceAttribute


def add_reserved_instances(
    account_id: str,
    region: str,
    reservation_id: str,
    instance_type: str,
    count: int,
    end: datetime,
    availability_zone: str | None = None,
) -> None:
    """An active Linux RI: regional (size-flexible) unless a zone is given."""
    item: dict[str, Any] = {
        "ReservedInstancesId": reservation_id,
        "InstanceType": instance_type,
        "InstanceCount": count,
        "State": "active",
        "Scope": "Availability Zone" if availability_zone else "Region",
        "ProductDescription": "Linux/UNIX",
        "InstanceTenancy": "default",
        "OfferingClass": "standard",
        "OfferingType": "No Upfront",
        "End": end,
    }
    if availability_zone:
        item["AvailabilityZone"] = availability_zone
    _RESERVED.setdefault((account_id, region), []).append(item)


def add_capacity_reservation(
    account_id: str,
    region: str,
    reservation_id: str,
    instance_type: str,
    availability_zone: str,
    total: int,
    available: int,
    end: datetime | None = None,
    capacity_block: bool = False,
) -> None:
    """An active On-Demand Capacity Reservation (open matching) or Capacity Block."""
    item: dict[str, Any] = {
        "CapacityReservationId": reservation_id,
        "InstanceType": instance_type,
        "InstancePlatform": "Linux/UNIX",
        "AvailabilityZone": availability_zone,
        "Tenancy": "default",
        "TotalInstanceCount": total,
        "AvailableInstanceCount": available,
        "State": "active",
        "InstanceMatchCriteria": "targeted" if capacity_block else "open",
        "ReservationType": "capacity-block" if capacity_block else "default",
        "EndDateType": "limited" if end else "unlimited",
    }
    if end is not None:
        item["EndDate"] = end
    _CAPACITY.setdefault((account_id, region), []).append(item)


def add_savings_plan(plan_id: str, hourly_commitment: str, rates: Mapping[tuple[str, str], str]) -> None:
    """An active Compute Savings Plan with its rates: (region, instance type) -> USD per hour."""
    _PLANS.append(
        {"savingsPlanId": plan_id, "savingsPlanType": "Compute", "commitment": hourly_commitment, "state": "active"}
    )
    _RATES[plan_id] = [
        {
            "rate": rate,
            "currency": "USD",
            "unit": "Hrs",
            "productType": "EC2",
            "usageType": f"BoxUsage:{instance_type}",
            "properties": [{"name": "instanceType", "value": instance_type}, {"name": "region", "value": region}],
        }
        for (region, instance_type), rate in rates.items()
    ]


def add_resize(account_id: str, region: str, instance_id: str, instance_type: str, at: datetime) -> None:
    """A ModifyInstanceAttribute call that set `instance_type`, as CloudTrail's event history lists it."""
    detail = {
        "eventVersion": "1.09",
        "eventSource": "ec2.amazonaws.com",
        "eventName": "ModifyInstanceAttribute",
        "awsRegion": region,
        "requestParameters": {"instanceId": instance_id, "instanceType": {"value": instance_type}},
        "responseElements": {"_return": True},
    }
    _RESIZES.setdefault((account_id, region), []).append(
        {
            "EventId": f"{instance_id}-{int(at.timestamp())}",
            "EventName": "ModifyInstanceAttribute",
            "EventTime": at.timestamp(),
            "EventSource": "ec2.amazonaws.com",
            "Resources": [{"ResourceType": "AWS::EC2::Instance", "ResourceName": instance_id}],
            "CloudTrailEvent": json.dumps(detail),
        }
    )


def clear() -> None:
    _RESERVED.clear()
    _CAPACITY.clear()
    _PLANS.clear()
    _RATES.clear()
    _RESIZES.clear()


def _active(items: list[dict[str, Any]], filters: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    states = filters.get("state")
    return [item for item in items if not states or item["State"] in states]


def _describe_reserved_instances(self: Any) -> Any:
    from moto.core.responses import ActionResult

    found = _active(_RESERVED.get((self.current_account, self.region), []), self._filters_from_querystring())
    return ActionResult({"ReservedInstances": found})


def _describe_capacity_reservations(self: Any) -> Any:
    from moto.core.responses import ActionResult

    found = _active(_CAPACITY.get((self.current_account, self.region), []), self._filters_from_querystring())
    return ActionResult({"CapacityReservations": found})


def _lookup_events(self: Any) -> str:
    """CloudTrail's LookupEvents for the events recorded here, newest first, within StartTime..EndTime."""
    start, end = self._get_param("StartTime"), self._get_param("EndTime")
    events = [
        event
        for event in _RESIZES.get((self.current_account, self.region), [])
        if (start is None or event["EventTime"] >= float(start)) and (end is None or event["EventTime"] <= float(end))
    ]
    return json.dumps({"Events": sorted(events, key=lambda event: -float(event["EventTime"]))})


def _recording_modify(modify: Callable[..., Any]) -> Callable[..., Any]:
    """moto's ModifyInstanceAttribute, recorded for LookupEvents when it changes the instance type."""

    def recorded(self: Any, instance_id: str, key: str, value: Any) -> Any:
        instance = modify(self, instance_id, key, value)
        if key == "instance_type":
            add_resize(self.account_id, self.region_name, instance_id, str(value), datetime.now(UTC))
        return instance

    return recorded


def _answer(operation: str, body: bytes | str | None) -> dict[str, Any] | None:
    """The Savings Plans API's answer to `operation` (None: an operation this stand-in does not know)."""
    if operation == "DescribeSavingsPlans":
        return {"savingsPlans": list(_PLANS)}
    if operation == "DescribeSavingsPlanRates":
        plan_id = str(json.loads(body or b"{}").get("savingsPlanId", ""))
        return {"savingsPlanId": plan_id, "searchResults": _RATES.get(plan_id, [])}
    return None


def _savings_plans(request: Any, event_name: str, **kwargs: Any) -> Any:
    """botocore's before-send hook (in-process moto): answer before moto's catch-all 404."""
    from botocore.awsrequest import AWSResponse
    from moto.core.botocore_stubber import MockRawResponse

    answer = _answer(event_name.rsplit(".", 1)[-1], request.body)
    if answer is None:
        return None
    return AWSResponse(request.url, 200, {"Content-Type": "application/json"}, MockRawResponse(json.dumps(answer)))


_HOOK = ("before-send.savingsplans", _savings_plans)
_SIGNED_FOR = re.compile(r"Credential=[^/]+/\d{8}/[a-z0-9-]+/([a-z0-9-]+)/")


def _served(call: Callable[..., Any]) -> Callable[..., Any]:
    """moto's WSGI app, answering Savings Plans requests (told apart by their SigV4 scope) itself."""

    def serve(self: Any, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        signed = _SIGNED_FOR.search(environ.get("HTTP_AUTHORIZATION", ""))
        if not signed or signed.group(1) != "savingsplans":
            return call(self, environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        answer = _answer(str(environ.get("PATH_INFO", "")).strip("/"), body)
        status = "200 OK" if answer is not None else "404 Not Found"
        payload = json.dumps(answer if answer is not None else {"message": "not in the demo"}).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
        return [payload]

    return serve


@contextmanager
def installed() -> Iterator[None]:
    """Answer the calls while inside: in-process moto (for Savings Plans: boto3 sessions created inside) and moto's
    threaded server, whoever its client is."""
    from botocore.handlers import BUILTIN_HANDLERS
    from moto.cloudtrail.responses import CloudTrailResponse
    from moto.ec2.models.instances import InstanceBackend
    from moto.ec2.responses import EC2Response
    from moto.ec2.responses.reserved_instances import ReservedInstances
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    modify = InstanceBackend.modify_instance_attribute
    InstanceBackend.modify_instance_attribute = _recording_modify(modify)  # type: ignore[method-assign]
    CloudTrailResponse.lookup_events = _lookup_events  # type: ignore[attr-defined]
    dispatch = DomainDispatcherApplication.__call__
    DomainDispatcherApplication.__call__ = _served(dispatch)  # type: ignore[method-assign]
    original = ReservedInstances.describe_reserved_instances
    ReservedInstances.describe_reserved_instances = _describe_reserved_instances  # type: ignore[method-assign]
    EC2Response.describe_capacity_reservations = _describe_capacity_reservations  # type: ignore[attr-defined]
    BUILTIN_HANDLERS.append(_HOOK)  # more specific than moto's "before-send": asked first
    import boto3

    boto3.DEFAULT_SESSION = None  # the default session was built with the handlers of its time
    try:
        yield
    finally:
        BUILTIN_HANDLERS.remove(_HOOK)
        boto3.DEFAULT_SESSION = None
        DomainDispatcherApplication.__call__ = dispatch  # type: ignore[method-assign]
        ReservedInstances.describe_reserved_instances = original  # type: ignore[method-assign]
        del EC2Response.describe_capacity_reservations  # type: ignore[attr-defined]
        del CloudTrailResponse.lookup_events  # type: ignore[attr-defined]
        InstanceBackend.modify_instance_attribute = modify  # type: ignore[method-assign]
        clear()
