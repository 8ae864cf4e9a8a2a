"""The fleet's ranking: the head of the report, precomputed, so that nothing has to read every recommendation.

Each shard ranks its own recommendations when it has analysed them; the pipeline's last step merges the shards'
rankings into the fleet's. `/gpu top`, `/gpu report` and the daily report post read that one small item. Totals
are exact sums (rounded only when shown), so the fleet's totals are those of every recommendation, whatever the
shards.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from rightsizer.domain.findings import ATTENTION, NO_METRICS
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.policy import DEFAULT_MANAGED_TAG_KEY
from rightsizer.domain.scope import ActionScope
from rightsizer.services.approvals import hidden_by
from rightsizer.services.ports import Approval, Decision
from rightsizer.services.report import FleetReport, Totals, build_report, fleet_totals, savings_key
from rightsizer.services.showback import BY_TEAM, GROUP_HOSTS, Showback, showback
from rightsizer.services.since import SinceLastTime

# Twice what `/gpu top` shows at most (25): room for the ones people snoozed or dismissed.
RANKING_SIZE = 50
NO_DATA_SAMPLE = 5  # the report names the first few hosts without metrics


@dataclass(frozen=True)
class Ranking:
    listed: tuple[Recommendation, ...]  # the attention findings with the largest savings, in report order
    no_data: tuple[Recommendation, ...]  # the first hosts without GPU metrics, by instance id
    totals: Totals  # of every recommendation ranked, unrounded
    warnings: tuple[str, ...] = ()
    run: str = ""  # the run whose analysis this is (its UTC day); "" in a shard's ranking, and before runs were kept
    collected_at: datetime | None = None  # when its data was collected (the earliest plan); None: not known
    # The money by team (the report's "by team" section), of every recommendation ranked; each group names its
    # largest savings. Empty in a ranking stored before showback.
    teams: Showback = field(default_factory=Showback)
    # What changed since the previous run (services.since): the shards' new and resolved advice, merged; the
    # pipeline's last step adds the hosts that came and went, who resolved what, and the trend.
    since: SinceLastTime = field(default_factory=SinceLastTime)

    @classmethod
    def of(
        cls,
        recommendations: Iterable[Recommendation],
        scope: ActionScope | None,
        warnings: Sequence[str] = (),
        collected_at: datetime | None = None,
        since: SinceLastTime | None = None,
    ) -> Ranking:
        recs = list(recommendations)
        listed = sorted((r for r in recs if r.finding in ATTENTION), key=savings_key)[:RANKING_SIZE]
        no_data = sorted((r for r in recs if r.finding in NO_METRICS), key=lambda r: r.instance_id)
        return cls(
            listed=tuple(listed),
            no_data=tuple(no_data[:NO_DATA_SAMPLE]),
            totals=fleet_totals(recs, scope, rounded=False),
            warnings=tuple(warnings),
            collected_at=collected_at,
            teams=showback(recs, BY_TEAM, GROUP_HOSTS),
            since=since or SinceLastTime(),
        )

    @classmethod
    def merge(cls, parts: Iterable[Ranking], scope: ActionScope | None) -> Ranking:
        rankings = list(parts)
        if not rankings:
            return cls.of((), scope)
        totals = rankings[0].totals
        for ranking in rankings[1:]:
            totals = totals + ranking.totals
        listed = sorted((r for ranking in rankings for r in ranking.listed), key=savings_key)[:RANKING_SIZE]
        no_data = sorted((r for ranking in rankings for r in ranking.no_data), key=lambda r: r.instance_id)
        warnings = dict.fromkeys(w for ranking in rankings for w in ranking.warnings)
        collected = [ranking.collected_at for ranking in rankings if ranking.collected_at is not None]
        teams, since = rankings[0].teams, rankings[0].since
        for ranking in rankings[1:]:
            teams, since = teams.merged(ranking.teams), since.merged(ranking.since)
        return cls(
            tuple(listed),
            tuple(no_data[:NO_DATA_SAMPLE]),
            totals,
            tuple(warnings),
            collected_at=min(collected, default=None),
            teams=teams,
            since=since,
        )

    def report(
        self,
        generated_at: datetime,
        lookback_days: int,
        scope: ActionScope | None,
        managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY,
    ) -> FleetReport:
        """The head of the fleet report: these recommendations, the whole fleet's totals. A ranking stored before
        ranks went by net savings is put in today's order here."""
        return FleetReport(
            generated_at=generated_at,
            lookback_days=lookback_days,
            recommendations=(*sorted(self.listed, key=savings_key), *self.no_data),
            warnings=self.warnings,
            home_account=scope.home_account if scope else None,
            scope=scope,
            fleet=self.totals.rounded(),
            managed_tag_key=managed_tag_key,
            run=self.run,
            collected_at=self.collected_at,
            showback=self.teams,
            since=self.since,
        )


class RankingStore(Protocol):
    """What a ranked report reads (DynamoStore in AWS): the ranking item, the decisions in force, and by key
    the advice those decisions hide."""

    def ranking(self) -> Ranking | None: ...

    def active_decisions(self, now: datetime) -> list[Decision]: ...

    def latest_for_instance(self, instance_id: str) -> Recommendation | None: ...

    def approvals_of(self, recommendation_ids: Sequence[str]) -> Mapping[str, Approval]: ...


@dataclass(frozen=True)
class RankedReport:
    report: FleetReport  # the ranking's head, the whole fleet's totals
    decisions: tuple[Decision, ...]  # in force
    hidden_elsewhere: tuple[Recommendation, ...]  # hidden, and not in the head: the visible totals subtract them
    # The approvals of the head's one-click advice, by recommendation id: its state shows where a button would.
    approvals: Mapping[str, Approval] = field(default_factory=dict)


def ranked_report(
    store: RankingStore,
    now: datetime,
    lookback_days: int,
    scope: ActionScope | None,
    managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY,
) -> RankedReport:
    """The head of the fleet report from the precomputed ranking, with the hidden recommendations that are not
    in it (read by key: one per snoozed or dismissed host), so that the visible totals are exact, and the approvals
    of its one-click advice (by key: an approval still running shows as such, not as a new Approve button). Reads no
    more when the fleet grows: the ranking is bounded, and so are the people who snooze and dismiss.
    `managed_tag_key`: the tag the report tells people to set where one click needs it."""
    decisions = tuple(store.active_decisions(now))
    ranking = store.ranking()
    if ranking is None:  # nothing analysed yet
        empty = build_report((), now, lookback_days, scope=scope, managed_tag_key=managed_tag_key)
        return RankedReport(empty, decisions, ())
    report = ranking.report(now, lookback_days, scope, managed_tag_key)
    shown = {rec.recommendation_id for rec in report.recommendations}
    elsewhere = []
    for instance_id in dict.fromkeys(decision.instance_id for decision in decisions):
        rec = store.latest_for_instance(instance_id)
        if rec is not None and rec.recommendation_id not in shown and hidden_by(rec, decisions, now):
            elsewhere.append(rec)
    approved = store.approvals_of([rec.recommendation_id for rec in report.recommendations if rec.action is not None])
    return RankedReport(report, decisions, tuple(elsewhere), approved)
