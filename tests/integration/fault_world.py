"""A small moto world for the pipeline under faults: a few hosts in one account and region, the stack's table and
plan bucket, the pipeline state machine with our real handlers behind it (tests/integration/step_functions.py), and
optionally the Slack API double with the bot's secret. Each test gets a world of its own: faults leave marks.

A test drives the day either through the state machine (`run_day`) or handler by handler (`plan`, `collect`, `rank`,
`post`), as the Map and the schedules invoke them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from demo.fleet import Host, fleet
from demo.lambda_context import FakeLambdaContext
from demo.seed import Seeded, seed

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.domain.models.advice import Recommendation
from tests.events import load_event
from tests.integration.step_functions import LocalLambda, lambda_and_retries, pipeline_stack, table_items, wait_for
from tests.slack_double import BOT_TOKEN, SIGNING_SECRET, SlackDouble

ACCOUNT = "123456789012"
REGION = "us-east-1"
DAYS = 4
BUCKET = "gpu-rightsizer-plans"
CHANNEL = "C0GPUREPORT"
FUNCTIONS = {
    name: f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name.lower()}" for name in ("Collect", "Analyze", "Report")
}
# Hosts whose advice 4 days decide: an idle host (a one-click stop) and a GPU of four doing the work (a one-click
# resize), both tagged for one click, and a host without the agent.
DEMO_HOSTS = ("idle-p3", "one-of-four", "no-agent")


def scheduled_report(at: datetime | None = None) -> dict[str, Any]:
    """EventBridge Scheduler's event for the daily post (its retries deliver the same one)."""
    when = (at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:00:00Z")
    return {**load_event("collect.json"), "time": when, "resources": [f"{FUNCTIONS['Report']}-daily"]}


def demo_hosts(*keys: str) -> list[Host]:
    by_key = {host.key: host for host in fleet()}
    return [by_key[key] for key in keys or DEMO_HOSTS]


@dataclass
class World:
    store: DynamoStore
    seeded: dict[str, Seeded]  # by host key
    local: LocalLambda
    sfn: Any
    end: datetime  # the last whole hour of the seeded series
    slack: SlackDouble | None = None

    def instance_id(self, key: str) -> str:
        return self.seeded[key].instance_id

    def latest(self, key: str) -> Recommendation | None:
        return self.store.latest_for_instance(self.instance_id(key))

    # The day as the state machine runs it ---------------------------------------------------------------------

    def run_day(self) -> dict[str, Any]:
        from rightsizer.handlers import collect

        started = collect.handler(load_event("collect.json"), FakeLambdaContext())
        outcome: dict[str, Any] = wait_for(self.sfn, started["execution_arn"])
        return {**outcome, "run": started["run"]}

    # ...and handler by handler ----------------------------------------------------------------------------------

    def plan(self, run: str | None = None) -> list[dict[str, Any]]:
        from rightsizer.handlers import collect
        from rightsizer.services.pipeline import run_name

        target = {"account_id": ACCOUNT, "region": REGION, "role_arn": ""}
        event = {"action": "plan", "run": run or run_name(datetime.now(UTC)), "mode": "collect", "target": target}
        shards: list[dict[str, Any]] = collect.handler(event, FakeLambdaContext())["shards"]
        return shards

    def collect(self, shards: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        from rightsizer.handlers import collect

        return [collect.handler({"action": "collect", **shard}, FakeLambdaContext()) for shard in shards]

    def rank(self, run: str | None = None) -> dict[str, Any]:
        from rightsizer.handlers import analyze
        from rightsizer.services.pipeline import run_name

        event = {"action": "rank", "run": run or run_name(datetime.now(UTC))}
        result: dict[str, Any] = analyze.handler(event, FakeLambdaContext())
        return result

    def day_by_hand(self) -> dict[str, Any]:
        """Plan, collect every shard, rank: what the state machine does, one invocation each."""
        shards = self.plan()
        return {"shards": shards, "collected": self.collect(shards), "analysis": self.rank()}

    def post(self, event: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ReportFunction as its schedule invokes it (the same event each time: a retry of the same post)."""
        from rightsizer.handlers import report

        delivered = json.loads(json.dumps(event or scheduled_report()))
        result: dict[str, Any] = report.handler(delivered, FakeLambdaContext())
        return result

    def posts(self) -> list[dict[str, Any]]:
        assert self.slack is not None
        return [call.params for call in self.slack.of("chat.postMessage")]

    def launched(self, key: str, at: datetime) -> None:
        """EC2's LaunchTime of the host: its last start (moto dates every instance at its creation)."""
        from moto.ec2.models import ec2_backends

        instance = ec2_backends[ACCOUNT][REGION].get_instance(self.instance_id(key))
        instance.launch_time = at.astimezone(UTC).replace(tzinfo=None)

    def resized(self, key: str, from_type: str, at: datetime) -> None:
        """The host was `from_type` until `at`, when it was stopped, resized to its current type and started: the
        agent's series before `at` carry the old `InstanceType`, and its LaunchTime is `at`. Nothing has read the
        series yet (the demo's CloudWatch index is built at the first query)."""
        from moto.cloudwatch.models import cloudwatch_backends

        instance_id, before = self.instance_id(key), at.astimezone(UTC).replace(tzinfo=None)
        for datum in cloudwatch_backends[ACCOUNT][REGION].metric_data:
            if datum.namespace != "CWAgent" or datum.timestamp >= before:
                continue
            dimensions = {d.name: d for d in datum.dimensions}
            if "InstanceType" in dimensions and dimensions["InstanceId"].value == instance_id:
                dimensions["InstanceType"].value = from_type
        self.launched(key, at)

    def items(self) -> list[dict[str, Any]]:
        """Every item of the table, as DynamoDB's wire has them."""
        return table_items(self.store._table.name)  # the test's own table


@contextmanager
def fault_world(
    monkeypatch: pytest.MonkeyPatch,
    hosts: Sequence[Host] = (),
    *,
    slack: bool = False,
    shard_size: int = 2,
    days: int = DAYS,
) -> Iterator[World]:
    """moto with `hosts` (default: DEMO_HOSTS) seeded in one region, the stack's table, bucket and pipeline; with
    `slack`, the Slack API double and the bot's secret, and slack_sdk's retry waits recorded instead of slept."""
    from moto.core.config import default_user_config
    from slack_sdk.http_retry import builtin_handlers, handler

    from rightsizer import bootstrap
    from rightsizer.handlers import analyze, collect, report

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    default_user_config["stepfunctions"]["execute_state_machine"] = True
    local = LocalLambda({"collect": collect.handler, "analyze": analyze.handler, "report": report.handler})
    with ExitStack() as stack:
        stack.callback(time.tzset)
        stack.callback(default_user_config["stepfunctions"].__setitem__, "execute_state_machine", False)
        aws = stack.enter_context(pipeline_stack(BUCKET, FUNCTIONS, ACCOUNT))
        stack.enter_context(lambda_and_retries(monkeypatch, local))
        end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        seeded = {s.host.key: s for s in seed(end, days=days, hosts=list(hosts) or demo_hosts())}
        settings = {
            "TABLE_NAME": aws.table,
            "REGIONS": REGION,
            "LOOKBACK_DAYS": str(days),
            "PRICE_SOURCE": "snapshot",
            "PIPELINE_STATE_MACHINE_ARN": aws.machine,
            "PLAN_BUCKET": BUCKET,
            "SHARD_SIZE": str(shard_size),
            "HOME_ACCOUNT_ID": ACCOUNT,
            "POWERTOOLS_METRICS_DISABLED": "true",
        }
        double = None
        if slack:
            double = SlackDouble().start()
            stack.callback(double.stop)
            for waiting in (builtin_handlers, handler):  # rate limits' Retry-After, server errors' backoff
                monkeypatch.setattr(waiting, "time", _NoSleep())
            name = f"gpu-rightsizer/slack-{time.monotonic_ns()}"
            boto3.client("secretsmanager", region_name=REGION).create_secret(
                Name=name, SecretString=json.dumps({"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET})
            )
            settings |= {"SLACK_SECRET_NAME": name, "SLACK_CHANNEL": CHANNEL, "SLACK_API_URL": double.api_url}
        for key, value in settings.items():
            monkeypatch.setenv(key, value)
        bootstrap.lambda_wiring.cache_clear()
        store = DynamoStore(boto3.resource("dynamodb", region_name=REGION).Table(aws.table))
        yield World(store, seeded, local, aws.sfn, end, double)
        bootstrap.lambda_wiring.cache_clear()


class _NoSleep:
    """slack_sdk's retry handlers' only use of `time`: their waits, skipped."""

    @staticmethod
    def sleep(seconds: float) -> None:
        return None
