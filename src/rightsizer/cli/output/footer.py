"""The totals under a report's table, in the words of the Slack report."""

from __future__ import annotations

import textwrap

from rightsizer.cli.output.document import DEFAULT_COLUMNS
from rightsizer.cli.output.paint import NO_PAINT, Paint
from rightsizer.services.report import FleetReport, count_sentence, money_sentences, scope_sentence


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
