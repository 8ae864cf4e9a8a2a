"""Advice a GPU expert would give, on realistic usage (issue "Trustworthy advice").

Each test states a workload that earlier rules got wrong, in the shape the agents publish it (a flat
reserved memory line, bursts, a weekly job, a host without mem_used_percent, a Neuron host), runs it
through the real summarize() and the analyzer over the hand-written catalog in catalog_fixture.py, and
asserts what an expert would conclude. The comment above each test says what the old rules did.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from demo.fleet import (
    IDLE_GPU,
    Gpu,
    bursts,
    business_hours,
    constant,
    diurnal,
    follows_load,
    noisy,
    reserved,
    training,
    weekly_job,
)

from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.catalog import AcceleratorTable, Catalog
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy, TimeZones
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.wording import usd
from tests.factories import NOW, instance
from tests.unit import catalog_fixture as fx
from tests.unit.shapes import Workload, summary

A100_TOTAL = 40960.0
A10G_TOTAL = 23028.0
T4_TOTAL = 15360.0
GIB = 1024.0


def advise(
    host: Instance | str,
    usage: UsageSummary | Workload | None,
    *,
    cat: Catalog | None = None,
    book: PriceBook | None = None,
    policy: Policy | None = None,
) -> Recommendation:
    host = instance(host) if isinstance(host, str) else host
    if isinstance(usage, Workload):
        usage = summary(usage, instance_id=host.instance_id)
    return analyze_instance(host, usage, cat or fx.catalog(), book or fx.prices(), policy or Policy(), NOW)


def reason_with(rec: Recommendation, *fragments: str) -> str:
    """The one reason that carries every fragment (so the numbers belong together); fails otherwise."""
    found = [r for r in rec.reasons if all(f in r for f in fragments)]
    assert found, f"no reason with {fragments} in {rec.reasons}"
    return found[0]


def no_reason_with(rec: Recommendation, fragment: str) -> bool:
    return not any(fragment in r for r in rec.reasons)


def gpus(count: int, busy: Gpu, busy_count: int = 1) -> tuple[Gpu, ...]:
    return (busy,) * busy_count + (IDLE_GPU,) * (count - busy_count)


# ---------------------------------------------------------------------------------------------
# 1. Reserved GPU memory is not a working set.

IDLE_VLLM = Gpu(utilization=noisy(0.2, 0.3, hi=2.0), memory_used_mib=reserved(0.9 * A100_TOTAL))


def test_an_idle_vllm_server_is_held_unused_not_an_upgrade_to_p4de() -> None:
    # Before: memory peak 36 GiB x 1.2 > 40 GiB, "underprovisioned: out-of-memory risk" -> p4de, +$4,007/month. Then
    # "idle" with a one-click stop; the server holding the GPUs may be wanted (issue 28): its own state, advice only.
    rec = advise("p4d.24xlarge", Workload(gpus=(IDLE_VLLM,) * 8, memory_total_mib=A100_TOTAL))

    assert rec.finding is Finding.HELD_UNUSED
    assert rec.target_type is None
    assert rec.actionable is False and rec.action is None
    assert rec.monthly_cost == fx.monthly("p4d.24xlarge")
    assert rec.monthly_cost_after == Decimal("0.00")
    # The GPUs hold a loaded model: someone may still call it, so not high confidence.
    assert rec.confidence is Confidence.MEDIUM
    reason_with(rec, "all 8 GPUs hold up to 36.0 GiB", "idle in all but memory")
    reason_with(rec, f"holding them costs {usd(fx.monthly('p4d.24xlarge'))}/month")
    reason_with(rec, "nvidia-smi lists each process", "whether anything still calls it")
    reason_with(rec, "8,000 GB of instance store", "wiped")
    reason_with(rec, "p4d capacity is scarce", "InsufficientInstanceCapacity")
    assert no_reason_with(rec, "memory rises with the load")
    assert rec.evidence.memory_reserved is True


TENSORFLOW = Gpu(utilization=diurnal(30, 60), memory_used_mib=reserved(22_500))  # maps all memory


def test_tensorflow_mapping_all_memory_is_not_told_to_upgrade() -> None:
    # Before: 22.5 of 22.4 GiB x 1.2 -> "underprovisioned: out-of-memory risk" -> g6e (L40S), high confidence.
    rec = advise("g5.2xlarge", Workload(gpus=(TENSORFLOW,), cpu=diurnal(5, 12, 1)))

    assert rec.finding is not Finding.UNDERPROVISIONED
    assert no_reason_with(rec, "memory rises with the load")
    reason_with(rec, "memory looks reserved", "TF_FORCE_GPU_ALLOW_GROWTH")
    # The only move allowed keeps today's memory per GPU (the working set is unknown): g5.xlarge.
    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "g5.xlarge"
    assert rec.confidence is Confidence.MEDIUM  # memory was not measured


def test_memory_at_88_percent_that_follows_the_load_is_not_an_out_of_memory_claim() -> None:
    # Before: any host above 83 % of memory (peak x 1.2 > capacity) was "underprovisioned", high confidence.
    gpu = Gpu(utilization=diurnal(20, 55), memory_used_mib=follows_load(9 * GIB, 0.88 * A10G_TOTAL))
    rec = advise("g5.xlarge", Workload(gpus=(gpu,)))

    assert rec.finding is Finding.OPTIMIZED
    assert rec.target_type is None


def test_a_working_set_that_rises_with_load_to_97_percent_is_a_medium_confidence_upgrade() -> None:
    gpu = Gpu(utilization=diurnal(35, 70), memory_used_mib=follows_load(8 * GIB, 0.97 * T4_TOTAL))
    rec = advise("g4dn.xlarge", Workload(gpus=(gpu,), memory_total_mib=T4_TOTAL, cpu=diurnal(15, 30, 2)))

    assert rec.finding is Finding.UNDERPROVISIONED
    assert rec.target_type is not None
    assert fx.spec(rec.target_type).memory_per_unit_mib > fx.spec("g4dn.xlarge").memory_per_unit_mib
    assert rec.confidence is Confidence.MEDIUM  # never high for a paid upgrade on memory alone
    assert rec.actionable is True
    reason_with(rec, "memory rises with the load", "of memory.total", "out-of-memory risk")
    reason_with(rec, "confirm out-of-memory errors")
    assert rec.monthly_savings is not None and rec.monthly_savings < 0


def test_flat_full_memory_under_constant_load_proves_nothing() -> None:
    # Training flat out with a flat 97 % line: reservation or steady state, memory alone can't tell.
    gpu = Gpu(utilization=training(88), memory_used_mib=reserved(0.97 * A100_TOTAL))
    rec = advise("p4d.24xlarge", Workload(gpus=(gpu,) * 8, memory_total_mib=A100_TOTAL, cpu=noisy(38, 4)))

    assert rec.finding is Finding.OPTIMIZED
    assert no_reason_with(rec, "memory rises with the load")
    reason_with(rec, "no out-of-memory risk is claimed")


# ---------------------------------------------------------------------------------------------
# 2. Throughput is projected with tensor and bandwidth figures, not FP32.

LIGHT_A100 = Gpu(utilization=diurnal(25, 40, 2), memory_used_mib=follows_load(6 * GIB, 9 * GIB))


def test_one_light_a100_is_not_sent_to_an_l4() -> None:
    # Before: FP32 ratio 19.5 / 30.3 -> "projected 26 %" on an L4, which is 2.6x slower in dense BF16 and
    # 5.2x slower in memory bandwidth.
    rec = advise(
        "p4d.24xlarge",
        Workload(gpus=gpus(8, LIGHT_A100), memory_total_mib=A100_TOTAL, host_memory_pct=constant(2.0)),
    )

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type is not None
    assert fx.spec(rec.target_type).accelerator_model == "L40S"
    # A100 -> L40S: tensor x0.86, bandwidth x1.80, FP32 x0.21: bandwidth decides; p95 40 % -> 72 %.
    reason_with(rec, "memory bandwidth-bound", "bandwidth x1.80", "tensor x0.86")
    assert rec.confidence is Confidence.MEDIUM  # another family
    assert rec.monthly_savings == fx.monthly("p4d.24xlarge") - fx.monthly(rec.target_type)


def test_the_projection_takes_the_largest_ratio() -> None:
    from rightsizer.domain.sizing.projection import projection

    a100, l4 = fx.ACCELERATORS["A100-SXM4-40GB"], fx.ACCELERATORS["L4"]
    projected = projection(a100, l4)
    assert projected is not None
    assert projected.ratio == pytest.approx(1555 / 300)  # bandwidth, not FP32 (0.64) nor tensor (2.58)
    same = projection(a100, a100)
    assert same is not None and same.ratio == 1.0


# ---------------------------------------------------------------------------------------------
# 3. A target must carry the busiest hours, not only p95.

BURSTY = Gpu(utilization=bursts(noisy(15, 4), burst=100.0), memory_used_mib=noisy(6 * GIB, 100, hi=A10G_TOTAL))


def test_bursts_to_100_percent_keep_the_host_on_an_equally_fast_gpu() -> None:
    # Before: p95 22 % x 2 = 44 % on an L4 (g6.xlarge); each burst would need 200 % of it.
    rec = advise("g5.2xlarge", Workload(gpus=(BURSTY,)))

    assert rec.evidence.accelerator_burst == 100.0
    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "g5.xlarge"  # same A10G: bursts fit
    reason_with(rec, "g5.xlarge", "busiest hours 100%")


def test_without_bursts_the_same_host_may_move_to_an_l4() -> None:
    steady = Gpu(utilization=noisy(15, 4), memory_used_mib=noisy(6 * GIB, 100, hi=A10G_TOTAL))
    rec = advise("g5.2xlarge", Workload(gpus=(steady,)))

    assert rec.target_type == "g6.xlarge"


# ---------------------------------------------------------------------------------------------
# 4. Idle means no activity at all; busy hosts with unused GPUs need a CPU instance.


def test_a_weekly_one_hour_job_is_schedulable_not_idle() -> None:
    # Before: p99 < 5 % with CPU < 20 % -> "idle: stop or terminate", high confidence.
    job = Gpu(utilization=weekly_job(noisy(95, 3)), memory_used_mib=weekly_job(constant(12 * GIB)))
    rec = advise("g5.xlarge", Workload(gpus=(job,)))

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.evidence.schedule == "Sun 02:00-03:00 UTC"
    assert rec.evidence.idle_hours_per_week == 167
    # Idle 167 of 168 hours; the pair runs in UTC (the default zone, no clock change), so it keeps 0.75 hours of
    # margins (boot 15 minutes, late work 30): stopped 166.25, 734.38 x 166.25 / 168.
    assert rec.monthly_savings == Decimal("726.73")
    assert no_reason_with(rec, "terminate")


def test_unused_gpus_on_a_host_running_a_cpu_service_are_not_gpu_bound() -> None:
    # Before: GPU p99 < 5 % and CPU p95 below 20 % -> "idle: stop or terminate".
    rec = advise("g5.4xlarge", Workload(gpus=(IDLE_GPU,), cpu=diurnal(8, 18, 1)))

    assert rec.finding is Finding.NOT_GPU_BOUND
    assert rec.target_type is None
    reason_with(rec, "the GPU is unused", "while the host works")
    assert rec.reasons[-1].startswith("move the work to a non-GPU instance type")
    assert no_reason_with(rec, "terminate")


def test_unused_gpus_on_a_host_serving_network_traffic_are_not_gpu_bound() -> None:
    rec = advise("g5.4xlarge", Workload(gpus=(IDLE_GPU,), cpu=constant(4.0), network_gbps=diurnal(0.2, 0.8, 0.05)))

    assert rec.finding is Finding.NOT_GPU_BOUND
    reason_with(rec, "network p95")


def test_a_quiet_host_with_quiet_gpus_is_still_idle() -> None:
    rec = advise("g5.4xlarge", Workload(gpus=(IDLE_GPU,), cpu=noisy(2, 0.5, lo=0.1)))

    assert rec.finding is Finding.IDLE
    assert rec.confidence is Confidence.HIGH
    assert rec.monthly_savings == fx.monthly("g5.4xlarge")


# ---------------------------------------------------------------------------------------------
# 5. Unmeasured host RAM: the finding follows the accelerators, the RAM gets a proportional floor.

TWO_BUSY_A10G = Gpu(utilization=diurnal(30, 60), memory_used_mib=follows_load(6 * GIB, 10 * GIB))


def test_g5_48xlarge_with_6_of_8_gpus_idle_and_no_ram_metric_is_overprovisioned() -> None:
    # Before: every target had to keep all 768 GiB of RAM -> "optimized, no cheaper type fits".
    rec = advise(
        "g5.48xlarge",
        Workload(gpus=gpus(8, TWO_BUSY_A10G, busy_count=2), cpu=diurnal(4, 10, 1), host_memory_pct=None),
    )

    assert rec.finding is Finding.OVERPROVISIONED
    # 768 GiB x 2/8 GPUs kept = 192 GiB floor: g5.12xlarge (4 GPUs, 192 GiB) is the cheapest that keeps it.
    assert rec.target_type == "g5.12xlarge"
    assert rec.actionable is False
    assert rec.confidence is Confidence.MEDIUM
    reason_with(rec, "host memory not measured", "192.0 GiB", "768.0 GiB x 2/8", "mem_used_percent")
    assert rec.monthly_savings == fx.monthly("g5.48xlarge") - fx.monthly("g5.12xlarge")


def test_measured_ram_always_wins() -> None:
    rec = advise(
        "g5.48xlarge",
        Workload(gpus=gpus(8, TWO_BUSY_A10G, busy_count=2), cpu=diurnal(4, 10, 1), host_memory_pct=constant(4.0)),
    )

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "g5.12xlarge"  # 2 GPUs need a 4-GPU g5; RAM 4 % x 768 x 1.2 = 37 GiB fits
    assert rec.actionable is True
    assert no_reason_with(rec, "host memory not measured")


def test_a_neuron_host_without_ram_metrics_still_gets_its_downsize() -> None:
    cores = Workload(gpus=(Gpu(diurnal(8, 22, 2), constant(0.0)),) * 4, neuron=True, host_memory_pct=None)
    rec = advise("inf1.6xlarge", cores)

    assert rec.finding is Finding.OVERPROVISIONED
    # 4 of 16 NeuronCores busy: one Inferentia device; RAM floor 48 GiB x 4/16 = 12 GiB -> inf1.2xlarge.
    assert rec.target_type == "inf1.2xlarge"
    assert rec.actionable is False
    reason_with(rec, "host memory not measured", "12.0 GiB")


# ---------------------------------------------------------------------------------------------
# 6. "Optimized" only when a comparison was made.


def _without_accelerator(model: str) -> Catalog:
    base = fx.catalog()
    return replace(
        base, accelerators=AcceleratorTable({k: v for k, v in base.accelerators.by_model.items() if k != model})
    )


def test_an_unknown_gpu_model_with_7_of_8_idle_is_overprovisioned_without_a_target() -> None:
    # Before: no accelerator figures -> no candidate -> "optimized", high confidence.
    rec = advise("g5.48xlarge", Workload(gpus=gpus(8, TWO_BUSY_A10G)), cat=_without_accelerator("A10G"))

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type is None
    assert rec.actionable is False
    reason_with(rec, "1 of 8 GPUs do all the work", "A10G is not in the accelerator table")


def test_an_unpriced_type_is_insufficient_data_not_optimized() -> None:
    rec = advise("g5.2xlarge", Workload(gpus=(TWO_BUSY_A10G,)), book=fx.without(fx.prices(), "g5.2xlarge"))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert rec.monthly_cost is None
    reason_with(rec, "cannot compare", "no on-demand price for g5.2xlarge")


def test_nothing_of_the_same_kind_priced_is_insufficient_data() -> None:
    neuron_prices = {k: v for k, v in fx.HOURLY.items() if k.startswith(("inf", "trn"))}
    book = PriceBook(fx.REGION, {k: Decimal(v) for k, v in neuron_prices.items()}, "test", {})
    book = replace(book, on_demand={**book.on_demand, "g5.2xlarge": Decimal("1.212")})
    rec = advise("g5.2xlarge", Workload(gpus=(TWO_BUSY_A10G,)), book=book)

    assert rec.finding is Finding.INSUFFICIENT_DATA
    reason_with(rec, "no priced nvidia type")


# ---------------------------------------------------------------------------------------------
# 7. Spot and Auto Scaling hosts get the finding their usage deserves, in words, at their real cost.


def test_an_idle_spot_host_says_it_would_be_idle_at_its_spot_price() -> None:
    # Before: excluded up front, $0 of savings and no word about its usage.
    book = replace(fx.prices(), spot={"g5.2xlarge": Decimal("0.45")})
    rec = advise(instance("g5.2xlarge", lifecycle="spot"), Workload(gpus=(IDLE_GPU,)), book=book)

    assert rec.finding is Finding.EXCLUDED
    assert rec.actionable is False
    assert rec.monthly_cost == Decimal("328.50")  # 0.45 x 730
    assert rec.monthly_cost_after == Decimal("0.00")
    reason_with(rec, "would be idle", "Spot instance (cost at its Spot price)", "never resized in place")


def test_an_overprovisioned_spot_host_claims_savings_only_at_a_known_spot_price() -> None:
    book = replace(fx.prices(), spot={"g5.2xlarge": Decimal("0.45")})
    rec = advise(instance("g5.2xlarge", lifecycle="spot"), Workload(gpus=(BURSTY,)), book=book)

    reason_with(rec, "would be overprovisioned to g5.xlarge")
    assert rec.monthly_savings == Decimal("0.00")  # g5.xlarge's Spot price is unknown: no on-demand guess


def test_an_idle_auto_scaling_member_points_at_its_group() -> None:
    rec = advise(instance("g5.2xlarge", asg_name="serving"), Workload(gpus=(IDLE_GPU,)))

    assert rec.finding is Finding.EXCLUDED
    reason_with(rec, "would be idle", "Auto Scaling group 'serving'")
    assert rec.monthly_savings == fx.monthly("g5.2xlarge")


# ---------------------------------------------------------------------------------------------
# 8. Schedules look at the network and name what a stop costs.

OFFICE_GPU = Gpu(
    utilization=business_hours(noisy(62, 8), noisy(0.3, 0.3, hi=1.5)),
    memory_used_mib=follows_load(8 * GIB, 12 * GIB),
)
OFFICE_CPU = business_hours(noisy(35, 5), noisy(2, 0.5, lo=0.1))


def test_office_hours_on_a_p4d_name_the_capacity_and_instance_store_risks() -> None:
    work = Workload(gpus=(OFFICE_GPU,) * 8, memory_total_mib=A100_TOTAL, cpu=OFFICE_CPU)
    rec = advise("p4d.24xlarge", work)

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.evidence.schedule == "Mon-Fri 08:00-19:00 UTC"
    reason_with(rec, "InsufficientInstanceCapacity")
    reason_with(rec, "instance store")
    assert rec.confidence is Confidence.MEDIUM  # scarce capacity


def test_an_endpoint_still_serving_at_night_is_not_put_on_a_schedule() -> None:
    work = Workload(gpus=(OFFICE_GPU,), cpu=OFFICE_CPU, network_gbps=noisy(0.3, 0.05, lo=0.1))
    rec = advise("g5.xlarge", work)

    assert rec.finding is not Finding.SCHEDULABLE


def test_office_hours_on_a_g5_are_schedulable_with_high_confidence() -> None:
    rec = advise("g5.xlarge", Workload(gpus=(OFFICE_GPU,), cpu=OFFICE_CPU))

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.confidence is Confidence.HIGH
    assert rec.evidence.idle_hours_per_week == 168 - 55
    # Five windows in UTC (no clock change), each 0.75 hours of margins: 113 - 3.75 stopped hours a week.
    assert rec.monthly_savings == (fx.monthly("g5.xlarge") * Decimal("109.25") / 168).quantize(Decimal("0.01"))
    assert rec.evidence.schedule_plan == "starts 07:45 Mon-Fri, stops 19:30 Mon-Fri (UTC)"


def test_a_schedule_is_priced_as_the_pair_its_team_zone_creates() -> None:
    """The approval writes the pair in the team's zone (Europe/Berlin changes its clock: an hour's margin each side),
    so the saving counts the hours that pair stops the host, and the evidence carries the pair the approver sees."""
    berlin = Policy(time_zones=TimeZones("UTC", (("research", "Europe/Berlin"),)))
    host = replace(instance("g5.xlarge"), tags={"team": "research"})

    rec = advise(host, Workload(gpus=(OFFICE_GPU,), cpu=OFFICE_CPU), policy=berlin)

    # Five windows, each 2.75 hours of margins (boot 15 minutes, late work 30, the clock change 60 each side).
    assert rec.monthly_savings == (fx.monthly("g5.xlarge") * Decimal("99.25") / 168).quantize(Decimal("0.01"))
    plan = "starts 07:45 Mon-Fri, stops 21:30 Mon-Fri (Europe/Berlin, an hour's margin each side for the clock change)"
    assert rec.evidence.schedule_plan == plan
    reason_with(rec, "the saving counts the 99.25 hours a week", plan)


# ---------------------------------------------------------------------------------------------
# 9. Confidence follows the quality of the evidence, not only its coverage.


def test_a_pattern_seen_in_one_week_only_is_medium_confidence() -> None:
    rec = advise("g5.xlarge", Workload(gpus=(OFFICE_GPU,), cpu=OFFICE_CPU, days=9))

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.confidence is Confidence.MEDIUM
    reason_with(rec, "seen in one week only")


def test_a_job_at_a_different_time_each_week_gets_no_fixed_schedule() -> None:
    def wandering(t: object, r: object) -> float:
        from datetime import datetime

        assert isinstance(t, datetime)
        week = (t - NOW).days // 7
        busy = (t.weekday(), t.hour) == ((2, 14) if week % 2 else (5, 3))
        return 95.0 if busy else 0.2

    job = Gpu(utilization=wandering, memory_used_mib=constant(2 * GIB))
    rec = advise("g5.xlarge", Workload(gpus=(job,)))

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.confidence is Confidence.LOW
    reason_with(rec, "differ from week to week", "start the host when the work needs it")


# ---------------------------------------------------------------------------------------------
# Found in review: each was wrong advice in the costly direction or a half-done point above.

LOADER_BOUND = Gpu(utilization=noisy(26, 5), memory_used_mib=noisy(12 * GIB, 200, hi=A10G_TOTAL))


def test_a_cpu_bound_host_with_idle_gpus_keeps_only_the_gpu_in_use() -> None:
    # Before: "the loader feeds all of them": all 4 GPUs kept, a one-click paid upgrade at high confidence.
    work = Workload(gpus=gpus(4, LOADER_BOUND), cpu=noisy(88, 2), host_memory_pct=noisy(40, 2))
    rec = advise("g5.12xlarge", work)

    assert rec.finding is Finding.NOT_GPU_BOUND
    # 1 GPU in use; 48 vCPUs at p95 ~91 % need ~63: the 1-GPU g5.16xlarge (64 vCPUs) is cheaper than today.
    assert rec.target_type == "g5.16xlarge"
    assert rec.monthly_savings == fx.monthly("g5.12xlarge") - fx.monthly("g5.16xlarge")


def test_a_paid_cpu_upgrade_is_never_high_confidence() -> None:
    rec = advise("g5.2xlarge", Workload(gpus=(LOADER_BOUND,), cpu=noisy(95, 2.5), host_memory_pct=noisy(62, 3)))

    assert rec.finding is Finding.NOT_GPU_BOUND
    assert rec.monthly_savings is not None and rec.monthly_savings < 0
    assert rec.confidence is Confidence.MEDIUM


PINNED = Gpu(utilization=noisy(97, 1.5, hi=100.0), memory_used_mib=noisy(8 * GIB, 100, hi=A10G_TOTAL))


def test_one_pinned_gpu_among_idle_ones_sheds_the_idle_gpus_before_any_upgrade() -> None:
    # Before: "underprovisioned" -> p5.48xlarge (+$36,000/month), keeping the 3 idle GPUs.
    rec = advise("g5.12xlarge", Workload(gpus=gpus(4, PINNED), cpu=diurnal(5, 12, 1), host_memory_pct=constant(5.0)))

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type is not None
    target = fx.spec(rec.target_type)
    assert (target.accelerator_model, target.accelerator_count) == ("A10G", 1)  # as fast: the load fits as today
    reason_with(rec, "median utilisation", "a faster GPU only pays if the work is too slow")


def test_cpu_bursts_keep_their_vcpus() -> None:
    # Before: vCPUs from CPU p95 only: 9 of 48 needed, while every burst takes ~46.
    cpu = bursts(noisy(8, 2), burst=95.0)
    rec = advise("g5.12xlarge", Workload(gpus=gpus(4, BURSTY), cpu=cpu, host_memory_pct=constant(5.0)))

    assert rec.target_type is not None
    assert fx.spec(rec.target_type).vcpus >= 46  # 48 x 95 %


def test_a_target_without_a_tensor_figure_is_not_compared_by_bandwidth_alone() -> None:
    from rightsizer.domain.sizing.projection import projection

    a100 = fx.ACCELERATORS["A100-SXM4-40GB"]
    unknown = replace(fx.ACCELERATORS["A10G"], model="A10G-no-tensor", tensor_tflops=None)
    assert projection(a100, unknown) is None


def test_a_nightly_cpu_job_on_a_host_with_unused_gpus_is_not_idle() -> None:
    # Before: CPU p95 2 % ("quiet") -> "idle: stop or terminate", high confidence.
    rec = advise("g5.4xlarge", Workload(gpus=(IDLE_GPU,), cpu=lambda t, r: 70.0 if t.hour == 2 else 2.0))

    assert rec.finding is Finding.NOT_GPU_BOUND
    assert no_reason_with(rec, "terminate")


def test_a_nightly_network_job_on_a_host_with_unused_gpus_is_not_idle() -> None:
    work = Workload(gpus=(IDLE_GPU,), network_gbps=lambda t, r: 2.0 if t.hour == 2 else 0.001)
    rec = advise("g5.4xlarge", work)

    assert rec.finding is Finding.NOT_GPU_BOUND


def test_six_idle_a100s_are_named_even_when_no_smaller_p_type_exists() -> None:
    # Before: the P-family rule left no 2-GPU target, so "optimized, high confidence".
    two = Gpu(utilization=diurnal(20, 50), memory_used_mib=follows_load(10 * GIB, 14 * GIB))
    work = Workload(
        gpus=gpus(8, two, 2), memory_total_mib=A100_TOTAL, cpu=diurnal(5, 12, 1), host_memory_pct=constant(2)
    )
    rec = advise("p4d.24xlarge", work)

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type is None
    assert rec.actionable is False
    assert rec.confidence is Confidence.MEDIUM
    reason_with(rec, "2 of 8 GPUs do all the work", "no cheaper type")


def test_gpus_that_hold_a_model_but_never_work_are_dropped_and_named() -> None:
    busy = Gpu(utilization=diurnal(20, 50), memory_used_mib=reserved(0.9 * A10G_TOTAL))
    replica = Gpu(utilization=noisy(0.2, 0.3, hi=2.0), memory_used_mib=reserved(0.9 * A10G_TOTAL))
    work = Workload(gpus=(busy, replica, replica, replica), cpu=diurnal(4, 9, 1), host_memory_pct=constant(8.0))
    rec = advise("g5.12xlarge", work)

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type is not None and fx.spec(rec.target_type).accelerator_count == 1
    assert rec.confidence is Confidence.MEDIUM
    reason_with(rec, "GPUs 1-3 hold up to", "did no work")


def test_a_weekly_job_seen_once_still_keeps_an_equally_fast_gpu() -> None:
    # Before: one job hour in six days fell out of the p99 of hourly maxima: g6.xlarge (an L4) at
    # "busiest hours 1 %", actionable, while the job runs at 95 % of an A10G.
    weekday = (NOW.weekday() - 2) % 7
    job = Gpu(weekly_job(noisy(95, 3), weekday=weekday), weekly_job(constant(12 * GIB), weekday=weekday))
    rec = advise("g5.2xlarge", Workload(gpus=(job,), days=6))

    assert rec.target_type is None or fx.spec(rec.target_type).accelerator_model == "A10G"


def test_without_hourly_maxima_a_daily_burst_still_counts() -> None:
    daily = Gpu(
        utilization=lambda t, r: 100.0 if (t.hour, t.minute) == (12, 0) else r.gauss(15, 3),
        memory_used_mib=noisy(6 * GIB, 100, hi=A10G_TOTAL),
    )
    rec = advise("g5.2xlarge", Workload(gpus=(daily,), hourly_maxima=False))

    assert rec.evidence.accelerator_burst == 100.0
    assert rec.target_type is None or fx.spec(rec.target_type).accelerator_model == "A10G"


def test_a_spot_target_dearer_at_spot_prices_is_no_saving() -> None:
    book = replace(fx.prices(), spot={"g5.2xlarge": Decimal("0.45"), "g5.xlarge": Decimal("0.60")})
    rec = advise(instance("g5.2xlarge", lifecycle="spot"), Workload(gpus=(BURSTY,)), book=book)

    assert rec.target_type is None
    assert rec.monthly_savings == Decimal("0.00")
    reason_with(rec, "g5.xlarge costs as much or more at its Spot price")


def test_an_idle_spot_host_without_a_spot_price_claims_no_saving() -> None:
    rec = advise(instance("g5.2xlarge", lifecycle="spot"), Workload(gpus=(IDLE_GPU,)))

    assert rec.monthly_savings == Decimal("0.00")
    assert rec.lifecycle == "spot"


def test_a_schedule_for_a_type_no_longer_offered_names_the_risk() -> None:
    offered = frozenset(fx.TYPES) - {"g5.xlarge"}
    rec = advise("g5.xlarge", Workload(gpus=(OFFICE_GPU,), cpu=OFFICE_CPU), cat=fx.catalog(offered=offered))

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.confidence is Confidence.MEDIUM
    reason_with(rec, "g5.xlarge is no longer offered in us-east-1", "may not get its type back")
    assert len([r for r in rec.reasons if "no longer offered" in r]) == 1, "said once"


def test_an_idle_auto_scaling_member_is_told_to_scale_the_group_not_to_stop_the_host() -> None:
    rec = advise(instance("g5.2xlarge", asg_name="serving"), Workload(gpus=(IDLE_GPU,)))

    assert rec.reasons[-1].startswith("lower the group's desired capacity")
    assert no_reason_with(rec, "terminate it if nobody claims it")
    assert no_reason_with(rec, "stop the host")


def test_a_spot_member_of_a_group_is_led_once() -> None:
    book = replace(fx.prices(), spot={"g5.2xlarge": Decimal("0.45")})
    rec = advise(instance("g5.2xlarge", asg_name="batch", lifecycle="spot"), Workload(gpus=(IDLE_GPU,)), book=book)

    assert sum("never resized in place" in reason for reason in rec.reasons) == 1
    reason_with(rec, "a Spot instance")


def test_idle_neuroncores_that_report_are_held_by_an_application() -> None:
    cores = Workload(gpus=(Gpu(noisy(0.2, 0.2, hi=1.0), constant(0.0)),) * 32, neuron=True)
    rec = advise("trn1.32xlarge", cores)

    assert rec.finding is Finding.IDLE
    assert rec.confidence is Confidence.MEDIUM
    reason_with(rec, "NeuronCores 0-31 are held by an application")


def test_an_idle_host_counts_no_busy_units() -> None:
    rec = advise("g5.12xlarge", Workload(gpus=(IDLE_GPU,) * 4))

    assert (rec.evidence.busy_units, rec.evidence.total_units) == (0, 4)


def test_an_unpriced_host_with_a_weekly_pattern_is_schedulable_without_a_figure() -> None:
    rec = advise("g5.xlarge", Workload(gpus=(OFFICE_GPU,), cpu=OFFICE_CPU), book=fx.without(fx.prices(), "g5.xlarge"))

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.monthly_savings is None
