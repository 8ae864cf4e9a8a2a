"""Composition root: wires settings to services and AWS adapters. Used by the CLI and the Lambdas."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from rightsizer.adapters import bundled
from rightsizer.adapters.aws.session import AwsSession
from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.services.approvals import ApprovalStore
from rightsizer.services.ports import (
    OnDemandPrices,
    Progress,
    ResizeWorkflow,
)
from rightsizer.services.report import FleetReport, report_json
from rightsizer.settings import ConfigError, PriceMode, Settings

# The collectors, the analyzer and numpy are imported by the functions that use them: the Slack and notifier
# functions take their wiring from here too, and their cold start must not pay for the pipeline's imports.
if TYPE_CHECKING:
    from rightsizer.adapters.aws.cloudtrail import CloudTrailResizes
    from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
    from rightsizer.adapters.aws.commitments import Ec2Commitments
    from rightsizer.adapters.aws.ec2 import Ec2Fleet
    from rightsizer.adapters.aws.pricing import PriceListApi
    from rightsizer.adapters.slack.poster import Picture
    from rightsizer.services.collect import Reference, RegionSources
    from rightsizer.services.daily_report import PagePublisher, ReportPoster
    from rightsizer.services.pipeline import Mode, RunStart, ShardTask, Target
    from rightsizer.services.sagemaker import SageMakerSources

# The Price List API is served from a few regions only; it answers for every region.
PRICING_ENDPOINT_REGION = "us-east-1"


def reference() -> Reference:
    from rightsizer.services.collect import Reference

    return Reference(
        accelerators=bundled.accelerator_table(),
        legacy_specs=bundled.legacy_specs(),
        snapshot=bundled.snapshot_prices,
        sagemaker_snapshot=bundled.sagemaker_snapshot_prices,
    )


@dataclass
class RegionReaders:
    """The adapters behind one region's ports, kept so callers can read their call counters."""

    fleet: Ec2Fleet
    usage: CloudWatchUsage
    prices: OnDemandPrices | None
    commitments: Ec2Commitments | None = None
    resizes: CloudTrailResizes | None = None
    sagemaker: SageMakerSources | None = None

    @property
    def sources(self) -> RegionSources:
        from rightsizer.services.collect import RegionSources

        return RegionSources(
            inventory=self.fleet,
            instance_types=self.fleet,
            spot=self.fleet,
            usage=self.usage,
            on_demand=self.prices,
            commitments=self.commitments,
            resizes=self.resizes,
            sagemaker=self.sagemaker,
        )


def price_list_api(session: AwsSession, settings: Settings) -> PriceListApi | None:
    from rightsizer.adapters.aws.pricing import PriceListApi

    if settings.price_mode is PriceMode.SNAPSHOT:
        return None
    quick = settings.price_mode is PriceMode.AUTO
    return PriceListApi(session.client("pricing", PRICING_ENDPOINT_REGION, quick=quick))


def region_readers(
    session: AwsSession,
    account_id: str,
    region: str,
    settings: Settings,
    progress: Progress | None = None,
    on_demand: OnDemandPrices | None = None,
) -> RegionReaders:
    """The adapters for one region. `on_demand` replaces the Price List API (Lambdas use the cache)."""
    from rightsizer.adapters.aws.cloudtrail import CloudTrailResizes
    from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
    from rightsizer.adapters.aws.commitments import Ec2Commitments
    from rightsizer.adapters.aws.ec2 import Ec2Fleet

    ec2 = session.client("ec2", region)
    return RegionReaders(
        fleet=Ec2Fleet(ec2, account_id, region, bundled.accelerator_table()),
        usage=CloudWatchUsage(session.client("cloudwatch", region, metric_arrays=True), settings.metrics, progress),
        prices=on_demand if on_demand is not None else price_list_api(session, settings),
        # Savings Plans is a global service answered in us-east-1, like the Price List API's home.
        commitments=Ec2Commitments(ec2, session.client("savingsplans", PRICING_ENDPOINT_REGION, quick=True), region),
        resizes=CloudTrailResizes(session.client("cloudtrail", region, quick=True), region),
        sagemaker=sagemaker_sources(session, account_id, region, settings) if settings.sagemaker else None,
    )


