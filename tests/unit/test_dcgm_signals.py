"""DCGM's signals as a second, better signal (issue 32): per GPU the best one published decides, kernel time
(utilization.gpu) only where nothing better exists, and every reason names the signal it rests on.

Workloads run through the real summaries (tests/unit/shapes.py) and the analyzer, on the catalog moto ships and the
bundled price snapshot, as tests/unit/test_limits.py does.
"""

from __future__ import annotations

from demo.fleet import Gpu, Shape, constant, noisy

from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.signals import Engine
from rightsizer.domain.sizing.load import busiest, engine_load
from tests.expert_fleet import LAUNCH_BOUND_L40S as LAUNCH_BOUND
from tests.expert_fleet import TRANSCODER_L40S as TRANSCODER
from tests.expert_fleet import kernel_only, mib, profiled
from tests.unit.shapes import Workload, summary
from tests.unit.test_limits import advise, reason_with

GIB = 1024.0


def text(rec: Recommendation) -> str:
    return " | ".join(rec.reasons)


def gpu(kernel: Shape, memory_gib: float, **signals: Shape) -> Gpu:
    """A GPU whose agent publishes kernel time and memory, and DCGM's `signals` (by Signal value) where given."""
    return profiled(kernel, mib(memory_gib * GIB, 200, cap=22888), **signals)


def test_kernel_time_that_reads_saturated_while_the_sms_wait_moves_to_a_smaller_gpu_on_the_sms_load() -> None:
    # g6e.xlarge (one L40S, $1,359/month): on kernel time it is pinned and would be told to buy a faster GPU; on SM
    # active it fits an L4 (g6.xlarge), projected by each engine's ratio (L40S -> L4: FP32 x3.02, tensor x2.99,
    # bandwidth x2.88).
    rec = advise("g6e.xlarge", LAUNCH_BOUND)
    blind = advise("g6e.xlarge", kernel_only(LAUNCH_BOUND))

    assert blind.finding is Finding.UNDERPROVISIONED, "kernel time alone reads a saturated GPU"
    reason_with(blind, "utilization.gpu counts a GPU busy while any kernel runs", "agent/dcgm")
    assert rec.finding is Finding.OVERPROVISIONED
    assert rec.target_type == "g6.xlarge"
    reason_with(rec, "SM active p95 2", "(DCGM, busiest GPU) while utilization.gpu reads p95 9")
    projection = reason_with(rec, "g6.xlarge: 1x L4", "projected SM active p95")
    assert (
        "tensor active p95" in projection
        and "DRAM active p95" in projection
        and "(DCGM, per GPU; L40S -> L4: FP32 x3.02" in projection
    )


def test_a_gpu_kept_busy_by_small_kernels_with_nothing_smaller_to_move_to_is_told_how_to_use_it() -> None:
    # g4dn.xlarge is the cheapest GPU type: no smaller GPU carries anything. Kernel time says "pinned, buy faster";
    # SM active (20 %) says the GPU waits between kernels: batch, share it, not upgrade.
    rec = advise("g4dn.xlarge", LAUNCH_BOUND)
    blind = advise("g4dn.xlarge", kernel_only(LAUNCH_BOUND))

    assert blind.finding is Finding.UNDERPROVISIONED
    assert rec.finding is Finding.OVERPROVISIONED and rec.target_type is None
    assert rec.confidence is not Confidence.HIGH and not rec.actionable
    reason_with(rec, "SM active p95", "while utilization.gpu reads a median of 9", "most of its SMs wait")
    advice = rec.reasons[-1]
    assert "batch requests" in advice and "MPS" in advice


def test_underprovisioned_only_when_the_sms_are_saturated() -> None:
    busy = Workload(gpus=(gpu(noisy(99, 0.5), 8, sm_active=noisy(90, 2), tensor_active=noisy(60, 3),
                                 dram_active=noisy(40, 3)),), cpu=noisy(20, 3))  # fmt: skip

    rec = advise("g4dn.xlarge", busy)

    assert rec.finding is Finding.UNDERPROVISIONED
    reason_with(rec, "SM active median 9", "(DCGM): its SMs are saturated")
    assert "utilization.gpu counts a GPU busy" not in text(rec), "the SMs were measured: nothing to publish"


