"""The report page (rightsizer.adapters.html) built as the CLI builds it: a seeded local AWS analysed through the
product's adapters, the per-GPU series kept by `UnitSeriesTap` as collection reads CloudWatch. Checked as a file,
then in a real browser: the system Chromium (OS package `chromium`) driven by Playwright, at a desktop's and a
phone's width, light and dark, with screenshots kept in pytest's tmp_path. Without Chromium the browser tests are
skipped and say how to install it."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import html5lib  # type: ignore[import-untyped]
import pytest
from demo import browser
from demo.fleet import GROUPS, fleet

from rightsizer.adapters.aws.session import AwsSession
from rightsizer.adapters.html import page
from rightsizer.adapters.html.blocks import EMOJI
from rightsizer.adapters.html.series import UnitSeries, UnitSeriesTap
from rightsizer.adapters.html.theme import DARK, LIGHT
from rightsizer.adapters.slack import blocks
from rightsizer.cli import wiring
from rightsizer.services.ports import UsageSource
from rightsizer.services.report import FleetReport
from rightsizer.settings import PriceMode, Settings
from tests.integration.test_cli import seeded_moto
from tests.unit.report_page_sample import sample

pytestmark = pytest.mark.integration

DAYS = 4
HOSTS = ("idle-p3", "one-of-four", "no-agent", "t4-memory-full", "inferentia-low", "asg-member", "stopped")


@dataclass(frozen=True)
class Built:
    path: Path
    report: FleetReport
    series: dict[str, tuple[UnitSeries, ...]]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    by_key = {host.key: host for host in fleet()}
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    kept: dict[str, tuple[UnitSeries, ...]] = {}

    def tap(usage: UsageSource) -> UsageSource:
        return UnitSeriesTap(usage, kept)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        with seeded_moto(now, days=DAYS, hosts=[by_key[key] for key in HOSTS]):
            settings = Settings(regions=("us-east-1", "eu-west-1"), lookback_days=DAYS, price_mode=PriceMode.SNAPSHOT)
            report = wiring.analyze(AwsSession(), settings.regions, settings, now, usage_tap=tap)
            messages = [message.payload() for message in blocks.daily_report_messages(report, [], top_n=10)]
    path = tmp_path_factory.mktemp("page") / "report.html"
    path.write_text(page.render_report(report, series=kept, slack_messages=messages, now=now))
    yield Built(path, report, kept)


def named(built: Built, name: str) -> Any:
    return next(rec for rec in built.report.recommendations if rec.instance_name == name)


def cards(text: str) -> dict[str, str]:
    return dict(
        re.findall(r'<section class="host" id="host-[^"]+" data-instance="([^"]+)">(.*?)</section>', text, re.S)
    )


def test_the_cli_path_keeps_each_units_series_and_the_page_is_valid_and_self_contained(built: Built) -> None:
    text = built.path.read_text()

    html5lib.HTMLParser(strict=True).parse(text)
    assert "<script" not in text and "<link" not in text and "<img" not in text and "url(" not in text
    assert not re.search(r"""\ssrc=""", text)
    one_of_four = named(built, "embeddings-api")
    used = [unit.label for unit in built.series[one_of_four.instance_id] if unit.measure == "use"]
    assert used == ["GPU 0", "GPU 1", "GPU 2", "GPU 3"]
    assert all(len(unit.points) >= DAYS * 24 - 2 for unit in built.series[one_of_four.instance_id])


def test_every_host_has_a_card_and_measured_hosts_a_line_per_unit_with_thresholds(built: Built) -> None:
    text = built.path.read_text()
    by_id = cards(text)
    recs = built.report.recommendations

    assert {rec.instance_id for rec in recs if rec.kind.value == "ec2"} <= set(by_id)
    one_of_four = by_id[named(built, "embeddings-api").instance_id]
    assert one_of_four.count('class="series ') == 4 and "GPU use (%)" in one_of_four
    assert one_of_four.count('class="threshold"') == 2 and "idle 5%" in one_of_four and "target 80%" in one_of_four
    inferentia = next(rec for rec in recs if rec.instance_type == "inf1.6xlarge")
    assert "NeuronCore 0" in by_id[inferentia.instance_id]
    assert "No GPU use in CloudWatch" in by_id[named(built, "render-node").instance_id]
    # The Auto Scaling group's advice is in the table with its kind.
    (group,) = [rec for rec in recs if rec.instance_id in GROUPS]
    assert re.search(
        rf"<code>{re.escape(group.instance_id)}</code>.*?</th>\n<td class=\"kind\">Auto Scaling group", text
    )


# ---------------------------------------------------------------------------------------------
# in Chromium


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    if browser.chromium_path() is None:
        pytest.skip(browser.WHY_MISSING)
    with browser.chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def pages(built: Built, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The seeded fleet's page, and the unit tests' sample: every kind of resource, every emoji the bot writes."""
    path = tmp_path_factory.mktemp("sample") / "sample.html"
    path.write_text(sample().html())
    return {"fleet": built.path, "sample": path}


