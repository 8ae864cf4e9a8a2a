"""`rightsizer analyze` collects, analyses and prints recommendations; and what every verb shares: the `Verb` of the
registry, the exit codes, the options, the AWS session, the live analysis, the report's formats (table, json, csv,
html). With the habits of the AWS CLI: --output, --query and --color (cli_output.py), --profile, --region,
--cli-*-timeout, AWS_ENDPOINT_URL.

`show`, `report` and `act --dry-run` are in cli_commands.py, `doctor` in cli_doctor.py; cli_main.py builds the parser
from all of them and runs `rightsizer` (the console script).
"""

from __future__ import annotations

import argparse
import csv
import re
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rightsizer import cli_output
from rightsizer.cli_output import Output, Paint, UsageError
from rightsizer.domain.findings import FINDINGS, Severity
from rightsizer.domain.models import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.services.formatting import (
    ASCII_BARS,
    ELLIPSIS,
    SPARK_BARS,
    printable,
    shorten,
    shorten_middle,
    sparkline,
    spreadsheet_text,
    usd,
)
from rightsizer.services.report import (
    FleetReport,
    build_report,
    count_sentence,
    money_sentences,
    not_actionable_reason,
    report_json,
    scope_sentence,
)
from rightsizer.services.showback import BY_TEAM, Filters, GroupBy, Showback, filters_of, host_words, showback
from rightsizer.settings import ConfigError, PriceMode, Settings, environment_region

if TYPE_CHECKING:
    from botocore.config import Config

    from rightsizer.adapters.aws.session import AwsSession
    from rightsizer.adapters.html.series import UnitSeries

__all__ = ["CommandFailed", "UsageError", "Verb"]

EXIT_OK = 0
EXIT_FAILURE = 1  # AWS could not be read at all, or holds no answer: credentials, network, no report, no such host
EXIT_USAGE = 2  # the command line or the AWS configuration cannot work: option, region, profile, stack, role ARN
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_BROKEN_PIPE = 141  # whoever read stdout stopped (`| head`): quietly, as 128 + SIGPIPE in a shell
EXIT_CODES = {
    EXIT_OK: "the output was printed (warnings, such as a region that could not be read, go to stderr)",
    EXIT_FAILURE: "AWS could not be read (credentials, permissions, network, throttling, an answer that is not AWS's), "
    "the stack has no report yet, no recommendation for that host, a dry run the approval would refuse, or a doctor "
    "check that needs fixing",
    EXIT_USAGE: "bad option or --query, unknown region, profile or stack (or one that is no GPU Rightsizer stack), "
    "no region configured, a malformed AWS config or credentials file, malformed role ARN, a missing `cli` extra",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "the reader of stdout went away (e.g. `| head`): the rest is dropped quietly",
}
DEFAULT_COLUMNS = 120
NO_PAINT = Paint()  # no colour


class CommandFailed(Exception):
    """A verb could not do its job (AWS unreadable, nothing found): one line on stderr and its exit code."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"expected between 0 and 600 seconds, got {text}")
    return value


# An IAM role ARN, as IAM and STS's AssumeRole accept it: arn:<partition>:iam::<account>:role/<path/><name>, the
# account 12 ASCII digits, the path "/" or "/.../" (at most 512 printable ASCII characters), the name 1-64 letters,
# digits and +=,.@_- (IAM's CreateRole limits).
ROLE_ARN_FORM = "arn:aws:iam::<12-digit account>:role/<name>"
_ACCOUNT_ID = re.compile(r"[0-9]{12}")
_ROLE_NAME = re.compile(r"[A-Za-z0-9+=,.@_-]{1,64}")
_ROLE_PATH = re.compile(r"/(?:[\x21-\x7e]+/)?")
ROLE_NAME_MAX, ROLE_PATH_MAX = 64, 512


@cache
def known_partitions() -> frozenset[str]:
    """The AWS partitions botocore's bundled endpoint data knows (aws, aws-cn, aws-us-gov, aws-iso, ...)."""
    import botocore.session

    return frozenset(botocore.session.Session().get_available_partitions())


