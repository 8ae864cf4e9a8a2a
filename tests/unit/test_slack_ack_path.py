"""The cold-start rule: acknowledging a Slack request imports neither the analyzer nor the collectors (nor
the Step Functions adapter): Slack's 3-second deadline includes the cold start."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_acknowledging_a_command_imports_neither_the_analyzer_nor_the_collectors() -> None:
    """A fresh interpreter, as Lambda's: import the handler, build the app, acknowledge a signed command of
    each verb and a click of each button (their answers are lazy: queued, not run)."""
    code = textwrap.dedent(
        """
        import json, sys
        import rightsizer.handlers.slack
        import rightsizer.bootstrap.slack  # the handler's wiring, loaded by its first request
        from slack_sdk import WebClient
        from demo.lambda_context import FakeLambdaContext
        from demo.slack_double import BOT_TOKEN, SIGNING_SECRET, click_body, command_body, function_url_event
        from rightsizer.adapters.slack import blocks
        from rightsizer.adapters.slack.app import LambdaEntry, build_app
        from rightsizer.settings import Settings
        from tests.events import load_event

        class Store:
            def claim_request(self, digest, now, keep=None):
                return True

        class Lambda:
            def invoke(self, **kwargs):
                return {"StatusCode": 202}

        app = build_app(Settings(), client=WebClient(token=BOT_TOKEN), store=Store(),
                        workflow_factory=lambda: None, signing_secret=SIGNING_SECRET)
        entry = LambdaEntry(app, signing_secret=SIGNING_SECRET, lambda_client=Lambda())
        command, click = load_event("slack_command.json"), load_event("slack_interaction.json")
        texts = ("top 5", "show i-0123456789abcdef0", "snooze i-0123456789abcdef0 3d", "schedules", "help", "bogus")
        events = [function_url_event(command, command_body(text)) for text in texts]
        actions = [getattr(blocks, name) for name in dir(blocks) if name.startswith("ACTION_")]
        events += [function_url_event(click, click_body(action, "123456789012#us-east-1#i-1")) for action in actions]
        statuses = [entry(event, FakeLambdaContext())["statusCode"] for event in events]
        print(json.dumps({"statuses": statuses, "modules": sorted(sys.modules)}))
        """
    )
    env = {"PYTHONPATH": f"{ROOT}:{ROOT / 'src'}", "PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1"}
    run = [sys.executable, "-c", code]
    result = subprocess.run(run, check=False, capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.splitlines()[-1])

    assert loaded["statuses"] == [200] * 11
    heavy = {
        "rightsizer.domain.analyzer",
        "rightsizer.services.analyze",
        "rightsizer.services.collect",
        "rightsizer.services.pipeline",
        "rightsizer.adapters.aws.cloudwatch",
        "rightsizer.adapters.aws.ec2",
        "rightsizer.adapters.aws.cloudtrail",
        "rightsizer.adapters.aws.pricing",
        "rightsizer.adapters.aws.workflow",
        "numpy",
        "moto",
    }
    assert heavy.isdisjoint(loaded["modules"]), heavy & set(loaded["modules"])
    assert "rightsizer.adapters.slack.app" in loaded["modules"]
