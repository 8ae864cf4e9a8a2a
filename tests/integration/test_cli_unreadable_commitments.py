"""`rightsizer analyze` against an endpoint whose EC2 commitments APIs answer 500 with an HTML page (moto's server,
LocalStack, a proxy): the report is printed (exit 0), each unreadable source is one warning, and savings stay at
list price. In-process moto with the demo's hosts; the two EC2 calls get the error page botocore really parses."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from demo.fleet import Host, fleet

from tests.integration.test_cli import CLOSED_PORT, Run, run, seeded_moto

pytestmark = pytest.mark.integration

ERROR_PAGE = b"<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n"
UNREAD = ("DescribeReservedInstances", "DescribeCapacityReservations")
HOSTS = ("vllm-idle", "idle-p3")  # the vLLM host runs in an ODCR: $0 net when the reservation is read


def _error_page(request: Any, **kwargs: Any) -> Any:
    from botocore.awsrequest import AWSResponse, HTTPHeaders
    from moto.core.botocore_stubber import MockRawResponse

    headers = HTTPHeaders.from_dict({"Content-Type": "text/html"})
    return AWSResponse(request.url, 500, headers, MockRawResponse(ERROR_PAGE))


@pytest.fixture(scope="module")
def hosts() -> Iterator[dict[str, Host]]:
    by_key = {host.key: host for host in fleet()}
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    with seeded_moto(end, days=4, hosts=[by_key[key] for key in HOSTS]) as seeded:
        yield seeded


def analyze(monkeypatch: pytest.MonkeyPatch, hook: Callable[..., Any] | None) -> Run:
    from botocore.handlers import BUILTIN_HANDLERS

    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", CLOSED_PORT)  # moto has no Price List API
    monkeypatch.setattr("botocore.retries.standard.ExponentialBackoff.delay_amount", lambda self, context: 0.0)
    # More specific than moto's "before-send": asked first, for every session created meanwhile (the CLI's).
    hooks = [(f"before-send.ec2.{operation}", hook) for operation in UNREAD] if hook else []
    BUILTIN_HANDLERS.extend(hooks)
    try:
        return run(
            "analyze", "--region", "us-east-1", "--lookback-days", "4", "--prices", "snapshot", "--format", "json"
        )
    finally:
        for item in hooks:
            BUILTIN_HANDLERS.remove(item)


def by_name(result: Run, hosts: dict[str, Host]) -> dict[str, dict[str, Any]]:
    document = json.loads(result.out)
    return {hosts[row["instance_id"]].key: row for row in document["recommendations"]}


def test_commitments_that_answer_500_are_warnings_and_savings_stay_at_list_price(
    hosts: dict[str, Host], monkeypatch: pytest.MonkeyPatch
) -> None:
    read = analyze(monkeypatch, None)
    unread = analyze(monkeypatch, _error_page)

    assert read.code == 0, read.err
    assert by_name(read, hosts)["vllm-idle"]["monthly_savings_net_usd"] == 0  # the ODCR is billed anyway

    assert unread.code == 0, unread.err
    assert "Traceback" not in unread.err and unread.error_lines == []
    rows = by_name(unread, hosts)
    assert set(rows) == set(HOSTS)
    for row in rows.values():
        assert row["monthly_savings_net_usd"] == row["monthly_savings_usd"]  # nothing read: list price
    assert rows["vllm-idle"]["monthly_savings_usd"] > 0
    warnings = [line for line in unread.err.splitlines() if line.startswith("rightsizer: warning: ")]
    for what in ("Reserved Instances", "capacity reservations"):
        (line,) = [w for w in warnings if w.startswith(f"rightsizer: warning: us-east-1: {what} could not be read")]
        assert "is not an AWS response" in line and line.endswith("savings they cover are shown at list price")
    document = json.loads(unread.out)
    assert sum("could not be read" in w and "is not an AWS response" in w for w in document["warnings"]) == 2
