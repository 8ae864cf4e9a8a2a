"""`rightsizer doctor`: the checklist of a deployment, as data. Each `Check` is one line of the checklist: a small
function of what the checks share (the CLI's context) that says "ok" or what to fix. `run_checks` runs a registry of
them in order; a check whose prerequisite did not pass is not run (its line says which), and an AWS failure a check
meets becomes its line, naming the permission the check needs.

Also the words and commands the lines use: lists of hosts by name, and the SSM commands that install the CloudWatch
agent as agent/ssm-rollout.yaml does (a test keeps them equal). Pure: no I/O.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

C = TypeVar("C")


class Status(StrEnum):
    OK = "ok"
    FIX = "fix"  # something needs fixing: the line says what
    SKIPPED = "skipped"  # not checked: a check it needs did not pass


@dataclass(frozen=True)
class Line:
    """One line of the checklist: what was found, and what to do when it needs fixing."""

    check: str  # the check's key
    title: str
    status: Status
    text: str
    fix: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)  # for --output json: every name and id, unabridged

    def json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "title": self.title,
            "status": self.status.value,
            "text": self.text,
            "fix": self.fix or None,
            "details": dict(self.details),
        }


@dataclass(frozen=True)
class Found:
    """What a check found: ok, or the fix. `Check` makes it a `Line` under its key and title."""

    text: str
    fix: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> Status:
        return Status.FIX if self.fix else Status.OK


@dataclass(frozen=True)
class Check(Generic[C]):
    """One line of the checklist: `run` reads the context and says what it found."""

    key: str
    title: str
    run: Callable[[C], Found]
    permissions: tuple[str, ...] = ()  # what the caller needs for it (its line names them when AWS refuses)
    needs: tuple[str, ...] = ()  # keys of checks that must pass first
    stack_only: bool = False  # checks a deployment: run with --stack only


def run_checks(
    checks: Sequence[Check[C]], context: C, describe_failure: Callable[[Exception], str | None]
) -> list[Line]:
    """Every check's line, in order. `describe_failure` says what an AWS failure was (None: not one, a bug: it is
    raised)."""
    lines: dict[str, Line] = {}
    for check in checks:
        blocked = [lines[key].title for key in check.needs if key in lines and lines[key].status is not Status.OK]
        if blocked:
            lines[check.key] = Line(
                check.key, check.title, Status.SKIPPED, f"not checked: {' and '.join(blocked)} must pass first"
            )
            continue
        try:
            found = check.run(context)
        except Exception as error:
            described = describe_failure(error)
            if described is None:
                raise
            found = Found(f"could not check: {described}", _permission_fix(check, described))
        lines[check.key] = Line(check.key, check.title, found.status, found.text, found.fix, found.details)
    return list(lines.values())


def _permission_fix(check: Check[Any], described: str) -> str:
    calls = ", ".join(check.permissions) or "AWS"
    if "access denied" in described:
        return f"allow whoever runs doctor {calls} (docs/iam.md), then run it again"
    return f"this check asks {calls}: run doctor where AWS answers (an emulator may lack the API), then again"


def needs_fixing(lines: Sequence[Line]) -> bool:
    return any(line.status is Status.FIX for line in lines)


# ---------------------------------------------------------------------------------------------
# Words


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def named(items: Sequence[str], limit: int = 10) -> str:
    """'a, b and c'; past `limit` names: 'a, b, ... and 7 more'."""
    shown = list(items[:limit])
    rest = len(items) - len(shown)
    if rest:
        return f"{', '.join(shown)} and {rest} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


# ---------------------------------------------------------------------------------------------
# The CloudWatch agent, installed as agent/ssm-rollout.yaml's State Manager associations install it

AGENT_README = "agent/README.md"
AGENT_ROLLOUT = "agent/ssm-rollout.yaml"
AGENT_TAG = ("rightsizer:agent", "true")  # the rollout's TargetTagKey and TargetTagValue defaults
AGENT_CONFIG_PARAMETER = "AmazonCloudWatch-gpu-rightsizer"  # its ConfigParameterName default
# (SSM document, its parameters): the rollout's InstallAgent, then its ConfigureAgent association.
AGENT_INSTALL: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("AWS-ConfigureAWSPackage", {"action": "Install", "name": "AmazonCloudWatchAgent"}),
    (
        "AmazonCloudWatch-ManageAgent",
        {
            "action": "configure",
            "mode": "ec2",
            "optionalConfigurationSource": "ssm",
            "optionalConfigurationLocation": AGENT_CONFIG_PARAMETER,
            "optionalRestart": "yes",
        },
    ),
)
SEND_COMMAND_IDS = 50  # SendCommand takes at most 50 instance ids


def agent_commands(region: str, instance_ids: Sequence[str]) -> list[str]:
    """The `aws ssm send-command` lines that install and configure the agent on these hosts now, as the rollout's
    associations do on every tagged host (the configuration parameter is the rollout's)."""
    commands = []
    for start in range(0, len(instance_ids), SEND_COMMAND_IDS):
        ids = " ".join(instance_ids[start : start + SEND_COMMAND_IDS])
        for document, parameters in AGENT_INSTALL:
            values = ",".join(f"{key}={value}" for key, value in parameters.items())
            commands.append(
                f"aws ssm send-command --region {region} --document-name {document} "
                f"--parameters {shlex.quote(values)} --instance-ids {ids}"
            )
    return commands


def agent_fix(missing_by_region: Mapping[str, Sequence[str]]) -> str:
    """How to put the agent on the hosts that publish nothing, region by region."""
    lines = [f"install the CloudWatch agent with the GPU configuration ({AGENT_README}); with SSM, on these hosts now:"]
    for region, ids in missing_by_region.items():
        lines.extend(f"  {command}" for command in agent_commands(region, ids))
    key, value = AGENT_TAG
    lines.append(
        f"the configuration parameter {AGENT_CONFIG_PARAMETER} comes from {AGENT_ROLLOUT}, which also installs the "
        f"agent on every host tagged {key}={value}, now and later (a Windows host: agent/windows/README.md)"
    )
    return "\n".join(lines)
