"""The report page (rightsizer.adapters.html): valid, self-contained HTML from the report object, with charts that can
be read (axes, units, thresholds, a legend, colours with contrast in both schemes), Slack's emoji as emoji, every
resource kind in the table, and the savings picture for Slack. The browser test (tests/integration/
test_report_page.py) opens the same sample in Chromium."""

from __future__ import annotations

import inspect
import io
import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import html5lib  # type: ignore[import-untyped]
import pytest

from rightsizer.adapters.html import blocks, page, png, series, svg, theme
from rightsizer.adapters.html.series import UnitSeries, UnitSeriesTap
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import RESOURCES, ResourceKind
from rightsizer.domain.usage.series import DeviceSeries, RawUsage, Series
from rightsizer.services.ports import UsageSource, Window
from rightsizer.services.report import build_report, money_sentences, report_json
from tests.factories import catalog, instance
from tests.unit.report_page_sample import DAYS, FORGED, NOW, Sample, recommendation, sample, wave

SRC = Path(__file__).resolve().parents[2] / "src" / "rightsizer"


@pytest.fixture(scope="module")
def the_sample() -> Sample:
    return sample()


@pytest.fixture(scope="module")
def html(the_sample: Sample) -> str:
    return the_sample.html()


@pytest.fixture(scope="module")
def tree(html: str) -> ET.Element:
    parsed: ET.Element = html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False)
    for element in parsed.iter():  # SVG's elements by their local names too
        element.tag = str(element.tag).rsplit("}", 1)[-1]
    return parsed


def classes(element: ET.Element) -> list[str]:
    return element.get("class", "").split()


def find_class(root: ET.Element, tag: str, name: str) -> list[ET.Element]:
    return [e for e in root.iter(tag) if name in classes(e)]


def text_of(element: ET.Element) -> str:
    return "".join(element.itertext())


def card(tree: ET.Element, instance_id: str) -> ET.Element:
    (found,) = [e for e in find_class(tree, "section", "host") if e.get("data-instance") == instance_id]
    return found


# ---------------------------------------------------------------------------------------------
# the public API


def test_the_report_page_draws_the_deployments_thresholds_and_names_its_source(the_sample: Sample) -> None:
    policy = Policy(idle_util_pct=3.0, target_max_util_pct=70.0)

    html = page.render_report(the_sample.report, series=the_sample.series, policy=policy, source="the daily report")

    assert "idle 3%" in html and "target 70%" in html and "target 80%" not in html
    assert "the daily report" in html
    assert next(iter(inspect.signature(png.savings_png).parameters)) == "recommendations"
    assert next(iter(inspect.signature(png.alt_text).parameters)) == "document"


def test_the_page_is_rendered_from_the_report_document(the_sample: Sample, html: str) -> None:
    report = the_sample.report
    sentences = money_sentences(report.totals, managed_tag_key=report.managed_tag_key)
    scope = "Scope: one click counted in account 123456789012, any region."
    count = (
        "7 EC2 hosts and 2 other resources (1 SageMaker endpoint variant, 1 SageMaker notebook instance) costing "
        "$21,968.74/month; 2 node groups advised as a whole (their nodes are among the hosts)."
    )

    assert html == page.render(
        report_json(report),
        series=the_sample.series,
        slack_messages=the_sample.messages,
        sentences=[count, *sentences, scope],
    )
    assert '<p class="sentence">$16,000.00/month can be saved across 5 recommendation(s)' in html
    assert f'<p class="sentence">{scope}</p>' in html, "the totals name where they count one click"


# ---------------------------------------------------------------------------------------------
# valid, self-contained, accessible


def test_the_page_is_valid_html_to_the_strict_parser(html: str) -> None:
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    parser.parse(html)  # raises ParseError on the first error

    assert parser.errors == []


def test_an_empty_report_is_valid_too() -> None:
    html = page.render_report(build_report([], NOW, DAYS))

    html5lib.HTMLParser(strict=True).parse(html)
    assert "No GPU, Inferentia or Trainium resource in the report." in html
    assert "No advice changes the fleet's bill." in html


def test_the_page_is_self_contained_without_script(html: str, tree: ET.Element) -> None:
    assert not list(tree.iter("script")) and not list(tree.iter("link")) and not list(tree.iter("img"))
    assert not [e for e in tree.iter() if e.get("src") or e.get("srcset") or e.tag in ("iframe", "object", "embed")]
    assert "url(" not in html and "@import" not in html and "@font-face" not in html
    assert not [e for e in tree.iter() if any(name.startswith("on") for name in e.attrib)]  # no event handlers


