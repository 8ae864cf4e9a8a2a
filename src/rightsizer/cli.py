"""`rightsizer analyze`: collect, analyse and print recommendations, with the habits of the AWS CLI.

Errors are one line on stderr and a documented exit code (EXIT_CODES), never a traceback.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, NoReturn, TextIO

from rightsizer import __version__
from rightsizer.domain.findings import FINDINGS
from rightsizer.domain.models import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.services.formatting import (
    ASCII_BARS,
    ELLIPSIS,
    SPARK_BARS,
    printable,
    shorten,
    sparkline,
    spreadsheet_text,
    usd,
)
from rightsizer.services.report import FleetReport, build_report, money_sentences, not_actionable_reason, report_json
from rightsizer.settings import ConfigError, PriceMode, Settings, environment_region

EXIT_OK = 0
EXIT_FAILURE = 1  # AWS could not be read at all: credentials, permissions, network, throttling
EXIT_USAGE = 2  # the command line or the AWS configuration cannot work: option, region, profile, role ARN
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_BROKEN_PIPE = 141  # whoever read stdout stopped (`| head`): quietly, as 128 + SIGPIPE in a shell
EXIT_CODES = {
    EXIT_OK: "the report was printed (warnings, such as a region that could not be read, go to stderr)",
    EXIT_FAILURE: "AWS could not be read at all: credentials, permissions, network, throttling",
    EXIT_USAGE: "bad option, unknown region or profile, no region configured, malformed role ARN",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "the reader of stdout went away (e.g. `| head`): the rest is dropped quietly",
}
DEFAULT_COLUMNS = 120

EXAMPLES = """\
examples:
  rightsizer analyze                                   # the region of AWS_REGION / AWS_DEFAULT_REGION / the profile
  rightsizer analyze --profile prod --region us-east-1 --region eu-west-1
  rightsizer analyze --all-regions --output json > fleet.json
  rightsizer analyze --all-regions --account-role-arn arn:aws:iam::111122223333:role/GpuRightsizerCollector
  rightsizer analyze --format csv > fleet.csv          # for spreadsheets
  AWS_ENDPOINT_URL=http://127.0.0.1:5000 rightsizer analyze   # against `make serve`
"""


class TerminalProgress:
    """A one-line progress bar on a terminal; plain stage lines when stderr is not a terminal."""

    def __init__(self, stream: TextIO, *, bar: bool) -> None:
        self._stream = stream
        self._bar = bar
        self._label = ""
        self._total = 0
        self._done = 0

    def stage(self, label: str, total: int) -> None:
        self._finish_line()
        self._label, self._total, self._done = label, max(total, 1), 0
        if self._bar:
            self._draw()
        else:
            print(f"rightsizer: {label}...", file=self._stream, flush=True)

    def advance(self, steps: int = 1) -> None:
        self._done = min(self._total, self._done + steps)
        if self._bar:
            self._draw()

    def warn(self, message: str) -> None:
        return None  # warnings travel in the report: stderr at the end, and the JSON's "warnings"

    def close(self) -> None:
        self._finish_line()

    def _draw(self) -> None:
        width = 30
        filled = int(width * self._done / self._total)
        bar = "#" * filled + "." * (width - filled)
        self._stream.write(f"\r{self._label:<36} [{bar}] {self._done}/{self._total}")
        self._stream.flush()

    def _finish_line(self) -> None:
        if self._bar and self._label:
            self._stream.write("\n")
            self._stream.flush()
        self._label = ""


class UsageError(Exception):
    """A malformed command line or configuration: reported as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


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