def role_arn_problem(arn: str) -> str | None:
    """What is wrong with `arn` as the ARN of an IAM role (None: nothing), in a few words."""
    parts = arn.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn":
        return "not an ARN"
    _, partition, service, region, account, resource = parts
    if partition not in known_partitions():
        return f"unknown partition {partition!r} (known: {', '.join(sorted(known_partitions()))})"
    if service != "iam":
        return f"the service is {service!r}, not 'iam'"
    if region:
        return f"IAM ARNs have no region, this one has {region!r}"
    if not _ACCOUNT_ID.fullmatch(account):
        return f"the account id {account!r} is not 12 digits (0-9)"
    kind, slash, rest = resource.partition("/")
    if kind != "role" or not slash:
        return f"{resource!r} is not a role (expected role/<name> or role/<path>/<name>)"
    before, _, name = f"/{rest}".rpartition("/")
    path = f"{before}/"
    if not name:
        return "the role name is missing"
    if len(name) > ROLE_NAME_MAX:
        return f"the role name is {len(name)} characters long, IAM allows at most {ROLE_NAME_MAX}"
    if not _ROLE_NAME.fullmatch(name):
        return f"the role name {name!r} has characters IAM does not allow (only letters, digits and +=,.@_-)"
    if len(path) > ROLE_PATH_MAX:
        return f"the role path is {len(path)} characters long, IAM allows at most {ROLE_PATH_MAX}"
    if not _ROLE_PATH.fullmatch(path):
        return f"the role path {path!r} has characters IAM does not allow (only printable ASCII, no spaces)"
    return None


def _checked_role_arn(arn: str) -> str:
    problem = role_arn_problem(arn)
    if problem is not None:
        raise UsageError(f"not an IAM role ARN: {arn!r} in --account-role-arn: {problem} (expected {ROLE_ARN_FORM})")
    return arn


# ---------------------------------------------------------------------------------------------
# The verbs: one registry, from which the parser, its help and the completion scripts are built.

Run = Callable[[argparse.Namespace, TextIO, TextIO], int]


@dataclass(frozen=True)
class Verb:
    """One `rightsizer <verb>`: its help line and description, its options, and what it runs."""

    name: str
    summary: str
    description: str
    options: Callable[[argparse.ArgumentParser], None]
    run: Run