def test_a_name_tag_with_markup_shows_as_text(html: str, tree: ET.Element, the_sample: Sample) -> None:
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in html
    (forged,) = [rec for rec in the_sample.report.recommendations if rec.instance_name == FORGED]
    assert FORGED in text_of(card(tree, forged.instance_id).find("h3"))  # type: ignore[arg-type]
    # ...and the warnings and failures, which quote AWS and the report's text, likewise
    assert "CloudWatch throttled &lt;b&gt;twice&lt;/b&gt; &amp; gave up" in html
    assert "cannot assume &lt;role&gt;" in html


def test_hidden_characters_in_report_text_show_as_escapes() -> None:
    forged = "web-1\ni-dead\t\u202etxt.exe\u200b"
    rec = replace(recommendation(1, name=forged), reasons=("busy\u2066 until\u2069 noon",))
    report = build_report([rec], NOW, DAYS, ["could not be read:\n<b>500</b>\u202e"])
    message = {"blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*top*\n`gpu\u202e1`"}}]}
    start = NOW - timedelta(days=DAYS)
    html = page.render_report(report, series={rec.instance_id: (wave(0, 24, start),)}, slack_messages=[message])

    for char in ("\u202e", "\u200b", "\u2066", "\u2069", "\t"):
        assert char not in html, f"U+{ord(char):04X}"
    assert html.count("web-1\\ni-dead\\t\\u202etxt.exe\\u200b") >= 4  # card, table, savings bar, chart title
    assert "busy\\u2066 until\\u2069 noon" in html and "could not be read:\\n&lt;b&gt;500&lt;/b&gt;\\u202e" in html
    assert "<b>top</b><br><code>gpu\\u202e1</code>" in html  # the message's own line break stays
    assert "\u202e" not in png.alt_text(report_json(report))


def test_accessibility_basics(tree: ET.Element) -> None:
    assert tree.get("lang") == "en"
    headings = [int(e.tag[1]) for e in tree.iter() if re.fullmatch(r"h[1-6]", str(e.tag))]
    assert headings.count(1) == 1 and headings[0] == 1
    assert all(b - a <= 1 for a, b in itertools.pairwise(headings)), headings  # no level skipped
    tables = list(tree.iter("table"))
    assert tables
    for table in tables:
        assert table.find("caption") is not None and text_of(table.find("caption")).strip()  # type: ignore[arg-type]
        assert all(th.get("scope") in ("col", "row") for th in table.iter("th"))
    charts = find_class(tree, "svg", "chart")
    assert len(charts) >= 4
    titles = {e.get("id"): text_of(e) for e in tree.iter("title")}
    for chart in charts:
        assert chart.get("role") == "img"
        label = chart.get("aria-label") or titles.get(chart.get("aria-labelledby"))
        assert label and len(label) > 20
    # Pictures that only decorate are hidden from screen readers; emoji are named, as Slack names them.
    assert all(s.get("aria-hidden") == "true" for s in find_class(tree, "svg", "swatch"))
    assert all(d.get("aria-hidden") == "true" for d in find_class(tree, "span", "dot"))
    for emoji in find_class(tree, "span", "emoji"):
        assert emoji.get("role") == "img" and emoji.get("aria-label")
    ids = [e.get("id") for e in tree.iter() if e.get("id")]
    assert len(ids) == len(set(ids))
    assert all(
        f"#{a.get('href', '#')[1:]}" in {f"#{i}" for i in ids} for a in tree.iter("a") if a.get("href", "")[:1] == "#"
    )


# ---------------------------------------------------------------------------------------------
# every kind of resource, every host's chart


def test_every_kind_of_resource_is_in_the_table_with_its_kind(the_sample: Sample, tree: ET.Element) -> None:
    (table,) = next(e for e in tree.iter("section") if e.get("id") == "recommendations").iter("table")
    rows = {
        text_of(row.find("th").find("code")): text_of(row.find("td"))  # type: ignore[union-attr, arg-type]
        for row in table.find("tbody").iter("tr")  # type: ignore[union-attr]
    }

    assert len(rows) == len(the_sample.report.recommendations)
    for rec in the_sample.report.recommendations:
        assert rows[rec.instance_id] == RESOURCES[rec.kind].label
    kinds = {rec.kind for rec in the_sample.report.recommendations}
    assert {
        ResourceKind.EC2,
        ResourceKind.SAGEMAKER_ENDPOINT,
        ResourceKind.SAGEMAKER_NOTEBOOK,
        ResourceKind.EKS_NODEGROUP,
        ResourceKind.AUTO_SCALING_GROUP,
    } <= kinds


