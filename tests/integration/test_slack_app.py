"""The Slack app end to end: signed requests in Function URL events, through Bolt's Lambda adapter.

Real pieces: the v0 signature scheme, `SlackRequestHandler`, Bolt's `LambdaLazyListenerRunner` (its Lambda
client is an in-process stand-in that queues the async self-invocation), `slack_sdk.WebClient` against a
local Slack API double, and `DynamoStore` on the template's table in moto.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from demo.aws_table import create_table_from_template
from demo.lambda_context import FakeLambdaContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws
from slack_sdk import WebClient

from rightsizer import bootstrap
from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.app import LambdaEntry, build_app
from rightsizer.adapters.slack.messages import MessageBoard
from rightsizer.adapters.slack.poster import post_daily_report
from rightsizer.domain.models import ActionKind
from rightsizer.domain.models.advice import DecisionKind, Recommendation
from rightsizer.services.ports import Approval, Decision
from rightsizer.services.report import build_report
from rightsizer.settings import Settings, SlackSettings
from tests.api_calls import record_api_call_details
from tests.events import load_event
from tests.slack_double import (
    BOT_TOKEN,
    SIGNING_SECRET,
    SlackDouble,
    click_body,
    command_body,
    function_url_event,
    idle,
    no_data,
    publish,
    recommendation,
    schedulable,
    schedule_record,
    superseding,
)

pytestmark = pytest.mark.integration

APPROVER, GROUP_MEMBER, MALLORY = "U0APPROVER", "U0GROUPMEMBER", "U0MALLORY"
GROUP = "S0GPUADMINS"
CHANNEL = "C0GPUREPORT"


class FakeWorkflow:
    def __init__(self) -> None:
        self.started: list[Approval] = []

    def start(self, approval: Approval) -> str:
        self.started.append(approval)
        return f"arn:aws:states:us-east-1:123456789012:execution:gpu-rightsizer-resize:{approval.recommendation_id}"


class QueuedLambda:
    """Stands in for boto3's Lambda client: InvocationType=Event invocations wait here until `drain()`."""

    def __init__(self) -> None:
        self.queue: list[dict[str, Any]] = []
        self.invocations: list[dict[str, Any]] = []

    def invoke(self, FunctionName: str, InvocationType: str, Payload: str) -> dict[str, Any]:
        assert InvocationType == "Event"
        event = json.loads(Payload)
        self.invocations.append({"FunctionName": FunctionName, "event": event})
        self.queue.append(event)
        return {"StatusCode": 202}


@dataclass
class World:
    slack: SlackDouble
    store: DynamoStore
    workflow: FakeWorkflow
    lambda_client: QueuedLambda
    entry: LambdaEntry
    context: FakeLambdaContext = field(default_factory=FakeLambdaContext)
    command_event: dict[str, Any] = field(default_factory=lambda: load_event("slack_command.json"))
    click_event: dict[str, Any] = field(default_factory=lambda: load_event("slack_interaction.json"))
    _clock: Iterator[int] = field(default_factory=lambda: iter(range(10**6)))

    def send(self, event: dict[str, Any]) -> dict[str, Any]:
        return self.entry(event, self.context)

    def drain(self) -> list[dict[str, Any]]:
        """Run the queued lazy self-invocations, as Lambda would, after the acknowledgement went out."""
        results = []
        while self.lambda_client.queue:
            results.append(self.send(self.lambda_client.queue.pop(0)))
        return results

    def command(self, text: str, *, user: str = "U0ALICE", drain: bool = True, **kw: Any) -> dict[str, Any]:
        body = command_body(text, user=user, response_url=self.slack.response_url(f"cmd{next(self._clock)}"))
        response = self.send(function_url_event(self.command_event, body, **kw))
        if drain:
            self.drain()
        return response

    def click(self, action: str, rec: Recommendation, *, user: str = APPROVER, message: dict[str, Any] | None = None,
              drain: bool = True, ephemeral: bool = False, **kw: Any) -> dict[str, Any]:  # fmt: skip
        body = click_body(
            action,
            rec.recommendation_id,
            user=user,
            message=message,
            ephemeral=ephemeral,
            response_url=self.slack.response_url(f"click{next(self._clock)}"),
        )
        response = self.send(function_url_event(self.click_event, body, **kw))
        if drain:
            self.drain()
        return response

    def responses(self) -> list[dict[str, Any]]:
        return [call.params for call in self.slack.of("response_url")]

    def publish(self, *recs: Recommendation) -> None:
        publish(self.store, *recs)

    def posted_report(self, rec: Recommendation) -> dict[str, Any]:
        """The report message holding `rec`, as Slack would hand it back in a block_actions payload."""
        post_daily_report(
            WebClient(token=BOT_TOKEN, base_url=self.slack.api_url),
            CHANNEL,
            build_report(self.store.latest_recommendations(), datetime.now(UTC), 14),
            [],
            10,
        )
        call = self.slack.of("chat.postMessage")[-1]
        ts = "1764590400.000001"
        for posted in self.slack.of("chat.postMessage"):
            if rec.recommendation_id in json.dumps(posted.params):
                call = posted
        ts = str(call.params.get("ts", ts))
        self.slack.clear()
        return {"ts": ts, "text": call.params["text"], "blocks": call.params["blocks"]}


