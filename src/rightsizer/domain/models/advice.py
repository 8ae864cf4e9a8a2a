"""The advice: a recommendation (`Recommendation`) with its confidence, evidence, alternatives and consolidation, its
stable id (`advice_id`), and what a person decided about it in Slack (`DecisionKind`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from rightsizer.domain.action_kinds import ActionKind
from rightsizer.domain.findings import Finding, advised_action
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker_models import SageMakerDetail


class DecisionKind(StrEnum):
    """What a person decided about advice in Slack (stored as these strings)."""

    SNOOZE = "snooze"  # hides every recommendation of the host until a time
    DISMISS = "dismiss"  # hides one recommendation: different advice for the host shows again


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    def at_most(self, cap: Confidence) -> Confidence:
        order = (Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH)
        return order[min(order.index(self), order.index(cap))]


@dataclass(frozen=True, slots=True)
class Alternative:
    instance_type: str
    monthly_cost: Decimal | None
    confidence: Confidence
    note: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """The numbers behind a recommendation, kept for `show`/`why` and the audit log."""

    observed_days: float = 0.0
    coverage: float = 0.0
    busy_units: int = 0
    total_units: int = 0
    accelerator_p95: float | None = None  # busiest unit
    accelerator_peak: float | None = None
    memory_peak_mib: float | None = None  # busiest unit
    memory_per_unit_mib: float | None = None
    cpu_p95: float | None = None
    network_peak_gbps: float | None = None
    host_memory_peak_pct: float | None = None
    accelerator_burst: float | None = None  # busiest unit, p99 of hourly maxima
    memory_reserved: bool = False  # GPU memory looked reserved by a framework: not a working set
    network_p95_gbps: float | None = None
    daily_accelerator_mean: tuple[float | None, ...] = ()
    idle_hours_per_week: int | None = None
    schedule: str | None = None
    # The busy hours of the week as (first hour of week, hours) runs, Monday 00:00 UTC = 0: what a stop/start
    # schedule is built from (in the team's time zone, when it is approved).
    busy_windows: tuple[tuple[int, int], ...] = ()
    # The stop/start pair approving the schedule creates, in its zone with its margins, as the saving prices it
    # ("starts 07:45 Mon-Fri, stops 21:30 Mon-Fri (Europe/Berlin, ...)"). None: no schedule, or stored before.
    schedule_plan: str | None = None
    # The busiest unit, day by day (the mean of its hourly peaks each day, oldest first): what sparklines draw, so
    # one GPU at 61 % on an eight-GPU host does not read as idle, as the mean of all eight does.
    daily_busiest_unit: tuple[float | None, ...] = ()

    @property
    def daily_trace(self) -> tuple[float | None, ...]:
        """What a sparkline draws: the busiest unit day by day, or (advice stored before it was kept, resources
        whose metrics have no unit of their own) the mean of every unit."""
        return self.daily_busiest_unit or self.daily_accelerator_mean


@dataclass(frozen=True, slots=True)
class Consolidation:
    """Several part-used hosts whose measured work fits fewer hosts: which hosts, and onto what."""

    group: str  # e.g. "team=search in us-east-1a"
    hosts: tuple[str, ...]  # every host of the group, by instance id
    keep: tuple[str, ...]  # the hosts that keep running and take the work of the others
    target_type: str  # the type the kept hosts run


def advice_id(*advice: str) -> str:
    """Stable across re-runs: the same advice (account, region, resource, type, finding, target, ...) on the same
    resource keeps the same id, so a snooze, a dismissal or an approval follows it from one run to the next."""
    return "rec-" + hashlib.sha256("|".join(advice).encode()).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class Recommendation:
    recommendation_id: str
    generated_at: datetime
    account_id: str
    region: str
    instance_id: str
    instance_name: str
    instance_type: str
    availability_zone: str
    state: str
    finding: Finding
    target_type: str | None
    monthly_cost: Decimal | None
    monthly_cost_after: Decimal | None
    confidence: Confidence
    actionable: bool
    reasons: tuple[str, ...]
    evidence: Evidence = field(default_factory=Evidence)
    alternatives: tuple[Alternative, ...] = ()
    asg_name: str | None = None
    lookback_days: int = 14
    lifecycle: str = "on-demand"  # the host's: Spot advice is for whoever launches it
    held_back: str | None = None  # why advice with a target is not one click (unmeasured RAM, ...)
    team: str = ""  # the host's team tag (Policy.team_tag): groups consolidation, picks a schedule's time zone
    # What the change saves on the bill once Reserved Instances, Savings Plans and capacity reservations are
    # counted (None: no price). Equal to monthly_savings when no commitment covers the host.
    monthly_savings_net: Decimal | None = None
    consolidation: Consolidation | None = None
    # The host carries `<Policy.managed_tag_key>=true`, without which the instance workflow refuses it. None: not
    # known (a recommendation stored before the analyzer read the tag), which no surface offers as one click.
    managed: bool | None = None
    # The On-Demand Capacity Reservation or Capacity Block the host runs in (None: none, or not known): its restart
    # capacity is guaranteed, whatever the type's scarcity.
    capacity_reservation: str | None = None
    # What the advice is about (domain/resources.py): an EC2 host, or a SageMaker or node-group resource whose id
    # `instance_id` holds. Stored before kinds existed: an EC2 host.
    kind: ResourceKind = ResourceKind.EC2
    # What launches and replaces the host, in words (domain/owners.py: "Karpenter NodePool 'gpu' (cluster 'ml')");
    # None: nothing does. Such a host's advice is for that owner, never one click.
    owner: str | None = None
    # SageMaker advice: what it acts on (endpoint, variant, config, counts; the notebook) and the numbers behind it.
    sagemaker: SageMakerDetail | None = None
    # A host someone else launches (a node group, Spot): the finding the rules gave it before they reported it as
    # `excluded`, e.g. idle. The node-group pass (domain/node_groups/) reads it. None: not owned elsewhere.
    would_be: Finding | None = None
    # What carrying out the advice risks besides downtime, each in a few words ("its 900 GB instance store is wiped
    # when it stops", "p3.8xlarge is no longer offered in us-east-1: once stopped, it may not start again"): each is
    # explained in `reasons` too, and every confirmation (Slack's, `act --dry-run`) lists them.
    risks: tuple[str, ...] = ()
    # The resource's tags as collected (a node group's: those every node shares): showback groups and filters read
    # them (`--group-by tag:KEY`, `--tag KEY=VALUE`). Stored before tags were kept: none.
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def monthly_savings(self) -> Decimal | None:
        if self.monthly_cost is None or self.monthly_cost_after is None:
            return None
        return self.monthly_cost - self.monthly_cost_after

    @property
    def net_savings(self) -> Decimal | None:
        """What the bill really drops by: list-price savings where no reservation or plan changes them."""
        return self.monthly_savings_net if self.monthly_savings_net is not None else self.monthly_savings

    @property
    def action(self) -> ActionKind | None:
        """The one-click action this advice offers (None: advice only). `actionable` says whether there is one;
        the finding and the target say which (`findings.advised_action`), so stored recommendations need no field of
        their own."""
        return advised_action(self.finding, self.target_type, self.kind) if self.actionable else None
