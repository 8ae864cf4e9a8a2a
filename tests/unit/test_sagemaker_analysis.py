"""SageMaker advice a GPU expert would give (domain/sagemaker/), on series shaped as SageMaker publishes them.

Each test states a workload first, in CloudWatch's own units: `/aws/sagemaker/Endpoints` GPUUtilization and
GPUMemoryUtilization are summed over the instance's GPUs (a 4-GPU instance reads up to 400 %), CPUUtilization over its
vCPUs; `AWS/SageMaker` Invocations has a datapoint only for an hour with requests; ModelLatency is in microseconds.
Notebook instances publish nothing of their own: only a CloudWatch agent (NotebookInstanceName dimension) does.
Then it asserts what an expert concludes, the numbers people read, and that none of it is one click.

Hardware is the real catalog's (tests/factories.py) and prices are the bundled SageMaker snapshot's (us-east-1:
hosting has ml.g5.2xlarge and up, ml.g4dn.*, ml.g6.*; training has ml.g5.xlarge; no notebook prices).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Literal

import pytest

from rightsizer.adapters.bundled import sagemaker_snapshot_prices
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import ActionKind, Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.models.money import monthly
from rightsizer.domain.policy import Policy
from rightsizer.domain.sagemaker.advice import SageMakerPriceBook
from rightsizer.domain.sagemaker.endpoints.analysis import analyze_variants
from rightsizer.domain.sagemaker.endpoints.sizing import MIN_HA_INSTANCES
from rightsizer.domain.sagemaker.notebooks import analyze_notebooks
from rightsizer.domain.sagemaker.prices import SageMakerPrices
from rightsizer.domain.sagemaker.training import analyze_training
from rightsizer.domain.sagemaker.usage import (
    JobSeries,
    NotebookSeries,
    TrainingSeries,
    VariantSeries,
    summarize_notebook,
    summarize_training,
    summarize_variant,
)
from rightsizer.domain.sagemaker_models import (
    EndpointVariant,
    NotebookInstance,
    TrainingFamily,
    TrainingJob,
    ec2_type,
    training_family,
)
from rightsizer.domain.usage.series import EMPTY, Series
from tests import factories
from tests.factories import ACCOUNT, NOW

REGION = "us-east-1"
WINDOW_START = NOW - timedelta(days=14)
START = int(WINDOW_START.timestamp())
END = int(NOW.timestamp())
FIVE_MINUTES = 300
HOUR = 3600
POLICY = Policy()
CATALOG: Catalog = factories.catalog(REGION)
A10G_MIB = 22888  # the catalog's A10G memory per GPU

# A figure as published: a constant, a function of the epoch second (None: no datapoint then), or None: not published.
Shape = float | Callable[[int], float | None] | None
SAME: Literal["same"] = "same"  # published()'s gpu_max: the 5-minute figure's shape (a flat load)


def _hosting() -> SageMakerPrices:
    prices = sagemaker_snapshot_prices(REGION, "hosting")
    assert prices is not None
    return prices


def _training() -> SageMakerPrices:
    prices = sagemaker_snapshot_prices(REGION, "training")
    assert prices is not None
    return prices


BOOK = SageMakerPriceBook(REGION, hosting=_hosting(), training=_training())
NOTEBOOK_PRICE = Decimal("1.41")  # not bundled: the tests that need a notebook's cost say so
BOOK_WITH_NOTEBOOKS = replace(
    BOOK,
    notebook=SageMakerPrices(REGION, "notebook", {"ml.g5.xlarge": NOTEBOOK_PRICE}, "test notebook prices"),
)


def series(period: int, shape: Shape, start: int = START, end: int = END) -> Series:
    """Datapoints every `period` seconds in [start, end): the value the shape gives, none where it gives None."""
    if shape is None:
        return EMPTY
    stamps, values = [], []
    for stamp in range(start, end, period):
        value = shape(stamp) if callable(shape) else shape
        if value is not None:
            stamps.append(stamp)
            values.append(value)
    return Series(period, stamps, values)


def office_hours(stamp: int) -> bool:
    """Monday to Friday, 08:00-19:00 UTC."""
    moment = datetime.fromtimestamp(stamp, UTC)
    return moment.weekday() < 5 and 8 <= moment.hour < 19


def during_office_hours(busy: float, quiet: float | None = 0.0) -> Callable[[int], float | None]:
    return lambda stamp: busy if office_hours(stamp) else quiet


# ---------------------------------------------------------------------------------------------
# Endpoint variants


def variant(
    instance_type: str = "ml.g5.2xlarge",
    count: int = 1,
    *,
    endpoint: str = "chat",
    name: str = "AllTraffic",
    weight: float | None = 1.0,
    autoscaling: tuple[int, int] | None = None,
    tags: Mapping[str, str] | None = None,
    status: str = "InService",
    created: datetime | None = None,
) -> EndpointVariant:
    return EndpointVariant(
        account_id=ACCOUNT,
        region=REGION,
        endpoint_name=endpoint,
        variant_name=name,
        endpoint_arn=f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{endpoint}",
        endpoint_status=status,
        endpoint_config_name=f"{endpoint}-config-3",
        instance_type=instance_type,
        instance_count=count,
        created=created or NOW - timedelta(days=90),
        last_modified=NOW - timedelta(days=30),
        desired_instance_count=count,
        weight=weight,
        model_name=f"{endpoint}-model",
        autoscaling=autoscaling,
        tags=tags or {},
    )


def published(
    target: EndpointVariant,
    *,
    gpu: Shape = 0.0,
    gpu_max: Shape | Literal["same"] = SAME,
    gpu_memory: Shape = 10.0,
    cpu: Shape = 20.0,
    memory: Shape = 15.0,
    invocations: Shape = None,
    latency_ms: Shape = 25.0,
) -> VariantSeries:
    """What CloudWatch holds for the variant over the 14 days, in SageMaker's units (GPU and CPU summed over the
    instance's GPUs and vCPUs). `gpu_max` defaults to the 5-minute figure (a flat load)."""
    peak: Shape = gpu if isinstance(gpu_max, str) else gpu_max
    latency: Shape
    if latency_ms is None or not callable(latency_ms):
        latency = None if latency_ms is None else latency_ms * 1000
    else:
        shape = latency_ms
        latency = lambda stamp: None if (v := shape(stamp)) is None else v * 1000  # noqa: E731
    return VariantSeries(
        resource_id=target.resource_id,
        window_start=WINDOW_START,
        window_end=NOW,
        gpu_avg=series(FIVE_MINUTES, gpu),
        gpu_max=series(HOUR, peak),
        gpu_memory_max=series(HOUR, gpu_memory),
        cpu_avg=series(FIVE_MINUTES, cpu),
        memory_max=series(HOUR, memory),
        invocations=series(HOUR, invocations),
        latency_avg=series(HOUR, latency) if invocations is not None else EMPTY,
    )


