"""The analyzer: one finding per instance, and the safety rules that keep its advice safe.

Every test states a host and asserts the behaviour people rely on: the finding, the target, the money
(Decimal, 730 h a month), whether the advice is actionable, the confidence, and that the reasons carry
the numbers behind the advice. Types, accelerator figures and prices come from the hand-written
catalog in catalog_fixture.py, so each expected amount is written here as hourly x 730, by hand.
Usage is built from summary statistics (tests/factories.py); where a rule needs more than that (a memory
line that follows the load, a flat reservation, a pattern that repeats every week) the test says so
with the _builders helpers. test_advice.py covers the same rules on realistic 14-day series.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rightsizer.domain.analyzer import analyze_fleet, recommendation_id
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import ActionKind, Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.models.hosts import AcceleratorKind, Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import AcceleratorData, DeviceUsage, UsageSummary
from rightsizer.domain.policy import Policy
from tests.factories import NOW, business_hours_profile, device, idle_device, instance, usage
from tests.unit import catalog_fixture as fx
from tests.unit._builders import (
    A10G_TOTAL_MIB,
    A100_40_TOTAL_MIB,
    GIB,
    H100_TOTAL_MIB,
    INF1_CORE_MIB,
    L4_TOTAL_MIB,
    L40S_TOTAL_MIB,
    NEURON_V2_CORE_MIB,
    T4_TOTAL_MIB,
    V100_TOTAL_MIB,
    analyze,
    flat_memory,
    g4ad_spec,
    load_following,
    repeating_weeks,
    unmeasured_device,
    with_prices,
    with_specs,
)

POLICY = Policy()
HEADROOM = POLICY.memory_headroom
CPU_TARGET = POLICY.target_max_cpu_pct


# ---------------------------------------------------------------------------------------------
# Helpers


def spec_of(type_name: str, cat: Catalog | None = None) -> InstanceTypeSpec:
    spec = (cat or fx.catalog()).spec(type_name)
    assert spec is not None, type_name
    return spec


def has_reason(rec: Recommendation, *fragments: str) -> bool:
    """True when one single reason contains every fragment (so the numbers belong together)."""
    return any(all(fragment in reason for fragment in fragments) for reason in rec.reasons)


def assert_no_resize(rec: Recommendation) -> None:
    assert rec.target_type is None
    assert rec.actionable is False
    assert rec.monthly_cost_after == rec.monthly_cost
    assert rec.monthly_savings in (Decimal("0.00"), None)


def one_of_four_busy(memory_mib: float | None = 10_000.0) -> list[DeviceUsage]:
    """g5.12xlarge serving one model on GPU 0 (p95 60 %, p99 63 %); GPUs 1-3 hold nothing."""
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


def without_p3() -> Catalog:
    """A region that no longer offers p3: every other fixture type is offered."""
    return fx.catalog(offered=frozenset(fx.TYPES) - {"p3.2xlarge", "p3.8xlarge"})


def slowdown(source: str, target: str) -> float:
    """How many times longer the same GPU work takes on the target: its worst tensor, bandwidth or FP32 ratio."""
    a = fx.ACCELERATORS[fx.spec(source).accelerator_model]
    b = fx.ACCELERATORS[fx.spec(target).accelerator_model]
    if a.model == b.model:
        return 1.0
    pairs = (
        (a.tensor_tflops, b.tensor_tflops),
        (a.memory_bandwidth_gbps, b.memory_bandwidth_gbps),
        (a.fp32_tflops, b.fp32_tflops),
    )
    return max(x / y for x, y in pairs if x and y)


# A working set that rises with the load to 97 % of nvidia-smi's memory.total (22,400 of 23,028 MiB).
FULL_A10G = load_following(device("0", 60.0, 22_400.0, A10G_TOTAL_MIB), low_mib=12 * GIB, correlation=0.9)
# T4 pinned: median 97 %, p95 99 %, busiest hours 100 %; 9.8 GiB of 15 GiB.
PINNED_T4 = device("0", 99.0, 10_000.0, T4_TOTAL_MIB, p50=97.0, p99=100.0, peak=100.0)


# ---------------------------------------------------------------------------------------------
# The findings


def test_overprovisioned_g5_12xlarge_using_one_of_four_gpus_moves_to_a_one_gpu_g5() -> None:
    rec = analyze(instance("g5.12xlarge"), usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.OVERPROVISIONED
    # 48 vCPUs at p95 20 % need ceil(48 x 20 / 70) = 14; RAM 30 % of 192 GiB x 1.2 = 69.1 GiB: g5.4xlarge
    # (16 vCPUs, 64 GiB) is too small, g5.8xlarge (32, 128 GiB) is the cheapest 1-GPU type that fits.
    assert rec.target_type == "g5.8xlarge"
    assert rec.monthly_cost == Decimal("4140.56")  # 5.672 x 730
    assert rec.monthly_cost_after == Decimal("1787.04")  # 2.448 x 730
    assert rec.monthly_savings == Decimal("2353.52")
    assert rec.actionable is True
    assert rec.confidence is Confidence.HIGH
    # Busiest hours: the highest 5-minute average (66 %) is above the p99 of the hourly maxima (63 %).
    assert has_reason(rec, "GPU 0: p95 60%", "busiest hours 66%", "memory peak 9.8 GiB of 22.5 GiB", "GPUs 1-3 idle")
    assert has_reason(
        rec,
        "g5.8xlarge: 1x A10G",
        "peak x 1.2 (11.7 GiB)",
        "32 vCPUs (needs 14)",
        "128.0 GiB RAM (needs 69.1 GiB)",
        "projected GPU p95 60% and busiest hours 66%",
    )
    assert (rec.evidence.busy_units, rec.evidence.total_units) == (1, 4)


def test_idle_p3_8xlarge_saves_everything_and_notes_the_type_is_no_longer_offered() -> None:
    rec = analyze(
        instance("p3.8xlarge"),
        usage([idle_device(str(i), V100_TOTAL_MIB) for i in range(4)], cpu_p95=5.0),
        cat=without_p3(),
    )

    assert rec.finding is Finding.IDLE
    assert rec.target_type is None
    assert rec.monthly_cost == Decimal("8935.20")  # 12.24 x 730
    assert rec.monthly_cost_after == Decimal("0.00")
    assert rec.monthly_savings == rec.monthly_cost
    assert rec.action is ActionKind.STOP  # one click stops it (terminating stays a person's call)
    assert rec.confidence is Confidence.HIGH
    assert has_reason(
        rec,
        "all 4 GPUs are unused: p99 below 5% and no hour above 10% (peak 1%)",
        "CPU p95 5% of 32 vCPUs",
    )
    assert has_reason(rec, "14.0 days observed", "100% coverage")
    assert has_reason(rec, "stop the host (one click", "never terminates", "terminate it by hand if nobody claims it")
    assert has_reason(rec, "p3.8xlarge is no longer offered in us-east-1", "stopping it is still the advice")
    assert len([reason for reason in rec.reasons if "no longer offered" in reason]) == 1, "said once"
    # ...and in the few words every confirmation of the stop lists.
    assert rec.risks == ("p3.8xlarge is no longer offered in us-east-1: once stopped, it may not start again",)
    # No instance store and not a scarce family: stopping it risks nothing more.
    assert not has_reason(rec, "instance store")
    assert not has_reason(rec, "InsufficientInstanceCapacity")


def test_a_gpu_with_one_busy_hour_is_not_idle() -> None:
    """p99 of the 5-minute averages stays under 5 %, but one hour reached 40 %: real activity."""
    once = device("0", 1.0, 3.0, A10G_TOTAL_MIB, p50=0.0, p99=2.0, peak=40.0)
    rec = analyze(instance("g5.xlarge"), usage([once], cpu_p95=2.0, host_memory_pct=20.0))

    # Light work, not waste: an L4 carries it (A10G -> L4 x2.00: p95 1 % -> 2 %).
    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "g6.xlarge"
    assert rec.monthly_cost_after == Decimal("587.50")  # 0.8048 x 730 = 587.504
    assert rec.monthly_savings == Decimal("146.88")  # 734.38 - 587.50
    assert not has_reason(rec, "terminate")


def test_optimized_p4d_training_at_ninety_percent_with_30_of_40_gib() -> None:
    devices = [device(str(i), 95.0, 30 * GIB, A100_40_TOTAL_MIB, p50=90.0, p99=99.0, peak=100.0) for i in range(8)]
    rec = analyze(instance("p4d.24xlarge", uses_efa=True), usage(devices, cpu_p95=50.0))

    assert rec.finding is Finding.OPTIMIZED  # median 90 %: busy, but not pinned
    assert_no_resize(rec)
    assert rec.monthly_cost == Decimal("16029.08")  # 21.957642 x 730 = 16029.0787
    assert rec.confidence is Confidence.HIGH
    assert has_reason(rec, "GPUs 0-7: p95 95%", "peak 100%", "memory peak up to 30.0 GiB of 40.0 GiB")
    assert has_reason(rec, "no cheaper type fits")
    assert rec.alternatives == ()  # multi-GPU work: no Neuron pointer


def test_underprovisioned_when_memory_follows_the_load_to_97_percent_of_memory_total() -> None:
    rec = analyze(instance("g5.xlarge"), usage([FULL_A10G], cpu_p95=30.0))

    assert rec.finding is Finding.UNDERPROVISIONED
    # 22,400 MiB x 1.2 = 26.2 GiB per GPU: only an L40S (44.7 GiB) holds it; A10G -> L40S is
    # bandwidth-bound (600 / 864 = x0.69): p95 60 % -> 42 %.
    assert rec.target_type == "g6e.xlarge"
    assert spec_of("g6e.xlarge").memory_per_unit_mib >= 22_400.0 * HEADROOM
    assert rec.monthly_cost == Decimal("734.38")  # 1.006 x 730
    assert rec.monthly_cost_after == Decimal("1358.53")  # 1.861 x 730
    assert rec.monthly_savings == Decimal("-624.15")
    assert rec.actionable is True
    assert rec.confidence is Confidence.MEDIUM  # a paid upgrade on memory alone: never high
    assert has_reason(
        rec,
        "GPU 0 memory rises with the load (correlation 0.90)",
        "up to 21.9 GiB of 22.5 GiB (97% of memory.total)",
        "out-of-memory risk",
    )
    assert has_reason(rec, "paid upgrade for memory alone", "confirm out-of-memory errors")
    assert has_reason(rec, "g6e.xlarge: 1x L40S", "44.7 GiB per GPU >= peak x 1.2 (26.2 GiB)", "projected GPU p95 42%")
    assert has_reason(rec, "g5 -> g6e", "A10G -> L40S")


@pytest.mark.parametrize(
    "gpu",
    [
        replace(FULL_A10G, memory_used_low_mib=None, memory_load_correlation=None),
        replace(FULL_A10G, memory_total_mib=None),
        replace(FULL_A10G, memory_load_correlation=0.3),
        flat_memory(FULL_A10G),
    ],
    ids=["peak-only", "no-nvidia-smi-total", "does-not-follow-load", "flat-line"],
)
def test_nearly_full_memory_without_evidence_of_pressure_is_no_upgrade(gpu: DeviceUsage) -> None:
    """A peak at 97 % is an out-of-memory risk only on a line that moves with the load, against
    nvidia-smi's own memory.total; anything less proves nothing and buys nothing."""
    rec = analyze(instance("g5.xlarge"), usage([gpu], cpu_p95=30.0))

    assert rec.finding is Finding.OPTIMIZED
    assert_no_resize(rec)
    assert not has_reason(rec, "memory rises with the load")


