"""The page's two charts as inline SVG: savings by host, and each host's GPU (or NeuronCore) use over the look-back
window with the analyzer's thresholds.

Drawn in a 340-unit wide view box, about its size on a 390 px phone and at most half as large again on a desktop
(report.css), so that 11-unit text stays readable. Colours are keys (theme.py), set through CSS classes, so one
chart follows the reader's light or dark scheme. Every text is escaped (Markup.format) and stays inside the view box
(the browser test measures them in Chromium).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from markupsafe import Markup

from rightsizer.adapters.html.theme import colour_class
from rightsizer.domain.policy import Policy
from rightsizer.services.formatting import printable

WIDTH = 340
# What a savings bar's colour says: where the money goes in the totals (services.report.Category). The page's legend
# and the Slack picture's.
CATEGORY_LEGEND = (
    ("saving", "saving"),
    ("other_owner", "needs another owner (node or Auto Scaling group, Spot, other account)"),
    ("upsize", "upsize (costs more)"),
)
SAVINGS_ROWS = 15  # bars drawn; the table below the chart lists every host
LABEL_CHARS = 48  # a bar's label past this is cut (its <title> keeps it whole)


def money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return ("-" if value < 0 else "") + f"${abs(value):,.2f}"


def bill(amount: float | None) -> str:
    """What advice does to the bill a month, in words that never read "saves -$203.52": "$2,955.04", or "costs
    $203.52 more"."""
    if amount is not None and amount < 0:
        return f"costs {money(-amount)} more"
    return money(amount)


def net(rec: Mapping[str, Any]) -> float | None:
    """What the advice changes on the bill: net of reservations and plans (list price for older reports)."""
    value = rec.get("monthly_savings_net_usd")
    return rec.get("monthly_savings_usd") if value is None else value


def host_label(rec: Mapping[str, Any]) -> str:
    """A host by its Name tag (else its id) and its change, as it may be shown (`printable`: no newline, bidi
    override or zero-width character from a tag reaches the picture)."""
    target = f" → {rec['target_type']}" if rec.get("target_type") else ""
    return printable(f"{rec.get('name') or rec['instance_id']} ({rec['instance_type']}{target})")


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dom_id(*parts: object) -> str:
    """An HTML id from report text (resource ids may hold '/' or ':')."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", "-".join(str(p) for p in parts))


def savings_rows(recommendations: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Hosts whose advice changes the bill, in the report's order (ranked by net savings)."""
    return [rec for rec in recommendations if net(rec)]


def savings_chart(recommendations: Sequence[Mapping[str, Any]], limit: int = SAVINGS_ROWS) -> Markup:
    """A bar per host whose advice changes its bill (net of reservations and plans, as the report ranks), coloured
    by where the money goes in the totals; the first `limit` hosts. Empty when no advice changes a bill."""
    rows = savings_rows(recommendations)[:limit]
    if not rows:
        return Markup("")
    widest = max(abs(net(r) or 0.0) for r in rows) or 1.0
    row, bar_max = 36, 240
    pad = 2  # a glyph may reach past its text's start (a "w" does, by a unit)
    height = row * len(rows) + 4
    parts = [
        Markup(
            '<svg class="chart savings" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
            'aria-labelledby="savings-chart-title"><title id="savings-chart-title">Monthly savings of the first {n} '
            "hosts, net of reservations and Savings Plans: {top}</title>"
        ).format(
            w=WIDTH,
            h=height,
            n=len(rows),
            top="; ".join(f"{host_label(rec)} {money(net(rec))}" for rec in rows[:3]),
        )
    ]
    for n, rec in enumerate(rows):
        y = 2 + n * row
        amount = net(rec) or 0.0
        length = max(2.0, bar_max * abs(amount) / widest)
        category = str(rec.get("category"))
        key = category if category in ("saving", "other_owner", "upsize") else "none"
        label = host_label(rec)
        parts.append(
            Markup(
                '<g class="bar"><title>{full}: {said} a month</title>'
                '<text class="label" x="{pad}" y="{ty}">{label}</text>'
                '<rect class="{colour}" x="{pad}" y="{by}" width="{length:.1f}" height="13" rx="2"/>'
                '<text class="amount" x="{ax:.1f}" y="{ay}">{amount}</text></g>'
            ).format(
                full=label,
                said=f"saves {money(amount)}" if amount >= 0 else f"costs {money(-amount)} more",
                amount=f"{money(amount)}/mo" if amount >= 0 else f"costs {money(-amount)}/mo more",
                ty=y + 12,
                label=shorten(label, LABEL_CHARS),
                colour=colour_class(key),
                by=y + 17,
                length=length,
                ax=pad + length + 4,
                pad=pad,
                ay=y + 28,
            )
        )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


# ---------------------------------------------------------------------------------------------
# GPU use per host


@dataclass(frozen=True)
class Threshold:
    short: str  # drawn on the chart
    label: str  # in the text above the charts
    percent: float