def units(instance_type: str) -> tuple[int, int]:
    spec = CATALOG.spec(ec2_type(instance_type))
    assert spec is not None, instance_type
    return spec.accelerator_count, spec.vcpus


def judge_variants(
    *pairs: tuple[EndpointVariant, VariantSeries | None], policy: Policy = POLICY
) -> dict[str, Recommendation]:
    usage = {v.resource_id: summarize_variant(raw, *units(v.instance_type)) for v, raw in pairs if raw is not None}
    recommendations = analyze_variants([v for v, _ in pairs], usage, CATALOG, BOOK, policy, NOW)
    return {rec.sagemaker.variant_name if rec.sagemaker else "": rec for rec in recommendations}


def judge_variant(target: EndpointVariant, raw: VariantSeries | None, policy: Policy = POLICY) -> Recommendation:
    (rec,) = judge_variants((target, raw), policy=policy).values()
    return rec


def hosting_monthly(instance_type: str, count: int = 1) -> Decimal:
    hourly = _hosting().hourly_of(instance_type)
    assert hourly is not None
    return monthly(hourly * count)


def reason_with(rec: Recommendation, *fragments: str) -> str:
    found = [r for r in rec.reasons if all(f in r for f in fragments)]
    assert found, f"no reason with {fragments} in {rec.reasons}"
    return found[0]


def text(rec: Recommendation) -> str:
    return " | ".join(rec.reasons)


def assert_advice_only(rec: Recommendation) -> None:
    assert rec.actionable is False
    assert rec.action is None


STEADY_TRAFFIC = 1200.0  # requests an hour, every hour


