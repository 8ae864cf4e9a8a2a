"""AWS faults in front of moto: what a real endpoint answers when it is throttled, denied, broken or half-done.

Each fault is a botocore `before-send` hook for one operation, asked before moto's own (the more specific event
name is asked first). It answers as the service's endpoint would, in the service's protocol (JSON, EC2's or
Query's XML), so botocore parses, retries and raises exactly as it does against AWS: a throttle is retried with
backoff (`no_backoff` makes that instant), AccessDenied is not. A connection error is a closed port on
127.0.0.1 (`closed_port`). A partial batch write lands some items in moto and answers the others as
`UnprocessedItems`, as DynamoDB does under load.

Hooks are added to botocore's BUILTIN_HANDLERS, which every botocore session created while they are installed
takes: arm faults before the code under test builds its clients (the Lambda wiring is rebuilt per test).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.compat import HTTPHeaders

CLOSED_PORT = "http://127.0.0.1:9"  # nothing listens there: every request is refused at once

# What each fault answers, as AWS names it.
THROTTLED = ("ThrottlingException", 400)
ACCESS_DENIED = ("AccessDeniedException", 400)
EC2_THROTTLED = ("RequestLimitExceeded", 503)
EC2_DENIED = ("UnauthorizedOperation", 403)
EC2_UNAVAILABLE = ("Unavailable", 503)
SERVER_ERROR = ("InternalFailure", 500)
UNAVAILABLE = ("ServiceUnavailable", 503)


@cache
def _protocol(service: str) -> str:
    import botocore.session

    return str(botocore.session.get_session().get_service_model(service).protocol)


def _body(service: str, code: str, message: str) -> tuple[dict[str, str], bytes]:
    protocol = _protocol(service)
    if protocol == "json":
        return {"Content-Type": "application/x-amz-json-1.1"}, json.dumps({"__type": code, "message": message}).encode()
    if protocol == "rest-json":
        return {"Content-Type": "application/json", "x-amzn-ErrorType": code}, json.dumps({"message": message}).encode()
    if protocol == "ec2":
        text = f"<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error></Errors>"
        return {"Content-Type": "text/xml"}, f"{text}<RequestID>fault</RequestID></Response>".encode()
    if protocol in ("query", "rest-xml"):
        text = f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}</Message></Error>"
        return {"Content-Type": "text/xml"}, f"{text}<RequestId>fault</RequestId></ErrorResponse>".encode()
    raise NotImplementedError(f"no error body for {service}'s {protocol} protocol")


def error_response(request: AWSPreparedRequest, service: str, code: str, status: int, message: str = "") -> AWSResponse:
    """What `service`'s endpoint answers with `code`: the raw HTTP response botocore parses."""
    from moto.core.botocore_stubber import MockRawResponse

    headers, body = _body(service, code, message or f"{code} (an injected fault)")
    return AWSResponse(
        request.url, status, HTTPHeaders.from_dict({**headers, "x-amzn-RequestId": "fault"}), MockRawResponse(body)
    )


class Cut(Exception):
    """The invocation ends here, as a Lambda that times out mid-call does: nothing after it runs."""


Hook = Callable[..., Any]
Item = Callable[[dict[str, Any]], bool]  # a DynamoDB item as the wire has it: {"PK": {"S": ...}, ...}


