"""Composition root: wires settings to services and AWS adapters. Used by the CLI and the Lambdas."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from rightsizer.adapters import bundled
from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
from rightsizer.adapters.aws.ec2 import Ec2Fleet
from rightsizer.adapters.aws.pricing import PriceListApi
from rightsizer.adapters.aws.session import AwsSession
from rightsizer.services.analyze import analyze_regions
from rightsizer.services.collect import Reference, RegionData, RegionSources, collect_region
from rightsizer.services.ports import Progress
from rightsizer.services.report import FleetReport, build_report
from rightsizer.settings import PriceMode, Settings

# The Price List API is served from a few regions only; it answers for every region.
PRICING_ENDPOINT_REGION = "us-east-1"


class RegionFailure(Exception):
    """Collection of one region failed; carries the region for the error message."""

    def __init__(self, region: str, error: BaseException) -> None:
        super().__init__(f"{region}: {error}")
        self.region = region
        self.error = error


def reference() -> Reference:
    return Reference(
        accelerators=bundled.accelerator_table(),
        legacy_specs=bundled.legacy_specs(),
        snapshot=bundled.snapshot_prices,
    )


@dataclass
class RegionReaders:
    """The adapters behind one region's ports, kept so callers can read their call counters."""

    fleet: Ec2Fleet
    usage: CloudWatchUsage
    prices: PriceListApi | None

    @property
    def sources(self) -> RegionSources:
        return RegionSources(
            inventory=self.fleet,
            instance_types=self.fleet,
            spot=self.fleet,
            usage=self.usage,
            on_demand=self.prices,
        )


def region_readers(
    session: AwsSession, account_id: str, region: str, settings: Settings, progress: Progress | None = None
) -> RegionReaders:
    prices = None
    if settings.price_mode is not PriceMode.SNAPSHOT:
        quick = settings.price_mode is PriceMode.AUTO
        prices = PriceListApi(session.client("pricing", PRICING_ENDPOINT_REGION, quick=quick))
    return RegionReaders(
        fleet=Ec2Fleet(session.client("ec2", region), account_id, region, bundled.accelerator_table()),
        usage=CloudWatchUsage(session.client("cloudwatch", region), settings.metrics, progress),
        prices=prices,
    )


def collect(
    session: AwsSession,
    region: str,
    settings: Settings,
    now: datetime,
    progress: Progress | None = None,
) -> RegionData:
    try:
        account_id = session.account_id(region)
        readers = region_readers(session, account_id, region, settings, progress)
        return collect_region(
            account_id,
            region,
            readers.sources,
            reference(),
            settings.price_mode,
            now,
            settings.lookback_days,
            progress,
        )
    except Exception as error:
        raise RegionFailure(region, error) from error


def analyze(
    session: AwsSession,
    regions: Sequence[str],
    settings: Settings,
    now: datetime,
    progress: Progress | None = None,
) -> FleetReport:
    """The CLI pipeline: collect every region in turn, analyse, rank."""
    collected = [collect(session, region, settings, now, progress) for region in regions]
    recommendations = analyze_regions(collected, settings.policy, now)
    warnings = [warning for data in collected for warning in data.warnings]
    return build_report(recommendations, now, settings.lookback_days, warnings)
