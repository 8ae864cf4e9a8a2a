"""`--group-by`: the showback table, a line per group (its spend, the waste in it, its net savings) and the resources
behind those numbers under it; then the totals.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from rightsizer.cli.output.footer import footer_lines
from rightsizer.cli.output.paint import NO_PAINT, Paint
from rightsizer.services.formatting import printable, shorten, usd
from rightsizer.services.report import FleetReport
from rightsizer.services.showback import Showback, host_words

SHOWBACK_HEADERS = ("RESOURCES", "SPEND/MO", "WASTE/MO", "NET SAVINGS/MO")


def render_showback(report: FleetReport, grouped: Showback, width: int | None, paint: Paint = NO_PAINT) -> str:
    """`--group-by`: a line per group (its spend, the waste in it, the net savings its advice makes available), the
    resources behind those numbers under it, largest first; then the totals."""
    head = grouped.by.name.upper()
    rows = [
        (
            printable(group.key),
            str(group.resources),
            usd(group.spend) + ("*" if group.unpriced else ""),
            usd(group.waste),
            usd(group.net_savings),
        )
        for group in grouped.groups
    ]
    widths = [max(len(text) for text in column) for column in zip((head, *SHOWBACK_HEADERS), *rows, strict=True)]

    def line(cells: Sequence[str], style: str = "") -> str:
        text = "  ".join(
            cell.ljust(size) if n == 0 else cell.rjust(size)
            for n, (cell, size) in enumerate(zip(cells, widths, strict=True))
        )
        return paint(style, shorten(text, width) if width is not None else text)

    out = [line((head, *SHOWBACK_HEADERS), "bold"), line(["-" * size for size in widths])]
    for group, row in zip(grouped.groups, rows, strict=True):
        out.append(line(row))
        behind = ", ".join(printable(host_words(host)) for host in group.hosts)
        more = group.resources - len(group.hosts)
        if behind:
            text = f"behind it: {behind}" + (f" ({more} more without savings or not listed)" if more > 0 else "")
            wrapped = textwrap.wrap(text, max(20, width - 6)) if width is not None else [text]
            out.extend("      " + paint("dim", piece) for piece in wrapped)
    if any(group.unpriced for group in grouped.groups):
        out.append("* some of the group's resources have no price: their cost is not in SPEND/MO")
    out.append("")
    out.extend(footer_lines(report, width, paint))
    return "\n".join(out) + "\n"
