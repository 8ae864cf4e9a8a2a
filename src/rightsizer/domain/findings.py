"""The findings, one `FindingSpec` per `Finding` in `FINDINGS`: the one place what each means to a surface lives.

Slack, the notifier, the report's totals and JSON, the CLI and the HTML page read them here, and so do the generated
lists: `make schema` (report_schema/build.py) writes the JSON schema's enum (schema/report.schema.json) and the table
of findings in docs/how-it-decides.md (each spec's `decided_when` and `advice`), and a test fails while either is
stale. Adding a finding is one member and one entry here, plus its rule (in the module of its concern,
domain/rules/), then `make schema` (tests/integration/test_new_member_footprint.py adds one and counts the files it
touches).

Pure data: no I/O; the Slack app's cold start imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from rightsizer.domain.action_kinds import ActionKind
from rightsizer.domain.actions import ACTIONS
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
    # Its row in docs/how-it-decides.md's table of findings (Markdown, one cell each; `make schema` writes the table,
    # in this registry's order): when the rules decide it, and what the bot then advises.
    decided_when: str = field(kw_only=True)
    advice: str = field(kw_only=True)
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
            Finding.IDLE,
            "idle",
            attention=True,
            action=ActionKind.STOP,
            severity=Severity.WASTE,
            decided_when="every unit's p99 < 5 %, median < 1 % **and** no hourly maximum ≥ 10 % in the window; CPU "
            "p95 < 10 % and < 4 busy vCPUs, no hour of the week averaging ≥ 20 % and no recurring busiest 5 minutes ≥ "
            "20 %; network (p95 and every hour) < 0.01 Gbps; no encoder session",
            advice="stop (or terminate if nobody claims it); risks of stopping named (host RAM ≥ 50 % in use among "
            "them)",
        ),
        Finding.OVERPROVISIONED: FindingSpec(
            Finding.OVERPROVISIONED,
            "over-provisioned",
            attention=True,
            action=ActionKind.RESIZE,
            held_back_last=True,
            severity=Severity.WASTE,
            decided_when="a cheaper type carries the measured demand, its busiest hours and headroom (saves ≥ "
            "10 %); or some units never work but no cheaper compatible type exists (no target: named, not hidden)",
            advice="resize to the target",
        ),
        Finding.UNDERPROVISIONED: FindingSpec(
            Finding.UNDERPROVISIONED,
            "under-provisioned",
            attention=True,
            action=ActionKind.RESIZE,
            held_back_last=True,
            severity=Severity.RISK,
            decided_when="a working set that rises with the load reaches ≥ 95 % of nvidia-smi's `memory.total`, or "
            "the median utilisation is ≥ 95 %",
            advice="a type with more memory (medium confidence at most) / a faster one (advice only, never one click)",
        ),
        Finding.NOT_GPU_BOUND: FindingSpec(
            Finding.NOT_GPU_BOUND,
            "not GPU-bound",
            attention=True,
            action=ActionKind.RESIZE,
            held_back_last=True,
            severity=Severity.RISK,
            decided_when="the accelerators are unused while the host works (CPU or network), or the CPU is "
            "saturated (p95 ≥ 85 %) while the busiest unit's p95 < 40 %",
            advice="move the work to a non-GPU type / more vCPUs, same accelerator",
        ),
        Finding.SCHEDULABLE: FindingSpec(
            Finding.SCHEDULABLE,
            "schedulable",
            attention=True,
            action=ActionKind.SCHEDULE,
            held_back_last=True,
            severity=Severity.WASTE,
            decided_when="≥ 40 idle hours a week (accelerator, CPU **and** network quiet) in a weekly pattern, when "
            "stopping saves more than any resize",
            advice="a stop/start schedule for the busy window",
        ),
        Finding.OPTIMIZED: FindingSpec(
            Finding.OPTIMIZED,
            "right-sized",
            no_action="it is right-sized",
            needs_nothing=True,
            severity=Severity.OK,
            decided_when="every comparison was made and nothing cheaper fits",
            advice="—",
        ),
        Finding.INSUFFICIENT_DATA: FindingSpec(
            Finding.INSUFFICIENT_DATA,
            "no GPU metrics",
            no_action="no GPU metrics to size it on",
            no_metrics=True,
            decided_when="no GPU/Neuron metrics, < 3 days of history, < 25 % coverage, nothing to compare with (GPU "
            "model not in the table, no price), or a data error: a reading no host can give (a utilisation, CPU or "
            "RAM percentage outside 0-100 %; more GPU or NeuronCore series than the type has)",
            advice='install the agent / add the data / fix the agent\'s configuration; never "idle", never "optimized"',
        ),
        # Why not: the rules state the exclusion's cause in the first reason.
        Finding.EXCLUDED: FindingSpec(
            Finding.EXCLUDED,
            "excluded",
            decided_when="opted out, stopped, instance-store root, capacity block; Spot and Auto Scaling hosts "
            'after analysis ("would be idle …")',
            advice="reported, never resized in place",
        ),
        Finding.CONSOLIDATE: FindingSpec(
            Finding.CONSOLIDATE,
            "consolidate",
            attention=True,
            no_action="consolidation is advice only: the team moves the work, then stops the freed hosts",
            severity=Severity.WASTE,
            decided_when="fleet level, after the per-host rules: several hosts of one type, team (tag `team`) and "
            "availability zone (`optimized`, partly idle, or with a downsize of their own) whose busy GPUs (SM active "
            "where DCGM measures it, else kernel time, and NVENC/NVDEC in percent of the engines: p95 ≤ 80 %, busiest "
            "hours ≤ 100 %, memory peak × 1.2 per GPU) and host vCPU, RAM and network fit fewer of them, when that "
            "saves the group more than resizing each host alone",
            advice="keep the busiest hosts, move the others' work onto them, stop the rest: advice only, never one "
            "click; medium confidence, low when GPUs would be shared; the per-host resizes it replaces are named "
            "(and, where they save more, they stay and name the consolidation)",
        ),
        Finding.LEFT_RUNNING: FindingSpec(
            Finding.LEFT_RUNNING,
            "left running",
            attention=True,
            no_action="its use is not measured, so nothing stops it on a guess: an idle auto-stop configuration does",
            severity=Severity.WASTE,
            decided_when="a SageMaker notebook instance in service for days whose use nobody can read (no Jupyter "
            "activity log, no record of it being opened, no GPU metrics)",
            advice="add an idle auto-stop lifecycle configuration; stop it if nobody claims it: advice only, the "
            "use is unknown",
        ),
        Finding.GPU_LOST: FindingSpec(
            Finding.GPU_LOST,
            "GPU lost",
            attention=True,
            no_action="a lost GPU comes back with a stop and start on other hardware, which its owner schedules (an "
            "instance store is wiped)",
            severity=Severity.RISK,  # hardware paid for and not usable: a fault to fix, not idle money
            decided_when="a GPU's series stop for 6 hours or more while its siblings report to the end of the "
            "window and the host runs on: it fell off the bus (NVIDIA Xid 79) or was disabled",
            advice="said first, whatever the other GPUs do: what the unusable GPUs cost, then check `dmesg` for Xid "
            "79 and stop and start the host (which moves it to other hardware; its instance store is wiped); never "
            '"one idle GPU, downsize"; advice only',
        ),
        Finding.HELD_UNUSED: FindingSpec(
            Finding.HELD_UNUSED,
            "held, unused",
            attention=True,
            no_action="a process holds the GPUs and may be wanted: check what it is before anything stops it",
            severity=Severity.WASTE,  # idle in all but memory: money spent on GPUs that run nothing
            decided_when="GPUs hold memory (≥ 5 % of `memory.total`, still held in the window's last days) and no "
            "GPU ran a kernel in the window: a model loaded that nobody calls, a notebook kernel keeping its tensors",
            advice="what holding them costs a month, and what to check (the process in `nvidia-smi`, whether "
            "anything calls it); advice only: the process may be wanted, and there is no non-GPU type to size",
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