def test_flat_full_memory_is_read_as_a_reservation_and_says_so() -> None:
    rec = analyze(instance("g5.xlarge"), usage([flat_memory(FULL_A10G)], cpu_p95=30.0))

    assert rec.evidence.memory_reserved is True
    assert has_reason(rec, "GPU memory looks reserved, not used (GPU 0", "no out-of-memory risk is claimed")


def test_a_memory_upgrade_on_four_days_of_history_is_low_confidence() -> None:
    rec = analyze(instance("g5.xlarge"), usage([FULL_A10G], cpu_p95=30.0, days=4.0))

    assert rec.finding is Finding.UNDERPROVISIONED
    assert rec.confidence is Confidence.LOW  # the history caps it further


def test_a_pinned_gpu_gets_faster_gpu_advice_that_is_never_one_click() -> None:
    rec = analyze(instance("g4dn.xlarge"), usage([PINNED_T4], cpu_p95=30.0))

    assert rec.finding is Finding.UNDERPROVISIONED
    # T4 -> A10G is tensor-bound (65 / 70 = x0.93): p95 99 % -> 92 %, busiest hours 100 % -> 93 %. An L4
    # would be slower in bandwidth (320 / 300 = x1.07): 106 %.
    assert rec.target_type == "g5.xlarge"
    assert rec.monthly_cost == Decimal("383.98")  # 0.526 x 730
    assert rec.monthly_cost_after == Decimal("734.38")  # 1.006 x 730
    assert rec.monthly_savings == Decimal("-350.40")
    assert rec.actionable is False  # busy is good use: only a person knows whether the work is too slow
    assert rec.confidence is Confidence.MEDIUM
    assert has_reason(
        rec, "GPU median utilisation 97%", "busy nearly all the time", "only pays if the work is too slow"
    )
    assert has_reason(rec, "g5.xlarge: 1x A10G", "projected GPU p95 92% and busiest hours 93%", "tensor-bound")


def test_a_pinned_gpu_with_nothing_faster_says_so_without_a_target() -> None:
    devices = [device(str(i), 99.0, 60 * GIB, H100_TOTAL_MIB, p50=97.0, p99=100.0, peak=100.0) for i in range(8)]
    rec = analyze(instance("p5.48xlarge"), usage(devices, cpu_p95=30.0))

    assert rec.finding is Finding.UNDERPROVISIONED
    assert_no_resize(rec)
    assert rec.monthly_cost == Decimal("40179.20")  # 55.04 x 730
    assert rec.confidence is Confidence.MEDIUM
    assert has_reason(rec, "no faster offered type fits", "spreading the work over more GPUs")


def test_not_gpu_bound_when_cpu_is_saturated_adds_vcpus_and_keeps_the_gpu_model() -> None:
    rec = analyze(instance("g5.2xlarge"), usage([device("0", 30.0, 8000.0, A10G_TOTAL_MIB)], cpu_p95=97.0))

    assert rec.finding is Finding.NOT_GPU_BOUND
    # 8 vCPUs at p95 97 % need ceil(8 x 97 / 70) = 12: the cheapest A10G type with more is g5.4xlarge.
    assert rec.target_type == "g5.4xlarge"
    target = spec_of("g5.4xlarge")
    assert (target.accelerator_model, target.accelerator_count) == ("A10G", 1)
    assert target.vcpus >= math.ceil(8 * 97 / CPU_TARGET) == 12
    assert rec.monthly_cost == Decimal("884.76")  # 1.212 x 730
    assert rec.monthly_cost_after == Decimal("1185.52")  # 1.624 x 730
    assert rec.monthly_savings == Decimal("-300.76")
    assert rec.actionable is True  # the CPU is saturated and the GPU waits: the evidence is direct
    assert rec.confidence is Confidence.MEDIUM  # but it costs more: a paid upgrade is never high confidence
    assert has_reason(rec, "CPU p95 97%", "GPU p95 is only 30%", "more vCPUs")
    assert has_reason(rec, "g5.4xlarge", "16 vCPUs (needs 12)")


def test_cpu_bound_on_the_largest_type_of_its_gpu_has_no_target() -> None:
    devices = [device(str(i), 30.0, 8000.0, A10G_TOTAL_MIB) for i in range(8)]
    rec = analyze(instance("g5.48xlarge"), usage(devices, cpu_p95=97.0))

    assert rec.finding is Finding.NOT_GPU_BOUND
    assert_no_resize(rec)
    assert rec.confidence is Confidence.HIGH
    assert has_reason(rec, "no offered A10G type with more vCPUs was found")


def test_unused_gpus_on_a_busy_host_are_not_gpu_bound_with_non_gpu_advice() -> None:
    devices = [idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)]
    rec = analyze(instance("g5.12xlarge"), usage(devices, cpu_p95=50.0))

    assert rec.finding is Finding.NOT_GPU_BOUND
    assert_no_resize(rec)  # savings depend on the non-GPU type chosen: none is claimed
    assert rec.monthly_cost == Decimal("4140.56")  # 5.672 x 730
    assert rec.confidence is Confidence.HIGH
    assert has_reason(
        rec,
        "all 4 GPUs are unused: p99 below 5% and no hour above 10% (peak 1%)",
        "while the host works (CPU p95 50% of 48 vCPUs)",
    )
    assert rec.reasons[-1].startswith("move the work to a non-GPU instance type")  # the advice comes last
    assert not has_reason(rec, "terminate")


