"""demo-output/report.html: the daily report as one self-contained page (inline CSS and SVG; no script, no
font, nothing fetched): the Slack messages rendered from their Block Kit JSON, a savings chart, and per-host
utilisation over the look-back window, one line per GPU or NeuronCore, with the analyzer's thresholds drawn.

Built from the report's JSON (schema/report.schema.json), so a new field or finding shows up without changes
here: findings are labelled from their registry (domain/findings.py) and coloured in its order, money from the totals
function's categories.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rightsizer.domain.findings import FINDINGS, Finding
from rightsizer.domain.policy import Policy
from rightsizer.domain.usage import Series
from rightsizer.services.formatting import printable
from rightsizer.services.report import Category

PALETTE = ("#2563eb", "#db2777", "#16a34a", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#dc2626")
FINDING_COLORS = {finding: PALETTE[i % len(PALETTE)] for i, finding in enumerate(FINDINGS)}
CATEGORY_COLORS = {Category.SAVING: "#16a34a", Category.OTHER_OWNER: "#d97706", Category.UPSIZE: "#dc2626"}
EMOJI = {
    "warning": "⚠️",
    "thread": "🧵",
    "grey_exclamation": "❕",
    "white_check_mark": "✅",
    "hourglass_flowing_sand": "⏳",
    "no_entry_sign": "🚫",
    "zzz": "💤",
    "x": "❌",
    "leftwards_arrow_with_hook": "↩️",
}


@dataclass(frozen=True)
class UnitSeries:
    """One GPU's or NeuronCore's utilisation: hourly means, (epoch seconds, percent)."""

    label: str
    points: tuple[tuple[int, float], ...]


def _esc(value: Any) -> str:
    """Text from the report (tags, reasons, AWS messages) as HTML: escaped, and `printable`, so that newlines, tabs,
    bidi overrides and zero-width characters show as visible escapes instead of disguising a host."""
    return html.escape(printable(str(value)))


def hourly(series: Series) -> tuple[tuple[int, float], ...]:
    buckets: dict[int, list[float]] = defaultdict(list)
    for stamp, value in zip(series.timestamps, series.values, strict=True):
        buckets[stamp - stamp % 3600].append(value)
    return tuple((hour, sum(values) / len(values)) for hour, values in sorted(buckets.items()))


# ---------------------------------------------------------------------------------------------
# Slack Block Kit -> HTML


_TOKEN = re.compile(r"<([^<>|]+)(?:\|([^<>]+))?>")


def mrkdwn(text: str) -> str:
    """Slack's mrkdwn (links, mentions, *bold*, _italic_, `code`, ~strike~, :emoji:) as safe HTML. Line breaks are
    the message's own; every other control, bidi or zero-width character is shown as an escape (`printable`)."""
    text = printable(text, newlines=True)
    parts: list[str] = []
    last = 0
    for match in _TOKEN.finditer(text):
        parts.append(_inline(text[last : match.start()]))
        target, label = match.group(1), match.group(2)
        if target.startswith(("@", "#")):
            parts.append(f'<span class="mention">{html.escape(label or target)}</span>')
        else:
            parts.append(f'<a href="{html.escape(target)}">{html.escape(label or target)}</a>')
        last = match.end()
    parts.append(_inline(text[last:]))
    return "".join(parts).replace("\n", "<br>")


def _inline(text: str) -> str:
    text = html.escape(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"), quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])", r"<b>\1</b>", text)
    text = re.sub(r"(?<![\w_])_([^_\n]+)_(?![\w_])", r"<i>\1</i>", text)
    text = re.sub(r"(?<![\w~])~([^~\n]+)~(?![\w~])", r"<s>\1</s>", text)
    return re.sub(r":([a-z0-9_+-]+):", lambda m: EMOJI.get(m.group(1), m.group(0)), text)


def _text(node: Mapping[str, Any] | None) -> str:
    if not node:
        return ""
    raw = str(node.get("text", ""))
    return mrkdwn(raw) if node.get("type") == "mrkdwn" else _esc(raw)


