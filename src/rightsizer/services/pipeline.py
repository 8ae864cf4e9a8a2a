"""Use-cases of the scheduled pipeline: plan targets, cut each into shards, collect and analyse each shard, rank
the run, report.

Step Functions runs them (statemachine/pipeline.asl.json): a Distributed Map over the (account, region)
targets, inside each an inline Map over its shards with the concurrency CloudWatch's quota allows, then the
ranking. No invocation sees more than one shard of instances, except the daily report's full listing.

Each step is idempotent: a run is named by its UTC date and everything it writes is keyed by that name, so
re-running a day overwrites the same items and yields the same recommendation ids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.commitments import CoverRef, HostCover, coverage, resolve_covers
from rightsizer.domain.guards import Gap, Source
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.scope import ActionScope
from rightsizer.services.analyze import analyze_hosts
from rightsizer.services.collect import PlannedShard, RegionContext, shard_instances, summarise_usage
from rightsizer.services.ports import Approval, SourceUnavailable, UsageSource, Written
from rightsizer.services.ranking import Ranking
from rightsizer.services.since import (
    TREND_RUNS,
    SinceLastTime,
    TrendPoint,
    advice_changes,
    moves,
    resolved_by,
    with_trend,
)
from rightsizer.settings import ConfigError, Settings

if TYPE_CHECKING:
    from rightsizer.services.sagemaker import SageMakerData


@dataclass(frozen=True)
class Target:
    """One (account, region) to collect. An empty role means the function's own account."""

    account_id: str
    region: str
    role_arn: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Target:
        try:
            return cls(
                account_id=str(data["account_id"]), region=str(data["region"]), role_arn=str(data.get("role_arn", ""))
            )
        except KeyError as missing:
            raise ConfigError(f"a collection target needs {missing.args[0]!r}: got {dict(data)}") from None


class RunLog(Protocol):
    """The runs: the day's start records one, the catch-up analysis reads the latest (DynamoStore in AWS)."""

    def put_run(self, run: str, now: datetime) -> None: ...
    def latest_run(self) -> str | None: ...


class RunStore(RunLog, Protocol):
    """What the pipeline reads and writes (DynamoStore in AWS)."""

    def put_region(
        self,
        run: str,
        context: RegionContext,
        shards: Sequence[Sequence[Instance]],
        covers: Mapping[str, CoverRef] | None = None,
    ) -> None: ...
    def put_shard(self, run: str, context: RegionContext, index: int, shard: PlannedShard) -> None: ...
    def region(self, run: str, account_id: str, region: str) -> tuple[RegionContext, int] | None: ...
    def shard(self, run: str, account_id: str, region: str, index: int) -> PlannedShard: ...
    def previous_members(self, run: str, account_id: str, region: str) -> set[str] | None: ...
    def put_usage(self, run: str, context: RegionContext, usage: Mapping[str, UsageSummary]) -> None: ...
    def usage(self, run: str, account_id: str, region: str, instance_ids: Sequence[str]) -> dict[str, UsageSummary]: ...
    def put_recommendations(self, run: str, recommendations: Sequence[Recommendation], now: datetime) -> Written: ...
    def forget_instances(self, instance_ids: Iterable[str]) -> None: ...
    def put_shard_ranking(
        self, run: str, account_id: str, region: str, index: int, ranking: Ranking, now: datetime
    ) -> None: ...
    def shard_rankings(self, run: str) -> list[Ranking]: ...
    def failures(self, run: str) -> list[dict[str, str]]: ...
    def put_ranking(self, run: str, ranking: Ranking) -> None: ...
    def put_sagemaker(self, run: str, data: SageMakerData, collected_at: datetime) -> None: ...
    def sagemaker(self, run: str, account_id: str, region: str) -> SageMakerData | None: ...
    def put_moves(self, run: str, account_id: str, region: str, moved: SinceLastTime, now: datetime) -> None: ...
    def moves(self, run: str) -> list[SinceLastTime]: ...
    def put_trend_point(self, point: TrendPoint, now: datetime) -> None: ...
    def trend(self, limit: int) -> list[TrendPoint]: ...
    def approval(self, recommendation_id: str) -> Approval | None: ...


class Mode(StrEnum):
    COLLECT = "collect"  # the daily run: plan, collect and analyse every shard
    ANALYZE = "analyze"  # the catch-up: analyse the shards a run collected, from their stored usage


