"""Use-case: collect one (account, region): inventory, catalog, prices and usage summaries."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from rightsizer.domain.catalog import AcceleratorTable, Catalog
from rightsizer.domain.commitments import Commitments
from rightsizer.domain.models import Instance, InstanceTypeSpec, UsageSummary
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.usage import summarize
from rightsizer.services.ports import (
    CommitmentSource,
    InstanceTypes,
    Inventory,
    NullProgress,
    OnDemandPrices,
    Progress,
    SourceUnavailable,
    SpotPrices,
    UsageSource,
    Window,
)
from rightsizer.settings import PriceMode

T = TypeVar("T")


@dataclass(frozen=True)
class RegionData:
    """Everything the analyzer needs about one region of one account, at one point in time."""

    account_id: str
    region: str
    collected_at: datetime
    window: Window
    instances: tuple[Instance, ...]
    catalog: Catalog
    prices: PriceBook
    usage: Mapping[str, UsageSummary]
    warnings: tuple[str, ...] = ()
    commitments: Commitments = field(default_factory=Commitments)  # reservations and plans: net savings


@dataclass(frozen=True)
class RegionSources:
    """The ports one region is read through."""

    inventory: Inventory
    instance_types: InstanceTypes
    spot: SpotPrices
    usage: UsageSource
    on_demand: OnDemandPrices | None = None  # None: snapshot only
    commitments: CommitmentSource | None = None  # None: savings at list price only


@dataclass(frozen=True)
class Reference:
    """Bundled data: accelerator figures, legacy specs and the price snapshot lookup."""

    accelerators: AcceleratorTable
    legacy_specs: Mapping[str, InstanceTypeSpec]
    snapshot: Callable[[str], PriceBook | None]


def lookback_window(now: datetime, days: int) -> Window:
    """Whole hours, so two runs in the same hour ask CloudWatch the same question."""
    end = now.replace(minute=0, second=0, microsecond=0)
    return Window(start=end - timedelta(days=days), end=end)


def build_catalog(
    region: str,
    api_specs: list[InstanceTypeSpec],
    legacy: Mapping[str, InstanceTypeSpec],
    accelerators: AcceleratorTable,
    offered: frozenset[str] | None,
) -> Catalog:
    specs = dict(legacy)
    specs.update({spec.instance_type: spec for spec in api_specs})  # the API wins where both know a type
    return Catalog(region=region, specs=specs, accelerators=accelerators, offered=offered)


def resolve_prices(
    region: str,
    mode: PriceMode,
    api: OnDemandPrices | None,
    snapshot: PriceBook | None,
    instance_types: list[str],
) -> tuple[PriceBook, list[str]]:
    """On-demand prices per the mode; in auto mode the snapshot fills what the API cannot answer."""
    warnings: list[str] = []
    if mode is PriceMode.SNAPSHOT or api is None:
        if snapshot is None:
            warnings.append(f"no bundled prices for {region}: costs and savings are unknown (use --prices api)")
            return PriceBook(region, {}, "no prices"), warnings
        return snapshot, warnings
    try:
        live = api.hourly(region, instance_types)
    except SourceUnavailable as error:
        if mode is PriceMode.API:
            raise
        if snapshot is None:
            warnings.append(f"{error}; no bundled prices for {region} either: costs and savings are unknown")
            return PriceBook(region, {}, "no prices"), warnings
        warnings.append(f"{error}; using the {snapshot.source} for {region}")
        return snapshot, warnings
    if mode is PriceMode.AUTO and snapshot is not None:
        missing = {t: p for t, p in snapshot.on_demand.items() if t not in live}
        if missing:
            warnings.append(f"{len(missing)} types had no Price List API price in {region}: {snapshot.source} used")
            return PriceBook(region, {**missing, **live}, f"{api.source} + {snapshot.source}"), warnings
    return PriceBook(region, live, api.source), warnings


def collect_region(
    account_id: str,
    region: str,
    sources: RegionSources,
    reference: Reference,
    price_mode: PriceMode,
    now: datetime,
    lookback_days: int,
    progress: Progress | None = None,
) -> RegionData:
    progress = progress or NullProgress()
    progress.stage(f"{region}: inventory", 4)
    instances = sources.inventory.accelerated_instances()
    progress.advance()
    api_specs = sources.instance_types.accelerated_specs()
    progress.advance()
    known_types = sorted({*reference.legacy_specs, *(s.instance_type for s in api_specs)})
    offered = sources.instance_types.offered_types(known_types)
    catalog = build_catalog(region, api_specs, reference.legacy_specs, reference.accelerators, offered)
    progress.advance()

    book, warnings = resolve_prices(region, price_mode, sources.on_demand, reference.snapshot(region), known_types)
    spot_types = sorted({i.instance_type for i in instances if i.lifecycle == "spot"})
    spot = sources.spot.latest(spot_types, now) if spot_types else {}
    prices = PriceBook(region=region, on_demand=book.on_demand, source=book.source, spot=spot)
    progress.advance()

    commitments = Commitments()
    if sources.commitments is not None:
        commitments, unread = read_commitments(sources.commitments, known_types)
        warnings.extend(f"{region}: {message}" for message in unread)

    window = lookback_window(now, lookback_days)
    raw = sources.usage.fetch(instances, catalog.specs, window)
    usage = {instance_id: summarize(series) for instance_id, series in raw.items()}
    warnings.extend(f"{region}: {message}" for message in sources.usage.warnings)
    return RegionData(
        account_id=account_id,
        region=region,
        collected_at=now,
        window=window,
        instances=tuple(instances),
        catalog=catalog,
        prices=prices,
        usage=usage,
        warnings=tuple(warnings),
        commitments=commitments,
    )


def read_commitments(source: CommitmentSource, instance_types: list[str]) -> tuple[Commitments, list[str]]:
    """Reservations and plans, each read on its own: one that cannot be read is a warning, and savings the others
    price still count (what could not be read is priced at list)."""
    warnings: list[str] = []

    def attempt(what: str, read: Callable[[], tuple[T, ...]]) -> tuple[T, ...]:
        try:
            return read()
        except SourceUnavailable as error:
            warnings.append(f"{what} could not be read ({error}): savings they cover are shown at list price")
            return ()

    commitments = Commitments(
        reserved_instances=attempt("Reserved Instances", source.reserved_instances),
        capacity_reservations=attempt("capacity reservations", source.capacity_reservations),
        savings_plans=attempt("Savings Plans", lambda: source.savings_plans(instance_types)),
        read=True,
    )
    return commitments, warnings