def test_schedulable_business_hours_saves_the_idle_hours() -> None:
    devices = [device("0", 70.0, 8000.0, A10G_TOTAL_MIB)]
    summary = usage(devices, cpu_p95=30.0, hourly_peak=business_hours_profile(), hourly_cpu=business_hours_cpu())
    rec = analyze(instance("g5.xlarge"), repeating_weeks(summary))

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.target_type is None
    assert rec.monthly_cost == Decimal("734.38")  # 1.006 x 730
    # Idle 113 hours; stopped 113 less 0.75 hours of margins per window (boot 15 minutes, late work 30) in the zone
    # the pair runs in, UTC here (no clock change, so no extra hour each side): 734.38 x 109.25 / 168 = 477.57.
    assert rec.monthly_savings == Decimal("477.57")
    assert rec.monthly_cost_after == Decimal("256.81")
    assert rec.action is ActionKind.SCHEDULE  # one click creates the stop/start pair: the hours repeat
    assert rec.confidence is Confidence.HIGH  # the same hours in both weeks
    assert rec.evidence.idle_hours_per_week == 168 - 5 * 11  # Mon-Fri 08-19 busy
    assert rec.evidence.schedule == "Mon-Fri 08:00-19:00 UTC"
    assert rec.evidence.busy_windows == tuple((day * 24 + 8, 11) for day in range(5))
    assert has_reason(
        rec,
        "busy only Mon-Fri 08:00-19:00 UTC; idle 113 of 168 hours a week",
        "CPU below 10% and network below 0.01 Gbps in those hours",
    )
    assert has_reason(
        rec,
        "the saving counts the 109.25 hours a week that the pair an approval creates keeps the host stopped",
        "15 minutes' lead to boot, 30 for work that runs late",
        "starts 07:45 Mon-Fri, stops 19:30 Mon-Fri (UTC)",
    )
    assert has_reason(rec, "250 GB of instance store (local NVMe) is wiped on every stop")
    assert rec.risks == ("its 250 GB instance store (local NVMe) is wiped when it stops",)
    assert has_reason(rec, "EventBridge Scheduler stop/start pair")
    assert not has_reason(rec, "InsufficientInstanceCapacity")  # g5 is not a scarce family


def test_schedule_beats_a_smaller_resize_and_mentions_the_resize() -> None:
    summary = usage(
        one_of_four_busy(), cpu_p95=20.0, hourly_peak=business_hours_profile(), hourly_cpu=business_hours_cpu()
    )
    rec = analyze(instance("g5.12xlarge"), repeating_weeks(summary))

    # Stopping 109.25 of 168 hours saves 4140.56 x 109.25 / 168 = 2692.60; resizing to g5.8xlarge saves 2353.52.
    assert rec.finding is Finding.SCHEDULABLE
    assert rec.target_type is None
    assert rec.monthly_savings == Decimal("2692.60")
    assert rec.confidence is Confidence.HIGH
    assert has_reason(rec, "also possible: resizing to g5.8xlarge", "$2,353.52/month")
    assert has_reason(rec, "3,800 GB of instance store")


def test_a_resize_that_saves_more_than_a_schedule_names_the_schedule() -> None:
    # One GPU of four, office hours, a quiet CPU (5 %) and little RAM (5 %): g5.xlarge carries the work.
    summary = usage(
        one_of_four_busy(),
        cpu_p95=5.0,
        host_memory_pct=5.0,
        hourly_peak=business_hours_profile(),
        hourly_cpu=[4.0] * 168,
    )
    rec = analyze(instance("g5.12xlarge"), repeating_weeks(summary))

    # Resizing saves 4140.56 - 734.38 (1.006 x 730) = 3406.18; stopping 109.25 of 168 hours only 2692.60.
    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "g5.xlarge"
    assert rec.monthly_savings == Decimal("3406.18")
    # The resize stops the host to change its type: its instance store does not survive it.
    assert rec.risks == ("its 3,800 GB instance store (local NVMe) is wiped when it stops",)
    assert rec.actionable is True
    assert has_reason(rec, "also possible: a stop schedule (busy only Mon-Fri 08:00-19:00 UTC)", "$2,692.60/month")


def test_schedule_needs_a_full_week_of_history() -> None:
    summary = usage(
        [device("0", 70.0, 8000.0, A10G_TOTAL_MIB)],
        cpu_p95=30.0,
        days=5.0,
        hourly_peak=business_hours_profile(),
        hourly_cpu=business_hours_cpu(),
    )
    rec = analyze(instance("g5.xlarge"), summary)

    assert rec.finding is Finding.OPTIMIZED
    assert rec.evidence.schedule is None
    assert rec.confidence is Confidence.LOW  # 5 days of history


@pytest.mark.parametrize("summary", [None, usage([])], ids=["no-summary", "no-devices"])
def test_insufficient_data_without_gpu_metrics(summary: UsageSummary | None) -> None:
    rec = analyze(instance("g5.xlarge"), summary)

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert rec.monthly_cost == Decimal("734.38")  # 1.006 x 730
    assert rec.confidence is Confidence.LOW
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


def test_insufficient_data_when_metrics_cover_too_little_of_the_window() -> None:
    idle = [idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)]
    rec = analyze(instance("g5.12xlarge"), usage(idle, cpu_p95=5.0, coverage=0.2))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert has_reason(rec, "cover only 20% of the window", "at least 25%", "agent running")


def test_insufficient_data_for_amd_g4ad() -> None:
    cat = with_specs(fx.catalog(), g4ad_spec())
    book = with_prices(fx.prices(), {"g4ad.xlarge": "0.37853"})  # us-east-1 on-demand
    assert spec_of("g4ad.xlarge", cat).accelerator_kind is AcceleratorKind.UNMONITORED
    # Even a usage summary that looks idle is not trusted: the agent cannot read AMD GPUs.
    rec = analyze(instance("g4ad.xlarge"), usage([idle_device("0", 8192.0)], cpu_p95=2.0), cat=cat, book=book)

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert rec.monthly_cost == Decimal("276.33")  # 0.37853 x 730 = 276.3269
    assert has_reason(rec, "Radeon-Pro-V520", "no utilisation metrics")


def test_insufficient_data_when_the_type_is_not_in_the_catalog() -> None:
    rec = analyze(instance("g9.xlarge"), usage([device("0", 50.0, 1000.0)]))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert rec.target_type is None
    assert rec.actionable is False
    assert rec.monthly_cost is None  # not priced either
    assert has_reason(rec, "g9.xlarge is not in the instance catalog")


# ---------------------------------------------------------------------------------------------
# Excluded hosts: reported, never resized


@pytest.mark.parametrize("value", ["", "true", "until 2027, ask #ml-infra"])
def test_opt_out_tag_with_any_value_excludes(value: str) -> None:
    host = instance("g5.12xlarge", tags={"rightsizer:ignore": value})
    rec = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.EXCLUDED
    assert_no_resize(rec)
    assert rec.monthly_cost == Decimal("4140.56")  # 5.672 x 730
    assert has_reason(rec, "opted out by tag rightsizer:ignore")
    if value:
        assert has_reason(rec, repr(value))


@pytest.mark.parametrize(
    ("host", "fragment"),
    [
        (instance("g5.12xlarge", state="stopped"), "stopped: reported, not resized"),
        (instance("g5.12xlarge", root_device_type="instance-store"), "instance-store root volume"),
        (instance("g5.12xlarge", lifecycle="capacity-block"), "capacity-block instance: capacity is reserved"),
    ],
    ids=["stopped", "instance-store", "capacity-block"],
)
def test_stopped_instance_store_and_capacity_block_hosts_are_excluded_before_analysis(
    host: Instance, fragment: str
) -> None:
    rec = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.EXCLUDED
    assert_no_resize(rec)
    assert rec.alternatives == ()
    assert len(rec.reasons) == 1  # nothing about usage: it was not analysed
    assert fragment in rec.reasons[0]


def test_stopped_host_costs_nothing_and_is_reported() -> None:
    rec = analyze(instance("p3.8xlarge", state="stopped"), usage([]))

    assert rec.finding is Finding.EXCLUDED
    assert rec.state == "stopped"
    assert rec.monthly_cost == Decimal("0.00")
    assert rec.monthly_savings == Decimal("0.00")


