"""Posts the daily report: the summary message in the channel, everything else as replies in its thread."""

from __future__ import annotations

from datetime import datetime

from slack_sdk import WebClient

from rightsizer.adapters.slack.blocks import Hiding, daily_report_messages
from rightsizer.services.report import FleetReport


def post_daily_report(
    client: WebClient,
    channel: str,
    report: FleetReport,
    decisions: Hiding,
    top_n: int,
    *,
    now: datetime | None = None,
) -> list[str]:
    """Post the report and return the timestamps of its messages, the thread root first.

    `decisions` are the active snoozes and dismissals; what they hide leaves the actionable list and the
    summary says how many.

    Every message is validated (`to_dict`) before the first one is sent, so a report never stops half-posted
    because of a Block Kit limit. Slack API errors propagate (SlackApiError): the caller's retry reposts.
    """
    if not channel:
        raise ValueError("no Slack channel configured for the daily report (SLACK_CHANNEL)")
    payloads = [message.payload() for message in daily_report_messages(report, decisions, top_n=top_n, now=now)]
    timestamps: list[str] = []
    for payload in payloads:
        # Unfurling would add previews of any link in reasons; the report should stay compact.
        response = client.chat_postMessage(
            channel=channel,
            text=payload["text"],
            blocks=payload["blocks"],
            thread_ts=timestamps[0] if timestamps else None,
            unfurl_links=False,
            unfurl_media=False,
        )
        timestamps.append(str(response["ts"]))
    return timestamps
