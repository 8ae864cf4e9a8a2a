"""Use-case: SageMaker GPU spend of one (account, region): collect the endpoint variants, notebook instances and
training jobs, their CloudWatch series and SageMaker's own prices, then analyse them (domain/sagemaker/).

SageMaker resources are few per region (tens, where EC2 hosts may be thousands): the CLI reads them with the
region's EC2 hosts, the pipeline in one task of their own per region beside the EC2 shards. A source that cannot be
read (no permission, no SageMaker in the region, an emulator without it) is a warning and the rest still counts;
nothing is judged on a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Protocol, TypeVar

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.domain.sagemaker.advice import SageMakerPriceBook
from rightsizer.domain.sagemaker.fleet import SageMakerResources, SageMakerUsage, analyze_sagemaker
from rightsizer.domain.sagemaker.prices import SAGEMAKER_COMPONENTS, SageMakerComponent, SageMakerPrices
from rightsizer.domain.sagemaker.usage import (
    NotebookSeries,
    TrainingSeries,
    VariantSeries,
    summarize_notebook,
    summarize_training,
    summarize_variant,
)
from rightsizer.domain.sagemaker_models import EndpointVariant, NotebookInstance, TrainingFamily, ec2_type
from rightsizer.services.ports import SourceUnavailable, Window
from rightsizer.settings import PriceMode

T = TypeVar("T")


class SageMakerInventory(Protocol):
    """The region's SageMaker resources on accelerated `ml.*` types. Each method raises SourceUnavailable;
    `warnings` says what optional reads missed (inference components, scaling limits) and what was skipped."""

    warnings: list[str]

    def endpoint_variants(self) -> list[EndpointVariant]: ...
    def notebooks(self) -> list[NotebookInstance]: ...
    def training_families(self, start: datetime, end: datetime) -> list[TrainingFamily]: ...


class SageMakerMetrics(Protocol):
    """Their CloudWatch series. Each method raises SourceUnavailable; `warnings`: incomplete answers."""

    warnings: list[str]

    def variant_series(self, variants: Sequence[EndpointVariant], window: Window) -> dict[str, VariantSeries]: ...
    def notebook_series(self, notebooks: Sequence[NotebookInstance], window: Window) -> dict[str, NotebookSeries]: ...
    def training_series(self, families: Sequence[TrainingFamily], window: Window) -> dict[str, TrainingSeries]: ...


class SageMakerPriceSource(Protocol):
    source: str

    def hourly(
        self, region: str, instance_types: Sequence[str], component: SageMakerComponent = "hosting"
    ) -> Mapping[str, object]: ...


@dataclass(frozen=True)
class SageMakerSources:
    inventory: SageMakerInventory
    metrics: SageMakerMetrics
    prices: SageMakerPriceSource | None = None  # None: the bundled snapshot only


@dataclass(frozen=True)
class SageMakerData:
    """What the analyzer needs about one region's SageMaker resources: them, their prices and their summaries."""

    account_id: str
    region: str
    resources: SageMakerResources = field(default_factory=SageMakerResources)
    usage: SageMakerUsage = field(default_factory=SageMakerUsage)
    warnings: tuple[str, ...] = ()


Snapshot = Callable[[str, SageMakerComponent], SageMakerPrices | None]


