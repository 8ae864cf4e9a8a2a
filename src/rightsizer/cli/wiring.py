"""The CLI's composition: its live analysis (services/live_analysis.py) wired to AWS. Each region is read through the
adapters the pipeline's Lambdas use too (bootstrap/regions.py) and analysed as its usage arrives; the enabled regions
are probed through one EC2 reader each."""

from __future__ import annotations

import gc
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import datetime

from rightsizer.adapters import bundled
from rightsizer.adapters.aws.ec2 import Ec2Fleet
from rightsizer.adapters.aws.session import AwsSession, describe_aws_error
from rightsizer.bootstrap.regions import reference, region_readers
from rightsizer.services import live_analysis
from rightsizer.services.analyze import RegionAdvice, analyze_region
from rightsizer.services.live_analysis import RegionFailure
from rightsizer.services.ports import AdviceStore, Progress, SourceUnavailable, UsageSource
from rightsizer.services.report import FleetReport
from rightsizer.settings import Settings

# Wraps a region's usage reader, e.g. to keep what passes through (adapters/html/series.UnitSeriesTap).
UsageTap = Callable[[UsageSource], UsageSource]


def analyze(
    session: AwsSession,
    regions: Sequence[str],
    settings: Settings,
    now: datetime,
    progress: Progress | None = None,
    usage_tap: UsageTap | None = None,
    store: AdviceStore | None = None,
) -> FleetReport:
    """Every (account, region) in turn, each analysed as its usage arrives, then ranked together. With a `store`, the
    advice is kept there, and the report holds none of it (services/report.py's `ranked_head` makes it the head of
    `store.ranked()`). RegionFailure when nothing at all can be read."""

    def analyse(reach: AwsSession, region: str) -> RegionAdvice:
        return analyze_one(reach, region, settings, now, progress, usage_tap=usage_tap, store=store)

    return live_analysis.analyze_fleet(
        session,
        regions,
        settings.account_role_arns,
        settings.role_session_name,
        analyse,
        describe_failure,
        now,
        settings.lookback_days,
        progress,
    )


def analyze_one(
    session: AwsSession,
    region: str,
    settings: Settings,
    now: datetime,
    progress: Progress | None = None,
    usage_tap: UsageTap | None = None,
    store: AdviceStore | None = None,
) -> RegionAdvice:
    """One region read and analysed as its usage arrives. `usage_tap` wraps the CloudWatch reader (the CLI keeps the
    page's per-GPU series); `store` keeps the advice instead of the region's `recommendations`."""
    account_id = session.account_id(region)
    readers = region_readers(session, account_id, region, settings, progress)
    # What is alive now lives for the whole run: the modules, and the AWS service models the clients loaded (about
    # half a million objects). Frozen, the collector no longer walks them at each full collection while millions
    # of datapoints are read (a second of CPU at 2,000 hosts). Collected first: a frozen object is never freed,
    # and the cyclic garbage the region before left (botocore's responses) would otherwise stay for the run.
    gc.collect()
    gc.freeze()
    sources = readers.sources if usage_tap is None else replace(readers.sources, usage=usage_tap(readers.usage))
    return analyze_region(
        account_id,
        region,
        sources,
        reference(),
        settings.price_mode,
        now,
        settings.lookback_days,
        settings.policy,
        progress,
        store,
    )


def describe_failure(error: BaseException, region: str | None) -> str:
    """One line for a failed region or account: our own sources say it themselves, AWS errors are described."""
    return str(error) if isinstance(error, SourceUnavailable) else describe_aws_error(error, region)


def regions_with_accelerated_hosts(
    session: AwsSession, probe_region: str, progress: Progress | None = None
) -> tuple[list[str], list[str]]:
    """`--all-regions`: the enabled regions that run at least one GPU / Neuron host, and warnings for those
    that could not be checked."""
    fleets = _region_fleets(session, probe_region)
    return live_analysis.regions_with_accelerated_hosts(fleets, describe_failure, progress)


def regions_holding(session: AwsSession, probe_region: str, query: str, analysed: Collection[str]) -> list[str]:
    """The enabled regions other than `analysed` where an instance has the id or Name tag `query`."""
    return live_analysis.regions_holding(_region_fleets(session, probe_region), query, analysed)


def _region_fleets(session: AwsSession, probe_region: str) -> dict[str, Ec2Fleet]:
    """A reader of each region enabled for the account (DescribeRegions, asked in `probe_region`)."""
    try:
        described = session.client("ec2", probe_region).describe_regions()["Regions"]
    except Exception as error:
        raise RegionFailure(probe_region, error) from error
    table = bundled.accelerator_table()
    enabled = sorted(str(region["RegionName"]) for region in described)
    return {region: Ec2Fleet(session.client("ec2", region), "", region, table) for region in enabled}
