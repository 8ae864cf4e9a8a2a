"""Posts the daily report: the summary message in the channel, everything else as replies in its thread."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from slack_sdk import WebClient

from rightsizer.adapters.slack.blocks import Hiding, daily_report_messages, recommendation_ids_in
from rightsizer.domain.models import Recommendation
from rightsizer.domain.scope import ActionScope
from rightsizer.services.ports import PostedMessage
from rightsizer.services.report import FleetReport


class ReportLedger(Protocol):
    """Where posted report messages are kept (DynamoStore in AWS)."""

    def save_message(self, message: PostedMessage, now: datetime, *, post_key: str = "", index: int = 0) -> None: ...

    def report_progress(self, post_key: str) -> dict[int, str]: ...


def post_daily_report(
    client: WebClient,
    channel: str,
    report: FleetReport,
    decisions: Hiding,
    top_n: int,
    *,
    now: datetime | None = None,
    scope: ActionScope | None = None,
    ledger: ReportLedger | None = None,
    post_key: str = "",
    hidden_elsewhere: Iterable[Recommendation] = (),
) -> list[str]:
    """Post the report and return the timestamps of its messages, the thread root first.

    `decisions` are the active snoozes and dismissals; what they hide leaves the actionable list and the
    summary says how many. For a report that is the fleet's ranking (its head), `hidden_elsewhere` are the
    hidden recommendations outside that head, so that the totals stay exact. Every message is validated
    (`to_dict`) before the first one is sent, so a report never stops half-posted because of a Block Kit limit.

    With a `ledger`, each posted message is kept (so that buttons can be retired in it later); with a
    `post_key` as well, a post that failed half-way (rate limited beyond slack_sdk's retries, Slack down)
    resumes after the last message that reached Slack when it is retried with the same key: idempotent
    per message. Slack API errors propagate (SlackApiError).
    """
    if not channel:
        raise ValueError("no Slack channel configured for the daily report (SLACK_CHANNEL)")
    at = now or datetime.now(UTC)
    payloads = [
        message.payload()
        for message in daily_report_messages(
            report, decisions, top_n=top_n, now=now, scope=scope, hidden_elsewhere=hidden_elsewhere
        )
    ]
    done = ledger.report_progress(post_key) if ledger is not None and post_key else {}
    timestamps: list[str] = []
    for index, payload in enumerate(payloads):
        if index in done:
            timestamps.append(done[index])
            continue
        ts = _post(client, channel, payload, thread_ts=timestamps[0] if timestamps else None)
        timestamps.append(ts)
        if ledger is not None:
            message = PostedMessage(
                channel, ts, payload["text"], tuple(payload["blocks"]), recommendation_ids_in(payload["blocks"])
            )
            ledger.save_message(message, at, post_key=post_key, index=index)
    return timestamps


def _post(client: WebClient, channel: str, payload: Mapping[str, Any], thread_ts: str | None) -> str:
    # Unfurling would add previews of any link in reasons; the report should stay compact.
    response = client.chat_postMessage(
        channel=channel,
        text=payload["text"],
        blocks=payload["blocks"],
        thread_ts=thread_ts,
        unfurl_links=False,
        unfurl_media=False,
    )
    return str(response["ts"])


__all__: Sequence[str] = ("ReportLedger", "post_daily_report")
