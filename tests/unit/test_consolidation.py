"""Fleet consolidation: part-used hosts of one team and zone whose measured work fits fewer of them get `consolidate`
advice naming the hosts and the target; advice only, low or medium confidence (domain/consolidation.py)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from rightsizer.cli.output.csv_rows import csv_rows
from rightsizer.domain.analyzer import analyze_fleet
from rightsizer.domain.consolidation import consolidate
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import DeviceUsage, SignalStats, UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.signals import Signal
from rightsizer.services.report import build_report, fleet_totals, recommendation_json
from tests.factories import NOW, device, idle_device, instance, stats, usage
from tests.unit import catalog_fixture as fx
from tests.unit._builders import A100_40_TOTAL_MIB, T4_TOTAL_MIB

T4_MONTHLY = Decimal("383.98")  # g4dn.xlarge at 0.526/h


def t4_host(
    number: int, p95: float = 15.0, team: str = "search", zone_suffix: str = ""
) -> tuple[Instance, UsageSummary]:
    """A g4dn.xlarge (the cheapest T4 type: right-sized on its own) using a sixth of its GPU."""
    instance_id = f"i-{number:017x}"
    host = instance("g4dn.xlarge", instance_id, tags={"team": team} if team else None)
    if zone_suffix:
        host = replace(host, availability_zone=f"us-east-1{zone_suffix}")
    busy = device("0", p95, 3_000.0, T4_TOTAL_MIB, p99=p95 + 5, peak=p95 + 10)
    return host, usage([busy], instance_id=instance_id, cpu_p95=10.0, host_memory_pct=20.0, network_gbps=0.2)


def half_p4d(number: int) -> tuple[Instance, UsageSummary]:
    """A p4d.24xlarge training on 4 of its 8 A100s (no smaller P type keeps NVLink: right-sized alone)."""
    instance_id = f"i-{number:017x}"
    busy = [device(str(i), 70.0, 30_000.0, A100_40_TOTAL_MIB, p99=80.0, peak=85.0) for i in range(4)]
    idle = [idle_device(str(i), A100_40_TOTAL_MIB) for i in range(4, 8)]
    summary = usage([*busy, *idle], instance_id=instance_id, cpu_p95=20.0, host_memory_pct=20.0, network_gbps=1.0)
    return instance("p4d.24xlarge", instance_id, tags={"team": "llm"}), summary


def advise(hosts: list[tuple[Instance, UsageSummary]]) -> dict[str, Recommendation]:
    instances = [h for h, _ in hosts]
    summaries = {h.instance_id: u for h, u in hosts}
    recs = analyze_fleet(instances, summaries, fx.catalog(), fx.prices(), Policy(), NOW)
    alone = {(r.finding, r.target_type) for r in recs}
    # Each host alone is right-sized, or partly idle with no smaller type to move to.
    assert alone <= {(Finding.OPTIMIZED, None), (Finding.OVERPROVISIONED, None)}
    return {r.instance_id: r for r in consolidate(recs, instances, summaries, fx.catalog(), Policy())}


def test_three_part_used_hosts_of_a_team_fit_one_and_the_others_are_named_for_stopping() -> None:
    recs = advise([t4_host(1, 20.0), t4_host(2, 15.0), t4_host(3, 10.0)])

    assert {r.finding for r in recs.values()} == {Finding.CONSOLIDATE}
    keep, *drained = (recs[f"i-{n:017x}"] for n in (1, 2, 3))
    plan = keep.consolidation
    assert plan is not None and all(r.consolidation == plan for r in drained)
    assert plan.keep == (keep.instance_id,) and plan.target_type == "g4dn.xlarge"  # the busiest host stays
    assert plan.hosts == tuple(sorted(recs)) and plan.group == "team=search in us-east-1a"
    assert keep.monthly_savings == Decimal("0.00") and [r.monthly_savings for r in drained] == [T4_MONTHLY] * 2
    assert all(r.net_savings == r.monthly_savings for r in recs.values())
    assert all(r.actionable is False and r.action is None for r in recs.values()), "advice only, never one click"
    # One T4 would carry three workloads: the GPU is shared, which changes latency.
    assert {r.confidence for r in recs.values()} == {Confidence.LOW}
    lead = keep.reasons[0]
    assert lead.startswith("consolidate: 3 g4dn.xlarge hosts of team=search in us-east-1a")
    assert f"keep {keep.instance_id}" in lead and "saves $767.96/month for the group" in lead
    assert any("CUDA MPS or time-slicing" in reason for reason in keep.reasons)
    assert fleet_totals(recs.values()).monthly_savings == Decimal("767.96")
    document = recommendation_json(drained[0])
    assert document["finding"] == "consolidate" and document["consolidation"]["keep"] == [keep.instance_id]
    rows = {row["instance_id"]: row for row in csv_rows(build_report(recs.values(), NOW, 14))}
    assert rows[drained[0].instance_id]["consolidation_keep"] == keep.instance_id
    assert rows[drained[0].instance_id]["consolidation_hosts"] == "; ".join(plan.hosts)


def test_whole_gpus_moving_to_free_gpus_is_medium_confidence() -> None:
    recs = advise([half_p4d(1), half_p4d(2)])

    assert {r.finding for r in recs.values()} == {Finding.CONSOLIDATE}
    assert {r.confidence for r in recs.values()} == {Confidence.MEDIUM}
    assert any("each busy GPU moves to a GPU of its own" in reason for r in recs.values() for reason in r.reasons)
    assert sorted(r.monthly_savings or 0 for r in recs.values()) == [Decimal("0.00"), fx.monthly("p4d.24xlarge")]


@pytest.mark.parametrize(
    "hosts",
    [
        pytest.param([t4_host(1, team="search"), t4_host(2, team="ads")], id="different-teams"),
        pytest.param([t4_host(1), t4_host(2, zone_suffix="b")], id="different-zones"),
        pytest.param([t4_host(1, team=""), t4_host(2, team="")], id="no-team-tag"),
        pytest.param([t4_host(1, 50.0), t4_host(2, 45.0)], id="work-that-does-not-fit"),
    ],
)
def test_hosts_that_do_not_belong_together_or_do_not_fit_keep_their_advice(
    hosts: list[tuple[Instance, UsageSummary]],
) -> None:
    recs = advise(hosts)

    assert {r.finding for r in recs.values()} == {Finding.OPTIMIZED}
    assert all(r.consolidation is None for r in recs.values())


def busy_p4d(number: int, kernel_p95: float) -> tuple[Instance, UsageSummary]:
    """half_p4d whose four busy A100s read `kernel_p95` % kernel time."""
    host, summary = half_p4d(number)
    devices = tuple(
        replace(d, utilization=stats(kernel_p95), utilization_peak=min(100.0, kernel_p95 + 2))
        if d.utilization and d.utilization.p95 > 1
        else d
        for d in summary.devices
    )
    return host, replace(summary, devices=devices)


def with_signals(host: tuple[Instance, UsageSummary], **signals: float) -> tuple[Instance, UsageSummary]:
    """The host's busy GPUs publish DCGM's `signals` (by Signal value) at these p95s, its idle ones at 0."""
    instance, summary = host

    def profiled(d: DeviceUsage) -> DeviceUsage:
        busy = d.utilization is not None and d.utilization.p95 > 1
        profile = tuple(SignalStats(Signal(name), stats(p95 if busy else 0.0)) for name, p95 in signals.items())
        return replace(d, profile=profile)

    return instance, replace(summary, devices=tuple(profiled(d) for d in summary.devices))


def reasons(recs: dict[str, Recommendation]) -> str:
    return " | ".join(reason for rec in recs.values() for reason in rec.reasons)


def test_work_that_fills_its_gpu_moves_whole_onto_a_free_gpu_of_the_same_type() -> None:
    # Each p4d runs four A100s at 92 % kernel time and four idle: the busy GPUs of one move to the idle GPUs of the
    # other as they are (an identical, free GPU carries a GPU's work as it does today), none shared.
    recs = advise([busy_p4d(1, 92.0), busy_p4d(2, 90.0)])

    assert {r.finding for r in recs.values()} == {Finding.CONSOLIDATE}
    assert {r.confidence for r in recs.values()} == {Confidence.MEDIUM}
    assert "each busy GPU moves to a GPU of its own" in reasons(recs)


def test_the_sms_load_decides_where_dcgm_measures_it_and_kernel_time_elsewhere_and_the_reasons_say_which() -> None:
    # Two g4dn.xlarge: kernel time 60 % and 55 % would not share a T4 (115 % > 80 %); DCGM's SM active says the
    # first keeps 20 % of the SMs busy, so the two fit one T4 (20 % + 55 % of kernel time on the other, unmeasured).
    recs = advise([with_signals(t4_host(1, 60.0), sm_active=20.0), t4_host(2, 55.0)])

    assert {r.finding for r in recs.values()} == {Finding.CONSOLIDATE}
    text = reasons(recs)
    assert "compute (SM active (DCGM) on 1 GPU, utilization.gpu on 1 GPU) p95 adding up to 75%" in text
    # Kernel time adds up to 115 %: beyond a whole GPU, so only MPS shares it.
    assert "only CUDA MPS runs their kernels side by side" in text
    assert {r.confidence for r in recs.values()} == {Confidence.LOW}


def test_without_dcgm_the_same_hosts_stay_apart() -> None:
    recs = advise([t4_host(1, 60.0), t4_host(2, 55.0)])

    assert {r.finding for r in recs.values()} == {Finding.OPTIMIZED}


def test_sm_occupancy_stands_in_for_sm_active_and_is_named() -> None:
    recs = advise(
        [with_signals(t4_host(1, 95.0), sm_occupancy=15.0), with_signals(t4_host(2, 90.0), sm_occupancy=12.0)]
    )

    assert {r.finding for r in recs.values()} == {Finding.CONSOLIDATE}
    text = reasons(recs)
    assert "SM occupancy (DCGM) p95 adding up to 27%" in text
    assert "utilization.gpu reads p95 up to 95%" in text and "SM occupancy is at most 15%" in text


@pytest.mark.parametrize(
    ("encoders", "together"),
    [pytest.param((30.0, 25.0), True, id="two-thirds-of-an-nvenc"), pytest.param((50.0, 45.0), False, id="past-80")],
)
def test_video_work_moves_in_percent_of_the_engines(encoders: tuple[float, float], together: bool) -> None:
    # Transcoders: the SMs barely work (3 %), the T4's one NVENC carries the load DCGM measures.
    hosts = [
        with_signals(t4_host(n, 3.0), sm_active=3.0, encoder_util=load, decoder_util=10.0)
        for n, load in enumerate(encoders, start=1)
    ]

    recs = advise(hosts)

    assert ({r.finding for r in recs.values()} == {Finding.CONSOLIDATE}) is together
    if together:
        assert "NVENC utilisation p95 adding up to 55% of one GPU's NVENC engines (DCGM)" in reasons(recs)


def test_encoder_sessions_alone_keep_a_transcoder_where_it_is() -> None:
    # The agent's session count says the encoder works, not how much of it: no share of an engine to add up.
    hosts = []
    for number in (1, 2):
        host, summary = t4_host(number, 3.0)
        busy = replace(summary.devices[0], encoder_sessions_peak=2.0, encoder_active_hours=336)
        hosts.append((host, replace(summary, devices=(busy,))))

    recs = advise(hosts)

    assert {r.finding for r in recs.values()} == {Finding.OPTIMIZED}
