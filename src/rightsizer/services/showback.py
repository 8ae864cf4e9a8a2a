"""Showback: the fleet's money per team, account, region or tag (`--group-by`, the report's "by team" section), and
the filters that narrow a report (`--finding`, `--min-savings`, `--team`, `--tag`, `--kind`; `/gpu top`'s words).

Pure functions over recommendations, one implementation for the CLI, the daily report, the page and `/gpu top`. Per
group: what its resources cost (spend), the part of it that is waste (idle, oversized, idle hours: the list-price
savings of the waste findings), the net savings its advice makes available, and the resources behind the numbers.
A node group's cost is its nodes' (they are hosts of their own): it counts only its savings, as the totals do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation

from rightsizer.domain.findings import FINDINGS, Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.resources import RESOURCES, ResourceKind
from rightsizer.services.formatting import usd

ZERO = Decimal(0)
GROUP_HOSTS = 10  # the resources a stored group names (the largest savings first); its count says how many in all
NO_VALUE = "(none)"  # the group of resources without the team, tag, ... grouped by


# ---------------------------------------------------------------------------------------------
# Groups


@dataclass(frozen=True)
class HostMoney:
    """One resource behind a group's numbers: its waste and the net saving its advice makes available."""

    resource_id: str
    name: str
    waste: Decimal
    net: Decimal


@dataclass(frozen=True)
class Group:
    """One team's (account's, region's, tag value's) money. Sums of disjoint sets of recommendations add up (a fleet's
    groups from its shards': `merged`)."""

    key: str  # the team, account, region or tag value; NO_VALUE for resources without one
    spend: Decimal = ZERO  # what its resources with a cost of their own cost a month (list prices)
    waste: Decimal = ZERO  # of which waste: the list-price savings of idle, oversized and idle-hours advice
    net_savings: Decimal = ZERO  # what its advice would take off the bill, net of reservations and plans
    resources: int = 0  # recommendations in the group (node groups and SageMaker resources included)
    unpriced: int = 0  # resources without a price (their spend is not in `spend`)
    hosts: tuple[HostMoney, ...] = ()  # the resources behind the savings, largest net first (capped when stored)

    def merged(self, other: Group, limit: int | None = GROUP_HOSTS) -> Group:
        return Group(
            self.key,
            self.spend + other.spend,
            self.waste + other.waste,
            self.net_savings + other.net_savings,
            self.resources + other.resources,
            self.unpriced + other.unpriced,
            _ranked((*self.hosts, *other.hosts), limit),
        )


def host_words(host: HostMoney) -> str:
    """A resource behind a group's numbers, in words: "legacy-train-01 $8,935.20", or where a reservation keeps its
    waste on the bill "llm-serving-vllm $0.00 net ($16,029.08 wasted at list price)"."""
    name = host.name or host.resource_id
    if host.waste in (ZERO, host.net):
        return f"{name} {usd(host.net)}"
    return f"{name} {usd(host.net)} net ({usd(host.waste)} wasted at list price)"


def _ranked(hosts: Iterable[HostMoney], limit: int | None) -> tuple[HostMoney, ...]:
    ordered = sorted(hosts, key=lambda h: (-h.net, -h.waste, h.resource_id))
    return tuple(ordered if limit is None else ordered[:limit])


@dataclass(frozen=True)
class GroupBy:
    """What resources are grouped by: `team`, `account`, `region`, or `tag:KEY`."""

    dimension: str  # team | account | region | tag
    tag: str = ""  # the tag key, for `tag:KEY`

    @classmethod
    def parse(cls, text: str) -> GroupBy:
        """`team`, `account`, `region` or `tag:KEY`; ValueError (a sentence for people) for anything else."""
        dimension, colon, key = text.strip().partition(":")
        dimension = dimension.lower()
        if dimension == "tag" and colon and key:
            return cls("tag", key)
        if dimension in KEYS and not colon:
            return cls(dimension)
        raise ValueError(f"cannot group by {text!r}: use team, account, region or tag:KEY (e.g. tag:cost-center)")

    @property
    def name(self) -> str:
        return f"tag:{self.tag}" if self.dimension == "tag" else self.dimension

    def key_of(self, rec: Recommendation) -> str:
        value = rec.tags.get(self.tag, "") if self.dimension == "tag" else KEYS[self.dimension](rec)
        return value or NO_VALUE


