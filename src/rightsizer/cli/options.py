"""What the verbs share on their command lines: the `Verb` of the registry (cli/main.py builds the parser from every
one), where to analyse (--region, --all-regions, --account-role-arn, ...), how to reach AWS (--profile, the
--cli-*-timeout options), a report's outputs (--format, --columns, --html beside the AWS CLI's --output, --query and
--color) and its filters and showback (`Narrowing`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TextIO

from rightsizer.cli.errors import UsageError
from rightsizer.cli.output.document import OUTPUTS, add_output_options
from rightsizer.cli.output.report import REPORT_FORMATS
from rightsizer.cli.output.table import COLUMNS
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.report import FleetReport, ranked_head
from rightsizer.services.showback import BY_TEAM, Filters, GroupBy, filters_of, showback
from rightsizer.settings import PriceMode


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"expected between 0 and 600 seconds, got {text}")
    return value


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
    add_output_options(parser, (*OUTPUTS, "wide"), table=table)
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

    def kept(self, ranked: Callable[[], Iterable[Recommendation]]) -> Callable[[], Iterator[Recommendation]]:
        """What the filters keep of the recommendations `ranked()` gives, a new pass each call."""
        return lambda: (rec for rec in ranked() if self.filters.keeps(rec))

    def head(self, report: FleetReport, ranked: Callable[[], Iterable[Recommendation]]) -> FleetReport:
        """`apply` for a report that holds none of its recommendations (`ranked()` gives them, in order: the CLI's
        streamed analysis): the head of what the filters keep, its totals and showback those of what is kept, grouped
        as asked."""
        head = ranked_head(report, self.kept(ranked), self.group_by or BY_TEAM)
        return replace(head, filtered=self.filters.describe(), grouped=self.group_by is not None)

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