# Where the page is wider than the screen, or an element sticks out of the screen, of its card or cell, or a chart's
# text out of its chart.
LAYOUT_PROBLEMS = """() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + (el.getAttribute('class') ? '.' + el.getAttribute('class').split(' ').join('.') : '')
    + ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
  const outside = (r, box) => r.left < box.left - 0.5 || r.right > box.right + 0.5;
  const drawn = (r) => r.width > 0 || r.height > 0;
  if (document.documentElement.scrollWidth > window.innerWidth) {
    problems.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
  }
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (!drawn(r)) continue;
    if (r.left < -0.5 || r.right > width + 0.5) problems.push(name(el) + ' spans ' + r.left + '..' + r.right);
    // Content wider than its box: clipped (overflow hidden, auto) or spilling out of it (visible).
    if (el instanceof HTMLElement && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
      problems.push(name(el) + ' holds content ' + el.scrollWidth + ' px wide in ' + el.clientWidth + ' px');
    }
  }
  for (const box of document.querySelectorAll('.tile, .host, .slack, th, td, figure, .legend li')) {
    const outer = box.getBoundingClientRect();
    for (const el of box.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (drawn(r) && outside(r, outer)) problems.push(name(el) + ' sticks out of ' + name(box));
    }
  }
  for (const chart of document.querySelectorAll('svg.chart')) {
    const outer = chart.getBoundingClientRect();
    const texts = [...chart.querySelectorAll('text')];
    for (const text of texts) {
      const r = text.getBoundingClientRect();
      if (outside(r, outer) || r.top < outer.top - 0.5 || r.bottom > outer.bottom + 0.5) {
        problems.push(name(text) + ' is cut off its chart');
      }
    }
    // No label over another: axis labels, threshold labels, a bar's name and amount.
    texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
      const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
      const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 0.5 && h > 0.5) problems.push(name(a) + ' overlaps ' + name(b));
    }));
  }
  return problems;
}"""

# Each element that writes text of its own: the font-family lists of it and its descendants (Chromium tells the fonts
# of all the text inside), whether it is an emoji, and its text; it is marked for a selector.
TEXT_ELEMENTS = """() => {
  const found = [];
  let n = 0;
  for (const el of document.body.querySelectorAll('*')) {
    const own = [...el.childNodes].filter((c) => c.nodeType === 3 && c.textContent.trim()).map((c) => c.textContent);
    if (!own.length || el.closest('title')) continue;
    el.setAttribute('data-font-check', String(n));
    const families = [el, ...el.querySelectorAll('*')].map((e) => getComputedStyle(e).fontFamily).join(',');
    found.push([n++, families, el.classList.contains('emoji'), own.join('').trim().slice(0, 40)]);
  }
  return found;
}"""


def emoji_font_installed() -> bool:
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return False
    listed = subprocess.run([fc_list, ":charset=2705", "family"], capture_output=True, text=True, check=False)
    return "emoji" in listed.stdout.lower()


def fonts_used(tab: Any) -> list[tuple[str, list[str], list[str], bool]]:
    """(text, the element's font-family names, the fonts Chromium drew its text with, is an emoji) per element."""
    elements = tab.evaluate(TEXT_ELEMENTS)
    cdp = tab.context.new_cdp_session(tab)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    found = []
    for n, family, emoji, text in elements:
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": f'[data-font-check="{n}"]'})["nodeId"]
        fonts = [font["familyName"] for font in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]]
        names = [name.strip().strip("\"'") for name in family.split(",")]
        found.append((text, names, fonts, emoji))
    cdp.detach()
    return found