@dataclass
class Faults:
    """The faults armed in one test; `seen[operation]` counts the requests each fault met."""

    hooks: list[tuple[str, Hook]] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)

    def error(
        self, service: str, operation: str, answer: tuple[str, int], *, times: int | None = None, message: str = ""
    ) -> None:
        """Answer `operation` of `service` with the error `answer` ((code, HTTP status)); `times`: only the first
        so many requests (None: every one)."""
        code, status = answer
        left = [times]

        def hook(request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
            if left[0] is not None:
                if left[0] <= 0:
                    return None
                left[0] -= 1
            self._count(operation)
            return error_response(request, service, code, status, message)

        self._add(f"before-send.{service}.{operation}", hook)

    def partial_batch_then_cut(self, first: Item, lands: Item) -> None:
        """The first BatchWriteItem that puts an item `first` accepts: only its items `lands` accepts reach the table,
        the others come back in `UnprocessedItems` (DynamoDB may leave any part of a batch unprocessed); the next
        BatchWriteItem, boto3's resend of them, is cut (`Cut`): the function timed out before they were written."""
        state = {"partial": False, "cut": False}

        def hook(request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
            if state["cut"]:
                return None
            if state["partial"]:
                state["cut"] = True
                self._count("BatchWriteItem")
                raise Cut("the invocation timed out while DynamoDB's unprocessed items were being written again")
            body = json.loads(bytes(request.body or b"{}"))  # type: ignore[arg-type]  # a bytes body, as sent
            (table, writes), *_others = body["RequestItems"].items()
            puts = [w["PutRequest"]["Item"] for w in writes if "PutRequest" in w]
            if not any(first(item) for item in puts):
                return None
            landing = [w for w in writes if "PutRequest" in w and lands(w["PutRequest"]["Item"])]
            state["partial"] = True
            if not landing:  # nothing of it lands: the cut comes at once
                return hook(request)
            self._count("BatchWriteItem")
            # moto's hook, asked after this one (every hook is asked), writes what the request then holds; the
            # first answer, this one, is what the client reads.
            request.body = json.dumps({**body, "RequestItems": {table: landing}}).encode()
            unprocessed = [w for w in writes if w not in landing]
            return AWSResponse(
                request.url,
                200,
                HTTPHeaders.from_dict({"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "fault"}),
                _raw(json.dumps({"UnprocessedItems": {table: unprocessed}}).encode()),
            )

        self._add("before-send.dynamodb.BatchWriteItem", hook)

    def metric_data_status(self, instance_id: str, metric_name: str, status: str = "InternalError") -> None:
        """GetMetricData answers the queries of `metric_name` about `instance_id` with `status` and no values, as
        CloudWatch answers a query it could not complete, and the rest of the call as moto does. CloudWatch speaks
        CBOR: the answer is changed once parsed (`after-call`), the queries are picked from the request
        (`provide-client-params`)."""

        def about(query: dict[str, Any]) -> bool:
            metric = query.get("MetricStat", {}).get("Metric", {})
            dimensions = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
            return metric.get("MetricName") == metric_name and dimensions.get("InstanceId") == instance_id

        def pick(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
            context["faulted"] = {query["Id"] for query in params.get("MetricDataQueries", []) if about(query)}

        def change(parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
            for result in parsed.get("MetricDataResults", []):
                if result.get("Id") in context.get("faulted", ()):
                    result.update(StatusCode=status, Timestamps=[], Values=[])
                    self._count("GetMetricData")

        self._add("provide-client-params.cloudwatch.GetMetricData", pick)
        self._add("after-call.cloudwatch.GetMetricData", change)

    def _count(self, operation: str) -> None:
        self.seen[operation] = self.seen.get(operation, 0) + 1

    def _add(self, event: str, hook: Hook) -> None:
        from botocore.handlers import BUILTIN_HANDLERS

        self.hooks.append((event, hook))
        BUILTIN_HANDLERS.append((event, hook))

    def clear(self) -> None:
        from botocore.handlers import BUILTIN_HANDLERS

        for item in self.hooks:
            BUILTIN_HANDLERS.remove(item)
        self.hooks.clear()


def _raw(body: bytes) -> Any:
    from moto.core.botocore_stubber import MockRawResponse

    return MockRawResponse(body)


@contextmanager
def injected() -> Iterator[Faults]:
    """Faults armed for the sessions created inside the block; all removed after it."""
    faults = Faults()
    try:
        yield faults
    finally:
        faults.clear()


def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore retries at once: standard mode's exponential backoff and adaptive mode's rate limiter wait 0 s."""
    monkeypatch.setattr("botocore.retries.standard.ExponentialBackoff.delay_amount", lambda self, context: 0.0)
    monkeypatch.setattr("botocore.retries.bucket.TokenBucket._sleep_amount", lambda self, amount: 0.0)