class Part(StrEnum):
    """What a shard holds: EC2 hosts, or the region's SageMaker resources (one task per region, after its EC2
    shards: they are tens where hosts may be thousands)."""

    EC2 = "ec2"
    SAGEMAKER = "sagemaker"


@dataclass(frozen=True)
class ShardTask:
    """One item of the pipeline's inner Map: a shard of one (account, region) of one run."""

    run: str
    mode: Mode
    account_id: str
    region: str
    role_arn: str
    shard: int
    shards: int
    part: Part = Part.EC2

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShardTask:
        try:
            return cls(
                run=str(data["run"]),
                mode=Mode(str(data.get("mode", Mode.COLLECT))),
                account_id=str(data["account_id"]),
                region=str(data["region"]),
                role_arn=str(data.get("role_arn", "")),
                shard=int(data["shard"]),
                shards=int(data["shards"]),
                part=Part(str(data.get("part", Part.EC2))),
            )
        except (KeyError, ValueError) as error:
            raise ConfigError(f"a shard needs run, account_id, region, shard and shards: got {dict(data)}") from error

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "mode": self.mode.value, "part": self.part.value}


def run_name(now: datetime) -> str:
    return now.date().isoformat()


def role_account(arn: str) -> str:
    """The account id of an IAM role ARN; ConfigError for anything else."""
    parts = arn.split(":")
    # 12 ASCII digits: str.isdigit() also takes "²³" or 11 digits (ACCOUNT_ROLE_ARNS is checked like the CLI's).
    if len(parts) < 6 or not re.fullmatch(r"[0-9]{12}", parts[4]) or not parts[5].startswith("role/"):
        raise ConfigError(f"not an IAM role ARN: {arn!r} (expected arn:aws:iam::<account>:role/<name>)")
    return parts[4]


def plan_targets(settings: Settings, own_account: str, organization_accounts: Callable[[], list[str]]) -> list[Target]:
    """Every (account, region) to collect: role ARNs, Organizations accounts, or just this account."""
    if settings.account_role_arns:
        accounts = [(role_account(arn), arn) for arn in settings.account_role_arns]
    elif settings.use_organizations:
        accounts = [
            (account, "" if account == own_account else f"arn:aws:iam::{account}:role/{settings.member_role_name}")
            for account in organization_accounts()
        ]
    else:
        accounts = [(own_account, "")]
    return [Target(account, region, role) for account, role in accounts for region in settings.regions]


def plan_key(run: str) -> str:
    """Where a run's targets are written for the Distributed Map's ItemReader (S3)."""
    return f"runs/{run}/targets.json"


def pipeline_input(run: str, mode: Mode, bucket: str) -> dict[str, Any]:
    return {"run": run, "mode": mode.value, "plan": {"Bucket": bucket, "Key": plan_key(run)}}


class PlanBucket(Protocol):
    """Where a run's targets go for the Distributed Map's ItemReader (S3 in AWS): their list grows with the
    organisation and would not fit in an execution's input (256 KB)."""

    bucket: str

    def put_targets(self, key: str, targets: Sequence[Target]) -> None: ...


class PipelineExecutions(Protocol):
    """Starts the pipeline state machine (Step Functions in AWS)."""

    def start(self, name: str, execution_input: Mapping[str, Any]) -> str | None:
        """The execution's ARN, or None when Step Functions refuses the name (ExecutionAlreadyExists: an execution of
        this name ran with another input, or has ended). A start with the same name and input while that execution
        is open is idempotent in Step Functions: it answers with the running execution's ARN."""
        ...


class StartStatus(StrEnum):
    """What asking for a start came to."""

    STARTED = "started"
    ALREADY_STARTED = "already-started"  # the day's execution exists (its name is the day's)
    NOTHING_TO_ANALYSE = "nothing-to-analyse"  # a catch-up before any run


@dataclass(frozen=True, slots=True)
class RunStart:
    """What a start did: the run, the mode, whether it started or already had, the targets planned, the execution."""

    status: StartStatus
    mode: Mode
    run: str = ""
    targets: int = 0
    execution_arn: str | None = None  # only when it started

    def summary(self) -> dict[str, Any]:
        """The collect and analyze functions' answer (and log line): the run, the mode, the status, the targets and
        the execution; the run and the status alone when there was nothing to analyse."""
        if self.status is StartStatus.NOTHING_TO_ANALYSE:
            return {"run": self.run, "status": self.status.value}
        summary: dict[str, Any] = {
            "run": self.run,
            "mode": self.mode.value,
            "status": self.status.value,
            "targets": self.targets,
        }
        return summary if self.execution_arn is None else {**summary, "execution_arn": self.execution_arn}