@pytest.fixture
def world() -> Iterator[World]:
    with slack_world() as built:
        yield built


@contextmanager
def slack_world(*, actions_enabled: bool = True) -> Iterator[World]:
    with mock_aws():
        table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
        store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(table))
        slack = SlackDouble(usergroup_members={GROUP: [GROUP_MEMBER]}).start()
        config = Settings(
            lookback_days=14,
            slack=SlackSettings(channel=CHANNEL, approvers=(APPROVER,), approver_group=GROUP, command="/gpu", top_n=10),
            team_time_zones={"research": "Europe/Berlin"},
            actions_enabled=actions_enabled,
        )
        workflow = FakeWorkflow()
        app = build_app(
            config,
            client=WebClient(token=BOT_TOKEN, base_url=slack.api_url),
            store=store,
            workflow_factory=lambda: workflow,
            signing_secret=SIGNING_SECRET,
        )
        lambda_client = QueuedLambda()
        try:
            entry = LambdaEntry(app, signing_secret=SIGNING_SECRET, lambda_client=lambda_client)
            yield World(slack, store, workflow, lambda_client, entry)
        finally:
            slack.stop()


@pytest.fixture
def fleet(world: World) -> list[Recommendation]:
    recs = [recommendation(n, cost_after=f"{700 + n}.00") for n in range(1, 6)] + [no_data(99)]
    world.publish(*recs)
    return recs


def _decisions(world: World) -> list[tuple[str, str]]:
    return [(d.kind, d.instance_id) for d in world.store.active_decisions(datetime.now(UTC))]


# -- request authenticity --------------------------------------------------------------------------


@pytest.mark.parametrize("base64_body", [True, False])
def test_help_is_answered_in_the_acknowledgement_without_lazy_work(world: World, base64_body: bool) -> None:
    response = world.command("help", base64_body=base64_body)

    assert response["statusCode"] == 200
    body = json.loads(response["body"])
    assert body["response_type"] == "ephemeral"
    assert "/gpu top [N]" in body["text"] and "/gpu snooze <instance-id> <duration>" in body["text"]
    assert world.lambda_client.invocations == []
    assert world.slack.calls == []  # not even auth.test


def test_a_forged_signature_is_rejected_before_any_listener(world: World, fleet: list[Recommendation]) -> None:
    body = command_body("top 3", response_url=world.slack.response_url())
    forged = function_url_event(world.command_event, body, secret="not-the-signing-secret")
    tampered = function_url_event(world.command_event, body)
    tampered["isBase64Encoded"] = False
    tampered["body"] = body.replace("top+3", "report")

    assert world.send(forged)["statusCode"] == 401
    assert world.send(tampered)["statusCode"] == 401
    assert world.lambda_client.invocations == [] and world.slack.calls == []


@pytest.mark.parametrize("skew", [-301, 301, -3600])
def test_stale_and_future_timestamps_are_rejected(world: World, fleet: list[Recommendation], skew: int) -> None:
    response = world.command("top 3", timestamp=int(time.time()) + skew)

    assert response["statusCode"] == 401
    assert world.lambda_client.invocations == [] and world.slack.calls == []


def test_a_replayed_request_runs_nothing(world: World, fleet: list[Recommendation]) -> None:
    rec = fleet[0]
    event = function_url_event(
        world.click_event,
        click_body(blocks.ACTION_DISMISS, rec.recommendation_id, response_url=world.slack.response_url()),
    )

    first = world.send(json.loads(json.dumps(event)))
    world.drain()
    replay = world.send(json.loads(json.dumps(event)))

    assert (first["statusCode"], replay["statusCode"]) == (200, 401)
    assert len(world.lambda_client.invocations) == 1
    assert len(world.store.audit_log(rec.recommendation_id)) == 1


def test_a_slack_retry_is_acknowledged_without_running_again(world: World, fleet: list[Recommendation]) -> None:
    message = world.posted_report(fleet[0])
    world.click(blocks.ACTION_APPROVE, fleet[0], message=message)

    retry = world.click(blocks.ACTION_APPROVE, fleet[0], message=message, extra_headers={"X-Slack-Retry-Num": "1"})

    assert retry["statusCode"] == 200
    assert retry["headers"].get("x-slack-no-retry") == "1"
    assert len(world.lambda_client.invocations) == 1
    assert len(world.workflow.started) == 1


def test_the_lazy_only_header_from_the_internet_is_rejected(world: World, fleet: list[Recommendation]) -> None:
    body = click_body(blocks.ACTION_APPROVE, fleet[0].recommendation_id, response_url=world.slack.response_url())
    spoofed = function_url_event(
        world.click_event,
        body,
        extra_headers={"x-slack-bolt-lazy-only": "1", "x-slack-bolt-lazy-function-name": "lazy_approve_resize"},
    )

    assert world.send(spoofed)["statusCode"] == 401
    assert world.workflow.started == [] and world.slack.calls == []


# -- slash command ---------------------------------------------------------------------------------


