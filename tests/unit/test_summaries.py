"""Summarising many hosts at once gives each host the summary the one-host path gives it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from rightsizer.domain import summaries
from rightsizer.domain.models.usage import AcceleratorData, UsageSummary
from rightsizer.domain.signals import Signal
from rightsizer.domain.summaries import summarize_all, summarize_one
from rightsizer.domain.usage.clocks import Timelines
from rightsizer.domain.usage.series import DeviceSeries, RawUsage, Series

END = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
START = END - timedelta(days=14)


def _stamps(period: int, start: datetime = START, end: datetime = END) -> np.ndarray:
    return np.arange(int(start.timestamp()), int(end.timestamp()), period, dtype=np.int64)


def _workload(rng: np.random.Generator, count: int, kind: int) -> np.ndarray:
    """Idle, steady, busy office hours, or a memory line that steps between a reservation and nothing."""
    if kind == 0:
        return np.zeros(count)
    if kind == 1:
        return np.clip(rng.normal(rng.uniform(5, 90), 8, count), 0, 100)
    if kind == 2:
        return np.where((np.arange(count) // 12) % 24 < 9, 0.0, rng.uniform(40, 100, count))
    return rng.choice([0.0, 40_000.0, 80_000.0], count)


def _host(
    rng: np.random.Generator,
    n: int,
    units: int,
    *,
    start: datetime = START,
    end: datetime = END,
    memory: bool = True,
) -> RawUsage:
    """A host with complete data: every series of a kind on the window's one clock, each its own array
    (without memory: NeuronCores, for which the collector reads none)."""

    def fine(kind: int) -> Series:
        stamps = _stamps(300, start, end)
        return Series(300, stamps.copy(), _workload(rng, len(stamps), kind))

    def hourly(kind: int) -> Series:
        stamps = _stamps(3600, start, end)
        return Series(3600, stamps.copy(), _workload(rng, len(stamps), kind))

    return RawUsage(
        instance_id=f"i-{n:017x}",
        window_start=start,
        window_end=end,
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=tuple(
            DeviceSeries(
                index=str(i),
                utilization_avg=fine((n + i) % 3),
                utilization_max=hourly((n + i) % 3),
                memory_used_max=hourly(3 if (n + i) % 2 else 1) if memory else Series(3600),
            )
            for i in range(units)
        ),
        cpu_avg=fine(n % 3),
        network_in_sum=Series(300, _stamps(300, start, end), rng.uniform(0, 1e9, len(_stamps(300, start, end)))),
        network_out_sum=Series(300, _stamps(300, start, end), rng.uniform(0, 1e8, len(_stamps(300, start, end)))),
        host_memory_max=hourly(1),
    )


def _with_storage(rng: np.random.Generator, raw: RawUsage, *, disks: bool, gap: bool = False) -> RawUsage:
    """The host with AWS/EC2's EBS series (hourly Sums) and, with `disks`, the agent's diskio over every disk (EBS and
    the instance store); `gap`: the EBS series miss a day (a host off the group's clock for them)."""
    stamps = _stamps(3600)
    keep = np.ones(len(stamps), dtype=bool)
    if gap:
        keep[100:124] = False

    def hourly(scale: float) -> Series:
        return Series(3600, stamps[keep].copy(), rng.uniform(0, scale, len(stamps))[keep])

    reads, writes = hourly(2e12), hourly(5e11)
    disk = Series(3600, stamps.copy(), rng.uniform(0, 6e12, len(stamps))) if disks else Series(3600)
    return replace(
        raw,
        ebs_read_bytes=reads,
        ebs_write_bytes=writes,
        ebs_read_ops=hourly(4e7),
        ebs_write_ops=hourly(1e7),
        disk_bytes=disk,
    )


def _one_at_a_time(raws: list[RawUsage]) -> list[UsageSummary]:
    return [summarize_one(raw) for raw in raws]


def test_hosts_on_one_clock_are_summarised_together_as_each_would_be_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    raws = [_host(rng, n, units) for n, units in enumerate([8, 1, 4, 1, 2, 8, 1, 4, 2, 1])]
    raws += [_host(rng, 20 + n, units, memory=False) for n, units in enumerate([2, 8, 2])]
    expected = _one_at_a_time(raws)

    def not_alone(raw: RawUsage) -> tuple[UsageSummary, Timelines]:
        raise AssertionError(f"{raw.instance_id} took the one-host path")

    monkeypatch.setattr(summaries, "summarize_timed", not_alone)

    assert list(summarize_all(raws)) == expected


def test_dcgm_signals_are_summarised_together_as_each_host_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)

    def with_signals(raw: RawUsage, n: int) -> RawUsage:
        def signal(kind: int, cut: int = 0) -> Series:
            stamps = _stamps(300)[cut:]
            return Series(300, stamps.copy(), _workload(rng, len(stamps), kind))

        devices = tuple(
            replace(
                device,
                signals=(
                    (Signal.SM_ACTIVE, signal(1)),
                    (Signal.TENSOR_ACTIVE, signal(2, cut=12 * (n % 3))),  # a day fewer readings on some hosts
                    (Signal.DECODER, signal(0)),
                )
                if (n + i) % 2
                else (),
            )
            for i, device in enumerate(raw.devices)
        )
        return replace(raw, devices=devices)

    raws = [with_signals(_host(rng, n, units), n) for n, units in enumerate([4, 1, 8, 2, 1, 4])]
    expected = _one_at_a_time(raws)

    def not_alone(raw: RawUsage) -> tuple[UsageSummary, Timelines]:
        raise AssertionError(f"{raw.instance_id} took the one-host path")

    monkeypatch.setattr(summaries, "summarize_timed", not_alone)

    found = list(summarize_all(raws))
    assert found == expected
    gpu = found[0].devices[1]  # (0 + 1) % 2: publishes its signals
    assert [one.signal for one in gpu.profile] == [Signal.SM_ACTIVE, Signal.TENSOR_ACTIVE, Signal.DECODER]
    sm = gpu.signal(Signal.SM_ACTIVE)
    assert sm is not None and sm.samples == len(_stamps(300))
    assert found[0].devices[0].profile == ()


