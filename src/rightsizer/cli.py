"""`rightsizer analyze`: collect, analyse and print recommendations for one account.

Errors are one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NoReturn, TextIO

from rightsizer import __version__
from rightsizer.domain.models import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.services.formatting import shorten, sparkline, usd
from rightsizer.services.ports import SourceUnavailable
from rightsizer.services.report import FleetReport, report_json
from rightsizer.settings import ConfigError, PriceMode, Settings

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


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
            print(f"rightsizer: {label}...", file=self._stream)

    def advance(self, steps: int = 1) -> None:
        self._done = min(self._total, self._done + steps)
        if self._bar:
            self._draw()

    def warn(self, message: str) -> None:
        return None  # warnings travel in the report (table footer, JSON "warnings")

    def close(self) -> None:
        self._finish_line()

    def _draw(self) -> None:
        width = 30
        filled = int(width * self._done / self._total)
        bar = "#" * filled + "." * (width - filled)
        self._stream.write(f"\r{self._label:<28} [{bar}] {self._done}/{self._total}")
        self._stream.flush()

    def _finish_line(self) -> None:
        if self._bar and self._label:
            self._stream.write("\n")
            self._stream.flush()
        self._label = ""


class UsageError(Exception):
    """A malformed command line: reported as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rightsizer", description="Right-size AWS GPU, Inferentia and Trainium instances.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    analyze = commands.add_parser(
        "analyze",
        help="collect usage and print recommendations",
        description="Collect accelerator usage from CloudWatch and recommend right-sized instance types. "
        "Uses boto3's default credentials and honours AWS_ENDPOINT_URL.",
    )
    analyze.add_argument("--region", action="append", required=True, help="AWS region (repeatable)")
    analyze.add_argument("--lookback-days", type=int, default=14, help="days of CloudWatch history (default 14)")
    analyze.add_argument("--format", choices=("table", "json"), default="table")
    analyze.add_argument(
        "--prices",
        choices=[mode.value for mode in PriceMode],
        default=PriceMode.AUTO.value,
        help="auto: Price List API, falling back to the bundled snapshot (default)",
    )
    analyze.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    return parser


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        args = _parser().parse_args(argv)
    except UsageError as error:
        print(f"rightsizer: error: {error} (see rightsizer analyze --help)", file=err)
        return EXIT_USAGE
    regions = tuple(dict.fromkeys(args.region))
    try:
        settings = Settings(
            regions=regions,
            lookback_days=args.lookback_days,
            price_mode=PriceMode(args.prices),
            policy=Policy(lookback_days=args.lookback_days),
        )
    except ConfigError as error:
        print(f"rightsizer: error: {error}", file=err)
        return EXIT_USAGE

    # Imported here so `rightsizer --help` stays fast and works without AWS libraries configured.
    from rightsizer import bootstrap
    from rightsizer.adapters.aws.session import AwsSession, describe_aws_error, known_regions

    unknown = [region for region in regions if region not in known_regions()]
    if unknown:
        print(
            f"rightsizer: error: unknown region {', '.join(unknown)} (for example: us-east-1, eu-west-1)",
            file=err,
        )
        return EXIT_USAGE

    progress = TerminalProgress(err, bar=not args.no_progress and err.isatty())
    quiet_progress = None if args.no_progress else progress
    try:
        report = bootstrap.analyze(AwsSession(), regions, settings, datetime.now(UTC), quiet_progress)
    except bootstrap.RegionFailure as failure:
        progress.close()
        cause = failure.error
        message = str(cause) if isinstance(cause, SourceUnavailable) else describe_aws_error(cause, failure.region)
        print(f"rightsizer: error: {message}", file=err)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        progress.close()
        print("rightsizer: interrupted", file=err)
        return 130
    progress.close()
    if args.format == "json":
        json.dump(report_json(report), out, indent=2)
        out.write("\n")
    else:
        out.write(render_table(report, width=shutil.get_terminal_size((120, 40)).columns))
    return EXIT_OK


def _row(rec: Recommendation) -> list[str]:
    target = rec.target_type or "-"
    savings = rec.monthly_savings
    return [
        rec.instance_id,
        shorten(rec.instance_name, 20),
        rec.region,
        rec.instance_type,
        rec.finding.value,
        target,
        usd(rec.monthly_cost),
        usd(savings) if savings is not None else "n/a",
        rec.confidence.value,
        "yes" if rec.actionable else "no",
        sparkline(rec.evidence.daily_accelerator_mean) if rec.evidence.daily_accelerator_mean else "",
    ]


def render_table(report: FleetReport, width: int = 120) -> str:
    headers = [
        "INSTANCE",
        "NAME",
        "REGION",
        "TYPE",
        "FINDING",
        "TARGET",
        "NOW/MO",
        "SAVES/MO",
        "CONF",
        "ACT",
        f"{report.lookback_days} DAYS",
    ]
    rows = [_row(rec) for rec in report.recommendations]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    numeric = {6, 7}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    for rec, row in zip(report.recommendations, rows, strict=True):
        out.append(line(row))
        out.append("      " + shorten(rec.reasons[0] if rec.reasons else "", max(40, width - 6)))
    totals = report.totals
    out.append("")
    out.append(
        f"{totals.instances} instances, {usd(totals.monthly_cost)}/month. Savings available: "
        f"{usd(totals.monthly_savings)}/month ({usd(totals.actionable_savings)} one-click resizes)."
    )
    if totals.additional_cost:
        out.append(f"Upsizes recommended for performance would add {usd(totals.additional_cost)}/month.")
    counts = ", ".join(f"{name} {count}" for name, count in totals.by_finding.items() if count)
    out.append(f"Findings: {counts}.")
    for warning in report.warnings:
        out.append(f"warning: {warning}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