def test_hosts_get_a_card_and_a_line_per_unit_with_a_legend(the_sample: Sample, tree: ET.Element) -> None:
    recs = {rec.instance_name: rec for rec in the_sample.report.recommendations}
    four = card(tree, recs[FORGED].instance_id)

    assert len(find_class(four, "path", "series")) == 4
    assert [text_of(li) for li in four.iter("li")] == ["GPU 0", "GPU 1", "GPU 2", "GPU 3"]
    assert "Hourly mean of each GPU" in text_of(four)
    neuron = card(tree, recs["inferentia-low"].instance_id)
    assert [text_of(li) for li in neuron.iter("li")] == ["NeuronCore 0", "NeuronCore 1"]
    assert "NeuronCore use (%)" in text_of(neuron)
    # Past eight lines the colours come round again with a dash pattern: each line stays distinct.
    twelve = find_class(card(tree, recs["wide-untagged-trainer"].instance_id), "path", "series")
    styles = {(next(c for c in classes(p) if c.startswith("c-")), p.get("stroke-dasharray")) for p in twelve}
    assert len(twelve) == len(styles) == 12
    # A host without accelerator metrics says so; the endpoint, with the report's daily means only, draws those.
    assert "No GPU use in CloudWatch (running host)." in text_of(card(tree, recs["render-node"].instance_id))
    endpoint = card(tree, recs["chat-llm"].instance_id)
    assert "daily mean of every GPU" in text_of(endpoint) and len(find_class(endpoint, "path", "series")) == 1
    # Every EC2 host has a card; a node group without a chart is in the table only, not linked.
    cards = {e.get("data-instance") for e in find_class(tree, "section", "host")}
    assert {rec.instance_id for rec in the_sample.report.recommendations if rec.kind is ResourceKind.EC2} <= cards
    assert recs["gpu-inference"].instance_id not in cards


def test_the_cards_stop_at_their_limit_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page, "HOST_CARDS", 2)
    html = page.render_report(build_report([recommendation(n) for n in range(1, 5)], NOW, DAYS))

    assert html.count('<section class="host"') == 2 and "The first 2 of 4 hosts." in html
    assert html.count("<tr>") == 5  # the header's and every host's


# ---------------------------------------------------------------------------------------------
# the charts: axes, units, thresholds, where the points land


@dataclass
class Chart:
    grid: dict[int, float]  # percent -> y
    thresholds: list[float]  # y
    labels: list[str]
    paths: list[str]


def read_chart(svg_text: str) -> Chart:
    root = ET.fromstring(svg_text)
    labels = [text_of(t) for t in root.iter("text")]
    grid_ys = [float(line.get("y1", 0)) for line in root.iter("line") if line.get("class") == "grid"]
    percents = [int(label.rstrip("%")) for label in labels if re.fullmatch(r"\d+%", label)]
    return Chart(
        grid=dict(zip(percents, grid_ys, strict=True)),
        thresholds=[float(line.get("y1", 0)) for line in root.iter("line") if line.get("class") == "threshold"],
        labels=labels,
        paths=[p.get("d", "") for p in root.iter("path")],
    )


def y_of(chart: Chart, percent: float) -> float:
    return chart.grid[0] + (chart.grid[100] - chart.grid[0]) * percent / 100


def coordinates(path: str) -> list[tuple[str, float, float]]:
    return [(m, float(x), float(y)) for m, x, y in re.findall(r"([ML])(-?[\d.]+) (-?[\d.]+)", path)]