def test_top_acks_at_once_and_answers_through_the_response_url(world: World, fleet: list[Recommendation]) -> None:
    response = world.command("top 3", drain=False)

    assert (response["statusCode"], response["body"]) == (200, "")
    assert world.responses() == []  # nothing slow happened before the acknowledgement
    [invocation] = world.lambda_client.invocations
    assert invocation["FunctionName"] == world.context.invoked_function_arn

    world.drain()

    [answer] = world.responses()
    assert answer["response_type"] == "ephemeral"
    listed = [b for b in answer["blocks"] if (b.get("block_id") or "").startswith("rec:")]
    assert [b["block_id"] for b in listed] == [f"rec:{r.recommendation_id}" for r in fleet[:3]]
    assert blocks.ACTION_APPROVE in json.dumps(answer)


def test_report_show_and_why(world: World, fleet: list[Recommendation]) -> None:
    world.command("report")
    world.command(f"show {fleet[1].instance_id}")
    world.command(f"why {fleet[1].instance_id}")
    world.command("show i-0fedcba9876543210")

    report, show, why, unknown = world.responses()
    assert "can be saved across *5* recommendation(s)" in json.dumps(report)
    assert "no GPU metrics" in json.dumps(report)
    assert "p95 12%" in json.dumps(show, ensure_ascii=False) and "GPU use" in json.dumps(show)
    assert "one A10G carries the load" in json.dumps(why)
    assert "No recommendation for `i-0fedcba9876543210`" in unknown["text"]


def test_show_why_and_snooze_read_their_host_by_key_whatever_the_fleet(world: World) -> None:
    now = datetime.now(UTC)
    recs = [recommendation(n, cost_after=f"{700 + n}.00") for n in range(1, 121)]
    world.publish(*recs)
    for rec in recs[:40]:  # people decided on many other hosts
        kind, until = (
            (DecisionKind.SNOOZE, now + timedelta(days=3))
            if rec.instance_id[-1] in "02468"
            else (DecisionKind.DISMISS, None)
        )
        world.store.put_decision(
            Decision(kind, rec.account_id, rec.region, rec.instance_id, "U0BOB", now, until, rec.recommendation_id)
        )
    host = recs[90]
    world.store.put_decision(
        Decision(
            DecisionKind.SNOOZE, host.account_id, host.region, host.instance_id, "U0CAROL", now, now + timedelta(days=2)
        )
    )

    reads: dict[str, list[Any]] = {}
    for text in (f"show {host.instance_id}", f"why {host.instance_id}", f"snooze {recs[100].instance_id} 3d"):
        with record_api_call_details() as calls:
            world.command(text)
        reads[text.split()[0]] = [call for call in calls if call.action.startswith("dynamodb:")]

    show, why, snoozed = world.responses()
    assert "Snoozed by <@U0CAROL>" in json.dumps(show), "the host's own snooze is found by key"
    assert "one A10G carries the load" in json.dumps(why)
    assert "is snoozed until" in snoozed["text"]
    for verb, calls in reads.items():
        assert all(call.action != "dynamodb:Scan" and "IndexName" not in call.params for call in calls), verb
        assert sum(call.items_read for call in calls) <= 3, f"{verb} reads a few items, not the fleet's"
    assert {call.action for call in reads["show"]} <= {"dynamodb:GetItem", "dynamodb:PutItem"}, "by key only"


def test_snooze_command_hides_the_host_from_reports(world: World, fleet: list[Recommendation]) -> None:
    world.command(f"snooze {fleet[0].instance_id} 3d", user="U0BOB")
    world.command("top")

    snoozed, top = world.responses()
    assert "is snoozed until" in snoozed["text"]
    assert _decisions(world) == [("snooze", fleet[0].instance_id)]
    assert fleet[0].instance_id not in json.dumps(top) and "1 hidden" in json.dumps(top)


def test_malformed_snooze_gets_a_helpful_answer_and_writes_nothing(world: World, fleet: list[Recommendation]) -> None:
    response = world.command(f"snooze {fleet[0].instance_id} 91d")

    assert response["statusCode"] == 200
    assert "at most 90 days" in json.loads(response["body"])["text"]
    assert _decisions(world) == [] and world.lambda_client.invocations == []


COMMAND_WORDS = st.sampled_from(["help", "report", "top", "show", "why", "snooze", "TOP", "i-0123456789abcdef0"])
TOKENS = st.one_of(
    COMMAND_WORDS, st.text(max_size=12), st.integers(-5, 10**6).map(str), st.sampled_from(["3d", "91d", "0h"])
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=60), st.lists(TOKENS, max_size=4).map(" ".join)))
def test_any_command_text_gets_a_200_and_a_helpful_ephemeral_answer(
    world: World, fleet: list[Recommendation], text: str
) -> None:
    world.slack.clear()
    world.lambda_client.invocations.clear()

    response = world.command(text)

    assert response["statusCode"] == 200
    if response["body"]:
        answer = json.loads(response["body"])
    else:  # acknowledged empty: the answer came through response_url from the lazy listener
        assert len(world.lambda_client.invocations) == 1
        answer = world.responses()[-1]
    assert answer["response_type"] == "ephemeral"
    assert answer["text"].strip()
    assert "Something went wrong" not in answer["text"]


