"""The Slack function's edge, adversarially, through its real Lambda entry point (`handlers.slack.handler`)
with Function URL events: the deployed wiring on moto (table, secret, a resize state machine), a local
Slack API double, Bolt's lazy listeners re-invoked in-process."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import boto3
import pytest
from demo.aws_table import create_table_from_template
from demo.lambda_context import FakeLambdaContext
from demo.serverless import LocalLambda
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

import rightsizer.handlers.slack as slack_handler
from rightsizer import bootstrap
from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.client import web_client
from rightsizer.adapters.slack.poster import post_daily_report
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.report import build_report
from tests.events import load_event
from tests.slack_double import (
    BOT_TOKEN,
    SIGNING_SECRET,
    SlackDouble,
    click_body,
    command_body,
    function_url_event,
    publish,
    recommendation,
)

pytestmark = pytest.mark.integration

APPROVER, OTHER = "U0APPROVER", "U0BOB"
CHANNEL = "C0GPUREPORT"
REGION, ACCOUNT = "us-east-1", "123456789012"


@dataclass
class Deployed:
    slack: SlackDouble
    store: DynamoStore
    lazy: LocalLambda
    machine: str
    command_event: dict[str, Any] = field(default_factory=lambda: load_event("slack_command.json"))
    click_event: dict[str, Any] = field(default_factory=lambda: load_event("slack_interaction.json"))

    def send(self, event: dict[str, Any]) -> dict[str, Any]:
        """One HTTP request to the Function URL, then the lazy work it queued, as Lambda would run it."""
        response: dict[str, Any] = slack_handler.handler(event, FakeLambdaContext())
        while self.lazy.queue:
            lazy = slack_handler.handler(self.lazy.queue.pop(0), FakeLambdaContext())
            assert lazy["statusCode"] == 200, lazy
        return response

    def command(self, text: str, *, user: str = APPROVER, **form: str) -> dict[str, Any]:
        body = command_body(text, user=user, response_url=self.slack.response_url(f"c{time.monotonic_ns()}"))
        if form:
            body = urlencode({**dict(_form(body)), **form})
        return self.send(function_url_event(self.command_event, body))

    def click(self, action: str, rec: Recommendation, *, user: str = APPROVER, message: Any = None) -> dict[str, Any]:
        body = click_body(
            action, rec.recommendation_id, user=user, message=message, response_url=self.slack.response_url()
        )
        return self.send(function_url_event(self.click_event, body))

    def publish(self, *recs: Recommendation) -> None:
        publish(self.store, *recs)

    def executions(self) -> list[str]:
        listed = boto3.client("stepfunctions", region_name=REGION).list_executions(stateMachineArn=self.machine)
        return [e["name"] for e in listed["executions"]]

    def said(self) -> str:
        return self.slack.texts()


def _form(body: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(body, keep_blank_values=True)


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Deployed]:
    slack = SlackDouble().start()
    lazy = LocalLambda()
    with mock_aws():
        table = create_table_from_template(boto3.client("dynamodb", region_name=REGION))
        store = DynamoStore(boto3.resource("dynamodb", region_name=REGION).Table(table))
        machine = boto3.client("stepfunctions", region_name=REGION).create_state_machine(
            name="gpu-rightsizer-resize",
            definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/gpu-rightsizer-resize",
        )["stateMachineArn"]
        name = f"gpu-rightsizer/slack-{time.monotonic_ns()}"  # Powertools caches secrets by name
        boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name=name, SecretString=json.dumps({"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET})
        )
        env = {
            "SLACK_SECRET_NAME": name,
            "TABLE_NAME": table,
            "AWS_REGION": REGION,
            "SLACK_CHANNEL": CHANNEL,
            "SLACK_APPROVERS": APPROVER,
            "RESIZE_STATE_MACHINE_ARN": machine,
            "SLACK_API_URL": slack.api_url,
            "POWERTOOLS_LOG_LEVEL": "INFO",
        }
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setattr(slack_handler, "lambda_client", lambda session, region: lazy)
        bootstrap.lambda_wiring.cache_clear()
        slack_handler._entry.cache_clear()
        try:
            yield Deployed(slack, store, lazy, machine)
        finally:
            slack.stop()
            bootstrap.lambda_wiring.cache_clear()
            slack_handler._entry.cache_clear()


@pytest.fixture
def fleet(deployed: Deployed) -> list[Recommendation]:
    recs = [recommendation(n, cost_after=f"{700 + n}.00") for n in range(1, 5)]
    deployed.publish(*recs)
    return recs


def signed(
    template: dict[str, Any],
    raw: bytes,
    *,
    content_type: str = "application/x-www-form-urlencoded",
    timestamp: int | None = None,
    base64_body: bool = True,
) -> dict[str, Any]:
    """A Function URL event carrying exactly `raw`, correctly signed with the app's secret."""
    event = function_url_event(template, "placeholder")
    stamp = int(time.time()) if timestamp is None else timestamp
    # slack_double.sign() signs text; these bytes need not be text.
    digest = "v0=" + hmac.new(SIGNING_SECRET.encode(), f"v0:{stamp}:".encode() + raw, hashlib.sha256).hexdigest()
    event["headers"].update(
        {"x-slack-request-timestamp": str(stamp), "x-slack-signature": digest, "content-type": content_type}
    )
    event["isBase64Encoded"] = base64_body
    event["body"] = base64.b64encode(raw).decode() if base64_body else raw.decode("utf-8", "surrogateescape")
    return event


