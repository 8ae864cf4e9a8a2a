"""The table after --query: rows and columns of whatever the query returned."""

from __future__ import annotations

import json
from typing import Any

from rightsizer.services.formatting import printable


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict | list):
        return printable(json.dumps(value, separators=(",", ":")))
    if isinstance(value, bool):
        return "true" if value else "false"
    return printable(str(value))


def data_table(data: Any, width: int | None = None) -> str:
    """A plain table of a query's result: objects are rows (their keys the header), lists of lists rows without a
    header, an object alone a KEY/VALUE list, a scalar itself. Cut to `width` only on a terminal."""
    header: list[str] | None
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        header = list(dict.fromkeys(key for item in data for key in item))
        rows = [[_cell(item.get(key)) for key in header] for item in data]
    elif isinstance(data, list):
        header = None
        rows = [[_cell(v) for v in item] if isinstance(item, list) else [_cell(item)] for item in data]
    elif isinstance(data, dict):
        header = ["KEY", "VALUE"]
        rows = [[printable(str(key)), _cell(value)] for key, value in data.items()]
    else:
        return f"{_cell(data)}\n"
    if not rows:
        return ""
    columns = max(len(row) for row in [*rows, *([header] if header else [])])
    grid = [row + [""] * (columns - len(row)) for row in ([header] if header else []) + rows]
    widths = [max(len(row[i]) for row in grid) for i in range(columns)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in grid]
    if header:
        lines.insert(1, "  ".join("-" * w for w in widths))
    if width is not None:
        lines = [line if len(line) <= width else line[: max(0, width - 1)] + "…" for line in lines]
    return "\n".join(lines) + "\n"
