"""Slack app latency: what Slack's 3-second deadline sees on a cold start, and the warm acknowledgement.

1. Cold import of the Lambda handler module (`rightsizer.handlers.slack`) in fresh interpreters.
2. Cold start to first acknowledgement without network: fresh interpreter, import, build the app, answer one
   signed slash command (the store is in memory, the Lambda client records the lazy self-invocation).
3. Warm acknowledgement of signed slash commands through Bolt's Lambda adapter, with the replay guard writing
   to DynamoDB (moto, in-process) and to an in-memory store.
Measured, not asserted. On Lambda add the network: one DynamoDB PutItem and one async lambda:Invoke per ack.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
WARM_REQUESTS = 200
COLD_IMPORT_GOAL_S, WARM_ACK_GOAL_MS = 0.8, 50.0

# Shared by the in-process and the subprocess measurements: the app with a store that keeps claims in memory.
_SETUP = textwrap.dedent(
    """
    import sys, time
    sys.path[:0] = [{root!r}, {src!r}]

    class MemoryStore:
        def __init__(self):
            self.claims = set()
        def claim_request(self, digest, now, keep=None):
            if digest in self.claims:
                return False
            self.claims.add(digest)
            return True

    class RecordingLambda:
        def __init__(self):
            self.calls = 0
        def invoke(self, **kwargs):
            self.calls += 1
            return {{"StatusCode": 202}}
    """
)

_COLD_FIRST_ACK = _SETUP + textwrap.dedent(
    """
    started = time.perf_counter()
    import rightsizer.handlers.slack  # what Lambda imports at init
    from slack_sdk import WebClient
    from rightsizer.adapters.slack.app import LambdaEntry, build_app
    from rightsizer.settings import Settings
    imported = time.perf_counter()
    # Test helpers to sign a request: not part of the function, so not timed.
    from tests.events import load_event
    from demo.lambda_context import FakeLambdaContext
    from demo.slack_double import BOT_TOKEN, SIGNING_SECRET, command_body, function_url_event
    event = function_url_event(load_event("slack_command.json"), command_body("top 5"))
    building = time.perf_counter()
    app = build_app(Settings(), client=WebClient(token=BOT_TOKEN), store=MemoryStore(),
                    workflow_factory=lambda: None, signing_secret=SIGNING_SECRET)
    lazy = RecordingLambda()
    entry = LambdaEntry(app, signing_secret=SIGNING_SECRET, lambda_client=lazy)
    response = entry(event, FakeLambdaContext())
    done = time.perf_counter()
    assert response["statusCode"] == 200 and lazy.calls == 1, response
    # The clients the handler makes on its first invocation (creation only: no network here).
    import boto3
    clients = time.perf_counter()
    session = boto3.Session(region_name="us-east-1")
    session.resource("dynamodb").Table("bench")
    session.client("lambda")
    session.client("secretsmanager")
    print(imported - started, done - building, time.perf_counter() - clients)
    """
)


def _python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return result.stdout.strip()


def cold_import() -> tuple[list[float], dict[str, bool]]:
    code = textwrap.dedent(
        f"""
        import json, sys, time
        sys.path.insert(0, {str(ROOT / "src")!r})
        started = time.perf_counter()
        import rightsizer.handlers.slack
        elapsed = time.perf_counter() - started
        heavy = ["rightsizer.domain.analyzer", "rightsizer.adapters.aws.cloudwatch", "rightsizer.services.collect",
                 "rightsizer.adapters.aws.workflow", "moto"]
        print(json.dumps({{"seconds": elapsed, "loaded": {{m: m in sys.modules for m in heavy}}}}))
        """
    )
    runs = [json.loads(_python(code)) for _ in range(RUNS)]
    return [run["seconds"] for run in runs], runs[-1]["loaded"]


def cold_first_ack() -> list[tuple[float, ...]]:
    code = _COLD_FIRST_ACK.format(root=str(ROOT), src=str(ROOT / "src"))
    return [tuple(float(x) for x in _python(code).split()) for _ in range(RUNS)]


def warm_acks(store: Any, label: str) -> None:
    from demo.lambda_context import FakeLambdaContext
    from demo.slack_double import BOT_TOKEN, SIGNING_SECRET, command_body, function_url_event
    from slack_sdk import WebClient
    from tests.events import load_event

    from rightsizer.adapters.slack.app import LambdaEntry, build_app
    from rightsizer.settings import Settings

    class RecordingLambda:
        calls = 0

        def invoke(self, **kwargs: Any) -> dict[str, Any]:
            RecordingLambda.calls += 1
            return {"StatusCode": 202}

    app = build_app(
        Settings(),
        client=WebClient(token=BOT_TOKEN),
        store=store,
        workflow_factory=lambda: None,  # type: ignore[arg-type,return-value]
        signing_secret=SIGNING_SECRET,
    )
    entry = LambdaEntry(app, signing_secret=SIGNING_SECRET, lambda_client=RecordingLambda())
    template, context = load_event("slack_command.json"), FakeLambdaContext()
    events = [
        function_url_event(template, command_body(f"top {1 + n % 9}", user=f"U{n:08d}"))
        for n in range(WARM_REQUESTS + 10)
    ]
    times = []
    for n, event in enumerate(events):
        started = time.perf_counter()
        response = entry(event, context)
        if n >= 10:  # the first requests warm caches up
            times.append((time.perf_counter() - started) * 1000)
        assert response["statusCode"] == 200, response
    times.sort()
    p95 = times[int(len(times) * 0.95)]
    print(
        f"  warm ack, signed `/gpu top N` ({label}): median {statistics.median(times):.1f} ms, "
        f"p95 {p95:.1f} ms (goal < {WARM_ACK_GOAL_MS:.0f} ms)"
    )


class _MemoryStore:
    def __init__(self) -> None:
        self.claims: set[str] = set()

    def claim_request(self, digest: str, now: datetime, keep: timedelta = timedelta(minutes=10)) -> bool:
        if digest in self.claims:
            return False
        self.claims.add(digest)
        return True


def run() -> None:
    print("Slack app (3-second deadline)")
    imports, loaded = cold_import()
    print(
        f"  cold import of rightsizer.handlers.slack: median {statistics.median(imports):.3f} s, "
        f"min {min(imports):.3f} s over {RUNS} fresh interpreters (goal < {COLD_IMPORT_GOAL_S} s)"
    )
    print("  loaded at import: " + ", ".join(f"{name} {'yes' if flag else 'no'}" for name, flag in loaded.items()))
    firsts = cold_first_ack()
    imported, answered, clients = (statistics.median(run[k] for run in firsts) for k in range(3))
    print(
        f"  cold start to first ack, no network (median of {RUNS}): import {imported:.3f} s + build the app and "
        f"answer {answered * 1000:.0f} ms + create the boto3 clients of the first invocation {clients * 1000:.0f} ms"
    )
    print("  on Lambda add one Secrets Manager read, one DynamoDB PutItem and one async Invoke (new TLS connections)")

    sys.path[:0] = [str(ROOT), str(ROOT / "src")]
    import boto3
    from demo.aws_table import create_table_from_template
    from moto import mock_aws

    from rightsizer.adapters.aws.store import DynamoStore

    warm_acks(_MemoryStore(), "in-memory replay guard")
    with mock_aws():
        table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
        store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(table))
        warm_acks(store, "replay guard on moto DynamoDB")


if __name__ == "__main__":
    run()
