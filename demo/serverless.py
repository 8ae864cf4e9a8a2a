"""The serverless half of the demo: the stack's state in moto, the Lambda handlers invoked in-process.

What `sam deploy` would create is created here in the local AWS from the same sources, template.yaml's definitions:
the table, the Slack secret, the functions (their configuration and environment; the demo runs their handlers
in-process), their EventBridge Scheduler schedules, both state machines from statemachine/*.asl.json, the roles the
instance workflow uses, and the EventBridge rule that carries resize progress (to an SQS queue the demo drains into
the notifier handler, where AWS would invoke the NotifierFunction). Then the stack is recorded in moto's CloudFormation
(demo/moto_stack.py) with its parameters, outputs and resources, and the functions' environment is the one
template.yaml gives them, rebuilt from the stack as `rightsizer report --stack` rebuilds it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from demo.aws_table import create_table_from_template, template
from demo.lambda_context import FakeLambdaContext as Context
from demo.moto_stack import StackResource, register
from demo.slack_double import BOT_TOKEN, SIGNING_SECRET, Channel, SlackDouble

ROOT = Path(__file__).resolve().parent.parent
REGION = "us-east-1"
STACK_NAME = "gpu-rightsizer"
CHANNEL = "C0GPUREPORT"
CHANNEL_NAME = "gpu-reports"
APPROVER = "U0DEMOLEAD"
# The parameters the demo deploys with (`sam deploy --parameter-overrides`); the others keep template.yaml's defaults.
PARAMETERS = {
    "Regions": "us-east-1,eu-west-1",
    "SlackChannel": CHANNEL,
    "SlackApprovers": APPROVER,
    "ShardSize": "8",  # the demo fleet's regions come in a few shards, as a large fleet's do
    "TeamTimeZones": "notebooks=Europe/Berlin",
}
# What the demo adds to every function's environment beyond template.yaml's (settings nobody sets in the template).
DEMO_ENVIRONMENT = {
    "SLACK_API_URL": "",  # the Slack API double's, once it listens
    "PRICE_SOURCE": "auto",
    "RESIZE_POLL_SECONDS": "0",
    "POWERTOOLS_SERVICE_NAME": "gpu-rightsizer",
    "POWERTOOLS_METRICS_NAMESPACE": "GpuRightsizerDemo",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_METRICS_DISABLED": "true",
}
_EMPTY_ZIP = b"PK\x05\x06" + b"\x00" * 18  # an empty zip archive: the demo runs the handlers in-process
TEAM_ZONE = PARAMETERS["TeamTimeZones"]  # the notebooks team works in Berlin


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
    name: str
    table: str
    resize_state_machine: str
    progress_queue: str
    slack: SlackDouble
    lazy: LocalLambda
    environment: Mapping[str, str] = field(default_factory=dict)  # the functions' environment


class _Deployer:
    """Creates the template's resources in moto one by one, keeping what CloudFormation would list for each."""

    def __init__(self, name: str, parameters: Mapping[str, str]) -> None:
        self.name = name
        self.parameters = dict(parameters)
        self.resources: list[StackResource] = []
        self.arns: dict[str, str] = {}  # logical id -> ARN (Fn::GetAtt X.Arn)
        self.account = boto3.client("sts", region_name=REGION).get_caller_identity()["Account"]

    def add(self, logical_id: str, resource_type: str, physical_id: str, arn: str = "") -> str:
        self.resources.append(StackResource(logical_id, resource_type, physical_id))
        self.arns[logical_id] = arn or physical_id
        return physical_id

    def resolve(self, node: Any) -> str:
        """The value of a template expression: a parameter's or a resource's Ref, a GetAtt's ARN, a Sub."""
        if isinstance(node, str):
            return node
        if "Ref" in node:
            name = node["Ref"]
            if name in self.parameters:
                return self.parameters[name]
            return next(item.physical_id for item in self.resources if item.logical_id == name)
        if "Fn::GetAtt" in node:
            return self.arns[node["Fn::GetAtt"][0]]
        text = node["Fn::Sub"]
        pseudo = {"AWS::StackName": self.name, "AWS::Region": REGION, "AWS::AccountId": self.account}
        for key, value in pseudo.items():
            text = text.replace("${" + key + "}", value)
        return str(text).replace("${AWS::Partition}", "aws")

    def role(self, logical_id: str, name: str) -> str:
        """A role of the stack (its trust and policies are template.yaml's business: moto enforces no IAM); its ARN."""
        iam = boto3.client("iam", region_name=REGION)
        arn = str(iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps({"Statement": []}))["Role"]["Arn"])
        self.add(logical_id, "AWS::IAM::Role", name, arn)
        return arn

    def state_machine(self, logical_id: str, role_arn: str) -> str:
        properties = template()["Resources"][logical_id]["Properties"]
        text = (ROOT / properties["DefinitionUri"]).read_text()
        for key, value in properties.get("DefinitionSubstitutions", {}).items():
            text = text.replace("${" + key + "}", self.resolve(value))
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arn = str(
            sfn.create_state_machine(name=self.resolve(properties["Name"]), definition=text, roleArn=role_arn)[
                "stateMachineArn"
            ]
        )
        return self.add(logical_id, "AWS::StepFunctions::StateMachine", arn)

    def functions(self, role_arn: str, environment: Mapping[str, str]) -> None:
        """Every function of the template, with the environment given, and its EventBridge Scheduler schedules (SAM
        names each schedule after the function and the event, in the default group)."""
        client = boto3.client("lambda", region_name=REGION)
        scheduler = boto3.client("scheduler", region_name=REGION)
        for logical_id, resource in template()["Resources"].items():
            if not isinstance(resource, dict) or resource.get("Type") != "AWS::Serverless::Function":
                continue
            properties = resource["Properties"]
            created = client.create_function(
                FunctionName=self.resolve(properties["FunctionName"]),
                Role=role_arn,
                Runtime=template()["Globals"]["Function"]["Runtime"],
                Handler=properties["Handler"],
                Code={"ZipFile": _EMPTY_ZIP},
                Environment={"Variables": dict(environment)},
                Architectures=template()["Globals"]["Function"]["Architectures"],
            )
            function_arn = str(created["FunctionArn"])
            self.add(logical_id, "AWS::Lambda::Function", str(created["FunctionName"]), function_arn)
            for event, spec in properties.get("Events", {}).items():
                if spec["Type"] != "ScheduleV2":
                    continue
                name = f"{logical_id}{event}"
                scheduler.create_schedule(
                    Name=name,
                    ScheduleExpression=self.resolve(spec["Properties"]["ScheduleExpression"]),
                    ScheduleExpressionTimezone=self.resolve(spec["Properties"]["ScheduleExpressionTimezone"]),
                    FlexibleTimeWindow={"Mode": "OFF"},
                    Target={"Arn": function_arn, "RoleArn": role_arn},
                )
                self.add(name, "AWS::Scheduler::Schedule", name)


