"""One region's readers: the adapters behind the collection's ports (services/collect.py), for the pipeline's plan
(bootstrap/pipeline.py) and the CLI's live analysis (cli/wiring.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rightsizer.adapters import bundled
from rightsizer.adapters.aws.cloudtrail import CloudTrailResizes
from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
from rightsizer.adapters.aws.commitments import Ec2Commitments
from rightsizer.adapters.aws.ec2 import Ec2Fleet
from rightsizer.adapters.aws.pricing import PriceListApi
from rightsizer.adapters.aws.sagemaker import SageMakerInventory, SageMakerMetrics
from rightsizer.adapters.aws.sagemaker_pricing import SageMakerPriceListApi
from rightsizer.adapters.aws.session import AwsSession
from rightsizer.services.collect import Reference, RegionSources
from rightsizer.services.ports import OnDemandPrices, Progress
from rightsizer.services.sagemaker import SageMakerSources
from rightsizer.settings import PriceMode, Settings

# The Price List API is served from a few regions only; it answers for every region.
PRICING_ENDPOINT_REGION = "us-east-1"


def reference() -> Reference:
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


def pricing_client(session: AwsSession, settings: Settings) -> Any | None:
    """The Price List API's client for the settings' price mode; None in snapshot mode (the bundled prices only)."""
    if settings.price_mode is PriceMode.SNAPSHOT:
        return None
    return session.client("pricing", PRICING_ENDPOINT_REGION, quick=settings.price_mode is PriceMode.AUTO)


def price_list_api(session: AwsSession, settings: Settings) -> PriceListApi | None:
    client = pricing_client(session, settings)
    return PriceListApi(client) if client is not None else None


def region_readers(
    session: AwsSession,
    account_id: str,
    region: str,
    settings: Settings,
    progress: Progress | None = None,
    on_demand: OnDemandPrices | None = None,
) -> RegionReaders:
    """The adapters for one region. `on_demand` replaces the Price List API (Lambdas use the cache)."""
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
    prices = pricing_client(session, settings)
    return SageMakerSources(
        inventory=SageMakerInventory(
            session.client("sagemaker", region),
            account_id,
            region,
            session.client("application-autoscaling", region, quick=True),
        ),
        metrics=SageMakerMetrics(session.client("cloudwatch", region)),
        prices=SageMakerPriceListApi(prices) if prices is not None else None,
    )