def test_the_use_chart_has_labelled_axes_in_percent_and_dates_and_the_policys_thresholds() -> None:
    start = NOW - timedelta(days=DAYS)
    line = svg.Line("GPU 0", wave(0, DAYS * 24, start).points, 3600, "s0")
    chart = read_chart(
        svg.utilisation_chart([line], start, NOW, svg.thresholds(Policy()), chart_id="c", title="GPU use of x")
    )

    assert [p for p in chart.grid] == [0, 25, 50, 75, 100]
    assert "GPU use (%)" in chart.labels and "date (UTC)" in chart.labels
    dates = [label for label in chart.labels if re.fullmatch(r"\d{1,2} [A-Z][a-z]{2}", label)]
    assert len(dates) >= 3 and "21 Nov" in dates  # every few days of the 14
    assert "idle 5%" in chart.labels and "target 80%" in chart.labels
    assert sorted(chart.thresholds) == pytest.approx(sorted([y_of(chart, 5), y_of(chart, 80)]), abs=0.11)


def test_other_thresholds_come_from_the_policy(the_sample: Sample) -> None:
    policy = Policy(idle_util_pct=3.0, target_max_util_pct=70.0)
    html = page.render(report_json(the_sample.report), series=the_sample.series, policy=policy)

    assert "idle 3%" in html and "target 70%" in html and "target 80%" not in html


def test_a_point_lands_at_its_time_and_value_and_a_gap_breaks_the_line() -> None:
    start = NOW - timedelta(days=2)
    middle = int((start + timedelta(days=1)).timestamp())
    points = [(middle - 3600, 50.0), (middle, 50.0), (middle + 4 * 3600, 100.0), (middle + 5 * 3600, 0.0)]
    outside = [(int((start - timedelta(hours=3)).timestamp()), 80.0)]  # before the window: not drawn
    chart = read_chart(
        svg.utilisation_chart(
            [svg.Line("GPU 0", outside + points, 3600, "s0")],
            start,
            NOW - timedelta(hours=0),
            [],
            chart_id="c",
            title="t",
        )
    )

    (drawn,) = chart.paths
    moves = coordinates(drawn)
    assert [m for m, _, _ in moves] == ["M", "L", "M", "L"]  # four hours without a reading: a new line
    xs = sorted({x for _, x, _ in moves})
    left, right = svg._LEFT, svg._RIGHT
    assert moves[1][1] == pytest.approx((left + right) / 2, abs=0.06)
    assert moves[1][2] == pytest.approx(y_of(chart, 50), abs=0.06)
    assert moves[2][2] == pytest.approx(chart.grid[100], abs=0.06) and moves[3][2] == pytest.approx(chart.grid[0])
    assert all(left <= x <= right for x in xs)


def test_the_savings_chart_draws_net_savings_coloured_by_category() -> None:
    reserved = {"monthly_savings_usd": 4140.56, "monthly_savings_net_usd": 0.0, "category": "saving"}
    paid = {"monthly_savings_usd": 300.0, "monthly_savings_net_usd": 250.0, "category": "saving"}
    owner = {"monthly_savings_usd": 500.0, "monthly_savings_net_usd": 500.0, "category": "other_owner"}
    rows = [
        {**owner, "name": "asg", "instance_id": "i-3", "instance_type": "g5.xlarge", "target_type": None},
        {**paid, "name": "paid", "instance_id": "i-2", "instance_type": "g5.xlarge", "target_type": "g4dn.xlarge"},
        {**reserved, "name": "reserved", "instance_id": "i-1", "instance_type": "p4d.24xlarge", "target_type": None},
    ]
    chart = svg.savings_chart(rows)
    root = ET.fromstring(str(chart))
    bars = list(root.iter("rect"))

    assert [bar.get("class") for bar in bars] == ["c-other_owner", "c-saving"]  # no bar for $0 net
    assert float(bars[1].get("width", 0)) == pytest.approx(240 * 250 / 500)
    assert "$250.00/mo" in chart and "paid (g5.xlarge → g4dn.xlarge)" in chart and "reserved" not in chart
    assert svg.savings_chart([reserved | {"name": "r", "instance_id": "i-1", "instance_type": "p4d.24xlarge"}]) == ""


# ---------------------------------------------------------------------------------------------
# colours: contrast in both schemes


@pytest.mark.parametrize("scheme", [theme.LIGHT, theme.DARK], ids=["light", "dark"])
def test_text_and_lines_have_at_least_4_5_to_1_against_the_background(scheme: Mapping[str, str]) -> None:
    for key in theme.FOREGROUNDS:
        assert theme.contrast(scheme[key], scheme["bg"]) >= 4.5, key
    for key in ("fg", "muted"):  # code and the APP badge sit on the soft background
        assert theme.contrast(scheme[key], scheme["soft"]) >= 4.5, key
    assert theme.contrast(scheme["mention"], scheme["mention-bg"]) >= 4.5