def thresholds(policy: Policy) -> tuple[Threshold, ...]:
    """The analyzer's lines a unit's use is read against (domain/policy.py)."""
    return (
        Threshold(
            f"idle {policy.idle_util_pct:g}%",
            f"idle: every unit's p99 below {policy.idle_util_pct:g}%",
            policy.idle_util_pct,
        ),
        Threshold(
            f"target {policy.target_max_util_pct:g}%",
            f"target: after a downsize, p95 at most {policy.target_max_util_pct:g}%",
            policy.target_max_util_pct,
        ),
    )


def limiting_thresholds(policy: Policy) -> dict[str, tuple[Threshold, ...]]:
    """The lines each measure is read against: utilisation the idle and target ones, GPU memory its out-of-memory
    line, the host's CPU its CPU-bound line (domain/policy.py)."""
    return {
        "use": thresholds(policy),
        "memory": (
            Threshold(
                f"out of memory {policy.oom_memory_pct:g}%",
                f"out of memory: a peak at {policy.oom_memory_pct:g}% of memory.total that rises with the load",
                policy.oom_memory_pct,
            ),
        ),
        "cpu": (
            Threshold(
                f"CPU-bound {policy.cpu_saturated_pct:g}%",
                f"CPU-bound: CPU p95 at {policy.cpu_saturated_pct:g}% or more",
                policy.cpu_saturated_pct,
            ),
        ),
    }


@dataclass(frozen=True)
class Line:
    label: str
    points: Sequence[tuple[float, float]]  # (epoch seconds, percent)
    period: int  # seconds between points: a longer gap breaks the line
    colour: str  # a theme key: s0..s7
    dash: str = ""


# The plot area inside the 340 x 186 view box; the axes' labels and titles around it.
_LEFT, _RIGHT, _TOP, _BOTTOM, _HEIGHT = 44, 334, 8, 142, 186


def _path(line: Line, x: Callable[[float], float], y: Callable[[float], float], t0: float, t1: float) -> str:
    commands: list[str] = []
    previous: float | None = None
    for epoch, percent in line.points:
        if not t0 <= epoch <= t1 or not math.isfinite(percent):
            previous = None
            continue
        move = previous is None or epoch - previous > 1.5 * line.period
        commands.append(f"{'M' if move else 'L'}{x(epoch):.1f} {y(percent):.1f}")
        previous = epoch
    return "".join(commands)


def _date_ticks(start: datetime, end: datetime, x: Callable[[float], float]) -> list[Markup]:
    """A tick at each UTC midnight; a label ("30 Nov") every few days, at least 44 units apart, none past the ends."""
    days = max((end - start).total_seconds() / 86400, 1.0)
    every = max(1, math.ceil(44 / ((_RIGHT - _LEFT) / days)))
    day = start.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    parts: list[Markup] = []
    n = 0
    while day < end:
        at = x(day.timestamp())
        parts.append(
            Markup('<line class="tick" x1="{v:.1f}" x2="{v:.1f}" y1="{b}" y2="{e}"/>').format(
                v=at, b=_BOTTOM, e=_BOTTOM + 4
            )
        )
        if n % every == 0 and _LEFT + 18 <= at <= _RIGHT - 18:
            parts.append(
                Markup('<text class="axis" x="{v:.1f}" y="{y}" text-anchor="middle">{d}</text>').format(
                    v=at, y=_BOTTOM + 16, d=f"{day.day} {day:%b}"
                )
            )
        day += timedelta(days=1)
        n += 1
    return parts