def start_run(
    mode: Mode,
    now: datetime,
    runs: RunLog,
    plans: PlanBucket,
    executions: PipelineExecutions,
    targets: Callable[[], list[Target]],
) -> RunStart:
    """Start the day's pipeline execution once per day (collect: `targets` planned and written first), or a catch-up
    analysis of the latest run."""
    if mode is Mode.COLLECT:
        planned = targets()
        run = run_name(now)
        plans.put_targets(plan_key(run), planned)
        runs.put_run(run, now)
        name, count = f"run-{run}", len(planned)
    else:
        latest = runs.latest_run()
        if latest is None:
            return RunStart(StartStatus.NOTHING_TO_ANALYSE, mode)
        run, name, count = latest, f"analyze-{latest}-{now:%Y%m%dT%H%M}", 0
    arn = executions.start(name, pipeline_input(run, mode, plans.bucket))
    status = StartStatus.STARTED if arn is not None else StartStatus.ALREADY_STARTED
    return RunStart(status, mode, run, count, arn)


def plan_target(
    run: str,
    mode: Mode,
    target: Target,
    store: RunStore,
    read_region: Callable[[], tuple[RegionContext, list[Instance]]],
    shard_size: int,
    team_tag: str = "team",
    sagemaker: bool = False,
) -> list[ShardTask]:
    """Cut one (account, region) into shards and store them; the catch-up only lists the stored ones. With
    `sagemaker`, one more task reads the region's SageMaker resources.

    What covers each host on the bill is decided here, over the whole region (a regional RI or a Savings Plan
    spreads across every host it matches, whatever their shards). Hosts that were in the region's previous run
    and are gone now leave the latest recommendations."""
    if mode is Mode.ANALYZE:
        planned = store.region(run, target.account_id, target.region)
        count = planned[1] if planned is not None else 0
    else:
        context, instances = read_region()
        shards = shard_instances(instances, shard_size, team_tag)
        covers = coverage(instances, context.commitments, context.prices.on_demand)
        previous = store.previous_members(run, target.account_id, target.region)
        store.put_region(run, context, shards, {iid: CoverRef.of(cover) for iid, cover in covers.items()})
        members = {instance.instance_id for instance in instances}
        store.put_moves(run, target.account_id, target.region, moves(previous, members), context.collected_at)
        if previous:
            store.forget_instances(previous - members)
        count = len(shards)
    total = count + 1 if sagemaker else count
    tasks = [
        ShardTask(run, mode, target.account_id, target.region, target.role_arn, index, total) for index in range(count)
    ]
    if sagemaker:
        tasks.append(
            ShardTask(run, mode, target.account_id, target.region, target.role_arn, count, total, Part.SAGEMAKER)
        )
    return tasks


# Describes hosts as they are now (services.ports.Inventory.described); raises SourceUnavailable.
Describe = Callable[[Sequence[str]], list[Instance]]
GONE_SHOWN = 10  # a warning names this many of the hosts gone since the plan


def collect_shard(
    task: ShardTask,
    store: RunStore,
    usage_source: Callable[[RegionContext], UsageSource],
    policy: Policy,
    now: datetime,
    scope: ActionScope | None,
    describe: Describe | None = None,
) -> dict[str, Any]:
    """Describe the shard's hosts again, read and summarise their usage, store it, analyse the shard and store its
    advice and ranking.

    Hours may pass between the plan and a shard: a host terminated since is dropped (no advice, no savings, its
    latest advice withdrawn) and named in a warning, by every retry of the shard and its catch-up analysis too; one
    stopped or retagged since is analysed as it is now, and the shard is stored again so that they do the same. When
    the hosts cannot be described again, they are analysed as planned, without one click (domain/guards.py)."""
    context = _region(task, store)
    planned = store.shard(task.run, task.account_id, task.region, task.shard)
    instances, newly_gone, gap = _as_they_are(planned.instances, describe)
    shard = replace(planned, instances=instances, gone=(*planned.gone, *newly_gone))
    if shard != planned:
        store.put_shard(task.run, context, task.shard, shard)
    # Every time: a retry of a shard cut after storing it must still withdraw what the first attempt found gone.
    store.forget_instances(shard.gone)
    usage, warnings = summarise_usage(instances, context, usage_source(context))
    if gap is not None:
        usage = {iid: replace(summary, gaps=(*summary.gaps, gap)) for iid, summary in usage.items()}
        warnings.append(
            f"{context.region}: shard {task.shard}: its hosts could not be described again before the analysis "
            f"({gap.error}): no one click for them until the next run"
        )
    store.put_usage(task.run, context, usage)
    covers = resolve_covers(shard.covers, context.commitments)
    return {
        **_analyse(
            task, store, context, instances, usage, covers, [*warnings, *_gone(context, shard)], policy, now, scope
        ),
        "gone": list(shard.gone),
    }