def test_the_contrast_ratio_is_wcags() -> None:
    assert theme.contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert theme.contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


def test_the_page_carries_both_schemes_and_every_colour_class(html: str, tree: ET.Element) -> None:
    style = text_of(next(tree.iter("style")))
    assert theme.css_variables(theme.LIGHT) in style
    assert f"@media (prefers-color-scheme: dark){{:root{{{theme.css_variables(theme.DARK)}}}}}" in style
    used = {c for e in tree.iter() for c in classes(e) if c.startswith("c-")}
    assert used and all(f".{c}{{--c:var(--{c[2:]})}}" in style for c in used)
    assert not re.search(r'(?:stroke|fill)="#', html)  # no colour fixed in a chart: the scheme sets each


# ---------------------------------------------------------------------------------------------
# Slack's messages: mrkdwn, and the emoji Slack shows


def bot_short_codes() -> set[str]:
    files = [*sorted((SRC / "adapters" / "slack").rglob("*.py")), SRC / "services" / "notify.py"]
    codes: set[str] = set()
    for path in files:
        codes |= set(re.findall(r"(?<![\w:/]):([a-z][a-z0-9_+-]*):(?=[\s\"'])", path.read_text()))
    return codes


def test_every_short_code_the_bot_writes_is_shown_as_its_emoji() -> None:
    """Drawn as an icon (no emoji font needed, whatever the system has) and named for screen readers, as Slack does."""
    codes = bot_short_codes()

    assert {"information_source", "warning", "white_check_mark", "hourglass_flowing_sand"} <= codes
    assert codes <= set(blocks.EMOJI), codes - set(blocks.EMOJI)
    assert set(blocks.ICONS) == set(blocks.EMOJI)
    for code in codes:
        shown = str(blocks.mrkdwn(f"a :{code}: b"))
        assert f":{code}:" not in shown
        assert f'<span class="emoji" role="img" aria-label="{code.replace("_", " ")}"><svg ' in shown
        assert blocks.ICONS[code] in shown


def test_the_page_shows_no_short_code_as_text(html: str, tree: ET.Element) -> None:
    slack = next(e for e in tree.iter("section") if e.get("id") == "slack")
    shown = text_of(slack)

    assert not [code for code in blocks.EMOJI if f":{code}:" in shown]
    icons = find_class(slack, "span", "emoji")
    assert {code.replace("_", " ") for code in blocks.EMOJI} <= {e.get("aria-label") for e in icons}
    assert all(text_of(e) == "" and e.find("svg") is not None for e in icons)  # a drawing: no glyph to miss
    assert "08:00-19:00" in shown  # a time is not a short code


def test_mrkdwn_as_html() -> None:
    shown = str(blocks.mrkdwn("*bold* _it_ ~gone~ `a*b*c :x:` <https://e.example/?a=1&b=2|link> <@U1|ann> <#C1> x<y"))

    assert shown == (
        '<b>bold</b> <i>it</i> <s>gone</s> <code>a*b*c :x:</code> <a href="https://e.example/?a=1&amp;b=2">link</a> '
        '<span class="mention">ann</span> <span class="mention">#C1</span> x&lt;y'
    )
    assert str(blocks.mrkdwn("<javascript:alert(1)|click>")) == "click"  # not a link Slack would follow


def test_messages_as_posted_and_as_composed_show_their_threads() -> None:
    posted: list[dict[str, Any]] = [{"blocks": [{"type": "divider"}]}, {"thread_ts": "1"}, {"thread_ts": "1"}]
    composed: list[dict[str, Any]] = [{"blocks": []}, {"blocks": []}]

    assert [" reply" in str(m) for m in page._messages(posted)] == [False, True, True]
    assert [" reply" in str(m) for m in page._messages(composed)] == [False, True]


# ---------------------------------------------------------------------------------------------
# no glyph the fonts lack


# Outside emoji, the page writes ASCII and these (every font of the stack, Arial, Roboto, Segoe UI, Helvetica,
# Liberation Sans, DejaVu Sans, has them); the emoji sit in spans whose font is an emoji font; the sparkline's bars in
# code, whose monospace fonts (Menlo, Consolas, DejaVu Sans Mono) have them.
TYPOGRAPHY = set("·•→–…×’“”\u00a0")
SPARK = set("▁▂▃▄▅▆▇█")