def utilisation_chart(
    lines: Sequence[Line],
    start: datetime,
    end: datetime,
    limits: Sequence[Threshold],
    *,
    chart_id: str,
    title: str,
    unit_name: str = "GPU",
    axis: str = "",
) -> Markup:
    """Use from 0 to 100 % (the y axis) over the window's dates in UTC (the x axis), a line per unit, the thresholds
    dashed and labelled. `title` is what a screen reader says for the chart."""
    t0, t1 = start.timestamp(), end.timestamp()
    span = max(t1 - t0, 1.0)

    def x(epoch: float) -> float:
        return _LEFT + (min(max(epoch, t0), t1) - t0) / span * (_RIGHT - _LEFT)

    def y(percent: float) -> float:
        return _TOP + (1 - min(max(percent, 0.0), 100.0) / 100) * (_BOTTOM - _TOP)

    parts = [
        Markup(
            '<svg class="chart utilisation" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
            'aria-labelledby="{id}-title"><title id="{id}-title">{title}</title>'
        ).format(w=WIDTH, h=_HEIGHT, id=chart_id, title=title)
    ]
    for percent in (0, 25, 50, 75, 100):
        level = y(percent)
        parts.append(
            Markup(
                '<line class="grid" x1="{l}" x2="{r}" y1="{v:.1f}" y2="{v:.1f}"/>'
                '<text class="axis" x="{tx}" y="{ty:.1f}" text-anchor="end">{p}%</text>'
            ).format(l=_LEFT, r=_RIGHT, v=level, tx=_LEFT - 4, ty=level + 4, p=percent)
        )
    parts.append(
        Markup(
            '<text class="axis-title" transform="rotate(-90)" x="{x}" y="11" text-anchor="middle">{a}</text>'
        ).format(x=-(_TOP + _BOTTOM) / 2, a=axis or f"{unit_name} use (%)")
    )
    parts.extend(_date_ticks(start, end, x))
    parts.append(
        Markup('<text class="axis-title" x="{x}" y="{y}" text-anchor="middle">date (UTC)</text>').format(
            x=(_LEFT + _RIGHT) / 2, y=_HEIGHT - 4
        )
    )
    for line in lines:
        dash = Markup(' stroke-dasharray="{}"').format(line.dash) if line.dash else ""
        parts.append(
            Markup('<path class="series {c}" d="{d}"{dash}><title>{t}</title></path>').format(
                c=colour_class(line.colour), d=_path(line, x, y, t0, t1), dash=dash, t=line.label
            )
        )
    # Over the lines, so that a busy GPU's line does not hide them; the label sits above its line, at the right.
    for limit in limits:
        level = y(limit.percent)
        parts.append(
            Markup(
                '<line class="threshold" x1="{l}" x2="{r}" y1="{v:.1f}" y2="{v:.1f}"/>'
                '<text class="threshold-label" x="{tx}" y="{ty:.1f}" text-anchor="end">{s}</text>'
            ).format(l=_LEFT, r=_RIGHT, v=level, tx=_RIGHT - 2, ty=level - 3, s=limit.short)
        )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def swatch(colour: str, dash: str = "") -> Markup:
    """A legend's sample of a line (colour: a theme key)."""
    extra = Markup(' stroke-dasharray="{}"').format(dash) if dash else ""
    return Markup(
        '<svg class="swatch" viewBox="0 0 22 10" width="22" height="10" aria-hidden="true">'
        '<line class="{}" x1="0" x2="22" y1="5" y2="5"{}/></svg>'
    ).format(colour_class(colour), extra)


# ---------------------------------------------------------------------------------------------
# The fleet's trend, run by run


def _thousands(value: float) -> str:
    return f"${value / 1000:,.0f}k" if value >= 10_000 else money(value).removesuffix(".00")


def trend_chart(points: Sequence[Mapping[str, Any]], *, chart_id: str = "trend") -> Markup:
    """The fleet's waste (list prices) and the net savings available, one point per daily run (the report's
    `since_last_time.trend`, oldest first), from $0; empty below two runs."""
    if len(points) < 2:
        return Markup("")
    height, left, right, top, bottom = 150, 52, 334, 10, 118
    top_value = max(max(float(p["waste_usd"]), float(p["net_savings_usd"])) for p in points) or 1.0
    step = (right - left) / (len(points) - 1)

    def y(value: float) -> float:
        return bottom - value / top_value * (bottom - top)

    waste = " ".join(
        f"{'M' if n == 0 else 'L'}{left + n * step:.1f} {y(float(p['waste_usd'])):.1f}" for n, p in enumerate(points)
    )
    net_path = " ".join(
        f"{'M' if n == 0 else 'L'}{left + n * step:.1f} {y(float(p['net_savings_usd'])):.1f}"
        for n, p in enumerate(points)
    )
    first, last = points[0], points[-1]
    title = (
        f"Waste and net savings available over the last {len(points)} runs, {first['run']} to {last['run']}: waste "
        f"from {money(first['waste_usd'])} to {money(last['waste_usd'])} a month, net savings from "
        f"{money(first['net_savings_usd'])} to {money(last['net_savings_usd'])}."
    )
    parts = [
        Markup(
            '<svg class="chart trend" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
            'aria-labelledby="{id}-title"><title id="{id}-title">{t}</title>'
        ).format(w=WIDTH, h=height, id=chart_id, t=title)
    ]
    for share in (0.0, 0.5, 1.0):
        level = y(top_value * share)
        parts.append(
            Markup(
                '<line class="grid" x1="{l}" x2="{r}" y1="{v:.1f}" y2="{v:.1f}"/>'
                '<text class="axis" x="{tx}" y="{ty:.1f}" text-anchor="end">{label}</text>'
            ).format(l=left, r=right, v=level, tx=left - 4, ty=level + 4, label=_thousands(top_value * share))
        )
    for x, anchor, run in ((left, "start", first["run"]), (right, "end", last["run"])):
        parts.append(
            Markup('<text class="axis" x="{x}" y="{y}" text-anchor="{a}">{run}</text>').format(
                x=x, y=bottom + 16, a=anchor, run=str(run)
            )
        )
    for path, key, label in ((waste, "waste", "waste"), (net_path, "saving", "net savings")):
        parts.append(
            Markup('<path class="series {c}" d="{d}"><title>{t}</title></path>').format(
                c=colour_class(key), d=path, t=label
            )
        )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)