# -- buttons ---------------------------------------------------------------------------------------


def test_non_approver_is_refused_and_audited(world: World, fleet: list[Recommendation]) -> None:
    message = world.posted_report(fleet[0])

    response = world.click(blocks.ACTION_APPROVE, fleet[0], user=MALLORY, message=message)

    assert response["statusCode"] == 200
    assert world.workflow.started == []
    [refusal] = world.slack.of("chat.postEphemeral")
    assert refusal.params["user"] == MALLORY and refusal.params["channel"] == CHANNEL
    assert "Only approvers" in refusal.params["text"] and f"<@{APPROVER}>" in refusal.params["text"]
    assert [(e.event, e.actor) for e in world.store.audit_log(fleet[0].recommendation_id)] == [
        ("approve-refused", MALLORY)
    ]
    assert world.store.approval(fleet[0].recommendation_id) is None
    assert world.slack.of("chat.update") == []


def test_approver_starts_the_resize_and_the_message_is_updated_in_place(
    world: World, fleet: list[Recommendation]
) -> None:
    message = world.posted_report(fleet[0])

    world.click(blocks.ACTION_APPROVE, fleet[0], message=message)

    [started] = world.workflow.started
    assert (started.recommendation_id, started.from_type, started.to_type) == (
        fleet[0].recommendation_id,
        "g5.12xlarge",
        "g5.xlarge",
    )
    [update] = world.slack.of("chat.update")
    assert (update.params["channel"], update.params["ts"]) == (CHANNEL, message["ts"])
    assert update.token == BOT_TOKEN
    updated = json.dumps(update.params["blocks"])
    assert f"Resize started by <@{APPROVER}>" in updated and fleet[0].recommendation_id in updated
    assert len(update.params["blocks"]) == len(message["blocks"])  # the rest of the report is intact
    approval = world.store.approval(fleet[0].recommendation_id)
    assert approval is not None
    assert (approval.status, approval.slack_channel, approval.slack_ts) == ("running", CHANNEL, message["ts"])
    assert approval.execution_arn.endswith(fleet[0].recommendation_id)
    assert [e.event for e in world.store.audit_log(fleet[0].recommendation_id)] == ["approve"]


def test_usergroup_members_may_approve(world: World, fleet: list[Recommendation]) -> None:
    message = world.posted_report(fleet[1])

    world.click(blocks.ACTION_APPROVE, fleet[1], user=GROUP_MEMBER, message=message)

    assert [a.approver for a in world.workflow.started] == [GROUP_MEMBER]
    [lookup] = world.slack.of("usergroups.users.list")
    assert lookup.params["usergroup"] == GROUP


def test_a_double_click_starts_the_workflow_once(world: World, fleet: list[Recommendation]) -> None:
    message = world.posted_report(fleet[0])

    # Two separately signed deliveries (one second apart), both acknowledged before either lazy run.
    now = int(time.time())
    first = world.click(blocks.ACTION_APPROVE, fleet[0], message=message, drain=False, timestamp=now)
    second = world.click(blocks.ACTION_APPROVE, fleet[0], message=message, drain=False, timestamp=now + 1)
    world.drain()

    assert (first["statusCode"], second["statusCode"]) == (200, 200)
    assert len(world.lambda_client.invocations) == 2
    assert len(world.workflow.started) == 1
    [note] = world.slack.of("chat.postEphemeral")
    assert "Already approved by <@U0APPROVER>" in note.params["text"]


def test_lambda_retrying_the_lazy_invocation_does_not_start_twice(world: World, fleet: list[Recommendation]) -> None:
    message = world.posted_report(fleet[0])
    world.click(blocks.ACTION_APPROVE, fleet[0], message=message, drain=False)
    [event] = world.lambda_client.queue

    world.drain()
    world.send(json.loads(json.dumps(event)))  # Lambda's async retry delivers the same payload again

    assert len(world.workflow.started) == 1


def test_a_superseded_recommendation_cannot_be_approved(world: World, fleet: list[Recommendation]) -> None:
    message = world.posted_report(fleet[0])
    world.publish(superseding(fleet[0]), *fleet[1:])

    world.click(blocks.ACTION_APPROVE, fleet[0], message=message)

    assert world.workflow.started == []
    [note] = world.slack.of("chat.postEphemeral")
    assert "superseded" in note.params["text"]
    assert world.store.approval(fleet[0].recommendation_id) is None


def test_dismiss_writes_a_decision_and_updates_the_message(world: World, fleet: list[Recommendation]) -> None:
    message = world.posted_report(fleet[2])

    world.click(blocks.ACTION_DISMISS, fleet[2], user="U0BOB", message=message)

    [decision] = world.store.active_decisions(datetime.now(UTC))
    assert (decision.kind, decision.recommendation_id, decision.actor) == (
        "dismiss",
        fleet[2].recommendation_id,
        "U0BOB",
    )
    [update] = world.slack.of("chat.update")
    assert "Dismissed by <@U0BOB>" in json.dumps(update.params["blocks"])
    world.command("top")
    assert fleet[2].instance_id not in json.dumps(world.responses()[-1])