KEYS: Mapping[str, Callable[[Recommendation], str]] = {
    "team": lambda rec: rec.team,
    "account": lambda rec: rec.account_id,
    "region": lambda rec: rec.region,
}
BY_TEAM = GroupBy("team")


def host_money(rec: Recommendation) -> HostMoney | None:
    """What a resource puts in its group's waste and savings; None when its advice saves nothing."""
    saving = rec.monthly_savings or ZERO
    waste = saving if saving > 0 and FINDINGS[rec.finding].wastes else ZERO
    net = rec.net_savings if saving > 0 and rec.net_savings is not None else ZERO
    if waste <= 0 and net <= 0:
        return None
    return HostMoney(rec.instance_id, rec.instance_name, waste, max(net, ZERO))


@dataclass
class _Tally:
    """A group's money as its recommendations go by: only the resources behind its numbers are kept."""

    spend: Decimal = ZERO
    unpriced: int = 0
    resources: int = 0
    behind: list[HostMoney] = field(default_factory=list)

    def add(self, rec: Recommendation) -> None:
        self.resources += 1
        if not RESOURCES[rec.kind].node_group:  # a group's cost is its nodes', counted among the hosts
            if rec.monthly_cost is None:
                self.unpriced += 1
            else:
                self.spend += rec.monthly_cost
        money = host_money(rec)
        if money is not None:
            self.behind.append(money)

    def group(self, key: str, limit: int | None) -> Group:
        behind = self.behind
        waste, net = sum((h.waste for h in behind), ZERO), sum((h.net for h in behind), ZERO)
        return Group(key, self.spend, waste, net, self.resources, self.unpriced, _ranked(behind, limit))


@dataclass(frozen=True)
class Showback:
    """A fleet's money by one dimension: its groups, the most waste first."""

    by: GroupBy = BY_TEAM
    groups: tuple[Group, ...] = ()

    @property
    def grouped(self) -> bool:
        """More than one group, or one that is not "(none)": worth a section of its own."""
        return len(self.groups) > 1 or any(group.key != NO_VALUE for group in self.groups)

    def merged(self, other: Showback, limit: int | None = GROUP_HOSTS) -> Showback:
        by_key = {group.key: group for group in self.groups}
        for group in other.groups:
            by_key[group.key] = by_key[group.key].merged(group, limit) if group.key in by_key else group
        return Showback(self.by, _ordered(by_key.values()))


def _ordered(groups: Iterable[Group]) -> tuple[Group, ...]:
    return tuple(sorted(groups, key=lambda g: (-g.waste, -g.net_savings, -g.spend, g.key == NO_VALUE, g.key)))


def showback(recommendations: Iterable[Recommendation], by: GroupBy = BY_TEAM, limit: int | None = None) -> Showback:
    """The recommendations' money by `by`, the most waste first. `limit`: how many resources each group names (None:
    every one whose advice saves money)."""
    tallies: dict[str, _Tally] = {}
    for rec in recommendations:  # one pass, keeping no recommendation: they may be read back from a file (the CLI's)
        key = by.key_of(rec)
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = _Tally()
        tally.add(rec)
    return Showback(by, _ordered(tally.group(key, limit) for key, tally in tallies.items()))


# ---------------------------------------------------------------------------------------------
# Filters


class FilterError(ValueError):
    """A filter people wrote that means nothing: the message says what would work."""