def form_of(payload: Any) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


def rejections(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == "Slack request rejected"]


# ------------------------------------------------------------------------------- bad input: 400 / 401, no traceback


def _unverifiable(deployed: Deployed) -> list[tuple[str, dict[str, Any]]]:
    good = function_url_event(deployed.command_event, command_body("help"))
    cases: list[tuple[str, dict[str, Any]]] = []
    raw = {**good, "body": base64.b64encode(b"\xff\xfe\x00garbage").decode(), "isBase64Encoded": True}
    cases.append(("non-UTF-8 body, not signed", raw))
    cases.append(("invalid base64", {**good, "body": "%%%not-base64%%%", "isBase64Encoded": True}))
    for label, name, value in (
        ("non-numeric timestamp", "x-slack-request-timestamp", "1e9"),
        ("unicode digits in timestamp", "x-slack-request-timestamp", "¹²³"),
        ("non-ASCII signature", "x-slack-signature", "v0=ü" * 3),
    ):
        cases.append((label, {**good, "headers": {**good["headers"], name: value}}))
    cases.append(("no signature", {**good, "headers": {"content-type": "application/x-www-form-urlencoded"}}))
    cases.append(("JSON body, not signed", {**good, "body": '{"type": "block_actions"}', "isBase64Encoded": False}))
    return cases


def _signed_but_malformed(deployed: Deployed) -> list[tuple[str, dict[str, Any]]]:
    click = deployed.click_event
    no_actions = json.loads(_form(click_body(blocks.ACTION_APPROVE, "rec-x"))[0][1])
    no_actions["actions"] = []
    return [
        ("non-UTF-8 body, signed", signed(click, b"payload=\xff\xfe")),
        ("non-UTF-8 percent escape", signed(click, b"payload=%FF%FE")),
        ("JSON body with a form content type", signed(click, b'{"type": "block_actions", "actions": []}')),
        ("malformed payload", signed(click, b"payload=%7Bnot+json")),
        ("payload that is not an object", signed(click, b"payload=%5B1%2C2%5D")),
        ("payload of another type", signed(click, form_of({"type": "view_submission"}))),
        ("interaction without actions", signed(click, form_of(no_actions))),
        ("neither command nor interaction", signed(click, b"hello=world")),
        ("a field twice", signed(click, b"command=%2Fgpu&command=%2Fgpu&user_id=U1")),
        ("JSON content type", signed(click, b"command=%2Fgpu&user_id=U1", content_type="application/json")),
        ("user of the wrong type", signed(click, form_of({**no_actions, "user": 7, "actions": [{"action_id": "a"}]}))),
    ]