def test_a_spot_host_is_analysed_and_reported_at_spot_prices() -> None:
    book = replace(fx.prices(), spot={"g5.12xlarge": Decimal("2.0123"), "g5.8xlarge": Decimal("0.9")})
    rec = analyze(instance("g5.12xlarge", lifecycle="spot"), usage(one_of_four_busy(), cpu_p95=20.0), book=book)

    assert rec.finding is Finding.EXCLUDED
    assert rec.actionable is False
    assert rec.target_type == "g5.8xlarge"  # what the request or fleet should launch instead
    assert rec.monthly_cost == Decimal("1468.98")  # 2.0123 x 730 = 1468.979
    assert rec.monthly_cost_after == Decimal("657.00")  # 0.9 x 730: the target's Spot price
    assert rec.monthly_savings == Decimal("811.98")
    assert has_reason(
        rec,
        "would be overprovisioned to g5.8xlarge",
        "a Spot instance (cost at its Spot price)",
        "never resized in place",
    )
    assert rec.reasons[0].startswith("would be overprovisioned")
    assert rec.reasons[-1] == "change the request or fleet that launches it to g5.8xlarge"
    assert has_reason(rec, "g5.8xlarge: 1x A10G", "needs 14")  # the analysis behind it is kept


def test_a_spot_host_without_a_spot_price_is_costed_on_demand_and_claims_no_saving() -> None:
    rec = analyze(instance("g5.12xlarge", lifecycle="spot"), usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.EXCLUDED
    assert rec.monthly_cost == Decimal("4140.56")  # 5.672 x 730: no Spot price known
    assert rec.monthly_savings == Decimal("0.00")  # the target's Spot price is unknown too
    assert has_reason(rec, "would be overprovisioned", "cost at the on-demand rate (no recent Spot price)")


def test_a_spot_host_without_data_keeps_insufficient_data() -> None:
    rec = analyze(instance("g5.12xlarge", lifecycle="spot"), None)

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert rec.reasons[0].startswith("a Spot instance") and "never resized in place" in rec.reasons[0]


def test_asg_member_is_excluded_and_names_the_group_and_the_would_be_target() -> None:
    host = instance("g5.12xlarge", asg_name="gpu-workers")
    rec = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0))

    assert rec.finding is Finding.EXCLUDED
    assert rec.actionable is False
    assert rec.asg_name == "gpu-workers"
    assert rec.target_type == "g5.8xlarge"
    # Per member, once the launch template changes: 4140.56 - 1787.04 (2.448 x 730).
    assert rec.monthly_savings == Decimal("2353.52")
    assert has_reason(rec, "would be overprovisioned to g5.8xlarge", "member of Auto Scaling group 'gpu-workers'")
    assert rec.reasons[-1] == "change the launch template of Auto Scaling group 'gpu-workers' to g5.8xlarge"


# ---------------------------------------------------------------------------------------------
# Safety: a property-style sweep


SWEEP_HOSTS = {
    # type: (GPUs, memory.total per GPU as nvidia-smi reports it)
    "g5.12xlarge": (4, A10G_TOTAL_MIB),
    "p3.2xlarge": (1, V100_TOTAL_MIB),
    "g4dn.xlarge": (1, T4_TOTAL_MIB),
    "p4d.24xlarge": (8, A100_40_TOTAL_MIB),
}


@dataclass(frozen=True)
class SweepCase:
    host: str
    devices: tuple[DeviceUsage, ...]
    cpu_p95: float
    host_memory_pct: float | None


@st.composite
def gpu_devices(draw: st.DrawFn, index: int, total: float, publishes_total: bool, kinds: list[str]) -> DeviceUsage:
    kind = draw(st.sampled_from(kinds))
    low_util, top = {"quiet": (0.0, 6.0), "pinned": (95.0, 100.0)}.get(kind, (0.0, 100.0))
    p50, p95, p99 = sorted(draw(st.lists(st.floats(low_util, top), min_size=3, max_size=3)))
    hour_top = 12.0 if kind == "quiet" else 100.0
    burst = draw(st.none() | st.floats(p99, hour_top))
    peak = draw(st.floats(max(p99, burst or 0.0), hour_top))
    if kind == "full":  # nearly all of memory.total, on a line that moves with the load (or seems to)
        memory: float | None = draw(st.floats(0.9 * total, total))
    else:
        memory = draw(st.none() | st.floats(0.0, total * (0.06 if kind == "quiet" else 1.0)))
    gpu = device(str(index), p95, memory, total if publishes_total else None, p50=p50, p99=p99, peak=peak)
    gpu = replace(gpu, utilization_burst=burst)
    if memory is None:
        return gpu
    line = "moves" if kind == "full" else draw(st.sampled_from(["peak-only", "flat", "moves"]))
    if line == "flat":
        return replace(gpu, memory_used_low_mib=max(0.0, memory - draw(st.floats(0.0, total * 0.05))))
    if line == "moves":
        low = draw(st.floats(0.0, memory))
        correlation = draw(st.floats(0.3 if kind == "full" else -1.0, 1.0))
        return replace(gpu, memory_used_low_mib=low, memory_load_correlation=correlation)
    return gpu


@st.composite
def gpu_hosts(draw: st.DrawFn) -> SweepCase:
    host = draw(st.sampled_from(sorted(SWEEP_HOSTS)))
    count, total = SWEEP_HOSTS[host]
    publishes_total = draw(st.booleans())
    # Quiet and working GPUs on every host; now and then one that is pinned or nearly full, so every
    # finding (idle, 1-of-n, not GPU-bound, pinned, out of memory) is exercised.
    kinds = ["quiet", "working", *draw(st.sampled_from([[], [], ["pinned"], ["full"]]))]
    devices = tuple(draw(gpu_devices(index, total, publishes_total, kinds)) for index in range(count))
    return SweepCase(host, devices, draw(st.floats(0.0, 100.0)), draw(st.none() | st.floats(0.0, 100.0)))


def _active(d: DeviceUsage) -> bool:
    assert d.utilization is not None
    steady = d.utilization.p50 >= POLICY.steady_util_pct  # a steady few percent is a live service
    return (
        steady or d.utilization.p99 >= POLICY.idle_util_pct or (d.utilization_peak or 0.0) >= POLICY.activity_peak_pct
    )


def _memory_share(d: DeviceUsage, spec: InstanceTypeSpec) -> float:
    return (d.memory_used_peak_mib or 0.0) / (d.memory_total_mib or spec.memory_per_unit_mib) * 100


def _reserved(d: DeviceUsage, spec: InstanceTypeSpec) -> bool:
    if d.memory_used_peak_mib is None or d.memory_used_low_mib is None:
        return False
    total = d.memory_total_mib or spec.memory_per_unit_mib
    flat = d.memory_used_peak_mib - d.memory_used_low_mib <= total * POLICY.flat_memory_band_pct / 100
    return flat and _memory_share(d, spec) >= POLICY.reserved_memory_min_pct


def _out_of_memory_evidence(d: DeviceUsage) -> bool:
    peak, low, total, correlation = (
        d.memory_used_peak_mib,
        d.memory_used_low_mib,
        d.memory_total_mib,
        d.memory_load_correlation,
    )
    if peak is None or low is None or total is None or correlation is None:
        return False
    moves = peak - low > total * POLICY.flat_memory_band_pct / 100
    return peak >= total * POLICY.oom_memory_pct / 100 and moves and correlation >= POLICY.memory_follows_load


