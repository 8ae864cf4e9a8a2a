"""Use-case: a fleet report — recommendations ranked by savings, with totals — and its JSON form.

The totals are computed once, here, for every surface (the CLI's table, JSON and CSV, the Slack report), so
they cannot disagree: savings people here can act on, the part one click realises, savings that need another
owner (an Auto Scaling group's launch template, a host in another account), and upsizes that cost more.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from rightsizer.domain.findings import FINDINGS, advised_action
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Consolidation, Evidence, Recommendation
from rightsizer.domain.models.money import CENT
from rightsizer.domain.policy import DEFAULT_MANAGED_TAG_KEY
from rightsizer.domain.resources import RESOURCES, ResourceKind
from rightsizer.domain.scope import ActionScope
from rightsizer.services.formatting import usd
from rightsizer.services.showback import BY_TEAM, GroupBy, Showback, showback
from rightsizer.services.since import AdviceChange, SinceLastTime

# The JSON document's version: the major number changes when a field is removed or changes meaning;
# fields may be added within a major version (schema/report.schema.json allows that).
# 1.1: kind and resource_id (resources other than EC2 hosts); 1.2: owner; 1.3: scope; 1.4: risks, schedule_plan, tags,
# the totals' hosts, other_resources, node_groups, by_kind and count, showback
SCHEMA_VERSION = "1.4"


# A daily report shows the day's analysis; one whose data is older than this says so.
STALE_AFTER = timedelta(hours=24)


class Category(StrEnum):
    """Where a recommendation's money goes in the totals."""

    SAVING = "saving"  # cheaper, and the people running this deployment can carry it out
    OTHER_OWNER = "other_owner"  # cheaper, but someone else must act: an ASG's launch template, another account
    UPSIZE = "upsize"  # costs more, for performance
    NONE = "none"  # no change in cost, or no price to tell


def savings_key(rec: Recommendation) -> tuple[int, Decimal, Decimal, str]:
    """Ranked by what the bill drops by (net of reservations and plans): a host in a capacity reservation saves
    nothing until the reservation goes, whatever its list price. Known savings first, largest first (list price
    breaks ties); unknown savings last; stable by instance id."""
    net, savings = rec.net_savings, rec.monthly_savings
    return (0 if net is not None else 1, -(net or Decimal(0)), -(savings or Decimal(0)), rec.instance_id)


def outside(rec: Recommendation, scope: ActionScope | None) -> bool:
    """The instance workflow cannot reach the host (another account without the action role, another region)."""
    return scope is not None and not scope.covers(rec.account_id, rec.region)


def actions_off(scope: ActionScope | None) -> bool:
    """A report-only deployment (ActionsEnabled=false): no button starts a workflow."""
    return scope is not None and not scope.actions_enabled


def one_click(rec: Recommendation, scope: ActionScope | None) -> bool:
    """An approval in Slack (the instance workflow) can carry this out: actions are on, the workflow reaches the
    resource, and it carries the managed tag (the workflow refuses any other; not known counts as not)."""
    return rec.action is not None and not outside(rec, scope) and rec.managed is True and not actions_off(scope)


def needs_tag(rec: Recommendation, scope: ActionScope | None) -> bool:
    """One click would act here, but the resource lacks the managed tag: a tag unlocks it (not while actions are
    off)."""
    return rec.action is not None and not outside(rec, scope) and rec.managed is False and not actions_off(scope)


def tag_command(rec: Recommendation, managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY) -> str:
    """The AWS CLI command that lets the instance workflow act on `rec`'s host (run in the host's account)."""
    tags = shlex.quote(f"Key={managed_tag_key},Value=true")
    return f"aws ec2 create-tags --region {rec.region} --resources {rec.instance_id} --tags {tags}"


def untagged_refusal(rec: Recommendation, managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY) -> str | None:
    """Why the instance workflow would refuse `rec`'s host for want of the managed tag, and how to allow it; None when
    the host is tagged. The Slack report says it where it shows no Approve button, and the Approve handler in the
    same words."""
    if rec.managed is True:
        return None
    if rec.managed is None:
        return (
            f"this analysis predates the check of `{managed_tag_key}=true` on `{rec.instance_id}` (the instance "
            "workflow acts only on hosts tagged so): the next analysis tells"
        )
    return (
        f"`{rec.instance_id}` is not tagged `{managed_tag_key}=true`, and the instance workflow acts only on hosts "
        f"that are: `{tag_command(rec, managed_tag_key)}` allows it (the next analysis then offers one click)"
    )


