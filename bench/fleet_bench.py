"""A simulated 100,000-instance fleet (10 accounts x 5 regions, 1/4/8-GPU hosts) planned into shards, with the
largest shard's time and memory against Lambda's limits, the day's state transitions and costs, the largest
DynamoDB item, and `/gpu show` against a store of 100,000 recommendations."""

from __future__ import annotations

import math
import os
import random
import statistics
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from boto3.dynamodb.conditions import Key

from bench.collect_bench import MIX

ACCOUNTS, REGIONS, FLEET = 10, 5, int(os.environ.get("BENCH_FLEET", "100000"))
SHARD_SIZE, SHARDS_PER_REGION, TARGET_CONCURRENCY = 500, 2, 10
COLLECT_MEMORY_MB, LAMBDA_TIMEOUT_S = 1769, 900
CLOUDWATCH_DATAPOINTS_PER_S = 396_000  # GetMetricData, per account and region
# Prices (us-east-1, on-demand, 2026): GetMetricData per metric requested, Lambda arm64 per GB-second and per
# request, Step Functions Standard per state transition, DynamoDB on-demand per write / read request unit.
GET_METRIC_DATA_PER_METRIC = 0.01 / 1000
LAMBDA_GB_SECOND, LAMBDA_REQUEST = 0.0000133334, 0.20 / 1e6
TRANSITION = 0.025 / 1000
WRITE_UNIT, READ_UNIT = 0.625 / 1e6, 0.125 / 1e6


