"""The daily report through the real ReportFunction entry point, against a Slack API double that rate-limits:
slack_sdk's retry handlers absorb a 429, and a post that failed half-way resumes where it stopped."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import boto3
import pytest
from demo.aws_table import create_table_from_template
from demo.lambda_context import FakeLambdaContext
from moto import mock_aws
from slack_sdk.errors import SlackApiError

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.adapters.slack.client import RATE_LIMIT_RETRIES
from rightsizer.domain.scope import ActionScope
from rightsizer.services.ranking import RANKING_SIZE, Ranking
from tests.api_calls import record_api_call_details
from tests.slack_double import BOT_TOKEN, SIGNING_SECRET, SlackDouble, recommendation

pytestmark = pytest.mark.integration

CHANNEL, REGION, ACCOUNT = "C0GPUREPORT", "us-east-1", "123456789012"
FLEET = 70  # recommendations, more than the ranking keeps
SCHEDULED = {
    "version": "0",
    "id": "0e5b2f8a-7c4c-4b5e-9d3e-scheduled",
    "detail-type": "Scheduled Event",
    "source": "aws.scheduler",
    "account": ACCOUNT,
    "time": "2026-12-01T09:00:00Z",
    "region": REGION,
    "resources": ["arn:aws:scheduler:us-east-1:123456789012:schedule/default/gpu-rightsizer-report"],
    "detail": "{}",
}


@dataclass
class SlackWaits:
    """What slack_sdk's retry handlers would sleep (Retry-After), recorded instead of slept."""

    seconds: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.seconds.append(seconds)