def test_the_page_uses_only_characters_its_fonts_have(tree: ET.Element) -> None:
    body = next(tree.iter("body"))
    strays: list[tuple[str, str]] = []

    def walk(element: ET.Element, in_emoji: bool, in_code: bool) -> Iterator[tuple[str, bool, bool]]:
        emoji = in_emoji or "emoji" in classes(element)
        code = in_code or element.tag == "code"
        yield element.text or "", emoji, code
        for child in element:
            yield from walk(child, emoji, code)
            yield child.tail or "", in_emoji, in_code

    for text, emoji, code in walk(body, False, False):
        allowed = set() if emoji else TYPOGRAPHY | (SPARK if code else set())  # an emoji is an icon: no text at all
        strays += [(char, text) for char in text if not (" " <= char <= "~" or char == "\n" or char in allowed)]
    assert strays == []
    style = text_of(next(tree.iter("style")))
    assert re.search(r'body\{font:[^;}]*"DejaVu Sans",sans-serif', style)


# ---------------------------------------------------------------------------------------------
# the savings picture for Slack


def test_the_savings_picture_is_a_png_of_the_hosts_that_change_the_bill(the_sample: Sample) -> None:
    from PIL import Image

    document = report_json(the_sample.report)
    picture = png.savings_png(document["recommendations"])

    assert picture is not None and picture[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(picture))
    rows = min(len(svg.savings_rows(document["recommendations"])), png.ROWS)
    assert image.size == (png.WIDTH, png.TOP + png.ROW * rows + png.LEGEND + png.MARGIN)  # the legend under the bars
    legend = image.convert("RGB").crop((0, png.TOP + png.ROW * rows, png.WIDTH, image.size[1]))
    drawn = {legend.getpixel((x, y)) for x in range(0, png.WIDTH, 2) for y in range(0, legend.size[1], 2)}
    for key in ("saving", "other_owner", "upsize"):  # a swatch of each colour a bar may have, named beside it
        assert tuple(int(theme.LIGHT[key][i : i + 2], 16) for i in (1, 3, 5)) in drawn, key
    assert png.savings_png([]) is None


def test_the_picture_draws_only_characters_its_font_has() -> None:
    shown = png.drawable("Café → naïve 東京 “x” … \u202e")

    assert shown == 'Cafe -> naive ?? "x" ... ?'
    assert all(png.has_glyph(char) for char in shown)
    assert not png.has_glyph("é")  # Pillow's bundled font: ASCII only, so é would be a box


def test_the_alt_text_says_what_the_picture_shows(the_sample: Sample) -> None:
    document = report_json(the_sample.report)
    said = png.alt_text(document)

    assert said.startswith("Bar chart of monthly savings by host")
    assert "gpu-inference (g5.12xlarge) $3,000.00" in said and "$16,000.00/month can be saved" in said
    assert len(png.alt_text({**document, "recommendations": document["recommendations"] * 40})) <= 1000
    assert png.alt_text(report_json(build_report([], NOW, DAYS))).startswith("No host's advice changes the bill")


# ---------------------------------------------------------------------------------------------
# the series the charts draw, kept as collection reads them


@dataclass
class FakeUsage:
    raws: Sequence[RawUsage]
    warnings: list[str] = field(default_factory=list)
    asked: list[list[str]] = field(default_factory=list)

    def read(
        self, instances: Sequence[Instance], specs: Mapping[str, InstanceTypeSpec], window: Window
    ) -> Iterator[RawUsage]:
        self.asked.append([i.instance_id for i in instances])
        self.warnings.append("one metric throttled")
        yield from self.raws


def raw_usage(instance_id: str, devices: Sequence[DeviceSeries], *, neuron: bool = False) -> RawUsage:
    start = datetime.fromtimestamp(3600 * 100, NOW.tzinfo)
    return RawUsage(
        instance_id,
        start,
        start + timedelta(hours=3),
        AcceleratorData.PER_DEVICE,
        tuple(devices),
        cpu_avg=Series(300, [3600 * 100 + 300 * n for n in range(36)], [5.0] * 36),
        silence_is_idle=neuron,
    )