@pytest.mark.parametrize(
    ("cases", "status"),
    [pytest.param(_unverifiable, 401, id="unverifiable"), pytest.param(_signed_but_malformed, 400, id="malformed")],
)
def test_bad_requests_get_a_4xx_and_one_log_line_without_traceback(
    deployed: Deployed,
    fleet: list[Recommendation],
    caplog: pytest.LogCaptureFixture,
    cases: Callable[[Deployed], list[tuple[str, dict[str, Any]]]],
    status: int,
) -> None:
    for label, event in cases(deployed):
        caplog.clear()
        response = deployed.send(event)

        assert response["statusCode"] == status, label
        [line] = rejections(caplog)
        assert line.levelno == logging.WARNING, label
        assert not any(r.exc_info for r in caplog.records) and "Traceback" not in caplog.text, label
    assert deployed.slack.calls == [] and deployed.lazy.queue == [] and deployed.executions() == []


def test_a_get_request_is_not_allowed(deployed: Deployed) -> None:
    event = function_url_event(deployed.command_event, command_body("help"))
    event["requestContext"]["http"]["method"] = "GET"

    assert deployed.send(event)["statusCode"] == 405


# ------------------------------------------------------------------------------- routing by the real form fields


@pytest.mark.parametrize(
    ("form", "text"),
    [
        pytest.param({"channel_name": "payload-ops"}, "top 2", id="channel-named-payload"),
        pytest.param({"channel_name": "gpu"}, "top 2 ", id="plain"),
        pytest.param({"team_domain": "payload"}, "report", id="team-named-payload"),
    ],
)
def test_commands_whose_form_contains_the_word_payload_still_work(
    deployed: Deployed, fleet: list[Recommendation], form: dict[str, str], text: str
) -> None:
    response = deployed.command(text, **form)

    assert response["statusCode"] == 200
    [answer] = deployed.slack.of("response_url")
    assert "Something went wrong" not in json.dumps(answer.params)
    assert fleet[0].instance_id in json.dumps(answer.params) or "can be saved" in json.dumps(answer.params)


def test_payload_as_command_text_gets_the_help_answer(deployed: Deployed, fleet: list[Recommendation]) -> None:
    response = deployed.command("top payload")

    assert response["statusCode"] == 200
    assert "`top` takes a number and filters written name=value (got `payload`)" in json.loads(response["body"])["text"]


@pytest.mark.parametrize("count", ["¹", "①", "٣", "３", "99999", "0", "-1", "1.5", "2²"])
def test_unusual_digits_in_top_get_the_help_answer(deployed: Deployed, fleet: list[Recommendation], count: str) -> None:
    response = deployed.command(f"top {count}")

    assert response["statusCode"] == 200
    body = json.loads(response["body"])
    # Not a count: "0" is refused as one, anything else is neither a count nor a name=value filter.
    refused = "`top` takes a positive number" if count == "0" else "`top` takes a number and filters written name=value"
    assert body["text"].startswith(refused) and "/gpu top [N]" in body["text"]
    assert deployed.lazy.queue == [] and deployed.slack.calls == []


def test_the_project_log_level_survives_bolt(deployed: Deployed, fleet: list[Recommendation]) -> None:
    from aws_lambda_powertools import Logger

    # The service logger as deployed (POWERTOOLS_SERVICE_NAME=gpu-rightsizer, POWERTOOLS_LOG_LEVEL=INFO); Lambda's
    # root logger stays at WARNING.
    project = Logger(service="gpu-rightsizer", level="INFO")
    root = logging.getLogger()
    root_level = root.level
    root.setLevel(logging.WARNING)
    try:
        deployed.command("top 2")
        deployed.command("top 1")
    finally:
        root.setLevel(root_level)

    assert project.log_level == logging.INFO, "Bolt configures a logger of its own, not the project's"
    assert logging.getLogger("gpu-rightsizer").isEnabledFor(logging.INFO)


# ------------------------------------------------------------------------------- decisions hide the advice everywhere


def _report_message(deployed: Deployed, rec: Recommendation) -> dict[str, Any]:
    """Post the daily report as the report function does (saved in the store) and return rec's message."""
    report = build_report(deployed.store.latest_recommendations(), datetime.now(UTC), 14)
    client = web_client(BOT_TOKEN, deployed.slack.api_url)
    post_daily_report(client, CHANNEL, report, [], 10, ledger=deployed.store, post_key="test")
    call = next(c for c in deployed.slack.of("chat.postMessage") if rec.recommendation_id in json.dumps(c.params))
    deployed.slack.clear()
    return {"ts": call.answer["ts"], "text": call.params["text"], "blocks": call.params["blocks"]}