def add_where_options(parser: argparse.ArgumentParser, *, stack: bool = False) -> None:
    """Where and how to analyse: the regions, member accounts, the window and the prices (and, for the verbs that
    can read a deployment instead, --stack)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--region",
        action="append",
        metavar="REGION",
        help="AWS region to analyse, repeatable (default: AWS_REGION, AWS_DEFAULT_REGION or the profile's region)"
        + ("; with --stack: the stack's region" if stack else ""),
    )
    where.add_argument(
        "--all-regions",
        action="store_true",
        help="every region enabled for the account that runs at least one GPU / Inferentia / Trainium host",
    )
    parser.add_argument(
        "--account-role-arn",
        action="append",
        metavar="ARN",
        help="analyse a member account by assuming this role (repeatable; see docs/multi-account.md)",
    )
    parser.add_argument(
        "--lookback-days",
        type=int,
        default=14,
        metavar="DAYS",
        help="days of CloudWatch history, 3-62 (default 14; the analyzer needs 3 days of GPU history)",
    )
    parser.add_argument(
        "--time-zone",
        action="append",
        metavar="[TEAM=]ZONE",
        help="the IANA time zone stop/start schedules run in, as a deployment's ScheduleTimezone (ZONE) and "
        "TeamTimeZones (TEAM=ZONE, for hosts whose team tag is TEAM), repeatable: a schedule's saving counts the pair "
        "an approval would create there (default UTC)",
    )
    parser.add_argument(
        "--prices",
        choices=[mode.value for mode in PriceMode],
        default=PriceMode.AUTO.value,
        help="auto: Price List API, falling back to the bundled snapshot (default); api: no fallback; "
        "snapshot: the bundled prices only",
    )
    if stack:
        add_stack_option(parser, "instead of analysing: read the latest recommendation the deployed bot stored")


def add_stack_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--stack",
        metavar="NAME",
        help=f"a deployed GPU Rightsizer stack (its CloudFormation name, in --region): {what}",
    )


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """How to reach AWS, as in the AWS CLI, and what to say on stderr."""
    parser.add_argument("--profile", metavar="NAME", help="named profile from the AWS config files (as in the AWS CLI)")
    parser.add_argument(
        "--cli-connect-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="seconds to wait for a connection to AWS (default 3; 3 attempts per call)",
    )
    parser.add_argument(
        "--cli-read-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="seconds to wait for AWS to answer (default 20; 3 attempts per call)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    add_debug_option(parser)


def add_debug_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", action="store_true", help="show a traceback for unexpected errors")


def add_report_outputs(parser: argparse.ArgumentParser, table: str) -> None:
    """A report's outputs: --format for files (csv, html) beside the AWS CLI's --output, --query and --color."""
    parser.add_argument(
        "--format",
        choices=REPORT_FORMATS,
        default=None,
        help="table for people (default), json (schema/report.schema.json), csv for spreadsheets, or html: the "
        "report page, self-contained (no script, nothing fetched)",
    )
    cli_output.add_output_options(parser, (*cli_output.OUTPUTS, "wide"), table=table)
    parser.add_argument(
        "--columns",
        metavar="KEY[,KEY...]",
        help=f"the table's columns, in order, shown whatever the terminal's width: {', '.join(COLUMNS)} "
        "(default: those that fit, dropping the sparkline, confidence and list-price columns first; NAME, FINDING, "
        "TARGET and NET/MO last)",
    )
    parser.add_argument("--html", metavar="FILE", help="also write the report page to FILE")


def add_narrowing_options(parser: argparse.ArgumentParser) -> None:
    """A report's filters and its showback (services.showback: the same as `/gpu top`'s words)."""
    parser.add_argument(
        "--group-by",
        metavar="team|account|region|tag:KEY",
        help="showback: each group's spend, waste (idle, oversized, idle hours) and net savings, with the resources "
        "behind them, instead of one line per resource",
    )
    narrow = parser.add_argument_group("filters (all must hold; a repeated one: any of its values)")
    narrow.add_argument("--finding", action="append", metavar="FINDING", help="e.g. idle, overprovisioned")
    narrow.add_argument("--min-savings", metavar="USD", help="net savings of at least USD a month, e.g. 100")
    narrow.add_argument("--team", action="append", metavar="TEAM", help="the team tag's value")
    narrow.add_argument("--tag", action="append", metavar="KEY=VALUE", help="a tag the resource carries")
    narrow.add_argument("--kind", action="append", metavar="KIND", help="e.g. ec2, sagemaker-endpoint, eks-nodegroup")


@dataclass(frozen=True)
class Narrowing:
    """What --group-by and the filters ask of a report; checked before any AWS call."""

    filters: Filters
    group_by: GroupBy | None  # None: one line per resource

    @classmethod
    def of(cls, args: argparse.Namespace) -> Narrowing:
        terms = [
            (name, value)
            for name, values in (
                ("finding", args.finding),
                ("min-savings", [args.min_savings] if args.min_savings is not None else None),
                ("team", args.team),
                ("tag", args.tag),
                ("kind", args.kind),
            )
            for value in values or ()
        ]
        try:
            return cls(filters_of(terms), GroupBy.parse(args.group_by) if args.group_by else None)
        except ValueError as error:
            raise UsageError(str(error)) from None

    @property
    def reads_everything(self) -> bool:
        """Filters, or groups other than the teams a stored ranking keeps: every recommendation is needed."""
        return bool(self.filters) or self.group_by not in (None, BY_TEAM)

    def apply(self, report: FleetReport) -> FleetReport:
        """The report narrowed to what the filters keep, its totals those of what is kept, grouped as asked."""
        if not self.filters and self.group_by is None:
            return report
        kept = tuple(self.filters.apply(report.recommendations)) if self.filters else report.recommendations
        grouped = report.showback
        if self.filters or (self.group_by is not None and self.group_by != BY_TEAM) or grouped is None:
            grouped = showback(kept, self.group_by or BY_TEAM)
        return replace(
            report,
            recommendations=kept,
            fleet=None if self.filters else report.fleet,
            showback=grouped,
            filtered=self.filters.describe(),
            grouped=self.group_by is not None,
        )


def _analyze_options(parser: argparse.ArgumentParser) -> None:
    add_where_options(parser)
    add_report_outputs(parser, "sorted by savings, the totals under it")
    add_narrowing_options(parser)
    add_connection_options(parser)


@dataclass(frozen=True)
class Charset:
    """What the output stream can encode: block-character sparklines, or ASCII."""

    bars: str
    ellipsis: str

    @classmethod
    def of(cls, stream: TextIO) -> Charset:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        try:
            (SPARK_BARS + ELLIPSIS).encode(encoding)
        except (UnicodeEncodeError, LookupError):
            return cls(ASCII_BARS, "...")
        return cls(SPARK_BARS, ELLIPSIS)


def aws_failure(error: Exception) -> str | None:
    """One line for a failed AWS call (see EXIT_FAILURE); None for any other error."""
    from rightsizer.adapters.aws.session import AWS_FAILURES, describe_aws_error

    return describe_aws_error(error) if isinstance(error, AWS_FAILURES) else None


# ---------------------------------------------------------------------------------------------
# analyze


def _analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    output = Output.of(args, out)  # --output, --format, --query and --color are checked before any AWS call
    page_file = html_target(args)
    narrowing = Narrowing.of(args)
    live = live_report(args, err, color=output.color, keep_series=output.format == "html" or page_file is not None)
    page = Page(series=live.series)
    report = narrowing.apply(live.report)
    write_report(report, output, out, page=page)
    out.flush()
    if page_file is not None:
        write_page_file(page_file, report, page)
    print_warnings(err, live.warnings)
    return EXIT_OK


ANALYZE = Verb(
    "analyze",
    "collect usage and print recommendations",
    "Collect accelerator usage from CloudWatch and recommend right-sized instance types. "
    "Credentials come from boto3's default chain (or --profile); AWS_ENDPOINT_URL is honoured. "
    "A region or account that cannot be read is a warning; the others are still reported.",
    _analyze_options,
    _analyze,
)


def html_target(args: argparse.Namespace) -> Path | None:
    """--html FILE, checked before any AWS call: its folder must exist."""
    given = getattr(args, "html", None)
    if not given:
        return None
    path = Path(given)
    if not path.parent.is_dir():
        raise UsageError(f"--html {given}: the folder {path.parent} does not exist")
    return path


def write_page_file(path: Path, report: FleetReport, page: Page) -> None:
    try:
        path.write_text(html_page(report, page), encoding="utf-8")
    except OSError as error:
        raise CommandFailed(f"cannot write the report page to {path}: {error.strerror or error}") from None


def aws_session(args: argparse.Namespace) -> AwsSession:
    """The AWS session of --profile with the CLI's quick timeouts; a usage error for an unknown profile or a malformed
    AWS config or credentials file (named)."""
    from botocore.exceptions import ConfigParseError, ProfileNotFound

    from rightsizer.adapters.aws.session import AwsSession, describe_aws_error

    try:
        session = AwsSession.for_profile(args.profile, client_config(args))
        session.check_files()
        session.region_name  # noqa: B018 -- reading the profile raises ProfileNotFound here, not in the middle
    except (ProfileNotFound, ConfigParseError) as error:
        raise UsageError(describe_aws_error(error)) from None
    return session


def client_config(args: argparse.Namespace) -> Config:
    """botocore's config for a person waiting: --cli-connect-timeout and --cli-read-timeout, 3 attempts."""
    from rightsizer.adapters.aws.session import interactive_config

    timeouts = {"connect_timeout": args.cli_connect_timeout, "read_timeout": args.cli_read_timeout}
    return interactive_config(**{name: value for name, value in timeouts.items() if value is not None})