def test_the_tap_keeps_each_gpus_memory_as_a_share_of_its_total_for_an_out_of_memory_chart() -> None:
    base = 3600 * 100
    gpu = DeviceSeries(
        "0",
        utilization_avg=Series(300, [base], [40.0]),
        memory_used_max=Series(3600, [base, base + 3600], [7680.0, 15000.0]),
        memory_total_max=Series(3600, [base, base + 3600], [15360.0, 15360.0]),
    )
    tap = UnitSeriesTap(FakeUsage([raw_usage("i-t4", [gpu])]))

    list(tap.read([instance("g4dn.xlarge", "i-t4")], catalog().specs, Window(NOW - timedelta(days=1), NOW)))

    memory = next(unit for unit in tap.kept["i-t4"] if unit.measure == "memory")
    assert memory == UnitSeries("GPU 0 memory", ((base, 50.0), (base + 3600, 15000.0 / 15360.0 * 100)), "memory")


def test_the_tap_hands_every_read_on_and_keeps_each_units_hourly_means() -> None:
    base = 3600 * 100
    gpu = DeviceSeries("0", utilization_avg=Series(300, [base, base + 300, base + 3600], [10.0, 30.0, 50.0]))
    quiet = DeviceSeries("1")  # no readings: no line
    core = DeviceSeries("0", utilization_avg=Series(300, [base + 3600 * 2], [60.0]))
    raws = [raw_usage("i-gpu", [gpu, quiet]), raw_usage("i-inf", [core], neuron=True), raw_usage("i-none", [])]
    inner = FakeUsage(raws)
    tap = UnitSeriesTap(inner)
    as_port: UsageSource = tap  # what bootstrap's usage_tap expects
    hosts = [instance("g5.12xlarge", "i-gpu"), instance("inf2.8xlarge", "i-inf"), instance("g5.xlarge", "i-none")]
    specs = catalog().specs

    passed = list(as_port.read(hosts, specs, Window(NOW - timedelta(days=1), NOW)))

    assert passed == raws and inner.asked == [["i-gpu", "i-inf", "i-none"]]
    cpu = UnitSeries("CPU", ((base, 5.0), (base + 3600, 5.0), (base + 7200, 5.0)), "cpu")  # the host's, for its chart
    assert tap.kept["i-gpu"] == (UnitSeries("GPU 0", ((base, 20.0), (base + 3600, 50.0))), cpu)
    # neuron-monitor's silence while the host runs is an idle core, as the analyzer reads it: one 5-minute reading of
    # 60 % in an hour of twelve is a mean of 5 %.
    core_use = UnitSeries("NeuronCore 0", ((base, 0.0), (base + 3600, 0.0), (base + 7200, 5.0)))
    assert tap.kept["i-inf"] == (core_use, cpu)
    assert "i-none" not in tap.kept
    assert tap.warnings == ["one metric throttled"]
    tap.warnings = []
    assert inner.warnings == []


def test_taps_of_several_regions_keep_into_one_dict() -> None:
    kept: dict[str, tuple[UnitSeries, ...]] = {}
    base = 3600 * 100
    for region_host in ("i-a", "i-b"):
        gpu = DeviceSeries("0", utilization_avg=Series(300, [base], [10.0]))
        source = UnitSeriesTap(FakeUsage([raw_usage(region_host, [gpu])]), kept)
        list(source.read([instance("g5.xlarge", region_host)], {}, Window(NOW - timedelta(days=1), NOW)))

    assert set(kept) == {"i-a", "i-b"} and kept["i-a"][0].label == "GPU 0"  # no spec: GPU


def test_hourly_means_are_per_clock_hour() -> None:
    assert series.hourly(Series(300, [7200, 7500, 10800 + 60], [1.0, 3.0, 9.0])) == ((7200, 2.0), (10800, 9.0))
    assert series.hourly(Series(300)) == ()


def test_render_report_with_series_for_the_window_up_to_now(the_sample: Sample) -> None:
    later = NOW + timedelta(days=3, minutes=20)
    html = the_sample.html(now=later)

    assert f"GPU use per host, {(later - timedelta(days=DAYS)).day} Nov 2026 to 4 Dec 2026" in html


# ---------------------------------------------------------------------------------------------
# at a glance (issue 31): colours by severity, no dead buttons, money in words, no Markdown, the limiting resource


def section(tree: ET.Element, section_id: str) -> ET.Element:
    return next(e for e in tree.iter("section") if e.get("id") == section_id)