class TestIdleEndpoints:
    def test_no_requests_for_14_days_with_instance_metrics_is_idle_and_its_whole_cost_is_the_saving(self) -> None:
        # A demo endpoint nobody calls: SageMaker publishes its instance metrics every 5 minutes (the model server
        # idles: GPU 0 %, a little CPU), and no Invocations datapoint at all in 14 days.
        target = variant("ml.g5.2xlarge")
        rec = judge_variant(target, published(target, gpu=0.0, cpu=3.0, invocations=None))

        assert rec.finding is Finding.IDLE
        cost = hosting_monthly("ml.g5.2xlarge")
        assert rec.monthly_cost == cost == Decimal("1105.95")
        assert rec.monthly_savings == cost
        assert rec.confidence is Confidence.HIGH
        reason_with(rec, "no invocations", "no datapoint")
        # Deleting an endpoint (or scaling it to zero) is its owner's call: advice, not a button.
        assert_advice_only(rec)
        assert rec.held_back is not None and "owner" in rec.held_back
        assert rec.sagemaker is not None and rec.sagemaker.invocations is None
        assert rec.sagemaker.model_name == "chat-model"  # what the owner's new endpoint config names

    def test_no_requests_but_one_gpu_of_eight_works_is_not_idle(self) -> None:
        # An 8-GPU ml.g5.48xlarge with no Invocations, yet GPUUtilization reads 30 (summed over 8 GPUs): one GPU at
        # 30 % and seven idle, or all at 3.75 %. Work the endpoint does not count as requests (a batch loop in the
        # container, an asynchronous queue): dividing by 8 must not hide it under the 5 % idle line.
        target = variant("ml.g5.48xlarge")
        rec = judge_variant(target, published(target, gpu=30.0, gpu_max=35.0, invocations=None))

        assert rec.finding is not Finding.IDLE
        assert rec.finding is Finding.INSUFFICIENT_DATA
        assert rec.monthly_savings in (None, Decimal(0))

    def test_no_requests_but_a_busy_cpu_is_not_idle(self) -> None:
        # No Invocations, GPUs quiet, but 16 of the 48 vCPUs busy around the clock: the container does work of its
        # own (pre-processing, a CPU model). "The GPUs and CPUs show no work" does not hold.
        target = variant("ml.g5.12xlarge")
        rec = judge_variant(target, published(target, gpu=0.0, cpu=1600.0, invocations=None))

        assert rec.finding is not Finding.IDLE

    def test_requests_arrive_but_gpu_utilization_is_missing_is_insufficient_data_never_sized(self) -> None:
        # Requests every hour and CPUUtilization published, but no GPUUtilization for a GPU type: nothing says
        # what the GPUs do, so no smaller type may be sized on an assumed 0 %.
        target = variant("ml.g5.12xlarge")
        rec = judge_variant(
            target, published(target, gpu=None, gpu_max=None, gpu_memory=None, invocations=STEADY_TRAFFIC)
        )

        assert rec.finding is Finding.INSUFFICIENT_DATA
        assert rec.target_type is None
        assert rec.monthly_savings in (None, Decimal(0))
        assert "GPUUtilization" in text(rec)

    def test_requests_and_no_instance_metrics_at_all_is_insufficient_data(self) -> None:
        target = variant("ml.g5.2xlarge")
        raw = published(target, gpu=None, gpu_max=None, gpu_memory=None, cpu=None, memory=None, invocations=50.0)
        rec = judge_variant(target, raw)

        assert rec.finding is Finding.INSUFFICIENT_DATA
        assert rec.confidence is Confidence.LOW

    def test_nothing_read_at_all_is_insufficient_data_not_idle(self) -> None:
        # Neither Invocations nor instance metrics (CloudWatch unreadable, or a wrong dimension): silence is not
        # idleness.
        target = variant("ml.g5.2xlarge")
        for raw in (None, published(target, gpu=None, gpu_max=None, gpu_memory=None, cpu=None, memory=None)):
            rec = judge_variant(target, raw)
            assert rec.finding is Finding.INSUFFICIENT_DATA, raw
            assert rec.monthly_savings in (None, Decimal(0))

    @pytest.mark.parametrize("created_days_ago", [2, 90])
    def test_two_days_of_metrics_is_too_little_to_call_idle(self, created_days_ago: int) -> None:
        # A new endpoint, or an old one whose metrics were read for two days only.
        target = variant("ml.g5.2xlarge", created=NOW - timedelta(days=created_days_ago))
        raw = published(target, gpu=lambda s: 0.0 if s >= END - 2 * 86400 else None, cpu=None)
        rec = judge_variant(target, raw)

        assert rec.finding is Finding.INSUFFICIENT_DATA
        assert rec.monthly_savings in (None, Decimal(0))


