"""The analyzer: one finding per instance, and the safety rules that keep its advice safe.

Every test states a realistic host and asserts the behaviour people rely on: the finding, the target,
the money (Decimal, 730 h a month), whether the advice is actionable, the confidence, and that the
reasons carry the numbers behind the advice.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rightsizer.domain.analyzer import recommendation_id
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import (
    CENT,
    AcceleratorData,
    AcceleratorKind,
    Confidence,
    DeviceUsage,
    Finding,
    Instance,
    InstanceTypeSpec,
    Recommendation,
    UsageSummary,
    monthly,
)
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from tests.factories import NOW, business_hours_profile, catalog, device, idle_device, instance, prices, usage
from tests.unit._builders import (
    A10G_TOTAL_MIB,
    A100_40_TOTAL_MIB,
    GIB,
    INF1_CORE_MIB,
    L4_TOTAL_MIB,
    L40S_TOTAL_MIB,
    NEURON_V2_CORE_MIB,
    T4_TOTAL_MIB,
    V100_TOTAL_MIB,
    all_offered_catalog,
    analyze,
    g4ad_spec,
    unmeasured_device,
    with_prices,
    with_specs,
)

HEADROOM = Policy().memory_headroom
CPU_TARGET = Policy().target_max_cpu_pct
RANK = {Confidence.LOW: 0, Confidence.MEDIUM: 1, Confidence.HIGH: 2}


# ---------------------------------------------------------------------------------------------
# Helpers


def spec_of(type_name: str, cat: Catalog | None = None) -> InstanceTypeSpec:
    spec = (cat or catalog()).spec(type_name)
    assert spec is not None, type_name
    return spec


def monthly_of(type_name: str, book: PriceBook | None = None) -> Decimal:
    hourly = (book or prices()).hourly(type_name)
    assert hourly is not None, type_name
    return (hourly * 730).quantize(CENT)


def has_reason(rec: Recommendation, *fragments: str) -> bool:
    """True when one single reason contains every fragment (so the numbers belong together)."""
    return any(all(fragment in reason for fragment in fragments) for reason in rec.reasons)


def assert_no_resize(rec: Recommendation) -> None:
    assert rec.target_type is None
    assert rec.actionable is False
    assert rec.monthly_cost_after == rec.monthly_cost
    assert rec.monthly_savings == Decimal("0.00")


def one_of_four_busy(memory_mib: float | None = 10_000.0) -> list[DeviceUsage]:
    """g5.12xlarge serving one model on GPU 0; GPUs 1-3 hold nothing."""
    return [
        device("0", 60.0, memory_mib, A10G_TOTAL_MIB),
        *(
            idle_device(str(i), A10G_TOTAL_MIB)
            if memory_mib is not None
            else device(str(i), 0.0, None, p50=0.0, p99=0.0, peak=1.0)
            for i in (1, 2, 3)
        ),
    ]


def business_hours_cpu() -> list[float]:
    return [30.0 if busy else 2.0 for busy in business_hours_profile()]


# ---------------------------------------------------------------------------------------------
# The eight findings


def test_overprovisioned_g5_12xlarge_using_one_of_four_gpus_moves_to_a_one_gpu_g5() -> None:
    rec = analyze(instance("g5.12xlarge"), usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.OVERPROVISIONED
    target = spec_of(rec.target_type or "")
    assert (target.family, target.accelerator_count, target.accelerator_model) == ("g5", 1, "A10G")
    # 48 vCPUs at p95 20% need ceil(48 x 20 / 70) = 14: the cheapest 1-GPU g5 with >= 14 is g5.8xlarge.
    assert rec.target_type == "g5.8xlarge"
    assert rec.monthly_cost == Decimal("4140.56")  # 5.672 x 730
    assert rec.monthly_cost_after == Decimal("1787.04")  # 2.448 x 730
    assert rec.monthly_savings == Decimal("2353.52")
    assert rec.actionable is True
    assert rec.confidence is Confidence.HIGH
    assert has_reason(rec, "GPU 0: p95 60%", "memory peak 9.8 GiB of 22.5 GiB", "GPUs 1-3 idle")
    assert has_reason(rec, "g5.8xlarge", "1x A10G", "peak x 1.2 (11.7 GiB)", "needs 14", "projected GPU p95 60%")
    assert (rec.evidence.busy_units, rec.evidence.total_units) == (1, 4)


def test_idle_p3_8xlarge_saves_everything_and_notes_the_type_is_no_longer_offered() -> None:
    cat = catalog()
    assert cat.is_offered("p3.8xlarge") is False
    rec = analyze(
        instance("p3.8xlarge"),
        usage([idle_device(str(i), V100_TOTAL_MIB) for i in range(4)], cpu_p95=5.0),
        cat=cat,
    )

    assert rec.finding is Finding.IDLE
    assert rec.target_type is None
    assert rec.monthly_cost == Decimal("8935.20")  # 12.24 x 730
    assert rec.monthly_cost_after == Decimal("0.00")
    assert rec.monthly_savings == rec.monthly_cost
    assert rec.actionable is False
    assert rec.confidence is Confidence.HIGH
    assert has_reason(rec, "all 4 GPUs idle", "p99 below 5%", "peak 1%", "CPU p95 5% of 32 vCPUs")
    assert has_reason(rec, "14.0 days observed", "100% coverage")
    assert has_reason(rec, "p3.8xlarge is no longer offered in us-east-1")


def test_optimized_p4d_training_at_ninety_percent_with_30_of_40_gib() -> None:
    devices = [device(str(i), 95.0, 30 * GIB, A100_40_TOTAL_MIB, p50=90.0, p99=99.0, peak=100.0) for i in range(8)]
    rec = analyze(instance("p4d.24xlarge", uses_efa=True), usage(devices, cpu_p95=50.0))

    assert rec.finding is Finding.OPTIMIZED
    assert_no_resize(rec)
    assert rec.monthly_cost == monthly_of("p4d.24xlarge") == Decimal("16029.08")
    assert rec.confidence is Confidence.HIGH
    assert has_reason(rec, "GPUs 0-7: p95 95%", "peak 100%", "memory peak up to 30.0 GiB of 40.0 GiB")
    assert has_reason(rec, "no cheaper type fits")


def test_underprovisioned_on_memory_pressure_moves_to_a_bigger_memory_gpu() -> None:
    peak = 21 * GIB  # of 22.5 GiB: x 1.2 = 25.2 GiB does not fit an A10G
    rec = analyze(instance("g5.xlarge"), usage([device("0", 60.0, peak, A10G_TOTAL_MIB)], cpu_p95=30.0))

    assert rec.finding is Finding.UNDERPROVISIONED
    target = spec_of(rec.target_type or "")
    assert target.memory_per_unit_mib > spec_of("g5.xlarge").memory_per_unit_mib
    assert target.memory_per_unit_mib >= peak * HEADROOM
    assert rec.target_type == "g6e.xlarge"  # the cheapest single L40S (48 GB)
    assert rec.monthly_cost == Decimal("734.38")
    assert rec.monthly_cost_after == monthly_of("g6e.xlarge") == Decimal("1358.53")
    assert rec.monthly_savings == Decimal("-624.15")
    assert rec.actionable is True
    assert rec.confidence is Confidence.MEDIUM  # cross-family
    assert has_reason(rec, "25.2 GiB exceeds 22.4 GiB per GPU", "out-of-memory")
    assert has_reason(rec, "g6e.xlarge", "1x L40S", "44.7 GiB per GPU")
    assert has_reason(rec, "g5 -> g6e", "A10G -> L40S")


def test_underprovisioned_when_the_gpu_is_pinned_moves_to_a_faster_gpu() -> None:
    pinned = device("0", 99.0, 10_000.0, T4_TOTAL_MIB, p50=97.0, p99=100.0, peak=100.0)
    rec = analyze(instance("g4dn.xlarge"), usage([pinned], cpu_p95=30.0))

    assert rec.finding is Finding.UNDERPROVISIONED
    assert rec.target_type == "g5.xlarge"  # T4 -> A10G; network sized from the measured 0.5 Gbps
    assert rec.monthly_cost_after == monthly_of("g5.xlarge")
    assert rec.monthly_savings == Decimal("383.98") - Decimal("734.38")
    assert rec.actionable is True
    assert rec.confidence is Confidence.MEDIUM
    assert has_reason(rec, "median utilisation 97%", "pinned")
    assert has_reason(rec, "g5.xlarge", "projected GPU p95 53%")


def test_not_gpu_bound_when_cpu_is_saturated_adds_vcpus_and_keeps_the_gpu_model() -> None:
    rec = analyze(instance("g5.2xlarge"), usage([device("0", 30.0, 8000.0, A10G_TOTAL_MIB)], cpu_p95=97.0))

    assert rec.finding is Finding.NOT_GPU_BOUND
    target = spec_of(rec.target_type or "")
    assert target.accelerator_model == "A10G"
    assert target.accelerator_count == 1
    assert target.vcpus >= math.ceil(8 * 97 / CPU_TARGET) == 12
    assert rec.target_type == "g5.4xlarge"
    assert rec.monthly_cost == Decimal("884.76")
    assert rec.monthly_cost_after == Decimal("1185.52")
    assert rec.monthly_savings == Decimal("-300.76")
    assert rec.monthly_savings < 0
    assert rec.actionable is True
    assert rec.confidence is Confidence.HIGH
    assert has_reason(rec, "CPU p95 97%", "GPU p95 is only 30%", "more vCPUs")
    assert has_reason(rec, "g5.4xlarge", "16 vCPUs (needs 12)")


def test_not_gpu_bound_when_the_gpus_are_idle_but_the_cpu_works() -> None:
    devices = [idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)]
    rec = analyze(instance("g5.12xlarge"), usage(devices, cpu_p95=50.0))

    assert rec.finding is Finding.NOT_GPU_BOUND
    assert_no_resize(rec)
    assert has_reason(rec, "all 4 GPUs idle", "CPU p95 50% of 48 vCPUs", "CPU instance type")


def test_schedulable_business_hours_saves_the_idle_hours() -> None:
    devices = [device("0", 70.0, 8000.0, A10G_TOTAL_MIB)]
    summary = usage(devices, cpu_p95=30.0, hourly_peak=business_hours_profile(), hourly_cpu=business_hours_cpu())
    rec = analyze(instance("g5.xlarge"), summary)

    assert rec.finding is Finding.SCHEDULABLE
    idle_hours = 168 - 5 * 11  # Mon-Fri 08-19 busy
    cost = Decimal("734.38")
    saved = (cost * idle_hours / 168).quantize(CENT)
    assert rec.target_type is None
    assert rec.monthly_cost == cost
    assert rec.monthly_savings == saved == Decimal("493.96")
    assert rec.monthly_cost_after == cost - saved
    assert rec.actionable is False  # a stop schedule, not an in-place resize
    assert rec.confidence is Confidence.HIGH
    assert rec.evidence.idle_hours_per_week == idle_hours
    assert rec.evidence.schedule == "Mon-Fri 08:00-19:00 UTC"
    assert has_reason(rec, "Mon-Fri 08:00-19:00 UTC", "idle 113 of 168 hours")


def test_schedule_beats_a_smaller_resize_and_mentions_the_resize() -> None:
    summary = usage(
        one_of_four_busy(),
        cpu_p95=20.0,
        hourly_peak=business_hours_profile(),
        hourly_cpu=business_hours_cpu(),
    )
    rec = analyze(instance("g5.12xlarge"), summary)

    # Stopping 113 of 168 hours saves 2785.02; resizing to g5.8xlarge saves 2353.52.
    assert rec.finding is Finding.SCHEDULABLE
    assert rec.monthly_savings == (Decimal("4140.56") * 113 / 168).quantize(CENT) == Decimal("2785.02")
    assert has_reason(rec, "also possible: resizing to g5.8xlarge", "$2,353.52/month")


def test_schedule_needs_a_full_week_of_history() -> None:
    summary = usage(
        [device("0", 70.0, 8000.0, A10G_TOTAL_MIB)],
        cpu_p95=30.0,
        days=5.0,
        hourly_peak=business_hours_profile(),
        hourly_cpu=business_hours_cpu(),
    )
    rec = analyze(instance("g5.xlarge"), summary)

    assert rec.finding is not Finding.SCHEDULABLE


@pytest.mark.parametrize("summary", [None, usage([])], ids=["no-summary", "no-devices"])
def test_insufficient_data_without_gpu_metrics(summary: UsageSummary | None) -> None:
    rec = analyze(instance("g5.xlarge"), summary)

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert rec.monthly_cost == Decimal("734.38")
    assert rec.alternatives == ()
    assert has_reason(rec, "no GPU metrics in the last 14 days", "nvidia_gpu")


def test_insufficient_data_for_neuron_names_neuron_monitor() -> None:
    rec = analyze(instance("inf2.xlarge"), usage([]))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert has_reason(rec, "no NeuronCore metrics", "neuron-monitor")


def test_insufficient_data_with_only_two_days_of_history() -> None:
    idle = [idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)]
    rec = analyze(instance("g5.12xlarge"), usage(idle, cpu_p95=5.0, days=2.0))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert has_reason(rec, "only 2.0 days of GPU metrics", "at least 3")


def test_insufficient_data_for_amd_g4ad() -> None:
    base = catalog()
    cat = base if base.spec("g4ad.xlarge") else with_specs(base, g4ad_spec())
    assert spec_of("g4ad.xlarge", cat).accelerator_kind is AcceleratorKind.UNMONITORED
    # Even a usage summary that looks idle is not trusted: the agent cannot read AMD GPUs.
    rec = analyze(instance("g4ad.xlarge"), usage([idle_device("0", 8192.0)], cpu_p95=2.0), cat=cat)

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert rec.monthly_cost == monthly_of("g4ad.xlarge") == Decimal("276.33")
    assert has_reason(rec, "Radeon-Pro-V520", "no utilisation metrics")


def test_insufficient_data_when_the_type_is_not_in_the_catalog() -> None:
    rec = analyze(instance("g9.xlarge"), usage([device("0", 50.0, 1000.0)]))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert rec.target_type is None
    assert rec.actionable is False
    assert has_reason(rec, "g9.xlarge is not in the instance catalog")


# ---------------------------------------------------------------------------------------------
# Excluded hosts: reported, never resized


@pytest.mark.parametrize("value", ["", "true", "until 2027, ask #ml-infra"])
def test_opt_out_tag_with_any_value_excludes(value: str) -> None:
    host = instance("g5.12xlarge", tags={"rightsizer:ignore": value})
    rec = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.EXCLUDED
    assert_no_resize(rec)
    assert rec.monthly_cost == Decimal("4140.56")
    assert has_reason(rec, "opted out by tag rightsizer:ignore")
    if value:
        assert has_reason(rec, repr(value))


@pytest.mark.parametrize(
    ("host", "fragment"),
    [
        (instance("g5.12xlarge", lifecycle="spot"), "Spot instance"),
        (instance("g5.12xlarge", state="stopped"), "stopped"),
        (instance("g5.12xlarge", root_device_type="instance-store"), "instance-store root"),
    ],
    ids=["spot", "stopped", "instance-store"],
)
def test_spot_stopped_and_instance_store_hosts_are_excluded(host: Instance, fragment: str) -> None:
    rec = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.EXCLUDED
    assert_no_resize(rec)
    assert rec.alternatives == ()
    assert has_reason(rec, fragment)


def test_stopped_host_costs_nothing_and_is_reported() -> None:
    rec = analyze(instance("p3.8xlarge", state="stopped"), usage([]))

    assert rec.finding is Finding.EXCLUDED
    assert rec.state == "stopped"
    assert rec.monthly_cost == Decimal("0.00")
    assert rec.monthly_savings == Decimal("0.00")


def test_spot_host_is_costed_at_the_spot_price() -> None:
    book = replace(prices(), spot={"g5.12xlarge": Decimal("2.0123")})
    rec = analyze(instance("g5.12xlarge", lifecycle="spot"), usage(one_of_four_busy()), book=book)

    assert rec.finding is Finding.EXCLUDED
    assert rec.monthly_cost == Decimal("1468.98")  # 2.0123 x 730 = 1468.979
    assert rec.monthly_savings == Decimal("0.00")


def test_asg_member_is_excluded_and_names_the_group_and_the_would_be_target() -> None:
    host = instance("g5.12xlarge", asg_name="gpu-workers")
    rec = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.EXCLUDED
    assert rec.actionable is False
    assert rec.asg_name == "gpu-workers"
    assert has_reason(rec, "would be overprovisioned", "Auto Scaling group 'gpu-workers'", "g5.8xlarge")


def test_idle_asg_member_points_at_the_group() -> None:
    host = instance("g5.12xlarge", asg_name="batch-pool")
    rec = analyze(host, usage([idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)], cpu_p95=3.0))

    assert rec.finding is Finding.EXCLUDED
    assert rec.actionable is False
    assert rec.target_type is None
    assert has_reason(rec, "would be idle", "adjust Auto Scaling group 'batch-pool'")


# ---------------------------------------------------------------------------------------------
# Safety: a property-style sweep


HOSTS = {
    # type: (devices, memory.total per device as nvidia-smi reports it)
    "g5.12xlarge": (4, A10G_TOTAL_MIB),
    "p3.2xlarge": (1, V100_TOTAL_MIB),
    "g4dn.xlarge": (1, T4_TOTAL_MIB),
}


@st.composite
def gpu_hosts(draw: st.DrawFn) -> tuple[str, list[DeviceUsage], float]:
    host = draw(st.sampled_from(sorted(HOSTS)))
    count, total = HOSTS[host]
    devices = []
    for index in range(count):
        # Mostly-idle GPUs are drawn often enough that the 1-of-4 and idle cases are exercised.
        quiet = draw(st.booleans())
        top = 6.0 if quiet else 100.0
        p50, p95, p99 = sorted(draw(st.lists(st.floats(0.0, top, allow_nan=False), min_size=3, max_size=3)))
        memory = draw(st.floats(min_value=0.0, max_value=total * (0.06 if quiet else 1.0), allow_nan=False))
        devices.append(device(str(index), p95, memory, total, p50=p50, p99=p99, peak=p99))
    return host, devices, draw(st.floats(min_value=0.0, max_value=100.0, allow_nan=False))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=gpu_hosts())
def test_no_recommendation_ever_breaks_the_sizing_rules(case: tuple[str, list[DeviceUsage], float]) -> None:
    host, devices, cpu_p95 = case
    cat = all_offered_catalog()
    rec = analyze(instance(host), usage(devices, cpu_p95=cpu_p95), cat=cat)
    source = spec_of(host, cat)
    source_acc = cat.accelerator(source)
    assert source_acc is not None

    memory_peak = max(d.memory_used_peak_mib or 0.0 for d in devices)
    busy = [
        d
        for d in devices
        if (d.utilization is not None and d.utilization.p99 >= 5.0)
        or (d.memory_used_peak_mib or 0.0) / (d.memory_total_mib or 1.0) * 100 >= 5.0
    ]
    if any(d.utilization is not None and d.utilization.p99 >= 5.0 for d in devices):
        assert rec.finding is not Finding.IDLE
    if rec.finding is Finding.IDLE:
        assert not busy
        assert rec.monthly_cost_after == Decimal("0.00")

    if rec.target_type is not None:
        target = spec_of(rec.target_type, cat)
        target_acc = cat.accelerator(target)
        assert target_acc is not None
        assert target.memory_per_unit_mib >= memory_peak * HEADROOM
        assert target.compute_units >= len(busy)
        assert target.vcpus >= math.ceil(source.vcpus * cpu_p95 / CPU_TARGET)
        assert "x86_64" in target.architectures
        assert target_acc.compute_capability_tuple >= source_acc.compute_capability_tuple
        if len(busy) > 1 and source.family.startswith("p"):
            assert target.family.startswith("p")
        assert rec.monthly_cost_after == monthly_of(rec.target_type)
    for alternative in rec.alternatives:
        alt = spec_of(alternative.instance_type, cat)
        assert alternative.confidence is Confidence.LOW
        assert alt.accelerator_kind is AcceleratorKind.NEURON
        assert alt.accelerator_memory_mib >= memory_peak * HEADROOM  # one Neuron device per GPU's model
        assert "x86_64" in alt.architectures
    assert rec.monthly_savings == (rec.monthly_cost or Decimal(0)) - (rec.monthly_cost_after or Decimal(0))


# ---------------------------------------------------------------------------------------------
# Safety: one rule per test


def test_unmeasured_gpu_memory_keeps_todays_memory_per_gpu() -> None:
    rec = analyze(instance("g5.12xlarge"), usage(one_of_four_busy(memory_mib=None), cpu_p95=20.0))

    assert rec.target_type is not None
    target = spec_of(rec.target_type)
    assert target.memory_per_unit_mib >= spec_of("g5.12xlarge").memory_per_unit_mib
    assert RANK[rec.confidence] <= RANK[Confidence.MEDIUM]
    assert has_reason(rec, "GPU memory not measured", "targets keep 22.4 GiB per GPU")
    assert rec.alternatives == ()  # no Neuron pointer without a measured model size


def test_unmeasured_memory_blocks_a_move_to_a_smaller_memory_gpu() -> None:
    measured = analyze(
        instance("g6e.xlarge"),
        usage([device("0", 10.0, 4000.0, L40S_TOTAL_MIB)], cpu_p95=20.0, host_memory_pct=20.0),
    )
    unmeasured = analyze(instance("g6e.xlarge"), usage([device("0", 10.0, None)], cpu_p95=20.0, host_memory_pct=20.0))

    assert measured.target_type == "g6.xlarge"  # 4 GiB of model fits a 24 GB L4
    assert unmeasured.finding is Finding.OPTIMIZED  # 48 GB L40S kept: nothing cheaper has that much
    assert_no_resize(unmeasured)
    assert has_reason(unmeasured, "targets keep 44.7 GiB per GPU")


@pytest.mark.parametrize(
    "summary",
    [
        None,
        usage([]),
        usage([idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)], cpu_p95=1.0, days=2.9),
        usage([idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)], cpu_p95=None, days=0.5),
    ],
    ids=["no-summary", "no-devices", "2.9-days", "half-a-day"],
)
def test_missing_gpu_data_never_yields_idle_or_a_target(summary: UsageSummary | None) -> None:
    rec = analyze(instance("g5.12xlarge"), summary)

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)


@pytest.mark.parametrize("peak", [None, 100.0], ids=["no-series", "only-hourly-maxima"])
def test_gpus_without_utilisation_averages_are_not_called_idle(peak: float | None) -> None:
    silent = [replace(unmeasured_device(str(i)), utilization_peak=peak) for i in (1, 2, 3)]
    rec = analyze(instance("g5.12xlarge"), usage([idle_device("0", A10G_TOTAL_MIB), *silent], cpu_p95=3.0))

    assert rec.finding is not Finding.IDLE
    assert rec.monthly_cost_after != Decimal("0.00")


def test_type_no_longer_offered_gets_a_target_but_not_an_actionable_one() -> None:
    light = usage([device("0", 20.0, 6000.0, V100_TOTAL_MIB)], cpu_p95=20.0)
    retired = analyze(instance("p3.2xlarge"), light, cat=catalog())
    offered = analyze(instance("p3.2xlarge"), light, cat=all_offered_catalog())

    assert retired.finding is Finding.OVERPROVISIONED
    assert retired.target_type == offered.target_type == "g4dn.2xlarge"
    assert retired.actionable is False
    assert offered.actionable is True
    assert RANK[retired.confidence] <= RANK[Confidence.MEDIUM]
    assert retired.monthly_cost == Decimal("2233.80")  # 3.06 x 730
    assert retired.monthly_cost_after == Decimal("548.96")
    assert has_reason(retired, "p3.2xlarge is no longer offered in us-east-1", "maintenance window")
    # p3 is Xen, g4dn is Nitro: the reasons say what the AMI needs.
    assert has_reason(retired, "Xen to a Nitro host", "ENA and NVMe")
    assert has_reason(retired, "p3 -> g4dn", "V100-SXM2-16GB -> T4")


@pytest.mark.parametrize(
    ("host", "busy", "total", "per_gpu_memory"),
    [
        ("p3.8xlarge", 2, 4, V100_TOTAL_MIB),
        ("p3.16xlarge", 4, 8, V100_TOTAL_MIB),
        ("p4d.24xlarge", 4, 8, A100_40_TOTAL_MIB),
        ("p4d.24xlarge", 8, 8, A100_40_TOTAL_MIB),
    ],
)
def test_multi_gpu_work_on_a_p_host_never_gets_a_g_family_target(
    host: str, busy: int, total: int, per_gpu_memory: float
) -> None:
    devices = [device(str(i), 20.0, 6 * GIB, per_gpu_memory) for i in range(busy)]
    devices += [idle_device(str(i), per_gpu_memory) for i in range(busy, total)]
    rec = analyze(instance(host), usage(devices, cpu_p95=10.0, host_memory_pct=5.0), cat=all_offered_catalog())

    assert rec.target_type is None or rec.target_type.startswith("p")
    assert all(not alt.instance_type.startswith("g") for alt in rec.alternatives)


def test_the_p_family_rule_is_what_keeps_multi_gpu_work_off_g_hosts() -> None:
    """Control: the same host and work under a non-P family name is moved to a 4-GPU G host."""
    base = all_offered_catalog()
    clone = replace(spec_of("p4d.24xlarge", base), instance_type="x4d.24xlarge")
    cat = with_specs(base, clone)
    book = with_prices(prices(), {"x4d.24xlarge": str(prices().hourly("p4d.24xlarge"))})
    devices = [device(str(i), 20.0, 8 * GIB, A100_40_TOTAL_MIB) for i in range(4)]
    devices += [idle_device(str(i), A100_40_TOTAL_MIB) for i in range(4, 8)]
    summary = usage(devices, cpu_p95=10.0, host_memory_pct=5.0)

    assert analyze(instance("p4d.24xlarge"), summary, cat=cat, book=book).target_type is None
    assert analyze(instance("x4d.24xlarge"), summary, cat=cat, book=book).target_type == "g5.12xlarge"


def test_single_gpu_light_work_on_a_p_host_may_move_to_g() -> None:
    """p3 -> g5/g6 family for light work is allowed (cross-family, so at most medium confidence)."""
    devices = [device("0", 20.0, 6 * GIB, V100_TOTAL_MIB)]
    devices += [idle_device(str(i), V100_TOTAL_MIB) for i in (1, 2, 3)]
    rec = analyze(instance("p3.8xlarge"), usage(devices, cpu_p95=10.0, host_memory_pct=5.0), cat=all_offered_catalog())

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type is not None
    assert spec_of(rec.target_type).family.startswith("g")
    assert spec_of(rec.target_type).accelerator_count == 1
    assert RANK[rec.confidence] <= RANK[Confidence.MEDIUM]
    assert rec.actionable is True


def test_arm64_g5g_is_never_suggested_for_an_x86_host() -> None:
    # g5g.xlarge (T4G, arm64, $0.42/h) is cheaper than g4dn.xlarge ($0.526/h) and would otherwise fit.
    rec = analyze(
        instance("g4dn.2xlarge"),
        usage([device("0", 30.0, 4000.0, T4_TOTAL_MIB)], cpu_p95=20.0, host_memory_pct=10.0),
    )

    assert rec.target_type == "g4dn.xlarge"
    assert rec.actionable is True
    assert rec.confidence is Confidence.HIGH
    for name in (rec.target_type, *(alt.instance_type for alt in rec.alternatives)):
        assert "x86_64" in spec_of(name).architectures


def test_arm64_host_stays_on_arm64() -> None:
    host = replace(instance("g5g.4xlarge"), architecture="arm64")
    rec = analyze(host, usage([device("0", 20.0, 3000.0, T4_TOTAL_MIB)], cpu_p95=10.0, host_memory_pct=10.0))

    assert rec.target_type == "g5g.xlarge"
    assert rec.monthly_cost_after == Decimal("306.60")  # 0.42 x 730
    assert rec.monthly_savings == Decimal("604.44") - Decimal("306.60")
    assert all("arm64" in spec_of(alt.instance_type).architectures for alt in rec.alternatives)


@pytest.mark.parametrize(
    ("host", "total_mib"),
    [("g5.xlarge", A10G_TOTAL_MIB), ("g5.2xlarge", A10G_TOTAL_MIB), ("g6.2xlarge", L4_TOTAL_MIB)],
)
def test_compute_capability_never_decreases(host: str, total_mib: float) -> None:
    # Light enough for a T4 (g4dn.xlarge would be the cheapest fit by price and throughput).
    rec = analyze(instance(host), usage([device("0", 10.0, 4000.0, total_mib)], cpu_p95=20.0, host_memory_pct=20.0))

    assert rec.target_type is not None
    assert not rec.target_type.startswith("g4dn")
    source_acc = catalog().accelerator(spec_of(host))
    target_acc = catalog().accelerator(spec_of(rec.target_type))
    assert source_acc is not None
    assert target_acc is not None
    assert target_acc.compute_capability_tuple >= source_acc.compute_capability_tuple


def test_a10g_host_never_gets_a_t4() -> None:
    rec = analyze(
        instance("g5.xlarge"),
        usage([device("0", 10.0, 4000.0, A10G_TOTAL_MIB)], cpu_p95=20.0, host_memory_pct=20.0),
    )

    assert rec.target_type == "g6.xlarge"  # L4 (8.9): not the cheaper g4dn.xlarge T4 (7.5)
    assert rec.confidence is Confidence.MEDIUM
    assert has_reason(rec, "g5 -> g6", "A10G -> L4")


def test_host_using_efa_keeps_efa() -> None:
    devices = [device("0", 40.0, 20_000.0, A100_40_TOTAL_MIB)]
    devices += [idle_device(str(i), A100_40_TOTAL_MIB) for i in range(1, 8)]
    summary = usage(devices, cpu_p95=10.0, host_memory_pct=5.0)
    with_efa = analyze(instance("p4d.24xlarge", uses_efa=True), summary)
    without = analyze(instance("p4d.24xlarge"), summary)

    assert with_efa.target_type is not None
    assert spec_of(with_efa.target_type).efa_supported
    assert with_efa.target_type == "g6e.8xlarge"
    # Control: without EFA the cheaper g6e.4xlarge (no EFA) is chosen.
    assert without.target_type == "g6e.4xlarge"
    assert not spec_of("g6e.4xlarge").efa_supported


def test_neuron_primary_target_stays_on_the_same_chip() -> None:
    devices = [device(str(i), 40.0, 1000.0, INF1_CORE_MIB) for i in range(4)]
    devices += [idle_device(str(i), INF1_CORE_MIB) for i in range(4, 16)]
    rec = analyze(instance("inf1.6xlarge"), usage(devices, cpu_p95=20.0, host_memory_pct=10.0))

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "inf1.2xlarge"
    assert spec_of("inf1.2xlarge").accelerator_model == "Inferentia"
    assert rec.monthly_cost == Decimal("861.40")
    assert rec.monthly_cost_after == Decimal("264.26")
    assert rec.actionable is True
    assert rec.confidence is Confidence.HIGH
    assert has_reason(rec, "NeuronCores 0-3: p95 40%", "NeuronCores 4-15 idle")
    assert has_reason(rec, "inf1.2xlarge", "4x Inferentia", "per NeuronCore", "needs 7")


def test_neuron_cores_that_publish_nothing_are_unused() -> None:
    """neuron-monitor reports only the NeuronCores an application runs on: silence is not a fault."""
    devices = [device(str(i), 40.0, 1000.0, INF1_CORE_MIB) for i in range(4)]  # cores 4-15 absent
    rec = analyze(instance("inf1.6xlarge"), usage(devices, cpu_p95=20.0, host_memory_pct=10.0))

    assert rec.target_type == "inf1.2xlarge"
    assert (rec.evidence.busy_units, rec.evidence.total_units) == (4, 16)


def test_gpus_that_publish_nothing_are_counted_as_busy() -> None:
    """nvidia-smi lists every GPU: a GPU with no series is a collection fault, so it is kept."""
    rec = analyze(instance("g5.12xlarge"), usage([device("0", 60.0, 10_000.0, A10G_TOTAL_MIB)], cpu_p95=20.0))

    assert rec.target_type is None or spec_of(rec.target_type).accelerator_count >= 4
    assert has_reason(rec, "3 GPU(s) published no metrics and are counted as busy")


@pytest.mark.parametrize(
    ("host", "cores", "busy", "memory"),
    [
        ("trn1.32xlarge", 32, 2, 1.5 * GIB),
        ("inf2.xlarge", 2, 2, 1.5 * GIB),
        ("inf2.8xlarge", 2, 2, 1.5 * GIB),
        ("inf2.24xlarge", 12, 2, 6 * GIB),
    ],
)
def test_other_neuron_chips_only_appear_as_low_confidence_alternatives(
    host: str, cores: int, busy: int, memory: float
) -> None:
    devices = [device(str(i), 40.0, memory, NEURON_V2_CORE_MIB) for i in range(busy)]
    devices += [idle_device(str(i), NEURON_V2_CORE_MIB) for i in range(busy, cores)]
    rec = analyze(instance(host), usage(devices, cpu_p95=1.0, host_memory_pct=2.0, network_gbps=0.1))
    source = spec_of(host)

    if rec.target_type is not None:
        assert spec_of(rec.target_type).accelerator_model == source.accelerator_model
    for alternative in rec.alternatives:
        alt = spec_of(alternative.instance_type)
        assert alt.accelerator_kind is AcceleratorKind.NEURON
        assert alt.accelerator_model != source.accelerator_model
        assert alternative.confidence is Confidence.LOW
        assert "Neuron SDK" in alternative.note
        assert alternative.monthly_cost == monthly_of(alternative.instance_type)


def test_trn1_moves_to_a_smaller_trn1_with_an_inferentia_pointer() -> None:
    devices = [device(str(i), 40.0, 1.5 * GIB, NEURON_V2_CORE_MIB) for i in range(2)]
    devices += [idle_device(str(i), NEURON_V2_CORE_MIB) for i in range(2, 32)]
    rec = analyze(instance("trn1.32xlarge"), usage(devices, cpu_p95=1.0, host_memory_pct=2.0, network_gbps=0.1))

    assert rec.target_type == "trn1.2xlarge"
    assert rec.monthly_cost_after == monthly_of("trn1.2xlarge") == Decimal("980.94")
    assert rec.monthly_savings == Decimal("15695.00") - Decimal("980.94")
    assert [alt.confidence for alt in rec.alternatives] == [Confidence.LOW] * len(rec.alternatives)
    assert rec.alternatives  # the Inferentia pointer
    assert all(alt.monthly_cost is not None and alt.monthly_cost < Decimal("980.94") for alt in rec.alternatives)


@pytest.mark.parametrize(("host", "cores"), [("trn1.32xlarge", 32), ("inf2.xlarge", 2)])
def test_neuron_alternatives_respect_memory_per_neuroncore(host: str, cores: int) -> None:
    peak = 6000.0  # MiB per NeuronCore: x 1.2 = 7.0 GiB, far above inf1's 2 GiB per NeuronCore
    devices = [device(str(i), 40.0, peak, NEURON_V2_CORE_MIB) for i in range(2)]
    devices += [idle_device(str(i), NEURON_V2_CORE_MIB) for i in range(2, cores)]
    rec = analyze(instance(host), usage(devices, cpu_p95=1.0, host_memory_pct=2.0, network_gbps=0.1))

    for alternative in rec.alternatives:
        assert spec_of(alternative.instance_type).memory_per_unit_mib >= peak * HEADROOM


def test_gpu_host_gets_neuron_alternatives_only_at_low_confidence() -> None:
    rec = analyze(instance("g5.12xlarge"), usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.confidence is Confidence.HIGH  # the primary GPU target
    assert rec.alternatives
    for alternative in rec.alternatives:
        alt = spec_of(alternative.instance_type)
        assert alt.accelerator_kind is AcceleratorKind.NEURON
        assert alternative.confidence is Confidence.LOW
        assert "compiled with the AWS Neuron SDK" in alternative.note
        assert alt.accelerator_memory_mib >= 10_000.0 * HEADROOM
        assert alternative.monthly_cost is not None
        assert alternative.monthly_cost < (rec.monthly_cost_after or Decimal(0))


def test_multi_gpu_work_gets_no_neuron_alternative() -> None:
    devices = [device(str(i), 30.0, 6000.0, A10G_TOTAL_MIB) for i in range(2)]
    devices += [idle_device(str(i), A10G_TOTAL_MIB) for i in (2, 3)]
    rec = analyze(instance("g5.12xlarge"), usage(devices, cpu_p95=20.0))

    assert rec.alternatives == ()


# ---------------------------------------------------------------------------------------------
# Confidence


@pytest.mark.parametrize(
    ("days", "coverage", "expected"),
    [
        (14.0, 1.0, Confidence.HIGH),
        (14.0, 0.5, Confidence.MEDIUM),
        (8.0, 1.0, Confidence.MEDIUM),
        (4.0, 1.0, Confidence.LOW),
    ],
)
def test_confidence_follows_the_history(days: float, coverage: float, expected: Confidence) -> None:
    rec = analyze(instance("g5.12xlarge"), usage(one_of_four_busy(), cpu_p95=20.0, days=days, coverage=coverage))

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "g5.8xlarge"  # same family: only the history limits confidence
    assert rec.confidence is expected
    assert has_reason(rec, f"{days:.1f} days observed", f"{coverage:.0%} coverage")


def test_cross_family_is_at_most_medium_even_with_full_history() -> None:
    rec = analyze(
        instance("g5.2xlarge"),
        usage([device("0", 15.0, 4000.0, A10G_TOTAL_MIB)], cpu_p95=20.0, host_memory_pct=20.0),
    )

    assert rec.target_type is not None
    assert spec_of(rec.target_type).family != "g5"
    assert rec.confidence is Confidence.MEDIUM


def test_rollup_only_data_keeps_all_gpus_and_caps_confidence() -> None:
    rollup = [device("*", 60.0, 10_000.0, A10G_TOTAL_MIB)]
    rec = analyze(instance("g5.12xlarge"), usage(rollup, cpu_p95=20.0, accelerator_data=AcceleratorData.ROLLUP))

    assert rec.target_type is None or spec_of(rec.target_type).accelerator_count >= 4
    assert RANK[rec.confidence] <= RANK[Confidence.MEDIUM]
    assert has_reason(rec, "roll-up", "all 4 GPUs kept")


def test_idle_without_cpu_data_is_at_most_medium() -> None:
    devices = [idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)]
    rec = analyze(instance("g5.12xlarge"), usage(devices, cpu_p95=None))

    assert rec.finding is Finding.IDLE
    assert rec.confidence is Confidence.MEDIUM


# ---------------------------------------------------------------------------------------------
# Recommendation id and money


def test_recommendation_id_is_stable_and_follows_the_target() -> None:
    host = instance("g5.12xlarge")
    first = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0))
    again = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0), now=NOW + timedelta(days=1))
    # 4 vCPUs and 9.6 GiB of RAM are enough: g5.xlarge.
    smaller = analyze(host, usage(one_of_four_busy(), cpu_p95=5.0, host_memory_pct=5.0))

    assert re.fullmatch(r"rec-[0-9a-f]{20}", first.recommendation_id)
    assert again.recommendation_id == first.recommendation_id
    assert (first.target_type, smaller.target_type) == ("g5.8xlarge", "g5.xlarge")
    assert smaller.recommendation_id != first.recommendation_id
    assert first.recommendation_id == recommendation_id(host, Finding.OVERPROVISIONED, "g5.8xlarge")
    assert recommendation_id(host, Finding.OPTIMIZED, None) != first.recommendation_id
    other_host = instance("g5.12xlarge", instance_id="i-0fedcba9876543210")
    assert recommendation_id(other_host, Finding.OVERPROVISIONED, "g5.8xlarge") != first.recommendation_id


@pytest.mark.parametrize(
    ("host", "summary"),
    [
        ("g5.12xlarge", usage(one_of_four_busy(), cpu_p95=20.0)),
        ("g5.2xlarge", usage([device("0", 30.0, 8000.0, A10G_TOTAL_MIB)], cpu_p95=97.0)),
        ("g5.xlarge", usage([device("0", 60.0, 21 * GIB, A10G_TOTAL_MIB)], cpu_p95=30.0)),
        (
            "p4d.24xlarge",
            usage([device(str(i), 95.0, 30 * GIB, A100_40_TOTAL_MIB, p50=90.0) for i in range(8)]),
        ),
        ("g6.48xlarge", usage([idle_device(str(i), L4_TOTAL_MIB) for i in range(8)], cpu_p95=1.0)),
    ],
    ids=["overprovisioned", "not-gpu-bound", "underprovisioned", "optimized", "idle"],
)
def test_money_is_hourly_times_730_in_cents(host: str, summary: UsageSummary) -> None:
    book = prices()
    rec = analyze(instance(host), summary)

    assert isinstance(rec.monthly_cost, Decimal)
    assert isinstance(rec.monthly_cost_after, Decimal)
    assert rec.monthly_cost == monthly(book.hourly(host) or Decimal(0)) == monthly_of(host)
    assert rec.monthly_cost.as_tuple().exponent == -2
    assert rec.monthly_cost_after.as_tuple().exponent == -2
    if rec.target_type is not None:
        assert rec.monthly_cost_after == monthly_of(rec.target_type)
    assert rec.monthly_savings == rec.monthly_cost - rec.monthly_cost_after


def test_no_price_for_the_host_type_means_no_resize_and_says_so() -> None:
    book = replace(prices(), on_demand={k: v for k, v in prices().on_demand.items() if k != "g5.12xlarge"})
    rec = analyze(instance("g5.12xlarge"), usage(one_of_four_busy(), cpu_p95=20.0), book=book)

    assert rec.monthly_cost is None
    assert rec.monthly_savings is None
    assert rec.target_type is None
    assert has_reason(rec, "no on-demand price for g5.12xlarge in us-east-1")


def test_analyze_fleet_returns_one_recommendation_per_instance() -> None:
    from rightsizer.domain.analyzer import analyze_fleet

    hosts = [instance("g5.12xlarge", "i-1"), instance("g5.xlarge", "i-2"), instance("p3.8xlarge", "i-3")]
    summaries = {"i-1": usage(one_of_four_busy(), instance_id="i-1", cpu_p95=20.0)}
    recs = analyze_fleet(hosts, summaries, catalog(), prices(), Policy(), NOW)

    assert [r.instance_id for r in recs] == ["i-1", "i-2", "i-3"]
    assert [r.finding for r in recs] == [
        Finding.OVERPROVISIONED,
        Finding.INSUFFICIENT_DATA,
        Finding.INSUFFICIENT_DATA,
    ]