def test_snooze_button_snoozes_for_seven_days(world: World, fleet: list[Recommendation]) -> None:
    message = world.posted_report(fleet[3])
    before = datetime.now(UTC)

    world.click(blocks.ACTION_SNOOZE, fleet[3], user="U0BOB", message=message)

    [decision] = world.store.active_decisions(before)
    assert decision.kind == "snooze" and decision.until is not None
    assert timedelta(days=7) <= decision.until - before < timedelta(days=7, minutes=1)
    [update] = world.slack.of("chat.update")
    assert "Snoozed by <@U0BOB>" in json.dumps(update.params["blocks"])


def test_approving_from_an_ephemeral_answer_opens_a_thread_in_the_report_channel(
    world: World, fleet: list[Recommendation]
) -> None:
    world.click(blocks.ACTION_APPROVE, fleet[4], ephemeral=True)

    [started] = world.workflow.started
    [replaced] = world.responses()
    assert replaced["replace_original"] is True and "Resize started" in replaced["text"]
    # The thread was opened (and handed to the workflow) before the workflow started.
    [root] = world.slack.of("chat.postMessage")
    assert root.params["channel"] == CHANNEL and "approved by <@U0APPROVER>" in root.params["text"]
    assert started.slack_channel == CHANNEL and started.slack_ts.startswith("1764590400.")
    [update] = world.slack.of("chat.update")
    assert (update.params["channel"], update.params["ts"]) == (CHANNEL, started.slack_ts)
    assert "Resize started" in json.dumps(update.params["blocks"])
    approval = world.store.approval(fleet[4].recommendation_id)
    assert approval is not None and (approval.slack_channel, approval.slack_ts) == (CHANNEL, started.slack_ts)


# -- daily report ----------------------------------------------------------------------------------


def test_daily_report_of_120_recommendations_is_threaded_with_nothing_dropped(world: World) -> None:
    recs = [recommendation(n, cost_after=f"{600 + n}.00") for n in range(1, 121)] + [no_data(500 + n) for n in range(4)]
    client = WebClient(token=BOT_TOKEN, base_url=world.slack.api_url)

    timestamps = post_daily_report(client, CHANNEL, build_report(recs, datetime.now(UTC), 14), [], 10)

    posts = world.slack.of("chat.postMessage")
    assert len(posts) == len(timestamps) > 1
    assert "thread_ts" not in posts[0].params
    assert {p.params["thread_ts"] for p in posts[1:]} == {timestamps[0]}
    assert all(len(p.params["blocks"]) <= 50 for p in posts)
    text = world.slack.texts("chat.postMessage")
    for rec in recs:
        assert rec.instance_id in text
    assert "▇" in text and "install the CloudWatch agent with its NVIDIA GPU plugin (agent/README.md)" in text


def test_the_table_comes_from_the_template(world: World) -> None:
    described = boto3.client("dynamodb", region_name="us-east-1").describe_table(TableName="gpu-rightsizer-test")[
        "Table"
    ]
    assert [k["AttributeName"] for k in described["KeySchema"]] == ["PK", "SK"]
    assert [i["IndexName"] for i in described["GlobalSecondaryIndexes"]] == ["GSI1"]
    ttl = boto3.client("dynamodb", region_name="us-east-1").describe_time_to_live(TableName="gpu-rightsizer-test")
    assert ttl["TimeToLiveDescription"]["AttributeName"] == "expiration"


# -- the Lambda handler ----------------------------------------------------------------------------


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str | None], Any]]:
    """The real handler module with its environment, on moto; returns a function that sets the secret."""
    import rightsizer.handlers.slack as module

    with mock_aws():
        table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
        secrets = boto3.client("secretsmanager", region_name="us-east-1")
        name = f"gpu-rightsizer/slack-{time.monotonic_ns()}"  # Powertools caches secrets by name
        secrets.create_secret(Name=name)
        for key, value in {"SLACK_SECRET_NAME": name, "TABLE_NAME": table, "AWS_REGION": "us-east-1"}.items():
            monkeypatch.setenv(key, value)
        bootstrap.lambda_wiring.cache_clear()
        module._entry.cache_clear()

        def put(secret: str | None) -> Any:
            if secret is not None:
                secrets.put_secret_value(SecretId=name, SecretString=secret)
            return module.handler

        yield put
        bootstrap.lambda_wiring.cache_clear()
        module._entry.cache_clear()