def default_region(session: AwsSession) -> str | None:
    """The region of AWS_REGION, AWS_DEFAULT_REGION or the profile."""
    return environment_region() or session.region_name


NO_REGION = (
    "no AWS region: pass --region, set AWS_REGION or AWS_DEFAULT_REGION, "
    "or add a region to the profile (aws configure set region us-east-1)"
)


@dataclass(frozen=True)
class LiveReport:
    """An analysis the CLI ran itself: the report, the warnings for stderr, each host's per-GPU series (kept only
    for the page)."""

    report: FleetReport
    warnings: tuple[str, ...] = ()
    series: Mapping[str, Sequence[UnitSeries]] = field(default_factory=dict)
    # The other enabled regions where an instance has this id or Name tag (None: every region was analysed, or none
    # can be asked): where `show` points for a host it did not find.
    elsewhere: Callable[[str], list[str]] | None = None


def live_report(args: argparse.Namespace, err: TextIO, *, color: bool = True, keep_series: bool = False) -> LiveReport:
    """Collect and analyse as `analyze` does (--region / --all-regions, --account-role-arn, ...). A UsageError or
    CommandFailed when nothing can be analysed."""
    try:
        Settings(lookback_days=args.lookback_days)  # checks the range before any AWS call
        time_zones(args.time_zone or ())
        from rightsizer.services.pipeline import role_account

        roles = tuple(dict.fromkeys(_checked_role_arn(arn) for arn in args.account_role_arn or ()))
        for arn in roles:
            role_account(arn)
    except ConfigError as error:
        raise UsageError(str(error)) from None

    # Imported here so `rightsizer --help` stays fast.
    from rightsizer import bootstrap
    from rightsizer.adapters.aws.session import known_regions
    from rightsizer.adapters.html.series import UnitSeriesTap
    from rightsizer.services.ports import UsageSource

    session = aws_session(args)
    home = default_region(session)
    progress = cli_output.progress(err, enabled=not args.no_progress, color=color)
    reporter = None if args.no_progress else progress
    kept: dict[str, tuple[UnitSeries, ...]] = {}  # every region's tap keeps into it

    def tap(inner: UsageSource) -> UsageSource:
        return UnitSeriesTap(inner, kept)

    now = datetime.now(UTC)
    try:
        if args.all_regions:
            regions, discovery_warnings = bootstrap.regions_with_accelerated_hosts(
                session, home or "us-east-1", reporter
            )
        else:
            regions, discovery_warnings = list(dict.fromkeys(args.region or [home or ""])), []
            if not all(regions):
                raise UsageError(NO_REGION)
        if args.all_regions and not regions:
            report = build_report([], now, args.lookback_days, ["no GPU, Inferentia or Trainium host in any region"])
        else:
            report = bootstrap.analyze(
                session,
                _checked(regions, known_regions()),
                _settings(args, regions, roles),
                now,
                reporter,
                usage_tap=tap if keep_series else None,
            )
    except bootstrap.RegionFailure as failure:
        raise CommandFailed(bootstrap.describe_failure(failure.error, failure.region)) from None
    finally:
        progress.close()
    analysed = frozenset(regions)

    def elsewhere(query: str) -> list[str]:
        return bootstrap.regions_holding(session, home or regions[0], query, analysed)

    warnings = (*discovery_warnings, *report.warnings)
    return LiveReport(report, warnings, kept, None if args.all_regions else elsewhere)


