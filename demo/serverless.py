"""The serverless half of the demo: the stack's state in moto, the Lambda handlers invoked in-process.

What `sam deploy` would create is created here in the local AWS from the same sources: the table from
template.yaml's definition, the resize state machine from statemachine/resize.asl.json, the Slack
secret, and the EventBridge rule that carries resize progress (to an SQS queue the demo drains into the
notifier handler, where AWS would invoke the NotifierFunction).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from demo.aws_table import create_table_from_template
from demo.lambda_context import FakeLambdaContext as Context
from demo.slack_double import BOT_TOKEN, SIGNING_SECRET, SlackDouble

ROOT = Path(__file__).resolve().parent.parent
REGION = "us-east-1"
CHANNEL = "C0GPUREPORT"
APPROVER = "U0DEMOLEAD"


@dataclass
class LocalLambda:
    """Bolt's lazy listeners re-invoke the Slack function asynchronously; here that is a queue the demo
    drains by calling the same handler in-process (the production path, minus the network)."""

    queue: list[dict[str, Any]] = field(default_factory=list)

    def invoke(self, FunctionName: str, InvocationType: str, Payload: str | bytes) -> dict[str, Any]:
        self.queue.append(json.loads(Payload))
        return {"StatusCode": 202}


@dataclass
class Stack:
    table: str
    resize_state_machine: str
    progress_queue: str
    slack: SlackDouble
    lazy: LocalLambda


def _state_machine(sfn: Any, name: str, definition_file: str, substitutions: dict[str, str]) -> str:
    text = (ROOT / "statemachine" / definition_file).read_text()
    for key, value in substitutions.items():
        text = text.replace("${" + key + "}", value)
    arn: str = sfn.create_state_machine(
        name=name, definition=text, roleArn="arn:aws:iam::123456789012:role/gpu-rightsizer-us-east-1-workflow"
    )["stateMachineArn"]
    return arn


@contextmanager
def deployed_stack() -> Iterator[Stack]:
    """Create the stack's resources in the local AWS and set the functions' environment."""
    from moto.core.config import default_user_config

    import rightsizer.handlers.slack as slack_handler
    from rightsizer import bootstrap

    # moto runs executions only when asked; Wait states take their seconds from the input (0 here).
    default_user_config["stepfunctions"]["execute_state_machine"] = True
    slack = SlackDouble().start()
    lazy = LocalLambda()
    table = create_table_from_template(boto3.client("dynamodb", region_name=REGION), "gpu-rightsizer")
    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="gpu-rightsizer/slack", SecretString=json.dumps({"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET})
    )["Name"]
    sfn = boto3.client("stepfunctions", region_name=REGION)
    resize = _state_machine(sfn, "gpu-rightsizer-resize", "resize.asl.json", {"TableName": table})
    iam = boto3.client("iam", region_name=REGION)
    for role in ("gpu-rightsizer-action", "gpu-rightsizer-scheduler"):  # what template.yaml creates
        iam.create_role(RoleName=role, AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}))
    sqs = boto3.client("sqs", region_name=REGION)
    queue_url = sqs.create_queue(QueueName="gpu-rightsizer-progress")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events = boto3.client("events", region_name=REGION)
    events.put_rule(Name="resize-progress", EventPattern=json.dumps({"source": ["gpu-rightsizer.resize"]}))
    events.put_targets(Rule="resize-progress", Targets=[{"Id": "notifier", "Arn": queue_arn}])
    environment = {
        "TABLE_NAME": table,
        "AWS_REGION": REGION,
        "HOME_ACCOUNT_ID": "123456789012",  # template.yaml: !Ref AWS::AccountId
        "REGIONS": "us-east-1,eu-west-1",
        "PRICE_SOURCE": "auto",
        "SLACK_SECRET_NAME": secret,
        "SLACK_CHANNEL": CHANNEL,
        "SLACK_APPROVERS": APPROVER,
        "SLACK_API_URL": slack.api_url,
        "RESIZE_STATE_MACHINE_ARN": resize,
        "RESIZE_POLL_SECONDS": "0",
        "SHARD_SIZE": "8",  # the demo fleet's regions come in a few shards, as a large fleet's do
        # template.yaml's roles of the instance workflow (moto runs the tasks in this account whatever the role)
        "ACTION_ROLE_ARN": "arn:aws:iam::123456789012:role/gpu-rightsizer-action",
        "SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/gpu-rightsizer-scheduler",
        "TEAM_TIME_ZONES": "notebooks=Europe/Berlin",
        "POWERTOOLS_SERVICE_NAME": "gpu-rightsizer",
        "POWERTOOLS_METRICS_NAMESPACE": "GpuRightsizerDemo",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_DISABLED": "true",
    }
    saved = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    original_lambda_client = slack_handler.lambda_client
    slack_handler.lambda_client = lambda session, region: lazy  # type: ignore[assignment]
    bootstrap.lambda_wiring.cache_clear()
    slack_handler._entry.cache_clear()
    try:
        yield Stack(table, resize, queue_url, slack, lazy)
    finally:
        slack_handler.lambda_client = original_lambda_client  # type: ignore[assignment]
        bootstrap.lambda_wiring.cache_clear()
        slack_handler._entry.cache_clear()
        slack.stop()
        default_user_config["stepfunctions"]["execute_state_machine"] = False
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_pipeline(run: str, account_id: str, regions: tuple[str, ...]) -> dict[str, Any]:
    """What the pipeline state machine does each day, handler by handler: plan each (account, region) into
    shards, collect and analyse each shard, rank the run, report (tests/integration/test_pipeline_shards.py
    runs the state machine itself)."""
    from rightsizer.handlers import analyze, collect, report

    for region in regions:
        target = {"account_id": account_id, "region": region, "role_arn": ""}
        planned = collect.handler({"action": "plan", "run": run, "mode": "collect", "target": target}, Context())
        for shard in planned["shards"]:
            collect.handler({"action": "collect", **shard}, Context())
    analyze.handler({"action": "rank", "run": run}, Context())
    result: dict[str, Any] = report.handler({"post": True, "include_recommendations": True}, Context())
    return result


def send_to_slack_function(stack: Stack, event: dict[str, Any]) -> dict[str, Any]:
    """A request through the Slack function's real handler, then the lazy work it queued."""
    from rightsizer.handlers import slack

    response: dict[str, Any] = slack.handler(event, Context())
    while stack.lazy.queue:
        slack.handler(stack.lazy.queue.pop(0), Context())
    return response


def wait_for_execution(execution_arn: str, timeout: float = 60.0) -> dict[str, Any]:
    """Bounded poll of moto's execution thread for the outcome."""
    sfn = boto3.client("stepfunctions", region_name=REGION)
    deadline = time.monotonic() + timeout
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return described
        time.sleep(0.2)


def deliver_progress_events(stack: Stack) -> int:
    """Hand each queued EventBridge event to the notifier handler, as the rule would in AWS."""
    from rightsizer.handlers import notify

    sqs = boto3.client("sqs", region_name=REGION)
    delivered = 0
    while True:
        messages = sqs.receive_message(QueueUrl=stack.progress_queue, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            return delivered
        for message in messages:
            notify.handler(json.loads(message["Body"]), Context())
            sqs.delete_message(QueueUrl=stack.progress_queue, ReceiptHandle=message["ReceiptHandle"])
            delivered += 1
