"""The report function's use-case: rank the fleet's report, publish its page, post it (Slack in AWS).

The report comes from the precomputed ranking (services/ranking.py); only an export ({"include_recommendations":
true}) reads every latest recommendation. The page and the post are ports: `PagePublisher` (the page in the stack's
bucket, a presigned link to it) and `ReportPoster` (the channel's summary and its thread). The page is a side task:
when it cannot be written, the report is posted without its link and the result says why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.approvals import split_hidden
from rightsizer.services.ranking import RankedReport, RankingStore, ranked_report
from rightsizer.services.report import FleetReport, build_report, report_json
from rightsizer.settings import Settings


@dataclass(frozen=True)
class PublishedPage:
    """Where the report's page was written, and the link people follow to it until `expires_at`."""

    bucket: str
    key: str
    url: str
    expires_at: datetime


class PageNotPublished(Exception):
    """The page could not be written (the message says why); the report is posted without it."""


class PagePublisher(Protocol):
    """Renders the report's page and puts it where a link reaches it (S3 and a presigned URL in AWS)."""

    def publish(self, report: FleetReport, now: datetime, post_key: str) -> PublishedPage: ...


class ReportPoster(Protocol):
    """Posts the ranked report (Slack in AWS) and returns the timestamps of its messages, the thread root first.
    `post_key` names a scheduled post, which a retry resumes; what went wrong on the side is appended to
    `problems`."""

    def post(
        self, ranked: RankedReport, now: datetime, *, post_key: str, page: PublishedPage | None, problems: list[str]
    ) -> list[str]: ...


# A poster connected on demand (in AWS it reads the bot token): only when the report is to be posted, and before its
# page is written, so that a Slack app that is not configured fails the post before anything is published.
ConnectPoster = Callable[[], ReportPoster]


class ReportStore(RankingStore, Protocol):
    """What the report reads (DynamoStore in AWS): the ranking, and for an export every latest recommendation."""

    def latest_recommendations(self) -> Sequence[Recommendation]: ...


def daily_report(
    store: ReportStore,
    settings: Settings,
    payload: Mapping[str, Any],
    now: datetime,
    *,
    poster: ConnectPoster | None,
    publisher: PagePublisher | None,
) -> dict[str, Any]:
    """The fleet report from the precomputed ranking; posted by `poster` (None: nowhere to post) unless the payload
    says {"post": false}, with its page when there is a `publisher`. Only {"include_recommendations": true} (an
    export) reads every latest recommendation.

    A scheduled post is keyed by its channel and scheduled time: when Lambda or the scheduler retries it after a
    failure half-way, it resumes after the last message that reached Slack."""
    scope = settings.report_scope
    ranked = ranked_report(store, now, settings.lookback_days, scope, settings.managed_tag_key)
    report = ranked.report
    result = report_json(report)
    result["hidden_recommendations"] = len(split_hidden(report.recommendations, ranked.decisions, now)[1]) + len(
        ranked.hidden_elsewhere
    )
    if payload.get("post", True) and poster is not None:
        connected = poster()
        scheduled = str(payload.get("scheduled_time") or payload.get("post_key") or "")
        post_key = f"{settings.slack.channel}#{scheduled}" if scheduled else ""
        problems: list[str] = []
        page = None
        if publisher is not None:
            try:
                page = publisher.publish(report, now, post_key)
            except PageNotPublished as error:
                problems.append(f"the report page was not written to S3: {error}")
            else:
                result["page"] = {"bucket": page.bucket, "key": page.key, "expires_at": page.expires_at.isoformat()}
        result["posted"] = connected.post(ranked, now, post_key=post_key, page=page, problems=problems)
        if problems:
            result["warnings"] = [*result["warnings"], *problems]
    result.pop("recommendations")  # the ranking's head only
    if payload.get("include_recommendations", False):
        listing = build_report(
            store.latest_recommendations(),
            now,
            settings.lookback_days,
            scope=scope,
            managed_tag_key=settings.managed_tag_key,
        )
        result["recommendations"] = report_json(listing)["recommendations"]
    return result