def _query_plan() -> tuple[dict[int, int], dict[int, int]]:
    """Queries and datapoints per 1/4/8-GPU host over 14 days, from the collector's own query map."""
    from rightsizer.adapters.aws.cloudwatch import _EBS_FIELDS, _EC2_FIELDS, _GPU_FIELDS, _HOST_MEMORY_FIELD

    window = 14 * 86400
    gpu_periods = [period for fields in _GPU_FIELDS.values() for _, _, period in fields]
    host_periods = [_HOST_MEMORY_FIELD[2], *(period for *_, period in (*_EC2_FIELDS, *_EBS_FIELDS))]
    gpu_points, host_points = (sum(window // p for p in periods) for periods in (gpu_periods, host_periods))
    gpus = (1, 4, 8)
    queries = {g: g * len(gpu_periods) + len(host_periods) for g in gpus}
    return queries, {g: g * gpu_points + host_points for g in gpus}


QUERIES, POINTS = _query_plan()


def fleet_regions(rng: random.Random) -> list[int]:
    """Region sizes of the simulated fleet: skewed (a few big regions, many small), summing to FLEET."""
    weights = [rng.paretovariate(1.2) for _ in range(ACCOUNTS * REGIONS)]
    sizes = [int(FLEET * w / sum(weights)) for w in weights]
    sizes[0] += FLEET - sum(sizes)
    return sizes


def item_sizes() -> dict[str, int]:
    """Bytes of the largest item of each kind, packed as the store packs them."""
    from tests.slack_double import recommendation

    from bench.analyzer_bench import _catalog
    from rightsizer.adapters.aws.store import _context_item, _pack
    from rightsizer.domain.models.hosts import Instance
    from rightsizer.domain.scope import ActionScope
    from rightsizer.services.collect import RegionContext
    from rightsizer.services.ports import Window
    from rightsizer.services.ranking import RANKING_SIZE, Ranking

    now = datetime(2026, 12, 1, tzinfo=UTC)
    tags = {"Name": "training-node-0001", "team": "ml-platform", "cost-center": "cc-4711", "env": "prod"}
    shard = [
        Instance(f"i-{n:017x}", "123456789012", "us-east-1", "us-east-1a", "g5.48xlarge", "running", now, tags=tags)
        for n in range(SHARD_SIZE)
    ]
    from rightsizer.adapters import bundled

    prices = bundled.snapshot_prices("us-east-1")
    assert prices is not None
    context = RegionContext("123456789012", "us-east-1", now, Window(now - timedelta(days=14), now), _catalog(), prices)
    recs = [recommendation(n) for n in range(RANKING_SIZE)]
    return {
        "shard (instances)": len(_pack(shard)),
        "region context": len(_pack(_context_item(context))),
        "ranking": len(_pack(Ranking.of(recs, ActionScope.of("123456789012", {"us-east-1"})))),
        "recommendation": max(len(_pack(rec)) for rec in recs),
    }


SHOW_RUNS, SHOW_WARMUP = 60, 10
DECIDED_SHARE = 100  # one host in a hundred snoozed or dismissed


def show_latency(count: int) -> None:
    """Warm `/gpu show` (the reads the Slack app makes, then the answer's Block Kit) against a table of `count`
    latest recommendations and count / 100 snoozes and dismissals: the time of each step, and what DynamoDB
    itself would read (items per call, from the answers), which does not depend on moto's way of finding them."""
    import base64

    import boto3
    from demo.aws_table import create_table_from_template
    from moto import mock_aws
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends
    from tests.api_calls import record_api_call_details
    from tests.slack_double import recommendation

    from rightsizer.adapters.aws.store import DynamoStore, _pack
    from rightsizer.adapters.slack import blocks
    from rightsizer.domain.models.advice import DecisionKind
    from rightsizer.services.ports import Decision

    with mock_aws():
        table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
        backend = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
        template = recommendation(1)
        encoded = base64.b64encode(_pack(template)).decode()
        for n in range(count):  # straight into moto's table: the API would take minutes for 100,000 items
            iid = f"i-{n:017x}"
            backend.put_item(
                table,
                {
                    "PK": {"S": f"LATEST#{iid}"},
                    "SK": {"S": "LATEST"},
                    "recommendation_id": {"S": template.recommendation_id},
                    "data": {"B": encoded},
                },
            )
        resource_table = boto3.resource("dynamodb", region_name="us-east-1").Table(table)
        store = DynamoStore(resource_table)
        now = datetime.now(UTC)
        decided = range(0, count, DECIDED_SHARE)
        for n in decided:  # through the store: the keys and the GSI1 listing as the Slack app writes them
            kind, until = (
                (DecisionKind.SNOOZE, now + timedelta(days=3))
                if n // DECIDED_SHARE % 2
                else (DecisionKind.DISMISS, None)
            )
            rec_id = template.recommendation_id
            store.put_decision(
                Decision(kind, template.account_id, template.region, f"i-{n:017x}", "U0", now, until, rec_id)
            )
        rng = random.Random(3)
        steps: dict[str, list[float]] = {"latest (GetItem)": [], "decisions (2 GetItems)": [], "approval (GetItem)": []}
        steps["Block Kit"] = []
        totals: list[float] = []
        calls_per_show: list[Any] = []
        most_read = 0
        for attempt in range(SHOW_RUNS):
            iid = f"i-{rng.randrange(count):017x}"
            with record_api_call_details() as calls:
                started = time.perf_counter()
                rec = store.latest_for_instance(iid)
                assert rec is not None
                marks = [time.perf_counter()]
                decisions = store.decisions_about(rec, now)
                marks.append(time.perf_counter())
                approval = store.approval(rec.recommendation_id)
                marks.append(time.perf_counter())
                blocks.detail_message(rec, decisions=decisions, approval=approval, now=now).payload()
                marks.append(time.perf_counter())
            if attempt >= SHOW_WARMUP:
                for name, begin, end in zip(steps, [started, *marks[:-1]], marks, strict=True):
                    steps[name].append(end - begin)
                totals.append(marks[-1] - started)
                calls_per_show = calls
                most_read = max(most_read, sum(call.items_read for call in calls))
        # What a Query of one small partition costs in moto: it walks every item of the table to find the few
        # of that partition, where DynamoDB reads only them (the old path queried one DECISIONS partition).
        query_times, scanned = [], 0
        for _ in range(5):
            started = time.perf_counter()
            answer = resource_table.query(KeyConditionExpression=Key("PK").eq(f"DECISION#i-{DECIDED_SHARE:017x}"))
            query_times.append(time.perf_counter() - started)
            scanned = int(answer["ScannedCount"])

    median, worst = statistics.median(totals), max(totals)
    print(
        f"  /gpu show against {count:,} recommendations and {len(decided):,} snoozes and dismissals (moto DynamoDB): "
        f"median {median * 1000:.1f} ms, worst {worst * 1000:.1f} ms warm (goal < 1 s)"
    )
    print("    per step (median): " + " · ".join(f"{k} {statistics.median(v) * 1000:.1f} ms" for k, v in steps.items()))
    kinds = Counter(call.action.removeprefix("dynamodb:") for call in calls_per_show)
    print(
        f"    DynamoDB per show: {len(calls_per_show)} calls ({', '.join(f'{n} {k}' for k, n in kinds.items())}), "
        f"items read at most {most_read} (by key: the same at any table size)"
    )
    print(
        f"    for comparison, a Query of one host's decision partition: {statistics.median(query_times) * 1000:.0f} ms "
        f"in moto for {scanned} item(s) read (moto walks all {count + len(decided):,} items; DynamoDB reads the "
        "partition), as the former show's Query of the one DECISIONS partition did"
    )


def run(collection: dict[str, Any]) -> None:
    rng = random.Random(11)
    sizes = fleet_regions(rng)
    gpus = [MIX[n % len(MIX)][1] for n in range(FLEET)]
    mix = {g: gpus.count(g) for g in (1, 4, 8)}
    shards = sum(math.ceil(size / SHARD_SIZE) for size in sizes)
    measured = collection["runs"][-1]
    cpu_per_point = measured["cpu"] / measured["datapoints"]
    worst_points = SHARD_SIZE * POINTS[8]
    cpu_seconds = worst_points * cpu_per_point * 1769 / COLLECT_MEMORY_MB  # 1769 MB = one vCPU
    floor_seconds = worst_points / (CLOUDWATCH_DATAPOINTS_PER_S / SHARDS_PER_REGION)
    worst = max(cpu_seconds, floor_seconds)
    print(
        f"Fleet: {FLEET:,} instances, {ACCOUNTS} accounts x {REGIONS} regions "
        f"({min(sizes):,}-{max(sizes):,} per region)"
    )
    print(f"  GPUs per host: {mix[1]:,} x 1, {mix[4]:,} x 4, {mix[8]:,} x 8; SHARD_SIZE {SHARD_SIZE}")
    print(f"  shards: {shards} (largest region {max(sizes):,} hosts = {math.ceil(max(sizes) / SHARD_SIZE)} shards)")
    print(
        f"  largest shard (500 eight-GPU hosts, {worst_points / 1e6:.1f}M datapoints): ~{cpu_seconds:.0f} s CPU at "
        f"{COLLECT_MEMORY_MB} MB, CloudWatch floor {floor_seconds:.0f} s with {SHARDS_PER_REGION} shards per region "
        f"-> ~{worst:.0f} s of Lambda's {LAMBDA_TIMEOUT_S} s; memory ~{measured['rss_mib']:.0f} MiB "
        f"(measured, flat) of {COLLECT_MEMORY_MB} MB"
    )
    targets = ACCOUNTS * REGIONS
    transitions = 3 + targets * 3 + shards * 2
    metrics = sum(QUERIES[g] for g in gpus)
    points = sum(POINTS[g] for g in gpus)
    shard_seconds = points * cpu_per_point + shards * 2  # + start-up per invocation
    lambda_cost = shard_seconds * COLLECT_MEMORY_MB / 1024 * LAMBDA_GB_SECOND + (shards + targets + 2) * LAMBDA_REQUEST
    cloudwatch_cost = metrics * GET_METRIC_DATA_PER_METRIC
    sfn_cost = transitions * TRANSITION
    # Writes per host and day: usage summary (~3 KB: 3 units), history and latest copies when advice changes
    # (assumed 10 % a day), reads: the digest check (0.5 unit).
    dynamo_cost = FLEET * (3 + 0.1 * 3 * 2) * WRITE_UNIT + FLEET * 0.5 * READ_UNIT
    day = lambda_cost + cloudwatch_cost + sfn_cost + dynamo_cost
    print(
        f"  a day: {transitions:,} state transitions (${sfn_cost:.2f}), {metrics:,} metrics via GetMetricData "
        f"(${cloudwatch_cost:.2f}), Lambda ~{shard_seconds / 3600:.1f} vCPU-hours (${lambda_cost:.2f}), "
        f"DynamoDB ${dynamo_cost:.2f} -> ${day:.2f}/day, ${day * 30:,.0f}/month"
    )
    wall = math.ceil(shards / (TARGET_CONCURRENCY * SHARDS_PER_REGION)) * worst
    print(
        f"  wall clock with {TARGET_CONCURRENCY} targets x {SHARDS_PER_REGION} shards at once: <= ~{wall / 60:.0f} min"
    )
    for fleet, cost in ((1_000, day / 100), (10_000, day / 10), (100_000, day)):
        print(f"  monthly cost at {fleet:>7,} instances: ~${cost * 30 * FLEET / 100_000:,.0f}")
    sizes_of = item_sizes()
    print(
        "  largest DynamoDB items: "
        + ", ".join(f"{name} {size / 1024:.1f} KB" for name, size in sizes_of.items())
        + " (goal < 100 KB; none grows with the fleet)"
    )
    show_latency(int(os.environ.get("BENCH_SHOW_ITEMS", "100000")))