def sagemaker_sources(session: AwsSession, account_id: str, region: str, settings: Settings) -> SageMakerSources:
    """SageMaker's inventory, metrics and prices for one region (services/sagemaker.py)."""
    from rightsizer.adapters.aws.sagemaker import SageMakerInventory, SageMakerMetrics
    from rightsizer.adapters.aws.sagemaker_pricing import SageMakerPriceListApi
    from rightsizer.services.sagemaker import SageMakerSources

    prices = None
    if settings.price_mode is not PriceMode.SNAPSHOT:
        quick = settings.price_mode is PriceMode.AUTO
        prices = SageMakerPriceListApi(session.client("pricing", PRICING_ENDPOINT_REGION, quick=quick))
    return SageMakerSources(
        inventory=SageMakerInventory(
            session.client("sagemaker", region),
            account_id,
            region,
            session.client("application-autoscaling", region, quick=True),
        ),
        metrics=SageMakerMetrics(session.client("cloudwatch", region)),
        prices=prices,
    )


# ---------------------------------------------------------------------------------------------
# The scheduled Lambdas (handlers stay thin: they call one of these).


def store(session: AwsSession, settings: Settings) -> DynamoStore:
    if not settings.table_name:
        raise ConfigError("TABLE_NAME is not set")
    return DynamoStore.from_name(session.boto3_session, settings.table_name, settings.home_region)


class Wiring:
    """What one Lambda container builds once and reuses while warm: settings, the AWS session, the store."""

    def __init__(self, settings: Settings, session: AwsSession) -> None:
        self.settings = settings
        self.session = session
        self._store: DynamoStore | None = None

    @property
    def store(self) -> DynamoStore:
        if self._store is None:
            self._store = store(self.session, self.settings)
        return self._store


@cache
def lambda_wiring() -> Wiring:
    """The container's wiring, from its environment (template.yaml). Tests and the demo, which change the
    environment between stacks, call `lambda_wiring.cache_clear()`."""
    return Wiring(Settings.from_env(), AwsSession())


def slack_web_client(secret_name: str, api_url: str) -> Any:
    """A slack_sdk WebClient with the bot token from Secrets Manager (read on first use, cached by Powertools)."""
    from rightsizer.adapters.slack.client import web_client
    from rightsizer.adapters.slack.secrets import slack_credentials

    return web_client(slack_credentials(secret_name).bot_token, api_url)


def slack_entry(wiring: Wiring, credentials: Any, lambda_client: Any, lambda_context: Callable[[], Any]) -> Any:
    """The Slack function's entry (a `LambdaEntry` around the Bolt app) for these credentials: the table, the
    bot's client, the resize workflow (built on first approval) and the client that runs lazy listeners."""
    from rightsizer.adapters.slack.app import LambdaEntry, build_app
    from rightsizer.adapters.slack.client import web_client

    settings = wiring.settings
    client = web_client(credentials.bot_token, settings.slack.api_url)
    workflow = step_functions_workflow(settings, wiring.store, wiring.session.boto3_session, lambda_context)
    app = build_app(
        settings,
        client=client,
        store=wiring.store,
        workflow_factory=workflow,
        signing_secret=credentials.signing_secret,
    )
    return LambdaEntry(app, signing_secret=credentials.signing_secret, lambda_client=lambda_client)


def step_functions_workflow(
    settings: Settings, store: ApprovalStore, session: Any, lambda_context: Callable[[], Any]
) -> Callable[[], ResizeWorkflow]:
    """The Slack app's ResizeWorkflow, built on first use (an approval, in a lazy listener): the Step Functions
    adapter and its client stay off the acknowledgement's cold start."""

    def expected_state(recommendation_id: str) -> str | None:
        # The workflow refuses a host that left the state the recommendation saw (e.g. stopped meanwhile).
        rec = store.recommendation(recommendation_id)
        return rec.state if rec is not None else None

    def factory() -> ResizeWorkflow:
        from rightsizer.adapters.aws.workflow import StepFunctionsResizeWorkflow

        if not settings.resize_state_machine_arn:
            raise RuntimeError("RESIZE_STATE_MACHINE_ARN is not set")

        def client_for(region: str) -> Any:  # the instance workflow of another action region
            return session.client("stepfunctions", region_name=region)

        # Two guards: the approval's conditional write elects a single starter, and Powertools idempotency
        # (records in our table) plus the deterministic execution name make a retried start a no-op.
        workflow = StepFunctionsResizeWorkflow.from_settings(
            settings, client_for(settings.home_region), expected_state_of=expected_state, client_for=client_for
        )
        # Lets Powertools expire an in-progress idempotency record if this invocation times out.
        workflow.register_lambda_context(lambda_context())
        return workflow

    return factory


