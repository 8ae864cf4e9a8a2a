"""The types a host could move to: priced, cheapest first, worked out once per catalog and price book; the
candidates that carry a demand, and which limit ruled out each cheaper type."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from operator import ge
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.limits.demand import Demand
from rightsizer.domain.limits.limit import Offer
from rightsizer.domain.limits.table import LIMITS, NAMED, offered
from rightsizer.domain.models.hosts import AcceleratorKind, AcceleratorSpec, Instance, InstanceTypeSpec
from rightsizer.domain.models.money import monthly
from rightsizer.domain.platforms import LINUX, Billing
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.sizing.projection import Projection, projection

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Candidate:
    spec: InstanceTypeSpec
    hourly: Decimal
    monthly: Decimal
    projected_util: float
    projected_burst: float
    cross_family: bool
    cross_hypervisor: bool
    basis: str = ""  # how the projection was made, for the reasons
    offer: Offer | None = None  # what the type offers of each limit (limits.table.LIMITS)
    offers: tuple[float, ...] = ()
    refusals: Refusals | None = None  # the cheaper types the scan ruled out before this one


@dataclass(frozen=True, slots=True)
class _Target:
    """A type hosts of one type could move to, with all that does not depend on a host or its load."""

    offer: Offer
    offers: tuple[float, ...]  # limits.offered(offer)
    projection: Projection  # the source's work on this type
    cross_family: bool
    cross_hypervisor: bool

    @property
    def spec(self) -> InstanceTypeSpec:
        return self.offer.spec


@dataclass(frozen=True, slots=True)
class _PricedTarget:
    """A target with its on-demand price: what `candidates` scans for each host."""

    target: _Target
    hourly: Decimal
    monthly: Decimal


@dataclass
class Refusals:
    """The types a scan ruled out, in order (filled as it goes); which limit ruled out each is worked out when asked:
    most hosts' advice needs only the first type that fits."""

    scan: _Scan | None = None
    rows: list[int] = field(default_factory=list)

    def decided(self, demand: Demand) -> tuple[tuple[int, Offer], ...]:
        """Each named limit (`NAMED`) a ruled-out type fell short of first, with the first such type, in LIMITS'
        order: what ruled out the cheaper types."""
        if self.scan is None or not self.rows:
            return ()
        rows = self.rows
        first = (self.scan.offers[rows] < demand.floor_array).argmax(axis=1).tolist()
        found: dict[int, Offer] = {}
        for row, limit in zip(rows, first, strict=True):
            if limit in NAMED:
                found.setdefault(limit, self.scan.targets[row].target.offer)
        return tuple(sorted(found.items()))


@dataclass(frozen=True, slots=True)
class _Scan:
    """A type's priced targets, cheapest first, with what each offers of every limit also as one matrix (a row per
    target, a column per limit): which limit ruled out each of a host's refused types is one numpy call."""

    targets: tuple[_PricedTarget, ...]
    monthly: tuple[Decimal, ...]  # ascending
    offers: npt.NDArray[np.float64]  # len(targets) x len(LIMITS)


def _comparable(source_acc: AcceleratorSpec, target_acc: AcceleratorSpec) -> Projection | None:
    """The projection from one accelerator to another, when the work can move at all."""
    if source_acc.compute_capability_tuple > target_acc.compute_capability_tuple:
        return None  # e.g. A10G -> T4 loses BF16: models built for the newer GPU may not run
    return projection(source_acc, target_acc)


def _targets(spec: InstanceTypeSpec, catalog: Catalog, same_model_only: bool, architecture: str) -> tuple[_Target, ...]:
    """Types of the same kind whose accelerator can take `spec`'s work, with what each offers of every limit for hosts
    of this CPU architecture, worked out once per catalog."""

    def build() -> tuple[_Target, ...]:
        source_acc = catalog.accelerator(spec)
        if source_acc is None:
            return ()
        found = []
        for target in _same_kind_targets(spec, catalog, same_model_only):
            target_acc = catalog.accelerator(target)
            projected = None if target_acc is None else _comparable(source_acc, target_acc)
            if projected is None or target_acc is None:
                continue
            offer = Offer(
                target, target_acc, spec, architecture, projected.ratio, projected.basis, projected.engine_ratios()
            )
            found.append(
                _Target(
                    offer=offer,
                    offers=offered(offer),
                    projection=projected,
                    cross_family=target.family != spec.family,
                    cross_hypervisor=spec.nvme_support == "unsupported" and target.nvme_support == "required",
                )
            )
        return tuple(found)

    return catalog.derived(("resize targets", spec, same_model_only, architecture), build)