def test_the_lambda_handler_answers_a_signed_command(deployed: Callable[[str | None], Any]) -> None:
    handler = deployed(json.dumps({"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET}))
    event = function_url_event(load_event("slack_command.json"), command_body("help"))

    response = handler(event, FakeLambdaContext())

    assert response["statusCode"] == 200
    assert "/gpu report" in json.loads(response["body"])["text"]
    assert handler(event, FakeLambdaContext())["statusCode"] == 401  # the replay guard is wired in


@pytest.mark.parametrize(
    ("secret", "complaint"),
    [
        (None, "has no value yet"),
        ("not json SECRET-1", "is not valid JSON"),
        ('{"bot_token": "xoxb-SECRET-1"}', "has no signing_secret"),
        ('{"bot_token": "xoxp-SECRET-1", "signing_secret": "SECRET-2"}', "must be a bot token (xoxb-...)"),
    ],
)
def test_an_unfilled_secret_gives_a_clear_error_without_secret_values(
    deployed: Callable[[str | None], Any], caplog: pytest.LogCaptureFixture, secret: str | None, complaint: str
) -> None:
    handler = deployed(secret)
    event = function_url_event(load_event("slack_command.json"), command_body("help"))

    response = handler(event, FakeLambdaContext())

    assert response["statusCode"] == 503
    assert complaint in caplog.text and "docs/connect-slack.md" in caplog.text
    assert "SECRET-" not in caplog.text + response["body"]


# -- least privilege -------------------------------------------------------------------------------


# IAM names of API operations whose action name differs from the operation name.
def test_the_slack_function_is_granted_exactly_the_calls_it_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The production handler, wired as deployed (real Step Functions adapter on moto), through every path."""
    import rightsizer.handlers.slack as module
    from tests.api_calls import policy_actions, record_api_call_details
    from tests.integration.test_iam import assert_reference

    slack = SlackDouble().start()
    with mock_aws():
        table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
        store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(table))
        recs = [recommendation(n) for n in (1, 2, 3)]
        publish(store, *recs)
        machine = boto3.client("stepfunctions", region_name="us-east-1").create_state_machine(
            name="gpu-rightsizer-resize",
            definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
            roleArn="arn:aws:iam::123456789012:role/gpu-rightsizer-resize",
        )["stateMachineArn"]
        name = f"gpu-rightsizer/slack-{time.monotonic_ns()}"
        boto3.client("secretsmanager", region_name="us-east-1").create_secret(
            Name=name, SecretString=json.dumps({"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET})
        )
        env = {
            "SLACK_SECRET_NAME": name,
            "TABLE_NAME": table,
            "AWS_REGION": "us-east-1",
            "SLACK_CHANNEL": CHANNEL,
            "SLACK_APPROVERS": APPROVER,
            "RESIZE_STATE_MACHINE_ARN": machine,
            "SLACK_API_URL": slack.api_url,
        }
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        bootstrap.lambda_wiring.cache_clear()
        module._entry.cache_clear()
        queued: list[dict[str, Any]] = []

        def invoke(params: dict[str, Any]) -> dict[str, Any]:
            queued.append(json.loads(params["Payload"]))
            return {"StatusCode": 202}

        command, click = load_event("slack_command.json"), load_event("slack_interaction.json")
        url = slack.response_url()
        requests = [
            function_url_event(command, command_body("top 2", response_url=url), timestamp=int(time.time()) - 1),
            function_url_event(command, command_body(f"show {recs[0].instance_id}", response_url=url)),
            function_url_event(command, command_body(f"snooze {recs[2].instance_id} 1w", response_url=url)),
            function_url_event(click, click_body(blocks.ACTION_APPROVE, recs[0].recommendation_id, user=APPROVER)),
            function_url_event(click, click_body(blocks.ACTION_DISMISS, recs[1].recommendation_id, user=MALLORY)),
        ]
        try:
            with record_api_call_details({"lambda:InvokeFunction": invoke}) as calls:
                # The function as deployed: named <stack>-slack (the lazy self-invocations name it).
                deployed = FakeLambdaContext(
                    function_name="gpu-rightsizer-slack",
                    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:gpu-rightsizer-slack",
                )
                for event in requests:
                    assert module.handler(event, deployed)["statusCode"] == 200
                    while queued:
                        assert module.handler(queued.pop(0), deployed)["statusCode"] == 200
            executions = boto3.client("stepfunctions", region_name="us-east-1").list_executions(stateMachineArn=machine)
            assert_reference("SlackFunction", calls, table, name)  # AWS's authorization reference, resources too
        finally:
            slack.stop()
            bootstrap.lambda_wiring.cache_clear()
            module._entry.cache_clear()

    assert [e["name"] for e in executions["executions"]] == [recs[0].recommendation_id]
    assert "Resize started by" in slack.texts("chat.update") and "Dismissed by" in slack.texts("chat.update")

    # DeleteItem is Powertools idempotency removing its in-progress record after a failed start: granted for
    # that failure path only; every other granted action is exercised above.
    called = {call.action for call in calls}
    assert policy_actions("SlackFunction") - called == {"dynamodb:DeleteItem"}
    assert called <= policy_actions("SlackFunction")


# -- one click for stops and schedules; /gpu schedules -------------------------------------------------------


def _buttons(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["action_id"]: e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]}


def test_one_click_stops_an_idle_host_and_schedules_an_office_hours_host(world: World) -> None:
    host, office = idle(7), schedulable(8, team="research")
    world.publish(host, office)
    stop_message, schedule_message = world.posted_report(host), world.posted_report(office)
    labels = [
        e["text"]["text"]
        for message in (stop_message, schedule_message)
        for b in message["blocks"]
        if b["type"] == "actions"
        and b["block_id"] in (blocks.actions_id(host.recommendation_id), blocks.actions_id(office.recommendation_id))
        for e in b["elements"]
        if e["action_id"] == blocks.ACTION_APPROVE
    ]
    assert set(labels) == {"Approve schedule", "Approve stop"}

    world.click(blocks.ACTION_APPROVE, host, message=stop_message)
    world.click(blocks.ACTION_APPROVE, office, message=schedule_message)

    stop, schedule = world.workflow.started
    assert (stop.action, stop.to_type) == (ActionKind.STOP, "stopped")
    assert schedule.action is ActionKind.SCHEDULE and schedule.schedule is not None
    assert schedule.schedule.time_zone == "Europe/Berlin"  # the team's time zone from settings
    notes = " ".join(json.dumps(update.params["blocks"]) for update in world.slack.of("chat.update"))
    assert f"Stop started by <@{APPROVER}>" in notes and f"Schedule started by <@{APPROVER}>" in notes


def test_stopping_a_scarce_type_takes_the_button_that_names_the_capacity_risk(world: World) -> None:
    host = idle(9, instance_type="p4d.24xlarge", cost="16029.00")
    world.publish(host)
    message = world.posted_report(host)
    buttons = _buttons(message)
    assert blocks.ACTION_APPROVE not in buttons
    risky = buttons[blocks.ACTION_APPROVE_SCARCE]
    assert risky["text"]["text"] == "Approve stop (capacity risk)" and risky["style"] == "danger"
    assert "Risk: restart capacity is not guaranteed: p4d.24xlarge is scarce" in risky["confirm"]["text"]["text"]

    world.click(blocks.ACTION_APPROVE, host, message=message)  # a plain Approve (an old or forged button)
    assert world.workflow.started == []
    assert "capacity is scarce" in world.slack.of("chat.postEphemeral")[-1].params["text"]

    world.click(blocks.ACTION_APPROVE_SCARCE, host, message=message)
    [started] = world.workflow.started
    assert started.capacity_risk_confirmed is True


def test_gpu_schedules_lists_each_pair_and_remove_starts_its_removal(world: World) -> None:
    world.command("schedules")
    assert "No stop/start schedules" in world.responses()[-1]["text"]
    host = schedulable(11)
    record = schedule_record(host, datetime.now(UTC))
    world.store.put_schedule(record)

    world.command("schedules")

    listing = world.responses()[-1]
    assert listing["response_type"] == "ephemeral"
    shown = json.dumps(listing["blocks"])
    assert host.instance_id in shown and "starts 07:45 Mon-Fri" in shown and "cron(0 19 ? * MON-FRI *)" in shown
    [remove] = [
        b["accessory"]
        for b in listing["blocks"]
        if b.get("accessory", {}).get("action_id") == blocks.ACTION_REMOVE_SCHEDULE
    ]
    assert remove["value"] == record.key and remove["confirm"]["title"]["text"] == "Remove this schedule?"

    def click_remove(user: str) -> None:
        url = world.slack.response_url(f"remove-{user}")
        body = click_body(blocks.ACTION_REMOVE_SCHEDULE, record.key, user=user, ephemeral=True, response_url=url)
        world.send(function_url_event(world.click_event, body))
        world.drain()

    click_remove(MALLORY)
    assert world.workflow.started == [], "only approvers remove schedules"
    click_remove(APPROVER)

    [started] = world.workflow.started
    assert (started.action, started.recommendation_id) == (
        ActionKind.UNSCHEDULE,
        f"{host.recommendation_id}-unschedule",
    )
    assert started.schedule == record.plan
    [thread] = world.slack.of("chat.postMessage")  # progress goes to a thread in the report channel
    assert thread.params["channel"] == CHANNEL and "Schedule removal approved" in thread.params["text"]
    assert "Removing the stop/start schedule" in world.responses()[-1]["text"]


# -- issue 21: buttons that work, edits that compose, capacity by reservation ----------------------------------------


def _saved_report(world: World) -> dict[str, Any]:
    """The daily report as the report function posts it (each message saved), as Slack hands it back in a click."""
    report = build_report(world.store.latest_recommendations(), datetime.now(UTC), 14)
    [ts] = post_daily_report(WebClient(token=BOT_TOKEN, base_url=world.slack.api_url), CHANNEL, report, [], 10,
                             ledger=world.store)  # fmt: skip
    [posted] = world.slack.of("chat.postMessage")
    world.slack.clear()
    return {"ts": ts, "text": posted.params["text"], "blocks": posted.params["blocks"]}


def _lines(message_blocks: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """recommendation id -> "buttons", or the text of the note that replaced them."""
    shown = {}
    for block in message_blocks:
        block_id = str(block.get("block_id") or "")
        if block_id.startswith("act:"):
            shown[block_id.removeprefix("act:")] = "buttons" if block["type"] == "actions" else json.dumps(block)
    return shown


def test_an_untagged_host_has_no_approve_button_and_its_approve_is_refused_in_the_same_words(world: World) -> None:
    tagged, untagged = recommendation(31), recommendation(32, managed=False)
    world.publish(tagged, untagged)
    message = _saved_report(world)
    command = (
        f"aws ec2 create-tags --region us-east-1 --resources {untagged.instance_id} "
        "--tags Key=rightsizer:managed,Value=true"
    )
    offered = {b["block_id"] for b in message["blocks"] if b["type"] == "actions"
               for e in b["elements"] if e["action_id"] == blocks.ACTION_APPROVE}  # fmt: skip
    assert offered == {blocks.actions_id(tagged.recommendation_id)}
    [note] = [b for b in message["blocks"] if b["type"] == "context" and command in json.dumps(b)]
    sentence = note["elements"][0]["text"].removeprefix(":label: No Approve button: ")
    assert "Tagging *1* host(s) `rightsizer:managed=true` would unlock" in json.dumps(message["blocks"])

    world.click(blocks.ACTION_APPROVE, untagged, message=message)  # an older message, or a forged click

    assert world.workflow.started == []
    [answer] = world.slack.of("chat.postEphemeral")
    assert answer.params["text"] == f":no_entry_sign: Not approved: {sentence}"
    assert world.store.approval(untagged.recommendation_id) is None
    [audit] = world.store.audit_log(untagged.recommendation_id)
    assert audit.event == "approve-refused" and command in audit.detail
    world.click(blocks.ACTION_APPROVE, untagged, user=MALLORY, message=message)
    assert "Only approvers" in world.slack.of("chat.postEphemeral")[-1].params["text"], "approvers are checked first"


def test_approvals_and_outcomes_on_one_report_compose_instead_of_restoring_buttons(world: World) -> None:
    a, b, c, d = (recommendation(n, cost_after=f"{700 + n}.00") for n in (41, 42, 43, 44))
    world.publish(a, b, c, d)
    message = _saved_report(world)  # every click below carries this copy: Slack had not refreshed yet

    world.click(blocks.ACTION_APPROVE, a, message=message)
    world.click(blocks.ACTION_APPROVE, b, message=message)
    world.click(blocks.ACTION_DISMISS, c, user="U0BOB", message=message)
    # The notifier settles a's outcome on the message it was approved from.
    approval = world.store.approval(a.recommendation_id)
    assert approval is not None and approval.slack_ts == message["ts"]
    client = WebClient(token=BOT_TOKEN, base_url=world.slack.api_url)
    MessageBoard(client, world.store).settle(CHANNEL, message["ts"], a.recommendation_id, ":tada: Resized")

    saved = world.store.message(CHANNEL, message["ts"])
    assert saved is not None
    shown = _lines(saved.blocks)
    assert "Resized" in shown[a.recommendation_id]
    assert "Resize started by" in shown[b.recommendation_id]
    assert "Dismissed by <@U0BOB>" in shown[c.recommendation_id]
    assert shown[d.recommendation_id] == "buttons"
    last = world.slack.of("chat.update")[-1]
    assert _lines(last.params["blocks"]) == shown, "Slack ends on the saved copy"
    assert len(world.workflow.started) == 2


def test_a_scarce_host_in_a_capacity_reservation_is_stopped_with_a_plain_approve(world: World) -> None:
    host = replace(idle(33, instance_type="p4d.24xlarge", cost="16029.00"), capacity_reservation="cr-0p4d",
                   monthly_savings_net=Decimal("0.00"))  # fmt: skip
    world.publish(host)
    message = world.posted_report(host)
    buttons = _buttons(message)
    assert blocks.ACTION_APPROVE_SCARCE not in buttons
    assert "held for it by capacity reservation cr-0p4d" in buttons[blocks.ACTION_APPROVE]["confirm"]["text"]["text"]

    world.click(blocks.ACTION_APPROVE, host, message=message)

    [started] = world.workflow.started
    assert (started.action, started.instance_id) == (ActionKind.STOP, host.instance_id)


# -- report-only (ActionsEnabled=false) ------------------------------------------------------------


def test_a_report_only_deployment_offers_no_button_and_refuses_a_forged_approve_saying_why() -> None:
    from rightsizer.domain.scope import REPORT_ONLY, ActionScope

    with slack_world(actions_enabled=False) as world:
        rec = recommendation(51)
        world.publish(rec)
        scope = ActionScope.of(rec.account_id, {rec.region}, actions_enabled=False)
        report = build_report(world.store.latest_recommendations(), datetime.now(UTC), 14, scope=scope)
        [ts] = post_daily_report(WebClient(token=BOT_TOKEN, base_url=world.slack.api_url), CHANNEL, report, [], 10,
                                 ledger=world.store, scope=scope)  # fmt: skip
        [posted] = world.slack.of("chat.postMessage")
        world.slack.clear()
        message = {"ts": ts, "text": posted.params["text"], "blocks": posted.params["blocks"]}
        shown = json.dumps(message["blocks"])
        assert blocks.ACTION_APPROVE not in shown, "no Approve button anywhere"
        assert f"No Approve buttons: {REPORT_ONLY}" in shown

        world.click(blocks.ACTION_APPROVE, rec, message=message)  # an old message, or a forged click

        assert world.workflow.started == []
        [answer] = world.slack.of("chat.postEphemeral")
        assert answer.params["text"] == f":no_entry_sign: Not approved: {REPORT_ONLY}."
        assert world.store.approval(rec.recommendation_id) is None
        [audit] = world.store.audit_log(rec.recommendation_id)
        assert audit.event == "approve-refused" and "report-only" in audit.detail
