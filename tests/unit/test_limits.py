"""Every limit of the host (issue 28): the registry, the flows it is measured from, and the advice that keeps it.

Workloads run through the real summaries (tests/unit/shapes.py) and the analyzer, on the catalog moto ships (parsed
from DescribeInstanceTypes' real shape, EbsInfo and NetworkInfo included) and the bundled price snapshot.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import numpy as np
import pytest
from demo.fleet import IDLE_GPU, Gpu, Shape, constant, diurnal, noisy

from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.graphics import graphics_evidence, signs_in
from rightsizer.domain.limits.demand import Demand
from rightsizer.domain.limits.limit import Offer, Speaks
from rightsizer.domain.limits.table import LIMITS
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.placement import group_level
from rightsizer.domain.policy import Policy
from rightsizer.domain.usage.flows import storage_rates
from rightsizer.domain.usage.series import EMPTY, RawUsage, Series
from tests import factories
from tests.factories import NOW
from tests.unit.shapes import Workload, raw_usage, summary

GIB = 1024.0
A10G = 23028.0


def around(level: float, spread: float) -> Shape:
    return noisy(level, spread, lo=0.0, hi=float("inf"))


def advise(host: Instance | str, work: Workload) -> Recommendation:
    host = factories.instance(host) if isinstance(host, str) else host
    return analyze_instance(
        host,
        summary(work, instance_id=host.instance_id),
        factories.catalog(),
        factories.prices(),
        Policy(),
        NOW,
    )


def reason_with(rec: Recommendation, *fragments: str) -> str:
    found = [r for r in rec.reasons if all(f in r for f in fragments)]
    assert found, f"no reason with {fragments} in {rec.reasons}"
    return found[0]


def spec(name: str) -> InstanceTypeSpec:
    found = factories.catalog().spec(name)
    assert found is not None
    return found


# -- the registry ----------------------------------------------------------------------------------------------


def test_every_limit_is_one_entry_with_a_name_a_source_and_its_words() -> None:
    names = [limit.name for limit in LIMITS]
    assert len(set(names)) == len(names)
    assert all(limit.source for limit in LIMITS)
    # Each resource the issue lists is an entry (the platform is carried where targets are priced).
    expected = {"GPU count", "accelerator memory", "vCPUs", "host RAM", "network", "EBS throughput", "EBS IOPS"}
    expected |= {"local NVMe", "EFA", "graphics", "NVENC", "architecture", "placement group", "ENA Express"}
    assert expected <= set(names)
    a10g = factories.catalog().accelerator(spec("g5.xlarge"))
    assert a10g is not None
    offer = Offer(spec("g5.xlarge"), a10g, spec("g5.2xlarge"), "x86_64", 1.0)
    demand = Demand(
        units=1,
        memory_per_unit_mib=1024,
        memory_measured=True,
        vcpus=2,
        host_memory_mib=1024,
        host_memory_measured=True,
        network_gbps=1.0,
        unit_util_p95=10,
        unit_util_burst=20,
        util_ceiling=80,
        burst_ceiling=100,
    )
    for limit in LIMITS:
        assert limit.says(offer, demand) and limit.short(offer, demand), limit.name
    assert len(demand.floors) == len(LIMITS)


def test_a_slower_accelerator_is_allowed_as_far_as_the_load_leaves_room() -> None:
    base = Demand(
        1, 1.0, True, 1, 1.0, True, 1.0, unit_util_p95=40, unit_util_burst=50, util_ceiling=80, burst_ceiling=100
    )
    assert base.max_ratio == 2.0  # p95 40 % may double to 80 %, the busiest hours 50 % to 100 %
    assert replace(base, load_known=False).max_ratio == 1.0
    assert replace(base, unit_util_p95=90, unit_util_burst=100).max_ratio == 1.0  # at least as fast always carries


# -- network at its baseline, per direction ---------------------------------------------------------------------


def test_network_is_read_per_direction_at_the_busiest_hours_and_the_five_minute_peak() -> None:
    # 2 Gbps in all day, out at 5 Gbps for two hours a day: each direction on its own.
    work = Workload(
        gpus=(Gpu(noisy(20, 2), constant(4 * GIB)),),
        network_gbps=lambda t, r: 7.0 if 10 <= t.hour < 12 else 2.0 / 0.6,
        network_out_share=0.4,
    )
    used = summary(work)
    assert used.network_in is not None and used.network_out is not None
    assert used.network_in.sustained == pytest.approx(4.2, rel=1e-6)  # 0.6 x 7 in the busy hours
    assert used.network_out.sustained == pytest.approx(2.8, rel=1e-6)
    assert used.network_in.peak == pytest.approx(4.2, rel=1e-6)


def test_a_held_outbound_flow_keeps_a_baseline_that_carries_it_not_an_up_to_burst() -> None:
    # g5.2xlarge: 5 Gbps baseline. ~3.2 Gbps out all day (a packager); 4 vCPUs would do, but g6.xlarge and g5.xlarge
    # offer 2.5 Gbps at baseline ("up to 10 Gigabit").
    work = Workload(
        gpus=(Gpu(noisy(5, 1), constant(3 * GIB)),),
        cpu=noisy(15, 2),
        network_gbps=noisy(3.6, 0.1, lo=0),
        network_out_share=0.9,
    )
    rec = advise("g5.2xlarge", work)

    assert rec.target_type is not None
    target = spec(rec.target_type)
    assert target.network_gbps >= 3.6 * 0.9 * 1.2
    reason_with(rec, "cheaper types fall short of", "network (g6.xlarge: network baseline 2.50 Gbps per direction")
    reason_with(rec, f"{rec.target_type}:", "per direction at baseline", "outbound busiest hours")


# -- EBS and the instance store --------------------------------------------------------------------------------


def test_ebs_and_the_instance_store_rates_come_from_hourly_sums() -> None:
    hours = np.arange(0, 6 * 3600, 3600, dtype=np.int64) + 1_700_000_000
    raw = RawUsage(
        "i-0",
        NOW - timedelta(days=1),
        NOW,
        AcceleratorData.NONE,
        ebs_read_bytes=Series(3600, hours, np.full(6, 3600 * 800e6)),
        ebs_write_bytes=Series(3600, hours, np.full(6, 3600 * 200e6)),
        ebs_read_ops=Series(3600, hours, np.full(6, 3600 * 9_000.0)),
        ebs_write_ops=Series(3600, hours[1:], np.full(5, 3600 * 1_000.0)),  # an hour missing: aligned, not shifted
        disk_bytes=Series(3600, hours, np.array([1.0, 1.0, 1.0, 1.0, 1.0, 3.0]) * 3600 * 1500e6),
    )
    ebs, iops, local = storage_rates(raw)

    assert ebs is not None and ebs.sustained == pytest.approx(1000.0) and ebs.peak == pytest.approx(1000.0)
    assert iops is not None and iops.sustained == pytest.approx(10_000.0)
    assert local is not None and local.peak == pytest.approx(3500.0)  # diskio less EBS: the instance store's share
    assert storage_rates(RawUsage("i-1", NOW - timedelta(days=1), NOW, AcceleratorData.NONE)) == (
        None,
        None,
        None,
    )
    assert not EMPTY


def test_a_host_reading_ebs_all_day_is_never_given_a_target_whose_baseline_is_lower() -> None:
    # The case: ~1.7 GB/s read all day on a g5.12xlarge (2 GB/s baseline), one GPU of four busy.
    work = Workload(
        gpus=(Gpu(noisy(25, 3), constant(8 * GIB)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
        cpu=noisy(30, 3),
        ebs_mbps=around(1700, 30),
        ebs_iops=around(12_000, 300),
    )
    rec = advise("g5.12xlarge", work)

    if rec.target_type is not None:
        assert (spec(rec.target_type).ebs_baseline_mbps or 0) >= 1700 * 1.2
    assert any("EBS throughput" in reason for reason in rec.reasons)


def test_a_trickle_of_ebs_sets_no_floor() -> None:
    work = Workload(gpus=(Gpu(noisy(20, 3), constant(4 * GIB)),), ebs_mbps=around(1, 0.2), ebs_iops=around(20, 5))
    with_trickle = advise("g5.4xlarge", work)
    without = advise("g5.4xlarge", replace(work, ebs_mbps=None, ebs_iops=None))

    assert with_trickle.target_type == without.target_type is not None


def test_a_host_that_works_its_instance_store_keeps_as_much() -> None:
    work = Workload(
        gpus=(Gpu(noisy(35, 3), constant(6 * GIB)),),
        memory_total_mib=15360.0,
        cpu=noisy(8, 2),
        ebs_mbps=around(20, 2),
        local_disk_mbps=around(400, 20),
    )
    rec = advise("g4dn.8xlarge", work)  # 900 GB of NVMe; g4dn.4xlarge has 225

    assert rec.target_type is None or spec(rec.target_type).instance_storage_gb >= 900
    assert any("local NVMe" in reason for reason in rec.reasons)


# -- a GPU gone from the bus ------------------------------------------------------------------------------------


def _stopping(when_days: float, work: Gpu) -> Gpu:
    when = NOW - timedelta(days=when_days)
    nan = float("nan")
    return Gpu(
        lambda t, r: work.utilization(t, r) if t < when else nan,
        lambda t, r: work.memory_used_mib(t, r) if t < when else nan,
        encoder_sessions=lambda t, r: 0.0 if t < when else nan,
        encoder_fps=lambda t, r: 0.0 if t < when else nan,
    )


BUSY = Gpu(diurnal(30, 60), noisy(8 * GIB, 100, lo=0, hi=A10G))


def test_a_gpu_whose_series_stop_while_its_siblings_report_is_lost_not_idle() -> None:
    work = Workload(gpus=(BUSY, _stopping(4, IDLE_GPU), BUSY, BUSY), cpu=noisy(20, 2))
    used = summary(work)
    rec = advise("g5.12xlarge", work)

    assert [unit.index for unit in used.gone_units] == ["1"]
    assert rec.finding is Finding.GPU_LOST
    assert rec.target_type is None and not rec.actionable
    reason_with(rec, "GPU 1 stopped reporting", "GPUs 0, 2-3 reported on", "Xid 79")
    reason_with(rec, "the host pays for 4 GPUs and can use 3")
    reason_with(rec, "stop and start the host", "3,800 GB of instance store")


def test_every_gpu_stopping_together_is_the_agent_not_a_lost_gpu() -> None:
    work = Workload(gpus=(_stopping(3, BUSY),) * 4, cpu=noisy(20, 2))
    used = summary(work)

    assert used.gone_units == ()
    assert used.accelerator_silent_since is not None


def test_a_gpu_whose_series_stop_an_hour_early_is_not_lost() -> None:
    work = Workload(gpus=(BUSY, _stopping(1 / 24, BUSY)), cpu=noisy(20, 2))
    assert summary(work).gone_units == ()


# -- held but unused --------------------------------------------------------------------------------------------


HELD = Gpu(noisy(0.2, 0.2, hi=1.5), noisy(10 * GIB, 20, lo=0, hi=A10G))


def test_memory_held_on_one_gpu_of_four_with_no_kernel_run_is_held_unused() -> None:
    rec = advise("g5.12xlarge", Workload(gpus=(HELD, IDLE_GPU, IDLE_GPU, IDLE_GPU), cpu=noisy(1.5, 0.3, lo=0.1)))

    assert rec.finding is Finding.HELD_UNUSED
    assert rec.action is None and rec.target_type is None
    assert rec.monthly_cost_after == Decimal("0.00")
    reason_with(rec, "GPU 0 holds up to 10.", "idle in all but memory")


def test_memory_released_days_ago_is_an_idle_host_not_a_held_one() -> None:
    released = Gpu(noisy(0.2, 0.2, hi=1.5), lambda t, r: 10 * GIB if t < NOW - timedelta(days=6) else 0.0)
    rec = advise("g5.xlarge", Workload(gpus=(released,), cpu=noisy(1.5, 0.3, lo=0.1)))

    assert rec.finding is Finding.IDLE


def test_held_memory_on_a_busy_host_with_decoders_names_nvdec_and_never_moves_off_gpus() -> None:
    rec = advise(
        "g4dn.xlarge",
        Workload(
            gpus=(Gpu(noisy(0.2, 0.2, hi=1.5), noisy(3 * GIB, 20, lo=0, hi=15360.0)),),
            memory_total_mib=15360.0,
            cpu=noisy(35, 3),
        ),
    )

    assert rec.finding is Finding.HELD_UNUSED
    reason_with(rec, "NVDEC")
    assert not any("non-GPU instance" in reason for reason in rec.reasons)


# -- graphics ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "DCV-AmazonLinux2-x86_64-2023.1.16388-NVIDIA-535.54.03",
        "NVIDIA RTX Virtual Workstation - WinServer 2022",
        "amzn2-ami-graphics-hvm-NVIDIA-GRID-535",
        "NVIDIA Gaming PC - Windows Server 2019",
        "role=unreal-pixel-streaming",
        "workload=render",
        "dcvserver",
        "Xorg",
    ],
)
def test_graphics_hosts_are_recognised_by_their_ami_tags_and_processes(text: str) -> None:
    assert signs_in(text)


@pytest.mark.parametrize(
    "text", ["grid-search-trainer", "gaming-recsys-ranker", "Deep Learning AMI GPU PyTorch 2.3", "ray-head"]
)
def test_compute_hosts_are_not_read_as_graphics(text: str) -> None:
    assert not signs_in(text)


def test_a_graphics_sign_on_a_gpu_without_graphics_does_not_restrict_its_targets() -> None:
    """An A100 tagged "render" renders on CUDA: a graphics GPU is not needed to keep doing it."""
    host = factories.instance("p4d.24xlarge", tags={"workload": "render"})
    work = Workload(gpus=(Gpu(noisy(20, 2), constant(6 * GIB)),) + (IDLE_GPU,) * 7, memory_total_mib=40960.0)
    rec = advise(host, work)

    assert graphics_evidence(host.image, host.tags, ()) != ()
    assert not any("a graphics host" in reason for reason in rec.reasons)


def test_a_graphics_host_is_never_moved_to_a_gpu_without_graphics() -> None:
    host = replace(factories.instance("g6e.xlarge"), image="NVIDIA RTX Virtual Workstation - Ubuntu 22.04")
    work = Workload(gpus=(Gpu(noisy(95, 2), noisy(43 * GIB, 400, lo=0, hi=46068.0)),), memory_total_mib=46068.0)
    rec = advise(host, work)

    for name in [rec.target_type, *(a.instance_type for a in rec.alternatives)]:
        if name is not None:
            accelerator = factories.catalog().accelerator(spec(name))
            assert accelerator is not None and accelerator.graphics, name
    reason_with(rec, "a graphics host", "its AMI")


# -- placement groups --------------------------------------------------------------------------------------------


def _member(iid: str, group: str = "ddp") -> Instance:
    return replace(factories.instance("g5.48xlarge", iid), placement_group=group)


TRAINING = Gpu(noisy(88, 3), noisy(20 * GIB, 50, lo=0, hi=A10G))


def test_a_member_of_a_placement_group_is_never_resized_alone() -> None:
    rec = advise(_member("i-0000000000000000a"), Workload(gpus=(TRAINING,) * 4 + (IDLE_GPU,) * 4, cpu=noisy(20, 2)))

    assert rec.target_type is not None and rec.actionable is False
    assert rec.held_back is not None and "placement group 'ddp'" in rec.held_back


def test_a_placement_group_is_advised_at_its_level() -> None:
    light = Workload(gpus=(TRAINING,) * 4 + (IDLE_GPU,) * 4, cpu=noisy(20, 2))
    full = Workload(gpus=(TRAINING,) * 8, cpu=noisy(40, 2))
    hosts = [_member(f"i-00000000000000{n:03d}") for n in range(3)]
    alike = [advise(host, light) for host in hosts]
    mixed = [advise(hosts[0], light), advise(hosts[1], light), advise(hosts[2], full)]

    together = group_level(alike, hosts)
    apart = group_level(mixed, hosts)

    assert [rec.target_type for rec in together] == [alike[0].target_type] * 3
    assert all("resize them together" in rec.reasons[0] for rec in together)
    assert [rec.target_type for rec in apart] == [None, None, None]
    assert all("need different types" in " ".join(rec.reasons) for rec in apart)
    assert all(rec.monthly_savings in (None, Decimal("0.00")) for rec in apart)
    assert group_level(alike[:1], hosts[:1]) == alike[:1]  # a member alone in the analysis: its own advice


def test_limits_speak_in_the_target_reason_only_where_they_matter() -> None:
    said = {limit.name: limit.speaks for limit in LIMITS}
    assert said["architecture"] is Speaks.NEVER
    assert said["GPU count"] is Speaks.ALWAYS
    assert said["EFA"] is Speaks.NEEDED
    assert said["EBS throughput"] is Speaks.NEAR


def test_raw_usage_reads_the_storage_series_it_is_given() -> None:
    raw = raw_usage(Workload(gpus=(BUSY,), ebs_mbps=around(100, 1), local_disk_mbps=around(50, 1)))
    assert raw.ebs_read_bytes and raw.ebs_write_bytes and raw.disk_bytes
