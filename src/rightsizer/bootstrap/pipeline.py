"""The pipeline's wiring (the Collect and Analyze functions): the day's start, a target's plan, a shard's collection,
the ranking and the catch-up, each a use-case of services/pipeline.py over the table, S3, Step Functions and the
region's readers (bootstrap/regions.py), read through the target's own account."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from rightsizer.adapters import bundled
from rightsizer.adapters.aws.accounts import active_accounts
from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
from rightsizer.adapters.aws.ec2 import Ec2Fleet
from rightsizer.adapters.aws.pipeline import S3PlanBucket, StepFunctionsPipeline
from rightsizer.adapters.aws.price_cache import CachedPrices
from rightsizer.adapters.aws.scheduler import SchedulerPairs
from rightsizer.adapters.aws.session import AwsSession
from rightsizer.bootstrap import Wiring
from rightsizer.bootstrap.regions import reference, region_readers, sagemaker_sources
from rightsizer.domain.models.hosts import Instance
from rightsizer.services.collect import RegionContext, region_context
from rightsizer.services.pipeline import (
    Mode,
    Part,
    RunStart,
    ShardTask,
    Target,
    analyze_shard,
    collect_sagemaker_part,
    collect_shard,
    plan_target,
    plan_targets,
    rank_run,
    run_name,
    start_run,
)
from rightsizer.services.sagemaker import SageMakerData, collect_sagemaker
from rightsizer.services.schedule_registry import describe, reconcile_schedules
from rightsizer.settings import ConfigError, PriceMode


def start_pipeline(wiring: Wiring, now: datetime, mode: Mode | None = None) -> RunStart:
    """The day's pipeline start (services/pipeline.start_run): targets from the settings and Organizations, the
    plan in the stack's bucket, the execution in Step Functions."""
    settings = wiring.settings
    if not settings.pipeline_state_machine_arn:
        raise ConfigError("PIPELINE_STATE_MACHINE_ARN is not set")
    if not settings.plan_bucket:
        raise ConfigError("PLAN_BUCKET is not set")
    home, session = settings.home_region, wiring.session

    def organization() -> list[str]:  # asked only where the settings say to use Organizations
        return active_accounts(session.client("organizations", home))

    def targets() -> list[Target]:
        return plan_targets(settings, session.account_id(home), organization)

    return start_run(
        mode or Mode.COLLECT,
        now,
        wiring.store,
        S3PlanBucket(session.client("s3", home), settings.plan_bucket),
        StepFunctionsPipeline(session.client("stepfunctions", home), settings.pipeline_state_machine_arn),
        targets,
    )


def _reach(wiring: Wiring, role_arn: str) -> AwsSession:
    settings = wiring.settings
    return (
        wiring.session.assume(role_arn, settings.role_session_name, settings.home_region)
        if role_arn
        else wiring.session
    )


def plan_payload(wiring: Wiring, payload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """One Distributed Map item: {"run", "mode", "target": {"account_id", "region", "role_arn"}} -> its shards."""
    settings = wiring.settings
    target = Target.from_dict(payload.get("target") or {})
    run = str(payload.get("run") or run_name(now))
    mode = Mode(str(payload.get("mode") or Mode.COLLECT))

    def read_region() -> tuple[RegionContext, list[Instance]]:
        reach = _reach(wiring, target.role_arn)
        prices = None if settings.price_mode is PriceMode.SNAPSHOT else CachedPrices(wiring.store, now)
        readers = region_readers(reach, target.account_id, target.region, settings, on_demand=prices)
        instances = readers.fleet.accelerated_instances()
        context = region_context(
            target.account_id,
            target.region,
            instances,
            readers.sources,
            reference(),
            settings.price_mode,
            now,
            settings.lookback_days,
        )
        return context, instances

    shards = plan_target(
        run,
        mode,
        target,
        wiring.store,
        read_region,
        settings.shard_size,
        settings.policy.team_tag,
        sagemaker=settings.sagemaker,
    )
    checked = _check_schedule_registry(wiring, target) if mode is Mode.COLLECT else []
    return {
        "run": run,
        "mode": mode.value,
        **asdict(target),
        "shards": [shard.to_dict() for shard in shards],
        "schedule_registry": checked,
    }


def _check_schedule_registry(wiring: Wiring, target: Target) -> list[str]:
    """Correct the registry's stop/start pairs of the target from EventBridge Scheduler's own list (the truth);
    what changed, or why nothing could be checked, for the plan's output (the handler logs it). A side task: the
    table refusing a write leaves the registry as it was and the day's plan stands."""

    client = _reach(wiring, target.role_arn).client("scheduler", target.region)
    try:
        reconciled = reconcile_schedules(
            wiring.store, SchedulerPairs(client, target.region), target.account_id, target.region
        )
    except (ClientError, BotoCoreError) as error:
        return [f"{target.account_id}/{target.region}: the schedule registry was not corrected ({error})"]
    return [reconciled.warning] if reconciled.warning else list(describe(reconciled))


def collect_shard_payload(wiring: Wiring, payload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """One shard: describe its hosts again, read and summarise their usage, analyse them, store advice and ranking."""
    settings = wiring.settings
    task = ShardTask.from_dict(payload)
    reach = _reach(wiring, task.role_arn)
    if task.part is Part.SAGEMAKER:
        return _collect_sagemaker_payload(wiring, task, reach, now)

    readers: list[CloudWatchUsage] = []

    def usage_source(context: RegionContext) -> CloudWatchUsage:
        client = reach.client("cloudwatch", task.region, metric_arrays=True)
        readers.append(CloudWatchUsage(client, settings.metrics, region_units=context.accelerators))
        return readers[-1]

    fleet = Ec2Fleet(reach.client("ec2", task.region), task.account_id, task.region, bundled.accelerator_table())
    scope = settings.report_scope
    result = collect_shard(task, wiring.store, usage_source, settings.policy, now, scope, fleet.described)
    usage = readers[0]
    return {
        **result,
        "get_metric_data_calls": usage.get_metric_data_calls,
        "minimum_get_metric_data_calls": usage.minimum_get_metric_data_calls,
        "list_metrics_calls": usage.list_metrics_calls,
    }


def _collect_sagemaker_payload(wiring: Wiring, task: ShardTask, reach: AwsSession, now: datetime) -> dict[str, Any]:
    """The region's SageMaker task: inventory, metrics and prices read through the target's session."""
    settings = wiring.settings

    def read(context: RegionContext) -> SageMakerData:
        sources = sagemaker_sources(reach, task.account_id, task.region, settings)
        return collect_sagemaker(
            task.account_id,
            task.region,
            sources,
            context.catalog,
            context.window,
            settings.price_mode,
            bundled.sagemaker_snapshot_prices,
        )

    result = collect_sagemaker_part(task, wiring.store, read, settings.policy, now, settings.report_scope)
    return {**result, "get_metric_data_calls": 0, "minimum_get_metric_data_calls": 0, "list_metrics_calls": 0}


def analyze_payload(wiring: Wiring, payload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """{"action": "rank", "run"}: the fleet's ranking; a shard: its catch-up analysis; a schedule: start the
    catch-up execution over the latest run's shards."""
    settings = wiring.settings
    scope = settings.report_scope
    if payload.get("action") == "rank":
        return rank_run(payload.get("run") or None, wiring.store, scope, now).summary()
    if "shard" in payload:
        return analyze_shard(ShardTask.from_dict(payload), wiring.store, settings.policy, now, scope)
    return start_pipeline(wiring, now, Mode.ANALYZE).summary()
