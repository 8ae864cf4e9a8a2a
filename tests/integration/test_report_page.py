"""demo-output/report.html, built as `make demo` builds it (from a seeded local AWS, through the product's
adapters), checked as a file and then in a real headless browser: the system Chromium (OS package
`chromium`) driven by Playwright. Without Chromium the browser test is skipped and says why."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from demo import browser, html_report
from demo.fleet import fleet

from rightsizer import bootstrap
from rightsizer.adapters.aws.session import AwsSession
from rightsizer.adapters.slack import blocks
from rightsizer.services.collect import lookback_window
from rightsizer.services.report import report_json
from rightsizer.settings import PriceMode, Settings
from tests.integration.test_cli import seeded_moto

pytestmark = pytest.mark.integration

DAYS = 4
HOSTS = ("idle-p3", "one-of-four", "no-agent", "t4-memory-full", "inferentia-low", "asg-member", "stopped")


@dataclass(frozen=True)
class Page:
    path: Path
    document: dict[str, Any]
    series: dict[str, tuple[html_report.UnitSeries, ...]]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    by_key = {host.key: host for host in fleet()}
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        with seeded_moto(now, days=DAYS, hosts=[by_key[key] for key in HOSTS]):
            settings = Settings(regions=("us-east-1", "eu-west-1"), lookback_days=DAYS, price_mode=PriceMode.SNAPSHOT)
            report = bootstrap.analyze(AwsSession(), settings.regions, settings, now)
            document = report_json(report)
            messages = [message.payload() for message in blocks.daily_report_messages(report, [], top_n=10)]
            series = html_report.unit_series(AwsSession(), document, now, DAYS)
    window = lookback_window(now, DAYS)
    path = tmp_path_factory.mktemp("page") / "report.html"
    path.write_text(html_report.render(document, messages, series, window_start=window.start, window_end=window.end))
    yield Page(path, document, series)


def test_the_page_is_self_contained(page: Page) -> None:
    text = page.path.read_text()

    assert "<script" not in text and "<link" not in text and "<img" not in text
    assert not re.search(r"""(src|href)=["']?https?:""", text)
    assert "url(" not in text


def test_every_host_has_a_card_and_measured_hosts_a_line_per_unit_with_thresholds(page: Page) -> None:
    text = page.path.read_text()
    cards = dict(re.findall(r'<section class="host" id="host-(i-[0-9a-f]+)" data-instance="\1">(.*?)</section>', text))

    hosts = {rec["instance_id"] for rec in page.document["recommendations"] if rec["kind"] == "ec2"}
    assert set(cards) == hosts  # a card per EC2 host; node groups and SageMaker resources are in the Slack part
    one_of_four = next(rec for rec in page.document["recommendations"] if rec["name"] == "embeddings-api")
    assert cards[one_of_four["instance_id"]].count("<polyline") == 4  # one line per GPU
    inferentia = next(rec for rec in page.document["recommendations"] if rec["instance_type"] == "inf1.6xlarge")
    assert "NeuronCore 0" in cards[inferentia["instance_id"]]
    no_agent = next(rec for rec in page.document["recommendations"] if rec["name"] == "render-node")
    assert "No GPU or NeuronCore utilisation" in cards[no_agent["instance_id"]]
    assert cards[one_of_four["instance_id"]].count('class="threshold"') == 3
    assert "idle: p99 below 5%" in text and "a target&#x27;s p95 stays below 80%" in text


def test_the_slack_messages_and_the_savings_chart_are_on_the_page(page: Page) -> None:
    text = page.path.read_text()

    assert '<div class="bk-header">GPU fleet report' in text
    assert '<span class="bk-button primary">Approve resize</span>' in text
    # A bar per host whose advice changes the bill: net of reservations, as the report ranks (a host in a
    # capacity reservation saves $0 and gets none).
    recs = page.document["recommendations"]
    assert text.count('<rect x="260"') == sum(1 for r in recs if r["monthly_savings_net_usd"])


@pytest.fixture
def chromium() -> Iterator[Any]:
    if browser.chromium_path() is None:
        pytest.skip(browser.WHY_MISSING)
    with browser.chromium_page() as browser_page:
        yield browser_page


def test_the_page_loads_in_chromium_without_console_errors_and_shows_every_host(page: Page, chromium: Any) -> None:
    problems: list[str] = []
    chromium.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    chromium.on("pageerror", lambda error: problems.append(str(error)))
    chromium.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))

    chromium.goto(page.path.resolve().as_uri())

    assert problems == []
    assert chromium.title().startswith("GPU fleet report")
    for rec in page.document["recommendations"]:
        card = chromium.locator(f'section.host[data-instance="{rec["instance_id"]}"]')
        card.scroll_into_view_if_needed()
        assert card.is_visible(), rec["instance_id"]
        assert card.bounding_box()["height"] > 40
    assert chromium.locator("#slack .bk-message").count() >= 1
    assert chromium.screenshot(full_page=True)[:8] == b"\x89PNG\r\n\x1a\n"
