"""moto executing the pipeline's real ASL, with our Lambda handlers behind its `lambda:invoke` tasks.

What runs as in AWS (moto 5.2.5's interpreter and backends): the state machine as written in
statemachine/pipeline.asl.json - the Distributed Map's ItemReader (s3:getObject of a JSON array), ItemSelector
and MaxConcurrency, the inline Map over shards, Choice, Retry and Catch, intrinsic functions, the
dynamodb:putItem integration - and S3, DynamoDB, EC2, CloudWatch and STS.

What is emulated:
- Lambda: moto cannot run a function without Docker (and its Docker-less backend only echoes the payload), so
  `LambdaBackend.invoke` is replaced by a dispatcher that calls our handler in-process and answers an exception
  as Lambda does, with a FunctionError ("Unhandled") and {"errorType", "errorMessage"}.
- Retry intervals: moto sleeps them in real time; here they are recorded, not slept.
- The Distributed Map's child executions: moto runs each item in a worker thread of the parent execution; AWS
  starts one child execution per item (a map run), whose history and billing are its own. moto does not
  implement ItemBatcher at all (the state machine uses none) and its ResultWriter writes only a manifest stub
  (the state machine uses none: its per-target output is a few bytes).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from demo.lambda_context import FakeLambdaContext

ROOT = Path(__file__).resolve().parents[2]
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def pipeline_definition(table: str, functions: dict[str, str], concurrency: int = 10, per_region: int = 2) -> str:
    text = (ROOT / "statemachine" / "pipeline.asl.json").read_text()
    substitutions = {
        **{f"{name}FunctionArn": arn for name, arn in functions.items()},
        "TableName": table,
        "TargetConcurrency": str(concurrency),
        "ShardsPerRegion": str(per_region),
    }
    for name, value in substitutions.items():
        text = text.replace("${" + name + "}", value)
    return text


@dataclass
class LocalLambda:
    """Function name -> handler; records every invocation and its outcome."""

    handlers: dict[str, Handler]
    fail: Callable[[str, dict[str, Any]], bool] = lambda name, event: False
    calls: list[tuple[str, dict[str, Any], dict[str, Any] | str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def invoke(self, function_name: str, body: str | bytes | None, response_headers: dict[str, str]) -> bytes:
        name = function_name.rsplit(":", 1)[-1]
        event = json.loads(body or "{}")
        try:
            if self.fail(name, event):
                raise RuntimeError(f"injected failure of {name}")
            result: dict[str, Any] | str = self.handlers[name](event, FakeLambdaContext())
        except Exception as error:  # what Lambda does with an unhandled exception
            response_headers["x-amz-function-error"] = "Unhandled"
            result = json.dumps({"errorType": type(error).__name__, "errorMessage": str(error)})
            with self.lock:
                self.calls.append((name, event, result))
            return result.encode()
        with self.lock:
            self.calls.append((name, event, result))
        return json.dumps(result, default=str).encode()

    def results(self, name: str, action: str | None = None) -> list[dict[str, Any] | str]:
        return [
            result for n, event, result in self.calls if n == name and (action is None or event.get("action") == action)
        ]


@contextmanager
def lambda_and_retries(monkeypatch: pytest.MonkeyPatch, local: LocalLambda) -> Iterator[list[float]]:
    """Route moto's Lambda invocations to `local`; yield the Retry intervals moto would have slept."""
    from moto.awslambda.models import LambdaBackend
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    def invoke(
        backend: Any, function_name: str, qualifier: str | None, body: Any, headers: Any, response_headers: Any
    ) -> bytes:
        return local.invoke(function_name, body, response_headers)

    slept: list[float] = []

    class Clock:
        @staticmethod
        def sleep(seconds: float) -> None:
            slept.append(seconds)

    monkeypatch.setattr(LambdaBackend, "invoke", invoke)
    monkeypatch.setattr(retrier_decl, "time", Clock)
    yield slept


def wait_for(sfn: Any, execution_arn: str, timeout: float = 120.0) -> dict[str, Any]:
    """Bounded poll of moto's execution thread for the outcome."""
    deadline = time.monotonic() + timeout
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return described
        time.sleep(0.1)


@dataclass(frozen=True)
class PipelineStack:
    table: str
    sfn: Any
    machine: str


@contextmanager
def pipeline_stack(bucket: str, functions: dict[str, str], account: str) -> Iterator[PipelineStack]:
    """moto (started here, stopped on exit) with the agents' CloudWatch data store and the commitments moto lacks,
    the stack's table and plan bucket, and the pipeline state machine over `functions`."""
    import boto3
    from demo import fast_cloudwatch, moto_commitments
    from demo.aws_table import create_table_from_template
    from moto import mock_aws

    with mock_aws():
        fast_cloudwatch.install(list_once=True)
        try:
            with moto_commitments.installed():  # RIs and capacity reservations, which moto lacks
                table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
                boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=bucket)
                sfn = boto3.client("stepfunctions", region_name="us-east-1")
                machine = sfn.create_state_machine(
                    name="gpu-rightsizer-pipeline",
                    definition=pipeline_definition(table, functions),
                    roleArn=f"arn:aws:iam::{account}:role/pipeline",
                )["stateMachineArn"]
                yield PipelineStack(table, sfn, machine)
        finally:
            fast_cloudwatch.uninstall()


def table_items(table: str) -> list[dict[str, Any]]:
    """Every item of the test's table, as DynamoDB's wire has them."""
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1")
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table}
    while True:
        page = client.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
