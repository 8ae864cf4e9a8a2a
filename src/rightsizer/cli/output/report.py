"""A report's outputs, one writer per format: the table for people, the JSON document (and text, yaml, --query),
csv for spreadsheets and the report page (html), to stdout or to the file of --html.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rightsizer.cli.errors import CommandFailed, UsageError
from rightsizer.cli.output.csv_rows import write_csv
from rightsizer.cli.output.document import JSON_INDENT, OUTPUTS, TABLES, Output, table_width, write_document
from rightsizer.cli.output.paint import Paint
from rightsizer.cli.output.table import Charset, render_table
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.report import FleetReport, recommendation_json, report_json

if TYPE_CHECKING:
    from rightsizer.adapters.html.series import UnitSeries


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

    write_document(report_json(report), output, out, table=table)


Writer = Callable[[FleetReport, Output, TextIO, Page], None]
WRITERS: dict[str, Writer] = {
    **dict.fromkeys((*OUTPUTS, *TABLES), _document),
    "csv": lambda report, output, out, page: write_csv(report, out),
    "html": _html,
}


def write_ranked_json(head: FleetReport, ranked: Iterable[Recommendation], out: TextIO) -> None:
    """`--output json` of a report whose recommendations are read back one at a time (`head` holds none of them: see
    services/report.py's `ranked_head`): the bytes `write_report` writes of the report holding them, each
    recommendation written as it is read. `json.dump` with an indent writes an object nested n levels deep as
    `json.dumps` writes it alone, each line after its first indented n levels more; JSON text has no raw newline in a
    string, so indenting after each newline is exact."""
    document = json.dumps(report_json(head), indent=JSON_INDENT)
    before, marker, after = document.partition(f'\n{_NESTED}"recommendations": [],')
    if not marker:
        raise ValueError("the head of a ranked report must hold no recommendation")
    out.write(f'{before}\n{_NESTED}"recommendations": ')
    scope, tag_key, opening = head.action_scope, head.managed_tag_key, "["
    item = "\n" + _NESTED * 2
    for rec in ranked:
        text = json.dumps(recommendation_json(rec, scope, tag_key), indent=JSON_INDENT)
        out.write(opening + item + text.replace("\n", item))
        opening = ","
    out.write("[]," if opening == "[" else f"\n{_NESTED}],")
    out.write(after + "\n")


_NESTED = " " * JSON_INDENT  # one level of the document's indent


def write_report(report: FleetReport, output: Output | str, out: TextIO, *, page: Page = Page()) -> None:
    """`report` as the output says: table, json, text, yaml (after any --query), csv or html."""
    chosen = output if isinstance(output, Output) else Output(output, width=table_width(out))
    WRITERS[chosen.format](report, chosen, out, page)


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