class TestOverprovisionedEndpoints:
    def test_a_4_gpu_g5_12xlarge_reading_40_pct_is_10_pct_per_gpu_and_fits_one_gpu(self) -> None:
        # ml.g5.12xlarge (4 x A10G) whose GPUUtilization reads 40: summed over 4 GPUs, 10 % per GPU. Memory 40
        # summed: 10 % of each 22 GiB GPU, 8.9 GiB in all. Latency low (20 ms). One A10G carries 40 % of a GPU;
        # ml.g5.2xlarge (1 x A10G, 8 vCPUs, 32 GiB) also carries its CPU (150 % of a vCPU) and RAM (10 % of 192 GiB).
        target = variant("ml.g5.12xlarge")
        raw = published(
            target,
            gpu=40.0,
            gpu_max=60.0,
            gpu_memory=40.0,
            cpu=150.0,
            memory=10.0,
            invocations=STEADY_TRAFFIC,
            latency_ms=20.0,
        )
        rec = judge_variant(target, raw)

        assert rec.finding is Finding.OVERPROVISIONED
        assert rec.target_type is not None
        target_spec = CATALOG.spec(ec2_type(rec.target_type))
        assert target_spec is not None
        assert target_spec.accelerator_model == "A10G"
        count = rec.sagemaker.target_instance_count if rec.sagemaker else None
        assert count is not None
        assert target_spec.accelerator_count * count < 4  # fewer GPUs in all
        # GPU memory kept: at least the observed peak (10 % of each of 4 GPUs) x 1.2.
        observed_peak_mib = 40.0 / 100 * A10G_MIB
        total_mib = target_spec.accelerator_memory_mib * target_spec.accelerator_count * count
        assert total_mib >= observed_peak_mib * POLICY.memory_headroom
        assert rec.target_type == "ml.g5.2xlarge" and count == 1  # the cheapest that carries it
        assert rec.monthly_savings == hosting_monthly("ml.g5.12xlarge") - hosting_monthly("ml.g5.2xlarge")
        # The per-GPU figure is what people read; the summed 40 % is labelled as such, never "40 % per GPU" for
        # today's GPUs (40 % per GPU is the projection on the one target GPU).
        measured = reason_with(rec, "10% per GPU", "GPUUtilization 40% summed over 4 GPUs")
        assert "40% per GPU" not in measured
        reason_with(rec, "projected GPU p95 40% per GPU")
        assert rec.evidence.accelerator_p95 == 10.0
        assert rec.sagemaker is not None and rec.sagemaker.gpu_summed_p95_pct == 40.0
        reason_with(rec, "ModelLatency 20 ms")
        reason_with(rec, "model server", "1 GPU")
        # One model, one variant, nothing else in its config: the workflow's blue/green update carries it out.
        assert rec.actionable is True and rec.action is ActionKind.UPDATE_ENDPOINT
        assert rec.held_back is None

    def test_summed_gpu_utilization_is_divided_by_the_gpus_and_enhanced_per_gpu_series_are_read_as_published(
        self,
    ) -> None:
        # The same ml.g5.48xlarge (8 x A10G) reading 160 summed (20 % per GPU, the mean of eight), twice: its work
        # spread over the eight GPUs (enhanced metrics: each at 20 %), or one GPU at 90 % and seven at 10 %. Summed,
        # both fit four GPUs at 40 %; the per-GPU series say the busy GPU's own work stays at 90 % on any A10G.
        target = variant("ml.g5.48xlarge")
        base = published(target, gpu=160.0, gpu_max=160.0, gpu_memory=40.0, cpu=150.0, memory=10.0,
                         invocations=STEADY_TRAFFIC)  # fmt: skip

        def per_gpu(*levels: float) -> VariantSeries:
            return replace(
                base,
                gpu_accelerators_avg=tuple(series(FIVE_MINUTES, level) for level in levels),
                gpu_accelerators_max=tuple(series(HOUR, level) for level in levels),
            )

        pinned_gpu = per_gpu(90.0, *[10.0] * 7)
        usage = summarize_variant(pinned_gpu, *units(target.instance_type))
        assert usage.gpu is not None and usage.gpu.p95 == 20.0  # summed 160 over 8 GPUs
        assert usage.gpu_summed_p95 == 160.0
        assert usage.gpu_busiest is not None and usage.gpu_busiest.p95 == 90.0  # as published: never divided

        spread = judge_variant(target, per_gpu(*[20.0] * 8))
        pinned = judge_variant(target, pinned_gpu)

        assert spread.finding is Finding.OVERPROVISIONED and spread.target_type is not None
        reason_with(spread, "20% per GPU", "GPUUtilization 160% summed over 8 GPUs")
        assert pinned.target_type is None, "a GPU at 90 % fits no fewer A10Gs, whatever the sum"
        reason_with(pinned, "the busiest GPU alone p95 90%", "enhanced metrics")

    def test_a_variant_with_two_instances_is_never_advised_below_two(self) -> None:
        # Two ml.g5.12xlarge at 40 summed each (80 % of one GPU in all): one instance of anything would carry it,
        # but SageMaker wants a production variant in two Availability Zones.
        target = variant("ml.g5.12xlarge", 2)
        rec = judge_variant(
            target,
            published(
                target, gpu=40.0, gpu_max=50.0, gpu_memory=40.0, cpu=150.0, memory=10.0, invocations=STEADY_TRAFFIC
            ),
        )

        assert rec.finding is Finding.OVERPROVISIONED
        assert rec.sagemaker is not None
        assert rec.sagemaker.target_instance_count == MIN_HA_INSTANCES
        assert rec.target_type == "ml.g5.2xlarge"
        reason_with(rec, "one per Availability Zone")

    def test_fewer_instances_stop_at_two(self) -> None:
        # Four ml.g5.2xlarge at 5 % each: one would do, two is the floor.
        target = variant("ml.g5.2xlarge", 4)
        rec = judge_variant(target, published(target, gpu=5.0, gpu_max=8.0, invocations=STEADY_TRAFFIC))

        assert rec.finding is Finding.OVERPROVISIONED
        assert rec.sagemaker is not None
        assert rec.target_type == "ml.g5.2xlarge"
        assert rec.sagemaker.target_instance_count == 2
        assert rec.monthly_savings == hosting_monthly("ml.g5.2xlarge", 2)

    def test_a_lone_light_instance_with_nothing_cheaper_is_optimized(self) -> None:
        # ml.g5.2xlarge is the smallest A10G SageMaker hosts here; one instance cannot be fewer.
        target = variant("ml.g5.2xlarge", 1)
        rec = judge_variant(target, published(target, gpu=5.0, invocations=STEADY_TRAFFIC))

        assert rec.finding is Finding.OPTIMIZED
        assert rec.target_type is None

    def test_a_busy_4_gpu_variant_is_optimized(self) -> None:
        # 280 summed = 70 % per GPU on all four: nothing smaller carries it.
        target = variant("ml.g5.12xlarge")
        rec = judge_variant(
            target, published(target, gpu=280.0, gpu_max=360.0, gpu_memory=240.0, invocations=STEADY_TRAFFIC)
        )

        assert rec.finding is Finding.OPTIMIZED
        assert rec.evidence.accelerator_p95 == 70.0

    def test_without_gpu_memory_a_smaller_gpu_memory_is_never_advised(self) -> None:
        # GPUMemoryUtilization not read: whether the model fits one A10G instead of four is unknown.
        target = variant("ml.g5.12xlarge")
        rec = judge_variant(target, published(target, gpu=40.0, gpu_memory=None, invocations=STEADY_TRAFFIC))

        if rec.target_type is not None:
            spec = CATALOG.spec(ec2_type(rec.target_type))
            assert spec is not None
            assert spec.accelerator_count * spec.accelerator_memory_mib >= 4 * A10G_MIB
        assert rec.finding in (Finding.OPTIMIZED, Finding.OVERPROVISIONED)
        reason_with(rec, "GPUMemoryUtilization not published")
        assert rec.confidence is not Confidence.HIGH

    def test_application_auto_scaling_keeps_its_count(self) -> None:
        # Four ml.g5.2xlarge at 15 % each right now, but Application Auto Scaling (2-8) sets the count: at busy
        # hours there may have been eight. The current count times the per-instance load is not the load, and the
        # count is the scaling policy's, not a one-click change.
        plain = variant("ml.g5.2xlarge", 4)
        scaled = variant("ml.g5.2xlarge", 4, autoscaling=(2, 8))
        shape = {"gpu": 15.0, "gpu_max": 25.0, "invocations": STEADY_TRAFFIC}

        unscaled = judge_variant(plain, published(plain, **shape))
        assert unscaled.sagemaker is not None and unscaled.sagemaker.target_instance_count == 2  # the contrast

        rec = judge_variant(scaled, published(scaled, **shape))
        assert rec.sagemaker is not None
        assert rec.sagemaker.scaled_by.startswith("Application Auto Scaling")
        assert rec.sagemaker.target_instance_count in (None, 4)
        assert_advice_only(rec)

    def test_an_autoscaled_variant_may_change_type_at_its_count(self) -> None:
        # Two ml.g5.12xlarge scaled 2-6, each at 40 summed (10 % per GPU): each instance's load fits one A10G,
        # whatever the count the policy picks. The type changes; the count stays the policy's; the scalable target is
        # deregistered around the update (SageMaker refuses the update otherwise).
        target = variant("ml.g5.12xlarge", 2, autoscaling=(2, 6))
        raw = published(target, gpu=40.0, gpu_max=60.0, gpu_memory=40.0, cpu=150.0, memory=10.0, invocations=900.0)
        rec = judge_variant(target, raw)

        assert rec.finding is Finding.OVERPROVISIONED
        assert rec.target_type == "ml.g5.2xlarge"
        assert rec.sagemaker is not None and rec.sagemaker.target_instance_count == 2
        assert rec.held_back is not None and "Application Auto Scaling" in rec.held_back
        reason_with(rec, "deregister the variant")
        assert_advice_only(rec)