def _epilog() -> str:
    codes = "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES.items())
    return f"{EXAMPLES}\nexit codes:\n{codes}\n"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rightsizer",
        description="Right-size AWS GPU, Inferentia and Trainium instances.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="analyze")
    analyze = commands.add_parser(
        "analyze",
        help="collect usage and print recommendations",
        description="Collect accelerator usage from CloudWatch and recommend right-sized instance types. "
        "Credentials come from boto3's default chain (or --profile); AWS_ENDPOINT_URL is honoured. "
        "A region or account that cannot be read is a warning; the others are still reported.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = analyze.add_mutually_exclusive_group()
    where.add_argument(
        "--region",
        action="append",
        metavar="REGION",
        help="AWS region to analyse, repeatable (default: AWS_REGION, AWS_DEFAULT_REGION or the profile's region)",
    )
    where.add_argument(
        "--all-regions",
        action="store_true",
        help="every region enabled for the account that runs at least one GPU / Inferentia / Trainium host",
    )
    analyze.add_argument(
        "--profile", metavar="NAME", help="named profile from the AWS config files (as in the AWS CLI)"
    )
    analyze.add_argument(
        "--account-role-arn",
        action="append",
        metavar="ARN",
        help="analyse a member account by assuming this role (repeatable; see docs/multi-account.md)",
    )
    analyze.add_argument(
        "--lookback-days", type=int, default=14, metavar="DAYS", help="days of CloudWatch history, 1-62 (default 14)"
    )
    analyze.add_argument(
        "--format",
        "--output",
        dest="format",
        choices=("table", "json", "csv"),
        default="table",
        help="table for people (default), json (schema/report.schema.json) or csv for spreadsheets",
    )
    analyze.add_argument(
        "--prices",
        choices=[mode.value for mode in PriceMode],
        default=PriceMode.AUTO.value,
        help="auto: Price List API, falling back to the bundled snapshot (default); api: no fallback; "
        "snapshot: the bundled prices only",
    )
    analyze.add_argument(
        "--cli-connect-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="seconds to wait for a connection to AWS (default 3; 3 attempts per call)",
    )
    analyze.add_argument(
        "--cli-read-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="seconds to wait for AWS to answer (default 20; 3 attempts per call)",
    )
    analyze.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    analyze.add_argument("--debug", action="store_true", help="show a traceback for unexpected errors")
    return parser


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


def _tolerant(stream: TextIO) -> None:
    """Characters the stream cannot encode (a host's Name tag, say) become '?' instead of an exception."""
    reconfigure: Callable[..., None] | None = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")


def _fail(err: TextIO, message: str, code: int) -> int:
    print(f"rightsizer: error: {printable(message)}", file=err)  # one line, whatever the message quotes
    return code


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    _tolerant(out)
    _tolerant(err)
    try:
        args = _parser().parse_args(argv)
    except UsageError as error:
        return _fail(err, f"{error} (see rightsizer analyze --help)", EXIT_USAGE)
    try:
        return _analyze(args, out, err)
    except UsageError as error:
        return _fail(err, str(error), EXIT_USAGE)
    except KeyboardInterrupt:
        print("\nrightsizer: interrupted", file=err)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _drop_output(out)
        return EXIT_BROKEN_PIPE
    except Exception as error:
        if args.debug:
            raise
        return _fail(err, f"unexpected {type(error).__name__}: {error} (run again with --debug)", EXIT_FAILURE)


def _drop_output(out: TextIO) -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        fileno = out.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


def _analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        Settings(lookback_days=args.lookback_days)  # checks the range before any AWS call
        from rightsizer.services.pipeline import role_account

        roles = tuple(dict.fromkeys(_checked_role_arn(arn) for arn in args.account_role_arn or ()))
        for arn in roles:
            role_account(arn)
    except ConfigError as error:
        raise UsageError(str(error)) from None

    # Imported here so `rightsizer --help` stays fast.
    from botocore.exceptions import ProfileNotFound

    from rightsizer import bootstrap
    from rightsizer.adapters.aws.session import AwsSession, describe_aws_error, interactive_config, known_regions

    timeouts = {"connect_timeout": args.cli_connect_timeout, "read_timeout": args.cli_read_timeout}
    config = interactive_config(**{name: value for name, value in timeouts.items() if value is not None})
    try:
        session = AwsSession.for_profile(args.profile, config)
        default_region = environment_region() or session.region_name
    except ProfileNotFound as error:
        raise UsageError(describe_aws_error(error)) from None

    progress = TerminalProgress(err, bar=not args.no_progress and err.isatty())
    reporter = None if args.no_progress else progress
    now = datetime.now(UTC)
    try:
        if args.all_regions:
            regions, discovery_warnings = bootstrap.regions_with_accelerated_hosts(
                session, default_region or "us-east-1", reporter
            )
        else:
            regions, discovery_warnings = list(dict.fromkeys(args.region or [default_region or ""])), []
            if not all(regions):
                raise UsageError(
                    "no AWS region: pass --region, set AWS_REGION or AWS_DEFAULT_REGION, "
                    "or add a region to the profile (aws configure set region us-east-1)"
                )
        if args.all_regions and not regions:
            report = build_report([], now, args.lookback_days, ["no GPU, Inferentia or Trainium host in any region"])
        else:
            report = bootstrap.analyze(
                session, _checked(regions, known_regions()), _settings(args, regions, roles), now, reporter
            )
    except bootstrap.RegionFailure as failure:
        progress.close()
        return _fail(err, bootstrap.describe_failure(failure.error, failure.region), EXIT_FAILURE)
    finally:
        progress.close()
    write_report(report, args.format, out)
    out.flush()
    _print_warnings(err, [*discovery_warnings, *report.warnings])
    return EXIT_OK


def _checked(regions: Sequence[str], known: frozenset[str]) -> tuple[str, ...]:
    unknown = [region for region in regions if region not in known]
    if unknown:
        raise UsageError(f"unknown region {', '.join(unknown)} (for example: us-east-1, eu-west-1)")
    return tuple(regions)


def _settings(args: argparse.Namespace, regions: Sequence[str], roles: tuple[str, ...]) -> Settings:
    return Settings(
        regions=tuple(regions),
        lookback_days=args.lookback_days,
        price_mode=PriceMode(args.prices),
        policy=Policy(lookback_days=args.lookback_days),
        account_role_arns=roles,
        role_session_name="gpu-rightsizer-cli",
    )


def _print_warnings(err: TextIO, warnings: Sequence[str]) -> None:
    for warning in dict.fromkeys(warnings):
        print(f"rightsizer: warning: {printable(warning)}", file=err)


def write_report(report: FleetReport, output: str, out: TextIO) -> None:
    if output == "json":
        json.dump(report_json(report), out, indent=2)
        out.write("\n")
    elif output == "csv":
        write_csv(report, out)
    else:
        width = shutil.get_terminal_size((DEFAULT_COLUMNS, 40)).columns  # honours COLUMNS
        out.write(render_table(report, width=width, charset=Charset.of(out)))


# ---------------------------------------------------------------------------------------------
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
# The table: as many columns as COLUMNS allows, then a reason line under each host.


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Recommendation, Charset, FleetReport], str]
    numeric: bool = False


