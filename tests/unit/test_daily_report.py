"""The report function's use-case over fakes of its ports: when it connects the poster, publishes the page and
posts, and what its result says (tests/integration/test_report_post.py runs it with S3 on moto and the Slack double)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.daily_report import (
    ConnectPoster,
    PageNotPublished,
    PublishedPage,
    ReportPoster,
    daily_report,
)
from rightsizer.services.ranking import RankedReport, Ranking
from rightsizer.services.report import FleetReport
from rightsizer.settings import Settings, SlackSettings
from tests.fakes import MemoryStore

NOW = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
SETTINGS = Settings(slack=SlackSettings(channel="C-REPORTS", secret_name="gpu-rightsizer/slack"))


class ReportStore(MemoryStore):
    """Nothing analysed yet: no ranking, no recommendation."""

    def ranking(self) -> Ranking | None:
        return None

    def latest_recommendations(self) -> Sequence[Recommendation]:
        return list(self.latest.values())


@dataclass
class Calls:
    made: list[str] = field(default_factory=list)
    page: PublishedPage | None = None
    post_key: str = ""


@dataclass
class FakePoster:
    calls: Calls

    def post(
        self, ranked: RankedReport, now: datetime, *, post_key: str, page: PublishedPage | None, problems: list[str]
    ) -> list[str]:
        self.calls.made.append("post")
        self.calls.page, self.calls.post_key = page, post_key
        problems.append("the savings chart was not shared in Slack: missing_scope")
        return ["1.0", "1.1"]


@dataclass
class FakePublisher:
    calls: Calls
    refuse: bool = False

    def publish(self, report: FleetReport, now: datetime, post_key: str) -> PublishedPage:
        self.calls.made.append("publish")
        if self.refuse:
            raise PageNotPublished("AccessDenied")
        return PublishedPage("plans", "reports/page.html", "https://plans/page", now + timedelta(hours=12))


def connect(calls: Calls) -> ConnectPoster:
    def connected() -> ReportPoster:
        calls.made.append("connect")
        return FakePoster(calls)

    return connected


def test_a_scheduled_report_connects_then_publishes_its_page_then_posts_with_it() -> None:
    calls = Calls()
    payload = {"scheduled_time": "2026-12-07T09:00:00Z"}

    result = daily_report(ReportStore(), SETTINGS, payload, NOW, poster=connect(calls), publisher=FakePublisher(calls))

    assert calls.made == ["connect", "publish", "post"]  # a Slack app not configured fails before S3 is written
    assert calls.post_key == "C-REPORTS#2026-12-07T09:00:00Z"
    assert calls.page is not None and calls.page.url == "https://plans/page"
    assert result["page"] == {"bucket": "plans", "key": "reports/page.html", "expires_at": "2026-12-07T21:00:00+00:00"}
    assert result["posted"] == ["1.0", "1.1"]
    assert result["warnings"][-1] == "the savings chart was not shared in Slack: missing_scope"
    assert "recommendations" not in result  # the ranking's head is not an export


def test_a_page_that_cannot_be_written_is_a_warning_and_the_report_is_posted_without_it() -> None:
    calls = Calls()

    result = daily_report(
        ReportStore(), SETTINGS, {}, NOW, poster=connect(calls), publisher=FakePublisher(calls, refuse=True)
    )

    assert calls.made == ["connect", "publish", "post"]
    assert calls.page is None and calls.post_key == ""
    assert "page" not in result
    assert "the report page was not written to S3: AccessDenied" in result["warnings"]


def test_an_export_neither_connects_nor_publishes_and_lists_every_recommendation() -> None:
    calls = Calls()

    result = daily_report(
        ReportStore(),
        SETTINGS,
        {"post": False, "include_recommendations": True},
        NOW,
        poster=connect(calls),
        publisher=FakePublisher(calls),
    )

    assert calls.made == []
    assert "posted" not in result and "page" not in result
    assert result["recommendations"] == []


def test_without_a_poster_nothing_is_published() -> None:
    calls = Calls()

    result = daily_report(ReportStore(), SETTINGS, {}, NOW, poster=None, publisher=FakePublisher(calls))

    assert calls.made == []
    assert "posted" not in result
