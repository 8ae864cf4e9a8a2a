"""The week's views: the hour-of-week fold of clock-hour timelines (busiest accelerator hour, mean CPU, network
Gbps, the CPU peak a weekly job reaches), and the share of the recent time the host ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from rightsizer.domain.usage.clocks import Clocks, HourSpan, WindowGrid
from rightsizer.domain.usage.series import Floats, Ints, Series, gbps
from rightsizer.domain.usage.stats import HOURS_PER_WEEK, hour_of_week, means_where_seen, optional_rows

# How a host runs now: the share of the last week it ran (a weekly rhythm, such as weekends off), or of the last
# three days when lower (a host that began stopping itself at night this week). The lower of the two can only
# understate what a change saves, never invent it.
_RECENT_WEEK, _RECENT_DAYS = 7 * 86400, 3 * 86400


def running_share(cpu: Series, window_end: datetime) -> float | None:
    """Share of the recent time (the last week, or the last three days when lower; from the first reading on) that
    the host ran: EC2 publishes CPUUtilization for every period an instance runs, so the periods without one are
    periods it was stopped."""
    if not cpu:
        return None
    end = window_end.timestamp()
    stamps = cpu.stamps
    shares = []
    for span in (_RECENT_WEEK, _RECENT_DAYS):
        start = max(float(stamps[0]), end - span)
        expected = (end - start) / cpu.period_seconds
        seen = len(stamps) - int(stamps.searchsorted(start))
        shares.append(min(1.0, seen / max(1.0, expected)))
    return min(shares)


def network_hours(clocks: Clocks, hours: HourSpan, inbound: Series, outbound: Series) -> tuple[Floats, Ints]:
    """Mean Gbps (in + out) per clock hour of `hours`, and 1 in the hours with data (0 elsewhere)."""
    total = np.zeros(hours.count)
    seen = np.zeros(hours.count, dtype=bool)
    for series in (inbound, outbound):
        if not series:
            continue
        bins = clocks.of(series).bins(hours.first, 3600, hours.count)
        has = ~bins.empty
        sums = bins.reduce(series.array, np.add, 0.0)
        total[has] += sums[has] / bins.counts[has] * gbps(series)
        seen |= has
    return total, seen.astype(np.int64)


def fold_into_week(timelines: Floats, first_hour: int, combine: np.ufunc, empty: float) -> Floats:
    """Hour-of-week `combine` (np.add or np.maximum) of clock-hour timelines (the last axis) that start at
    `first_hour`; `empty` in hours of the week no timeline reaches.

    Laid out on whole weeks from the Monday before `first_hour`, the fold is one reduction per column;
    adding the weeks in order gives the same floats as adding hour by hour."""
    hours = timelines.shape[-1]
    offset = hour_of_week(first_hour)
    weeks = max(1, -(-(offset + hours) // HOURS_PER_WEEK))
    padded = np.full((*timelines.shape[:-1], weeks * HOURS_PER_WEEK), empty)
    padded[..., offset : offset + hours] = timelines
    return cast(Floats, combine.reduce(padded.reshape(*timelines.shape[:-1], weeks, HOURS_PER_WEEK), axis=-2))


@dataclass(frozen=True, slots=True)
class WeekViews:
    """Hour-of-week views of hosts (one tuple per host): busiest accelerator reading, mean CPU and mean
    network Gbps; None in hours without data."""

    accelerator: list[tuple[float | None, ...]]
    cpu: list[tuple[float | None, ...]]
    network: list[tuple[float | None, ...]]
    # The busiest 5-minute CPU average of each hour of the week, the lowest over the weeks that saw that hour: what
    # a job at a fixed time reaches every week (a nightly cron), not a one-off spike.
    cpu_peak: list[tuple[float | None, ...]]


def week_views(
    grid: WindowGrid,
    span: HourSpan,
    hour_peaks: Floats,
    cpu_sums: Floats,
    cpu_counts: npt.NDArray[Any],
    network: Floats,
    network_seen: npt.NDArray[Any],
    cpu_peaks: Floats,
) -> WeekViews:
    """From each host's (row's) clock hours: `hour_peaks` over the window's hours, CPU sums, CPU peaks (-inf where
    no reading) and network Gbps over `span`; the sample counts and the hours with network data are the same for
    every row."""
    lead = (grid.first_hour - span.first) // 3600
    timeline = np.full((len(hour_peaks), span.count), -np.inf)
    timeline[:, lead : lead + grid.hours] = hour_peaks
    peaks = fold_into_week(timeline, span.first, np.maximum, -np.inf)
    sums = fold_into_week(np.stack([cpu_sums, network], axis=1), span.first, np.add, 0.0)
    counts = fold_into_week(np.array([cpu_counts, network_seen]), span.first, np.add, 0.0)
    # Hours without a reading do not count in the lowest: +inf there, so the fold's minimum skips them.
    recurring = fold_into_week(np.where(cpu_peaks > -np.inf, cpu_peaks, np.inf), span.first, np.minimum, np.inf)
    return WeekViews(
        accelerator=optional_rows(peaks, peaks[0] > -np.inf),
        cpu=means_where_seen(sums[:, 0], counts[0]),
        # Each clock hour's mean Gbps counts once, however many samples it had.
        network=means_where_seen(sums[:, 1], counts[1]),
        cpu_peak=[optional_rows(row[np.newaxis], row < np.inf)[0] for row in recurring],
    )
