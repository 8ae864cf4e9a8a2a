"""A region read and analysed (services.analyze.analyze_region) with a fake behind every port; then ranked and
rendered as JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from rightsizer.adapters.bundled import accelerator_table, legacy_specs, snapshot_prices
from rightsizer.domain.guards import Gap, Source
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import AcceleratorData, Resize
from rightsizer.domain.platforms import LINUX, Billing, billing
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.usage.series import DeviceSeries, RawUsage, Series
from rightsizer.domain.usage.summary import summarize
from rightsizer.services.analyze import RegionAdvice, analyze_region
from rightsizer.services.collect import (
    Reference,
    RegionContext,
    RegionSources,
    build_catalog,
    lookback_window,
    read_region,
    region_context,
    resolve_prices,
    summarise_usage,
)
from rightsizer.services.ports import (
    Progress,
    SourceUnavailable,
    Window,
)
from rightsizer.services.report import build_report, report_json
from rightsizer.settings import PriceMode
from tests.factories import ACCOUNT, PROMISED_RECOMMENDATION_KEYS, RecordingProgress, api_specs, instance

NOW = datetime(2026, 12, 1, 12, 34, 56, 789000, tzinfo=UTC)
API_SOURCE = "AWS Price List API"
SNAPSHOT_ONLY_REGION = "ap-southeast-4"  # a region the bundled snapshot has no GPU prices for

# Fakes, one per port ----------------------------------------------------------------------------------


class FakeInventory:
    def __init__(self, instances: Sequence[Instance]) -> None:
        self.instances = list(instances)
        self.calls = 0

    def accelerated_instances(self) -> list[Instance]:
        self.calls += 1
        return list(self.instances)

    def described(self, instance_ids: Sequence[str]) -> list[Instance]:
        return [i for i in self.instances if i.instance_id in instance_ids]


class FakeInstanceTypes:
    def __init__(self, specs: Sequence[InstanceTypeSpec], offered: frozenset[str]) -> None:
        self.specs = list(specs)
        self.offered = offered
        self.asked: list[list[str]] = []

    def accelerated_specs(self) -> list[InstanceTypeSpec]:
        return list(self.specs)

    def offered_types(self, instance_types: Sequence[str]) -> frozenset[str]:
        self.asked.append(list(instance_types))
        return self.offered


class FakeOnDemand:
    source = API_SOURCE

    def __init__(
        self,
        prices: Mapping[str, str] | None = None,
        error: Exception | None = None,
        platforms: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.prices = {t: Decimal(p) for t, p in (prices or {}).items()}
        self.error = error
        self.platforms = {key: {t: Decimal(p) for t, p in found.items()} for key, found in (platforms or {}).items()}
        self.calls: list[tuple[str, list[str]]] = []
        self.billings: list[str | None] = []

    def hourly(self, region: str, instance_types: Sequence[str], billing: Billing = LINUX) -> dict[str, Decimal]:
        self.calls.append((region, list(instance_types)))
        self.billings.append(billing.key)
        if self.error is not None:
            raise self.error
        if billing.key != LINUX.key:
            return dict(self.platforms.get(billing.key or "", {}))
        return dict(self.prices)


class FakeSpot:
    def __init__(self, prices: Mapping[str, str] | None = None) -> None:
        self.prices = {t: Decimal(p) for t, p in (prices or {}).items()}
        self.calls: list[tuple[list[str], datetime]] = []

    def latest(self, instance_types: Sequence[str], now: datetime) -> dict[str, Decimal]:
        self.calls.append((list(instance_types), now))
        return {t: self.prices[t] for t in instance_types if t in self.prices}


Profile = Callable[[str, Window], RawUsage]


class FakeUsage:
    def __init__(self, profiles: Mapping[str, Profile] | None = None, warnings: Sequence[str] = ()) -> None:
        self.profiles = dict(profiles or {})
        self._warnings = list(warnings)
        self.warnings: list[str] = []
        self.calls: list[tuple[list[str], Mapping[str, InstanceTypeSpec], Window]] = []

    def read(
        self, instances: Sequence[Instance], specs: Mapping[str, InstanceTypeSpec], window: Window
    ) -> Iterator[RawUsage]:
        self.calls.append(([i.instance_id for i in instances], specs, window))
        self.warnings = list(self._warnings)
        for i in instances:
            yield self.profiles.get(i.instance_id, no_metrics)(i.instance_id, window)


# Raw usage builders --------------------------------------------------------------------------------------


def flat(window: Window, value: float, period: int = 300) -> Series:
    start = int(window.start.timestamp())
    count = int((window.end - window.start).total_seconds()) // period
    return Series(period, tuple(range(start, start + count * period, period)), (value,) * count)


def no_metrics(instance_id: str, window: Window) -> RawUsage:
    return RawUsage(instance_id, window.start, window.end, AcceleratorData.NONE, cpu_avg=flat(window, 3.0))


def gpus(utilization: Sequence[float], memory_mib: Sequence[float], cpu: float = 5.0) -> Profile:
    def profile(instance_id: str, window: Window) -> RawUsage:
        devices = tuple(
            DeviceSeries(
                index=str(n),
                utilization_avg=flat(window, util),
                utilization_max=flat(window, util, 3600),
                memory_used_max=flat(window, memory, 3600),
            )
            for n, (util, memory) in enumerate(zip(utilization, memory_mib, strict=True))
        )
        return RawUsage(
            instance_id,
            window.start,
            window.end,
            AcceleratorData.PER_DEVICE,
            devices=devices,
            cpu_avg=flat(window, cpu),
            network_in_sum=flat(window, 2e8),
            network_out_sum=flat(window, 1e8),
            host_memory_max=flat(window, 20.0, 3600),
        )

    return profile


IDLE_P3 = gpus([0.2] * 4, [0.0] * 4, cpu=1.5)
ONE_OF_FOUR = gpus([50.0, 0.2, 0.2, 0.2], [8192.0, 0.0, 0.0, 0.0])


# Fixtures ------------------------------------------------------------------------------------------------


def snapshot_book(region: str) -> PriceBook:
    book = snapshot_prices(region)
    assert book is not None
    return book


def reference() -> Reference:
    return Reference(accelerators=accelerator_table(), legacy_specs=legacy_specs(), snapshot=snapshot_prices)


def sources(
    instances: Sequence[Instance],
    *,
    usage: FakeUsage | None = None,
    spot: FakeSpot | None = None,
    on_demand: FakeOnDemand | None = None,
    specs: Sequence[InstanceTypeSpec] | None = None,
    offered: frozenset[str] | None = None,
) -> RegionSources:
    api = list(api_specs().values()) if specs is None else list(specs)
    return RegionSources(
        inventory=FakeInventory(instances),
        instance_types=FakeInstanceTypes(
            api, offered if offered is not None else frozenset(s.instance_type for s in api)
        ),
        spot=spot or FakeSpot(),
        usage=usage or FakeUsage(),
        on_demand=on_demand,
    )


def collect(
    instances: Sequence[Instance],
    *,
    region: str = "us-east-1",
    mode: PriceMode = PriceMode.SNAPSHOT,
    lookback_days: int = 14,
    progress: Progress | None = None,
    **kwargs: Any,
) -> RegionAdvice:
    return analyze_region(
        ACCOUNT, region, sources(instances, **kwargs), reference(), mode, NOW, lookback_days, Policy(), progress
    )


# 1. The look-back window ----------------------------------------------------------------------------------


def test_lookback_window_ends_on_the_hour() -> None:
    window = lookback_window(NOW, 14)

    assert window.end == datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert window.start == window.end - timedelta(days=14)
    assert window.days == 14.0


def test_two_runs_in_the_same_hour_ask_the_same_window() -> None:
    early = NOW.replace(minute=0, second=0, microsecond=0)
    late = NOW.replace(minute=59, second=59, microsecond=999999)

    assert lookback_window(early, 3) == lookback_window(late, 3) == lookback_window(NOW, 3)
    assert lookback_window(late + timedelta(microseconds=1), 3).end == early + timedelta(hours=1)


# 2. The catalog ---------------------------------------------------------------------------------------------


def test_api_specs_override_legacy_ones_and_legacy_p3_types_stay() -> None:
    legacy = legacy_specs()
    assert {"p3.2xlarge", "p3.8xlarge", "p3.16xlarge"} <= set(legacy)
    from_api = replace(legacy["p3.2xlarge"], vcpus=9, listed_by_api=True)
    g5 = api_specs()["g5.xlarge"]
    offered = frozenset({"g5.xlarge"})

    catalog = build_catalog("us-east-1", [from_api, g5], legacy, accelerator_table(), offered)

    assert catalog.region == "us-east-1"
    assert catalog.spec("p3.2xlarge") == from_api
    assert catalog.spec("p3.8xlarge") == legacy["p3.8xlarge"]
    assert legacy["p3.8xlarge"].listed_by_api is False
    assert catalog.spec("g5.xlarge") == g5
    assert set(catalog.specs) == {*legacy, "g5.xlarge"}
    assert catalog.offered == offered
    assert catalog.is_offered("p3.8xlarge") is False
    assert legacy["p3.2xlarge"].vcpus == 8  # the bundled table itself is not modified


def test_catalog_without_readable_offerings_says_unknown() -> None:
    catalog = build_catalog("us-east-1", [], legacy_specs(), accelerator_table(), None)

    assert catalog.is_offered("p3.8xlarge") is None


# 3. Prices per mode -----------------------------------------------------------------------------------------

TYPES = ["g5.xlarge", "g5.2xlarge", "p3.8xlarge"]


def test_snapshot_mode_never_asks_the_api() -> None:
    api = FakeOnDemand({"g5.xlarge": "9.99"})
    snapshot = snapshot_book("us-east-1")

    book, warnings = resolve_prices("us-east-1", PriceMode.SNAPSHOT, api, snapshot, TYPES)

    assert book == snapshot
    assert warnings == []
    assert api.calls == []


@pytest.mark.parametrize("mode", [PriceMode.AUTO, PriceMode.API])
def test_without_an_api_the_snapshot_is_used(mode: PriceMode) -> None:
    snapshot = snapshot_book("us-east-1")

    assert resolve_prices("us-east-1", mode, None, snapshot, TYPES) == (snapshot, [])


def test_api_mode_uses_the_api_prices_only() -> None:
    api = FakeOnDemand({"g5.xlarge": "1.5", "p3.8xlarge": "13"})

    book, warnings = resolve_prices("us-east-1", PriceMode.API, api, snapshot_book("us-east-1"), TYPES)

    assert api.calls == [("us-east-1", TYPES)]
    assert book.region == "us-east-1"
    assert book.source == API_SOURCE
    assert dict(book.on_demand) == {"g5.xlarge": Decimal("1.5"), "p3.8xlarge": Decimal("13")}
    assert warnings == []


def test_api_mode_failure_is_raised() -> None:
    api = FakeOnDemand(error=SourceUnavailable("Price List API could not be reached: timeout"))

    with pytest.raises(SourceUnavailable, match="could not be reached"):
        resolve_prices("us-east-1", PriceMode.API, api, snapshot_book("us-east-1"), TYPES)


def test_auto_mode_falls_back_to_the_snapshot_and_names_the_source() -> None:
    api = FakeOnDemand(error=SourceUnavailable("Price List API could not be reached: timeout"))
    snapshot = snapshot_book("us-east-1")

    book, warnings = resolve_prices("us-east-1", PriceMode.AUTO, api, snapshot, TYPES)

    assert book == snapshot
    assert len(warnings) == 1
    assert "Price List API could not be reached: timeout" in warnings[0]
    assert snapshot.source in warnings[0]
    assert "us-east-1" in warnings[0]


def test_auto_mode_fills_types_the_api_lacks_from_the_snapshot() -> None:
    api = FakeOnDemand({"g5.xlarge": "2.000"})  # differs from the snapshot's 1.006: the API wins
    snapshot = snapshot_book("us-east-1")

    book, warnings = resolve_prices("us-east-1", PriceMode.AUTO, api, snapshot, TYPES)

    assert book.hourly("g5.xlarge") == Decimal("2.000")
    assert book.hourly("p3.8xlarge") == snapshot.hourly("p3.8xlarge")
    assert set(book.on_demand) == set(snapshot.on_demand)
    missing = len(set(snapshot.on_demand) - {"g5.xlarge"})
    assert warnings == [f"{missing} types had no Price List API price in us-east-1: {snapshot.source} used"]
    assert book.source == f"{API_SOURCE} + {snapshot.source}"


def test_auto_mode_with_a_complete_api_answer_has_no_warning() -> None:
    snapshot = snapshot_book("us-east-1")
    api = FakeOnDemand({t: str(p * 2) for t, p in snapshot.on_demand.items()})

    book, warnings = resolve_prices("us-east-1", PriceMode.AUTO, api, snapshot, TYPES)

    assert warnings == []
    assert book.source == API_SOURCE
    assert book.hourly("g5.xlarge") == snapshot.on_demand["g5.xlarge"] * 2


def test_a_region_the_snapshot_lacks_gets_an_empty_price_book_and_a_warning() -> None:
    assert snapshot_prices(SNAPSHOT_ONLY_REGION) is None

    book, warnings = resolve_prices(SNAPSHOT_ONLY_REGION, PriceMode.SNAPSHOT, None, None, TYPES)

    assert book.region == SNAPSHOT_ONLY_REGION
    assert dict(book.on_demand) == {}
    assert len(warnings) == 1
    assert SNAPSHOT_ONLY_REGION in warnings[0]
    assert "--prices api" in warnings[0]


def test_auto_mode_failure_in_a_region_the_snapshot_lacks_warns_about_both() -> None:
    api = FakeOnDemand(error=SourceUnavailable("Price List API could not be reached: refused"))

    book, warnings = resolve_prices(SNAPSHOT_ONLY_REGION, PriceMode.AUTO, api, None, TYPES)

    assert dict(book.on_demand) == {}
    assert len(warnings) == 1
    assert "could not be reached: refused" in warnings[0]
    assert SNAPSHOT_ONLY_REGION in warnings[0]


def test_api_prices_in_a_region_the_snapshot_lacks_are_used_without_warning() -> None:
    api = FakeOnDemand({"g5.xlarge": "1.2"})

    book, warnings = resolve_prices(SNAPSHOT_ONLY_REGION, PriceMode.AUTO, api, None, TYPES)

    assert (dict(book.on_demand), warnings) == ({"g5.xlarge": Decimal("1.2")}, [])


# 4. analyze_region ------------------------------------------------------------------------------------------


def test_a_region_is_read_with_its_inventory_catalog_prices_and_window() -> None:
    hosts = [instance("p3.8xlarge", "i-idle"), instance("g5.12xlarge", "i-busy")]
    api = [api_specs()["g5.12xlarge"], api_specs()["g5.xlarge"]]
    offered = frozenset({"g5.12xlarge", "g5.xlarge"})
    src = sources(hosts, specs=api, offered=offered)

    data = analyze_region(ACCOUNT, "us-east-1", src, reference(), PriceMode.SNAPSHOT, NOW, 14, Policy())

    assert (data.account_id, data.region) == (ACCOUNT, "us-east-1")
    assert [rec.instance_id for rec in data.recommendations] == ["i-idle", "i-busy"]
    assert data.instances == tuple(hosts)
    assert data.window == lookback_window(NOW, 14)
    assert data.catalog.offered == offered
    assert set(data.catalog.specs) == {*legacy_specs(), "g5.12xlarge", "g5.xlarge"}
    assert isinstance(src.instance_types, FakeInstanceTypes)
    assert src.instance_types.asked == [sorted({*legacy_specs(), "g5.12xlarge", "g5.xlarge"})]
    assert dict(data.prices.on_demand) == dict(snapshot_book("us-east-1").on_demand)
    assert data.prices.source == snapshot_book("us-east-1").source
    assert data.warnings == ()


def test_spot_prices_are_asked_only_for_spot_instances() -> None:
    hosts = [
        instance("g5.xlarge", "i-od"),
        instance("g5.2xlarge", "i-spot-a", lifecycle="spot"),
        instance("g4dn.xlarge", "i-spot-b", lifecycle="spot"),
        instance("g5.2xlarge", "i-spot-c", lifecycle="spot"),
    ]
    spot = FakeSpot({"g5.2xlarge": "0.5", "g4dn.xlarge": "0.2", "g5.xlarge": "0.3"})

    data = collect(hosts, spot=spot)

    assert spot.calls == [(["g4dn.xlarge", "g5.2xlarge"], NOW)]
    assert dict(data.prices.spot) == {"g4dn.xlarge": Decimal("0.2"), "g5.2xlarge": Decimal("0.5")}
    assert data.prices.hourly("g5.xlarge") == snapshot_book("us-east-1").hourly("g5.xlarge")


def test_no_spot_instances_no_spot_request() -> None:
    spot = FakeSpot({"g5.xlarge": "0.3"})

    data = collect([instance("g5.xlarge", "i-od")], spot=spot)

    assert spot.calls == []
    assert dict(data.prices.spot) == {}


def test_price_source_in_auto_mode_reaches_region_data() -> None:
    api = FakeOnDemand(error=SourceUnavailable("Price List API could not be reached: refused"))

    data = collect([instance("g5.xlarge", "i-od")], mode=PriceMode.AUTO, on_demand=api)

    assert api.calls and api.calls[0][0] == "us-east-1"
    assert data.prices.source == snapshot_book("us-east-1").source
    assert len(data.warnings) == 1 and "could not be reached: refused" in data.warnings[0]


def test_usage_warnings_follow_price_warnings_prefixed_with_the_region() -> None:
    usage = FakeUsage(warnings=["GetMetricData returned PartialData for 2 queries", "ListMetrics was throttled"])

    data = collect([instance("g5.xlarge", "i-od")], region=SNAPSHOT_ONLY_REGION, usage=usage)

    assert len(data.warnings) == 3
    assert data.warnings[0].startswith(f"no bundled prices for {SNAPSHOT_ONLY_REGION}")
    assert data.warnings[1:] == (
        f"{SNAPSHOT_ONLY_REGION}: GetMetricData returned PartialData for 2 queries",
        f"{SNAPSHOT_ONLY_REGION}: ListMetrics was throttled",
    )


def test_usage_is_fetched_for_the_inventory_and_summarised_per_instance() -> None:
    hosts = [instance("p3.8xlarge", "i-idle"), instance("g5.12xlarge", "i-one"), instance("g5.4xlarge", "i-none")]
    usage = FakeUsage({"i-idle": IDLE_P3, "i-one": ONE_OF_FOUR})

    src = sources(hosts, usage=usage)
    instances, context = read_region(ACCOUNT, "us-east-1", src, reference(), PriceMode.SNAPSHOT, NOW, 7)
    summaries, _ = summarise_usage(instances, context, usage)

    ((asked, specs, window),) = usage.calls
    assert asked == ["i-idle", "i-one", "i-none"]
    assert specs == context.catalog.specs
    assert window == lookback_window(NOW, 7) == context.window
    assert set(summaries) == {"i-idle", "i-one", "i-none"}
    for host in hosts:
        profile = usage.profiles.get(host.instance_id, no_metrics)
        assert summaries[host.instance_id] == summarize(profile(host.instance_id, window))
    assert len(summaries["i-one"].devices) == 4
    assert summaries["i-one"].devices[0].memory_used_peak_mib == 8192.0
    assert summaries["i-none"].accelerator_data is AcceleratorData.NONE
    assert summaries["i-idle"].accelerator_days == pytest.approx(7.0)


def test_progress_gets_one_stage_of_four_steps_per_region() -> None:
    progress = RecordingProgress()

    collect([instance("g5.xlarge", "i-od")], progress=progress)

    assert progress.stages == [("us-east-1: inventory", 4)]
    assert progress.advanced == 4


# 5. Analyse, rank, total, JSON ----------------------------------------------------------------------------

RECOMMENDATION_KEYS = PROMISED_RECOMMENDATION_KEYS


def two_regions() -> list[RegionAdvice]:
    east = collect(
        [
            instance("g5.4xlarge", "i-no-agent"),
            instance("p3.8xlarge", "i-idle-p3"),
            instance("g5.2xlarge", "i-spot", lifecycle="spot"),
            instance("g5.12xlarge", "i-one-of-four"),
            instance("p9.48xlarge", "i-unknown-type"),  # neither catalog nor price: savings unknown
        ],
        usage=FakeUsage({"i-idle-p3": IDLE_P3, "i-one-of-four": ONE_OF_FOUR}, warnings=["one warning"]),
        spot=FakeSpot({"g5.2xlarge": "0.4"}),
    )
    west = collect(
        [instance("g4dn.2xlarge", "i-stopped", state="stopped", region="eu-west-1")],
        region="eu-west-1",
        usage=FakeUsage(warnings=["one warning"]),
    )
    return [east, west]


def test_collected_regions_are_analysed_ranked_and_rendered() -> None:
    regions = two_regions()
    recommendations = [rec for region in regions for rec in region.recommendations]
    report = build_report(recommendations, NOW, 14, [w for r in regions for w in r.warnings])

    findings = {rec.instance_id: rec.finding for rec in report.recommendations}
    assert findings == {
        "i-idle-p3": Finding.IDLE,
        "i-one-of-four": Finding.OVERPROVISIONED,
        # Spot hosts are analysed like any other (and never resized); this one published no GPU metrics.
        "i-spot": Finding.INSUFFICIENT_DATA,
        "i-no-agent": Finding.INSUFFICIENT_DATA,
        "i-unknown-type": Finding.INSUFFICIENT_DATA,
        "i-stopped": Finding.EXCLUDED,
    }
    order = [rec.instance_id for rec in report.recommendations]
    assert order[:2] == ["i-idle-p3", "i-one-of-four"]  # the idle p3 saves the most
    assert order[-1] == "i-unknown-type"  # unknown savings last
    savings = [rec.monthly_savings for rec in report.recommendations]
    known = [s for s in savings if s is not None]
    assert known == sorted(known, reverse=True)
    spot = next(rec for rec in report.recommendations if rec.instance_id == "i-spot")
    assert spot.monthly_cost == (Decimal("0.4") * 730).quantize(Decimal("0.01"))  # the Spot price, not on-demand
    # Two regions' identical usage warnings, prefixed per region, are both kept; exact repeats are not.
    assert report.warnings == ("us-east-1: one warning", "eu-west-1: one warning")

    document = report_json(report)

    assert {"generated_at", "lookback_days", "recommendations", "totals", "warnings"} <= set(document)
    assert document["generated_at"] == NOW.isoformat()
    assert document["lookback_days"] == 14
    assert [r["instance_id"] for r in document["recommendations"]] == order
    for row in document["recommendations"]:
        assert set(row) >= RECOMMENDATION_KEYS
        assert isinstance(row["reasons"], list) and row["reasons"]
        assert isinstance(row["actionable"], bool)
    rows = {row["instance_id"]: row for row in document["recommendations"]}
    assert rows["i-idle-p3"]["finding"] == "idle"
    assert rows["i-idle-p3"]["region"] == "us-east-1"
    assert rows["i-idle-p3"]["instance_type"] == "p3.8xlarge"
    assert rows["i-idle-p3"]["monthly_cost_usd"] == float(snapshot_book("us-east-1").on_demand["p3.8xlarge"] * 730)
    assert rows["i-idle-p3"]["monthly_savings_usd"] == rows["i-idle-p3"]["monthly_cost_usd"]
    assert rows["i-one-of-four"]["target_type"] is not None
    assert rows["i-unknown-type"]["monthly_cost_usd"] is None
    assert rows["i-unknown-type"]["monthly_savings_usd"] is None
    assert rows["i-stopped"]["monthly_cost_usd"] == 0.0
    totals = document["totals"]
    assert totals["instances"] == 6
    assert totals["unpriced_instances"] == 1
    assert totals["monthly_savings_usd"] == pytest.approx(
        sum(r["monthly_savings_usd"] for r in document["recommendations"] if (r["monthly_savings_usd"] or 0) > 0)
    )
    assert totals["by_finding"] == {
        "idle": 1,
        "overprovisioned": 1,
        "underprovisioned": 0,
        "not_gpu_bound": 0,
        "schedulable": 0,
        "optimized": 0,
        "insufficient_data": 3,
        "excluded": 1,
        "consolidate": 0,
        "left_running": 0,
        "gpu_lost": 0,
        "held_unused": 0,
    }
    assert document["warnings"] == list(report.warnings)


def rec(
    instance_id: str,
    cost: str | None,
    after: str | None,
    finding: Finding = Finding.OVERPROVISIONED,
    *,
    actionable: bool = False,
) -> Recommendation:
    return Recommendation(
        recommendation_id=f"rec-{instance_id}",
        generated_at=NOW,
        account_id=ACCOUNT,
        region="us-east-1",
        instance_id=instance_id,
        instance_name=instance_id,
        instance_type="g5.12xlarge",
        availability_zone="us-east-1a",
        state="running",
        finding=finding,
        target_type="g5.xlarge" if actionable else None,
        monthly_cost=None if cost is None else Decimal(cost),
        monthly_cost_after=None if after is None else Decimal(after),
        confidence=Confidence.HIGH,
        actionable=actionable,
        reasons=(f"{finding.value} because tests say so",),
        managed=True,  # tagged for one click: `actionable` alone decides
    )


def test_recommendations_rank_by_savings_then_instance_id_with_unknown_savings_last() -> None:
    report = build_report(
        [
            rec("i-unknown-b", None, None),
            rec("i-small", "100", "90"),
            rec("i-upsize", "100", "150", Finding.UNDERPROVISIONED),
            rec("i-unknown-a", "100", None),
            rec("i-big-b", "1000", "500"),
            rec("i-none", "100", "100", Finding.OPTIMIZED),
            rec("i-big-a", "600", "100"),
        ],
        NOW,
        14,
    )

    assert [r.instance_id for r in report.recommendations] == [
        "i-big-a",
        "i-big-b",
        "i-small",
        "i-none",
        "i-upsize",
        "i-unknown-a",
        "i-unknown-b",
    ]


def test_totals_split_savings_actionable_savings_and_extra_cost() -> None:
    report = build_report(
        [
            rec("i-1", "1000.004", "400", actionable=True),  # saves 600.004
            rec("i-2", "300", "100"),  # saves 200, not one click
            rec("i-3", "100", "250", Finding.UNDERPROVISIONED, actionable=True),  # costs 150 more
            rec("i-4", "50", "75", Finding.NOT_GPU_BOUND),  # costs 25 more
            rec("i-5", "80", "80", Finding.OPTIMIZED, actionable=True),
            rec("i-6", None, None, Finding.INSUFFICIENT_DATA),
            rec("i-7", "500", "0", Finding.IDLE),  # saves 500, not one click
        ],
        NOW,
        14,
    )

    totals = report.totals

    assert totals.instances == 7
    assert totals.monthly_cost == Decimal("2030.00")
    assert totals.monthly_savings == Decimal("1300.00")
    assert totals.actionable_savings == Decimal("600.00")
    assert totals.additional_cost == Decimal("175.00")
    assert totals.unpriced == 1
    assert totals.by_finding == {
        "idle": 1,
        "overprovisioned": 2,
        "underprovisioned": 1,
        "not_gpu_bound": 1,
        "schedulable": 0,
        "optimized": 1,
        "insufficient_data": 1,
        "excluded": 0,
        "consolidate": 0,
        "left_running": 0,
        "gpu_lost": 0,
        "held_unused": 0,
    }
    assert list(totals.by_finding) == [finding.value for finding in Finding]


def test_empty_report_totals_are_zero_with_every_finding_key() -> None:
    report = build_report([], NOW, 7, ["w", "w", "v"])
    document = report_json(report)

    assert document["recommendations"] == []
    assert document["lookback_days"] == 7
    assert document["warnings"] == ["w", "v"]
    assert document["totals"] == {
        "instances": 0,
        "hosts": 0,
        "other_resources": 0,
        "node_groups": 0,
        "by_kind": {},
        "count": "0 EC2 hosts costing $0.00/month",
        "monthly_cost_usd": 0.0,
        "unpriced_instances": 0,
        "monthly_savings_usd": 0.0,
        "savings_recommendations": 0,
        "actionable_savings_usd": 0.0,
        "actionable_recommendations": 0,
        "other_owner_savings_usd": 0.0,
        "other_owner_recommendations": 0,
        "additional_cost_usd": 0.0,
        "upsize_recommendations": 0,
        "by_finding": dict.fromkeys((f.value for f in Finding), 0),
        "monthly_savings_net_usd": 0.0,
        "actionable_savings_net_usd": 0.0,
        "other_owner_savings_net_usd": 0.0,
        "untagged_savings_usd": 0.0,
        "untagged_savings_net_usd": 0.0,
        "untagged_recommendations": 0,
    }


def test_json_money_is_rounded_to_cents_and_findings_are_strings() -> None:
    document = report_json(build_report([rec("i-1", "100.555", "50.001", actionable=True)], NOW, 14))

    (row,) = document["recommendations"]
    assert row["monthly_cost_usd"] == 100.56  # Decimal ROUND_HALF_EVEN on .555 -> .56
    assert row["monthly_savings_usd"] == 50.55
    assert row["finding"] == "overprovisioned"
    assert row["confidence"] == "high"
    assert row["actionable"] is True
    assert row["target_type"] == "g5.xlarge"
    assert row["reasons"] == ["overprovisioned because tests say so"]


def test_each_platform_of_the_region_is_asked_for_and_the_snapshot_fills_what_the_api_lacks() -> None:
    api = FakeOnDemand({"g5.xlarge": "2.0"}, platforms={"windows": {"g5.xlarge": "2.5"}})
    snapshot = snapshot_book("us-east-1")
    windows, rhel = billing("Windows"), billing("Red Hat Enterprise Linux")

    book, warnings = resolve_prices("us-east-1", PriceMode.AUTO, api, snapshot, TYPES, [windows, rhel, windows, LINUX])

    assert api.billings == ["linux", "windows", "rhel"]  # each platform once
    assert book.billed_as(windows).hourly("g5.xlarge") == Decimal("2.5")  # the API wins
    assert book.billed_as(windows).hourly("g5.2xlarge") == snapshot.variants["windows"]["g5.2xlarge"]
    assert dict(book.billed_as(rhel).on_demand) == dict(
        snapshot.variants["rhel"]
    )  # no API price: all from the snapshot
    assert any("for Red Hat Enterprise Linux in us-east-1" in warning for warning in warnings)


class FakeResizes:
    def __init__(self, found: Mapping[str, Resize] | None = None, error: Exception | None = None) -> None:
        self.found, self.error = dict(found or {}), error
        self.asked: list[tuple[datetime, datetime]] = []

    def resizes(self, start: datetime, end: datetime) -> dict[str, Resize]:
        self.asked.append((start, end))
        if self.error is not None:
            raise self.error
        return self.found


def _context_with(history: FakeResizes, hosts: Sequence[Instance]) -> RegionContext:
    found = replace(sources(hosts), resizes=history)
    return region_context(ACCOUNT, "us-east-1", hosts, found, reference(), PriceMode.SNAPSHOT, NOW, 14)


def test_the_window_s_resizes_of_the_region_s_hosts_are_kept_with_its_context() -> None:
    resized = Resize(NOW - timedelta(days=3), "g5.4xlarge")
    history = FakeResizes({"i-ours": resized, "i-terminated": resized})

    context = _context_with(history, [instance("g5.4xlarge", "i-ours")])

    assert history.asked == [(context.window.start, context.window.end)]
    assert dict(context.resizes) == {"i-ours": resized}
    assert context.warnings == ()


def test_resizes_that_cannot_be_read_are_a_warning_not_a_failure() -> None:
    history = FakeResizes(error=SourceUnavailable("CloudTrail LookupEvents: AccessDenied"))

    context = _context_with(history, [instance("g5.4xlarge", "i-ours")])

    assert context.resizes == {}
    assert context.warnings == (
        "us-east-1: resizes could not be read (CloudTrail LookupEvents: AccessDenied): the agent's InstanceType "
        "dimension shows them, and hosts started inside the window are judged since that start, without one click",
    )
    # The shards hold back the one clicks of hosts that started inside the window (domain/guards.py).
    assert context.gaps == (Gap(Source.RESIZES, "CloudTrail LookupEvents: AccessDenied"),)