def test_a_bandwidth_bound_job_is_kept_off_a_gpu_with_half_the_bandwidth_that_kernel_time_would_pick() -> None:
    # g5.2xlarge (A10G, 600 GB/s) -> g6.2xlarge (L4, 300 GB/s) is cheaper. Kernel time p95 35 % x the largest ratio
    # (bandwidth x2.00) is 70 %: it fits, and kernel time would move it. DRAM active p95 60 % x 2.00 is 120 %: it does
    # not, and the reasons say which engine ruled the L4 out.
    work = Workload(gpus=(gpu(noisy(35, 2), 6, sm_active=noisy(30, 2), tensor_active=noisy(5, 1),
                                 dram_active=noisy(60, 2)),), cpu=noisy(10, 2))  # fmt: skip

    rec = advise("g5.2xlarge", work)
    blind = advise("g5.2xlarge", kernel_only(work))

    assert blind.target_type is not None and blind.target_type.startswith("g6."), "kernel time moves it to an L4"
    assert rec.target_type is None or not rec.target_type.startswith("g6."), text(rec)
    reason_with(rec, "memory bandwidth (g6.", "would run at DRAM active p95 1")


def test_a_tensor_heavy_job_moves_across_generations_on_its_tensor_and_dram_activity() -> None:
    # A10G -> L4: the L4 has 1.7x the dense tensor throughput and half the bandwidth. Kernel time p95 60 % x 2.00
    # (bandwidth) is 120 %: nothing cheaper. Measured: SM active 50 %, tensor 45 %, DRAM 25 %: on an L4 52 %, 26 %,
    # 50 %: it fits.
    work = Workload(gpus=(gpu(noisy(60, 2), 6, sm_active=noisy(50, 2), tensor_active=noisy(45, 2),
                                 dram_active=noisy(25, 2)),), cpu=noisy(10, 2))  # fmt: skip

    rec = advise("g5.2xlarge", work)
    blind = advise("g5.2xlarge", kernel_only(work))

    assert blind.target_type is None or not blind.target_type.startswith("g6."), text(blind)
    assert rec.finding is Finding.OVERPROVISIONED and rec.target_type is not None
    assert rec.target_type.startswith("g6."), text(rec)
    assert rec.confidence is not Confidence.HIGH, "another family: driver and CUDA to check"


def test_sm_occupancy_stands_in_for_sm_active_at_medium_confidence_at_most() -> None:
    work = Workload(gpus=(gpu(noisy(97, 1.5), 8, sm_occupancy=noisy(15, 3), tensor_active=noisy(5, 1),
                                 dram_active=noisy(11, 2)),), cpu=noisy(20, 3))  # fmt: skip

    rec = advise("g6e.xlarge", work)

    assert rec.finding is Finding.OVERPROVISIONED and rec.target_type == "g6.xlarge"
    assert rec.confidence is not Confidence.HIGH
    reason_with(rec, "SM occupancy p95")


def test_a_gpu_without_dcgm_beside_one_with_it_leaves_its_engines_to_kernel_time() -> None:
    work = Workload(gpus=(gpu(noisy(97, 1.5), 8, sm_active=noisy(18, 3)), gpu(noisy(97, 1.5), 8)), cpu=noisy(20, 3))
    usage = summary(work)

    load = engine_load(usage.devices, Engine.COMPUTE, busiest(usage.devices))

    assert load.signal is None and load.p95 > 90, "the GPU that publishes nothing keeps its kernel time"


# -- video engines, in percent of the engines ----------------------------------------------------------------------


def test_a_transcoder_measured_only_by_dcgm_is_never_idle_and_its_encoder_load_moves_to_fewer_engines() -> None:
    # g6e.xlarge's L40S has 3 NVENC at 20 % (p95 26 %): one engine's worth of work, which an L4's 2 NVENC carry.
    rec = advise("g6e.xlarge", TRANSCODER)

    assert rec.finding is Finding.OVERPROVISIONED and rec.target_type == "g6.xlarge", text(rec)
    reason_with(rec, "NVENC utilisation p95 2", "NVDEC utilisation p95")
    reason_with(rec, "2 NVENC per GPU (needs 1)")


def test_encoder_sessions_alone_keep_every_engine_they_cannot_project() -> None:
    sessions = Workload(
        gpus=(Gpu(noisy(4, 1), noisy(3 * GIB, 100), encoder_sessions=constant(4.0), encoder_fps=constant(30.0)),),
        cpu=noisy(25, 3),
    )

    rec = advise("g6e.xlarge", sessions)

    assert rec.target_type is None or not rec.target_type.startswith("g6."), "3 NVENC kept: L4 has 2"


def test_decoder_only_work_shows_at_last_and_is_never_idle() -> None:
    decoding = Workload(
        gpus=(gpu(noisy(1, 0.5), 2, sm_active=noisy(1, 0.5), encoder_util=constant(0.0), decoder_util=noisy(40, 5)),),
        cpu=noisy(2, 1),
        encoder_stats=False,
    )

    rec = advise("g5.xlarge", decoding)

    assert rec.finding not in (Finding.IDLE, Finding.NOT_GPU_BOUND, Finding.HELD_UNUSED), text(rec)
    reason_with(rec, "NVDEC utilisation p95")
