"""`rightsizer` as a user runs it: the installed console script in its own process, against `make serve`'s
local AWS (another process), with real exit codes, real pipes and real encodings.

Each error case must end with exactly one line on stderr (`--no-progress`), never a traceback.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from demo.fleet import GROUPS, fleet
from jsonschema import Draft202012Validator

from rightsizer.adapters.aws import session as aws_session
from rightsizer.cli.errors import EXIT_BROKEN_PIPE, EXIT_CODES, EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from rightsizer.domain.models import Finding
from tests.integration.local_aws import (
    RIGHTSIZER,
    ROOT,
    Result,
    Served,
    clean_environment,
    hung_endpoint,
    region_dropping_proxy,
    rightsizer,
    served_fleet,
)
from tests.integration.test_cli import utc_local_time

pytestmark = pytest.mark.integration

DAYS = "4"
CLOSED_PORT = "http://127.0.0.1:9"
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())
ASCII_SPARK = re.compile(r"[_.:\-=+*#]{4}")
# eu-west-1 holds 3 of the 14 demo hosts (the ASG member, the Inferentia host, a stopped host): quick runs.
SMALL = ("--region", "eu-west-1", "--lookback-days", DAYS)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with served_fleet(days=int(DAYS)) as running:
        yield running


def env_for(served: Served, **changes: str | None) -> dict[str, str]:
    """The environment `make serve` printed, changed: a value of None removes the variable."""
    env = clean_environment(**served.environment)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def one_error_line(result: Result, code: int, *fragments: str) -> str:
    assert result.code == code, (result.code, result.err)
    assert "Traceback" not in result.err
    assert len(result.err_lines) == 1, result.err
    (line,) = result.err_lines
    assert line.startswith("rightsizer: error: "), line
    for fragment in fragments:
        assert fragment in line, line
    return line


@cache
def _cached_run(args: tuple[str, ...], env_items: tuple[tuple[str, str], ...]) -> Result:
    return rightsizer(*args, env=dict(env_items))


def run_once(served: Served, *args: str, **changes: str | None) -> Result:
    """Successful runs are shared by the tests that read different parts of the same output."""
    return _cached_run(args, tuple(sorted(env_for(served, **changes).items())))


def fleet_json(served: Served) -> dict[str, Any]:
    result = run_once(served, "analyze", "--all-regions", "--lookback-days", DAYS, "--output", "json", "--no-progress")
    assert result.code == 0, result.err
    document: dict[str, Any] = json.loads(result.out)
    return document


# 1. one line, a documented exit code ---------------------------------------------------------------------


def test_an_unknown_profile_in_aws_profile_is_one_line_and_exit_2(served: Served, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("[profile real]\nregion = us-east-1\n")
    env = env_for(served, AWS_PROFILE="nosuch", AWS_CONFIG_FILE=str(config))

    result = rightsizer("analyze", "--no-progress", env=env)

    one_error_line(result, EXIT_USAGE, "AWS profile 'nosuch' not found", "aws configure list-profiles")


def test_an_unknown_profile_option_is_one_line_and_exit_2(served: Served, tmp_path: Path) -> None:
    env = env_for(served, AWS_CONFIG_FILE=str(tmp_path / "absent"))

    result = rightsizer("analyze", "--profile", "nosuch", "--no-progress", env=env)

    one_error_line(result, EXIT_USAGE, "AWS profile 'nosuch' not found")


@pytest.mark.parametrize(
    ("variable", "content", "where"),
    [
        ("AWS_CONFIG_FILE", "[default\nregion = us-east-1\n", "line 1: '[default' is outside a [section]"),
        ("AWS_CONFIG_FILE", "[default]\nregion us-east-1\n", "line 2: 'region us-east-1'"),
        ("AWS_SHARED_CREDENTIALS_FILE", "aws_access_key_id = demo\n", "line 1"),
    ],
)
def test_a_malformed_aws_file_is_one_line_naming_it_and_exit_2(
    served: Served, tmp_path: Path, variable: str, content: str, where: str
) -> None:
    """botocore raises ConfigParseError from deep inside the first call that reads the file (the credentials file
    only when a call needs keys): the CLI reads both up front and names the file and the line."""
    broken = tmp_path / "broken-aws-file"
    broken.write_text(content)

    result = rightsizer("analyze", "--no-progress", env=env_for(served, **{variable: str(broken)}))

    one_error_line(result, EXIT_USAGE, f"cannot parse the AWS config file {broken}", where)


def test_a_reader_that_goes_away_ends_the_run_quietly_with_141(served: Served) -> None:
    args = [str(RIGHTSIZER), "analyze", *SMALL, "--output", "json", "--no-progress"]
    process = subprocess.Popen(args, cwd=ROOT, env=env_for(served), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # like `| head` that has already read what it wanted

    error = process.stderr.read()
    process.stderr.close()

    assert process.wait(timeout=180) == EXIT_BROKEN_PIPE
    assert error == b""


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_output_that_cannot_take_unicode_gets_ascii_sparklines(served: Served, encoding: str) -> None:
    result = run_once(served, "analyze", *SMALL, "--no-progress", PYTHONIOENCODING=encoding, COLUMNS="250")

    assert result.code == 0, result.err
    result.out.encode("ascii")
    header = result.out.splitlines()[0]
    assert header.endswith(f"{DAYS} DAYS")
    assert ASCII_SPARK.search(result.out)


# 2. interactive timeouts and retries, progress first -------------------------------------------------------


def test_the_cli_uses_short_timeouts_and_three_attempts() -> None:
    config: Any = aws_session.interactive_config()  # botocore's Config sets its options as attributes

    assert (config.connect_timeout, config.read_timeout) == (3, 20)
    assert config.retries == {"total_max_attempts": 3, "mode": "standard"}


def test_a_refused_connection_is_one_line_within_three_attempts(served: Served) -> None:
    result = rightsizer("analyze", "--no-progress", env=env_for(served, AWS_ENDPOINT_URL=CLOSED_PORT))

    one_error_line(result, EXIT_FAILURE, "cannot reach AWS in us-east-1", "127.0.0.1:9")


def test_a_hung_endpoint_says_so_first_and_gives_up_after_three_attempts(served: Served) -> None:
    with hung_endpoint() as hung:
        args = [str(RIGHTSIZER), "analyze", "--cli-read-timeout", "1", "--cli-connect-timeout", "1"]
        env = env_for(served, AWS_ENDPOINT_URL=hung.url)
        process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert process.stderr is not None and process.stdout is not None
        first = process.stderr.readline()  # printed while the first call hangs
        rest = process.stderr.read()
        code = process.wait(timeout=120)
        process.stdout.close()
        process.stderr.close()

    assert first == "rightsizer: connecting to AWS in us-east-1...\n"
    assert code == EXIT_FAILURE
    assert rest.splitlines() == [rest.strip()] and "no answer from AWS in us-east-1" in rest
    assert hung.accepted == 3


# 3. AWS CLI habits --------------------------------------------------------------------------------------------


def regions_in(result: Result) -> set[str]:
    assert result.code == 0, result.err
    return {rec["region"] for rec in json.loads(result.out)["recommendations"]}


@pytest.mark.parametrize("variable", ["AWS_REGION", "AWS_DEFAULT_REGION"])
def test_the_region_comes_from_the_environment(served: Served, variable: str) -> None:
    env = {"AWS_REGION": None, "AWS_DEFAULT_REGION": None, variable: "eu-west-1"}

    result = rightsizer(
        "analyze", "--lookback-days", DAYS, "--output", "json", "--no-progress", env=env_for(served, **env)
    )

    assert regions_in(result) == {"eu-west-1"}


def test_the_region_comes_from_the_profile(served: Served, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("[profile demo]\nregion = eu-west-1\naws_access_key_id = demo\naws_secret_access_key = demo\n")
    env = env_for(
        served, AWS_REGION=None, AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None, AWS_CONFIG_FILE=str(config)
    )

    result = rightsizer(
        "analyze", "--profile", "demo", "--lookback-days", DAYS, "--output", "json", "--no-progress", env=env
    )

    assert regions_in(result) == {"eu-west-1"}


def test_no_region_anywhere_is_one_line_and_exit_2(served: Served, tmp_path: Path) -> None:
    env = env_for(served, AWS_REGION=None, AWS_DEFAULT_REGION=None, AWS_CONFIG_FILE=str(tmp_path / "absent"))

    result = rightsizer("analyze", "--no-progress", env=env)

    one_error_line(result, EXIT_USAGE, "no AWS region", "AWS_REGION", "--region")


def test_all_regions_finds_the_regions_with_gpu_hosts(served: Served) -> None:
    document = fleet_json(served)

    assert {rec["region"] for rec in document["recommendations"]} == {"us-east-1", "eu-west-1"}
    hosts = [rec for rec in document["recommendations"] if rec["kind"] == "ec2"]
    assert len(hosts) == len(fleet())
    assert {rec["resource_id"] for rec in document["recommendations"] if rec["kind"] != "ec2"} >= set(GROUPS)
    assert document["failed_targets"] == []


def test_a_member_account_is_read_through_its_role(served: Served) -> None:
    role = "arn:aws:iam::123456789012:role/GpuRightsizerCollector"

    result = run_once(served, "analyze", "--account-role-arn", role, *SMALL, "--output", "json", "--no-progress")

    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert {rec["account_id"] for rec in document["recommendations"]} == {"123456789012"}
    assert {rec["region"] for rec in document["recommendations"]} == {SMALL[1]}


def test_a_malformed_role_arn_is_one_line_and_exit_2(served: Served) -> None:
    result = rightsizer("analyze", "--account-role-arn", "GpuRightsizerCollector", "--no-progress", env=env_for(served))

    one_error_line(result, EXIT_USAGE, "not an IAM role ARN")


def test_help_documents_every_option_with_examples_and_exit_codes(served: Served) -> None:
    result = rightsizer("analyze", "--help", env=env_for(served))

    assert result.code == 0
    for option in (
        "--region",
        "--all-regions",
        "--profile",
        "--account-role-arn",
        "--format",
        "--output",
        "--prices",
        "--lookback-days",
        "--cli-connect-timeout",
        "--cli-read-timeout",
        "--no-progress",
    ):
        assert option in result.out, option
    assert "examples:" in result.out and "rightsizer analyze --all-regions" in result.out
    for code in EXIT_CODES:
        assert re.search(rf"^\s+{code}\s+\S", result.out, re.MULTILINE), code


def test_one_unreachable_region_is_a_warning_and_the_others_are_reported(served: Served) -> None:
    with region_dropping_proxy(served.endpoint, "us-east-1") as proxy:
        result = rightsizer(
            "analyze",
            *("--region", "eu-west-1", "--region", "us-east-1"),
            *("--lookback-days", DAYS, "--output", "json", "--no-progress", "--prices", "snapshot"),
            env=env_for(served, AWS_ENDPOINT_URL=proxy),
        )

    assert result.code == EXIT_OK, result.err
    document = json.loads(result.out)
    assert {rec["region"] for rec in document["recommendations"]} == {"eu-west-1"}
    (failed,) = document["failed_targets"]
    assert (failed["account_id"], failed["region"]) == ("123456789012", "us-east-1")
    # The Savings Plans API answers in us-east-1 only: eu-west-1's savings are then priced at list, and said so.
    plans, warning = result.err_lines
    assert plans.startswith("rightsizer: warning: eu-west-1: Savings Plans could not be read")
    assert plans.endswith("savings they cover are shown at list price")
    assert warning.startswith("rightsizer: warning: account 123456789012 in us-east-1 not analysed: ")
    assert document["warnings"] == [line.removeprefix("rightsizer: warning: ") for line in (plans, warning)]


# 4. output ----------------------------------------------------------------------------------------------------


def test_warnings_go_to_stderr_and_into_the_json(served: Served) -> None:
    result = run_once(served, "analyze", "--all-regions", "--lookback-days", DAYS, "--output", "json", "--no-progress")
    document = fleet_json(served)

    # `make serve`'s local AWS answers the Price List API at once that it has none (its export line names no dead
    # pricing endpoint): the CLI says so and prices from the bundled snapshot.
    no_price_list = "Price List API refused GetProducts for eu-west-1: NotImplemented (the demo's local AWS (moto)"
    assert any(no_price_list in warning for warning in document["warnings"])
    assert result.err_lines == [f"rightsizer: warning: {warning}" for warning in document["warnings"]]


def test_the_json_validates_against_the_schema_and_rounds_money_to_cents(served: Served) -> None:
    result = run_once(served, "analyze", "--all-regions", "--lookback-days", DAYS, "--output", "json", "--no-progress")
    document = json.loads(result.out)

    Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(document)
    assert document["schema_version"] == "1.4"
    scope = document["scope"]
    assert scope["regions"] is None and scope["home_account"] == document["home_account"], "the CLI: any region"
    assert scope["description"] == f"one click counted in account {document['home_account']}, any region"
    exact = json.loads(result.out, parse_float=Decimal)
    for rec in exact["recommendations"]:
        for key in ("monthly_cost_usd", "monthly_cost_after_usd", "monthly_savings_usd"):
            assert rec[key] is None or -rec[key].as_tuple().exponent <= 2, (key, rec[key])


@pytest.mark.parametrize("columns", [80, 200])
def test_the_table_fits_columns(served: Served, columns: int) -> None:
    result = run_once(served, "analyze", *SMALL, "--no-progress", COLUMNS=str(columns))

    assert result.code == 0, result.err
    assert max(len(line) for line in result.out.splitlines()) <= columns
    assert ("DAYS" in result.out.splitlines()[0]) == (columns >= 200)


def test_the_table_says_why_there_is_no_one_click_resize(served: Served) -> None:
    result = run_once(served, "analyze", *SMALL, "--no-progress", COLUMNS="200")

    # The Auto Scaling group's member points at the group's advice, which names what its owner edits.
    assert "ACT no: advised as a group in auto-scaling-group/serving-asg" in result.out
    group = next(
        r for r in fleet_json(served)["recommendations"] if r["resource_id"] == "auto-scaling-group/serving-asg"
    )
    assert group["actionable"] is False and "launch template" in " ".join(group["reasons"])
    idle = next(rec for rec in fleet_json(served)["recommendations"] if rec["finding"] == "idle")
    assert (idle["actionable"], idle["action"], idle["not_actionable_reason"]) == (True, "stop", None)


def test_csv_for_spreadsheets_has_one_row_per_recommendation(served: Served) -> None:
    result = run_once(served, "analyze", *SMALL, "--format", "csv", "--no-progress")
    recommendations = [rec for rec in fleet_json(served)["recommendations"] if rec["region"] == SMALL[1]]

    rows = list(csv.DictReader(io.StringIO(result.out)))
    assert [row["instance_id"] for row in rows] == [rec["instance_id"] for rec in recommendations]
    assert all(re.fullmatch(r"-?\d+\.\d\d|", row["monthly_savings_usd"]) for row in rows)
    assert {row["finding"] for row in rows} <= {finding.value for finding in Finding}


# 5. one truth for totals ----------------------------------------------------------------------------------------


def test_the_cli_and_the_slack_report_agree_on_the_same_fleet(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's JSON (its own process) and the Slack report built here from the same local AWS."""
    from datetime import UTC, datetime

    from rightsizer.adapters.aws.session import AwsSession
    from rightsizer.adapters.slack import blocks
    from rightsizer.cli import wiring
    from rightsizer.settings import Settings

    for name, value in served.environment.items():
        monkeypatch.setenv(name, value)
    document = fleet_json(served)
    settings = Settings(regions=("us-east-1", "eu-west-1"), lookback_days=int(DAYS))
    with utc_local_time():
        report = wiring.analyze(AwsSession(), settings.regions, settings, datetime.now(UTC))
    summary = blocks.summary_text(blocks.ReportView.of(report, [])).replace("*", "")

    totals = document["totals"]
    shown = [float(amount.replace(",", "")) for amount in re.findall(r"\$([\d,]+\.\d\d)/month", summary)]
    other_owner = [totals["other_owner_savings_net_usd"]]
    if totals["other_owner_savings_usd"] != totals["other_owner_savings_net_usd"]:
        other_owner.append(totals["other_owner_savings_usd"])  # the list price beside the net figure
    # Net first (what the bill drops by), then the list price where it differs.
    assert shown[: 5 + len(other_owner)] == [
        totals["monthly_savings_net_usd"],
        totals["actionable_savings_net_usd"],
        totals["monthly_savings_usd"],
        totals["actionable_savings_usd"],
        *other_owner,
        totals["additional_cost_usd"],
    ]
    assert totals["other_owner_savings_usd"] > 0  # the Auto Scaling group member's advice
    assert totals["additional_cost_usd"] > 0  # the upsizes
