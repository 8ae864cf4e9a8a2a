"""`rightsizer analyze` end to end, in-process: moto behind boto3, the demo's seeded hosts, the real CLI.

Errors must be one line on stderr ("rightsizer: error: ..."), a non-zero exit and no traceback.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from botocore.config import Config
from demo import fast_cloudwatch, moto_commitments
from demo.fleet import Host, fleet
from demo.seed import seed

from rightsizer.adapters.aws import session as aws_session
from rightsizer.cli import main as cli_main
from rightsizer.cli.output.table import render_table
from tests.factories import PROMISED_RECOMMENDATION_KEYS

pytestmark = pytest.mark.integration

CLOSED_PORT = "http://127.0.0.1:9"  # nothing listens on the discard port: connections are refused at once
SMALL_FLEET = ("idle-p3", "one-of-four", "no-agent", "spot-batch")
TOP_LEVEL_KEYS = {"generated_at", "lookback_days", "recommendations", "totals", "warnings"}
RECOMMENDATION_KEYS = PROMISED_RECOMMENDATION_KEYS
TOTALS_KEYS = {
    "instances",
    "monthly_cost_usd",
    "monthly_savings_usd",
    "actionable_savings_usd",
    "additional_cost_usd",
    "unpriced_instances",
    "by_finding",
}


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("rightsizer: error:")]


def run(*args: str) -> Run:
    out, err = StringIO(), StringIO()
    code = cli_main.main(list(args), stdout=out, stderr=err)
    return Run(code, out.getvalue(), err.getvalue())


def assert_one_line_error(result: Run, code: int, *fragments: str) -> None:
    assert result.code == code, result.err
    assert result.out == ""
    assert "Traceback" not in result.err
    assert len(result.err.splitlines()) == 1, result.err
    (line,) = result.error_lines
    for fragment in fragments:
        assert fragment in line, line


@contextmanager
def utc_local_time() -> Iterator[None]:
    """moto answers with naive timestamps, which botocore reads as local time: make local time UTC."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


@contextmanager
def seeded_moto(end: datetime, days: int, hosts: list[Host] | None = None) -> Iterator[dict[str, Host]]:
    """mock_aws with the indexed CloudWatch patch and the demo hosts seeded; yields instance id -> host."""
    from moto import mock_aws

    with utc_local_time(), mock_aws(), moto_commitments.installed():
        fast_cloudwatch.install(list_once=True)
        try:
            yield {item.instance_id: item.host for item in seed(end, days=days, hosts=hosts)}
        finally:
            fast_cloudwatch.uninstall()


def fast_retries(monkeypatch: pytest.MonkeyPatch, retries: int) -> None:
    """The product's client config with fewer retries and no back-off sleeps between them.

    A client Config's `max_attempts` counts retries (botocore sends max_attempts + 1 requests).
    """
    config = aws_session.STANDARD_CONFIG.merge(Config(retries={"max_attempts": retries, "mode": "standard"}))
    monkeypatch.setattr(aws_session, "STANDARD_CONFIG", config)
    monkeypatch.setattr("botocore.retries.standard.ExponentialBackoff.delay_amount", lambda self, context: 0.0)


# 1. A small seeded fleet ---------------------------------------------------------------------------------