@settings(max_examples=250, deadline=None)
@given(case=gpu_hosts())
def test_no_recommendation_ever_breaks_the_safety_rules(case: SweepCase) -> None:
    summary = usage(list(case.devices), cpu_p95=case.cpu_p95, host_memory_pct=case.host_memory_pct)
    rec = analyze(instance(case.host), summary)
    source = spec_of(case.host)
    source_acc = fx.ACCELERATORS[source.accelerator_model]

    # What the rules are entitled to know, recomputed from the inputs. Units that only hold memory do no
    # work: they may go (named, and the advice is then at most medium confidence).
    in_use = [d for d in case.devices if _active(d)]
    holding = [d for d in case.devices if not _active(d) and _memory_share(d, source) >= POLICY.in_use_memory_pct]
    reserved = any(_reserved(d, source) for d in in_use)
    peaks = [d.memory_used_peak_mib for d in in_use if d.memory_used_peak_mib is not None]
    memory_floor = max(peaks) * HEADROOM if peaks and not reserved else source.memory_per_unit_mib
    cpu_p99 = min(100.0, case.cpu_p95 * 1.05)  # what tests.factories.usage() publishes as CPU p99
    needed_vcpus = max(math.ceil(source.vcpus * case.cpu_p95 / CPU_TARGET), math.ceil(source.vcpus * cpu_p99 / 100))
    host_busy = case.cpu_p95 >= POLICY.cpu_idle_pct or case.cpu_p95 * source.vcpus / 100 >= POLICY.busy_vcpus
    p95 = max(d.utilization.p95 for d in case.devices if d.utilization)
    burst = max(
        max(d.utilization.p99, d.utilization.peak, d.utilization_burst or 0.0) for d in case.devices if d.utilization
    )

    # Idle only when no GPU did anything, ever, and the host is quiet; unused GPUs on a busy host
    # are "not GPU-bound", pointing at a non-GPU instance. GPUs a process holds memory on, none of which ran a kernel,
    # are held but unused (issue 28): said with their cost, never a stop nor "move off GPUs".
    if not any(_active(d) for d in case.devices) and holding:
        assert rec.finding is Finding.HELD_UNUSED
        assert rec.target_type is None
        assert rec.actionable is False and rec.action is None
        assert rec.monthly_cost_after == Decimal("0.00")
        assert rec.confidence is not Confidence.HIGH
        assert not has_reason(rec, "non-GPU instance")
    elif not any(_active(d) for d in case.devices):
        expected = Finding.NOT_GPU_BOUND if host_busy else Finding.IDLE
        assert rec.finding is expected
        assert rec.target_type is None
        assert rec.monthly_cost_after == (rec.monthly_cost if host_busy else Decimal("0.00"))
        assert has_reason(rec, "non-GPU instance") == host_busy
    else:
        assert rec.finding is not Finding.IDLE

    # A paid upgrade needs evidence (pinned GPU or a real memory pressure), is never high confidence,
    # and is one click only for memory pressure.
    if rec.finding is Finding.UNDERPROVISIONED:
        oom = any(_out_of_memory_evidence(d) for d in in_use)
        pinned = any(d.utilization is not None and d.utilization.p50 >= POLICY.saturated_util_pct for d in in_use)
        assert oom or pinned
        assert rec.confidence is not Confidence.HIGH
        if rec.actionable:
            assert oom

    if rec.target_type is not None:
        target = spec_of(rec.target_type)
        assert target.memory_per_unit_mib >= memory_floor
        assert target.compute_units >= max(1, len(in_use))
        # The one exception: a CPU-bound host's saturated reading hides its need, so a cheaper type with more
        # vCPUs than today beats a dearer one that meets the 70 % projection (docs/how-it-decides.md).
        more_for_less = (
            rec.finding is Finding.NOT_GPU_BOUND
            and target.vcpus > source.vcpus
            and rec.monthly_cost_after is not None
            and rec.monthly_cost is not None
            and rec.monthly_cost_after < rec.monthly_cost
        )
        assert target.vcpus >= needed_vcpus or more_for_less
        if case.host_memory_pct is not None:
            assert target.memory_mib >= source.memory_mib * case.host_memory_pct / 100 * HEADROOM
        else:
            assert target.memory_mib >= source.memory_mib * max(1, len(in_use)) / source.compute_units
            if target.memory_mib < source.memory_mib:
                assert rec.actionable is False  # unmeasured RAM: not one click
        assert "x86_64" in target.architectures
        assert fx.ACCELERATORS[target.accelerator_model].compute_capability_tuple >= (
            source_acc.compute_capability_tuple
        )
        if len(in_use) > 1 and source.family.startswith("p"):
            assert target.family.startswith("p")
        # The target carries the steady load and the busiest hours.
        # A target at least as fast carries today's load as today; a slower one must stay within the ceilings.
        ratio = slowdown(case.host, rec.target_type)
        if ratio > 1.0:
            assert ratio * burst <= POLICY.burst_max_util_pct + 1e-9
            assert ratio * p95 <= POLICY.target_max_util_pct + 1e-9
        if rec.finding is Finding.OVERPROVISIONED and (reserved or not peaks or (holding and in_use)):
            assert rec.confidence is not Confidence.HIGH  # the working set is unknown, or replicas are dropped
        if target.family != source.family:
            assert rec.confidence is not Confidence.HIGH
        assert rec.monthly_cost_after == fx.monthly(rec.target_type)
    # One click resizes to a named target, stops an idle host, or schedules a host with busy hours: nothing else.
    if rec.actionable:
        assert (rec.action is ActionKind.RESIZE) == (rec.target_type is not None)
        assert rec.action is not ActionKind.STOP or rec.finding is Finding.IDLE
        assert rec.action is not ActionKind.SCHEDULE or rec.evidence.busy_windows
    for alternative in rec.alternatives:
        alt = spec_of(alternative.instance_type)
        assert alternative.confidence is Confidence.LOW
        assert alt.accelerator_kind is AcceleratorKind.NEURON
        assert alt.accelerator_memory_mib >= memory_floor  # one Neuron device per GPU's model
        assert "x86_64" in alt.architectures
    assert rec.monthly_savings == (rec.monthly_cost or Decimal(0)) - (rec.monthly_cost_after or Decimal(0))


# ---------------------------------------------------------------------------------------------
# Safety: one rule per test


@pytest.mark.parametrize(
    ("gpu0", "reason"),
    [
        (None, "GPU memory not measured: targets keep 22.4 GiB per GPU"),
        (flat_memory(device("0", 60.0, 0.9 * A10G_TOTAL_MIB, A10G_TOTAL_MIB)), "GPU memory looks reserved"),
    ],
    ids=["unmeasured", "reserved"],
)
def test_unknown_gpu_memory_keeps_todays_memory_per_gpu(gpu0: DeviceUsage | None, reason: str) -> None:
    devices = one_of_four_busy(memory_mib=None)
    if gpu0 is not None:
        devices = [gpu0, *(idle_device(str(i), A10G_TOTAL_MIB) for i in (1, 2, 3))]
    rec = analyze(instance("g5.12xlarge"), usage(devices, cpu_p95=20.0))

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "g5.8xlarge"  # 22.4 GiB per GPU kept: an A10G (or an L4, too slow here)
    assert spec_of("g5.8xlarge").memory_per_unit_mib >= spec_of("g5.12xlarge").memory_per_unit_mib
    assert rec.monthly_savings == Decimal("2353.52")  # 4140.56 - 1787.04
    assert rec.confidence is Confidence.MEDIUM  # the working set is unknown
    assert rec.actionable is True
    assert has_reason(rec, reason, "22.4 GiB per GPU")
    assert has_reason(rec, "g5.8xlarge", "22.4 GiB per GPU >= today's 22.4 GiB, memory not measured")
    assert rec.alternatives == ()  # no Neuron pointer without a measured model size


@pytest.mark.parametrize(
    "gpu",
    [device("0", 10.0, None), flat_memory(device("0", 10.0, 42 * GIB, L40S_TOTAL_MIB))],
    ids=["unmeasured", "reserved"],
)
def test_unknown_memory_blocks_a_move_to_a_smaller_memory_gpu(gpu: DeviceUsage) -> None:
    measured = analyze(
        instance("g6e.xlarge"),
        usage([device("0", 10.0, 4000.0, L40S_TOTAL_MIB)], cpu_p95=20.0, host_memory_pct=20.0),
    )
    unknown = analyze(instance("g6e.xlarge"), usage([gpu], cpu_p95=20.0, host_memory_pct=20.0))

    # 4,000 MiB x 1.2 fits a 22.4 GiB L4: L40S -> L4 is x3.02 (FP32 91.6 / 30.3), p95 10 % -> 30 %.
    assert measured.target_type == "g6.xlarge"
    assert measured.monthly_cost_after == Decimal("587.50")  # 0.8048 x 730 = 587.504
    assert unknown.finding is Finding.OPTIMIZED  # 44.7 GiB kept: nothing cheaper has that much
    assert_no_resize(unknown)
    assert has_reason(unknown, "targets keep 44.7 GiB per GPU")


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
    assert rec.confidence is Confidence.LOW