def _checked(regions: Sequence[str], known: frozenset[str]) -> tuple[str, ...]:
    unknown = [region for region in regions if region not in known]
    if unknown:
        raise UsageError(f"unknown region {', '.join(unknown)} (for example: us-east-1, eu-west-1)")
    return tuple(regions)


def _settings(args: argparse.Namespace, regions: Sequence[str], roles: tuple[str, ...]) -> Settings:
    default, teams = time_zones(args.time_zone or ())
    return Settings(
        regions=tuple(regions),
        lookback_days=args.lookback_days,
        price_mode=PriceMode(args.prices),
        policy=Policy(lookback_days=args.lookback_days),
        account_role_arns=roles,
        role_session_name="gpu-rightsizer-cli",
        schedule_time_zone=default,
        team_time_zones=teams,
    )


def time_zones(given: Sequence[str]) -> tuple[str, dict[str, str]]:
    """--time-zone ZONE and TEAM=ZONE: the default zone and the teams'; a UsageError for a zone IANA does not know."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    default, teams = "UTC", {}
    for item in given:
        team, _, zone = item.rpartition("=")
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"--time-zone {item}: {zone!r} is not an IANA time zone (e.g. Europe/Berlin)") from None
        if team:
            teams[team] = zone
        else:
            default = zone
    return default, teams


def print_warnings(err: TextIO, warnings: Sequence[str]) -> None:
    for warning in dict.fromkeys(warnings):
        print(f"rightsizer: warning: {printable(warning)}", file=err)


_print_warnings = print_warnings  # the name tests have used


# ---------------------------------------------------------------------------------------------
# A report's outputs: one writer per format.

REPORT_FORMATS = ("table", "json", "csv", "html")


@dataclass(frozen=True)
class Page:
    """What the report page shows beyond the report: each host's per-GPU hourly series (a live analysis keeps them;
    a deployment's table does not, and the page then draws each host's daily means)."""

    series: Mapping[str, Sequence[UnitSeries]] = field(default_factory=dict)


def html_page(report: FleetReport, page: Page = Page()) -> str:
    from rightsizer.adapters.html.page import render_report

    return render_report(report, series=page.series)


def _html(report: FleetReport, output: Output, out: TextIO, page: Page) -> None:
    out.write(html_page(report, page))


def _document(report: FleetReport, output: Output, out: TextIO, page: Page) -> None:
    def table() -> str:
        return render_table(
            report,
            width=output.width,
            charset=Charset.of(out),
            paint=Paint(output.color),
            columns=output.columns,
            wide=output.format == "wide",
        )

    cli_output.write_document(report_json(report), output, out, table=table)


Writer = Callable[[FleetReport, Output, TextIO, Page], None]
WRITERS: dict[str, Writer] = {
    **dict.fromkeys((*cli_output.OUTPUTS, *cli_output.TABLES), _document),
    "csv": lambda report, output, out, page: write_csv(report, out),
    "html": _html,
}


def write_report(report: FleetReport, output: Output | str, out: TextIO, *, page: Page = Page()) -> None:
    """`report` as the output says: table, json, text, yaml (after any --query), csv or html."""
    chosen = output if isinstance(output, Output) else Output(output, width=cli_output.table_width(out))
    WRITERS[chosen.format](report, chosen, out, page)


# CSV: the JSON document's recommendations, flattened (evidence_* columns); money with two decimals.


CONSOLIDATION_COLUMNS = ("group", "hosts", "keep", "target_type")  # consolidate advice, flattened


def _csv_value(key: str, value: Any) -> str:
    """One cell. Numbers are written as numbers (negative money included); every text cell, tags and lists alike,
    is neutralised so that a spreadsheet never evaluates it as a formula (formatting.spreadsheet_text)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if key.endswith("_usd"):
        return f"{value:.2f}"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return spreadsheet_text("; ".join(_csv_cell(item) for item in value))
    if isinstance(value, dict):  # tags
        return spreadsheet_text("; ".join(f"{name}={text}" for name, text in value.items()))
    return spreadsheet_text(str(value))