class TestSchedulableEndpoints:
    def test_traffic_only_in_office_hours_is_schedulable_advice(self) -> None:
        # An internal assistant used Monday to Friday 08-19 UTC: GPUs at 50 % then, 0 at night and weekends, and
        # Invocations only in those hours, both weeks. 113 of the week's 168 hours pay for nothing; an endpoint
        # cannot be stopped, so this is advice (inference components, or delete and re-create).
        target = variant("ml.g5.2xlarge")
        raw = published(
            target,
            gpu=during_office_hours(50.0),
            gpu_memory=40.0,
            cpu=during_office_hours(120.0, 5.0),
            invocations=during_office_hours(3000.0, None),
            latency_ms=during_office_hours(30.0, None),
        )
        rec = judge_variant(target, raw)

        assert rec.finding is Finding.SCHEDULABLE
        assert rec.evidence.idle_hours_per_week == 113
        assert rec.evidence.schedule
        cost = hosting_monthly("ml.g5.2xlarge")
        assert rec.monthly_savings == (cost * Decimal(113) / 168).quantize(Decimal("0.01"))
        assert_advice_only(rec)
        assert rec.held_back is not None and "advice only" in rec.held_back
        reason_with(rec, "2 weeks")


class TestVariantsOfOneEndpoint:
    def test_a_weight_0_variant_without_requests_beside_a_serving_one_is_idle_and_removed(self) -> None:
        # "AllTraffic" (weight 1) serves; "Standby" (weight 0) gets only requests that name it, and none came in 14
        # days. It is idle; the advice is removing the variant, not deleting the endpoint.
        serving = variant("ml.g5.2xlarge", name="AllTraffic", weight=1.0)
        standby = variant("ml.g5.2xlarge", name="Standby", weight=0.0)
        recs = judge_variants(
            (serving, published(serving, gpu=30.0, invocations=STEADY_TRAFFIC)),
            (standby, published(standby, gpu=0.0, cpu=2.0, invocations=None)),
        )

        rec = recs["Standby"]
        assert rec.finding is Finding.IDLE
        reason_with(rec, "remove variant Standby")
        assert "delete endpoint" not in text(rec)
        assert_advice_only(rec)
        assert recs["AllTraffic"].finding is not Finding.IDLE

    def test_a_weighted_canary_without_invocations_is_not_called_idle(self) -> None:
        # "Canary" carries half the weight while "Blue" served 20,000 requests: SageMaker routed ~20,000 requests to
        # it. No Invocations datapoint for it says its metric was not read (or its requests all failed), not that
        # nothing reached it: insufficient data, never idle.
        blue = variant("ml.g5.2xlarge", name="Blue", weight=0.5)
        canary = variant("ml.g5.2xlarge", name="Canary", weight=0.5)
        recs = judge_variants(
            (blue, published(blue, gpu=30.0, invocations=60.0)),
            (canary, published(canary, gpu=0.0, cpu=2.0, invocations=None)),
        )

        rec = recs["Canary"]
        assert rec.finding is Finding.INSUFFICIENT_DATA
        assert "weight" in text(rec)

    def test_a_variant_of_unknown_weight_beside_a_serving_one_is_not_called_idle(self) -> None:
        blue = variant("ml.g5.2xlarge", name="Blue", weight=None)
        green = variant("ml.g5.2xlarge", name="Green", weight=None)
        recs = judge_variants(
            (blue, published(blue, gpu=30.0, invocations=60.0)),
            (green, published(green, gpu=0.0, cpu=2.0, invocations=None)),
        )

        assert recs["Green"].finding is Finding.INSUFFICIENT_DATA