def collect_sagemaker(
    account_id: str,
    region: str,
    sources: SageMakerSources,
    catalog: Catalog,
    window: Window,
    price_mode: PriceMode,
    snapshot: Snapshot,
) -> SageMakerData:
    """The region's SageMaker resources, summarised. Each source that cannot be read is a warning."""
    warnings: list[str] = []

    def attempt(what: str, read: Callable[[], T]) -> T | None:
        return _attempt(f"{region}: SageMaker {what}", read, warnings)

    variants = tuple(attempt("endpoints", sources.inventory.endpoint_variants) or [])
    notebooks = tuple(attempt("notebook instances", sources.inventory.notebooks) or [])
    families = tuple(
        attempt("training jobs", lambda: sources.inventory.training_families(window.start, window.end)) or []
    )
    if not (variants or notebooks or families):
        return SageMakerData(account_id, region, warnings=tuple(warnings))
    variant_series = attempt("endpoint metrics", lambda: sources.metrics.variant_series(variants, window)) or {}
    notebook_series = attempt("notebook metrics", lambda: sources.metrics.notebook_series(notebooks, window)) or {}
    training_series = attempt("training metrics", lambda: sources.metrics.training_series(families, window)) or {}
    types = sorted(
        {
            *(v.instance_type for v in variants),
            *(n.instance_type for n in notebooks),
            *(f.instance_type for f in families),
        }
    )
    prices = sagemaker_prices(region, types, sources.prices, price_mode, snapshot, warnings)
    warnings.extend(f"{region}: SageMaker: {text}" for text in (*sources.inventory.warnings, *sources.metrics.warnings))
    usage = SageMakerUsage(
        variants={
            variant.resource_id: summarize_variant(
                variant_series[variant.resource_id], *_units(catalog, variant.instance_type)
            )
            for variant in variants
            if variant.resource_id in variant_series
        },
        notebooks={key: summarize_notebook(raw) for key, raw in notebook_series.items()},
        training={
            family.resource_id: summarize_training(
                training_series[family.resource_id], _units(catalog, family.instance_type)[0]
            )
            for family in families
            if family.resource_id in training_series
        },
    )
    return SageMakerData(
        account_id, region, SageMakerResources(variants, notebooks, families, prices), usage, tuple(warnings)
    )


def _attempt(what: str, read: Callable[[], T], warnings: list[str]) -> T | None:
    """What `read` returns, or None (and a warning) when its source cannot be read."""
    try:
        return read()
    except SourceUnavailable as error:
        warnings.append(f"{what} could not be read ({error})")
        return None


def _units(catalog: Catalog, ml_type: str) -> tuple[int, int]:
    """(GPUs or Neuron devices, vCPUs) of the EC2 type an `ml.*` type runs on: what SageMaker's summed
    utilisations are divided by. A type the catalog does not know divides by 1: its figures stay as published."""
    spec = catalog.spec(ec2_type(ml_type))
    return (max(1, spec.accelerator_count), max(1, spec.vcpus)) if spec is not None else (1, 1)


def sagemaker_prices(
    region: str,
    instance_types: Sequence[str],
    api: SageMakerPriceSource | None,
    mode: PriceMode,
    snapshot: Snapshot,
    warnings: list[str],
) -> SageMakerPriceBook:
    """SageMaker's own prices per component: the Price List API's (service AmazonSageMaker) where the mode allows,
    the bundled snapshot for what it cannot answer in auto mode; never EC2's prices."""
    found: dict[SageMakerComponent, SageMakerPrices | None] = {}
    reachable = api is not None and mode is not PriceMode.SNAPSHOT
    for component in SAGEMAKER_COMPONENTS:
        bundled = snapshot(region, component)
        live: Mapping[str, object] = {}
        if reachable and api is not None:
            try:
                live = api.hourly(region, instance_types, component)
            except SourceUnavailable as error:
                if mode is PriceMode.API:
                    raise
                reachable = False  # one cause: the other components are not asked again
                warnings.append(f"{region}: SageMaker prices: {error}; the bundled SageMaker snapshot is used")
        if live:
            hourly = {t: Decimal(str(p)) for t, p in live.items()}
            merged = {**(bundled.hourly if bundled and mode is PriceMode.AUTO else {}), **hourly}
            sources = {t: api.source for t in hourly} if api is not None else {}
            found[component] = SageMakerPrices(
                region,
                component,
                merged,
                api.source if api is not None else "",
                {**(bundled.sources if bundled else {}), **sources},
            )
        else:
            found[component] = bundled
    return SageMakerPriceBook(region, hosting=found["hosting"], notebook=found["notebook"], training=found["training"])


def analyze_region_sagemaker(
    data: SageMakerData, catalog: Catalog, policy: Policy, now: datetime
) -> list[Recommendation]:
    """One recommendation per endpoint variant, notebook instance and recurring training run of the region."""
    return analyze_sagemaker(data.resources, data.usage, catalog, policy, now) if len(data.resources) else []