def _csv_cell(item: Any) -> str:
    if isinstance(item, dict):  # an alternative
        cost = item.get("monthly_cost_usd")
        price = "n/a" if cost is None else f"{cost:.2f}"
        return f"{item['instance_type']} ({price} USD/month, {item['confidence']})"
    return "" if item is None else str(item)


def csv_rows(report: FleetReport) -> Iterator[dict[str, str]]:
    for record in report_json(report)["recommendations"]:
        evidence = record.pop("evidence")
        plan = record.pop("consolidation") or {}
        row = {key: _csv_value(key, value) for key, value in record.items()}
        row.update({f"consolidation_{key}": _csv_value(key, plan.get(key)) for key in CONSOLIDATION_COLUMNS})
        row.update({f"evidence_{key}": _csv_value(key, value) for key, value in evidence.items()})
        yield row


def write_csv(report: FleetReport, out: TextIO) -> None:
    rows = list(csv_rows(report))
    if not rows:
        return
    # RFC 4180's CRLF: Python's writer then quotes every cell holding a CR or LF (with "\n" it leaves a lone CR
    # unquoted, which spreadsheets read as a new row, whose first cell could be a formula).
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)


# ---------------------------------------------------------------------------------------------
# The table: as many columns as the terminal allows (COLUMNS, else its width), then a reason line under each host.
# Written to a file or a pipe it has no width: every column, every value whole. `--output wide` adds the columns a
# terminal's table leaves out and cuts nothing; `--columns` picks them.


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Recommendation, Charset, FleetReport], str]
    numeric: bool = False
    style: Callable[[Recommendation, str], str] = lambda rec, text: ""  # its colour (cli_output.ANSI), if any
    wide: bool = False  # only in `--output wide` (or when --columns names it)


def _act(rec: Recommendation, charset: Charset, report: FleetReport) -> str:
    return "no" if not_actionable_reason(rec, report.action_scope, report.managed_tag_key) else "yes"


def _days(rec: Recommendation, charset: Charset, report: FleetReport) -> str:
    daily = rec.evidence.daily_trace
    return sparkline(daily, bars=charset.bars) if daily else ""


def _finding_style(rec: Recommendation, text: str) -> str:
    return FINDING_STYLES[FINDINGS[rec.finding].severity]


def _money_style(rec: Recommendation, text: str) -> str:
    return "red" if text.startswith("-") else ("green" if text not in ("$0.00", "n/a") else "")


COLUMNS: dict[str, Column] = {
    "account": Column("ACCOUNT", lambda r, c, _: r.account_id),
    "instance": Column("INSTANCE", lambda r, c, _: r.instance_id),
    "name": Column("NAME", lambda r, c, _: r.instance_name),
    "region": Column("REGION", lambda r, c, _: r.region),
    "team": Column("TEAM", lambda r, c, _: r.team, wide=True),
    "type": Column("TYPE", lambda r, c, _: r.instance_type),
    "finding": Column("FINDING", lambda r, c, _: r.finding.value, style=_finding_style),
    "target": Column("TARGET", lambda r, c, _: r.target_type or "-"),
    "cost": Column("NOW/MO", lambda r, c, _: usd(r.monthly_cost), numeric=True),
    # NET: what the bill drops by, net of Reserved Instances, Savings Plans and capacity reservations (the JSON's
    # monthly_savings_net_usd; the table is sorted by it). SAVES is the same change at list prices.
    "net": Column("NET/MO", lambda r, c, _: usd(r.net_savings), numeric=True, style=_money_style),
    "saves": Column("SAVES/MO", lambda r, c, _: usd(r.monthly_savings), numeric=True, style=_money_style),
    "confidence": Column("CONF", lambda r, c, _: r.confidence.value),
    "act": Column("ACT", _act, style=lambda rec, text: "green" if text == "yes" else "dim"),
    "days": Column("DAYS", _days),
}
FINDING_STYLES = {Severity.RISK: "red", Severity.WASTE: "yellow", Severity.OK: "green", Severity.INFO: "dim"}
NAME_WIDTH, NAME_MIN_WIDTH = 20, 10  # a terminal's NAME column; it narrows to the minimum before columns go
ID_WIDTH = 19  # an instance id's length: longer resource ids are shortened to it (in the middle) before columns go
NARROW_NAMES, SHORT_IDS = "(narrow the names)", "(shorten the ids)"
# What a table too wide for the terminal gives up, in order: the sparkline, the confidence, the list-price and the
# current cost, long resource ids, then the columns that place a host, down to what answers "what should I do about
# which host, and what does it save": NAME (the id where a host has none), FINDING, TARGET and NET/MO are never dropped.
ALWAYS = ("name", "finding", "target", "net")
DROP_ORDER = (
    "days",
    "confidence",
    "saves",
    "cost",
    SHORT_IDS,
    "type",
    "region",
    "account",
    "team",
    "act",
    NARROW_NAMES,
    "instance",
)