def test_dismissed_advice_cannot_be_approved_from_an_older_message(
    deployed: Deployed, fleet: list[Recommendation]
) -> None:
    message = _report_message(deployed, fleet[0])
    deployed.click(blocks.ACTION_DISMISS, fleet[0], user=OTHER, message=message)

    deployed.click(blocks.ACTION_APPROVE, fleet[0], message=message)  # the old copy still shows Approve

    assert deployed.executions() == []
    refusal = deployed.slack.of("chat.postEphemeral")[-1].params["text"]
    assert f"Not approved: <@{OTHER}> dismissed this recommendation" in refusal
    approval = deployed.store.approval(fleet[0].recommendation_id)
    assert approval is None


def test_snoozing_from_a_command_retires_the_report_buttons_and_refuses_approval(
    deployed: Deployed, fleet: list[Recommendation]
) -> None:
    message = _report_message(deployed, fleet[1])

    deployed.command(f"snooze {fleet[1].instance_id} 3d", user=OTHER)

    [update] = deployed.slack.of("chat.update")
    assert (update.params["channel"], update.params["ts"]) == (CHANNEL, message["ts"])
    updated = {b.get("block_id"): b for b in update.params["blocks"]}
    retired = updated[blocks.actions_id(fleet[1].recommendation_id)]
    assert retired["type"] == "context" and f"Snoozed by <@{OTHER}>" in json.dumps(retired)
    assert updated[blocks.actions_id(fleet[0].recommendation_id)]["type"] == "actions", "others keep their buttons"

    deployed.click(blocks.ACTION_APPROVE, fleet[1], message=message)
    assert deployed.executions() == []
    assert "snoozed this host until" in deployed.slack.of("chat.postEphemeral")[-1].params["text"]


def test_a_dismissal_from_one_message_retires_the_buttons_in_the_report_too(
    deployed: Deployed, fleet: list[Recommendation]
) -> None:
    report = _report_message(deployed, fleet[2])
    deployed.command("top 4")  # an ephemeral answer with the same buttons
    deployed.slack.clear()

    deployed.click(blocks.ACTION_DISMISS, fleet[2], user=OTHER, message={"ts": "1764590499.000001", "blocks": []})

    report_updates = [u for u in deployed.slack.of("chat.update") if u.params["ts"] == report["ts"]]
    assert len(report_updates) == 1
    assert "Dismissed by" in json.dumps(report_updates[0].params["blocks"])