def category(rec: Recommendation, scope: ActionScope | None) -> Category:
    delta = rec.monthly_savings
    if delta is None or delta == 0:
        return Category.NONE
    if delta < 0:
        return Category.UPSIZE
    if rec.asg_name or rec.owner or rec.lifecycle == "spot" or outside(rec, scope) or node_group(rec):
        return Category.OTHER_OWNER
    return Category.SAVING


def node_group(rec: Recommendation) -> bool:
    """Advice for the owner of a group of nodes (domain/node_groups/): its nodes have recommendations of their
    own, which carry their cost (and save nothing), so the totals count the group's saving but not its cost."""
    return RESOURCES[rec.kind].node_group


def not_actionable_reason(
    rec: Recommendation, scope: ActionScope | None, managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY
) -> str | None:
    """Why there is no one-click action for `rec` (None when there is one): what `ACT no` means."""
    if one_click(rec, scope):
        return None
    if rec.held_back:
        return rec.held_back
    if rec.asg_name:
        return f"member of Auto Scaling group {rec.asg_name}: change the group's launch template"
    if rec.action is not None:
        refusal = scope.refusal(rec.instance_id, rec.account_id, rec.region) if scope is not None else None
        return refusal or untagged_refusal(rec, managed_tag_key)
    spec = FINDINGS[rec.finding]
    if spec.no_action is not None:  # why the finding never offers one, when nothing more specific applies
        return spec.no_action
    # Excluded hosts and held-back actions: the analyzer states the cause in a reason (first for exclusions,
    # last for a resize or schedule it holds back, e.g. a type no longer offered in the region).
    if rec.reasons:
        held_back = spec.held_back_last and advised_action(rec.finding, rec.target_type, rec.kind) is not None
        return rec.reasons[-1] if held_back else rec.reasons[0]
    return "no one-click action"


@dataclass(frozen=True)
class Totals:
    instances: int  # every resource with a cost of its own: EC2 hosts and other resources, not node groups
    monthly_cost: Decimal
    unpriced: int
    monthly_savings: Decimal  # Category.SAVING: what people here can save, at list prices
    savings_count: int
    actionable_savings: Decimal  # ...of which one click realises (an approved resize, stop or schedule)
    actionable_count: int
    other_owner_savings: Decimal  # Category.OTHER_OWNER
    other_owner_count: int
    additional_cost: Decimal  # Category.UPSIZE: what recommended upsizes add
    upsize_count: int
    by_finding: dict[str, int]
    # The same, net of Reserved Instances, Savings Plans and capacity reservations: what the bill drops by.
    monthly_savings_net: Decimal = Decimal(0)
    actionable_savings_net: Decimal = Decimal(0)
    other_owner_savings_net: Decimal = Decimal(0)
    # Savings one click would realise but for the managed tag on the host (`needs_tag`): what tagging unlocks.
    untagged_savings: Decimal = Decimal(0)
    untagged_savings_net: Decimal = Decimal(0)
    untagged_count: int = 0
    # Recommendations by ResourceKind value: EC2 hosts, SageMaker resources, node groups (whose nodes are EC2 hosts
    # of their own). Empty in totals stored before kinds were counted.
    by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def hosts(self) -> int:
        """EC2 hosts (a node group's nodes among them)."""
        return self.by_kind.get(ResourceKind.EC2.value, 0) if self.by_kind else self.instances

    @property
    def groups(self) -> int:
        """Node groups advised as a whole: their cost is their nodes', counted among the hosts."""
        return sum(count for kind, count in self.by_kind.items() if RESOURCES[ResourceKind(kind)].node_group)

    @property
    def other_resources(self) -> int:
        """Resources with a cost of their own that are not EC2 hosts (SageMaker endpoints, notebooks, ...)."""
        return self.instances - self.hosts

    def _combine(self, other: Totals, sign: int) -> Totals:
        """Field by field: totals of disjoint sets of recommendations add up (a fleet from its shards) and
        subtract (the visible part of a fleet, once its hidden recommendations are known)."""
        values: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, dict):
                values[name] = {key: mine.get(key, 0) + sign * theirs.get(key, 0) for key in {*mine, *theirs}}
            else:
                values[name] = mine + sign * theirs
        return Totals(**values)

    def __add__(self, other: Totals) -> Totals:
        return self._combine(other, 1)

    def __sub__(self, other: Totals) -> Totals:
        return self._combine(other, -1)

    def rounded(self) -> Totals:
        values: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            values[name] = value.quantize(CENT) if isinstance(value, Decimal) else value
        return Totals(**values)


