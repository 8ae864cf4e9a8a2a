"""Resizes EC2 recorded (CloudTrail LookupEvents), against botocore's Stubber in the API's shapes (moto has no
LookupEvents), and what a recorded resize does to the summary and the advice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from demo.fleet import Gpu, noisy

from rightsizer.adapters.aws.cloudtrail import CloudTrailResizes, parse_event
from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.models import Finding
from rightsizer.domain.models.usage import Resize
from rightsizer.domain.policy import Policy
from rightsizer.domain.summaries import summarize_one
from rightsizer.services.ports import ResizeHistory, SourceUnavailable
from tests.factories import NOW, instance
from tests.unit import catalog_fixture as fx
from tests.unit.shapes import Workload, raw_usage

START, END = NOW - timedelta(days=14), NOW
LOOKUP = {
    "LookupAttributes": [{"AttributeKey": "EventName", "AttributeValue": "ModifyInstanceAttribute"}],
    "StartTime": START,
    "EndTime": END,
}


def event(instance_id: str, at: datetime, parameters: dict[str, Any], error: str | None = None) -> dict[str, Any]:
    detail: dict[str, Any] = {"eventName": "ModifyInstanceAttribute", "requestParameters": parameters}
    if error:
        detail["errorCode"] = error
    return {"EventId": f"e-{instance_id}-{at:%H%M}", "EventName": "ModifyInstanceAttribute", "EventTime": at,
            "CloudTrailEvent": json.dumps(detail)}  # fmt: skip


@pytest.fixture
def client() -> Iterator[tuple[Any, Stubber]]:
    cloudtrail = boto3.client("cloudtrail", region_name="us-east-1")
    with Stubber(cloudtrail) as stub:
        yield cloudtrail, stub
        stub.assert_no_pending_responses()


def test_the_last_type_change_of_each_instance_is_read_in_either_request_form(client: tuple[Any, Stubber]) -> None:
    cloudtrail, stub = client
    early, late = NOW - timedelta(days=6), NOW - timedelta(days=5)
    stub.add_response(
        "lookup_events",
        {
            "Events": [
                event("i-a", late, {"instanceId": "i-a", "instanceType": {"value": "g5.4xlarge"}}),
                event("i-a", early, {"instanceId": "i-a", "instanceType": {"value": "g5.2xlarge"}}),
                event("i-b", early, {"instanceId": "i-b", "attribute": "instanceType", "value": "g6.xlarge"}),
                event(
                    "i-c", late, {"instanceId": "i-c", "disableApiTermination": {"value": True}}
                ),  # another attribute
                event("i-d", late, {"instanceId": "i-d", "instanceType": {"value": "p5.48xlarge"}}, "IncorrectState"),
            ],
            "NextToken": "page-2",
        },
        LOOKUP,
    )
    stub.add_response("lookup_events", {"Events": [{"EventTime": late, "CloudTrailEvent": "not json"}]},
                      {**LOOKUP, "NextToken": "page-2"})  # fmt: skip
    source: ResizeHistory = CloudTrailResizes(cloudtrail, "us-east-1")

    found = source.resizes(START, END)

    assert found == {"i-a": Resize(late, "g5.4xlarge"), "i-b": Resize(early, "g6.xlarge")}


def test_a_source_that_cannot_be_read_says_so(client: tuple[Any, Stubber]) -> None:
    cloudtrail, stub = client
    stub.add_client_error("lookup_events", "AccessDeniedException", "not authorized to perform cloudtrail:LookupEvents")

    with pytest.raises(SourceUnavailable, match="CloudTrail LookupEvents"):
        CloudTrailResizes(cloudtrail, "us-east-1").resizes(START, END)


def test_entries_that_cannot_be_read_are_skipped() -> None:
    assert parse_event({"EventTime": NOW, "CloudTrailEvent": "[1, 2]"}) is None
    assert parse_event({"CloudTrailEvent": json.dumps({"requestParameters": {"instanceId": "i-a"}})}) is None


def test_a_recorded_resize_cuts_every_series_even_without_the_agent_dimension() -> None:
    # The agent publishes no InstanceType dimension here: only CloudTrail knows the host was a g5.2xlarge (8 vCPUs,
    # CPU pinned) until five days ago.
    resized = (NOW - timedelta(days=5)).replace(minute=20)
    work = Workload(
        gpus=(Gpu(noisy(45, 5), noisy(10 * 1024, 100)),),
        cpu=lambda t, r: r.gauss(97, 1) if t < resized else r.gauss(45, 3),
    )
    raw = raw_usage(work)
    summary = summarize_one(replace(raw, resized_at=resized))

    assert summary.type_change is not None and summary.type_change.source == "CloudTrail's ModifyInstanceAttribute"
    assert summary.window_start == (resized + timedelta(hours=1)).replace(minute=0, tzinfo=UTC)
    rec = analyze_instance(instance("g5.4xlarge"), summary, fx.catalog(), fx.prices(), Policy(), NOW)
    assert rec.finding is not Finding.NOT_GPU_BOUND and rec.actionable is False
    assert any(reason.startswith("resized to g5.4xlarge by") for reason in rec.reasons)


def test_the_resizes_the_plan_read_reach_the_shards_through_the_store(moto_aws: None) -> None:
    # The plan reads CloudTrail once per region and stores the region's context; every shard reads that context
    # back to cut its hosts' series. A context stored without its resizes would judge old hardware's load.
    from rightsizer.adapters.aws.store import DynamoStore
    from rightsizer.services.collect import RegionContext
    from rightsizer.services.ports import Window

    table = boto3.resource("dynamodb", region_name="us-east-1").create_table(
        TableName="rightsizer",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in ("PK", "SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    )
    store = DynamoStore(table)
    resize = Resize(at=NOW - timedelta(days=5), instance_type="g5.4xlarge")
    context = RegionContext(
        account_id="111122223333",
        region="us-east-1",
        collected_at=NOW,
        window=Window(NOW - timedelta(days=14), NOW),
        catalog=fx.catalog(),
        prices=fx.prices(),
        resizes={"i-0resized": resize},
    )
    host = instance("g5.4xlarge")
    store.put_region("run-1", context, [(host,)])

    planned = store.region("run-1", "111122223333", "us-east-1")
    assert planned is not None
    assert planned[0].resizes == {"i-0resized": resize}


def test_an_endpoint_without_lookup_events_is_a_source_that_cannot_be_read(moto_aws: None) -> None:
    # In-process moto has no LookupEvents: it raises NotImplementedError inside the call, which must not abort
    # the region's collection (an unreadable trail is a warning).
    resizes = CloudTrailResizes(boto3.client("cloudtrail", region_name="us-east-1"), "us-east-1")
    unavailable = "CloudTrail LookupEvents: not implemented by the endpoint in us-east-1"
    with pytest.raises(SourceUnavailable, match=unavailable):
        resizes.resizes(NOW - timedelta(days=14), NOW)