def _as_they_are(
    planned: Sequence[Instance], describe: Describe | None
) -> tuple[tuple[Instance, ...], tuple[str, ...], Gap | None]:
    """(the planned hosts as they are now, those gone since, what could not be read): terminated hosts are gone."""
    if describe is None or not planned:
        return tuple(planned), (), None
    try:
        now = {i.instance_id: i for i in describe([i.instance_id for i in planned])}
    except SourceUnavailable as error:
        return tuple(planned), (), Gap(Source.DESCRIBED, str(error))
    there = tuple(now[i.instance_id] for i in planned if i.instance_id in now)
    return there, tuple(i.instance_id for i in planned if i.instance_id not in now), None


def _gone(context: RegionContext, shard: PlannedShard) -> list[str]:
    """The warning that names the shard's hosts terminated since the plan (none: no warning)."""
    if not shard.gone:
        return []
    gone = sorted(shard.gone)
    named = ", ".join(gone[:GONE_SHOWN]) + (f" and {len(gone) - GONE_SHOWN} more" if len(gone) > GONE_SHOWN else "")
    return [
        f"{context.region}: {len(gone)} host(s) terminated between the plan and their shard's collection, left out "
        f"(no advice, no savings): {named}"
    ]


def collect_sagemaker_part(
    task: ShardTask,
    store: RunStore,
    read: Callable[[RegionContext], SageMakerData],
    policy: Policy,
    now: datetime,
    scope: ActionScope | None,
) -> dict[str, Any]:
    """The region's SageMaker resources: read and summarise them, store the summary, analyse and rank them."""
    context = _region(task, store)
    data = read(context)
    store.put_sagemaker(task.run, data, context.collected_at)
    return _analyse_sagemaker(task, store, context, data, policy, now, scope)


def _analyse_sagemaker(
    task: ShardTask,
    store: RunStore,
    context: RegionContext,
    data: SageMakerData,
    policy: Policy,
    now: datetime,
    scope: ActionScope | None,
) -> dict[str, Any]:
    from rightsizer.services.sagemaker import analyze_region_sagemaker

    recommendations = analyze_region_sagemaker(data, context.catalog, policy, now)
    written = store.put_recommendations(task.run, recommendations, now)
    ranking = Ranking.of(
        recommendations,
        scope,
        list(data.warnings),
        context.collected_at,
        since=advice_changes(written.previous, recommendations),
    )
    store.put_shard_ranking(task.run, task.account_id, task.region, task.shard, ranking, now)
    return {
        **task.to_dict(),
        "instances": len(data.resources),
        "with_accelerator_data": len(data.usage),
        "recommendations_written": written.count,
        "warnings": list(data.warnings)[:20],
        "status": "collected" if task.mode is Mode.COLLECT else "analysed",
    }


def analyze_shard(
    task: ShardTask, store: RunStore, policy: Policy, now: datetime, scope: ActionScope | None
) -> dict[str, Any]:
    """The catch-up: analyse one collected shard again from its stored usage. A shard whose collection failed
    has none: it is left as it is (advice from no data would be a guess)."""
    if task.part is Part.SAGEMAKER:
        stored = store.sagemaker(task.run, task.account_id, task.region)
        if stored is None:
            return {**task.to_dict(), "instances": 0, "recommendations_written": 0, "status": "not collected"}
        return _analyse_sagemaker(task, store, _region(task, store), stored, policy, now, scope)
    context = _region(task, store)
    shard = store.shard(task.run, task.account_id, task.region, task.shard)
    usage = store.usage(task.run, task.account_id, task.region, [i.instance_id for i in shard.instances])
    collected = [instance for instance in shard.instances if instance.instance_id in usage]
    if not collected:
        return {**task.to_dict(), "instances": 0, "recommendations_written": 0, "status": "not collected"}
    covers = resolve_covers(shard.covers, context.commitments)
    return _analyse(task, store, context, collected, usage, covers, _gone(context, shard), policy, now, scope)


def _region(task: ShardTask, store: RunStore) -> RegionContext:
    planned = store.region(task.run, task.account_id, task.region)
    if planned is None:
        raise ConfigError(f"{task.account_id} {task.region} was not planned in run {task.run}")
    return planned[0]