def fleet_totals(
    recommendations: Iterable[Recommendation], scope: ActionScope | None = None, *, rounded: bool = True
) -> Totals:
    """The one definition of the report's totals (CLI and Slack alike). `rounded=False` keeps exact sums, for
    totals that are added up later (shards of a fleet)."""
    money: dict[Category, Decimal] = dict.fromkeys(Category, Decimal(0))
    net: dict[Category, Decimal] = dict.fromkeys(Category, Decimal(0))
    count: Counter[Category] = Counter()
    findings: Counter[Finding] = Counter()
    kinds: Counter[str] = Counter()
    cost = actionable = actionable_net = untagged = untagged_net = Decimal(0)
    actionable_count = untagged_count = unpriced = 0
    hosts = 0
    for rec in recommendations:  # one pass: the recommendations may be read back from a file (the CLI's)
        findings[rec.finding] += 1
        kinds[rec.kind.value] += 1
        if not node_group(rec):  # a group's nodes count as hosts, with their cost
            hosts += 1
            if rec.monthly_cost is None:
                unpriced += 1
            else:
                cost += rec.monthly_cost
        kind = category(rec, scope)
        delta = rec.monthly_savings or Decimal(0)
        money[kind] += abs(delta)
        net[kind] += rec.net_savings or Decimal(0)
        count[kind] += 1
        if kind is Category.SAVING and one_click(rec, scope):
            actionable += delta
            actionable_net += rec.net_savings or Decimal(0)
            actionable_count += 1
        elif kind is Category.SAVING and needs_tag(rec, scope):
            untagged += delta
            untagged_net += rec.net_savings or Decimal(0)
            untagged_count += 1
    totals = Totals(
        instances=hosts,
        monthly_cost=cost,
        unpriced=unpriced,
        monthly_savings=money[Category.SAVING],
        savings_count=count[Category.SAVING],
        actionable_savings=actionable,
        actionable_count=actionable_count,
        other_owner_savings=money[Category.OTHER_OWNER],
        other_owner_count=count[Category.OTHER_OWNER],
        additional_cost=money[Category.UPSIZE],
        upsize_count=count[Category.UPSIZE],
        by_finding={finding.value: findings[finding] for finding in Finding},
        monthly_savings_net=net[Category.SAVING],
        actionable_savings_net=actionable_net,
        other_owner_savings_net=net[Category.OTHER_OWNER],
        untagged_savings=untagged,
        untagged_savings_net=untagged_net,
        untagged_count=untagged_count,
        by_kind=dict(kinds),
    )
    return totals.rounded() if rounded else totals


def _plain(text: str) -> str:
    return text


def money_sentences(
    totals: Totals, strong: Callable[[str], str] = _plain, managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY
) -> list[str]:
    """The totals in words, shared by the CLI's table footer, the Slack summary and the page (`strong`: Slack's bold).
    Net first: what the bill drops by, once the Reserved Instances, Savings Plans and capacity reservations that keep
    costing whatever one does to the hosts they pay for are counted; the list-price figure beside it where it
    differs."""
    lines = [
        f"{strong(usd(totals.monthly_savings_net) + '/month')} can be saved across "
        f"{strong(str(totals.savings_count))} recommendation(s), net of reservations "
        f"({strong(usd(totals.actionable_savings_net) + '/month')} with one click)."
    ]
    listed = (totals.monthly_savings, totals.actionable_savings)
    if listed != (totals.monthly_savings_net, totals.actionable_savings_net):
        lines.append(
            f"At list price: {usd(listed[0])}/month ({usd(listed[1])}/month with one click): Reserved Instances, "
            "Savings Plans and capacity reservations pay the difference whatever is done to the hosts."
        )
    if totals.other_owner_count:
        beside = _at_list(totals.other_owner_savings, totals.other_owner_savings_net)
        lines.append(
            f"{strong(usd(totals.other_owner_savings_net) + '/month')} more{beside} needs another owner: "
            f"{totals.other_owner_count} for node or Auto Scaling groups, Spot or out of reach."
        )
    if totals.upsize_count:
        lines.append(
            f"{totals.upsize_count} upsize(s) recommended for performance would add "
            f"{strong(usd(totals.additional_cost) + '/month')}."
        )
    if totals.untagged_count:
        lines.append(
            f"Tagging {strong(str(totals.untagged_count))} host(s) `{managed_tag_key}=true` would unlock "
            f"{strong(usd(totals.untagged_savings_net) + '/month')} more with one click"
            f"{_at_list(totals.untagged_savings, totals.untagged_savings_net)}: the instance workflow acts only on "
            "tagged hosts."
        )
    return lines