@dataclass(frozen=True)
class Layout:
    """The columns a table shows, their widths, and what it gave up to fit the terminal."""

    keys: list[str]
    widths: dict[str, int]
    dropped: list[str]
    ids_shortened: bool = False


def _fit(keys: list[str], widths: dict[str, int], width: int) -> Layout:
    """The columns that fit `width`, dropping (and narrowing ids and names) in DROP_ORDER."""

    def total(chosen: list[str]) -> int:
        return sum(widths[key] for key in chosen) + 2 * (len(chosen) - 1)

    chosen, dropped, shortened = list(keys), [], False
    for step in DROP_ORDER:
        excess = total(chosen) - width
        if excess <= 0:
            break
        if step == NARROW_NAMES:
            widths["name"] = max(min(widths["name"], NAME_MIN_WIDTH), widths["name"] - excess)
        elif step == SHORT_IDS:
            shortened = "instance" in chosen and widths["instance"] > ID_WIDTH
            widths["instance"] = min(widths["instance"], ID_WIDTH)
        elif step in chosen:
            chosen.remove(step)
            dropped.append(step)
    return Layout(chosen, widths, dropped, shortened)


def table_columns(report: FleetReport, chosen: Sequence[str] = (), *, wide: bool = False) -> list[str]:
    """The table's columns: --columns as given (checked), else the default ones (ACCOUNT only for several accounts),
    or every one for --output wide."""
    if chosen:
        unknown = [key for key in chosen if key not in COLUMNS]
        if unknown:
            raise UsageError(f"--columns: no column {', '.join(unknown)} (the columns: {', '.join(COLUMNS)})")
        return list(dict.fromkeys(chosen))
    accounts = len({r.account_id for r in report.recommendations}) > 1
    return [key for key, column in COLUMNS.items() if wide or (not column.wide and (key != "account" or accounts))]


def render_table(
    report: FleetReport,
    width: int | None = DEFAULT_COLUMNS,
    charset: Charset = Charset(SPARK_BARS, ELLIPSIS),
    paint: Paint = NO_PAINT,
    *,
    columns: Sequence[str] = (),
    wide: bool = False,
) -> str:
    """The table for people. `width`: the terminal's columns; None (a file, a pipe, `--output wide`): every column,
    nothing cut. `columns`: --columns (shown as given, lines cut to the terminal); `wide`: every column."""
    if report.grouped and report.showback is not None:
        return render_showback(report, report.showback, width, paint)
    keys = table_columns(report, columns, wide=wide)
    headers = {key: COLUMNS[key].header for key in keys}
    if "days" in headers:
        headers["days"] = f"{report.lookback_days} DAYS"
    # Every cell and note is `printable`: a tag's newline, tab or bidi override cannot forge rows or disguise a host.
    cells = [
        {key: printable(COLUMNS[key].cell(rec, charset, report)) for key in keys} for rec in report.recommendations
    ]
    widths = {key: max([len(headers[key]), *(len(row[key]) for row in cells)]) for key in keys}
    layout = Layout(keys, widths, [])
    if width is not None:
        if "name" in widths:
            widths["name"] = min(widths["name"], max(NAME_WIDTH, len(headers["name"])))
        if not columns:
            layout = _fit(keys, widths, width)
    keys = layout.keys
    if "name" in keys and "instance" not in keys:  # the id stands in for a host without a Name tag
        for rec, row in zip(report.recommendations, cells, strict=True):
            row["name"] = row["name"] or rec.instance_id

    def fitted(key: str, value: str) -> str:
        if key == "instance" and layout.ids_shortened:
            value = shorten_middle(value, widths[key], charset.ellipsis)
        value = shorten(value, widths[key], charset.ellipsis)
        return value.rjust(widths[key]) if COLUMNS[key].numeric else value.ljust(widths[key])

    def line(values: Mapping[str, str], style: Callable[[str, str], str]) -> str:
        plain = "  ".join(fitted(key, values[key]) for key in keys).rstrip()
        if width is not None and len(plain) > width:
            return shorten(plain, width, charset.ellipsis)  # narrower than the columns that are always kept
        return "  ".join(paint(style(key, values[key]), fitted(key, values[key])) for key in keys).rstrip()

    def note(text: str, style: str = "") -> str:
        shown = printable(text) if width is None else shorten(printable(text), max(20, width - 6), charset.ellipsis)
        return "      " + paint(style, shown)

    out = [line(headers, lambda key, text: "bold"), line({key: "-" * widths[key] for key in keys}, _plain)]
    for rec, row in zip(report.recommendations, cells, strict=True):
        out.append(line(row, _styles_of(rec)))
        first = rec.reasons[0] if rec.reasons else ""
        if first:
            out.append(note(first))
        why_not = not_actionable_reason(rec, report.action_scope, report.managed_tag_key)
        if why_not and why_not != first and not FINDINGS[rec.finding].needs_nothing:
            out.append(note(f"ACT no: {why_not}", "dim"))
    out.append("")
    out.extend(_layout_lines(layout, width, paint))
    out.extend(footer_lines(report, width, paint))
    return "\n".join(out) + "\n"