def _block(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "header":
        return f'<div class="bk-header">{_text(block.get("text"))}</div>'
    if kind == "section":
        fields = "".join(f"<div>{_text(field)}</div>" for field in block.get("fields", []))
        body = f'<div class="bk-text">{_text(block.get("text"))}</div>' if block.get("text") else ""
        return (
            f'<div class="bk-section">{body}' + (f'<div class="bk-fields">{fields}</div>' if fields else "") + "</div>"
        )
    if kind == "context":
        return '<div class="bk-context">' + " ".join(_text(e) for e in block.get("elements", [])) + "</div>"
    if kind == "actions":
        buttons = [
            f'<span class="bk-button {_esc(e.get("style", ""))}">{_text(e.get("text"))}</span>'
            for e in block.get("elements", [])
            if e.get("type") == "button"
        ]
        return f'<div class="bk-actions">{"".join(buttons)}</div>'
    if kind == "divider":
        return "<hr>"
    return ""


def slack_message(message: Mapping[str, Any], *, reply: bool) -> str:
    blocks = "".join(_block(block) for block in message.get("blocks", []))
    who = '<div class="bk-author">GPU Rightsizer <span class="app">APP</span></div>'
    return f'<article class="bk-message{" reply" if reply else ""}">{who}{blocks}</article>'


# ---------------------------------------------------------------------------------------------
# charts (inline SVG)


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return ("-" if value < 0 else "") + f"${abs(value):,.2f}"


def _net(rec: Mapping[str, Any]) -> Any:
    """What the advice changes on the bill: net of reservations and plans (list price for older reports)."""
    net = rec.get("monthly_savings_net_usd")
    return rec.get("monthly_savings_usd") if net is None else net


def savings_chart(recommendations: Sequence[Mapping[str, Any]]) -> str:
    """A bar per host whose advice changes its bill (net of reservations and plans, as the report ranks),
    coloured by where the money goes in the totals."""
    rows = [r for r in recommendations if _net(r)]
    if not rows:
        return "<p>No advice changes the fleet's bill.</p>"
    widest = max(abs(_net(r)) for r in rows)
    bar, label_width, row_height = 560, 260, 26
    height = row_height * len(rows) + 10
    parts = [f'<svg class="chart" viewBox="0 0 {label_width + bar + 110} {height}" role="img" aria-label="savings">']
    for n, rec in enumerate(rows):
        y = 5 + n * row_height
        amount = _net(rec)
        length = max(2.0, bar * abs(amount) / widest)
        color = CATEGORY_COLORS.get(Category(rec["category"]), "#9ca3af")
        name = _esc(f"{rec['name'] or rec['instance_id']} ({rec['instance_type']})")
        parts.append(f'<text x="{label_width - 8}" y="{y + 16}" text-anchor="end">{name}</text>')
        parts.append(f'<rect x="{label_width}" y="{y + 3}" width="{length:.1f}" height="18" fill="{color}" rx="3"/>')
        parts.append(f'<text x="{label_width + length + 6:.1f}" y="{y + 16}">{_money(amount)}</text>')
    parts.append("</svg>")
    legend = " ".join(
        f'<span class="swatch" style="background:{color}"></span>{label}'
        for color, label in (
            (CATEGORY_COLORS[Category.SAVING], "saving"),
            (CATEGORY_COLORS[Category.OTHER_OWNER], "needs another owner (Auto Scaling group, other account)"),
            (CATEGORY_COLORS[Category.UPSIZE], "upsize (costs more)"),
        )
    )
    return "".join(parts) + f'<p class="legend">{legend}</p>'


@dataclass(frozen=True)
class Threshold:
    label: str
    percent: float


def thresholds(policy: Policy) -> tuple[Threshold, ...]:
    return (
        Threshold(f"idle: p99 below {policy.idle_util_pct:g}%", policy.idle_util_pct),
        Threshold(f"a target's p95 stays below {policy.target_max_util_pct:g}%", policy.target_max_util_pct),
        Threshold(f"pinned: median from {policy.saturated_util_pct:g}%", policy.saturated_util_pct),
    )


def utilisation_chart(units: Sequence[UnitSeries], start: datetime, end: datetime, lines: Sequence[Threshold]) -> str:
    width, height, left, right, top, bottom = 760, 190, 40, 210, 8, 24
    t0, t1 = start.timestamp(), end.timestamp()
    span = max(t1 - t0, 1.0)

    def x(epoch: float) -> float:
        return left + (epoch - t0) / span * (width - left - right)

    def y(percent: float) -> float:
        return top + (1 - min(max(percent, 0.0), 100.0) / 100) * (height - top - bottom)

    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="utilisation">']
    for percent in (0, 25, 50, 75, 100):
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(percent):.1f}" y2="{y(percent):.1f}"/>'
        )
        parts.append(f'<text class="axis" x="{left - 4}" y="{y(percent) + 4:.1f}" text-anchor="end">{percent}%</text>')
    day = start.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    while day < end:
        parts.append(
            f'<text class="axis" x="{x(day.timestamp()):.1f}" y="{height - 6}" text-anchor="middle">{day:%d}</text>'
        )
        day += timedelta(days=1)
    for line in lines:
        level = y(line.percent)
        parts.append(f'<line class="threshold" x1="{left}" x2="{width - right}" y1="{level:.1f}" y2="{level:.1f}"/>')
        parts.append(
            f'<text class="threshold-label" x="{width - right + 6}" y="{level + 4:.1f}">'
            f"{html.escape(line.label)}</text>"
        )
    for n, unit in enumerate(units):
        points = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in unit.points)
        color = PALETTE[n % len(PALETTE)]
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="1.2" points="{points}">'
            f"<title>{_esc(unit.label)}</title></polyline>"
        )
    parts.append("</svg>")
    legend = " ".join(
        f'<span class="swatch" style="background:{PALETTE[n % len(PALETTE)]}"></span>{_esc(unit.label)}'
        for n, unit in enumerate(units)
    )
    return "".join(parts) + f'<p class="legend">{legend}</p>'