@pytest.mark.parametrize("which", ["fleet", "sample"])
@pytest.mark.parametrize(
    ("width", "dark"), [(browser.DESKTOP, False), (browser.PHONE, False), (browser.PHONE, True)], ids=str
)
def test_in_chromium_nothing_overflows_and_the_scheme_applies(
    chromium: Any, pages: dict[str, Path], which: str, width: int, dark: bool, tmp_path: Path
) -> None:
    problems: list[str] = []
    requests: list[str] = []
    tab = browser.new_page(chromium, width, dark=dark)
    tab.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    tab.on("pageerror", lambda error: problems.append(str(error)))
    tab.on("request", lambda request: requests.append(request.url))

    tab.goto(pages[which].resolve().as_uri())

    assert problems == []
    assert requests == [pages[which].resolve().as_uri()]  # nothing fetched: no font, image or style from elsewhere
    assert tab.evaluate(LAYOUT_PROBLEMS) == []
    scheme = DARK if dark else LIGHT
    background = tab.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb({}, {}, {})".format(*(int(scheme["bg"][i : i + 2], 16) for i in (1, 3, 5)))
    assert tab.title().startswith("GPU fleet report")
    shot = tmp_path / f"{which}-{width}-{'dark' if dark else 'light'}.png"
    tab.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")
    tab.close()


def test_in_chromium_every_resource_is_shown_and_each_chart_is_drawn(
    chromium: Any, pages: dict[str, Path], built: Built
) -> None:
    tab = browser.new_page(chromium, browser.PHONE)
    tab.goto(pages["fleet"].resolve().as_uri())

    for rec in built.report.recommendations:
        row = tab.locator("#recommendations tbody tr", has_text=rec.instance_id)
        assert row.count() == 1 and row.first.is_visible(), rec.instance_id
    for chart in tab.locator("section.host svg.chart").all():
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        assert box is not None and box["width"] >= 300 and box["height"] >= 150  # at a 390 px phone's width
    tab.close()


def test_in_chromium_the_text_uses_its_fonts_and_every_emoji_is_drawn(chromium: Any, pages: dict[str, Path]) -> None:
    """Whatever fonts the system has (this one has no emoji font): text in the fonts its stack names, each emoji an
    icon drawn at the size of the text around it, never an empty box."""
    tab = browser.new_page(chromium, browser.DESKTOP)
    tab.goto(pages["sample"].resolve().as_uri())
    generic = {"sans-serif", "serif", "monospace", "system-ui", "ui-monospace", "-apple-system"}

    used = fonts_used(tab)
    icons = tab.evaluate(
        "() => [...document.querySelectorAll('.emoji')].map((e) => [e.getAttribute('aria-label'), e.textContent,"
        " e.querySelector('svg') ? e.querySelector('svg').getBoundingClientRect().width : 0])"
    )

    # Text is drawn with the fonts its stack names, never with a fallback the system picked for a glyph they lack.
    strays = [
        (text, fonts)
        for text, names, fonts, emoji in used
        if not emoji and not {f.lower() for f in fonts} <= {n.lower() for n in names if n not in generic}
    ]
    assert strays == []
    assert {label for label, _, _ in icons} >= {name.replace("_", " ") for name in EMOJI}  # every emoji the bot writes
    assert [(label, text, width) for label, text, width in icons if text or not 12 <= width <= 24] == []
    tab.close()


@pytest.mark.parametrize("width", [browser.DESKTOP, browser.PHONE], ids=str)
def test_in_chromium_the_new_sections_read_at_both_widths(chromium: Any, pages: dict[str, Path], width: int) -> None:
    """What changed since the last run (its trend drawn), the money by team, the charts of the limiting resource."""
    tab = browser.new_page(chromium, width)
    tab.goto(pages["sample"].resolve().as_uri())

    for selector in ("#since", "#since svg.trend", "#showback table", "#savings svg.chart"):
        element = tab.locator(selector).first
        element.scroll_into_view_if_needed()
        box = element.bounding_box()
        assert element.is_visible() and box is not None and box["width"] >= min(300, width - 40), selector
    order = tab.evaluate("() => [...document.querySelectorAll('main > section')].map((s) => s.id)")
    assert order[:3] == ["since", "summary", "showback"]  # the report opens with what changed
    axes = tab.evaluate(
        "() => [...document.querySelectorAll('section.host svg .axis-title')].map((t) => t.textContent)"
    )
    assert {"GPU memory (%)", "CPU use (%)", "GPU use (%)"} <= set(axes)
    tab.close()
