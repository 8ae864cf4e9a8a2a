"""A GPU shared by several small workloads as MIG slices (issue 32): nvidia-smi reads utilization.gpu as [N/A] in MIG
mode, DCGM measures each GPU instance, and each slice is sized on its own, on its GPU's MIG profiles (NVIDIA MIG User
Guide), through the real summaries (tests/unit/shapes.py) and the analyzer.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import timedelta

import pytest
from demo.fleet import Gpu, noisy

from rightsizer.domain.mig import carries, mig_capable, mig_gpu, profile
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.usage import SeriesStats, SliceUsage
from rightsizer.domain.policy import Policy
from rightsizer.domain.signals import Signal
from tests.expert_fleet import mib
from tests.factories import NOW
from tests.unit.shapes import Slice, Workload
from tests.unit.test_limits import advise, reason_with, spec

GIB = 1024.0
A100_TOTAL = 40960.0
# GPU memory as nvidia-smi reports it for the whole MIG-mode GPU: what the agent still publishes.
MIG_GPU = Gpu(noisy(0, 0), mib(24 * GIB, 200))


def partitioned(*slices: Slice, days: int = 14) -> Workload:
    """A p4d.24xlarge (8x A100-SXM4-40GB) in MIG mode: memory but no utilization.gpu per GPU; every GPU has a 7g.40gb
    working at 70 % of its SMs with 30 GiB, except where `slices` say otherwise."""
    given = {one.gpu for one in slices}
    whole = tuple(
        Slice(index, "0", "7g.40gb", noisy(70, 2), mib(30 * GIB, 100)) for index in range(8) if index not in given
    )
    return Workload(
        gpus=(MIG_GPU,) * 8,
        memory_total_mib=A100_TOTAL,
        utilization_published=False,
        cpu=noisy(25, 3),
        days=days,
        slices=(*slices, *whole),
    )


SMALL_ON_A_3G = Slice(0, "2", "3g.20gb", noisy(9, 1, lo=0), mib(3.1 * GIB, 20))
BUSY_4G = Slice(0, "1", "4g.20gb", noisy(70, 2), mib(15 * GIB, 100))


def test_a_mig_gpu_whose_slices_report_is_sized_per_slice_not_insufficient_data() -> None:
    rec = advise("p4d.24xlarge", partitioned(SMALL_ON_A_3G, BUSY_4G))

    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.confidence is Confidence.HIGH and rec.target_type is None and not rec.actionable
    reason_with(rec, "GPUs 0-7 run in MIG mode", "utilization.gpu", "[N/A]", "GPU instances'")
    reason_with(
        rec,
        "MIG instance 3g.20gb on GPU 0",
        "SM active p95 11%",
        "(DCGM)",
        "memory peak 3.2 GiB",
        "a 1g.5gb carries it",
    )
    reason_with(rec, "MIG instance 4g.20gb on GPU 0", "its profile fits")
    assert "3g.20gb on GPU 0 -> 1g.5gb" in rec.reasons[-1] and "frees 2 compute slices" in rec.reasons[-1]


def test_memory_keeps_a_slice_on_a_profile_its_compute_would_leave() -> None:
    # 9 % of a 3g's SMs fits one compute slice, but 7 GiB x 1.2 headroom does not fit a 1g.5gb: the 1g.10gb does.
    heavy = replace(SMALL_ON_A_3G, memory_mib=mib(7 * GIB, 20))

    rec = advise("p4d.24xlarge", partitioned(heavy, BUSY_4G))

    reason_with(rec, "MIG instance 3g.20gb on GPU 0", "memory peak 7.1 GiB", "a 1g.10gb carries it")


def test_a_slice_whose_sms_its_profile_cannot_carry_is_told_the_profile_it_needs() -> None:
    pinned = Slice(0, "9", "1g.5gb", noisy(97, 2, hi=100), mib(2 * GIB, 20))

    rec = advise("p4d.24xlarge", partitioned(pinned, SMALL_ON_A_3G))

    assert rec.finding is Finding.UNDERPROVISIONED
    reason_with(rec, "MIG instance 1g.5gb on GPU 0", "SM active p95 100%", "it needs a 2g.10gb")
    assert "1g.5gb on GPU 0 -> 2g.10gb" in rec.reasons[-1]


def test_slices_their_profiles_fit_are_optimized() -> None:
    rec = advise("p4d.24xlarge", partitioned())

    assert rec.finding is Finding.OPTIMIZED
    reason_with(rec, "MIG instance 7g.40gb on GPU 3", "SM active p95 7", "memory peak 30", "its profile fits")


def test_without_a_per_instance_memory_reading_no_profile_with_less_memory_is_advised() -> None:
    unmeasured = replace(SMALL_ON_A_3G, memory_mib=None)

    rec = advise("p4d.24xlarge", partitioned(unmeasured, BUSY_4G))

    assert rec.finding is Finding.OPTIMIZED, "9 % of a 3g's SMs, but its memory unknown: the 20 GB it has is kept"
    assert rec.confidence is Confidence.MEDIUM
    reason_with(rec, "MIG instance 3g.20gb on GPU 0", "memory not published per instance")


def test_sm_occupancy_stands_in_where_an_instance_publishes_no_sm_active_at_medium_confidence() -> None:
    occupancy = replace(SMALL_ON_A_3G, signal=Signal.SM_OCCUPANCY)

    rec = advise("p4d.24xlarge", partitioned(occupancy, BUSY_4G))

    assert rec.finding is Finding.OVERPROVISIONED and rec.confidence is Confidence.MEDIUM
    reason_with(rec, "MIG instance 3g.20gb on GPU 0", "SM occupancy p95", "a 1g.5gb carries it")


def test_a_mig_gpu_without_per_instance_readings_is_still_insufficient_data_and_says_what_to_publish() -> None:
    work = partitioned()
    without_gpu_7 = replace(work, slices=tuple(one for one in work.slices if one.gpu != 7))

    rec = advise("p4d.24xlarge", without_gpu_7)

    assert rec.finding is Finding.INSUFFICIENT_DATA
    reason_with(rec, "nvidia_smi_utilization_gpu has no data", "DCGM's profiling")


def test_a_few_days_of_per_instance_readings_are_not_enough() -> None:
    rec = advise("p4d.24xlarge", partitioned(SMALL_ON_A_3G, BUSY_4G, days=2))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    reason_with(rec, "MIG instance 3g.20gb on GPU 0: only 2.0 days of readings", "at least 3 are needed")


def test_a_slice_created_lately_is_not_sized_until_it_has_the_days_the_others_are_sized_on() -> None:
    young = replace(SMALL_ON_A_3G, load=lambda t, r: r.gauss(9, 1) if t >= NOW - timedelta(days=2) else math.nan)

    rec = advise("p4d.24xlarge", partitioned(young, BUSY_4G))

    assert rec.finding is Finding.OPTIMIZED and rec.confidence is Confidence.MEDIUM
    reason_with(rec, "not sized: MIG instance 3g.20gb on GPU 0: only 2.0 days of readings")
    assert not any("a 1g.5gb carries it" in reason for reason in rec.reasons)


def test_slices_of_mig_gpus_beside_gpus_that_report_are_said_while_the_host_is_judged_on_the_others() -> None:
    # MIG mode is set per GPU: GPU 0 is partitioned, GPUs 1-7 run one training job each at ~90 % kernel time.
    training = Gpu(noisy(90, 3), mib(30 * GIB, 300))
    work = Workload(
        gpus=(MIG_GPU, *(training,) * 7),
        memory_total_mib=A100_TOTAL,
        cpu=noisy(40, 3),
        slices=(SMALL_ON_A_3G, BUSY_4G),
    )

    rec = advise("p4d.24xlarge", work)

    assert rec.finding is not Finding.INSUFFICIENT_DATA
    reason_with(rec, "MIG instance 3g.20gb on GPU 0", "a 1g.5gb carries it")
    assert sum("MIG instance" in reason for reason in rec.reasons) == 2, "each slice once"


# -- the profile table -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance_type", "first", "whole"),
    [
        ("p4d.24xlarge", "1g.5gb", "7g.40gb"),
        ("p4de.24xlarge", "1g.10gb", "7g.80gb"),
        ("p5.48xlarge", "1g.10gb", "7g.80gb"),
    ],
)
def test_each_mig_capable_gpu_has_its_own_profiles(instance_type: str, first: str, whole: str) -> None:
    found = mig_gpu(spec(instance_type))

    assert found is not None
    assert (found.profiles[0].name, found.profiles[-1].name) == (first, whole)


@pytest.mark.parametrize("instance_type", ["g5.xlarge", "g6e.xlarge", "g4dn.xlarge", "p3.2xlarge"])
def test_gpus_that_do_not_partition_have_no_profiles(instance_type: str) -> None:
    assert mig_gpu(spec(instance_type)) is None and not mig_capable(spec(instance_type))


def test_a_profiles_name_is_its_geometry() -> None:
    assert profile("MIG 3g.20gb") == profile("3g.20gb")
    found = profile("1g.10gb+me")
    assert found is not None and (found.compute_slices, found.memory_gb) == (1, 10)
    assert found.memory_mib < 10 * GIB, "GB as 10^9 bytes: never more than the instance holds"
    assert profile("GPU 0") is None


def test_a_slices_load_scales_with_the_compute_slices_and_its_memory_with_the_headroom() -> None:
    three, one, two = profile("3g.20gb"), profile("1g.5gb"), profile("2g.10gb")
    assert three is not None and one is not None and two is not None
    usage = SliceUsage("2", "3g.20gb", Signal.SM_ACTIVE, SeriesStats(4032, 20, 20, 30, 31, 33), 3.0 * GIB)
    policy = Policy()  # p95 within 80 %, the busiest 5 minutes within 100 %, memory peak x 1.2

    assert not carries(usage, three, one, policy), "p95 30 % of 3 compute slices is 90 % of one"
    assert carries(replace(usage, load=replace(usage.load, p95=26)), three, one, policy), "78 %, busiest 99 %"
    assert carries(usage, three, two, policy), "45 % of two, busiest 50 %, 3.6 GiB in 9.3"
    assert not carries(replace(usage, memory_used_peak_mib=8.0 * GIB), three, two, policy), "9.6 GiB > 9.3 GiB"