# ---------------------------------------------------------------------------------------------
# the page


def _host(rec: Mapping[str, Any], units: Sequence[UnitSeries], start: datetime, end: datetime, policy: Policy) -> str:
    finding = Finding(rec["finding"])
    instance = _esc(rec["instance_id"])
    target = f" → {_esc(rec['target_type'])}" if rec["target_type"] else ""
    label = html.escape(FINDINGS[finding].label)
    badge = f'<span class="badge" style="background:{FINDING_COLORS[finding]}">{label}</span>'
    chart = (
        utilisation_chart(units, start, end, thresholds(policy))
        if units
        else f'<p class="nodata">No GPU or NeuronCore utilisation in CloudWatch ({_esc(rec["state"])} host).</p>'
    )
    reason = _esc(rec["reasons"][0]) if rec["reasons"] else ""
    why_not = (
        f'<p class="why-not">No one-click resize: {_esc(rec["not_actionable_reason"])}</p>'
        if rec["not_actionable_reason"]
        else ""
    )
    return (
        f'<section class="host" id="host-{instance}" data-instance="{instance}">'
        f"<h3>{_esc(rec['name'] or rec['instance_id'])} <code>{instance}</code> {badge}</h3>"
        f'<p class="facts"><code>{_esc(rec["instance_type"])}</code>{target} · {_esc(rec["region"])} · '
        f"{_esc(rec['account_id'])} · now {_money(rec['monthly_cost_usd'])}/month · saves "
        f"{_money(rec['monthly_savings_usd'])}/month · {_esc(rec['confidence'])} confidence</p>"
        f'<p class="reason">{reason}</p>{why_not}{chart}</section>'
    )


def _tiles(totals: Mapping[str, Any]) -> str:
    tiles = (
        ("Fleet", f"{_money(totals['monthly_cost_usd'])}/mo", f"{totals['instances']} instances"),
        (
            "Can be saved",
            f"{_money(totals['monthly_savings_usd'])}/mo",
            f"{totals['savings_recommendations']} recommendation(s)",
        ),
        (
            "With one click",
            f"{_money(totals['actionable_savings_usd'])}/mo",
            f"{totals['actionable_recommendations']} resize(s)",
        ),
        (
            "Needs another owner",
            f"{_money(totals['other_owner_savings_usd'])}/mo",
            f"{totals['other_owner_recommendations']} host(s)",
        ),
        ("Upsizes add", f"{_money(totals['additional_cost_usd'])}/mo", f"{totals['upsize_recommendations']} host(s)"),
    )
    return "".join(f'<div class="tile"><span>{a}</span><b>{b}</b><small>{c}</small></div>' for a, b, c in tiles)