class TestGates:
    def test_the_opt_out_tag_excludes_it(self) -> None:
        target = variant("ml.g5.2xlarge", tags={POLICY.opt_out_tag: "research"})
        rec = judge_variant(target, published(target, gpu=0.0, invocations=None))

        assert rec.finding is Finding.EXCLUDED
        reason_with(rec, "opted out", POLICY.opt_out_tag)
        assert rec.monthly_savings in (None, Decimal(0))

    def test_an_updating_endpoint_is_judged_later(self) -> None:
        target = variant("ml.g5.2xlarge", status="Updating")
        rec = judge_variant(target, published(target, gpu=0.0, invocations=None))

        assert rec.finding is Finding.EXCLUDED


class TestPerGpuNormalisation:
    @pytest.mark.parametrize("instance_type", ["ml.g5.2xlarge", "ml.g5.48xlarge"])
    def test_the_same_per_gpu_load_gives_the_same_per_gpu_evidence(self, instance_type: str) -> None:
        # 30 % per GPU: GPUUtilization 30 on one GPU, 240 on eight. People read 30 % on both.
        gpus, _ = units(instance_type)
        target = variant(instance_type)
        raw = published(target, gpu=30.0 * gpus, gpu_max=45.0 * gpus, gpu_memory=50.0 * gpus, invocations=500.0)
        usage = summarize_variant(raw, *units(instance_type))
        rec = judge_variant(target, raw)

        assert usage.gpu is not None and usage.gpu.p95 == pytest.approx(30.0)
        assert usage.gpu_summed_p95 == pytest.approx(30.0 * gpus)
        assert usage.gpu_burst == pytest.approx(45.0)
        assert usage.gpu_memory_peak_pct == pytest.approx(50.0)
        assert rec.evidence.accelerator_p95 == 30.0
        assert rec.evidence.accelerator_burst == 45.0
        assert rec.evidence.memory_peak_mib == round(0.5 * A10G_MIB)  # per GPU
        assert rec.sagemaker is not None and rec.sagemaker.gpus_per_instance == gpus
        assert rec.sagemaker.gpu_summed_p95_pct == 30.0 * gpus
        assert "30% per GPU" in text(rec)


class TestVariantSummary:
    def test_two_full_weeks_are_two_weeks(self) -> None:
        target = variant()
        usage = summarize_variant(published(target, gpu=10.0, invocations=during_office_hours(10.0, None)), 1, 8)

        assert usage.weeks_observed == 2
        assert usage.busy_weeks_share == 1.0
        assert usage.observed_days == 14.0
        assert usage.coverage == 1.0
        assert usage.invocation_hours == 2 * 5 * 11
        assert usage.invocations == 2 * 5 * 11 * 10.0


# ---------------------------------------------------------------------------------------------
# Notebook instances


def notebook(
    status: str = "InService",
    *,
    running_days: float = 5.0,
    instance_type: str = "ml.g5.xlarge",
    lifecycle_config: str = "",
    tags: Mapping[str, str] | None = None,
) -> NotebookInstance:
    return NotebookInstance(
        account_id=ACCOUNT,
        region=REGION,
        name="research-nb",
        arn=f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:notebook-instance/research-nb",
        status=status,
        instance_type=instance_type,
        created=NOW - timedelta(days=120),
        last_modified=NOW - timedelta(days=running_days),
        lifecycle_config=lifecycle_config,
        volume_gb=50,
        tags=tags or {},
    )


def agent_series(target: NotebookInstance, gpu: Shape, *, gpus: int = 1, memory_mib: Shape = 400.0) -> NotebookSeries:
    """The CloudWatch agent's nvidia_smi series (per GPU, NotebookInstanceName), published while the notebook runs."""
    since = int(target.last_modified.timestamp())
    return NotebookSeries(
        resource_id=target.resource_id,
        window_start=WINDOW_START,
        window_end=NOW,
        gpu_avg=tuple(series(FIVE_MINUTES, gpu, start=since) for _ in range(gpus)),
        gpu_max=tuple(series(HOUR, gpu, start=since) for _ in range(gpus)),
        memory_used_max=tuple(series(HOUR, memory_mib, start=since) for _ in range(gpus)),
    )


def judge_notebook(
    target: NotebookInstance, raw: NotebookSeries | None = None, book: SageMakerPriceBook = BOOK_WITH_NOTEBOOKS
) -> Recommendation:
    usage = {target.resource_id: summarize_notebook(raw)} if raw is not None else {}
    (rec,) = analyze_notebooks([target], usage, CATALOG, book, POLICY, NOW)
    return rec


