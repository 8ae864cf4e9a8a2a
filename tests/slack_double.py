"""Sample recommendations for the Slack tests; the Slack API double itself lives in demo/slack_double.py."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from demo.slack_double import (
    BOT_TOKEN,
    SIGNING_SECRET,
    TEAM,
    Call,
    SlackDouble,
    click_body,
    command_body,
    function_url_event,
    sign,
)

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Evidence, Recommendation
from rightsizer.domain.schedule_plan import SchedulePlan
from rightsizer.domain.scope import ActionScope
from rightsizer.services.ports import ScheduleRecord
from rightsizer.services.ranking import Ranking

__all__ = [
    "BOT_TOKEN",
    "SIGNING_SECRET",
    "TEAM",
    "Call",
    "SlackDouble",
    "click_body",
    "command_body",
    "function_url_event",
    "no_data",
    "recommendation",
    "sign",
    "superseding",
]


# ---------------------------------------------------------------------------------------------
# sample recommendations

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ACCOUNT = "123456789012"


def recommendation(
    number: int = 1,
    *,
    finding: Finding = Finding.OVERPROVISIONED,
    instance_type: str = "g5.12xlarge",
    target_type: str | None = "g5.xlarge",
    cost: str | None = "4140.00",
    cost_after: str | None = "734.00",
    actionable: bool = True,
    name: str | None = None,
    daily: tuple[float | None, ...] = (5.0, 10.0, 80.0, 95.0, 50.0, 3.0, 0.0, 12.0, 30.0, 44.0, 61.0, 70.0, 20.0, 8.0),
    generated_at: datetime = NOW,
    region: str = "us-east-1",
    managed: bool | None = True,
) -> Recommendation:
    """A recommendation for a host tagged for one click (`managed`), unless said otherwise."""
    instance_id = f"i-{number:017x}"
    return Recommendation(
        recommendation_id=f"rec-{hashlib.sha256(f'{instance_id}{finding}{target_type}'.encode()).hexdigest()[:20]}",
        generated_at=generated_at,
        account_id=ACCOUNT,
        region=region,
        instance_id=instance_id,
        instance_name=f"training-{number}" if name is None else name,
        instance_type=instance_type,
        availability_zone=f"{region}a",
        state="running",
        finding=finding,
        target_type=target_type,
        monthly_cost=None if cost is None else Decimal(cost),
        monthly_cost_after=None if cost_after is None else Decimal(cost_after),
        confidence=Confidence.HIGH,
        actionable=actionable,
        reasons=(
            "busiest GPU p95 12% and memory peak 9.1 GiB of 22.5 GiB: one A10G carries the load",
            "g5.xlarge keeps the A10G model, 4 vCPUs and 16 GiB host memory",
        ),
        evidence=Evidence(
            observed_days=14.0,
            coverage=0.99,
            busy_units=1,
            total_units=4,
            accelerator_p95=12.0,
            accelerator_peak=95.0,
            memory_peak_mib=9300.0,
            memory_per_unit_mib=23028.0,
            cpu_p95=20.0,
            network_peak_gbps=0.4,
            host_memory_peak_pct=30.0,
            daily_accelerator_mean=daily,
        ),
        managed=managed,
    )


OFFICE_HOURS = tuple((day * 24 + 8, 11) for day in range(5))  # Mon-Fri 08:00-19:00 UTC
# A stop/start pair in Berlin, fixed here (approvals.approve computes its own, with its margins; test_schedule_plan).
OFFICE_HOURS_PLAN = SchedulePlan(
    stop_cron="cron(0 19 ? * MON-FRI *)",
    start_cron="cron(45 7 ? * MON-FRI *)",
    time_zone="Europe/Berlin",
    description="starts 07:45 Mon-Fri, stops 19:00 Mon-Fri (Europe/Berlin)",
)


def schedule_record(
    rec: Recommendation, created_at: datetime = NOW, plan: SchedulePlan = OFFICE_HOURS_PLAN
) -> ScheduleRecord:
    """The registry entry of the pair approved for `rec` (what the notifier writes when the workflow created it)."""
    return ScheduleRecord(
        account_id=rec.account_id,
        region=rec.region,
        instance_id=rec.instance_id,
        instance_type=rec.instance_type,
        recommendation_id=rec.recommendation_id,
        stop_name=f"rightsizer-{rec.instance_id}-stop",
        start_name=f"rightsizer-{rec.instance_id}-start",
        plan=plan,
        created_by="U0APPROVER",
        created_at=created_at,
        instance_name=rec.instance_name,
    )


def idle(number: int, instance_type: str = "p3.8xlarge", cost: str = "8935.20") -> Recommendation:
    """An idle host: one click stops it."""
    return replace(
        recommendation(
            number, finding=Finding.IDLE, instance_type=instance_type, target_type=None, cost=cost, cost_after="0.00"
        ),
        reasons=("all 4 GPUs are unused: p99 below 5% and no hour above 10% (peak 1%); CPU p95 2% of 32 vCPUs",),
    )


def schedulable(number: int, instance_type: str = "g5.xlarge", team: str = "") -> Recommendation:
    """A host busy in office hours: one click creates its stop/start pair."""
    rec = recommendation(
        number, finding=Finding.SCHEDULABLE, instance_type=instance_type, target_type=None, cost="734.38",
        cost_after="240.42",
    )  # fmt: skip
    evidence = replace(rec.evidence, idle_hours_per_week=113, schedule="Mon-Fri 08:00-19:00 UTC",
                       busy_windows=OFFICE_HOURS)  # fmt: skip
    return replace(rec, team=team, evidence=evidence, reasons=("busy only Mon-Fri 08:00-19:00 UTC",))


def no_data(number: int) -> Recommendation:
    return replace(
        recommendation(
            number, finding=Finding.INSUFFICIENT_DATA, target_type=None, cost_after="4140.00", actionable=False
        ),
        reasons=("no GPU metrics: the CloudWatch agent's nvidia_gpu plugin publishes nothing for this host",),
        evidence=Evidence(),
    )


def superseding(rec: Recommendation, target_type: str = "g5.2xlarge", days: int = 1) -> Recommendation:
    """The next day's different advice for the same host (a new id)."""
    return replace(
        rec,
        recommendation_id=rec.recommendation_id + "-next",
        target_type=target_type,
        generated_at=rec.generated_at + timedelta(days=days),
    )


def publish(store: DynamoStore, *recs: Recommendation, run: str = "run-1", scope: ActionScope | None = None) -> None:
    """Store `recs` as the latest advice and rank every stored recommendation, as the pipeline's rank step
    does: the Slack commands read the ranking for `top` and the report, and the rest by key. `scope`: where
    one click acts (default: the test settings' account in its home region, as the app sees it)."""
    store.put_recommendations(run, list(recs), datetime.now(UTC))
    ranking_scope = scope or ActionScope.of(ACCOUNT, {"us-east-1"})
    store.put_ranking(run, Ranking.of(store.latest_recommendations(), ranking_scope))