def named(sample: Sample, name: str) -> Recommendation:
    return next(rec for rec in sample.report.recommendations if rec.instance_name == name)


def test_a_findings_colour_says_what_it_means(the_sample: Sample, tree: ET.Element) -> None:
    table = section(tree, "recommendations")
    swatches = {
        text_of(code): classes(find_class(row, "span", "dot")[0])
        for row in table.iter("tr")
        for code in row.iterfind("th/code")
    }

    assert "c-risk" in swatches[named(the_sample, "llm-chat-t4").instance_id]  # under-provisioned: a risk, not green
    assert "c-risk" in swatches[named(the_sample, "vision-train-dl").instance_id]  # CPU-bound
    assert "c-waste" in swatches[named(the_sample, "stopped-box").instance_id]  # idle
    assert "c-info" in swatches[named(the_sample, "render-node").instance_id]  # no metrics: not judged


def test_a_static_page_offers_no_button_that_does_nothing(html: str, tree: ET.Element) -> None:
    slack = section(tree, "slack")

    assert not [e for e in slack.iter() if e.tag == "button" or "bk-button" in classes(e)]
    named_only = [text_of(e) for e in find_class(slack, "p", "bk-actions")]
    assert "In Slack: Approve resize · Dismiss · Snooze 7 days" in named_only


def test_an_upsize_costs_more_and_never_saves_a_negative_amount(
    the_sample: Sample, html: str, tree: ET.Element
) -> None:
    t4 = named(the_sample, "llm-chat-t4").instance_id
    row = next(r for r in section(tree, "recommendations").iter("tr") if t4 in text_of(r))

    assert "costs $203.52 more" in text_of(row)
    assert "costs $203.52/month more" in text_of(card(tree, t4))
    assert "costs $203.52/mo more" in text_of(section(tree, "savings"))
    assert not re.search(r"saves -\$|-\$[\d,]+\.\d\d/mo", text_of(tree))


def test_the_bots_backquotes_are_code_never_text(the_sample: Sample, tree: ET.Element) -> None:
    untagged = card(tree, named(the_sample, "wide-untagged-trainer").instance_id)
    (why_not,) = find_class(untagged, "p", "why-not")

    assert "`" not in text_of(why_not)
    assert (
        next(text_of(code) for code in why_not.iter("code")) == named(the_sample, "wide-untagged-trainer").instance_id
    )
    assert "`" not in text_of(section(tree, "hosts"))


def test_a_hosts_chart_is_of_what_decided_its_finding(the_sample: Sample, tree: ET.Element) -> None:
    memory = card(tree, named(the_sample, "llm-chat-t4").instance_id)
    cpu = card(tree, named(the_sample, "vision-train-dl").instance_id)
    use = card(tree, named(the_sample, FORGED).instance_id)

    assert "GPU memory (%)" in text_of(memory) and "out of memory 95%" in text_of(memory)
    assert [line.get("class") for line in memory.iter("path") if "series" in classes(line)] == ["series c-s0"]
    assert (
        "CPU use (%)" in text_of(cpu)
        and "CPU-bound 85%" in text_of(cpu)
        and "CPU holding the GPUs back" in text_of(cpu)
    )
    assert "GPU use (%)" in text_of(use) and "idle 5%" in text_of(use)


def test_the_page_has_the_by_team_and_the_since_last_time_sections(the_sample: Sample, tree: ET.Element) -> None:
    by_team = section(tree, "showback")
    since = section(tree, "since")

    rows = [text_of(th) for th in by_team.iterfind("table/tbody/tr/th")]
    # The most waste first: the resources without a team, then search's idle and oversized hosts, then ads' upsizes.
    assert [re.split(r"\d+ resource", row)[0] for row in rows] == ["(none)", "search", "ads"]
    assert "wide-untagged-trainer $3,000.00" in rows[1]
    said = " ".join(text_of(since).split())
    assert said.startswith("Since 2026-11-30")
    assert "1 new waste, $3,000.00/month net:" in said and "1 resolved, $1,500.00/month: stopped-box (idle, now" in said
    assert (
        "(idle, now excluded) by an approval by @U0LEAD" in said
        and "1 came" in said
        and "1 went (i-0000000000000dead)" in said
    )
    (trend,) = find_class(since, "svg", "trend")
    assert "over the last 30 runs" in text_of(trend.find("title"))  # type: ignore[arg-type]