def start_pipeline(wiring: Wiring, now: datetime, mode: Mode | None = None) -> RunStart:
    """The day's pipeline start (services/pipeline.start_run): targets from the settings and Organizations, the
    plan in the stack's bucket, the execution in Step Functions."""
    from rightsizer.adapters.aws.accounts import active_accounts
    from rightsizer.adapters.aws.pipeline import S3PlanBucket, StepFunctionsPipeline
    from rightsizer.services.pipeline import Mode, plan_targets, start_run

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
    from rightsizer.adapters.aws.price_cache import CachedPrices
    from rightsizer.domain.models import Instance
    from rightsizer.services.collect import RegionContext, region_context
    from rightsizer.services.pipeline import Mode, Target, plan_target, run_name

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
    from botocore.exceptions import BotoCoreError, ClientError

    from rightsizer.adapters.aws.scheduler import SchedulerPairs
    from rightsizer.services.schedule_registry import describe, reconcile_schedules

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
    from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
    from rightsizer.adapters.aws.ec2 import Ec2Fleet
    from rightsizer.services.collect import RegionContext
    from rightsizer.services.pipeline import Part, ShardTask, collect_shard

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
    from rightsizer.services.collect import RegionContext
    from rightsizer.services.pipeline import collect_sagemaker_part
    from rightsizer.services.sagemaker import SageMakerData, collect_sagemaker

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
    from rightsizer.services.pipeline import Mode, ShardTask, analyze_shard, rank_run

    settings = wiring.settings
    scope = settings.report_scope
    if payload.get("action") == "rank":
        return rank_run(payload.get("run") or None, wiring.store, scope, now).summary()
    if "shard" in payload:
        return analyze_shard(ShardTask.from_dict(payload), wiring.store, settings.policy, now, scope)
    return start_pipeline(wiring, now, Mode.ANALYZE).summary()


def report_payload(wiring: Wiring, payload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The report function's use-case (services/daily_report.py) with its adapters: the Slack poster when a channel and
    the secret are configured, the page in the stack's bucket when there is one."""
    from rightsizer.services.daily_report import daily_report

    settings = wiring.settings
    slack = settings.slack

    def slack_poster() -> ReportPoster:
        from rightsizer.adapters.slack.poster import SlackReportPoster

        return SlackReportPoster(
            slack_web_client(slack.secret_name, slack.api_url),
            slack.channel,
            slack.top_n,
            scope=settings.report_scope,
            ledger=wiring.store,
            picture_of=savings_picture,
        )

    poster = slack_poster if slack.channel and slack.secret_name else None
    return daily_report(wiring.store, settings, payload, now, poster=poster, publisher=page_publisher(wiring))


def page_publisher(wiring: Wiring) -> PagePublisher | None:
    """The report's page in the stack's bucket (its presigned link), drawn by adapters/html; None without a bucket."""
    from rightsizer.adapters.aws.report_pages import PRESIGN_CONFIG, S3PagePublisher

    settings = wiring.settings
    if not settings.plan_bucket:
        return None

    def render(report: FleetReport) -> str:
        from rightsizer.adapters.html import page  # jinja2: only for a report that is posted

        return page.render_report(report, policy=settings.policy, source="the daily report of GPU Rightsizer")

    return S3PagePublisher(
        lambda: wiring.session.client("s3", settings.home_region, extra=PRESIGN_CONFIG), settings.plan_bucket, render
    )


def savings_picture(report: FleetReport) -> Picture | None:
    """The savings chart for the report's Slack thread (adapters/html/png), with its alt text; None without savings."""
    from rightsizer.adapters.html import png
    from rightsizer.adapters.slack.poster import Picture

    document = report_json(report)
    chart = png.savings_png(document["recommendations"])
    return Picture(chart, png.alt_text(document)) if chart is not None else None


def refresh_prices(wiring: Wiring, now: datetime) -> dict[str, Any]:
    """Weekly: the price refresh (services/prices.py) over the Price List API, each region's EC2 and the table."""
    from rightsizer.adapters.aws.ec2 import Ec2Fleet
    from rightsizer.adapters.aws.pricing import PriceListApi
    from rightsizer.services import prices

    session, settings = wiring.session, wiring.settings
    api = PriceListApi(session.client("pricing", PRICING_ENDPOINT_REGION))
    account_id = session.account_id(settings.home_region)

    def accelerated_types(region: str) -> set[str]:
        fleet = Ec2Fleet(session.client("ec2", region), account_id, region, bundled.accelerator_table())
        return {spec.instance_type for spec in fleet.accelerated_specs()} | set(bundled.legacy_specs())

    cached = prices.refresh_prices(settings.regions, accelerated_types, api, wiring.store, now)
    return {"regions": cached, "get_products_calls": api.calls}
