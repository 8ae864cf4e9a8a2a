"""Reducing raw CloudWatch series to a usage summary: percentiles, hour-of-week buckets, summarize()."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.models import Finding
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.policy import Policy
from rightsizer.domain.usage.series import EMPTY, DeviceSeries, RawUsage, Series
from rightsizer.domain.usage.stats import HOURS_PER_WEEK, hour_of_week, percentile, series_stats
from rightsizer.domain.usage.summary import summarize
from tests.factories import instance
from tests.unit import catalog_fixture as fx
from tests.unit._builders import A10G_TOTAL_MIB, device_series, hourly_series

MONDAY = datetime(2026, 11, 30, tzinfo=UTC)  # a Monday, 00:00 UTC
MONDAY_EPOCH = 1_795_996_800
HOUR = 3600
DAY = 86_400


def test_the_fixture_monday_is_what_the_tests_assume() -> None:
    assert MONDAY.weekday() == 0
    assert int(MONDAY.timestamp()) == MONDAY_EPOCH


# ---------------------------------------------------------------------------------------------
# percentile / series_stats


@pytest.mark.parametrize(
    ("pct", "expected"),
    [(0, 1), (1, 1), (10, 1), (11, 2), (50, 5), (51, 6), (90, 9), (95, 10), (99, 10), (100, 10)],
)
def test_percentile_is_nearest_rank_on_ten_values(pct: float, expected: float) -> None:
    assert percentile([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10], pct) == expected


@pytest.mark.parametrize(("pct", "expected"), [(1, 1), (50, 50), (90, 90), (95, 95), (99, 99), (100, 100)])
def test_percentile_on_one_to_a_hundred(pct: float, expected: float) -> None:
    assert percentile([float(v) for v in range(1, 101)], pct) == expected


def test_percentile_returns_an_observed_value_not_an_interpolation() -> None:
    assert percentile([10.0, 20.0], 50) == 10.0
    assert percentile([10.0, 20.0], 51) == 20.0
    assert percentile([42.0], 99) == 42.0


def test_percentile_of_nothing_raises() -> None:
    with pytest.raises(ValueError, match="empty"):
        percentile([], 95)


@pytest.mark.parametrize("pct", [7, 14, 28, 55, 56])
def test_percentile_rank_is_not_thrown_off_by_float_rounding(pct: int) -> None:
    assert percentile([float(v) for v in range(1, 101)], pct) == pct


def test_percentile_p95_and_p99_are_exact_for_every_length() -> None:
    for n in range(1, 2001):
        values = [float(v) for v in range(1, n + 1)]
        assert percentile(values, 95) == -(-95 * n // 100)
        assert percentile(values, 99) == -(-99 * n // 100)
        assert percentile(values, 50) == -(-50 * n // 100)


def test_series_stats_on_known_data() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # 100..1, unsorted on purpose
    stats = series_stats(values)

    assert stats is not None
    assert stats.samples == 100
    assert stats.mean == pytest.approx(50.5)
    assert (stats.p50, stats.p95, stats.p99, stats.peak) == (50.0, 95.0, 99.0, 100.0)


def test_series_stats_of_one_value() -> None:
    stats = series_stats([7.5])

    assert stats is not None
    assert stats.samples == 1
    assert {stats.mean, stats.p50, stats.p95, stats.p99, stats.peak} == {7.5}


def test_series_stats_of_nothing_is_none() -> None:
    assert series_stats([]) is None
    assert series_stats(()) is None


def test_series_stats_mean_is_the_arithmetic_mean() -> None:
    stats = series_stats([0.1] * 10 + [10.0])

    assert stats is not None
    assert stats.mean == pytest.approx(1.0, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# hour_of_week


@pytest.mark.parametrize(
    ("moment", "bucket"),
    [
        (datetime(1970, 1, 5, tzinfo=UTC), 0),  # the first Monday after the epoch
        (datetime(1970, 1, 1, tzinfo=UTC), 72),  # the epoch was a Thursday
        (MONDAY, 0),
        (MONDAY + timedelta(minutes=59, seconds=59), 0),
        (MONDAY + timedelta(hours=1), 1),
        (datetime(2026, 12, 1, 12, 0, tzinfo=UTC), 36),  # Tuesday 12:00
        (datetime(2026, 12, 4, 17, 30, tzinfo=UTC), 4 * 24 + 17),  # Friday 17:30
        (datetime(2026, 12, 6, 23, 59, 59, tzinfo=UTC), 167),  # Sunday 23:59:59
        (datetime(2026, 12, 7, tzinfo=UTC), 0),  # next Monday
        (datetime(2024, 2, 29, 9, tzinfo=UTC), 3 * 24 + 9),  # a leap-day Thursday
    ],
)
def test_hour_of_week_buckets_start_monday_midnight_utc(moment: datetime, bucket: int) -> None:
    assert hour_of_week(int(moment.timestamp())) == bucket


def test_hour_of_week_matches_the_calendar_for_a_whole_week() -> None:
    for hour in range(2 * HOURS_PER_WEEK):
        moment = MONDAY + timedelta(hours=hour, minutes=30)
        assert hour_of_week(int(moment.timestamp())) == moment.weekday() * 24 + moment.hour


# ---------------------------------------------------------------------------------------------
# summarize


def _four_day_raw() -> RawUsage:
    """Mon 00:00 - Fri 00:00 UTC, hourly data.

    GPU 0: averages 10/30/50/70 % on days 0-3, maxima 5 points above, one 99 % spike Tue 06:00,
    memory peak 5000 MiB of 23028. GPU 1: averages 0 % on day 0 only, no maxima, no memory series.
    CPU 20 % from 08:00 to 19:00, 2 % otherwise.
    """
    hours = 4 * 24
    avg = [10.0] * 24 + [30.0] * 24 + [50.0] * 24 + [70.0] * 24
    maxima = [v + 5 for v in avg]
    maxima[30] = 99.0
    gpu0 = device_series(
        "0",
        util_avg=hourly_series(MONDAY_EPOCH, avg),
        util_max=hourly_series(MONDAY_EPOCH, maxima),
        memory_used=hourly_series(MONDAY_EPOCH, [1000.0, 5000.0, 3000.0]),
        memory_total=hourly_series(MONDAY_EPOCH, [A10G_TOTAL_MIB]),
    )
    gpu1 = device_series("1", util_avg=hourly_series(MONDAY_EPOCH, [0.0] * 24))
    cpu = [20.0 if 8 <= h % 24 < 19 else 2.0 for h in range(hours)]
    return RawUsage(
        instance_id="i-0123456789abcdef0",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(days=4),
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=(gpu0, gpu1),
        cpu_avg=hourly_series(MONDAY_EPOCH, cpu),
        # bytes per 5-minute period: 3.75e10 B x 8 / 300 s = 1.0 Gbps in; 7.5e9 B -> 0.2 Gbps out.
        network_in_sum=Series(300, (MONDAY_EPOCH, MONDAY_EPOCH + 300), (1.5e10, 3.75e10)),
        network_out_sum=Series(300, (MONDAY_EPOCH + 600,), (7.5e9,)),
        host_memory_max=hourly_series(MONDAY_EPOCH, [40.0, 65.5, 50.0]),
    )


def test_summarize_per_device_figures() -> None:
    summary = summarize(_four_day_raw())
    gpu0, gpu1 = summary.devices

    assert summary.instance_id == "i-0123456789abcdef0"
    assert summary.accelerator_data is AcceleratorData.PER_DEVICE
    assert gpu0.index == "0"
    assert gpu0.utilization is not None
    assert gpu0.utilization.samples == 96
    assert gpu0.utilization.mean == pytest.approx(40.0)
    # sorted: 24 x 10, 24 x 30, 24 x 50, 24 x 70 -> rank 48 = 30, rank 92 = 70, rank 96 = 70.
    assert (gpu0.utilization.p50, gpu0.utilization.p95, gpu0.utilization.p99) == (30.0, 70.0, 70.0)
    assert gpu0.utilization.peak == 70.0
    assert gpu0.utilization_peak == 99.0  # from the hourly maxima, not the averages
    assert gpu0.memory_used_peak_mib == 5000.0
    assert gpu0.memory_total_mib == A10G_TOTAL_MIB

    assert gpu1.utilization is not None
    assert gpu1.utilization.samples == 24
    assert gpu1.utilization_peak == 0.0  # no maxima: falls back to the averages
    assert gpu1.memory_used_peak_mib is None
    assert gpu1.memory_total_mib is None


def test_summarize_coverage_days_cpu_network_and_host_memory() -> None:
    summary = summarize(_four_day_raw())

    # 96 distinct hourly timestamps over a 96-hour window, first to last + one period = 4 days.
    assert summary.accelerator_days == pytest.approx(4.0)
    assert summary.accelerator_coverage == pytest.approx(1.0)
    assert summary.cpu is not None
    assert summary.cpu.samples == 96
    assert (summary.cpu.p50, summary.cpu.p95, summary.cpu.peak) == (2.0, 20.0, 20.0)
    assert summary.network_peak_gbps == pytest.approx(1.2)
    assert summary.host_memory_peak_pct == 65.5
    assert (summary.window_start, summary.window_end) == (MONDAY, MONDAY + timedelta(days=4))


def test_summarize_hourly_profile() -> None:
    summary = summarize(_four_day_raw())
    peaks = summary.hourly_accelerator_peak
    cpu = summary.hourly_cpu_mean

    assert len(peaks) == len(cpu) == HOURS_PER_WEEK
    assert peaks[0] == 15.0  # Mon 00:00: GPU 0 max 15, GPU 1 average 0
    assert peaks[24 + 6] == 99.0  # Tue 06:00: the spike
    assert peaks[2 * 24 + 12] == 55.0  # Wed 12:00
    assert peaks[3 * 24 + 23] == 75.0  # Thu 23:00
    assert all(p is None for p in peaks[4 * 24 :])  # Fri-Sun: no data in the window
    assert cpu[8] == 20.0
    assert cpu[7] == 2.0
    assert cpu[3 * 24 + 18] == 20.0
    assert cpu[3 * 24 + 19] == 2.0
    assert all(c is None for c in cpu[4 * 24 :])


def test_summarize_daily_means_average_over_all_devices() -> None:
    summary = summarize(_four_day_raw())

    # Day 0: 24 x 10 (GPU 0) and 24 x 0 (GPU 1) -> 5.
    assert summary.daily_accelerator_mean == (5.0, 30.0, 50.0, 70.0)


def test_summarize_hourly_profile_averages_repeated_weeks() -> None:
    # Two Mondays 08:00: CPU 10 then 30 -> mean 20; GPU peaks 40 then 60 -> max 60.
    ts = (MONDAY_EPOCH + 8 * HOUR, MONDAY_EPOCH + 7 * DAY + 8 * HOUR)
    raw = RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(days=14),
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=(device_series("0", util_avg=Series(3600, ts, (40.0, 60.0))),),
        cpu_avg=Series(3600, ts, (10.0, 30.0)),
    )
    summary = summarize(raw)

    assert summary.hourly_cpu_mean[8] == 20.0
    assert summary.hourly_accelerator_peak[8] == 60.0
    assert len(summary.daily_accelerator_mean) == 14
    assert summary.daily_accelerator_mean[0] == 40.0
    assert summary.daily_accelerator_mean[7] == 60.0
    assert summary.daily_accelerator_mean[1] is None


def test_summarize_gaps_lower_coverage_but_not_the_span() -> None:
    # Two datapoints, first and last hour of a 4-day window.
    ts = (MONDAY_EPOCH, MONDAY_EPOCH + 95 * HOUR)
    raw = RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(days=4),
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=(device_series("0", util_avg=Series(3600, ts, (1.0, 2.0))),),
    )
    summary = summarize(raw)

    assert summary.accelerator_days == pytest.approx(4.0)
    assert summary.accelerator_coverage == pytest.approx(2 / 96)


def test_summarize_counts_coverage_in_five_minute_periods() -> None:
    # Two of fourteen days of 5-minute averages.
    points = 2 * 288
    ts = tuple(MONDAY_EPOCH + i * 300 for i in range(points))
    raw = RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(days=14),
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=(device_series("0", util_avg=Series(300, ts, tuple(50.0 for _ in ts))),),
    )
    summary = summarize(raw)

    assert summary.accelerator_days == pytest.approx(2.0)
    assert summary.accelerator_coverage == pytest.approx(points / (14 * 288))


def test_summarize_network_in_or_out_alone() -> None:
    base = _four_day_raw()
    only_in = summarize(replace(base, network_out_sum=EMPTY))
    only_out = summarize(replace(base, network_in_sum=EMPTY))
    neither = summarize(replace(base, network_in_sum=EMPTY, network_out_sum=EMPTY))

    assert only_in.network_peak_gbps == pytest.approx(1.0)
    assert only_out.network_peak_gbps == pytest.approx(0.2)
    assert neither.network_peak_gbps is None


def test_summarize_network_uses_the_series_period() -> None:
    # 4.5e11 bytes in one hour = 1.0 Gbps.
    raw = RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(days=1),
        accelerator_data=AcceleratorData.NONE,
        network_in_sum=Series(3600, (MONDAY_EPOCH,), (4.5e11,)),
    )

    assert summarize(raw).network_peak_gbps == pytest.approx(1.0)


def test_summarize_with_no_series_at_all() -> None:
    raw = RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(days=14),
        accelerator_data=AcceleratorData.PER_DEVICE,  # claimed, but no device came back
    )
    summary = summarize(raw)

    assert summary.accelerator_data is AcceleratorData.NONE
    assert summary.devices == ()
    assert summary.accelerator_days == 0.0
    assert summary.accelerator_coverage == 0.0
    assert summary.cpu is None
    assert summary.network_peak_gbps is None
    assert summary.host_memory_peak_pct is None
    assert summary.hourly_accelerator_peak == (None,) * HOURS_PER_WEEK
    assert summary.hourly_cpu_mean == (None,) * HOURS_PER_WEEK
    assert summary.daily_accelerator_mean == (None,) * 14


def test_summarize_device_with_only_memory_series_has_no_utilisation_and_no_days() -> None:
    raw = RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(days=14),
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=(device_series("0", memory_total=Series(3600, (MONDAY_EPOCH,), (A10G_TOTAL_MIB,))),),
    )
    summary = summarize(raw)
    (gpu,) = summary.devices

    assert gpu.utilization is None
    assert gpu.utilization_peak is None
    assert gpu.memory_total_mib == A10G_TOTAL_MIB
    assert summary.accelerator_days == 0.0
    assert summary.accelerator_coverage == 0.0


def test_summarize_short_window_has_at_least_one_day() -> None:
    raw = RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(hours=3),
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=(device_series("0", util_avg=hourly_series(MONDAY_EPOCH, [5.0, 15.0, 25.0])),),
    )
    summary = summarize(raw)

    assert summary.daily_accelerator_mean == (15.0,)
    assert summary.accelerator_coverage == pytest.approx(1.0)
    assert summary.accelerator_days == pytest.approx(3 / 24)


# ---------------------------------------------------------------------------------------------
# summarize -> analyzer: the two halves agree on "never guess"


def _fourteen_days(days_with_data: int, util: float) -> RawUsage:
    points = days_with_data * 288
    start = MONDAY_EPOCH + (14 - days_with_data) * DAY
    ts = tuple(start + i * 300 for i in range(points))
    devices = tuple(
        device_series(
            str(i),
            util_avg=Series(300, ts, tuple(util for _ in ts)),
            memory_used=Series(3600, (start,), (3.0,)),
            memory_total=Series(3600, (start,), (A10G_TOTAL_MIB,)),
        )
        for i in range(4)
    )
    return RawUsage(
        instance_id="i-0123456789abcdef0",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(days=14),
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=devices,
        cpu_avg=Series(300, ts, tuple(1.0 for _ in ts)),
    )


@pytest.mark.parametrize(("days", "finding"), [(14, Finding.IDLE), (2, Finding.INSUFFICIENT_DATA)])
def test_summarized_idle_gpus_are_idle_only_with_enough_history(days: int, finding: Finding) -> None:
    summary = summarize(_fourteen_days(days, 0.0))
    rec = analyze_instance(instance("g5.12xlarge"), summary, fx.catalog(), fx.prices(), Policy(), MONDAY)

    assert math.isclose(summary.accelerator_days, days)
    assert rec.finding is finding


# ---------------------------------------------------------------------------------------------
# What tells a reservation from a working set, bursts from steady load, and weeks apart


def _hours(values: list[float], start: int = MONDAY_EPOCH) -> Series:
    return hourly_series(start, values)


def _week_raw(util: list[float], memory: list[float]) -> RawUsage:
    return RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(hours=len(util)),
        accelerator_data=AcceleratorData.PER_DEVICE,
        devices=(device_series("0", util_avg=_hours(util), util_max=_hours(util), memory_used=_hours(memory)),),
    )


def test_a_flat_reservation_has_its_low_next_to_its_peak_and_no_correlation() -> None:
    # Two idle hours before vLLM starts, then 36,864 MiB (+-2) whatever the load.
    util = [0.0, 0.0] + [float(10 + (h % 24) * 3) for h in range(166)]
    memory = [300.0, 300.0] + [36_864.0 + (h % 3) - 1 for h in range(166)]
    (gpu,) = summarize(_week_raw(util, memory)).devices

    assert gpu.memory_used_peak_mib == 36_865.0
    assert gpu.memory_used_low_mib == 36_863.0  # the hours before the process started are left out
    assert gpu.memory_load_correlation is None  # a line that moves by parts per million is flat


def test_a_working_set_that_follows_the_load_is_correlated_and_spread() -> None:
    util = [float(10 + (h % 24) * 3) for h in range(168)]
    memory = [4_000.0 + u * 100 for u in util]  # 5 GiB at night to 11.7 GiB at the daily peak
    (gpu,) = summarize(_week_raw(util, memory)).devices

    assert gpu.memory_load_correlation == pytest.approx(1.0)
    assert gpu.memory_used_low_mib is not None and gpu.memory_used_peak_mib is not None
    assert gpu.memory_used_peak_mib - gpu.memory_used_low_mib > 5_000


def test_correlation_needs_a_day_of_common_hours_and_two_moving_lines() -> None:
    (short,) = summarize(_week_raw([float(h) for h in range(20)], [float(h) for h in range(20)])).devices
    (flat,) = summarize(_week_raw([float(h % 7) for h in range(48)], [5_000.0] * 48)).devices

    assert short.memory_load_correlation is None
    assert flat.memory_load_correlation is None


def test_burst_is_the_p99_of_the_hourly_maxima() -> None:
    # 336 hours at 20 % with a 100 % hour every 6 hours (56 of them): p99 of the maxima is 100.
    peaks = [100.0 if h % 6 == 0 else 20.0 for h in range(336)]
    (busy,) = summarize(_week_raw(peaks, [1_000.0] * 336)).devices
    # The same with only three 100 % hours in two weeks (a model load, a test): p99 stays 20.
    rare = [100.0 if h in (5, 100, 200) else 20.0 for h in range(336)]
    (spiky,) = summarize(_week_raw(rare, [1_000.0] * 336)).devices

    assert busy.utilization_burst == 100.0
    assert spiky.utilization_burst == 20.0
    assert spiky.utilization_peak == 100.0


def test_network_p95_adds_in_and_out_and_folds_into_the_week() -> None:
    ts = tuple(MONDAY_EPOCH + i * 300 for i in range(24))  # Monday 00:00-02:00
    inbound = Series(300, ts, tuple(3.75e9 if i < 12 else 0.0 for i in range(24)))  # 0.1 Gbps for an hour
    outbound = Series(300, ts, tuple(1.875e9 for _ in range(24)))  # 0.05 Gbps
    raw = RawUsage(
        instance_id="i-1",
        window_start=MONDAY,
        window_end=MONDAY + timedelta(hours=2),
        accelerator_data=AcceleratorData.NONE,
        network_in_sum=inbound,
        network_out_sum=outbound,
    )
    summary = summarize(raw)

    assert summary.network_p95_gbps == pytest.approx(0.15)
    assert summary.hourly_network_mean_gbps[0] == pytest.approx(0.15)
    assert summary.hourly_network_mean_gbps[1] == pytest.approx(0.05)
    assert summary.hourly_network_mean_gbps[2] is None


def test_hour_peaks_keep_each_week_apart_and_fold_into_the_hour_of_week() -> None:
    # Sunday 02:00 busy in week one only.
    util = [0.0] * 336
    util[6 * 24 + 2] = 90.0
    summary = summarize(_week_raw(util, [0.0] * 336))

    assert len(summary.accelerator_hour_peaks) == 336
    assert summary.accelerator_hour_peaks[6 * 24 + 2] == 90.0
    assert summary.accelerator_hour_peaks[HOURS_PER_WEEK + 6 * 24 + 2] == 0.0
    assert summary.hourly_accelerator_peak[6 * 24 + 2] == 90.0


# Bin edges: a unit that stops publishing, or readings CloudWatch returns past the window.
WINDOW_END = datetime(2026, 12, 1, tzinfo=UTC)
WINDOW_START = WINDOW_END - timedelta(days=14)


def _five_minutes(start: datetime, end: datetime) -> list[int]:
    return list(range(int(start.timestamp()), int(end.timestamp()), 300))


def _one_gpu(instance_id: str, utilisation: Series, cpu: Series = EMPTY) -> RawUsage:
    return RawUsage(
        instance_id,
        WINDOW_START,
        WINDOW_END,
        AcceleratorData.PER_DEVICE,
        devices=(DeviceSeries(index="0", utilization_avg=utilisation),),
        cpu_avg=cpu,
    )


def test_a_unit_that_stops_publishing_keeps_its_last_days_mean() -> None:
    """The last sample before a gap at the end of the window counts in its day, and once only."""
    stamps = _five_minutes(WINDOW_START, WINDOW_START + timedelta(days=10, hours=12))
    utilisation = Series(300, stamps, [50.0] * len(stamps))
    summary = summarize(_one_gpu("i-0000000000000000d", utilisation, cpu=utilisation))

    assert summary.daily_accelerator_mean[:11] == (50.0,) * 11
    assert summary.daily_accelerator_mean[11:] == (None,) * 3
    assert {mean for mean in summary.hourly_cpu_mean if mean is not None} == {50.0}


def test_readings_past_the_window_do_not_leak_into_its_last_day() -> None:
    stamps = _five_minutes(WINDOW_START, WINDOW_END + timedelta(hours=6))
    values = [50.0 if stamp < WINDOW_END.timestamp() else 100.0 for stamp in stamps]
    utilisation = Series(300, stamps, values)
    assert summarize(_one_gpu("i-0000000000000000e", utilisation)).daily_accelerator_mean == (50.0,) * 14