@pytest.mark.parametrize("disks", [False, True])
def test_ebs_and_the_instance_store_read_together_as_each_host_alone(
    monkeypatch: pytest.MonkeyPatch, disks: bool
) -> None:
    rng = np.random.default_rng(17)
    raws = [_with_storage(rng, _host(rng, n, units), disks=disks) for n, units in enumerate([1, 4, 1, 8, 2])]
    expected = _one_at_a_time(raws)
    rates = [(s.ebs_mbps, s.ebs_iops, s.local_disk_mbps) for s in expected]

    def not_alone(raw: RawUsage) -> tuple[UsageSummary, Timelines]:
        raise AssertionError(f"{raw.instance_id} took the one-host path")

    monkeypatch.setattr(summaries, "summarize_timed", not_alone)

    assert list(summarize_all(raws)) == expected
    assert all(ebs is not None and iops is not None for ebs, iops, _ in rates)
    assert all((local is not None) is disks for _, _, local in rates)


def test_a_host_whose_ebs_series_have_a_gap_gets_the_same_rates_in_a_group() -> None:
    rng = np.random.default_rng(19)
    raws = [_with_storage(rng, _host(rng, n, 1), disks=True, gap=n == 2) for n in range(4)]

    assert list(summarize_all(raws)) == _one_at_a_time(raws)


def test_hosts_off_the_shared_clock_are_summarised_alone_in_their_place() -> None:
    rng = np.random.default_rng(11)
    uniform = [_host(rng, n, units) for n, units in enumerate([4, 1, 2, 1])]
    gappy = _host(rng, 10, 2)
    gap = np.ones(len(gappy.devices[1].utilization_avg.stamps), dtype=bool)
    gap[500:800] = False  # the second GPU's agent stopped publishing for a day
    device = gappy.devices[1]
    gappy = RawUsage(
        instance_id=gappy.instance_id,
        window_start=gappy.window_start,
        window_end=gappy.window_end,
        accelerator_data=gappy.accelerator_data,
        devices=(
            gappy.devices[0],
            DeviceSeries(
                index=device.index,
                utilization_avg=Series(300, device.utilization_avg.stamps[gap], device.utilization_avg.array[gap]),
                utilization_max=device.utilization_max,
                memory_used_max=device.memory_used_max,
            ),
        ),
        cpu_avg=gappy.cpu_avg,
        network_in_sum=gappy.network_in_sum,
        network_out_sum=gappy.network_out_sum,
        host_memory_max=gappy.host_memory_max,
    )
    rollup_only = _host(rng, 11, 1)
    rollup_only = RawUsage(
        instance_id=rollup_only.instance_id,
        window_start=START,
        window_end=END,
        accelerator_data=AcceleratorData.ROLLUP,
        devices=(DeviceSeries(index="*", utilization_avg=rollup_only.devices[0].utilization_avg),),
        cpu_avg=rollup_only.cpu_avg,
    )
    no_gpu_metrics = RawUsage("i-0000000000000000c", START, END, AcceleratorData.NONE, cpu_avg=uniform[0].cpu_avg)
    launched_later = _host(rng, 13, 2, start=START + timedelta(days=3, hours=5))
    raws = [uniform[0], gappy, uniform[1], rollup_only, no_gpu_metrics, uniform[2], launched_later, uniform[3]]

    together = list(summarize_all(raws))

    assert [summary.instance_id for summary in together] == [raw.instance_id for raw in raws]
    assert together == _one_at_a_time(raws)


def test_chunks_keep_the_order_and_lose_no_host() -> None:
    rng = np.random.default_rng(3)
    raws = [_host(rng, n, 1 + n % 3) for n in range(7)]

    assert list(summarize_all(raws, chunk=3)) == _one_at_a_time(raws)


def test_hosts_are_read_a_chunk_at_a_time() -> None:
    """Only a chunk of hosts' raw series is held: the source is not drained ahead of the summaries."""
    rng = np.random.default_rng(5)
    taken: list[str] = []

    def source() -> Iterator[RawUsage]:
        for n in range(10):
            raw = _host(rng, n, 1)
            taken.append(raw.instance_id)
            yield raw

    stream = summarize_all(source(), chunk=4)
    first = next(stream)

    assert first.instance_id == taken[0]
    assert len(taken) == 4
    assert len(list(stream)) == 9
