"""Since last time: what changed in the fleet since the previous daily run, which the daily report opens with.

- **new waste**: advice of a waste finding (idle, oversized, idle hours, ...) for a resource whose previous advice was
  not one (a host that came counts too);
- **resolved**: a resource whose previous advice asked for a decision and whose advice now does not (it was
  resized, stopped, right-sized): by an approval here, or by its owner, whoever changed it outside the bot;
- **came and went**: resources the run found that the previous run did not, and the other way round;
- **the trend**: the fleet's waste and net savings available, one point per run, the last 30.

Pure: each shard compares its recommendations with the advice they replace (`advice_changes`), the planner each
region's members with the previous run's (`moves`), and the pipeline's last step merges them (`SinceLastTime.merged`),
as it merges the rankings. Lists are capped (their counts and money are not) so the ranking stays one small item.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from rightsizer.domain.findings import FINDINGS, Finding
from rightsizer.domain.models.advice import Recommendation

ZERO = Decimal(0)
LISTED = 10  # the changes of each kind a stored summary names (the largest savings first)
TREND_RUNS = 30  # the runs the trend shows


@dataclass(frozen=True)
class Prior:
    """The advice a resource had before this run (what the latest-advice item held)."""

    recommendation_id: str
    finding: Finding
    net: Decimal  # its net saving a month (0 when none or unknown)
    name: str = ""


@dataclass(frozen=True)
class AdviceChange:
    """One resource whose advice became waste, or whose advice asking for a decision was resolved."""

    resource_id: str
    name: str
    finding: Finding  # new waste: its finding now; resolved: the finding it had
    net: Decimal  # new waste: what acting on it saves a month; resolved: what the resolved advice saved
    recommendation_id: str  # new waste: the new advice; resolved: the advice that was resolved (its approval's key)
    now: str = ""  # resolved: what its advice says now ("optimized", "excluded", ...)
    by: str = ""  # resolved: who resolved it ("an approval by <@U123>", "its owner"), once the last step asked


@dataclass(frozen=True)
class TrendPoint:
    """One run's fleet: its waste (list-price savings of waste advice) and the net savings its advice makes
    available, a month."""

    run: str
    waste: Decimal
    net_savings: Decimal


@dataclass(frozen=True)
class SinceLastTime:
    previous_run: str = ""  # the run compared with; "" before a run had one to compare with
    new_waste: tuple[AdviceChange, ...] = ()
    new_waste_count: int = 0
    new_waste_net: Decimal = ZERO
    resolved: tuple[AdviceChange, ...] = ()
    resolved_count: int = 0
    resolved_net: Decimal = ZERO
    arrived: tuple[str, ...] = ()  # resource ids
    arrived_count: int = 0
    departed: tuple[str, ...] = ()
    departed_count: int = 0
    trend: tuple[TrendPoint, ...] = ()  # oldest first

    @property
    def compared(self) -> bool:
        """Whether there was a previous run to compare with."""
        return bool(self.previous_run)

    @property
    def quiet(self) -> bool:
        """Nothing changed."""
        return not (self.new_waste_count or self.resolved_count or self.arrived_count or self.departed_count)

    def merged(self, other: SinceLastTime, limit: int = LISTED) -> SinceLastTime:
        """Two disjoint parts of a fleet (shards, regions) as one."""
        return SinceLastTime(
            previous_run=self.previous_run or other.previous_run,
            new_waste=_largest((*self.new_waste, *other.new_waste), limit),
            new_waste_count=self.new_waste_count + other.new_waste_count,
            new_waste_net=self.new_waste_net + other.new_waste_net,
            resolved=_largest((*self.resolved, *other.resolved), limit),
            resolved_count=self.resolved_count + other.resolved_count,
            resolved_net=self.resolved_net + other.resolved_net,
            arrived=tuple(sorted({*self.arrived, *other.arrived}))[:limit],
            arrived_count=self.arrived_count + other.arrived_count,
            departed=tuple(sorted({*self.departed, *other.departed}))[:limit],
            departed_count=self.departed_count + other.departed_count,
            trend=self.trend or other.trend,
        )


def _largest(changes: Iterable[AdviceChange], limit: int) -> tuple[AdviceChange, ...]:
    return tuple(sorted(changes, key=lambda c: (-c.net, c.resource_id))[:limit])


def _net(rec: Recommendation) -> Decimal:
    net = rec.net_savings
    return net if net is not None and net > 0 else ZERO


def advice_changes(
    previous: Mapping[str, Prior], current: Sequence[Recommendation], limit: int = LISTED
) -> SinceLastTime:
    """One shard's new waste and resolved advice: its recommendations against the advice they replace (`previous`, by
    resource id; a resource missing there came with this run)."""
    new, resolved = [], []
    for rec in current:
        prior = previous.get(rec.instance_id)
        if FINDINGS[rec.finding].wastes and (prior is None or not FINDINGS[prior.finding].wastes):
            new.append(AdviceChange(rec.instance_id, rec.instance_name, rec.finding, _net(rec), rec.recommendation_id))
        elif prior is not None and FINDINGS[prior.finding].attention and not FINDINGS[rec.finding].attention:
            resolved.append(
                AdviceChange(
                    rec.instance_id,
                    rec.instance_name or prior.name,
                    prior.finding,
                    prior.net,
                    prior.recommendation_id,
                    now=rec.finding.value,
                )
            )
    return SinceLastTime(
        new_waste=_largest(new, limit),
        new_waste_count=len(new),
        new_waste_net=sum((c.net for c in new), ZERO),
        resolved=_largest(resolved, limit),
        resolved_count=len(resolved),
        resolved_net=sum((c.net for c in resolved), ZERO),
    )


def moves(previous: set[str] | None, current: Iterable[str], limit: int = LISTED) -> SinceLastTime:
    """A region's resources that came and went since its previous run (None: there was none to compare with)."""
    if previous is None:
        return SinceLastTime()
    now = set(current)
    arrived, departed = sorted(now - previous), sorted(previous - now)
    return SinceLastTime(
        arrived=tuple(arrived[:limit]),
        arrived_count=len(arrived),
        departed=tuple(departed[:limit]),
        departed_count=len(departed),
    )


def resolved_by(change: AdviceChange, approver: str | None) -> AdviceChange:
    """Who resolved the advice: the approver of its approval that succeeded, else its owner."""
    return replace(change, by=f"an approval by <@{approver}>" if approver else "its owner")


def with_trend(since: SinceLastTime, points: Sequence[TrendPoint], previous_run: str) -> SinceLastTime:
    """The run's summary with the fleet's trend (oldest first) and the run it was compared with."""
    return replace(since, trend=tuple(sorted(points, key=lambda p: p.run))[-TREND_RUNS:], previous_run=previous_run)