Money = Decimal | float | None  # a Recommendation's Decimal, or a JSON document's number


def money_phrase(savings: Money, net: Money, strong: Callable[[str], str] = _plain, *, detail: bool = True) -> str:
    """One piece of advice's money in words, net first, for every surface (Slack's sections and confirmations, the
    page, the CLI): "saves $2,955.04/month", "costs $203.52/month more" (never "saves -$203.52"), or where a
    reservation or plan pays for the host "saves $0.00/month net ($16,029.08 at list price: ...)". `detail`: say why
    net and list differ."""
    listed = None if savings is None else Decimal(str(savings))
    bill = listed if net is None else Decimal(str(net))
    if listed is None or bill is None:
        return "savings unknown (no price)"
    if listed < 0 and bill == listed:
        return strong(f"costs {usd(-listed)}/month more")
    if bill == listed:
        return strong(f"saves {usd(listed)}/month")
    words = f"saves {usd(bill)}/month net" if bill >= 0 else f"costs {usd(-bill)}/month more net"
    why = ": a reservation or plan pays for the host" if detail else ""
    return f"{strong(words)} ({usd(listed)} at list price{why})"


def _at_list(listed: Decimal, net: Decimal) -> str:
    """The list-price figure beside a net one, where they differ."""
    return "" if listed == net else f" ({usd(listed)}/month at list price)"


def _counted(count: int, label: str) -> str:
    return f"{count} {label}" + ("" if count == 1 or label.endswith("s") else "s")


def count_sentence(totals: Totals) -> str:
    """What the fleet is, counted once for every surface: EC2 hosts and the other resources apart, each kind named,
    what they cost; node groups, whose nodes are among the hosts, said apart. "21 EC2 hosts and 3 other resources
    (2 SageMaker endpoint variants, 1 SageMaker notebook instance) costing $93,437.49/month; 2 node groups ..."."""
    unpriced = f" ({totals.unpriced} without a price)" if totals.unpriced else ""
    if totals.instances and not totals.by_kind:  # totals stored before kinds were counted
        return f"{totals.instances} instance(s) costing {usd(totals.monthly_cost)}/month{unpriced}"
    hosts = _counted(totals.hosts, "EC2 host")
    others = [
        _counted(count, RESOURCES[ResourceKind(kind)].label)
        for kind, count in sorted(totals.by_kind.items())
        if count and kind != ResourceKind.EC2.value and not RESOURCES[ResourceKind(kind)].node_group
    ]
    what = (
        f"{hosts} and {_counted(totals.other_resources, 'other resource')} ({', '.join(others)})" if others else hosts
    )
    sentence = f"{what} costing {usd(totals.monthly_cost)}/month{unpriced}"
    if totals.groups:
        groups = "node group" if totals.groups == 1 else "node groups"
        sentence += f"; {totals.groups} {groups} advised as a whole (their nodes are among the hosts)"
    return sentence


@dataclass(frozen=True)
class TargetFailure:
    """An (account, region) that could not be read: reported, and the rest of the fleet still is."""

    account_id: str
    region: str
    message: str


