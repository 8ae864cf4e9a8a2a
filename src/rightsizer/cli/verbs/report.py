"""`rightsizer report --stack NAME`: the report a deployed stack's bot ranked, read from its DynamoDB table: the same
recommendations and totals as the daily Slack report, without Slack.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TextIO

from rightsizer.cli.deployment import Deployment, aws_errors, open_deployment
from rightsizer.cli.errors import EXIT_OK, CommandFailed, UsageError, print_warnings
from rightsizer.cli.hosts import no_report
from rightsizer.cli.options import (
    Narrowing,
    Verb,
    add_connection_options,
    add_narrowing_options,
    add_report_outputs,
    add_stack_option,
)
from rightsizer.cli.output.document import Output
from rightsizer.cli.output.report import Page, html_target, write_page_file, write_report
from rightsizer.services.report import FleetReport, build_report


def _report_options(parser: argparse.ArgumentParser) -> None:
    add_stack_option(parser, "the report its daily pipeline ranked (required)")
    parser.set_defaults(all_regions=False)
    parser.add_argument("--region", action="append", metavar="REGION", help="the stack's region (default as analyze)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="every latest recommendation (the daily report lists the ranking's head, the whole fleet's totals)",
    )
    add_report_outputs(parser, "the ranking, the fleet's totals under it")
    add_narrowing_options(parser)
    add_connection_options(parser)


def _report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not args.stack:
        raise UsageError("report reads a deployment: pass --stack NAME (`rightsizer analyze` analyses live)")
    output = Output.of(args, out)
    page_file = html_target(args)
    narrowing = Narrowing.of(args)
    deployment = open_deployment(args)
    now = datetime.now(UTC)
    # Filters and groups other than the ranking's teams are exact only over every latest recommendation.
    report, hidden = stored_report(deployment, now, every=args.all or narrowing.reads_everything)
    report = narrowing.apply(report)
    page = Page()  # the table keeps no per-GPU series: the page draws each host's daily means
    write_report(report, output, out, page=page)
    out.flush()
    if page_file is not None:
        write_page_file(page_file, report, page)
    notes = [f"{hidden} recommendation(s) snoozed or dismissed in Slack are listed too (Slack's report hides them)"]
    print_warnings(err, [*report.warnings, *(notes if hidden else [])])
    return EXIT_OK


def stored_report(deployment: Deployment, now: datetime, *, every: bool = False) -> tuple[FleetReport, int]:
    """The report the bot would post (services.ranking: the ranking's head, the fleet's totals), or with `every`
    the latest recommendations in full, as the report Lambda's export builds it; and how many people hid."""
    from rightsizer.services.approvals import hidden_by
    from rightsizer.services.ranking import ranked_report

    settings, store = deployment.settings, deployment.store
    scope, tag = settings.report_scope, settings.managed_tag_key
    with aws_errors(deployment.stack.region):
        ranked = ranked_report(store, now, settings.lookback_days, scope, tag)
        report = ranked.report
        if every:
            report = build_report(
                store.latest_recommendations(), now, settings.lookback_days, scope=scope, managed_tag_key=tag
            )
    nothing_yet = not report.recommendations if every else report.fleet is None  # no ranking: never analysed
    if nothing_yet:
        raise CommandFailed(no_report(deployment))
    hidden = sum(1 for rec in report.recommendations if hidden_by(rec, ranked.decisions, now))
    return report, hidden


VERB = Verb(
    "report",
    "what a deployed stack decided (--stack), as table, json, csv or html",
    "The report a deployed stack's bot ranked, read from its DynamoDB table (the stack's TableName output): "
    "the same recommendations and totals as the daily Slack report, without Slack.",
    _report_options,
    _report,
)
