"""Every `rightsizer` command the docs show (docs/cli.md, docs/demo.md, docs/deploy.md) run as a user runs it, in a
shell, against `make serve`'s world (another process: the demo's fleet, its stack, its report and approvals, 14 days),
the docs' example names replaced by the served world's. Each must do what the docs say: exit 0 (a file it writes is
written), or for `doctor` exit 1 with exactly the lines demo.md says need fixing there. `completion` is left out: it
reads no AWS (the completion tests run its scripts), and its install lines write into the shell's own folders."""

from __future__ import annotations

import itertools
import json
import re
import shlex
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.local_aws import RIGHTSIZER, ROOT, Served, clean_environment, served_fleet

pytestmark = pytest.mark.integration

DOCS = ("docs/cli.md", "docs/demo.md", "docs/deploy.md")
STACK = "gpu-rightsizer"
COMMAND = re.compile(r"^(?:\w+=\S+ )*rightsizer(?: |$)")
NOT_RUN = ("rightsizer completion",)
# What `doctor` finds to fix in the demo's world (docs/demo.md): the host without the agent, and (with --stack) the
# action role, which moto cannot simulate (it has no IAM policy simulator). An account has no action role line.
SILENT = ["render-node"]
FIXES = {"stack": ["gpu-metrics", "action-role"], "account": ["gpu-metrics"]}
TITLES = {"gpu-metrics": "GPU metrics", "action-role": "Action role"}


def documented_commands() -> list[str]:
    """Each distinct `rightsizer ...` line of the docs' bash blocks, continuation lines joined; two lines that differ
    only in their comment are one command."""
    found: dict[tuple[str, ...], str] = {}
    for doc in DOCS:
        for block in re.findall(r"```bash\n(.*?)```", (ROOT / doc).read_text(), re.DOTALL):
            for line in re.sub(r"\\\n\s*", "", block).splitlines():
                command = line.strip()
                if COMMAND.match(command) and not command.startswith(NOT_RUN):
                    found.setdefault(tuple(shlex.split(command, comments=True)), command)
    return list(found.values())


@dataclass(frozen=True)
class World:
    served: Served
    environment: Mapping[str, str]
    names: Mapping[str, str]  # the docs' example -> the served world's
    home: Path

    def shell(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", self.served_command(command)],
            cwd=self.home,
            env=dict(self.environment),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def served_command(self, command: str) -> str:
        for example, real in self.names.items():
            command = command.replace(example, real)
        return command


def _json(environment: Mapping[str, str], *args: str) -> Any:
    done = subprocess.run(
        [str(RIGHTSIZER), *args, "--output", "json", "--no-progress"],
        env=dict(environment),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("home")
    aws = home / ".aws"
    aws.mkdir()
    # --profile prod: a profile of the AWS config files, whose credentials are the served world's.
    (aws / "config").write_text("[profile prod]\nregion = us-east-1\n")
    (aws / "credentials").write_text("[prod]\naws_access_key_id = demo\naws_secret_access_key = demo\n")
    with served_fleet(days=14) as served:
        environment = clean_environment(**served.environment, HOME=str(home))
        environment["PATH"] = f"{RIGHTSIZER.parent}:{environment.get('PATH', '')}"
        yield World(served, environment, _names(served, environment), home)


def _names(served: Served, environment: Mapping[str, str]) -> dict[str, str]:
    """The docs' examples, as the served world names them: a host whose advice one click could still approve (the
    demo approved others), a host in eu-west-1, the host the demo put on a schedule, the demo's endpoint; the stack the
    docs deploy in eu-west-1 is the served world's, in us-east-1."""
    report = _json(environment, "report", "--stack", STACK, "--all")["recommendations"]
    open_advice = next(
        rec
        for rec in report
        if rec["actionable"]
        and rec["action"] in ("resize", "stop")
        and rec["region"] == "us-east-1"
        and _json(environment, "show", rec["instance_id"], "--stack", STACK)["approval"] is None
    )
    elsewhere = next(rec for rec in report if rec["region"] == "eu-west-1" and rec["kind"] == "ec2")
    scheduled = next(rec for rec in report if rec["action"] == "schedule")
    return {
        "i-0123456789abcdef0": open_advice["instance_id"],
        "training-2": open_advice["name"],
        "training-7": elsewhere["name"],
        "office-box": scheduled["name"],
        "sagemaker-endpoint/chat/AllTraffic": "sagemaker-endpoint/chat-summarizer/AllTraffic",
        f"--stack {STACK} --region eu-west-1": f"--stack {STACK} --region us-east-1",
        "http://127.0.0.1:5000": served.endpoint,
    }


def test_the_docs_show_commands_of_every_verb() -> None:
    commands = documented_commands()
    verbs = {_verb(command) for command in commands}

    assert len(commands) >= 25
    assert verbs == {None, "analyze", "show", "report", "act", "doctor"}
    assert any(command.startswith(f"rightsizer doctor --stack {STACK}") for command in commands)
    assert any("--remove-schedule" in command for command in commands)


def _verb(command: str) -> str | None:
    words = shlex.split(command, comments=True)
    after = words[words.index("rightsizer") + 1 :]
    return after[0] if after else None


def _written(command: str, home: Path) -> list[Path]:
    """The files a command's `> FILE` writes."""
    words = shlex.split(command, comments=True)
    return [home / name for redirect, name in itertools.pairwise(words) if redirect == ">"]


@pytest.mark.parametrize("command", documented_commands())
def test_each_documented_command_works_against_make_serve(world: World, command: str) -> None:
    for file in _written(command, world.home):
        file.unlink(missing_ok=True)

    done = world.shell(command)

    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr, done.stderr
    words = shlex.split(command, comments=True)
    if _verb(command) != "doctor":
        assert done.returncode == 0, f"{world.served_command(command)}\n{done.stderr}"
        assert done.stdout or _written(command, world.home), command
        for file in _written(command, world.home):
            assert file.stat().st_size > 0, file
        return
    assert done.returncode == 1, f"{command}\n{done.stdout}\n{done.stderr}"
    mode = "stack" if "--stack" in words else "account"
    if "--output" in words:  # the query keeps the lines that need fixing
        lines = json.loads(done.stdout)
        assert [line["check"] for line in lines] == FIXES[mode]
        silent = next(line for line in lines if line["check"] == "gpu-metrics")["details"]["silent"]
        assert len(silent) == len(SILENT)
        return
    fixes = [line[6:].split("  ")[0] for line in done.stdout.splitlines() if line.startswith("FIX ")]
    assert fixes == [TITLES[key] for key in FIXES[mode]], done.stdout
    silent = re.search(
        r"1 of \d+ running GPU hosts publishes no GPU metrics \(none in the last 3 hours\): (\S+) ", done.stdout
    )
    assert silent is not None and [silent[1]] == SILENT, done.stdout
    assert "aws ssm send-command --region us-east-1 --document-name AWS-ConfigureAWSPackage" in done.stdout
