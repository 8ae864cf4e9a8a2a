"""The report's table for people: as many columns as the terminal allows (COLUMNS, else its width), then a reason line
under each host. Written to a file or a pipe it has no width: every column, every value whole. `--output wide` adds
the columns a terminal's table leaves out and cuts nothing; `--columns` picks them. `--group-by` prints the showback
instead (showback.py); the totals under both are footer.py's.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from rightsizer.cli.errors import UsageError
from rightsizer.cli.output.document import DEFAULT_COLUMNS
from rightsizer.cli.output.footer import footer_lines
from rightsizer.cli.output.paint import NO_PAINT, Paint
from rightsizer.cli.output.showback import render_showback
from rightsizer.domain.findings import FINDINGS, Severity
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.formatting import (
    ASCII_BARS,
    ELLIPSIS,
    SPARK_BARS,
    printable,
    shorten,
    shorten_middle,
    sparkline,
    usd,
)
from rightsizer.services.report import FleetReport, not_actionable_reason


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


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Recommendation, Charset, FleetReport], str]
    numeric: bool = False
    style: Callable[[Recommendation, str], str] = lambda rec, text: ""  # its colour (paint.ANSI), if any
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