SHOWBACK_HEADERS = ("RESOURCES", "SPEND/MO", "WASTE/MO", "NET SAVINGS/MO")


def render_showback(report: FleetReport, grouped: Showback, width: int | None, paint: Paint = NO_PAINT) -> str:
    """`--group-by`: a line per group (its spend, the waste in it, the net savings its advice makes available), the
    resources behind those numbers under it, largest first; then the totals."""
    head = grouped.by.name.upper()
    rows = [
        (
            printable(group.key),
            str(group.resources),
            usd(group.spend) + ("*" if group.unpriced else ""),
            usd(group.waste),
            usd(group.net_savings),
        )
        for group in grouped.groups
    ]
    widths = [max(len(text) for text in column) for column in zip((head, *SHOWBACK_HEADERS), *rows, strict=True)]

    def line(cells: Sequence[str], style: str = "") -> str:
        text = "  ".join(
            cell.ljust(size) if n == 0 else cell.rjust(size)
            for n, (cell, size) in enumerate(zip(cells, widths, strict=True))
        )
        return paint(style, shorten(text, width) if width is not None else text)

    out = [line((head, *SHOWBACK_HEADERS), "bold"), line(["-" * size for size in widths])]
    for group, row in zip(grouped.groups, rows, strict=True):
        out.append(line(row))
        behind = ", ".join(printable(host_words(host)) for host in group.hosts)
        more = group.resources - len(group.hosts)
        if behind:
            text = f"behind it: {behind}" + (f" ({more} more without savings or not listed)" if more > 0 else "")
            wrapped = textwrap.wrap(text, max(20, width - 6)) if width is not None else [text]
            out.extend("      " + paint("dim", piece) for piece in wrapped)
    if any(group.unpriced for group in grouped.groups):
        out.append("* some of the group's resources have no price: their cost is not in SPEND/MO")
    out.append("")
    out.extend(footer_lines(report, width, paint))
    return "\n".join(out) + "\n"


def _layout_lines(layout: Layout, width: int | None, paint: Paint) -> list[str]:
    """What the table gave up to fit the terminal, and how to see it: nothing is hidden without a word."""
    if width is None or not (layout.dropped or layout.ids_shortened):
        return []
    gave_up = [COLUMNS[key].header for key in layout.dropped]
    parts = [
        f"columns {', '.join(gave_up)} hidden" if gave_up else "",
        "long ids shortened" if layout.ids_shortened else "",
    ]
    said = "; ".join(part for part in parts if part)
    text = f"To fit {width} columns: {said}. --output wide shows every column whole; --columns picks them."
    return [paint("dim", line) for line in textwrap.wrap(text, max(20, width))] + [""]


def _plain(key: str, text: str) -> str:
    return ""


def _styles_of(rec: Recommendation) -> Callable[[str, str], str]:
    return lambda key, text: COLUMNS[key].style(rec, text)


def footer_lines(report: FleetReport, width: int | None = DEFAULT_COLUMNS, paint: Paint = NO_PAINT) -> list[str]:
    """The totals under the table, in the words of the Slack report (wrapped to a terminal's width only)."""
    totals = report.totals
    counts = ", ".join(f"{name} {count}" for name, count in totals.by_finding.items() if count)
    money = money_sentences(totals, managed_tag_key=report.managed_tag_key)
    scope = scope_sentence(report.action_scope)
    only = [f"Only {report.filtered}: the totals are those of what is kept."] if report.filtered else []
    footer = [
        *only,
        f"{count_sentence(totals)}.",
        *money,
        *([scope] if scope else []),
        f"Findings: {counts or 'none'}.",
    ]
    lines: list[str] = []
    for sentence in footer:
        wrapped = textwrap.wrap(sentence, max(20, width)) if width is not None else [sentence]
        style = "bold" if money and sentence == money[0] else ""
        lines.extend(paint(style, text) for text in wrapped)
    return lines
