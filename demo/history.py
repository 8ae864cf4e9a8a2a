"""The day before the demo's report, so that it can say what changed since (issue 31's "since last time").

The daily pipeline runs once for yesterday over the same local AWS and posts its report; then the fleet changes as
fleets do between two days: the lead approves, in Slack, the stop of an idle spare T4 (a signed click, the instance
workflow runs); a scratch host is terminated by its owner; a canary T4 is launched. Today's report then opens with
what changed: the new waste, the advice resolved and by whom, the hosts that came and went. The month of runs before
yesterday is not replayed: its trend points (the fleet's waste and net savings per run, which each run stores) are
seeded, as the metrics are.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from demo.fleet import Gpu, Host, noisy

IDLE_T4 = Gpu(noisy(0.2, 0.3, hi=2.0), noisy(300, 20, lo=0))
T4_MEMORY = 15360.0
SPARE = Host(
    "spare-t4", "us-east-1", "g4dn.xlarge", "spare-t4", "excluded", gpus=(IDLE_T4,), gpu_memory_total_mib=T4_MEMORY,
    gpu_name="Tesla T4", tags={"rightsizer:managed": "true", "team": "speech"},
)  # fmt: skip
SCRATCH = Host(
    "scratch-a10g", "us-east-1", "g5.xlarge", "scratch-a10g", "idle", gpus=(IDLE_T4,), tags={"team": "research"}
)
CANARY = Host(
    "canary-t4", "us-east-1", "g4dn.xlarge", "canary-t4", "idle", gpus=(IDLE_T4,), gpu_memory_total_mib=T4_MEMORY,
    gpu_name="Tesla T4", tags={"team": "speech"},
)  # fmt: skip
EARLIER_RUNS = 28  # trend points seeded before yesterday's run: a month of history with yesterday and today
CANARY_DAYS = 4


def seed_yesterdays_fleet(end: datetime, days: int) -> dict[str, str]:
    """The hosts only yesterday's fleet had as it was (the spare before its stop, the scratch host), by key."""
    from demo.seed import seed

    return {item.host.key: item.instance_id for item in seed(end, days=days, hosts=[SPARE, SCRATCH])}


def yesterday(
    stack: Any,
    account_id: str,
    regions: tuple[str, ...],
    today: datetime,
    hosts: dict[str, str],
    approve: Callable[[Any, dict[str, Any], str], dict[str, Any] | None],
) -> None:
    """Yesterday's run and what changed since, printed as it happens; `approve`: a signed Slack click on a
    recommendation's button (demo/__main__.py's)."""
    import boto3

    from demo.seed import seed
    from demo.serverless import run_pipeline
    from rightsizer.adapters.aws.store import DynamoStore
    from rightsizer.adapters.slack.blocks import ACTION_APPROVE
    from rightsizer.services.since import TrendPoint

    store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(stack.table))
    run = (today - timedelta(days=1)).date()
    posted = run_pipeline(run.isoformat(), account_id, regions)
    print(
        f"Yesterday's run ({run}) posted its report: "
        f"${posted['totals']['monthly_savings_net_usd']:,.2f}/month could be saved net."
    )
    # The month before yesterday: the fleet's waste grew as hosts were left idle, a little each day, and dipped on the
    # days someone cleaned up; its points end where yesterday's run left its own.
    (last,) = store.trend(1)
    for back in range(EARLIER_RUNS, 0, -1):
        share = Decimal(1) - Decimal("0.008") * back + Decimal("0.02") * (back % 7 == 3)
        cents = Decimal("0.01")
        waste, net = (last.waste * share).quantize(cents), (last.net_savings * share).quantize(cents)
        point = TrendPoint((run - timedelta(days=back)).isoformat(), waste, net)
        store.put_trend_point(point, today)
    print(f"{EARLIER_RUNS} earlier runs' trend points seeded (the month before {run}: the fleet's waste and savings).")
    spare = next(rec for rec in posted["recommendations"] if rec["instance_id"] == hosts[SPARE.key])
    print("\nThen, before today's run:")
    approve(stack, spare, ACTION_APPROVE)
    boto3.client("ec2", region_name=SCRATCH.region).terminate_instances(InstanceIds=[hosts[SCRATCH.key]])
    print(f"  {SCRATCH.name} ({hosts[SCRATCH.key]}) was terminated by its owner.")
    (canary,) = seed(today, days=CANARY_DAYS, hosts=[CANARY])
    print(
        f"  {CANARY.name} ({canary.instance_id}, {CANARY.instance_type}) joined the fleet, and sits idle (the demo "
        f"gives it {CANARY_DAYS} days of metrics: enough to judge)."
    )
