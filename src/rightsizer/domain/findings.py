"""The findings, one `FindingSpec` per `Finding` in `FINDINGS`: the one place what each means to a surface lives.

Slack, the notifier, the report's totals and JSON, the CLI and the HTML page read them here; tests check that the
JSON schema's enum (schema/report.schema.json) and the table in docs/how-it-decides.md name exactly these.
Adding a finding is one member and one entry here, plus its rule (in the module of its concern, domain/rules/) and
its row in docs/how-it-decides.md, then `make schema` (the schema's enum is generated from this registry;
tests/integration/test_new_member_footprint.py adds one and counts the files it touches).

Pure data: no I/O; the Slack app's cold start imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from rightsizer.domain.actions import ACTIONS, ActionKind
from rightsizer.domain.resources import RESOURCES, ResourceKind


class Finding(StrEnum):
    IDLE = "idle"
    OVERPROVISIONED = "overprovisioned"
    UNDERPROVISIONED = "underprovisioned"
    NOT_GPU_BOUND = "not_gpu_bound"
    SCHEDULABLE = "schedulable"
    OPTIMIZED = "optimized"
    INSUFFICIENT_DATA = "insufficient_data"
    EXCLUDED = "excluded"
    CONSOLIDATE = "consolidate"  # fleet level: part-used hosts of one team and zone fit on fewer hosts
    # Running for days with no usage published (a SageMaker notebook instance): its cost is known, its use is not.
    LEFT_RUNNING = "left_running"
    # A GPU whose series stopped while its siblings report on and the host runs: off the bus (Xid 79) or disabled.
    GPU_LOST = "gpu_lost"
    # GPUs that hold memory and ran no kernel for days (a server nobody calls, a notebook that keeps its tensors):
    # idle in all but memory, and the process holding them may be wanted.
    HELD_UNUSED = "held_unused"


class Severity(StrEnum):
    """What a finding means for the fleet, at a glance: the colour (and the mark) every surface gives it."""

    RISK = "risk"  # the work is at risk: out of memory, starved by its CPU (the advice costs money, for a reason)
    WASTE = "waste"  # money is spent on nothing: idle, oversized, idle hours, hosts to consolidate, left running
    OK = "ok"  # right-sized
    INFO = "info"  # not judged: no metrics, excluded


@dataclass(frozen=True, slots=True)
class FindingSpec:
    finding: Finding
    label: str  # in people's words (Slack, the HTML page); the JSON and the CLI's table keep the value
    # Asks for a decision: ranked by savings, listed with buttons in Slack. The others show in the counts only,
    # but for the hosts without metrics (`no_metrics`), which get a list of their own.
    attention: bool = False
    # The one-click action its advice may carry once the analyzer allows one (a resize only with a target type).
    action: ActionKind | None = None
    no_action: str | None = None  # why it never carries one: what `ACT no` says of it
    no_metrics: bool = False  # cannot be judged for want of metrics: listed apart, with how to publish them
    needs_nothing: bool = False  # nothing to do or to explain: the CLI's table adds no `ACT no` line
    # Where its rules say why its action is held back, when `held_back` does not: the last reason (what they
    # append to advice they hold back) rather than the first.
    held_back_last: bool = False
    severity: Severity = Severity.INFO

    @property
    def wastes(self) -> bool:
        """Its advice is about money spent on nothing (showback's waste, "since last time"'s new waste)."""
        return self.severity is Severity.WASTE


FINDINGS: Mapping[Finding, FindingSpec] = MappingProxyType(
    {
        Finding.IDLE: FindingSpec(
            Finding.IDLE, "idle", attention=True, action=ActionKind.STOP, severity=Severity.WASTE
        ),
        Finding.OVERPROVISIONED: FindingSpec(
            Finding.OVERPROVISIONED,
            "over-provisioned",
            attention=True,
            action=ActionKind.RESIZE,
            held_back_last=True,
            severity=Severity.WASTE,
        ),
        Finding.UNDERPROVISIONED: FindingSpec(
            Finding.UNDERPROVISIONED,
            "under-provisioned",
            attention=True,
            action=ActionKind.RESIZE,
            held_back_last=True,
            severity=Severity.RISK,
        ),
        Finding.NOT_GPU_BOUND: FindingSpec(
            Finding.NOT_GPU_BOUND,
            "not GPU-bound",
            attention=True,
            action=ActionKind.RESIZE,
            held_back_last=True,
            severity=Severity.RISK,
        ),
        Finding.SCHEDULABLE: FindingSpec(
            Finding.SCHEDULABLE,
            "schedulable",
            attention=True,
            action=ActionKind.SCHEDULE,
            held_back_last=True,
            severity=Severity.WASTE,
        ),
        Finding.OPTIMIZED: FindingSpec(
            Finding.OPTIMIZED, "right-sized", no_action="it is right-sized", needs_nothing=True, severity=Severity.OK
        ),
        Finding.INSUFFICIENT_DATA: FindingSpec(
            Finding.INSUFFICIENT_DATA, "no GPU metrics", no_action="no GPU metrics to size it on", no_metrics=True
        ),
        # Why not: the rules state the exclusion's cause in the first reason.
        Finding.EXCLUDED: FindingSpec(Finding.EXCLUDED, "excluded"),
        Finding.CONSOLIDATE: FindingSpec(
            Finding.CONSOLIDATE,
            "consolidate",
            attention=True,
            no_action="consolidation is advice only: the team moves the work, then stops the freed hosts",
            severity=Severity.WASTE,
        ),
        Finding.LEFT_RUNNING: FindingSpec(
            Finding.LEFT_RUNNING,
            "left running",
            attention=True,
            no_action="its use is not measured, so nothing stops it on a guess: an idle auto-stop configuration does",
            severity=Severity.WASTE,
        ),
        Finding.GPU_LOST: FindingSpec(
            Finding.GPU_LOST,
            "GPU lost",
            attention=True,
            no_action="a lost GPU comes back with a stop and start on other hardware, which its owner schedules (an "
            "instance store is wiped)",
            severity=Severity.RISK,  # hardware paid for and not usable: a fault to fix, not idle money
        ),
        Finding.HELD_UNUSED: FindingSpec(
            Finding.HELD_UNUSED,
            "held, unused",
            attention=True,
            no_action="a process holds the GPUs and may be wanted: check what it is before anything stops it",
            severity=Severity.WASTE,  # idle in all but memory: money spent on GPUs that run nothing
        ),
    }
)

# Findings that ask for a decision, and hosts without metrics, in the enum's order.
ATTENTION: tuple[Finding, ...] = tuple(finding for finding, spec in FINDINGS.items() if spec.attention)
NO_METRICS: tuple[Finding, ...] = tuple(finding for finding, spec in FINDINGS.items() if spec.no_metrics)


def advised_action(
    finding: Finding, target_type: str | None, kind: ResourceKind = ResourceKind.EC2
) -> ActionKind | None:
    """The one-click action advice with this finding and target carries where the analyzer allows one: a target type
    always means a resize; otherwise the finding's own action, unless that needs a target. For a resource other than
    an EC2 host, what that action becomes for its kind (domain/resources.py), or none."""
    if target_type:
        action: ActionKind | None = ActionKind.RESIZE
    else:
        action = FINDINGS[finding].action
        action = None if action is None or ACTIONS[action].needs_target else action
    mapped = RESOURCES[kind].actions
    return action if mapped is None or action is None else mapped.get(action)
