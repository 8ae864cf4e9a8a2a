"""`rightsizer analyze`: collect usage, analyse it and print the recommendations, as a table, json, text, yaml, csv or
the report page (html), narrowed and grouped as asked.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from rightsizer.cli import analysis
from rightsizer.cli.errors import EXIT_OK, print_warnings
from rightsizer.cli.options import (
    Narrowing,
    Verb,
    add_connection_options,
    add_narrowing_options,
    add_report_outputs,
    add_where_options,
)
from rightsizer.cli.output.document import Output
from rightsizer.cli.output.report import Page, html_target, write_page_file, write_ranked_json, write_report


def _analyze_options(parser: argparse.ArgumentParser) -> None:
    add_where_options(parser)
    add_report_outputs(parser, "sorted by savings, the totals under it")
    add_narrowing_options(parser)
    add_connection_options(parser)


def _analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    output = Output.of(args, out)  # --output, --format, --query and --color are checked before any AWS call
    page_file = html_target(args)
    narrowing = Narrowing.of(args)
    # The JSON document alone (no --query, no page) is written as its recommendations are read back from a temporary
    # file: memory does not grow with the fleet. The other outputs hold the report in memory.
    streamed = output.format == "json" and output.query is None and page_file is None
    live = analysis.live_report(
        args,
        err,
        color=output.color,
        keep_series=output.format == "html" or page_file is not None,
        stream=streamed,
    )
    if live.advice is not None:
        with live.advice as advice:
            write_ranked_json(narrowing.head(live.report, advice.ranked), narrowing.kept(advice.ranked)(), out)
    else:
        page = Page(series=live.series)
        report = narrowing.apply(live.report)
        write_report(report, output, out, page=page)
        if page_file is not None:
            out.flush()
            write_page_file(page_file, report, page)
    out.flush()
    print_warnings(err, live.warnings)
    return EXIT_OK


VERB = Verb(
    "analyze",
    "collect usage and print recommendations",
    "Collect accelerator usage from CloudWatch and recommend right-sized instance types. "
    "Credentials come from boto3's default chain (or --profile); AWS_ENDPOINT_URL is honoured. "
    "A region or account that cannot be read is a warning; the others are still reported.",
    _analyze_options,
    _analyze,
)