def test_approve_is_not_offered_outside_the_workflows_account_and_region(deployed: Deployed) -> None:
    home = recommendation(1)
    abroad = recommendation(2, region="eu-west-1")
    deployed.publish(home)
    deployed.publish(abroad)

    deployed.command("top 5")
    deployed.click(blocks.ACTION_APPROVE, abroad)

    [answer] = deployed.slack.of("response_url")
    listed = json.dumps(answer.params)
    approvable = [
        e["value"]
        for b in answer.params["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == blocks.ACTION_APPROVE
    ]
    assert approvable == [home.recommendation_id]
    assert "No Approve button:" in listed and "regional/template.yaml" in listed
    refusal = deployed.slack.of("chat.postEphemeral")[-1].params["text"]
    assert "Not approved" in refusal and "eu-west-1" in refusal and "Approve again" not in refusal
    assert "Error" not in refusal and deployed.executions() == []


def test_a_failed_start_names_no_exception_to_the_user(
    deployed: Deployed, fleet: list[Recommendation], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from rightsizer.adapters.aws.workflow import StepFunctionsResizeWorkflow

    def broken(self: Any, approval: Any, expected_state: str | None = None) -> str:
        raise ConnectionResetError("Connection reset by peer")

    monkeypatch.setattr(StepFunctionsResizeWorkflow, "start", broken)

    deployed.click(blocks.ACTION_APPROVE, fleet[3], message=_report_message(deployed, fleet[3]))

    told = deployed.slack.of("chat.postEphemeral")[-1].params["text"]
    assert "could not be started" in told and "ConnectionResetError" not in told
    [logged] = [r for r in caplog.records if r.getMessage() == "action not started"]
    assert "ConnectionResetError" in str(getattr(logged, "cause", "")), "operators see the cause in the log"


# ------------------------------------------------------------------------------- the fuzz: never a 5xx

HEADER_TEXT = st.text(max_size=80)
RAW = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"payload=", b"payload=%7B%7D", b"command=", b"payload=null", b"ssl_check=1"]),
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)
ACTION_IDS = st.sampled_from([blocks.ACTION_APPROVE, blocks.ACTION_DISMISS, blocks.ACTION_SNOOZE]) | JSONISH
ACTIONS = st.fixed_dictionaries({}, optional={"action_id": ACTION_IDS, "value": JSONISH})
FORM_FIELDS = st.sampled_from(["command", "text", "user_id", "payload", "ssl_check", "channel_name"])
ACTION_IDS = st.sampled_from([blocks.ACTION_APPROVE, blocks.ACTION_DISMISS, blocks.ACTION_SNOOZE]) | JSONISH
ACTIONS = st.fixed_dictionaries({}, optional={"action_id": ACTION_IDS, "value": JSONISH})
FORM_FIELDS = st.sampled_from(["command", "text", "user_id", "payload", "ssl_check", "channel_name"])
CLICKS = st.fixed_dictionaries(
    {"type": st.sampled_from(["block_actions", "view_submission", ""]) | st.text(max_size=10)},
    optional={
        "actions": st.lists(
            st.fixed_dictionaries({}, optional={"action_id": ACTION_IDS, "value": JSONISH}), max_size=3
        ),
        "user": JSONISH | st.fixed_dictionaries({"id": JSONISH}),
        "team": JSONISH,
        "channel": JSONISH,
        "container": JSONISH,
        "message": JSONISH | st.fixed_dictionaries({"ts": JSONISH, "blocks": JSONISH}),
    },
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    raw=RAW,
    encode=st.booleans(),
    content_type=st.sampled_from(["application/x-www-form-urlencoded", "application/json", "text/plain", ""])
    | HEADER_TEXT,
    timestamp=st.one_of(st.integers(-(10**12), 10**13).map(str), HEADER_TEXT),
    signature=HEADER_TEXT,
)
def test_fuzz_raw_bodies_and_headers_never_get_a_5xx(
    deployed: Deployed, raw: bytes, encode: bool, content_type: str, timestamp: str, signature: str
) -> None:
    event = function_url_event(deployed.click_event, "x")
    event["headers"] = {
        "content-type": content_type,
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": signature,
    }
    event["isBase64Encoded"] = encode
    event["body"] = base64.b64encode(raw).decode() if encode else raw.decode("utf-8", "replace")

    assert deployed.send(event)["statusCode"] in (401, 405)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        CLICKS.map(form_of),
        JSONISH.map(form_of),
        st.dictionaries(FORM_FIELDS, st.text(max_size=30), max_size=5).map(lambda form: urlencode(form).encode()),
        st.binary(max_size=200),
    ),
    st.booleans(),
)
def test_fuzz_signed_bodies_never_get_a_5xx(
    deployed: Deployed, fleet: list[Recommendation], raw: bytes, encode: bool
) -> None:
    event = signed(deployed.click_event, raw, base64_body=encode or not _is_text(raw))

    assert deployed.send(event)["statusCode"] in (200, 400, 404)


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# ------------------------------------------------------------------------------- Slack's rate limits


def test_every_slack_client_retries_rate_limits_and_server_errors(
    deployed: Deployed, fleet: list[Recommendation], monkeypatch: pytest.MonkeyPatch
) -> None:
    from slack_sdk.http_retry import builtin_handlers
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler, ServerErrorRetryHandler

    from rightsizer.bootstrap import notify as notify_wiring

    waits: list[float] = []
    monkeypatch.setattr(builtin_handlers, "time", type("Clock", (), {"sleep": staticmethod(waits.append)}))
    deployed.slack.rate_limit("chat.postEphemeral", after=0, times=1)

    deployed.click(blocks.ACTION_APPROVE, fleet[0], user=OTHER, message=_report_message(deployed, fleet[0]))

    [told] = deployed.slack.of("chat.postEphemeral")  # the app's per-request client retried the 429
    assert "Only approvers" in told.params["text"] and len(waits) == 1
    notifier_client = notify_wiring.slack_client(os.environ["SLACK_SECRET_NAME"], deployed.slack.api_url)
    assert {RateLimitErrorRetryHandler, ServerErrorRetryHandler} <= {type(h) for h in notifier_client.retry_handlers}