@dataclass
class Stack:
    slack: SlackDouble
    store: DynamoStore
    waits: SlackWaits

    def posts(self) -> list[dict[str, Any]]:
        return [call.params for call in self.slack.of("chat.postMessage")]


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    from slack_sdk.http_retry import builtin_handlers

    waits = SlackWaits()
    monkeypatch.setattr(builtin_handlers, "time", waits)  # the module's only use of `time` is time.sleep
    slack = SlackDouble().start()
    with mock_aws():
        table = create_table_from_template(boto3.client("dynamodb", region_name=REGION))
        store = DynamoStore(boto3.resource("dynamodb", region_name=REGION).Table(table))
        recs = [recommendation(n, cost_after=f"{600 + n}.00") for n in range(1, FLEET + 1)]
        store.put_recommendations("run-1", recs, datetime.now(UTC))
        # As the pipeline's last step does:
        store.put_ranking("run-1", Ranking.of(recs, ActionScope.of(ACCOUNT, {REGION})))
        name = f"gpu-rightsizer/slack-{time.monotonic_ns()}"
        boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name=name, SecretString=json.dumps({"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET})
        )
        for key, value in {
            "TABLE_NAME": table,
            "AWS_REGION": REGION,
            "SLACK_SECRET_NAME": name,
            "SLACK_CHANNEL": CHANNEL,
            "SLACK_API_URL": slack.api_url,
            "RESIZE_STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:gpu-rightsizer-resize",
        }.items():
            monkeypatch.setenv(key, value)
        try:
            yield Stack(slack, store, waits)
        finally:
            slack.stop()


def post(event: dict[str, Any] | None = None) -> dict[str, Any]:
    # Imported here: the handler reads its metrics namespace from the environment at import.
    from rightsizer.handlers import report

    result: dict[str, Any] = report.handler(json.loads(json.dumps(event or SCHEDULED)), FakeLambdaContext())
    return result


def _identities(posts: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(p["blocks"], sort_keys=True) for p in posts]


def test_a_429_in_the_middle_of_the_report_is_retried_by_slack_sdk(stack: Stack) -> None:
    stack.slack.rate_limit("chat.postMessage", after=2, times=1)

    result = post()

    posts = stack.posts()
    assert len(posts) == len(result["posted"]) >= 3, "the third message met the 429"
    assert len(set(_identities(posts))) == len(posts), "no message twice"
    assert stack.waits.seconds and 1 <= stack.waits.seconds[0] < 2, "waited Retry-After (1 s) plus jitter"


def test_a_report_that_failed_half_way_resumes_without_duplicates(stack: Stack) -> None:
    stack.slack.rate_limit("chat.postMessage", after=2, times=RATE_LIMIT_RETRIES + 1)  # beyond slack_sdk's retries

    with pytest.raises(SlackApiError):
        post()
    first_attempt = stack.posts()
    assert len(first_attempt) == 2

    result = post()  # Lambda's (or the scheduler's) retry delivers the same scheduled event

    posts = stack.posts()
    assert len(posts) == len(result["posted"]), "every message exactly once over both attempts"
    assert len(set(_identities(posts))) == len(posts)
    root = first_attempt[0]
    assert "thread_ts" not in root
    assert {p.get("thread_ts") for p in posts[1:]} == {result["posted"][0]}, "the thread continues"
    assert result["posted"][:2] == [c.answer["ts"] for c in stack.slack.of("chat.postMessage")[:2]]


def test_every_posted_message_is_kept_for_later_edits(stack: Stack) -> None:
    result = post()

    kept = [stack.store.message(CHANNEL, ts) for ts in result["posted"]]
    assert all(message is not None for message in kept)
    shown = {rec_id for message in kept if message for rec_id in message.recommendation_ids}
    assert len(shown) == RANKING_SIZE, "each listed recommendation's buttons can be found again"


def test_the_post_reads_the_ranking_not_every_recommendation(stack: Stack) -> None:
    with record_api_call_details() as calls:
        result = post()

    reads = [call for call in calls if call.action.startswith("dynamodb:") and call.items_read]
    read_keys = [str(item["PK"]) for call in reads for item in _items(call.answer)]
    assert not any(key.startswith("LATEST#") for key in read_keys), "no latest recommendation is listed"
    assert sum(call.items_read for call in reads) <= 2, "the ranking item (and no decision): not the fleet"
    assert result["totals"]["instances"] == FLEET, "the totals are still the whole fleet's"
    last = stack.posts()[-1]["blocks"]
    assert f"{FLEET - RANKING_SIZE} smaller recommendation(s) not listed here" in json.dumps(last)


def test_an_export_lists_every_recommendation(stack: Stack) -> None:
    result = post({"post": False, "include_recommendations": True})

    assert len(result["recommendations"]) == FLEET
    assert not stack.posts()


def _items(answer: dict[str, Any]) -> list[dict[str, Any]]:
    found = [answer["Item"]] if "Item" in answer else list(answer.get("Items", []))
    return found + [item for items in answer.get("Responses", {}).values() for item in items]


def test_an_unscheduled_post_is_posted_afresh(stack: Stack) -> None:
    first = post({"post": True})["posted"]
    second = post({"post": True})["posted"]

    assert len(stack.posts()) == len(first) + len(second), "a manual run is a new post"


# ---------------------------------------------------------------------------------------------
# the report's page in the stack's bucket, linked from the summary; the savings chart shared in the thread

BUCKET = "gpu-rightsizer-plans-test"


@pytest.fixture
def with_bucket(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Stack:
    boto3.client("s3", region_name=REGION).create_bucket(Bucket=BUCKET)
    monkeypatch.setenv("PLAN_BUCKET", BUCKET)
    return stack


def test_the_summary_links_the_report_page_written_to_the_bucket_with_a_presigned_url(with_bucket: Stack) -> None:
    result = post()

    page = result["page"]
    assert page["bucket"] == BUCKET and page["key"].startswith("reports/"), "where the bucket's lifecycle expires it"
    assert page["key"].endswith("/fleet-report-20261201T090000Z.html"), "one page per scheduled post"
    stored = boto3.client("s3", region_name=REGION).get_object(Bucket=BUCKET, Key=page["key"])
    assert stored["ContentType"] == "text/html; charset=utf-8"
    html = stored["Body"].read().decode()
    assert html.startswith("<!DOCTYPE html>") and "training-1" in html, "the page shows the report's hosts"
    summary = json.dumps(with_bucket.posts()[0]["blocks"])
    (url,) = re.findall(r"<(https?://[^|>]+)\|The whole report as a page>", summary)
    parts = urlsplit(url.replace("&amp;", "&"))
    query = dict(parse_qsl(parts.query))
    assert parts.path.endswith(page["key"]), "the link is to that page"
    assert query["X-Amz-Expires"] == str(12 * 3600) and query["X-Amz-Signature"], "signed, and it expires"
    assert "expires within 12 h" in summary


def test_a_retried_post_rewrites_its_own_page_not_a_second_one(with_bucket: Stack) -> None:
    first, second = post()["page"]["key"], post()["page"]["key"]

    assert first == second
    listed = boto3.client("s3", region_name=REGION).list_objects_v2(Bucket=BUCKET, Prefix="reports/")
    assert [item["Key"] for item in listed["Contents"]] == [first]


def test_the_savings_chart_is_shared_in_the_thread_with_slacks_external_upload(stack: Stack) -> None:
    result = post()

    (step1,) = stack.slack.of("files.getUploadURLExternal")
    (upload,) = stack.slack.of("upload")
    (step3,) = stack.slack.of("files.completeUploadExternal")
    file_id = step1.answer["file_id"]
    png = stack.slack.uploads[file_id]
    assert png.startswith(b"\x89PNG\r\n\x1a\n"), "an image Slack shows, not SVG"
    assert int(step1.params["length"]) == len(png) == upload.params["length"]
    assert step1.params["filename"].endswith(".png")
    assert step1.params["alt_txt"].startswith("Bar chart of monthly savings by host"), "alt text for screen readers"
    assert step3.params["channel_id"] == CHANNEL and step3.params["thread_ts"] == result["posted"][0], "in the thread"
    assert [f["id"] for f in step3.params["files"]] == [file_id]
    assert not stack.slack.of("files.upload"), "files.upload is retired"
    methods = [call.method for call in stack.slack.calls if call.method != "auth.test"]
    assert methods[:4] == ["chat.postMessage", "files.getUploadURLExternal", "upload", "files.completeUploadExternal"]


def test_a_chart_slack_refuses_is_a_warning_and_the_report_is_still_posted(stack: Stack) -> None:
    stack.slack.failures["files.getUploadURLExternal"] = "missing_scope"  # an app installed before files:write

    result = post()

    assert len(stack.posts()) == len(result["posted"]) >= 3, "every message posted"
    assert any("savings chart was not shared in Slack" in w and "missing_scope" in w for w in result["warnings"])
    assert not stack.slack.of("files.completeUploadExternal")


def test_a_resumed_post_does_not_share_the_chart_again(stack: Stack) -> None:
    stack.slack.rate_limit("chat.postMessage", after=2, times=RATE_LIMIT_RETRIES + 1)
    with pytest.raises(SlackApiError):
        post()

    post()

    assert len(stack.slack.of("files.completeUploadExternal")) == 1


def test_a_page_the_bucket_refuses_is_a_warning_and_the_report_is_posted_without_its_link(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLAN_BUCKET", "no-such-bucket-here")

    result = post()

    assert "page" not in result
    assert any(w.startswith("the report page was not written to S3") for w in result["warnings"])
    assert "The whole report as a page" not in json.dumps(stack.posts()[0]["blocks"])


# ---------------------------------------------------------------------------------------------
# Slack's refusals that a person must fix name the channel and the fix; its own trouble (503) is retried


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        ("channel_not_found", "set the SlackChannel parameter to the channel's id"),
        ("not_in_channel", "send `/invite @GPU Rightsizer` in that channel"),
        ("is_archived", "unarchive it"),
        ("invalid_auth", "put its Bot User OAuth Token (xoxb-...) in the secret"),
    ],
)
def test_a_channel_slack_refuses_is_named_with_what_to_do(stack: Stack, code: str, fix: str) -> None:
    from rightsizer.adapters.slack.client import SlackRefused

    stack.slack.failures["chat.postMessage"] = code

    with pytest.raises(SlackRefused) as refused:
        post()

    message = str(refused.value)
    assert message.startswith(f"Slack refused the daily report in channel {CHANNEL} ({code}): "), message
    assert fix in message
    assert refused.value.code == code
    assert not stack.slack.of("chat.postMessage")[1:], "nothing more was tried after the refusal"


def test_slack_answering_503_is_retried_and_the_report_posted_once(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from slack_sdk.http_retry import handler

    monkeypatch.setattr(handler, "time", stack.waits)  # the server-error handler's backoff: recorded, not slept
    stack.slack.unavailable("chat.postMessage", after=1, times=2)  # within slack_sdk's server-error retries

    result = post()

    posts = stack.posts()
    assert len(posts) == len(result["posted"]) >= 3
    assert len(set(_identities(posts))) == len(posts), "no message twice"
    assert len(stack.waits.seconds) == 2, "two waits, one per 503"