class TestNotebooks:
    def test_in_service_5_days_without_agent_series_is_left_running_not_idle(self) -> None:
        # SageMaker publishes no usage for a notebook instance: 5 days InService is all that is known. Whether
        # someone works in it is not measured, so it is not idle; the advice is an idle auto-stop configuration,
        # and no saving is claimed.
        target = notebook(running_days=5)
        for raw in (None, NotebookSeries(target.resource_id, WINDOW_START, NOW)):
            rec = judge_notebook(target, raw)

            assert rec.finding is Finding.LEFT_RUNNING
            assert rec.monthly_cost == monthly(NOTEBOOK_PRICE)
            assert rec.monthly_cost_after is None
            assert rec.monthly_savings is None and rec.net_savings is None
            assert rec.confidence is not Confidence.HIGH
            assert_advice_only(rec)
            reason_with(rec, "5.0 days")
            reason_with(rec, "not measured", "not called idle")
            reason_with(rec, "auto-stop")

    def test_left_running_without_a_notebook_price_says_so(self) -> None:
        rec = judge_notebook(notebook(running_days=5), book=BOOK)

        assert rec.finding is Finding.LEFT_RUNNING
        assert rec.monthly_cost is None and rec.monthly_savings is None
        reason_with(rec, "no notebook price")

    def test_started_this_morning_is_not_left_running(self) -> None:
        rec = judge_notebook(notebook(running_days=0.2))

        assert rec.finding is Finding.INSUFFICIENT_DATA

    def test_agent_series_quiet_for_the_whole_run_is_idle(self) -> None:
        # The lifecycle configuration runs the CloudWatch agent: its GPU read 0 % for 5 days.
        target = notebook(running_days=5, lifecycle_config="cw-agent")
        rec = judge_notebook(target, agent_series(target, 0.0))

        assert rec.finding is Finding.IDLE
        assert rec.monthly_savings == monthly(NOTEBOOK_PRICE)
        reason_with(rec, "NotebookInstanceName", "no work")
        assert rec.actionable is True and rec.action is ActionKind.STOP_NOTEBOOK  # its volume is kept

    def test_agent_series_that_went_silent_while_it_runs_is_not_idle(self) -> None:
        # Quiet for 4 days, then nothing for the last day while it stays InService: the agent stopped (a kernel or
        # agent restart), and what the GPU did since is unknown. Silence is not quiet.
        target = notebook(running_days=5, lifecycle_config="cw-agent")
        rec = judge_notebook(target, agent_series(target, lambda stamp: 0.0 if stamp < END - 86400 else None))

        assert rec.finding is Finding.INSUFFICIENT_DATA
        reason_with(rec, "not measured")

    def test_agent_series_showing_work_is_not_idle(self) -> None:
        # Someone trains in it every afternoon: 70 % for a few hours a day.
        target = notebook(running_days=5, lifecycle_config="cw-agent")
        afternoons = lambda stamp: 70.0 if 13 <= datetime.fromtimestamp(stamp, UTC).hour < 17 else 0.0  # noqa: E731
        rec = judge_notebook(target, agent_series(target, afternoons))

        assert rec.finding not in (Finding.IDLE, Finding.LEFT_RUNNING)
        assert rec.finding is Finding.OPTIMIZED
        assert rec.monthly_savings in (None, Decimal(0))

    def test_one_busy_gpu_of_four_is_work(self) -> None:
        target = notebook(running_days=5, instance_type="ml.g5.12xlarge", lifecycle_config="cw-agent")
        raw = agent_series(target, 0.0, gpus=4)
        raw = replace(
            raw,
            gpu_avg=(series(FIVE_MINUTES, 60.0, start=int(target.last_modified.timestamp())), *raw.gpu_avg[1:]),
            gpu_max=(series(HOUR, 80.0, start=int(target.last_modified.timestamp())), *raw.gpu_max[1:]),
        )
        rec = judge_notebook(target, raw)

        assert rec.finding is not Finding.IDLE

    @pytest.mark.parametrize("status", ["Stopped", "Stopping", "Failed"])
    def test_a_notebook_that_is_not_in_service_costs_no_compute_and_is_not_advised(self, status: str) -> None:
        # Stopped 5 days ago: LastModifiedTime is the stop, not a start. Only its ML storage volume is billed.
        target = notebook(status, running_days=5)
        rec = judge_notebook(target)

        assert rec.finding is Finding.EXCLUDED
        assert rec.monthly_cost in (None, Decimal(0))
        assert rec.monthly_savings in (None, Decimal(0))
        assert status in text(rec)

    def test_opted_out_notebook_is_excluded(self) -> None:
        rec = judge_notebook(notebook(tags={POLICY.opt_out_tag: ""}))

        assert rec.finding is Finding.EXCLUDED


# ---------------------------------------------------------------------------------------------
# Training jobs


def job(day: int, instance_type: str = "ml.g5.12xlarge", *, hours: float = 4.0, count: int = 1) -> TrainingJob:
    started = NOW - timedelta(days=day, hours=10)
    return TrainingJob(
        name=f"nightly-retrain-{started:%Y-%m-%d-%H-%M-%S}-123",
        status="Completed",
        instance_type=instance_type,
        instance_count=count,
        started=started,
        ended=started + timedelta(hours=hours),
        training_seconds=int(hours * 3600),
        billable_seconds=int(hours * 3600),
    )


def job_series(
    training: TrainingJob, *, gpu: float, gpu_memory: float | None, cpu: float | None, memory: float | None
) -> JobSeries:
    """A job's hosts as /aws/sagemaker/TrainingJobs publishes them (Host = <job>/algo-N), summed over GPUs and
    vCPUs, while it runs."""
    assert training.started is not None and training.ended is not None
    start, end = int(training.started.timestamp()), int(training.ended.timestamp())
    hosts = range(training.instance_count)
    return JobSeries(
        job=training.name,
        gpu_avg=tuple(series(FIVE_MINUTES, gpu, start, end) for _ in hosts),
        gpu_memory_max=tuple(series(HOUR, gpu_memory, start, end) for _ in hosts),
        cpu_avg=tuple(series(FIVE_MINUTES, cpu, start, end) for _ in hosts),
        memory_max=tuple(series(HOUR, memory, start, end) for _ in hosts),
    )