@pytest.mark.parametrize("peak", [None, 100.0], ids=["no-series", "only-hourly-maxima"])
def test_gpus_without_utilisation_averages_are_not_called_idle(peak: float | None) -> None:
    silent = [replace(unmeasured_device(str(i)), utilization_peak=peak) for i in (1, 2, 3)]
    rec = analyze(instance("g5.12xlarge"), usage([idle_device("0", A10G_TOTAL_MIB), *silent], cpu_p95=3.0))

    assert rec.finding is not Finding.IDLE
    assert rec.monthly_cost_after != Decimal("0.00")
    assert rec.evidence.busy_units == 3


def test_gpus_without_utilisation_averages_are_never_moved_to_a_slower_gpu() -> None:
    silent = [replace(unmeasured_device(str(i)), utilization_peak=100.0) for i in (1, 2, 3)]
    rec = analyze(instance("g5.12xlarge"), usage([idle_device("0", A10G_TOTAL_MIB), *silent], cpu_p95=3.0))

    # Their load is unknown (and the hourly maxima say 100 %): no slower GPU can be shown to carry it.
    assert rec.target_type is None or slowdown("g5.12xlarge", rec.target_type) <= 1.0


def test_gpus_without_utilisation_averages_are_named_in_the_reasons() -> None:
    silent = [replace(unmeasured_device(str(i)), utilization_peak=100.0) for i in (1, 2, 3)]
    rec = analyze(instance("g5.12xlarge"), usage([idle_device("0", A10G_TOTAL_MIB), *silent], cpu_p95=3.0))

    assert has_reason(rec, "GPUs 1-3 published no utilisation")


def test_a_quiet_rollup_is_idle_even_with_memory_held() -> None:
    # The roll-up is the maximum over all GPUs: quiet means every GPU is quiet, whatever memory it holds.
    rollup = device("*", 0.0, 5000.0, A10G_TOTAL_MIB, p50=0.0, p99=0.0, peak=1.0)
    rec = analyze(instance("g5.12xlarge"), usage([rollup], cpu_p95=3.0, accelerator_data=AcceleratorData.ROLLUP))

    assert rec.finding is Finding.IDLE
    assert rec.target_type is None
    assert rec.confidence is Confidence.MEDIUM  # roll-up only, and a model is loaded


def test_optimized_is_not_high_confidence_when_gpu_memory_looks_reserved() -> None:
    reserved = flat_memory(device("0", 60.0, 42 * GIB, L40S_TOTAL_MIB))
    rec = analyze(instance("g6e.xlarge"), usage([reserved], cpu_p95=30.0))

    assert rec.finding is Finding.OPTIMIZED
    assert rec.confidence is Confidence.MEDIUM
    assert has_reason(rec, "memory looks reserved")


def test_a_pinned_gpu_names_todays_memory_as_the_floor_not_a_peak() -> None:
    pinned = device("0", 99.0, 12 * GIB, A10G_TOTAL_MIB, p50=97.0, p99=100.0, peak=100.0)
    rec = analyze(instance("g4dn.xlarge"), usage([pinned], cpu_p95=30.0))

    assert rec.finding is Finding.UNDERPROVISIONED
    assert not has_reason(rec, "peak x 1.2 (16.0 GiB)")
    assert has_reason(rec, "today's 16.0 GiB")


def test_the_only_type_of_a_neuron_chip_says_what_it_could_not_compare_with() -> None:
    cores = [device(str(i), 50.0, None) for i in range(2)]
    rec = analyze(instance("inf2.xlarge"), usage(cores, cpu_p95=20.0))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert has_reason(rec, "no priced other Inferentia2 type")


def test_gpus_that_publish_nothing_are_counted_as_busy() -> None:
    """nvidia-smi lists every GPU: a GPU with no series is a collection fault, so it is kept."""
    rec = analyze(instance("g5.12xlarge"), usage([device("0", 60.0, 10_000.0, A10G_TOTAL_MIB)], cpu_p95=20.0))

    # 4 GPUs needed at p95 60 %: the only cheaper 4-GPU types are slower (L4 x2.00) or older (T4).
    assert rec.finding is Finding.OPTIMIZED
    assert_no_resize(rec)
    assert (rec.evidence.busy_units, rec.evidence.total_units) == (4, 4)
    assert has_reason(rec, "3 GPUs published no metrics and are counted as busy")


def test_type_no_longer_offered_gets_a_target_but_not_an_actionable_one() -> None:
    light = usage([device("0", 20.0, 6000.0, V100_TOTAL_MIB)], cpu_p95=20.0)
    retired = analyze(instance("p3.2xlarge"), light, cat=without_p3())
    offered = analyze(instance("p3.2xlarge"), light)

    # V100 -> T4 is bandwidth-bound (900 / 320 = x2.81): p95 20 % -> 56 %. RAM 30 % of 61 GiB x 1.2 = 22 GiB
    # rules out g4dn.xlarge (16 GiB): g4dn.2xlarge is the cheapest fit.
    assert retired.finding is Finding.OVERPROVISIONED
    assert retired.target_type == offered.target_type == "g4dn.2xlarge"
    assert retired.actionable is False
    assert offered.actionable is True
    assert retired.confidence is Confidence.MEDIUM
    assert retired.monthly_cost == Decimal("2233.80")  # 3.06 x 730
    assert retired.monthly_cost_after == Decimal("548.96")  # 0.752 x 730
    assert has_reason(retired, "p3.2xlarge is no longer offered in us-east-1", "maintenance window")
    # p3 is Xen, g4dn is Nitro: the reasons say what the AMI needs.
    assert has_reason(retired, "Xen to a Nitro host", "ENA and NVMe")
    assert has_reason(retired, "p3 -> g4dn", "V100-SXM2-16GB -> T4")
    assert has_reason(retired, "projected GPU p95 56%", "memory bandwidth-bound")


@pytest.mark.parametrize(
    ("host", "busy", "total", "per_gpu_memory"),
    [
        ("p3.8xlarge", 2, 4, V100_TOTAL_MIB),
        ("p4d.24xlarge", 4, 8, A100_40_TOTAL_MIB),
        ("p4d.24xlarge", 8, 8, A100_40_TOTAL_MIB),
        ("p5.48xlarge", 2, 8, H100_TOTAL_MIB),
    ],
)
def test_multi_gpu_work_on_a_p_host_never_gets_a_g_family_target(
    host: str, busy: int, total: int, per_gpu_memory: float
) -> None:
    devices = [device(str(i), 10.0, 6 * GIB, per_gpu_memory) for i in range(busy)]
    devices += [idle_device(str(i), per_gpu_memory) for i in range(busy, total)]
    rec = analyze(instance(host), usage(devices, cpu_p95=10.0, host_memory_pct=5.0))

    assert rec.target_type is None or rec.target_type.startswith("p")
    assert all(not alt.instance_type.startswith("g") for alt in rec.alternatives)


def test_the_p_family_rule_is_what_keeps_multi_gpu_work_off_g_hosts() -> None:
    """Control: the same host and work under a non-P family name is moved to a 4-GPU G host."""
    clone = replace(fx.spec("p4d.24xlarge"), instance_type="x4d.24xlarge")
    cat = with_specs(fx.catalog(), clone)
    book = with_prices(fx.prices(), {"x4d.24xlarge": fx.HOURLY["p4d.24xlarge"]})
    devices = [device(str(i), 10.0, 8 * GIB, A100_40_TOTAL_MIB) for i in range(4)]
    devices += [idle_device(str(i), A100_40_TOTAL_MIB) for i in range(4, 8)]
    summary = usage(devices, cpu_p95=10.0, host_memory_pct=5.0)

    assert analyze(instance("p4d.24xlarge"), summary, cat=cat, book=book).target_type is None
    # A100 -> L4 is x5.18 (bandwidth 1555 / 300): p95 10 % -> 52 %, busiest hours 10.5 % -> 54 %.
    assert analyze(instance("x4d.24xlarge"), summary, cat=cat, book=book).target_type == "g6.12xlarge"