@dataclass(frozen=True)
class FleetReport:
    generated_at: datetime
    lookback_days: int
    recommendations: tuple[Recommendation, ...]
    warnings: tuple[str, ...] = ()
    home_account: str | None = None  # the deployment's (the CLI: the caller's) account; None: unknown
    failures: tuple[TargetFailure, ...] = field(default=())
    scope: ActionScope | None = None  # where one click acts; None: the home account, any region
    # Set when the report is the head of a larger fleet (services.ranking): `recommendations` then hold only
    # the top of the ranking and a sample of hosts without metrics, and these are the whole fleet's totals.
    fleet: Totals | None = None
    managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY  # the tag one click needs (settings.managed_tag_key)
    # The stored analysis it shows (a ranking): its run (the UTC day its collection started) and when its data was
    # collected. "" / None: analysed just now (the CLI), or stored before runs were named.
    run: str = ""
    collected_at: datetime | None = None

    @property
    def analysis_day(self) -> str:
        """The day of the analysis shown: its run's, else the report's own."""
        return self.run or self.generated_at.strftime("%Y-%m-%d")

    @property
    def stale(self) -> str | None:
        """Why the analysis shown is not today's (its data is more than a day old), in words; None when it is."""
        if self.collected_at is None or self.generated_at - self.collected_at <= STALE_AFTER:
            return None
        hours = (self.generated_at - self.collected_at).total_seconds() / 3600
        return (
            f"this is the analysis of {self.analysis_day} (collected {hours:.0f} hours ago): no later collection has "
            "finished, so today's changes are not in it (docs/operations.md: the daily collection did not run)"
        )

    # The fleet's money by team (or what `--group-by` asked): the report's "by team" section. None: not grouped.
    showback: Showback | None = None
    filtered: str = ""  # what the report was narrowed to (services.showback.Filters.describe); "" for the whole fleet
    grouped: bool = False  # `--group-by`: the table shows the groups of `showback`, not one line per resource
    since: SinceLastTime | None = None  # what changed since the previous daily run (a deployment's report only)

    @property
    def action_scope(self) -> ActionScope | None:
        if self.scope is not None:
            return self.scope
        return ActionScope.of(self.home_account) if self.home_account else None

    @property
    def totals(self) -> Totals:
        return self.fleet if self.fleet is not None else fleet_totals(self.recommendations, self.action_scope)


def build_report(
    recommendations: Iterable[Recommendation],
    generated_at: datetime,
    lookback_days: int,
    warnings: Sequence[str] = (),
    *,
    home_account: str | None = None,
    failures: Sequence[TargetFailure] = (),
    scope: ActionScope | None = None,
    managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY,
    group_by: GroupBy = BY_TEAM,
) -> FleetReport:
    recs = tuple(sorted(recommendations, key=savings_key))
    return FleetReport(
        generated_at=generated_at,
        lookback_days=lookback_days,
        recommendations=recs,
        warnings=tuple(dict.fromkeys(warnings)),
        home_account=(scope.home_account if scope else home_account) or None,
        failures=tuple(failures),
        scope=scope,
        managed_tag_key=managed_tag_key,
        showback=showback(recs, group_by),
    )


def ranked_head(
    report: FleetReport, ranked: Callable[[], Iterable[Recommendation]], group_by: GroupBy = BY_TEAM
) -> FleetReport:
    """`report`, which holds no recommendation, made the head of those `ranked()` gives (in the report's order, a new
    pass each call: the CLI's are read back from a file): their totals and showback, as a report holding them has."""
    totals = fleet_totals(ranked(), report.action_scope)
    return replace(report, fleet=totals, showback=showback(ranked(), group_by))


# ---------------------------------------------------------------------------------------------
# JSON (schema/report.schema.json describes it; a test validates real output against it)


def _usd(amount: Decimal | None) -> float | None:
    # JSON has no decimal type: money leaves the program as a number rounded to cents (half-even, from
    # Decimal), so its text has at most two decimals. The schema documents this.
    return None if amount is None else float(amount.quantize(CENT))


def _rounded(value: float | None, digits: int) -> float | int | None:
    if value is None:
        return None
    return round(value) if digits == 0 else round(value, digits)