def judge_training(
    jobs: Sequence[TrainingJob],
    *,
    gpu: float,
    gpu_memory: float | None = 40.0,
    cpu: float | None = 200.0,
    memory: float | None = 8.0,
    measured: bool = True,
) -> Recommendation:
    instance_type = jobs[0].instance_type
    family = TrainingFamily(ACCOUNT, REGION, training_family(jobs[0].name), instance_type, tuple(jobs))
    usage = {}
    if measured:
        raw = TrainingSeries(
            family.resource_id,
            WINDOW_START,
            NOW,
            tuple(job_series(j, gpu=gpu, gpu_memory=gpu_memory, cpu=cpu, memory=memory) for j in jobs),
        )
        usage[family.resource_id] = summarize_training(raw, units(instance_type)[0])
    (rec,) = analyze_training([family], usage, CATALOG, BOOK, POLICY, NOW)
    return rec


NIGHTLY = [job(day) for day in (1, 2, 3, 4, 5, 6, 7)]


class TestTraining:
    def test_the_family_is_the_run_name(self) -> None:
        assert training_family(NIGHTLY[0].name) == "nightly-retrain"

    def test_jobs_that_used_their_4_gpus_at_15_pct_get_a_smaller_type_for_the_next_run(self) -> None:
        # Seven nightly 4-hour runs on ml.g5.12xlarge (4 x A10G): GPUUtilization 60 summed = 15 % per GPU, GPU
        # memory 10 % per GPU, 2 of 48 vCPUs busy, 8 % of 192 GiB RAM. One A10G carries 60 %; the next run's
        # ResourceConfig is the owner's: advice, never a button.
        rec = judge_training(NIGHTLY, gpu=60.0, gpu_memory=40.0, cpu=200.0, memory=8.0)

        assert rec.finding is Finding.OVERPROVISIONED
        assert rec.target_type is not None
        spec = CATALOG.spec(ec2_type(rec.target_type))
        assert spec is not None
        assert spec.accelerator_model == "A10G" and spec.accelerator_count == 1
        # Host RAM kept: 8 % of 192 GiB is 15.4 GiB, x 1.2 does not fit ml.g5.xlarge's 16 GiB.
        assert spec.memory_mib >= 0.08 * 196608 * POLICY.host_headroom
        assert rec.target_type == "ml.g5.2xlarge"
        reason_with(rec, "15% per GPU")
        assert_advice_only(rec)
        assert rec.held_back is not None and "next run" in rec.held_back
        assert rec.sagemaker is not None
        assert rec.sagemaker.jobs == 7
        assert rec.sagemaker.gpu_hours == 7 * 4 * 4  # jobs x hours x GPUs
        # Priced at a month's pace of the window's 28 instance-hours: 28 x $7.09 x 730 / 336.
        assert rec.monthly_cost == (Decimal("7.09") * 28 * 730 / (14 * 24)).quantize(Decimal("0.01"))
        assert rec.monthly_savings is not None and rec.monthly_savings > 0

    def test_without_host_metrics_a_type_with_fewer_vcpus_is_not_advised(self) -> None:
        # Light GPUs often wait on the input pipeline (CPU): with CPUUtilization and MemoryUtilization not read, a
        # type with a sixth of the vCPUs and RAM could make the next run slower, not cheaper.
        rec = judge_training(NIGHTLY, gpu=60.0, cpu=None, memory=None)

        if rec.target_type is not None:
            spec = CATALOG.spec(ec2_type(rec.target_type))
            assert spec is not None and spec.vcpus >= 48 and spec.memory_mib >= 196608
        # The bundled prices have no 1-GPU A10G type with 48 vCPUs: nothing is advised, and nothing is called right.
        assert rec.finding is Finding.INSUFFICIENT_DATA
        reason_with(rec, "CPUUtilization, MemoryUtilization not read")
        assert_advice_only(rec)

    def test_jobs_that_keep_their_gpus_busy_are_optimized(self) -> None:
        rec = judge_training(NIGHTLY, gpu=320.0, gpu_memory=300.0)

        assert rec.finding is Finding.OPTIMIZED
        reason_with(rec, "80% per GPU")
        assert_advice_only(rec)

    def test_jobs_without_gpu_metrics_are_insufficient_data(self) -> None:
        rec = judge_training(NIGHTLY, gpu=0.0, measured=False)

        assert rec.finding is Finding.INSUFFICIENT_DATA
        assert rec.sagemaker is not None and rec.sagemaker.gpu_hours == 7 * 4 * 4

    def test_without_gpu_memory_no_smaller_type_is_advised(self) -> None:
        rec = judge_training(NIGHTLY, gpu=60.0, gpu_memory=None)

        assert rec.finding is Finding.INSUFFICIENT_DATA
        reason_with(rec, "GPUMemoryUtilization not read")

    def test_a_type_without_a_training_price_is_not_called_right_sized(self) -> None:
        # ml.g5.48xlarge has no bundled training price: nothing can be compared, so nothing is claimed.
        rec = judge_training([job(day, "ml.g5.48xlarge") for day in (1, 2, 3)], gpu=80.0)

        assert rec.finding is Finding.INSUFFICIENT_DATA
        reason_with(rec, "price")
