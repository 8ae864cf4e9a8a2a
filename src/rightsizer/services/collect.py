"""Use-case: collect one (account, region): inventory, catalog, prices and usage summaries.

The CLI reads a region in one go (`read_region`: inventory and context; then `usage_summaries` as they arrive, which
services/analyze.py analyses host by host). The serverless pipeline splits it: a plan step reads the inventory and the
region's context (catalog, prices, window) once and cuts the instances into shards (`shard_instances`); each shard then
reads and summarises the usage of its own instances (`summarise_usage`), so that no invocation's time or memory grows
with the region.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from itertools import groupby
from typing import TYPE_CHECKING, TypeVar

from rightsizer.domain.catalog import AcceleratorTable, Catalog
from rightsizer.domain.commitments import Commitments, CoverRef
from rightsizer.domain.guards import Gap, Source
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import Resize, UsageSummary
from rightsizer.domain.platforms import LINUX, Billing
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.summaries import summarize_all
from rightsizer.domain.usage.series import RawUsage
from rightsizer.services.ports import (
    CommitmentSource,
    InstanceTypes,
    Inventory,
    NullProgress,
    OnDemandPrices,
    Progress,
    ResizeHistory,
    SourceUnavailable,
    SpotPrices,
    UsageSource,
    Window,
)
from rightsizer.settings import PriceMode

if TYPE_CHECKING:  # numpy-free imports for the pipeline's planner stay so; collection imports it anyway
    from rightsizer.services.sagemaker import SageMakerData, SageMakerSources, Snapshot

T = TypeVar("T")


@dataclass(frozen=True)
class RegionContext:
    """What every shard of one region shares: the catalog, prices and look-back window at collection time."""

    account_id: str
    region: str
    collected_at: datetime
    window: Window
    catalog: Catalog
    prices: PriceBook
    warnings: tuple[str, ...] = ()
    accelerators: int = 0  # GPUs and NeuronCores of the region's running hosts (sizes CloudWatch discovery)
    commitments: Commitments = field(default_factory=Commitments)  # reservations and plans: net savings
    # The last instance-type change of each host inside the window that EC2 recorded (CloudTrail): samples before
    # it were taken on other hardware.
    resizes: Mapping[str, Resize] = field(default_factory=dict)
    # The region's sources a one-click guard relies on that could not be read (domain/guards.py): its resizes, type
    # offerings, commitments.
    gaps: tuple[Gap, ...] = ()


@dataclass(frozen=True)
class PlannedShard:
    """One shard of a region's plan: its hosts, what covers each of them on the bill (hosts nothing covers: absent),
    and the hosts planned in it that were terminated before it was collected. Its collection drops those and says
    so, and so does every retry and catch-up analysis of it (services/pipeline.py)."""

    instances: tuple[Instance, ...] = ()
    covers: Mapping[str, CoverRef] = field(default_factory=dict)
    gone: tuple[str, ...] = ()


@dataclass(frozen=True)
class RegionSources:
    """The ports one region is read through."""

    inventory: Inventory
    instance_types: InstanceTypes
    spot: SpotPrices
    usage: UsageSource
    on_demand: OnDemandPrices | None = None  # None: snapshot only
    commitments: CommitmentSource | None = None  # None: savings at list price only
    resizes: ResizeHistory | None = None  # None: resizes are seen in the agent's InstanceType dimension only
    sagemaker: SageMakerSources | None = None  # None: SageMaker is not read


@dataclass(frozen=True)
class Reference:
    """Bundled data: accelerator figures, legacy specs and the price snapshot lookup."""

    accelerators: AcceleratorTable
    legacy_specs: Mapping[str, InstanceTypeSpec]
    snapshot: Callable[[str], PriceBook | None]
    sagemaker_snapshot: Snapshot | None = None  # the bundled SageMaker prices (region, component)


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
    billings: Iterable[Billing] = (),
) -> tuple[PriceBook, list[str]]:
    """On-demand prices per the mode, for Linux and for each other way the region's hosts are billed (`billings`:
    Windows, RHEL, ...); in auto mode the snapshot fills what the API cannot answer. The snapshot alone is taken
    whole, every platform it has."""
    if (mode is PriceMode.SNAPSHOT or api is None) and snapshot is not None:
        return snapshot, []
    linux, source, warnings = _prices_of(region, mode, api, snapshot, instance_types, LINUX)
    if snapshot is not None and source == snapshot.source:
        return snapshot, warnings  # the API could not be read: the snapshot stands in whole
    variants: dict[str, Mapping[str, Decimal]] = {}
    sources: dict[str, str] = {}
    for billing in {b.key: b for b in billings if b.key not in (None, LINUX.key)}.values():
        found, origin, more = _prices_of(
            region, mode, api, snapshot.billed_as(billing) if snapshot else None, instance_types, billing
        )
        warnings.extend(more)
        if found and billing.key:
            variants[billing.key], sources[billing.key] = found, origin
    return PriceBook(region, linux, source, variants=variants, variant_sources=sources), warnings


def _prices_of(
    region: str,
    mode: PriceMode,
    api: OnDemandPrices | None,
    snapshot: PriceBook | None,
    instance_types: list[str],
    billing: Billing,
) -> tuple[dict[str, Decimal], str, list[str]]:
    """(hourly prices, their source, warnings) of hosts billed one way."""
    where = region if billing.key == LINUX.key else f"{billing.description} in {region}"
    in_where = f"in {region}" if billing.key == LINUX.key else f"for {where}"
    known = snapshot is not None and bool(snapshot.on_demand)
    warnings: list[str] = []
    if mode is PriceMode.SNAPSHOT or api is None:
        if snapshot is None or not known:
            warnings.append(f"no bundled prices for {where}: costs and savings are unknown (use --prices api)")
            return {}, "no prices", warnings
        return dict(snapshot.on_demand), snapshot.source, warnings
    try:
        live = api.hourly(region, instance_types, billing)
    except SourceUnavailable as error:
        if mode is PriceMode.API:
            raise
        if snapshot is None or not known:
            warnings.append(f"{error}; no bundled prices for {where} either: costs and savings are unknown")
            return {}, "no prices", warnings
        warnings.append(f"{error}; using the {snapshot.source} for {where}")
        return dict(snapshot.on_demand), snapshot.source, warnings
    if mode is PriceMode.AUTO and snapshot is not None:
        missing = {t: p for t, p in snapshot.on_demand.items() if t not in live}
        if missing:
            warnings.append(f"{len(missing)} types had no Price List API price {in_where}: {snapshot.source} used")
            return {**missing, **live}, f"{api.source} + {snapshot.source}", warnings
    return live, api.source, warnings


def region_context(
    account_id: str,
    region: str,
    instances: Sequence[Instance],
    sources: RegionSources,
    reference: Reference,
    price_mode: PriceMode,
    now: datetime,
    lookback_days: int,
    progress: Progress | None = None,
) -> RegionContext:
    """Catalog, prices (spot prices for the spot types among `instances`) and window of one region."""
    progress = progress or NullProgress()
    api_specs = sources.instance_types.accelerated_specs()
    progress.advance()
    known_types = sorted({*reference.legacy_specs, *(s.instance_type for s in api_specs)})
    gaps: list[Gap] = []
    warnings: list[str] = []
    try:
        offered = sources.instance_types.offered_types(known_types)
    except SourceUnavailable as error:
        offered = None  # every type counts as offered: no resize or schedule is one click (domain/guards.py)
        gaps.append(Gap(Source.OFFERINGS, str(error)))
        warnings.append(f"{region}: {error}: no one-click resize or schedule until the offerings can be read")
    catalog = build_catalog(region, api_specs, reference.legacy_specs, reference.accelerators, offered)
    progress.advance()

    book, price_warnings = resolve_prices(
        region,
        price_mode,
        sources.on_demand,
        reference.snapshot(region),
        known_types,
        [i.billing for i in instances if i.is_running],
    )
    warnings.extend(price_warnings)
    spot_types = sorted({i.instance_type for i in instances if i.lifecycle == "spot"})
    spot = sources.spot.latest(spot_types, now) if spot_types else {}
    prices = replace(book, spot=spot)
    progress.advance()
    commitments = Commitments()
    if sources.commitments is not None:
        commitments, unread = read_commitments(sources.commitments, known_types)
        warnings.extend(f"{region}: {message}" for message in unread)
        if commitments.unread:
            gaps.append(Gap(Source.COMMITMENTS, "; ".join(commitments.unread)))
    window = lookback_window(now, lookback_days)
    resizes: Mapping[str, Resize] = {}
    if sources.resizes is not None:
        try:
            resizes = sources.resizes.resizes(window.start, window.end)
        except SourceUnavailable as error:
            gaps.append(Gap(Source.RESIZES, str(error)))
            warnings.append(
                f"{region}: resizes could not be read ({error}): the agent's InstanceType dimension shows them, and "
                "hosts started inside the window are judged since that start, without one click"
            )
    units = sum(
        spec.compute_units
        for spec in (catalog.specs.get(i.instance_type) for i in instances if i.is_running)
        if spec is not None
    )
    return RegionContext(
        account_id=account_id,
        region=region,
        collected_at=now,
        window=window,
        catalog=catalog,
        prices=prices,
        warnings=tuple(warnings),
        accelerators=units,
        commitments=commitments,
        resizes={iid: resizes[iid] for iid in sorted(resizes.keys() & {i.instance_id for i in instances})},
        gaps=tuple(gaps),
    )


def shard_instances(instances: Sequence[Instance], size: int, team_tag: str = "team") -> list[tuple[Instance, ...]]:
    """Consecutive runs of at most `size` instances, the same inventory always giving the same shards (a retried
    plan rewrites the same items).

    Ordered by team, zone and type before the instance id: consolidation looks at one team's hosts of one type in
    one zone, and only hosts analysed in the same shard can be packed together. A group larger than a shard, or
    one that straddles a shard's end, is consolidated piece by piece (conservative: it may miss a saving, it never
    invents one). The nodes of one owner (a node group, NodePool, capacity provider, compute environment or Auto
    Scaling group: `Instance.owner`) come after the hosts of their own, together, and are never cut apart: their
    group's one recommendation needs every node, so such a group starts a new shard where it would straddle one,
    and a group larger than `size` is a shard of its own."""
    if size < 1:
        raise ValueError(f"a shard holds at least one instance, got {size}")
    ordered = sorted(
        instances,
        key=lambda i: (
            _owner_key(i),
            i.tags.get(team_tag, ""),
            i.availability_zone,
            i.instance_type,
            i.instance_id,
        ),
    )
    shards: list[list[Instance]] = []
    for _, members in groupby(ordered, key=_owner_key):
        block = list(members)
        if not _owner_key(block[0]):  # hosts of their own: cut anywhere
            for instance in block:
                if not shards or len(shards[-1]) >= size:
                    shards.append([])
                shards[-1].append(instance)
        elif shards and len(shards[-1]) + len(block) <= size:
            shards[-1].extend(block)
        else:
            shards.append(block)
    return [tuple(shard) for shard in shards]


def _owner_key(instance: Instance) -> str:
    """The owner's id: owned nodes sort after hosts of their own (""), each owner's nodes next to each other."""
    return instance.owner.resource_id if instance.owner is not None else ""


def usage_summaries(
    instances: Sequence[Instance], context: RegionContext, usage: UsageSource
) -> Iterator[UsageSummary]:
    """Usage summaries of `instances`, as the raw series arrive: a few dozen hosts are summarised at a time and their
    series dropped, so memory does not grow with the hosts read. `usage.warnings` holds what CloudWatch could not
    answer cleanly once the summaries are all read (`usage_warnings`).

    A host resized inside the window is judged on its current type (CloudTrail's record); when that record could not
    be read, a host that started inside the window is judged since that start (domain/guards.py)."""
    resizes = context.resizes
    unread = any(gap.source is Source.RESIZES for gap in context.gaps)
    started = {i.instance_id: i.launch_time for i in instances} if unread else {}

    def placed(raw: RawUsage) -> RawUsage:
        if raw.instance_id in resizes:
            return replace(raw, resized_at=resizes[raw.instance_id].at)
        if raw.instance_id in started:
            return replace(raw, started_at=started[raw.instance_id])
        return raw

    raws = usage.read(instances, context.catalog.specs, context.window)
    return summarize_all(placed(raw) for raw in raws)


def usage_warnings(context: RegionContext, usage: UsageSource) -> list[str]:
    """What CloudWatch could not answer cleanly in the last read, named with the region."""
    return [f"{context.region}: {message}" for message in usage.warnings]


def summarise_usage(
    instances: Sequence[Instance], context: RegionContext, usage: UsageSource
) -> tuple[dict[str, UsageSummary], list[str]]:
    """Usage summaries of `instances` by instance id (a shard's, which it stores), and what CloudWatch could not
    answer cleanly."""
    summaries = {summary.instance_id: summary for summary in usage_summaries(instances, context, usage)}
    return summaries, usage_warnings(context, usage)


def read_region(
    account_id: str,
    region: str,
    sources: RegionSources,
    reference: Reference,
    price_mode: PriceMode,
    now: datetime,
    lookback_days: int,
    progress: Progress | None = None,
) -> tuple[list[Instance], RegionContext]:
    """A region's inventory and its context (catalog, prices, commitments, window), before any usage is read."""
    progress = progress or NullProgress()
    progress.stage(f"{region}: inventory", 4)
    instances = sources.inventory.accelerated_instances()
    progress.advance()
    context = region_context(
        account_id, region, instances, sources, reference, price_mode, now, lookback_days, progress
    )
    return instances, context


def read_sagemaker(
    context: RegionContext, sources: RegionSources, reference: Reference, price_mode: PriceMode
) -> SageMakerData | None:
    """The region's SageMaker endpoints, notebooks and training jobs, where they are read (None: not read)."""
    if sources.sagemaker is None:
        return None
    from rightsizer.services.sagemaker import collect_sagemaker

    snapshot = reference.sagemaker_snapshot or (lambda _region, _component: None)
    return collect_sagemaker(
        context.account_id, context.region, sources.sagemaker, context.catalog, context.window, price_mode, snapshot
    )


def read_commitments(source: CommitmentSource, instance_types: list[str]) -> tuple[Commitments, list[str]]:
    """Reservations and plans, each read on its own: one that cannot be read is a warning, and savings the others
    price still count (what could not be read is priced at list)."""
    unread: list[str] = []

    def attempt(what: str, read: Callable[[], tuple[T, ...]]) -> tuple[T, ...]:
        try:
            return read()
        except SourceUnavailable as error:
            unread.append(f"{what} could not be read ({error})")
            return ()

    commitments = Commitments(
        reserved_instances=attempt("Reserved Instances", source.reserved_instances),
        capacity_reservations=attempt("capacity reservations", source.capacity_reservations),
        savings_plans=attempt("Savings Plans", lambda: source.savings_plans(instance_types)),
        read=True,
        unread=tuple(unread),
    )
    return commitments, [f"{what}: savings they cover are shown at list price" for what in unread]