def test_single_gpu_light_work_on_a_p_host_may_move_to_g() -> None:
    """p3 -> g4dn for light single-GPU work is allowed (another family: at most medium confidence)."""
    devices = [device("0", 20.0, 6 * GIB, V100_TOTAL_MIB)]
    devices += [idle_device(str(i), V100_TOTAL_MIB) for i in (1, 2, 3)]
    rec = analyze(instance("p3.8xlarge"), usage(devices, cpu_p95=10.0, host_memory_pct=5.0))

    assert rec.finding is Finding.OVERPROVISIONED
    # ceil(32 x 10 / 70) = 5 vCPUs rule out g4dn.xlarge; V100 -> T4 x2.81: p95 20 % -> 56 %.
    assert rec.target_type == "g4dn.2xlarge"
    assert rec.monthly_savings == Decimal("8386.24")  # 12.24 x 730 - 0.752 x 730 = 8935.20 - 548.96
    assert rec.confidence is Confidence.MEDIUM
    assert rec.actionable is True


def test_arm64_g5g_is_never_suggested_for_an_x86_host() -> None:
    # g5g.xlarge (T4G, arm64, $0.42/h) is cheaper than g4dn.xlarge ($0.526/h) and would otherwise fit.
    rec = analyze(
        instance("g4dn.2xlarge"),
        usage([device("0", 30.0, 4000.0, T4_TOTAL_MIB)], cpu_p95=20.0, host_memory_pct=10.0),
    )

    assert rec.target_type == "g4dn.xlarge"
    assert rec.monthly_cost_after == Decimal("383.98")  # 0.526 x 730
    assert rec.actionable is True
    assert rec.confidence is Confidence.HIGH
    # 4,000 MiB x 1.2 fits one Inferentia device (8 GiB): a pointer, x86 like the host.
    assert [alt.instance_type for alt in rec.alternatives] == ["inf1.xlarge"]
    for name in (rec.target_type, *(alt.instance_type for alt in rec.alternatives)):
        assert "x86_64" in spec_of(name).architectures


def test_arm64_host_stays_on_arm64() -> None:
    host = replace(instance("g5g.2xlarge"), architecture="arm64")
    rec = analyze(host, usage([device("0", 20.0, 3000.0, T4_TOTAL_MIB)], cpu_p95=10.0, host_memory_pct=10.0))

    assert rec.target_type == "g5g.xlarge"
    assert rec.monthly_cost == Decimal("405.88")  # 0.556 x 730
    assert rec.monthly_cost_after == Decimal("306.60")  # 0.42 x 730
    assert rec.monthly_savings == Decimal("99.28")
    assert rec.alternatives == ()  # every Neuron type is x86


@pytest.mark.parametrize(
    ("host", "target"),
    [("g5.xlarge", "g6.xlarge"), ("g5.2xlarge", "g6.xlarge"), ("g6.2xlarge", "g6.xlarge")],
)
def test_compute_capability_never_decreases(host: str, target: str) -> None:
    # Light enough for a T4: g4dn.xlarge ($0.526/h) would be the cheapest fit by price and throughput,
    # but it would lose BF16 (compute capability 7.5 < A10G 8.6 / L4 8.9).
    total = A10G_TOTAL_MIB if host.startswith("g5") else L4_TOTAL_MIB
    rec = analyze(instance(host), usage([device("0", 10.0, 4000.0, total)], cpu_p95=20.0, host_memory_pct=20.0))

    assert rec.target_type == target
    assert slowdown(host, "g4dn.xlarge") * 10.5 <= 100.0  # the T4 would carry the load
    source_acc = fx.ACCELERATORS[spec_of(host).accelerator_model]
    target_acc = fx.ACCELERATORS[spec_of(target).accelerator_model]
    assert target_acc.compute_capability_tuple >= source_acc.compute_capability_tuple


def test_a10g_to_l4_is_another_family_and_says_what_to_check() -> None:
    rec = analyze(
        instance("g5.2xlarge"),
        usage([device("0", 15.0, 4000.0, A10G_TOTAL_MIB)], cpu_p95=20.0, host_memory_pct=20.0),
    )

    # A10G -> L4 is bandwidth-bound (600 / 300 = x2.00): p95 15 % -> 30 %.
    assert rec.target_type == "g6.xlarge"
    assert rec.monthly_savings == Decimal("297.26")  # 1.212 x 730 - 0.8048 x 730 = 884.76 - 587.50
    assert rec.confidence is Confidence.MEDIUM  # even with full history
    assert has_reason(rec, "g5 -> g6", "A10G -> L4", "driver and CUDA")
    assert has_reason(rec, "projected GPU p95 30%", "memory bandwidth x2.00")


def test_host_using_efa_keeps_efa() -> None:
    # One A100 of eight at p95 12 %: A100 -> L4 x5.18 gives 62 %, A100 -> A10G x4.46 (tensor) 53 %.
    devices = [device("0", 12.0, 8 * GIB, A100_40_TOTAL_MIB)]
    devices += [idle_device(str(i), A100_40_TOTAL_MIB) for i in range(1, 8)]
    summary = usage(devices, cpu_p95=10.0, host_memory_pct=2.0)
    with_efa = analyze(instance("p4d.24xlarge", uses_efa=True), summary)
    without = analyze(instance("p4d.24xlarge"), summary)

    # 14 vCPUs and 27.6 GiB of RAM: g6.4xlarge ($1.3232/h) has no EFA; g5.8xlarge ($2.448/h) has.
    assert without.target_type == "g6.4xlarge"
    assert not spec_of("g6.4xlarge").efa_supported
    assert with_efa.target_type == "g5.8xlarge"
    assert spec_of("g5.8xlarge").efa_supported
    assert with_efa.monthly_cost_after == Decimal("1787.04")  # 2.448 x 730


def test_neuron_primary_target_stays_on_the_same_chip() -> None:
    devices = [device(str(i), 40.0, 1000.0, INF1_CORE_MIB) for i in range(4)]
    devices += [idle_device(str(i), INF1_CORE_MIB) for i in range(4, 16)]
    rec = analyze(instance("inf1.6xlarge"), usage(devices, cpu_p95=20.0, host_memory_pct=10.0))

    assert rec.finding is Finding.OVERPROVISIONED
    # 4 NeuronCores = one Inferentia device; ceil(24 x 20 / 70) = 7 vCPUs rule out inf1.xlarge.
    assert rec.target_type == "inf1.2xlarge"
    assert rec.monthly_cost == Decimal("861.40")  # 1.18 x 730
    assert rec.monthly_cost_after == Decimal("264.26")  # 0.362 x 730
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
    assert has_reason(rec, "12 of 16 NeuronCores not in use (neuron-monitor reports none)")


@pytest.mark.parametrize(
    ("host", "target", "alternative", "alternative_monthly"),
    [
        # ceil(128 x 1 / 70) = 2 vCPUs, RAM 2 % of 512 GiB x 1.2 = 12.3 GiB: inf1.xlarge (8 GiB) is too small.
        ("trn1.32xlarge", "trn1.2xlarge", "inf1.2xlarge", Decimal("264.26")),  # 0.362 x 730
        ("trn1.2xlarge", None, "inf1.xlarge", Decimal("166.44")),  # 0.228 x 730
    ],
)
def test_other_neuron_chips_only_appear_as_low_confidence_alternatives(
    host: str, target: str | None, alternative: str, alternative_monthly: Decimal
) -> None:
    cores = spec_of(host).compute_units
    devices = [device(str(i), 40.0, 1.5 * GIB, NEURON_V2_CORE_MIB) for i in range(2)]
    devices += [idle_device(str(i), NEURON_V2_CORE_MIB) for i in range(2, cores)]
    rec = analyze(instance(host), usage(devices, cpu_p95=1.0, host_memory_pct=2.0, network_gbps=0.1))

    assert rec.target_type == target  # the primary target never changes chip
    assert [alt.instance_type for alt in rec.alternatives] == [alternative]
    (alt,) = rec.alternatives
    assert spec_of(alternative).accelerator_model == "Inferentia"
    assert alt.confidence is Confidence.LOW
    assert "compiled with the AWS Neuron SDK" in alt.note
    assert alt.monthly_cost == alternative_monthly
    assert alt.monthly_cost < (rec.monthly_cost_after or Decimal(0))


@pytest.mark.parametrize("host", ["trn1.32xlarge", "trn1.2xlarge"])
def test_neuron_alternatives_respect_memory_per_neuroncore(host: str) -> None:
    peak = 6000.0  # MiB per NeuronCore: x 1.2 = 7.0 GiB, far above inf1's 2 GiB per NeuronCore
    cores = spec_of(host).compute_units
    devices = [device(str(i), 40.0, peak, NEURON_V2_CORE_MIB) for i in range(2)]
    devices += [idle_device(str(i), NEURON_V2_CORE_MIB) for i in range(2, cores)]
    rec = analyze(instance(host), usage(devices, cpu_p95=1.0, host_memory_pct=2.0, network_gbps=0.1))

    # inf1 ($0.228/h and up) is cheaper but has 2 GiB per NeuronCore: the pointer is inf2.xlarge (16 GiB).
    assert [alt.instance_type for alt in rec.alternatives] == ["inf2.xlarge"]
    assert spec_of("inf2.xlarge").memory_per_unit_mib >= peak * HEADROOM
    assert rec.alternatives[0].monthly_cost == Decimal("553.49")  # 0.7582 x 730 = 553.486