def _priced_targets(
    spec: InstanceTypeSpec, catalog: Catalog, prices: PriceBook, same_model_only: bool, architecture: str
) -> _Scan:
    """`_targets` that have a price, cheapest first (at equal price the same family, then the smaller host),
    worked out once per catalog and price book: each host then only filters, and can stop at its price ceiling. The
    book is the host's platform's (host_prices): a type without a price there is not sold on it, never a target."""

    def build() -> _Scan:
        found = []
        for target in _targets(spec, catalog, same_model_only, architecture):
            hourly = prices.hourly(target.spec.instance_type)
            if hourly is not None:
                found.append(_PricedTarget(target, hourly, monthly(hourly)))
        found.sort(key=lambda p: (p.hourly, p.target.cross_family, p.target.spec.vcpus, p.target.spec.instance_type))
        offers = np.array([p.target.offers for p in found], dtype=np.float64).reshape(len(found), len(LIMITS))
        return _Scan(tuple(found), tuple(p.monthly for p in found), offers)

    key = ("priced resize targets", spec, same_model_only, architecture)
    return per_price_book(catalog, prices, key, build)


def host_prices(catalog: Catalog, prices: PriceBook, billing: Billing) -> PriceBook:
    """The book a host billed this way is priced from, for itself and its targets: one object per catalog, book and
    platform, so the per-book work above is done once per platform (see PriceBook.billed_as)."""
    if billing.key == LINUX.key:
        return prices
    return per_price_book(catalog, prices, ("billed as", billing), lambda: prices.billed_as(billing))


def per_price_book(catalog: Catalog, prices: PriceBook, key: Hashable, build: Callable[[], T]) -> T:
    """A value worked out from one catalog and one price book alone, kept with the catalog (`Catalog.derived`)
    under the book's identity: every host of a region is analysed against the same two."""

    def keep() -> tuple[PriceBook, T]:
        # The book stays with its value: while the catalog holds it, no other book can be given its id.
        return prices, build()

    return catalog.derived((key, id(prices)), keep)[1]


def candidates(
    instance: Instance,
    spec: InstanceTypeSpec,
    catalog: Catalog,
    prices: PriceBook,
    demand: Demand,
    *,
    same_model_only: bool = False,
    max_monthly: Decimal | None = None,
    refused: Refusals | None = None,
) -> Iterator[Candidate]:
    """Priced, offered types that carry the demand (every limit of `LIMITS`), cheapest first, up to `max_monthly`
    a month. Lazily: a rule that takes the first never looks at the types after it. Each carries the limits that ruled
    out the cheaper types before it; `refused`, when given, is filled with them as the scan goes (once it has run out,
    it holds every type it looked at)."""
    scan = _priced_targets(spec, catalog, prices, same_model_only, instance.architecture)
    # Cheapest first: the types up to the price ceiling are a prefix.
    end = len(scan.targets) if max_monthly is None else bisect_right(scan.monthly, max_monthly)
    if not end:
        return
    floors = demand.floors
    seen = refused if refused is not None else Refusals()
    seen.scan = scan
    for row in range(end):
        priced = scan.targets[row]
        target = priced.target
        if not all(map(ge, target.offers, floors)):
            seen.rows.append(row)
            continue
        ratio = target.projection.ratio
        yield Candidate(
            spec=target.spec,
            hourly=priced.hourly,
            monthly=priced.monthly,
            projected_util=demand.unit_util_p95 * ratio,
            projected_burst=demand.unit_util_burst * ratio,
            basis=target.projection.basis,
            cross_family=target.cross_family,
            cross_hypervisor=target.cross_hypervisor,
            offer=target.offer,
            offers=target.offers,
            refusals=Refusals(scan, list(seen.rows)),
        )


def fewest_units(found: Iterable[Candidate]) -> list[Candidate]:
    """The candidates with the fewest units, cheapest first: a paid upgrade keeps the GPU (NeuronCore) count the
    work uses, never a bigger host for one GPU's work (a saturated T4 goes to one faster GPU, not to 8 A100s)."""
    found = list(found)
    fewest = min((c.spec.compute_units for c in found), default=0)
    return [c for c in found if c.spec.compute_units == fewest]


def _same_kind_targets(spec: InstanceTypeSpec, catalog: Catalog, same_model_only: bool) -> Iterator[InstanceTypeSpec]:
    for target in catalog.resize_targets(spec.accelerator_kind):
        if target.instance_type == spec.instance_type:
            continue
        if spec.accelerator_kind is AcceleratorKind.NEURON and target.accelerator_model != spec.accelerator_model:
            continue  # other Neuron generations need a recompiled model: alternatives only
        if same_model_only and target.accelerator_model != spec.accelerator_model:
            continue
        yield target


def has_comparable_target(spec: InstanceTypeSpec, catalog: Catalog, prices: PriceBook) -> bool:
    """Is there at least one priced type of the same kind the host could be compared with?"""

    def build() -> bool:
        return any(
            catalog.accelerator(target) is not None and prices.hourly(target.instance_type) is not None
            for target in _same_kind_targets(spec, catalog, same_model_only=False)
        )

    return per_price_book(catalog, prices, ("comparable target", spec), build)