def render(
    document: Mapping[str, Any],
    messages: Iterable[Mapping[str, Any]],
    series: Mapping[str, Sequence[UnitSeries]],
    *,
    window_start: datetime,
    window_end: datetime,
    policy: Policy | None = None,
) -> str:
    """The page, from the report JSON, the posted Slack messages (in order) and each host's unit series."""
    policy = policy or Policy(lookback_days=int(document["lookback_days"]))
    generated = datetime.fromisoformat(document["generated_at"]).astimezone(UTC)
    slack = "".join(slack_message(m, reply=bool(m.get("thread_ts"))) for m in messages)
    hosts = "".join(
        _host(rec, series.get(rec["instance_id"], ()), window_start, window_end, policy)
        for rec in document["recommendations"]
    )
    warnings = "".join(f"<li>{_esc(w)}</li>" for w in document["warnings"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GPU fleet report · {generated:%Y-%m-%d}</title>
<style>{STYLE}</style></head>
<body>
<header><h1>GPU fleet report · {generated:%Y-%m-%d %H:%M} UTC</h1>
<p>{document["lookback_days"]} days of CloudWatch data · generated by GPU Rightsizer's demo on a local AWS</p></header>
<div id="summary" class="tiles">{_tiles(document["totals"])}</div>
<h2>In Slack: the daily report</h2>
<div id="slack" class="slack">{slack}</div>
<h2>Savings by host</h2>
<div id="savings">{savings_chart(document["recommendations"])}</div>
<h2>Utilisation per host, {window_start:%d %b} to {window_end:%d %b}</h2>
<p>Hourly means per GPU or NeuronCore; dashed lines: the analyzer's thresholds.</p>
<div id="hosts">{hosts}</div>
{f'<h2>Warnings</h2><ul id="warnings">{warnings}</ul>' if warnings else ""}
</body></html>
"""


STYLE = (Path(__file__).with_name("report.css")).read_text()


# ---------------------------------------------------------------------------------------------
# reading the series through the product's own adapters


def unit_series(
    session: Any, document: Mapping[str, Any], now: datetime, lookback_days: int
) -> dict[str, tuple[UnitSeries, ...]]:
    """Per-unit utilisation of every host in the report, read with the collectors' EC2 and CloudWatch adapters."""
    from rightsizer import bootstrap
    from rightsizer.services.collect import lookback_window
    from rightsizer.settings import PriceMode, Settings

    window = lookback_window(now, lookback_days)
    groups: dict[tuple[str, str], set[str]] = defaultdict(set)
    for rec in document["recommendations"]:
        groups[(rec["account_id"], rec["region"])].add(rec["instance_id"])
    series: dict[str, tuple[UnitSeries, ...]] = {}
    for (account, region), wanted in sorted(groups.items()):
        settings = Settings(regions=(region,), lookback_days=lookback_days, price_mode=PriceMode.SNAPSHOT)
        readers = bootstrap.region_readers(session, account, region, settings)
        instances = [i for i in readers.fleet.accelerated_instances() if i.instance_id in wanted]
        specs = {
            **bootstrap.reference().legacy_specs,
            **{s.instance_type: s for s in readers.fleet.accelerated_specs()},
        }
        raw = readers.usage.fetch(instances, specs, window)
        for instance in instances:
            spec = specs.get(instance.instance_type)
            unit = spec.unit_name if spec else "GPU"
            devices = raw[instance.instance_id].devices if instance.instance_id in raw else ()
            series[instance.instance_id] = tuple(
                UnitSeries(f"{unit} {device.index}", hourly(device.utilization_avg))
                for device in devices
                if device.utilization_avg
            )
    return series
