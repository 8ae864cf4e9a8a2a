"""Advice that holds on workloads nobody listed (issue "Advice that holds on workloads nobody listed").

One test per wrong behaviour the issue names, each on realistic series (tests/unit/shapes.py, reduced by the
real summarize_all path) over the hand-written catalog in catalog_fixture.py. The comment above each test
says what the old rules did.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal

from demo.fleet import IDLE_GPU, Gpu, business_hours, constant, diurnal, noisy, training

from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.consolidation import consolidate
from rightsizer.domain.models import ActionKind, Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.money import monthly
from rightsizer.domain.models.usage import DeviceUsage, RegimeKind, UsageSummary
from rightsizer.domain.policy import Policy
from tests import factories
from tests.factories import NOW, device, instance, usage
from tests.unit import catalog_fixture as fx
from tests.unit.shapes import Workload, summary

GIB = 1024.0
T4_TOTAL = 15360.0
V100_TOTAL = 16160.0
A100_TOTAL = 40960.0


def advise(host: Instance | str, work: Workload | UsageSummary) -> Recommendation:
    host = instance(host) if isinstance(host, str) else host
    used = summary(work, instance_id=host.instance_id) if isinstance(work, Workload) else work
    return analyze_instance(host, used, fx.catalog(), fx.prices(), Policy(), NOW)


def reason_with(rec: Recommendation, *fragments: str) -> str:
    found = [r for r in rec.reasons if all(f in r for f in fragments)]
    assert found, f"no reason with {fragments} in {rec.reasons}"
    return found[0]


def never_a_stop(rec: Recommendation) -> None:
    assert rec.finding is not Finding.IDLE
    assert rec.action not in (ActionKind.STOP, ActionKind.SCHEDULE)


# ---------------------------------------------------------------------------------------------
# 1. Only the SMs counted as work: NVENC is an engine of its own.


def transcoding(sessions: float = 6.0, fps: float = 60.0) -> Gpu:
    """ffmpeg -hwaccel cuda ... -c:v h264_nvenc: decode and encode on the video engines, SMs nearly idle."""
    return Gpu(
        utilization=noisy(3.0, 1.0, hi=8.0),
        memory_used_mib=noisy(1.2 * GIB, 30),
        encoder_sessions=lambda t, r: float(r.choice([sessions - 1, sessions, sessions])),
        encoder_fps=noisy(fps, 3.0, lo=1.0),
    )


def test_a_live_transcoder_with_quiet_sms_is_busy_not_idle_and_not_moved_off_gpus() -> None:
    # Before: SM p95 ~5 %, so "not_gpu_bound: move the work to a non-GPU instance" (the engine it runs on).
    work = Workload(
        gpus=(transcoding(),), memory_total_mib=T4_TOTAL, cpu=noisy(30, 4), network_gbps=noisy(0.4, 0.05, lo=0)
    )
    rec = advise("g4dn.xlarge", work)

    never_a_stop(rec)
    assert rec.finding is not Finding.NOT_GPU_BOUND
    assert not any("non-GPU" in reason for reason in rec.reasons)
    reason_with(rec, "GPU 0 encodes video (NVENC)", "6 sessions", "60 fps")


def test_a_file_transcoder_with_quiet_cpu_and_network_is_never_stopped() -> None:
    # Before: SMs, CPU and network all quiet (input and output on EBS) -> "idle", one-click stop of a working host.
    work = Workload(gpus=(transcoding(2.0, 240.0),), memory_total_mib=T4_TOTAL, cpu=noisy(4, 1, lo=0.5))
    rec = advise("g4dn.2xlarge", work)

    never_a_stop(rec)
    if rec.target_type:  # a smaller host may carry it, on a GPU with as many video engines
        target = fx.ACCELERATORS[fx.spec(rec.target_type).accelerator_model]
        assert target.video_encoders >= fx.ACCELERATORS["T4"].video_encoders


def test_a_transcoder_moves_only_to_gpus_with_as_many_video_engines() -> None:
    # V100 has 3 NVENC: a T4, A10G (1) or L4 (2) would not carry its sessions, an A100 has none.
    work = Workload(
        gpus=(transcoding(9.0, 30.0),), memory_total_mib=V100_TOTAL, cpu=noisy(12, 2), network_gbps=constant(0.3)
    )
    rec = advise("p3.2xlarge", work)

    never_a_stop(rec)
    assert rec.target_type is not None, rec.reasons  # the L40S (3 NVENC) is cheaper than a p3.2xlarge
    assert fx.ACCELERATORS[fx.spec(rec.target_type).accelerator_model].video_encoders >= 3


def test_encoder_hours_are_busy_hours_of_a_schedule() -> None:
    # A transcoder that runs 08:00-19:00 UTC on weekdays; SMs quiet all the time. Before: encoder hours invisible,
    # so "idle" all week.
    def sessions(t: datetime, r: random.Random) -> float:
        return 4.0 if t.weekday() < 5 and 8 <= t.hour < 19 else 0.0

    gpu = Gpu(noisy(2.0, 0.8, hi=4.0), constant(1.1 * GIB), encoder_sessions=sessions, encoder_fps=constant(50.0))
    rec = advise("g4dn.xlarge", Workload(gpus=(gpu,), memory_total_mib=T4_TOTAL, cpu=constant(3.0)))

    assert rec.finding is Finding.SCHEDULABLE
    assert rec.evidence.schedule is not None and "Mon-Fri 08:00-19:00" in rec.evidence.schedule


def test_quiet_sms_without_encoder_stats_say_how_to_publish_them_before_any_stop() -> None:
    # Before: an idle-looking g5 without the encoder stats got a one-click stop; NVENC work would not have shown.
    work = Workload(gpus=(IDLE_GPU,), encoder_stats=False, cpu=noisy(2, 0.5, lo=0.1))
    rec = advise("g5.xlarge", work)

    assert rec.finding is Finding.IDLE  # all that was measured is quiet
    assert rec.actionable is False and rec.action is None
    assert rec.held_back is not None and "encoder stats" in rec.held_back
    reason_with(rec, "NVENC", "encoder_stats_session_count", "before anything is stopped")
    assert rec.confidence is not Confidence.HIGH


def test_a_gpu_without_video_encoders_needs_no_encoder_stats_to_be_stopped() -> None:
    # An idle A100 host: the A100 has no NVENC, so nothing unmeasured could be working.
    rec = advise("p4d.24xlarge", Workload(gpus=(IDLE_GPU,) * 8, memory_total_mib=A100_TOTAL, encoder_stats=False))

    assert rec.finding is Finding.IDLE
    assert rec.action is ActionKind.STOP


def test_quiet_sms_on_a_working_host_without_encoder_stats_is_not_told_to_leave_gpus_for_sure() -> None:
    work = Workload(gpus=(IDLE_GPU,), encoder_stats=False, cpu=noisy(35, 5), network_gbps=noisy(0.3, 0.05, lo=0))
    rec = advise("g4dn.xlarge", work)

    assert rec.finding is Finding.NOT_GPU_BOUND
    assert rec.confidence is Confidence.LOW
    reason_with(rec, "transcodes video looks just like this")
    assert rec.reasons[-1].startswith("if it encodes no video")


def test_unmeasured_encoders_on_quiet_gpus_hold_back_a_resize_that_drops_them() -> None:
    # g5.12xlarge: GPU 0 computes, GPUs 1-3 show quiet SMs but nobody measured their encoders.
    work = Workload(gpus=(Gpu(diurnal(20, 50), noisy(8 * GIB, 100)), IDLE_GPU, IDLE_GPU, IDLE_GPU), encoder_stats=False)
    rec = advise("g5.12xlarge", work)

    assert rec.finding is Finding.OVERPROVISIONED and rec.target_type is not None
    assert rec.actionable is False
    reason_with(rec, "encoder_stats_session_count")


# ---------------------------------------------------------------------------------------------
# 2. The window was read as one regime.

TEN_DAYS_AGO = NOW - timedelta(days=10)
FOUR_DAYS_AGO = NOW - timedelta(days=4)


def until(when: datetime, before: Gpu, after: Gpu) -> Gpu:
    def pick(shape_before: object, shape_after: object) -> object:
        return lambda t, r: (shape_before if t < when else shape_after)(t, r)  # type: ignore[operator]

    return Gpu(
        utilization=pick(before.utilization, after.utilization),  # type: ignore[arg-type]
        memory_used_mib=pick(before.memory_used_mib, after.memory_used_mib),  # type: ignore[arg-type]
    )


TRAINING = Gpu(training(90), noisy(30 * GIB, 300, lo=0, hi=40960))


def test_a_training_run_that_ended_four_days_ago_is_idle_since_then() -> None:
    # Before: p95 94 % over 14 days -> "optimized", while the host burned four days doing nothing.
    ended = until(FOUR_DAYS_AGO, TRAINING, IDLE_GPU)
    work = Workload(
        gpus=(ended,) * 8,
        memory_total_mib=A100_TOTAL,
        cpu=lambda t, r: 38.0 if t < FOUR_DAYS_AGO else 1.5,
        network_gbps=lambda t, r: 5.0 if t < FOUR_DAYS_AGO else 0.001,
    )
    rec = advise("p4d.24xlarge", work)

    assert rec.finding is Finding.IDLE
    assert rec.action is ActionKind.STOP
    lead = reason_with(rec, "the work ended", f"since {FOUR_DAYS_AGO:%Y-%m-%d %H}", "after 10.0 days at")
    assert "judged on the 4.0 days since" in lead
    spent = Decimal(fx.HOURLY["p4d.24xlarge"]) * 96
    reason_with(rec, f"it has cost ${spent:,.2f} since then")
    assert rec.evidence.observed_days == 4.0
    assert len(rec.evidence.daily_accelerator_mean) == 14  # the step stays visible in the evidence
    assert rec.confidence is Confidence.LOW  # four days of the current regime


def test_a_host_busy_for_the_last_four_days_after_ten_idle_ones_is_no_weekly_pattern() -> None:
    # Before: "busy only Mon-Thu ...", a schedule built from a project that has just started.
    started = until(FOUR_DAYS_AGO, IDLE_GPU, Gpu(diurnal(40, 80), noisy(9 * GIB, 200, lo=0)))
    work = Workload(gpus=(started,), cpu=lambda t, r: 2.0 if t < FOUR_DAYS_AGO else 25.0)
    rec = advise("g5.xlarge", work)

    assert rec.finding is not Finding.SCHEDULABLE
    assert rec.evidence.schedule is None
    reason_with(rec, "work started", "a change, not a weekly pattern", "judged on the 4.0 days since")


def test_a_load_that_stepped_down_is_sized_on_the_level_it_runs_at_now() -> None:
    # One model served at 85 % until five days ago, at 20 % since (traffic moved to another region).
    stepped = until(
        NOW - timedelta(days=5), Gpu(noisy(85, 4), noisy(9 * GIB, 100)), Gpu(noisy(20, 3), noisy(9 * GIB, 100))
    )
    rec = advise("g6e.2xlarge", Workload(gpus=(stepped,), memory_total_mib=46068.0, cpu=noisy(8, 1)))

    reason_with(rec, "the load stepped down", "from 85% to 20%", "if the earlier load returns")
    assert rec.evidence.accelerator_p95 is not None and rec.evidence.accelerator_p95 < 40
    assert rec.confidence is not Confidence.HIGH
    if rec.target_type:  # a downsize would not carry the earlier load: a person confirms it stays down
        assert rec.actionable is False and rec.held_back is not None and "stepped down" in rec.held_back


def test_a_run_that_started_yesterday_is_young_not_a_weekly_pattern() -> None:
    # Quiet for 12 days, then a training run flat out for the last 40 hours. Before: "busy only Sat-Mon", a
    # schedule "saving" most of the cost of a host that has not stopped working since it started.
    started = NOW - timedelta(hours=40)
    rec = advise("p4d.24xlarge", Workload(gpus=(until(started, IDLE_GPU, TRAINING),) * 8, memory_total_mib=A100_TOTAL))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    assert rec.evidence.schedule is None and rec.monthly_savings in (None, Decimal("0.00"))
    reason_with(rec, "work started", "only 1.7 days of it so far", "at least 3 are needed")


def test_a_cpu_bound_host_is_offered_more_vcpus_for_less_when_it_has_gpus_nobody_uses() -> None:
    # g5.12xlarge: the CPU pinned, one A10G at ~35 % waiting for it, three A10Gs unused. Before: 66 vCPUs by the
    # 70 % rule, so the only bigger A10G type (g5.48xlarge, 8 GPUs) at a higher price.
    work = Workload(gpus=(Gpu(noisy(35, 3), noisy(8 * GIB, 100)), IDLE_GPU, IDLE_GPU, IDLE_GPU), cpu=noisy(95, 1.5))
    rec = advise("g5.12xlarge", work)

    assert rec.finding is Finding.NOT_GPU_BOUND and rec.target_type == "g5.16xlarge"  # 64 vCPUs, the one GPU used
    assert rec.monthly_savings is not None and rec.monthly_savings > 0
    reason_with(rec, "has more vCPUs than today", "costs less", "measure again after the move")


NEURON_BUSY = Gpu(noisy(90, 3), constant(0.0))


def test_neuron_cores_that_stop_reporting_while_the_host_runs_are_idle_since() -> None:
    # neuron-monitor reports only the cores an application holds: the fine-tuning job exited five days ago, the
    # cores have not reported since, the host's CPU and network are quiet. Before: "optimized" on the 9 busy days.
    exited = NOW - timedelta(days=5)
    work = Workload(
        gpus=(Gpu(lambda t, r: min(100.0, r.gauss(90, 3)) if t < exited else float("nan"), constant(0.0)),) * 2,
        neuron=True,
        cpu=lambda t, r: 30.0 if t < exited else 2.0,
        host_memory_pct=lambda t, r: 45.0 if t < exited else 4.0,  # the job's memory went with it
    )
    rec = advise("trn1.2xlarge", work)

    assert rec.finding is Finding.IDLE
    reason_with(rec, "the work ended: every NeuronCore quiet since")
    assert not any("held by an application" in reason for reason in rec.reasons)


def test_neuron_cores_that_go_silent_while_the_host_holds_its_memory_are_not_idle() -> None:
    # neuron-monitor crashed five days ago; the training job goes on (its RAM stays, its CPU too): every core's
    # silence is the monitor's, not the job's. Before: "the work ended", a one-click stop of a working trn1.
    died = NOW - timedelta(days=5)
    work = Workload(
        gpus=(Gpu(lambda t, r: min(100.0, r.gauss(90, 3)) if t < died else float("nan"), constant(0.0)),) * 2,
        neuron=True,
        cpu=constant(6.0),
        host_memory_pct=constant(50.0),
    )
    rec = advise("trn1.2xlarge", work)

    assert rec.finding is Finding.INSUFFICIENT_DATA and rec.action is None
    reason_with(rec, "neuron-monitor has reported no NeuronCore since", "still uses 50% of its RAM", "Restart it")


def test_neuron_cores_that_never_report_are_named_as_unused() -> None:
    # trn1.32xlarge: the job uses 16 of its 32 NeuronCores; neuron-monitor never reports the other 16.
    rec = advise("trn1.32xlarge", Workload(gpus=(NEURON_BUSY,) * 16, neuron=True, cpu=noisy(25, 3)))

    assert rec.finding is Finding.OVERPROVISIONED and rec.target_type is None
    reason_with(rec, "16 of 32 NeuronCores do all the work")


def test_a_long_weekend_of_an_office_hours_host_is_not_a_change_of_regime() -> None:
    # Busy Mon-Fri 08-19 UTC; the last Monday was a holiday (a quiet stretch of ~85 hours).
    holiday = (NOW - timedelta(days=1)).date()

    def office(t: datetime, r: random.Random) -> float:
        working = t.weekday() < 5 and 8 <= t.hour < 19 and t.date() != holiday
        return r.gauss(60, 5) if working else r.uniform(0, 0.5)

    rec = advise("g5.xlarge", Workload(gpus=(Gpu(office, constant(9 * GIB)),), cpu=constant(3.0)))

    assert summary(Workload(gpus=(Gpu(office, constant(9 * GIB)),))).regime is None
    assert rec.finding is Finding.SCHEDULABLE


# ---------------------------------------------------------------------------------------------
# 5. One missing metric was told as "0.0 days of GPU metrics".


def test_memory_without_utilisation_names_the_missing_metric_and_mig() -> None:
    work = Workload(gpus=(Gpu(noisy(40, 5), noisy(20 * GIB, 200)),) * 8, memory_total_mib=A100_TOTAL)
    rec = advise("p4d.24xlarge", Workload(**{**work.__dict__, "utilization_published": False}))

    assert rec.finding is Finding.INSUFFICIENT_DATA
    reason_with(rec, "GPU memory is published but nvidia_smi_utilization_gpu has no data", "MIG")
    assert not any("0.0 days" in reason for reason in rec.reasons)


# ---------------------------------------------------------------------------------------------
# 6. A resize inside the window was not seen.


def test_load_measured_on_the_old_type_does_not_buy_a_paid_upgrade() -> None:
    # g5.2xlarge (8 vCPUs) with its CPU pinned until five days ago, resized to g5.4xlarge (16 vCPUs), at 45 % since.
    # Before: CPU p95 98 % "of 16 vCPUs" (the old type's load) -> a one-click upgrade to g5.8xlarge.
    resized = NOW - timedelta(days=5)
    work = Workload(
        gpus=(Gpu(noisy(45, 5), noisy(10 * GIB, 100)),),
        cpu=lambda t, r: r.gauss(97, 1) if t < resized else r.gauss(45, 3),
        previous_type="g5.2xlarge",
        resized_at=resized,
    )
    rec = advise("g5.4xlarge", work)

    assert rec.finding is not Finding.NOT_GPU_BOUND
    assert rec.actionable is False
    assert rec.evidence.cpu_p95 is not None and rec.evidence.cpu_p95 < 60
    reason_with(rec, "resized from g5.2xlarge to g5.4xlarge", "only the 5.0 days since are judged")
    assert rec.confidence is not Confidence.HIGH


# ---------------------------------------------------------------------------------------------
# 7. Gaps in the accelerator table decided targets; a faster GPU had no bound on GPU count.


def test_a_saturated_t4_is_offered_one_faster_gpu_not_an_eight_gpu_host() -> None:
    # Before (eu-west-1): p4d.24xlarge, 8 A100s at $16,884/month more, for one T4's work.
    book = fx.without(fx.prices(), "g6.xlarge", "g6.2xlarge", "g6.4xlarge", "g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge")
    pinned = Gpu(noisy(98, 1, lo=90), noisy(9 * GIB, 100))
    rec = analyze_instance(
        instance("g4dn.xlarge"),
        summary(Workload(gpus=(pinned,), memory_total_mib=T4_TOTAL, cpu=noisy(30, 3))),
        fx.catalog(),
        book,
        Policy(),
        NOW,
    )

    assert rec.finding is Finding.UNDERPROVISIONED
    assert rec.target_type is not None
    assert fx.spec(rec.target_type).accelerator_count == 1
    assert rec.target_type.startswith("g5.")  # A10G: faster than a T4 on every figure


# ---------------------------------------------------------------------------------------------
# 8. Part-time hosts were priced on 730 hours.


def test_a_host_that_stops_itself_every_night_is_priced_on_the_hours_it_runs() -> None:
    def runs(t: datetime) -> bool:
        return 8 <= t.hour < 18  # ~42 % of the day

    work = Workload(gpus=(IDLE_GPU,), memory_total_mib=T4_TOTAL, cpu=noisy(2, 0.5, lo=0.1), runs=runs)
    rec = advise("g4dn.xlarge", work)

    assert rec.finding is Finding.IDLE
    share = Decimal(10) / Decimal(24)
    full = Decimal(fx.HOURLY["g4dn.xlarge"]) * 730
    assert rec.monthly_cost is not None
    assert abs(rec.monthly_cost - full * share) < Decimal("1.00")
    assert rec.monthly_savings == rec.monthly_cost
    reason_with(rec, "priced on the ~304 hours a month it runs", "42%")


# ---------------------------------------------------------------------------------------------
# 9. Per-host advice shut out the bigger saving.


def _team(
    type_name: str, team: str, count: int, devices: list[DeviceUsage]
) -> tuple[list[Instance], dict[str, UsageSummary], list[Recommendation]]:
    hosts = [instance(type_name, instance_id=f"i-{team[:3]}{n:014d}", tags={"team": team}) for n in range(count)]
    used = {h.instance_id: usage(devices, instance_id=h.instance_id, cpu_p95=5.0, host_memory_pct=10.0) for h in hosts}
    recs = [analyze_instance(h, used[h.instance_id], fx.catalog(), fx.prices(), Policy(), NOW) for h in hosts]
    return hosts, used, recs


def _saving(recs: list[Recommendation]) -> Decimal:
    return sum((r.monthly_savings or Decimal(0) for r in recs), Decimal(0))


def test_packing_three_light_hosts_beats_three_downsizes_and_says_that_one_precludes_the_other() -> None:
    # Three g5.2xlarge of team search in one zone, each GPU at ~20 %: each alone moves to a g6.xlarge ($297.26 a
    # month each); packed, one g5.2xlarge carries the three workloads and two hosts stop ($1,769.52).
    light = device("0", 20.0, 4 * GIB, 23028.0, p50=12.0, p99=24.0, peak=26.0)
    hosts, used, recs = _team("g5.2xlarge", "search", 3, [light])
    per_host = _saving(recs)
    assert all(r.finding is Finding.OVERPROVISIONED and r.target_type == "g6.xlarge" for r in recs)

    packed = consolidate(recs, hosts, used, fx.catalog(), Policy())

    assert {r.finding for r in packed} == {Finding.CONSOLIDATE}
    assert _saving(packed) == 2 * Decimal(fx.HOURLY["g5.2xlarge"]) * 730 > per_host
    for rec in packed:
        reason_with(rec, "consolidating saves the group more", f"${per_host:,.2f}", "exclude each other")
        assert rec.actionable is False


def test_when_downsizes_save_more_the_consolidation_is_named_as_the_alternative() -> None:
    # Three g5.12xlarge each using one of four GPUs: three downsizes to one-GPU types save more than stopping two
    # (one g5.12xlarge carries the three GPUs' work and the RAM: 10 % of 192 GiB each).
    busy = device("0", 15.0, 6 * GIB, 23028.0, p50=10.0, p99=18.0, peak=20.0)
    idle = [device(str(i), 0.0, 3.0, 23028.0, p50=0.0, p99=0.0, peak=1.0) for i in (1, 2, 3)]
    hosts, used, recs = _team("g5.12xlarge", "ads", 3, [busy, *idle])

    packed = consolidate(recs, hosts, used, fx.catalog(), Policy())

    assert packed[0].finding is Finding.OVERPROVISIONED and all(r.target_type for r in packed)
    assert _saving(packed) == _saving(recs) > 2 * Decimal(fx.HOURLY["g5.12xlarge"]) * 730
    for rec in packed:
        reason_with(rec, "also possible: consolidating the 3 hosts", "onto 1", "exclude each other")
        assert rec.actionable is True


def test_a_regime_is_never_found_in_steady_work() -> None:
    assert summary(Workload(gpus=(TRAINING,) * 2, memory_total_mib=A100_TOTAL)).regime is None
    assert summary(Workload(gpus=(IDLE_GPU,))).regime is None
    office = Gpu(business_hours(noisy(62, 8), noisy(0.3, 0.3, hi=1.5)), constant(10 * GIB))
    assert summary(Workload(gpus=(office,))).regime is None


def test_the_regime_found_is_described_in_the_summary() -> None:
    ended = until(FOUR_DAYS_AGO, TRAINING, IDLE_GPU)
    found = summary(Workload(gpus=(ended,) * 2, memory_total_mib=A100_TOTAL)).regime

    assert found is not None and found.kind is RegimeKind.WENT_QUIET
    assert found.since.replace(minute=0) == FOUR_DAYS_AGO.replace(minute=0)
    assert 85 <= found.level_before <= 92 and found.level_after < 1


# ---------------------------------------------------------------------------------------------
# 3. Every host was priced as Linux. 4. Only two regions had prices.


def billed(host: Instance, platform: str, operation: str = "") -> Instance:
    return replace(host, platform=platform, usage_operation=operation)


def bundled_advice(host: Instance, work: UsageSummary) -> Recommendation:
    region = host.region
    return analyze_instance(host, work, factories.catalog(region), factories.prices(region), Policy(), NOW)


IDLE_T4 = usage([device("0", 0.0, 3.0, T4_TOTAL, p50=0.0, p99=0.0, peak=1.0)], cpu_p95=2.0, network_gbps=0.001)


def test_a_windows_host_is_priced_at_the_windows_rate_not_the_linux_one() -> None:
    # Before: $0.526/h (Linux) for a Windows g4dn.xlarge, which costs $0.710/h in us-east-1.
    rec = bundled_advice(billed(instance("g4dn.xlarge"), "Windows", "RunInstances:0002"), IDLE_T4)

    assert rec.finding is Finding.IDLE
    assert rec.monthly_cost == Decimal("0.71") * 730
    reason_with(rec, "priced as Windows, host and targets alike")


def test_a_resize_of_a_windows_host_saves_the_windows_difference() -> None:
    one_of_four = [
        device("0", 60.0, 10_000.0, 23028.0),
        *(device(str(i), 0.0, 3.0, 23028.0, p50=0.0, p99=0.0, peak=1.0) for i in (1, 2, 3)),
    ]
    host = billed(instance("g5.12xlarge"), "Windows")
    rec = bundled_advice(host, usage(one_of_four))
    linux = bundled_advice(instance("g5.12xlarge"), usage(one_of_four))

    windows = factories.prices().variants["windows"]
    assert rec.target_type is not None and rec.monthly_cost == monthly(windows["g5.12xlarge"])
    assert rec.monthly_cost_after == monthly(windows[rec.target_type])
    assert rec.monthly_savings != linux.monthly_savings


def test_rhel_is_priced_as_rhel() -> None:
    rec = bundled_advice(billed(instance("g4dn.xlarge"), "Red Hat Enterprise Linux", "RunInstances:0010"), IDLE_T4)

    assert rec.monthly_cost == monthly(factories.prices().variants["rhel"]["g4dn.xlarge"])
    assert rec.monthly_cost != Decimal("0.526") * 730


def test_a_platform_without_a_known_price_has_no_price_never_the_linux_one() -> None:
    rec = bundled_advice(billed(instance("g4dn.xlarge"), "Windows BYOL", "RunInstances:0800"), IDLE_T4)

    assert rec.finding is Finding.IDLE
    assert rec.monthly_cost is None and rec.monthly_savings is None
    reason_with(rec, "no on-demand price for g4dn.xlarge in us-east-1", "no Windows BYOL prices")


def test_an_idle_host_in_sydney_gets_its_money() -> None:
    # Before: the snapshot had us-east-1 and eu-west-1 only; an idle host in ap-southeast-2 had no money at all.
    rec = bundled_advice(instance("g4dn.xlarge", region="ap-southeast-2"), IDLE_T4)

    assert rec.finding is Finding.IDLE
    assert rec.monthly_cost is not None and rec.monthly_cost > Decimal("0.526") * 730  # Sydney costs more
    assert rec.monthly_savings == rec.monthly_cost
