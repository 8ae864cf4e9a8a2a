"""The Report function's wiring: its use-case (services/daily_report.py) with the Slack poster, the page in the stack's
bucket (drawn by adapters/html, written by adapters/aws) and the savings chart of the report's thread."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rightsizer.adapters.aws.report_pages import PRESIGN_CONFIG, S3PagePublisher
from rightsizer.adapters.html import page, png
from rightsizer.adapters.slack.client import bot_client
from rightsizer.adapters.slack.poster import Picture, SlackReportPoster
from rightsizer.bootstrap import Wiring
from rightsizer.services.daily_report import PagePublisher, ReportPoster, daily_report
from rightsizer.services.report import FleetReport, report_json


def report_payload(wiring: Wiring, payload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The report function's use-case (services/daily_report.py) with its adapters: the Slack poster when a channel and
    the secret are configured, the page in the stack's bucket when there is one."""
    settings = wiring.settings
    slack = settings.slack

    def slack_poster() -> ReportPoster:
        return SlackReportPoster(
            bot_client(slack.secret_name, slack.api_url),
            slack.channel,
            slack.top_n,
            scope=settings.report_scope,
            ledger=wiring.store,
            picture_of=savings_picture,
        )

    poster = slack_poster if slack.channel and slack.secret_name else None
    return daily_report(wiring.store, settings, payload, now, poster=poster, publisher=page_publisher(wiring))


def page_publisher(wiring: Wiring) -> PagePublisher | None:
    """The report's page in the stack's bucket (its presigned link), drawn by adapters/html; None without a bucket."""
    settings = wiring.settings
    if not settings.plan_bucket:
        return None

    def render(report: FleetReport) -> str:
        return page.render_report(report, policy=settings.policy, source="the daily report of GPU Rightsizer")

    return S3PagePublisher(
        lambda: wiring.session.client("s3", settings.home_region, extra=PRESIGN_CONFIG), settings.plan_bucket, render
    )


def savings_picture(report: FleetReport) -> Picture | None:
    """The savings chart for the report's Slack thread (adapters/html/png), with its alt text; None without savings."""
    document = report_json(report)
    chart = png.savings_png(document["recommendations"])
    return Picture(chart, png.alt_text(document)) if chart is not None else None
