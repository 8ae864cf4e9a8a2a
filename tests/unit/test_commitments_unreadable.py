"""An optional commitments source that cannot be read is a warning, however it fails: a real HTTP server on loopback
answering 500 with an HTML page (what moto's server, LocalStack or a proxy send for an API they lack: botocore's
ResponseParserError, which is no BotoCoreError), in-process moto's NotImplementedError, an answer without the fields
the API documents. Savings then stay at list price."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import boto3
import pytest
from botocore.parsers import ResponseParserError
from botocore.stub import Stubber

from rightsizer.adapters.aws.commitments import Ec2Commitments
from rightsizer.adapters.aws.session import CLI_MAX_ATTEMPTS, describe_aws_error, interactive_config
from rightsizer.services.collect import read_commitments
from rightsizer.services.ports import SourceUnavailable

REGION = "us-east-1"
ERROR_PAGE = (
    b"<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n<h1>Internal Server Error</h1>\n"
)


class Failing:
    """An HTTP server on 127.0.0.1 that answers every request 500 with an HTML page, counting the requests."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        calls = self.calls

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                action = parse_qs(body).get("Action", [self.path.strip("/")])[0]
                calls[action] += 1
                self.send_response(500)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(ERROR_PAGE)))
                self.end_headers()
                self.wfile.write(ERROR_PAGE)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> Iterator[Failing]:
    monkeypatch.setattr("botocore.retries.standard.ExponentialBackoff.delay_amount", lambda self, context: 0.0)
    endpoint = Failing()
    thread = threading.Thread(target=endpoint.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        endpoint.server.shutdown()
        endpoint.server.server_close()
        thread.join()


def client(service: str, url: str) -> Any:
    factory: Any = boto3.client  # typed per service literal
    return factory(service, region_name=REGION, endpoint_url=url, config=interactive_config())


def test_a_500_page_is_a_parser_error_botocore_does_not_count_as_its_own(failing: Failing) -> None:
    with pytest.raises(ResponseParserError) as raised:
        client("ec2", failing.url).describe_reserved_instances()

    assert not isinstance(raised.value, SourceUnavailable)
    assert describe_aws_error(raised.value, REGION) == (
        "the answer from AWS in us-east-1 is not an AWS response (Unable to parse response (syntax error: line 1, "
        "column 0), invalid XML received): an endpoint or proxy without this API?"
    )


def test_an_endpoint_answering_500_is_a_warning_after_the_retries_and_savings_stay_at_list_price(
    failing: Failing,
) -> None:
    source = Ec2Commitments(client("ec2", failing.url), client("savingsplans", failing.url), REGION)

    commitments, warnings = read_commitments(source, ["g5.xlarge"])

    assert (commitments.reserved_instances, commitments.capacity_reservations, commitments.savings_plans) == (
        (),
        (),
        (),
    )
    assert [warning.split(" could not be read", 1)[0] for warning in warnings] == [
        "Reserved Instances",
        "capacity reservations",
        "Savings Plans",
    ]
    for warning in warnings:
        assert "\n" not in warning and warning.endswith("savings they cover are shown at list price")
    assert "is not an AWS response" in warnings[0] and "is not an AWS response" in warnings[1]
    assert "DescribeSavingsPlans failed in us-east-1: 500: <!doctype html> <html lang=en>" in warnings[2]
    # A 500 that parses is retried before it becomes a warning; botocore does not retry a page it cannot parse.
    assert failing.calls["DescribeSavingsPlans"] == CLI_MAX_ATTEMPTS
    assert failing.calls["DescribeReservedInstances"] >= 1 and failing.calls["DescribeCapacityReservations"] >= 1


def test_in_process_moto_without_the_apis_is_a_warning() -> None:
    from moto import mock_aws

    with mock_aws():
        ec2 = boto3.client("ec2", region_name=REGION)
        source = Ec2Commitments(ec2, boto3.client("savingsplans", region_name=REGION), REGION)
        with pytest.raises(SourceUnavailable, match="not implemented by the endpoint in us-east-1"):
            source.reserved_instances()

        _, warnings = read_commitments(source, ["g5.xlarge"])

    assert len(warnings) == 3
    assert "not implemented" in warnings[0] and "not implemented" in warnings[1]


def test_an_answer_without_the_documented_fields_is_a_warning() -> None:
    ec2 = boto3.client("ec2", region_name=REGION)
    plans = boto3.client("savingsplans", region_name=REGION)
    with Stubber(ec2) as stub:
        stub.add_response("describe_reserved_instances", {"ReservedInstances": [{"InstanceType": "g5.xlarge"}]})
        with pytest.raises(SourceUnavailable, match=r"Reserved Instances: unreadable answer in us-east-1 \(KeyError"):
            Ec2Commitments(ec2, plans, REGION).reserved_instances()