def _act(rec: Recommendation, charset: Charset, report: FleetReport) -> str:
    return "no" if not_actionable_reason(rec, report.action_scope) else "yes"


def _days(rec: Recommendation, charset: Charset, report: FleetReport) -> str:
    daily = rec.evidence.daily_accelerator_mean
    return sparkline(daily, bars=charset.bars) if daily else ""


COLUMNS: dict[str, Column] = {
    "account": Column("ACCOUNT", lambda r, c, _: r.account_id),
    "instance": Column("INSTANCE", lambda r, c, _: r.instance_id),
    "name": Column("NAME", lambda r, c, _: shorten(printable(r.instance_name), 20, c.ellipsis)),
    "region": Column("REGION", lambda r, c, _: r.region),
    "type": Column("TYPE", lambda r, c, _: r.instance_type),
    "finding": Column("FINDING", lambda r, c, _: r.finding.value),
    "target": Column("TARGET", lambda r, c, _: r.target_type or "-"),
    "cost": Column("NOW/MO", lambda r, c, _: usd(r.monthly_cost), numeric=True),
    "saves": Column("SAVES/MO", lambda r, c, _: usd(r.monthly_savings), numeric=True),
    "confidence": Column("CONF", lambda r, c, _: r.confidence.value),
    "act": Column("ACT", _act),
    "days": Column("DAYS", _days),
}
# Dropped in this order until the table fits the terminal; what is left always identifies and answers.
DROP_ORDER = ("days", "confidence", "cost", "region", "name", "account", "type", "target")


def _fit(keys: list[str], widths: dict[str, int], width: int) -> list[str]:
    def total(chosen: list[str]) -> int:
        return sum(widths[key] for key in chosen) + 2 * (len(chosen) - 1)

    chosen = list(keys)
    for key in DROP_ORDER:
        if total(chosen) <= width:
            break
        if key in chosen:
            chosen.remove(key)
    return chosen


def render_table(
    report: FleetReport, width: int = DEFAULT_COLUMNS, charset: Charset = Charset(SPARK_BARS, ELLIPSIS)
) -> str:
    keys = [key for key in COLUMNS if key != "account" or len({r.account_id for r in report.recommendations}) > 1]
    headers = {key: COLUMNS[key].header for key in keys}
    headers["days"] = f"{report.lookback_days} DAYS"
    # Every cell and note is `printable`: a tag's newline, tab or bidi override cannot forge rows or disguise a host.
    cells = [
        {key: printable(COLUMNS[key].cell(rec, charset, report)) for key in keys} for rec in report.recommendations
    ]
    widths = {key: max([len(headers[key]), *(len(row[key]) for row in cells)]) for key in keys}
    keys = _fit(keys, widths, width)

    def line(values: dict[str, str]) -> str:
        text = "  ".join(
            values[key].rjust(widths[key]) if COLUMNS[key].numeric else values[key].ljust(widths[key]) for key in keys
        ).rstrip()
        return shorten(text, width, charset.ellipsis)

    def note(text: str) -> str:
        return "      " + shorten(printable(text), max(20, width - 6), charset.ellipsis)

    out = [line(headers), line({key: "-" * widths[key] for key in keys})]
    for rec, row in zip(report.recommendations, cells, strict=True):
        out.append(line(row))
        first = rec.reasons[0] if rec.reasons else ""
        if first:
            out.append(note(first))
        why_not = not_actionable_reason(rec, report.action_scope)
        if why_not and why_not != first and not FINDINGS[rec.finding].needs_nothing:
            out.append(note(f"ACT no: {why_not}"))
    totals = report.totals
    unpriced = f" ({totals.unpriced} without a price)" if totals.unpriced else ""
    counts = ", ".join(f"{name} {count}" for name, count in totals.by_finding.items() if count)
    footer = [
        f"{totals.instances} instances, {usd(totals.monthly_cost)}/month{unpriced}.",
        *money_sentences(totals),
        f"Findings: {counts or 'none'}.",
    ]
    out.append("")
    out.extend(wrapped for sentence in footer for wrapped in textwrap.wrap(sentence, max(20, width)))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