def template_parameters(overrides: Mapping[str, str]) -> dict[str, str]:
    """Every parameter of template.yaml with its default, then the overrides (as `sam deploy` passes them)."""
    defaults = {name: str(spec.get("Default", "")) for name, spec in template()["Parameters"].items()}
    return {**defaults, **overrides}


@contextmanager
def deployed_stack(name: str = STACK_NAME) -> Iterator[Stack]:
    """Create the stack's resources in the local AWS, record the stack, set the functions' environment."""
    from moto.core.config import default_user_config

    import rightsizer.handlers.slack as slack_handler
    from rightsizer import bootstrap
    from rightsizer.cli.deployment import Stack as DeployedStack

    # moto runs executions only when asked; Wait states take their seconds from the input (0 here).
    default_user_config["stepfunctions"]["execute_state_machine"] = True
    slack = SlackDouble(channels={CHANNEL: Channel(CHANNEL_NAME)}).start()
    lazy = LocalLambda()
    deploy = _Deployer(name, template_parameters(PARAMETERS))
    table = deploy.add(
        "Table", "AWS::DynamoDB::Table", create_table_from_template(boto3.client("dynamodb", region_name=REGION), name)
    )
    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name=deploy.resolve(template()["Resources"]["SlackSecret"]["Properties"]["Name"]),
        SecretString=json.dumps({"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET}),
    )["ARN"]
    deploy.add("SlackSecret", "AWS::SecretsManager::Secret", secret)
    action = deploy.role("ActionRole", f"{name}-action")
    scheduler_role = deploy.role("SchedulerRole", f"{name}-scheduler")
    workflow_role = deploy.role("ResizeStateMachineRole", f"{name}-{REGION}-workflow")
    collector_role = deploy.role("CollectFunctionRole", f"{name}-CollectFunctionRole")
    resize = deploy.state_machine("ResizeStateMachine", workflow_role)
    outputs = {
        "TableName": table,
        "SlackSecretArn": secret,
        "ResizeStateMachineArn": resize,
        "PipelineStateMachineArn": f"arn:aws:states:{REGION}:{deploy.account}:stateMachine:{name}-pipeline",
        "ActionRoleArn": action,
        "SchedulerRoleArn": scheduler_role,
        "WorkflowRoleArn": workflow_role,
        "CollectorRoleArn": collector_role,
    }
    deployed = DeployedStack(name, REGION, deploy.account, deploy.parameters, outputs)
    environment = {**deployed.environment(), **DEMO_ENVIRONMENT, "SLACK_API_URL": slack.api_url}
    deploy.functions(collector_role, environment)  # one role for all: moto enforces no IAM
    deploy.state_machine("PipelineStateMachine", collector_role)
    register(name, REGION, deploy.parameters, outputs, deploy.resources)
    sqs = boto3.client("sqs", region_name=REGION)
    queue_url = sqs.create_queue(QueueName=f"{name}-progress")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events = boto3.client("events", region_name=REGION)
    events.put_rule(Name="resize-progress", EventPattern=json.dumps({"source": ["gpu-rightsizer.resize"]}))
    events.put_targets(Rule="resize-progress", Targets=[{"Id": "notifier", "Arn": queue_arn}])
    saved = {key: os.environ.get(key) for key in environment}
    os.environ.update(environment)
    original_lambda_client = slack_handler.lambda_client
    slack_handler.lambda_client = lambda session, region: lazy  # type: ignore[assignment]
    bootstrap.lambda_wiring.cache_clear()
    slack_handler._entry.cache_clear()
    try:
        yield Stack(name, table, resize, queue_url, slack, lazy, environment)
    finally:
        slack_handler.lambda_client = original_lambda_client  # type: ignore[assignment]
        bootstrap.lambda_wiring.cache_clear()
        slack_handler._entry.cache_clear()
        slack.stop()
        default_user_config["stepfunctions"]["execute_state_machine"] = False
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


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
