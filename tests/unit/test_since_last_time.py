"""Since last time: what changed between two daily runs, through the real table (moto's DynamoDB, template.yaml's
definition) and the pipeline's last step: new waste, advice resolved and by whom, hosts that came and went, the trend.
Each run stores its shards' advice as the collectors do (put_recommendations, its shard's ranking, its region's
moves); rank_run then merges them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import boto3
import pytest
from demo.aws_table import create_table_from_template

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.adapters.slack import blocks
from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import ActionKind, Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.pipeline import rank_run
from rightsizer.services.ports import Approval
from rightsizer.services.ranking import Ranking
from rightsizer.services.report import report_json
from rightsizer.services.since import advice_changes, moves
from tests.slack_double import ACCOUNT, idle, recommendation

REGION = "us-east-1"
YESTERDAY, TODAY = "2026-12-04", "2026-12-05"
NOW = datetime(2026, 12, 5, 6, tzinfo=UTC)


@pytest.fixture
def store(moto_aws: None) -> Iterator[DynamoStore]:
    table = create_table_from_template(boto3.client("dynamodb", region_name=REGION))
    yield DynamoStore(boto3.resource("dynamodb", region_name=REGION).Table(table))


def collect(store: DynamoStore, run: str, recs: Sequence[Recommendation], members_before: set[str] | None) -> None:
    """One region of one run, as the planner and a shard store it."""
    written = store.put_recommendations(run, recs, NOW)
    ranking = Ranking.of(recs, None, (), since=advice_changes(written.previous, recs))
    store.put_shard_ranking(run, ACCOUNT, REGION, 0, ranking, NOW)
    store.put_moves(run, ACCOUNT, REGION, moves(members_before, [rec.instance_id for rec in recs]), NOW)


def optimized(rec: Recommendation) -> Recommendation:
    return replace(
        rec,
        recommendation_id=rec.recommendation_id + "-now",
        finding=Finding.OPTIMIZED,
        target_type=None,
        monthly_cost_after=rec.monthly_cost,
        monthly_savings_net=Decimal("0.00"),
        actionable=False,
    )


def test_the_second_run_says_what_came_what_went_what_was_resolved_and_by_whom(store: DynamoStore) -> None:
    legacy = replace(idle(1), instance_name="legacy-train-01")  # idle both days
    sandbox = replace(recommendation(2, finding=Finding.OPTIMIZED, target_type=None, cost_after="4140.00"))
    embeddings = replace(recommendation(3), instance_name="embeddings-api")  # resized by an approval in between
    notebook = replace(recommendation(4), instance_name="notebook-b")  # its owner resized it
    spare = replace(idle(5, instance_type="g4dn.xlarge", cost="383.98"), instance_name="spare-t4")  # launched today
    collect(store, YESTERDAY, [legacy, sandbox, embeddings, notebook], None)
    first = rank_run(YESTERDAY, store, None, NOW - timedelta(days=1)).ranking.since
    approval = Approval(
        embeddings.recommendation_id, ACCOUNT, REGION, embeddings.instance_id, "g5.12xlarge", "g5.xlarge", "U0LEAD",
        NOW - timedelta(hours=12), status=ApprovalStatus.SUCCEEDED, action=ActionKind.RESIZE,
    )  # fmt: skip
    store.create_approval(approval)

    today = [legacy, optimized(embeddings), optimized(notebook), spare]
    collect(store, TODAY, today, {rec.instance_id for rec in (legacy, sandbox, embeddings, notebook)})
    since = rank_run(TODAY, store, None, NOW).ranking.since

    assert not first.compared and [p.run for p in first.trend] == [YESTERDAY]  # nothing to compare with
    assert since.previous_run == YESTERDAY
    assert [(c.name, c.finding) for c in since.new_waste] == [("spare-t4", Finding.IDLE)]  # not legacy: still idle
    assert since.new_waste_net == Decimal("383.98")
    assert {c.name: c.by for c in since.resolved} == {
        "embeddings-api": "an approval by <@U0LEAD>",
        "notebook-b": "its owner",
    }
    assert {c.now for c in since.resolved} == {"optimized"} and since.resolved_net == Decimal("6812.00")
    assert (since.arrived, since.departed) == ((spare.instance_id,), (sandbox.instance_id,))
    assert [(p.run, p.waste) for p in since.trend] == [
        (YESTERDAY, Decimal("8935.20") + 2 * Decimal("3406.00")),
        (TODAY, Decimal("8935.20") + Decimal("383.98")),
    ]

    # Re-ranking the same day (a re-run, the catch-up) says the same: the advice of the day before is kept.
    collect(store, TODAY, today, {rec.instance_id for rec in (legacy, sandbox, embeddings, notebook)})
    assert rank_run(TODAY, store, None, NOW).ranking.since == since


def test_the_report_opens_with_what_changed(store: DynamoStore) -> None:
    legacy = replace(idle(1), instance_name="legacy-train-01")
    collect(store, YESTERDAY, [legacy], None)
    rank_run(YESTERDAY, store, None, NOW - timedelta(days=1))
    spare = replace(idle(5, instance_type="g4dn.xlarge", cost="383.98"), instance_name="spare-t4")
    collect(store, TODAY, [legacy, spare], {legacy.instance_id})
    report = rank_run(TODAY, store, None, NOW).ranking.report(NOW, 14, None)

    summary = blocks.report_summary_message(report, [], NOW).payload()
    document = report_json(report)

    first = summary["blocks"][1]
    assert first["block_id"] == "since"
    assert first["text"]["text"].splitlines() == [
        f"*Since {YESTERDAY}*",
        "• *1* new waste, *$383.98/month* net: spare-t4 (idle, $383.98)",
        f"• hosts: 1 came (`{spare.instance_id}`), 0 went",
        "• waste over the last 2 runs: `██` $8,935.20 → $9,319.18/month",
    ]
    since = document["since_last_time"]
    assert since["previous_run"] == YESTERDAY and since["arrived"] == {"count": 1, "resource_ids": [spare.instance_id]}
    assert since["new_waste"]["largest"][0]["finding"] == "idle"