def test_the_only_type_of_its_neuron_chip_cannot_be_compared() -> None:
    """Other Neuron generations need a recompiled model, so they are never a primary target: a host on
    the only Inferentia2 type in the catalog has nothing to be compared with, and is not "optimized"."""
    devices = [device(str(i), 40.0, 1.5 * GIB, NEURON_V2_CORE_MIB) for i in range(2)]
    rec = analyze(instance("inf2.xlarge"), usage(devices, cpu_p95=1.0, host_memory_pct=2.0))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert_no_resize(rec)
    assert rec.confidence is Confidence.LOW
    assert has_reason(rec, "cannot compare")
    assert has_reason(rec, "NeuronCores 0-1: p95 40%")


def test_gpu_host_gets_neuron_alternatives_only_at_low_confidence() -> None:
    # 4 vCPUs and 11.5 GiB of RAM are enough: g5.xlarge ($1.006/h); inf2.xlarge ($0.7582/h) holds the
    # 10,000 MiB x 1.2 model on one 32 GiB Inferentia2 device.
    rec = analyze(instance("g5.12xlarge"), usage(one_of_four_busy(), cpu_p95=5.0, host_memory_pct=5.0))

    assert rec.target_type == "g5.xlarge"
    assert rec.confidence is Confidence.HIGH  # the primary GPU target
    assert [alt.instance_type for alt in rec.alternatives] == ["inf2.xlarge"]
    (alternative,) = rec.alternatives
    assert alternative.confidence is Confidence.LOW
    assert "compiled with the AWS Neuron SDK" in alternative.note
    assert spec_of("inf2.xlarge").accelerator_memory_mib >= 10_000.0 * HEADROOM
    assert alternative.monthly_cost == Decimal("553.49")  # 0.7582 x 730 = 553.486


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


def test_rollup_only_data_keeps_all_gpus_and_caps_confidence() -> None:
    rollup = [device("*", 60.0, 10_000.0, A10G_TOTAL_MIB)]
    rec = analyze(instance("g5.12xlarge"), usage(rollup, cpu_p95=20.0, accelerator_data=AcceleratorData.ROLLUP))

    assert rec.finding is Finding.OPTIMIZED  # 4 GPUs kept, and no cheaper 4-GPU type carries 60 %
    assert_no_resize(rec)
    assert rec.confidence is Confidence.MEDIUM
    assert (rec.evidence.busy_units, rec.evidence.total_units) == (4, 4)
    assert has_reason(rec, "only the per-instance roll-up is published: all 4 GPUs kept")


def test_idle_without_cpu_data_is_at_most_medium() -> None:
    devices = [idle_device(str(i), A10G_TOTAL_MIB) for i in range(4)]
    rec = analyze(instance("g5.12xlarge"), usage(devices, cpu_p95=None))

    assert rec.finding is Finding.IDLE
    assert rec.confidence is Confidence.MEDIUM
    assert rec.monthly_savings == Decimal("4140.56")  # 5.672 x 730


# ---------------------------------------------------------------------------------------------
# Recommendation id and money


def test_recommendation_id_is_stable_and_follows_the_target() -> None:
    host = instance("g5.12xlarge")
    first = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0))
    again = analyze(host, usage(one_of_four_busy(), cpu_p95=20.0), now=NOW + timedelta(days=1))
    # 4 vCPUs and 11.5 GiB of RAM are enough: g5.xlarge.
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
    ("host", "summary", "finding", "cost", "after"),
    [
        # 5.672 x 730 -> 2.448 x 730
        ("g5.12xlarge", usage(one_of_four_busy()), Finding.OVERPROVISIONED, "4140.56", "1787.04"),
        # 1.212 x 730 -> 1.624 x 730
        (
            "g5.2xlarge",
            usage([device("0", 30.0, 8000.0, A10G_TOTAL_MIB)], cpu_p95=97.0),
            Finding.NOT_GPU_BOUND,
            "884.76",
            "1185.52",
        ),
        # 1.006 x 730 -> 1.861 x 730
        ("g5.xlarge", usage([FULL_A10G], cpu_p95=30.0), Finding.UNDERPROVISIONED, "734.38", "1358.53"),
        # 0.526 x 730 -> 1.006 x 730
        ("g4dn.xlarge", usage([PINNED_T4], cpu_p95=30.0), Finding.UNDERPROVISIONED, "383.98", "734.38"),
        # 21.957642 x 730 = 16029.0787
        (
            "p4d.24xlarge",
            usage([device(str(i), 95.0, 30 * GIB, A100_40_TOTAL_MIB, p50=90.0) for i in range(8)]),
            Finding.OPTIMIZED,
            "16029.08",
            "16029.08",
        ),
        # 16.288 x 730 -> nothing
        (
            "g5.48xlarge",
            usage([idle_device(str(i), A10G_TOTAL_MIB) for i in range(8)], cpu_p95=1.0),
            Finding.IDLE,
            "11890.24",
            "0.00",
        ),
        # 1.006 x 730 = 734.38, less 109.25 of 168 stopped hours in UTC (477.57)
        (
            "g5.xlarge",
            usage(
                [device("0", 70.0, 8000.0, A10G_TOTAL_MIB)],
                cpu_p95=30.0,
                hourly_peak=business_hours_profile(),
                hourly_cpu=business_hours_cpu(),
            ),
            Finding.SCHEDULABLE,
            "734.38",
            "256.81",
        ),
    ],
    ids=["overprovisioned", "not-gpu-bound", "out-of-memory", "pinned", "optimized", "idle", "schedulable"],
)
def test_money_is_hourly_times_730_in_cents(
    host: str, summary: UsageSummary, finding: Finding, cost: str, after: str
) -> None:
    rec = analyze(instance(host), summary)

    assert rec.finding is finding
    assert rec.monthly_cost == Decimal(cost) == fx.monthly(host)
    assert rec.monthly_cost_after == Decimal(after)
    assert rec.monthly_cost is not None and rec.monthly_cost_after is not None
    assert rec.monthly_cost.as_tuple().exponent == -2
    assert rec.monthly_cost_after.as_tuple().exponent == -2
    if rec.target_type is not None:
        assert rec.monthly_cost_after == fx.monthly(rec.target_type)
    assert rec.monthly_savings == rec.monthly_cost - rec.monthly_cost_after


def test_no_price_for_the_host_type_names_the_gap_instead_of_a_target() -> None:
    book = fx.without(fx.prices(), "g5.12xlarge")
    rec = analyze(instance("g5.12xlarge"), usage(one_of_four_busy(), cpu_p95=20.0), book=book)

    # 3 of 4 GPUs idle is waste whatever the price: said, but no target can be costed.
    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type is None
    assert rec.actionable is False
    assert rec.monthly_cost is None
    assert rec.monthly_savings is None
    assert rec.confidence is Confidence.MEDIUM
    assert has_reason(
        rec, "1 of 4 GPUs do all the work", "no target can be named", "no on-demand price for g5.12xlarge in us-east-1"
    )


def test_analyze_fleet_returns_one_recommendation_per_instance() -> None:
    hosts = [instance("g5.12xlarge", "i-1"), instance("g5.xlarge", "i-2"), instance("p3.8xlarge", "i-3")]
    summaries = {"i-1": usage(one_of_four_busy(), instance_id="i-1", cpu_p95=20.0)}
    recs = analyze_fleet(hosts, summaries, fx.catalog(), fx.prices(), Policy(), NOW)

    assert [r.instance_id for r in recs] == ["i-1", "i-2", "i-3"]
    assert [r.finding for r in recs] == [
        Finding.OVERPROVISIONED,
        Finding.INSUFFICIENT_DATA,
        Finding.INSUFFICIENT_DATA,
    ]
    assert [r.monthly_cost for r in recs] == [Decimal("4140.56"), Decimal("734.38"), Decimal("8935.20")]