def _analyse(
    task: ShardTask,
    store: RunStore,
    context: RegionContext,
    instances: Sequence[Instance],
    usage: Mapping[str, UsageSummary],
    covers: Mapping[str, HostCover],
    warnings: Sequence[str],
    policy: Policy,
    now: datetime,
    scope: ActionScope | None,
) -> dict[str, Any]:
    recommendations = analyze_hosts(
        instances, usage, context.catalog, context.prices, policy, now, covers, context.gaps
    )
    written = store.put_recommendations(task.run, recommendations, now)
    changes = advice_changes(written.previous, recommendations)
    ranking = Ranking.of(recommendations, scope, [*context.warnings, *warnings], context.collected_at, since=changes)
    store.put_shard_ranking(task.run, task.account_id, task.region, task.shard, ranking, now)
    return {
        **task.to_dict(),
        "instances": len(instances),
        "with_accelerator_data": sum(1 for u in usage.values() if u.devices),
        "recommendations_written": written.count,
        "warnings": list(warnings)[:20],
        "status": "collected" if task.mode is Mode.COLLECT else "analysed",
    }


@dataclass(frozen=True)
class RunAnalysis:
    run: str
    ranking: Ranking

    @property
    def findings(self) -> dict[str, int]:
        return {finding: count for finding, count in self.ranking.totals.by_finding.items() if count}

    @property
    def potential_savings(self) -> Decimal:
        totals = self.ranking.totals.rounded()
        return totals.monthly_savings + totals.other_owner_savings

    def summary(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "instances": self.ranking.totals.instances,
            "findings": self.findings,
            "potential_savings_usd": float(self.potential_savings),
        }


MAX_RUN_WARNINGS = 20  # the ranking item must not grow with the number of targets


def rank_run(run: str | None, store: RunStore, scope: ActionScope | None, now: datetime) -> RunAnalysis:
    """Merge the shards' rankings of `run` (default: the latest) into the fleet's ranking; failed shards and
    plans become warnings. The ranking says what changed since the previous run (services.since): the shards' new
    and resolved advice (who resolved it, from its approval), the regions' hosts that came and went, and the trend
    of the last runs, this one's point stored for the next."""
    chosen = run or store.latest_run()
    if chosen is None:
        return RunAnalysis(run="", ranking=Ranking.merge((), scope))
    merged = Ranking.merge(store.shard_rankings(chosen), scope)
    failed = [_failure_text(failure) for failure in store.failures(chosen)]
    warnings = (*failed, *merged.warnings)
    if len(warnings) > MAX_RUN_WARNINGS:
        warnings = (*warnings[: MAX_RUN_WARNINGS - 1], f"and {len(warnings) - MAX_RUN_WARNINGS + 1} more warnings")
    ranking = replace(merged, warnings=warnings, run=chosen, since=_since(chosen, merged, store, now))
    store.put_ranking(chosen, ranking)
    return RunAnalysis(run=chosen, ranking=ranking)


def _since(run: str, merged: Ranking, store: RunStore, now: datetime) -> SinceLastTime:
    """What changed since the previous run; before a previous run was ranked, only the trend's first point."""
    groups = merged.teams.groups
    point = TrendPoint(
        run, sum((g.waste for g in groups), Decimal(0)), sum((g.net_savings for g in groups), Decimal(0))
    )
    earlier = [p for p in store.trend(TREND_RUNS) if p.run < run]
    store.put_trend_point(point, now)
    trend = [*earlier[: TREND_RUNS - 1], point]
    if not earlier:  # the first run: nothing to compare with
        return with_trend(SinceLastTime(), trend, "")
    since = merged.since
    for moved in store.moves(run):
        since = since.merged(moved)
    resolved = []
    for change in since.resolved:
        approval = store.approval(change.recommendation_id)
        done = approval is not None and approval.status is ApprovalStatus.SUCCEEDED
        resolved.append(resolved_by(change, approval.approver if done and approval is not None else None))
    return with_trend(replace(since, resolved=tuple(resolved)), trend, earlier[0].run)


def _failure_text(failure: Mapping[str, str]) -> str:
    where = f"account {failure.get('account_id', '?')} in {failure.get('region', '?')}"
    shard = failure.get("shard", "")
    part = "not planned" if shard == "plan" else f"shard {shard} not collected"
    return f"{where}: {part} ({failure.get('error', 'error')}: {failure.get('cause', '')[:200]})"