class TestSmallFleet:
    @pytest.fixture(scope="class")
    @classmethod
    def hosts(cls) -> Iterator[dict[str, Host]]:
        by_key = {host.key: host for host in fleet()}
        end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        with seeded_moto(end, days=4, hosts=[by_key[key] for key in SMALL_FLEET]) as seeded:
            yield seeded

    def analyze(self, monkeypatch: pytest.MonkeyPatch, *args: str) -> Run:
        monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", CLOSED_PORT)  # moto has no Price List API
        return run("analyze", "--region", "us-east-1", "--lookback-days", "4", *args)

    def test_json_in_auto_mode_falls_back_to_the_snapshot_and_finds_what_each_host_deserves(
        self, hosts: dict[str, Host], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        result = self.analyze(monkeypatch, "--format", "json")

        assert result.code == 0, result.err
        assert result.error_lines == []
        assert "Traceback" not in result.err
        document = json.loads(result.out)
        assert set(document) >= TOP_LEVEL_KEYS
        assert set(document["totals"]) >= TOTALS_KEYS
        assert document["lookback_days"] == 4
        assert datetime.fromisoformat(document["generated_at"]).tzinfo is not None
        for row in document["recommendations"]:
            assert set(row) >= RECOMMENDATION_KEYS
        assert {row["instance_id"]: row["finding"] for row in document["recommendations"]} == {
            iid: host.expected for iid, host in hosts.items()
        }
        (warning,) = document["warnings"]
        assert "Price List API could not be reached" in warning
        assert "bundled price snapshot" in warning
        assert "us-east-1" in warning

    def test_json_in_snapshot_mode_has_no_price_warning_and_the_same_findings(
        self, hosts: dict[str, Host], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        result = self.analyze(monkeypatch, "--format", "json", "--prices", "snapshot", "--no-progress")

        assert (result.code, result.err) == (0, "")
        document = json.loads(result.out)
        assert document["warnings"] == []
        rows = {row["instance_id"]: row for row in document["recommendations"]}
        assert {iid: row["finding"] for iid, row in rows.items()} == {iid: host.expected for iid, host in hosts.items()}
        idle = next(row for iid, row in rows.items() if hosts[iid].key == "idle-p3")
        assert idle["instance_type"] == "p3.8xlarge"
        assert idle["monthly_savings_usd"] == idle["monthly_cost_usd"] > 0
        no_agent = next(row for iid, row in rows.items() if hosts[iid].key == "no-agent")
        assert any("last 4 days" in reason for reason in no_agent["reasons"])
        totals = document["totals"]
        assert totals["instances"] == len(SMALL_FLEET)
        assert totals["monthly_savings_usd"] == pytest.approx(
            sum(max(0.0, row["monthly_savings_usd"] or 0.0) for row in rows.values())
        )
        assert sum(totals["by_finding"].values()) == len(SMALL_FLEET)

    def test_show_of_a_host_in_a_region_not_analysed_names_that_region(
        self, hosts: dict[str, Host], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The host runs in us-east-1; `show` looked in eu-west-1 only: it says where the host is and how to look."""
        monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", CLOSED_PORT)
        idle = next(iid for iid, host in hosts.items() if host.key == "idle-p3")
        by_name = hosts[idle].name

        for query in (idle, by_name):
            result = run("show", query, "--region", "eu-west-1", "--lookback-days", "4", "--no-progress")

            assert_one_line_error(
                result,
                1,
                f"no recommendation for {query!r} in eu-west-1",
                "it runs in us-east-1, which was not analysed: add --region us-east-1, or use --all-regions",
            )

    def test_table_is_sorted_by_savings_with_a_totals_line(
        self, hosts: dict[str, Host], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        table = self.analyze(monkeypatch, "--prices", "snapshot", "--no-progress")
        document = json.loads(self.analyze(monkeypatch, "--format", "json", "--prices", "snapshot").out)

        assert (table.code, table.err) == (0, "")
        lines = table.out.splitlines()
        assert lines[0].split()[:5] == ["INSTANCE", "NAME", "REGION", "TYPE", "FINDING"]
        rows = [line.split()[0] for line in lines if line.startswith("i-")]
        assert rows == [row["instance_id"] for row in document["recommendations"]]
        assert hosts[rows[0]].key == "idle-p3"  # the idle p3 saves the most
        savings = [row["monthly_savings_usd"] for row in document["recommendations"]]
        assert savings == sorted(savings, reverse=True)
        totals = document["totals"]
        assert any(re.match(rf"^{len(SMALL_FLEET)} EC2 hosts costing \$[\d,]+\.\d\d/month\.$", line) for line in lines)
        summary = re.compile(
            r"^\$([\d,]+\.\d\d)/month can be saved across \d+ recommendation\(s\), net of reservations "
            r"\(\$([\d,]+\.\d\d)/month with one click\)\.$"
        )
        (match,) = [m for m in map(summary.match, lines) if m]
        assert float(match.group(1).replace(",", "")) == totals["monthly_savings_net_usd"]
        assert float(match.group(2).replace(",", "")) == totals["actionable_savings_net_usd"]
        assert "Findings: idle 1, overprovisioned 1, insufficient_data 1, excluded 1." in lines
        assert not any(line.startswith("warning:") for line in lines)


# 2. Errors: one line, no traceback ------------------------------------------------------------------------


def test_unknown_region_is_a_usage_error() -> None:
    result = run("analyze", "--region", "us-esat-1", "--no-progress")

    assert_one_line_error(result, 2, "unknown region us-esat-1", "us-east-1")


@pytest.mark.parametrize("days", ["0", "1", "2", "63", "-1"])
def test_lookback_out_of_range_is_a_usage_error(days: str) -> None:
    """A window shorter than the analyzer's minimum history (3 days) is refused: it would make every host
    `insufficient_data`, which reads like a fleet without the CloudWatch agent."""
    result = run("analyze", "--region", "us-east-1", "--lookback-days", days)

    assert_one_line_error(result, 2, "lookback days must be between 3 and 62", f"got {days}")


def test_no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("")
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty))
    monkeypatch.setenv("BOTO_CONFIG", str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    result = run("analyze", "--region", "us-east-1", "--prices", "snapshot", "--no-progress")

    assert_one_line_error(result, 1, "no AWS credentials found", "AWS_ACCESS_KEY_ID")


def test_unreachable_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", CLOSED_PORT)
    fast_retries(monkeypatch, retries=1)

    result = run("analyze", "--region", "eu-west-1", "--prices", "snapshot", "--no-progress")

    assert_one_line_error(result, 1, "cannot reach AWS in eu-west-1", "127.0.0.1:9")


@dataclass
class Failures:
    calls: int = 0


def fail_describe_instances(monkeypatch: pytest.MonkeyPatch, code: str, message: str) -> Failures:
    """Make moto's EC2 answer every DescribeInstances with `code`; count the requests that reached it."""
    from moto.ec2.exceptions import EC2ClientError

    failures = Failures()

    def describe_instances(backend: Any, filters: Any = None) -> Any:
        failures.calls += 1
        raise EC2ClientError(code, message)

    monkeypatch.setattr("moto.ec2.models.instances.InstanceBackend.describe_instances", describe_instances)
    return failures


@pytest.mark.parametrize("code", ["RequestLimitExceeded", "ThrottlingException"])
def test_throttling_after_retries(moto_aws: None, monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    fast_retries(monkeypatch, retries=2)
    failure = fail_describe_instances(monkeypatch, code, "Request limit exceeded.")

    result = run("analyze", "--region", "us-east-1", "--prices", "snapshot", "--no-progress")

    assert failure.calls == 3  # the request and two retries, then given up
    assert_one_line_error(result, 1, "AWS kept throttling DescribeInstances in us-east-1 after retries")


def test_access_denied_is_one_error_line_after_the_progress_lines(
    moto_aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    failure = fail_describe_instances(
        monkeypatch, "UnauthorizedOperation", "You are not authorized to perform this operation."
    )

    result = run("analyze", "--region", "us-east-1", "--prices", "snapshot")

    assert failure.calls == 1  # not retried
    assert result.code == 1
    assert result.out == ""
    assert "Traceback" not in result.err
    (line,) = result.error_lines
    assert line == result.err.splitlines()[-1]
    assert "access denied to DescribeInstances in us-east-1" in line
    assert "read-only EC2, CloudWatch and Pricing permissions" in line


def test_price_list_api_unreachable_in_api_mode_fails(moto_aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", CLOSED_PORT)
    fast_retries(monkeypatch, retries=1)

    result = run("analyze", "--region", "us-east-1", "--prices", "api", "--no-progress")

    assert_one_line_error(result, 1, "Price List API could not be reached")


# 3. Known defects -------------------------------------------------------------------------------------------


def test_malformed_lookback_is_one_line_on_the_given_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    result = run("analyze", "--region", "us-east-1", "--lookback-days", "two")

    assert capsys.readouterr().err == ""
    assert_one_line_error(result, 2, "--lookback-days")


def test_table_header_names_the_lookback_actually_used() -> None:
    from rightsizer.services.report import build_report

    header = render_table(build_report([], datetime(2026, 12, 1, tzinfo=UTC), 4)).splitlines()[0]

    assert header.split()[-2:] == ["4", "DAYS"]


# 3. The whole demo fleet, streamed -----------------------------------------------------------------------------------


def test_the_streamed_json_of_the_demo_fleet_is_the_in_memory_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--output json` writes its recommendations as it reads them back from a temporary file (adapters/spill.py);
    with `--query @` (the whole document) the report is held in memory. Same fleet, same moment: the same bytes,
    narrowed or not."""
    from rightsizer.cli import analysis

    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    moment = datetime.now(UTC)

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return moment

    monkeypatch.setattr(analysis, "datetime", Frozen)
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", CLOSED_PORT)
    base = ("analyze", "--region", "us-east-1", "--output", "json", "--prices", "snapshot", "--no-progress")
    with seeded_moto(end, days=14):
        for narrowing in ((), ("--group-by", "account", "--finding", "idle", "--finding", "consolidate")):
            streamed, held = run(*base, *narrowing), run(*base, *narrowing, "--query", "@")
            assert (streamed.code, held.code, streamed.err) == (0, 0, held.err)
            assert streamed.out == held.out
            assert json.loads(streamed.out)["recommendations"]