@dataclass(frozen=True)
class Filters:
    """What a report is narrowed to: every condition given must hold (several values of one: any of them)."""

    findings: frozenset[Finding] = frozenset()
    min_savings: Decimal | None = None  # net savings of at least this, per month
    teams: frozenset[str] = frozenset()
    tags: tuple[tuple[str, str], ...] = ()  # KEY=VALUE pairs, every one must match
    kinds: frozenset[ResourceKind] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.findings or self.min_savings is not None or self.teams or self.tags or self.kinds)

    def keeps(self, rec: Recommendation) -> bool:
        if self.findings and rec.finding not in self.findings:
            return False
        if self.min_savings is not None and (rec.net_savings is None or rec.net_savings < self.min_savings):
            return False
        if self.teams and rec.team not in self.teams:
            return False
        if any(rec.tags.get(key) != value for key, value in self.tags):
            return False
        return not self.kinds or rec.kind in self.kinds

    def apply(self, recommendations: Iterable[Recommendation]) -> list[Recommendation]:
        return [rec for rec in recommendations if self.keeps(rec)]

    def describe(self) -> str:
        """The filters in words, for a report that shows only part of the fleet."""
        parts = []
        if self.findings:
            parts.append("finding " + " or ".join(sorted(f.value for f in self.findings)))
        if self.min_savings is not None:
            parts.append(f"net savings of at least ${self.min_savings:,.2f}/month")
        if self.teams:
            parts.append("team " + " or ".join(sorted(self.teams)))
        parts.extend(f"tag {key}={value}" for key, value in self.tags)
        if self.kinds:
            parts.append("kind " + " or ".join(sorted(k.value for k in self.kinds)))
        return "; ".join(parts)

    def with_term(self, name: str, value: str) -> Filters:
        """These filters and one more, as people write it: `finding`, `min-savings`, `team`, `tag` (KEY=VALUE) or
        `kind` with its value. FilterError says what would work."""
        parse = TERMS.get(name.lower().replace("_", "-"))
        if parse is None:
            raise FilterError(f"no filter {name!r}: use {', '.join(TERMS)}")
        return parse(self, value.strip())


def _finding(filters: Filters, value: str) -> Filters:
    try:
        finding = Finding(value.lower())
    except ValueError:
        raise FilterError(f"no finding {value!r}: one of {', '.join(f.value for f in Finding)}") from None
    return replace(filters, findings=filters.findings | {finding})


_MONEY = re.compile(r"\$?([0-9][0-9,]*(?:\.[0-9]{1,2})?)")


def _min_savings(filters: Filters, value: str) -> Filters:
    match = _MONEY.fullmatch(value)
    try:
        amount = Decimal(match.group(1).replace(",", "")) if match else None
    except InvalidOperation:
        amount = None
    if amount is None:
        raise FilterError(f"min-savings {value!r} is not an amount of dollars a month (e.g. 100 or $1,500)")
    return replace(filters, min_savings=amount)


def _team(filters: Filters, value: str) -> Filters:
    if not value:
        raise FilterError("team needs a value: the team tag's (e.g. team=search)")
    return replace(filters, teams=filters.teams | {value})


def _tag(filters: Filters, value: str) -> Filters:
    key, equals, wanted = value.partition("=")
    if not key or not equals:
        raise FilterError(f"tag {value!r} is not KEY=VALUE (e.g. env=prod)")
    return replace(filters, tags=(*filters.tags, (key, wanted)))


def _kind(filters: Filters, value: str) -> Filters:
    try:
        kind = ResourceKind(value.lower())
    except ValueError:
        raise FilterError(f"no kind {value!r}: one of {', '.join(k.value for k in ResourceKind)}") from None
    return replace(filters, kinds=filters.kinds | {kind})


TERMS: Mapping[str, Callable[[Filters, str], Filters]] = {
    "finding": _finding,
    "min-savings": _min_savings,
    "team": _team,
    "tag": _tag,
    "kind": _kind,
}


def filters_of(terms: Iterable[tuple[str, str]]) -> Filters:
    """Filters from (name, value) terms, in any number; FilterError for the first that means nothing."""
    filters = Filters()
    for name, value in terms:
        filters = filters.with_term(name, value)
    return filters


__all__ = [
    "BY_TEAM",
    "FilterError",
    "Filters",
    "Group",
    "GroupBy",
    "HostMoney",
    "Showback",
    "filters_of",
    "host_words",
    "showback",
]
