"""CSV: the JSON document's recommendations, flattened (consolidation_* and evidence_* columns), money with two
decimals, and no cell a spreadsheet would evaluate as a formula.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, TextIO

from rightsizer.services.formatting import spreadsheet_text
from rightsizer.services.report import FleetReport, report_json

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