# (JSON key, Evidence attribute, decimals): one line per field. Percentages 1 decimal, MiB whole,
# days 2, shares of 1 three, Gbps three. A test checks every Evidence field is listed here.
EVIDENCE_FIELDS: tuple[tuple[str, str, int], ...] = (
    ("observed_days", "observed_days", 2),
    ("coverage", "coverage", 3),
    ("busy_units", "busy_units", 0),
    ("total_units", "total_units", 0),
    ("accelerator_p95_pct", "accelerator_p95", 1),
    ("accelerator_peak_pct", "accelerator_peak", 1),
    ("accelerator_burst_pct", "accelerator_burst", 1),
    ("memory_peak_mib", "memory_peak_mib", 0),
    ("memory_per_unit_mib", "memory_per_unit_mib", 0),
    ("memory_reserved", "memory_reserved", -1),  # a flag: as is
    ("cpu_p95_pct", "cpu_p95", 1),
    ("network_peak_gbps", "network_peak_gbps", 3),
    ("network_p95_gbps", "network_p95_gbps", 3),
    ("host_memory_peak_pct", "host_memory_peak_pct", 1),
    ("daily_accelerator_mean_pct", "daily_accelerator_mean", 1),
    ("idle_hours_per_week", "idle_hours_per_week", 0),
    ("schedule", "schedule", -1),  # text: as is
    ("busy_windows_utc", "busy_windows", -1),  # [first hour of the week, hours] pairs: as is
    ("schedule_plan", "schedule_plan", -1),  # text: as is
    ("daily_busiest_unit_pct", "daily_busiest_unit", 1),
)


def evidence_json(evidence: Evidence) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, attribute, digits in EVIDENCE_FIELDS:
        value = getattr(evidence, attribute)
        if digits < 0:
            document[key] = [list(item) for item in value] if isinstance(value, tuple) else value
        elif isinstance(value, tuple):
            document[key] = [_rounded(item, digits) for item in value]
        else:
            document[key] = _rounded(value, digits)
    return document


def recommendation_json(
    rec: Recommendation, scope: ActionScope | None = None, managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY
) -> dict[str, Any]:
    return {
        "recommendation_id": rec.recommendation_id,
        "account_id": rec.account_id,
        "instance_id": rec.instance_id,
        "name": rec.instance_name,
        "region": rec.region,
        "availability_zone": rec.availability_zone,
        "state": rec.state,
        "instance_type": rec.instance_type,
        "team": rec.team,
        "finding": rec.finding.value,
        "target_type": rec.target_type,
        "monthly_cost_usd": _usd(rec.monthly_cost),
        "monthly_cost_after_usd": _usd(rec.monthly_cost_after),
        "monthly_savings_usd": _usd(rec.monthly_savings),
        "monthly_savings_net_usd": _usd(rec.net_savings),
        "category": category(rec, scope).value,
        "confidence": rec.confidence.value,
        "actionable": one_click(rec, scope),
        "action": rec.action.value if one_click(rec, scope) and rec.action else None,
        "not_actionable_reason": not_actionable_reason(rec, scope, managed_tag_key),
        "reasons": list(rec.reasons),
        "risks": list(rec.risks),
        "tags": dict(rec.tags),
        "alternatives": [
            {
                "instance_type": alt.instance_type,
                "monthly_cost_usd": _usd(alt.monthly_cost),
                "confidence": alt.confidence.value,
                "note": alt.note,
            }
            for alt in rec.alternatives
        ],
        "auto_scaling_group": rec.asg_name,
        "owner": rec.owner,
        "consolidation": consolidation_json(rec.consolidation),
        "evidence": evidence_json(rec.evidence),
        "kind": rec.kind.value,
        "resource_id": rec.instance_id,
    }


def consolidation_json(plan: Consolidation | None) -> dict[str, Any] | None:
    if plan is None:
        return None
    return {"group": plan.group, "hosts": list(plan.hosts), "keep": list(plan.keep), "target_type": plan.target_type}


def totals_json(totals: Totals) -> dict[str, Any]:
    return {
        "instances": totals.instances,
        "hosts": totals.hosts,
        "other_resources": totals.other_resources,
        "node_groups": totals.groups,
        "by_kind": dict(sorted(totals.by_kind.items())),
        "count": count_sentence(totals),
        "monthly_cost_usd": _usd(totals.monthly_cost),
        "unpriced_instances": totals.unpriced,
        "monthly_savings_usd": _usd(totals.monthly_savings),
        "savings_recommendations": totals.savings_count,
        "actionable_savings_usd": _usd(totals.actionable_savings),
        "actionable_recommendations": totals.actionable_count,
        "other_owner_savings_usd": _usd(totals.other_owner_savings),
        "other_owner_recommendations": totals.other_owner_count,
        "additional_cost_usd": _usd(totals.additional_cost),
        "upsize_recommendations": totals.upsize_count,
        "by_finding": totals.by_finding,
        "monthly_savings_net_usd": _usd(totals.monthly_savings_net),
        "actionable_savings_net_usd": _usd(totals.actionable_savings_net),
        "other_owner_savings_net_usd": _usd(totals.other_owner_savings_net),
        "untagged_savings_usd": _usd(totals.untagged_savings),
        "untagged_savings_net_usd": _usd(totals.untagged_savings_net),
        "untagged_recommendations": totals.untagged_count,
    }


