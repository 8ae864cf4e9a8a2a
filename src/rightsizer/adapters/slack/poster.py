"""Posts the daily report: the summary message in the channel, everything else as replies in its thread; with a
link to the report's page (presigned, expiring) in the summary and the savings chart as an image in the thread
(Slack's external upload: files.getUploadURLExternal, the upload, files.completeUploadExternal)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError

from rightsizer.adapters.slack.blocks import Hiding, daily_report_messages, escape, recommendation_ids_in
from rightsizer.adapters.slack.client import refused
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.scope import ActionScope
from rightsizer.services.daily_report import PublishedPage
from rightsizer.services.ports import Approval, PostedMessage
from rightsizer.services.ranking import RankedReport
from rightsizer.services.report import FleetReport


class ReportLedger(Protocol):
    """Where posted report messages are kept (DynamoStore in AWS)."""

    def save_message(self, message: PostedMessage, now: datetime, *, post_key: str = "", index: int = 0) -> None: ...

    def report_progress(self, post_key: str) -> dict[int, str]: ...


@dataclass(frozen=True)
class Picture:
    """An image for the report's thread (the savings chart), with the alt text Slack gives screen readers."""

    png: bytes
    alt_text: str
    title: str = "Savings by host"
    filename: str = "gpu-rightsizer-savings.png"


def page_link_block(url: str, hours: int) -> dict[str, Any]:
    """The summary's line that links the report's page."""
    text = (
        f":bar_chart: <{escape(url)}|The whole report as a page> (every host's chart; the link expires within "
        f"{hours} h)"
    )
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


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
    page_url: str | None = None,
    page_hours: int = 12,
    picture: Picture | None = None,
    problems: list[str] | None = None,
    approvals: Mapping[str, Approval] | None = None,
) -> list[str]:
    """Post the report and return the timestamps of its messages, the thread root first.

    `decisions` are the active snoozes and dismissals; what they hide leaves the actionable list and the
    summary says how many. For a report that is the fleet's ranking (its head), `hidden_elsewhere` are the
    hidden recommendations outside that head, so that the totals stay exact; `approvals` (by recommendation id) show
    where advice already approved stands instead of its Approve button. Every message is validated
    (`to_dict`) before the first one is sent, so a report never stops half-posted because of a Block Kit limit.

    With a `ledger`, each posted message is kept (so that buttons can be retired in it later); with a
    `post_key` as well, a post that failed half-way (rate limited beyond slack_sdk's retries, Slack down)
    resumes after the last message that reached Slack when it is retried with the same key: idempotent
    per message. Slack API errors propagate (SlackApiError), as client.SlackRefused where a person must act: it names
    the channel and the fix.

    `page_url` adds a line linking the report's page to the summary; `picture` is shared in the thread right after
    the summary, once (not again when a retried post resumes after it). Sharing is a side task: an error there
    (no `files:write` scope, Slack refusing the file) is appended to `problems` and the post goes on.
    """
    if not channel:
        raise ValueError("no Slack channel configured for the daily report (SLACK_CHANNEL)")
    at = now or datetime.now(UTC)
    payloads = [
        message.payload()
        for message in daily_report_messages(
            report,
            decisions,
            top_n=top_n,
            now=now,
            scope=scope,
            hidden_elsewhere=hidden_elsewhere,
            approvals=approvals,
        )
    ]
    if page_url and payloads:
        payloads[0]["blocks"] = [*payloads[0]["blocks"], page_link_block(page_url, page_hours)]
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
        if index == 0 and picture is not None:
            problem = share_picture(client, channel, ts, picture)
            if problem and problems is not None:
                problems.append(problem)
    return timestamps


@dataclass(frozen=True)
class SlackReportPoster:
    """`ReportPoster` into a channel with a bot's client; `picture_of` draws the thread's savings chart (adapters/html,
    wired in bootstrap)."""

    client: WebClient
    channel: str
    top_n: int
    scope: ActionScope | None
    ledger: ReportLedger
    picture_of: Callable[[FleetReport], Picture | None]

    def post(
        self, ranked: RankedReport, now: datetime, *, post_key: str, page: PublishedPage | None, problems: list[str]
    ) -> list[str]:
        picture = self.picture_of(ranked.report)
        hours = int((page.expires_at - now).total_seconds()) // 3600 if page is not None else 0  # 0: no link
        return post_daily_report(
            self.client,
            self.channel,
            ranked.report,
            ranked.decisions,
            self.top_n,
            now=now,
            hidden_elsewhere=ranked.hidden_elsewhere,
            scope=self.scope,
            ledger=self.ledger,
            post_key=post_key,
            page_url=page.url if page is not None else None,
            page_hours=hours,
            picture=picture,
            problems=problems,
            approvals=ranked.approvals,
        )


def share_picture(client: WebClient, channel: str, thread_ts: str, picture: Picture) -> str | None:
    """Upload `picture` into the thread of `thread_ts` (slack_sdk's files_upload_v2: Slack's external upload);
    what went wrong, or None."""
    try:
        client.files_upload_v2(
            channel=channel,
            thread_ts=thread_ts,
            file=picture.png,
            filename=picture.filename,
            title=picture.title,
            alt_txt=picture.alt_text,
        )
    except (SlackApiError, SlackRequestError) as error:
        return f"the savings chart was not shared in Slack: {error}"
    return None


def _post(client: WebClient, channel: str, payload: Mapping[str, Any], thread_ts: str | None) -> str:
    """One message; Slack's refusals that a person must fix (the channel, the app's membership, the token) say which
    channel and what to do (client.SlackRefused)."""
    try:
        # Unfurling would add previews of any link in reasons; the report should stay compact.
        response = client.chat_postMessage(
            channel=channel,
            text=payload["text"],
            blocks=payload["blocks"],
            thread_ts=thread_ts,
            unfurl_links=False,
            unfurl_media=False,
        )
    except SlackApiError as error:
        explained = refused(error, channel, "the daily report")
        if explained is None:
            raise
        raise explained from error
    return str(response["ts"])


__all__: Sequence[str] = (
    "Picture",
    "ReportLedger",
    "SlackReportPoster",
    "page_link_block",
    "post_daily_report",
    "share_picture",
)