def scope_sentence(scope: ActionScope | None) -> str | None:
    """The scope in the words every surface prints beside its totals: where they count one click."""
    if scope is None:
        return None
    elsewhere = "" if scope.regions is None or not scope.actions_enabled else "; advice elsewhere is another owner's"
    return f"Scope: {scope.description}{elsewhere}."


def scope_json(scope: ActionScope | None) -> dict[str, Any] | None:
    """Where the totals count one click: two reports of one fleet agree on every total when their scopes agree."""
    if scope is None:
        return None
    return {
        "description": scope.description,
        "home_account": scope.home_account or None,
        "regions": None if scope.regions is None else sorted(scope.regions),
        "member_accounts": scope.member_accounts,
        "actions_enabled": scope.actions_enabled,
    }


def report_json(report: FleetReport) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": report.generated_at.isoformat(),
        "lookback_days": report.lookback_days,
        "home_account": report.home_account,
        "recommendations": [
            recommendation_json(rec, report.action_scope, report.managed_tag_key) for rec in report.recommendations
        ],
        "totals": totals_json(report.totals),
        "scope": scope_json(report.action_scope),
        "warnings": [*([report.stale] if report.stale else []), *report.warnings],
        "failed_targets": [
            {"account_id": f.account_id, "region": f.region, "error": f.message} for f in report.failures
        ],
        "showback": showback_json(report.showback),
        "filters": report.filtered or None,
        "since_last_time": since_json(report.since),
    }


def _change_json(change: AdviceChange) -> dict[str, Any]:
    return {
        "resource_id": change.resource_id,
        "name": change.name,
        "finding": change.finding.value,
        "net_savings_usd": _usd(change.net),
        "recommendation_id": change.recommendation_id,
        "now": change.now or None,
        "resolved_by": change.by or None,
    }


def since_json(since: SinceLastTime | None) -> dict[str, Any] | None:
    """What changed since the previous daily run; None for a live analysis, which has no previous run."""
    if since is None:
        return None
    return {
        "previous_run": since.previous_run or None,
        "new_waste": {
            "count": since.new_waste_count,
            "net_savings_usd": _usd(since.new_waste_net),
            "largest": [_change_json(change) for change in since.new_waste],
        },
        "resolved": {
            "count": since.resolved_count,
            "net_savings_usd": _usd(since.resolved_net),
            "largest": [_change_json(change) for change in since.resolved],
        },
        "arrived": {"count": since.arrived_count, "resource_ids": list(since.arrived)},
        "departed": {"count": since.departed_count, "resource_ids": list(since.departed)},
        "trend": [
            {"run": point.run, "waste_usd": _usd(point.waste), "net_savings_usd": _usd(point.net_savings)}
            for point in since.trend
        ],
    }


def showback_json(grouped: Showback | None) -> dict[str, Any] | None:
    """The money per group: spend, waste (idle, oversized, idle hours: list prices), net savings, and the resources
    behind them (all of them in a live report; the largest of each group in a deployment's ranking)."""
    if grouped is None:
        return None
    return {
        "group_by": grouped.by.name,
        "groups": [
            {
                "key": group.key,
                "monthly_cost_usd": _usd(group.spend),
                "waste_usd": _usd(group.waste),
                "net_savings_usd": _usd(group.net_savings),
                "resources": group.resources,
                "unpriced_resources": group.unpriced,
                "behind": [
                    {
                        "resource_id": host.resource_id,
                        "name": host.name,
                        "waste_usd": _usd(host.waste),
                        "net_savings_usd": _usd(host.net),
                    }
                    for host in group.hosts
                ],
            }
            for group in grouped.groups
        ],
    }
