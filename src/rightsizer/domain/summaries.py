"""Usage summaries of many hosts at once.

A collection shard summarises hundreds of hosts, and CloudWatch stamps a whole window alike: every
host with complete data has the same 5-minute and the same hourly timestamps. Hosts of one such clock
are summarised together, each statistic one numpy call over all their series (a stack of rows) instead
of one per series: a host then costs about its sorts and the Python objects of its summary.

`usage.summary.summarize` stays the reference for one host; a host whose series do not share the group's
clocks (gaps, a missing series, units stamped apart) takes it, and the test suite holds both paths to
the same summaries.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import numpy as np

from rightsizer.domain import regimes
from rightsizer.domain.guards import Gap, Source
from rightsizer.domain.models.usage import DeviceUsage, Rate, RegimeChange, TypeChange, UsageSummary
from rightsizer.domain.usage.clocks import Bins, HourSpan, Timelines, WindowGrid, day_means, nan_as_none
from rightsizer.domain.usage.devices import profiles, slice_usages
from rightsizer.domain.usage.encoders import encoder_views, with_encoders
from rightsizer.domain.usage.flows import MB, rates_of_rows, storage_rates
from rightsizer.domain.usage.series import DeviceSeries, Floats, Ints, RawUsage, Series, gbps
from rightsizer.domain.usage.stats import (
    memory_load_correlations,
    memory_low,
    optional_rows,
    pick_rows,
    row_stats,
    same_stamps,
    series_peak,
)
from rightsizer.domain.usage.summary import accelerator_coverage, summarize, summarize_timed, with_last_days
from rightsizer.domain.usage.week import WeekViews, running_share, week_views

# Hosts summarised together: enough to spread each numpy call's overhead thin (16 to 128 measure alike),
# few enough that their raw series (up to ~0.8 MiB for an 8-GPU host over 14 days) and the stacks made of
# them stay a small part of a shard's memory.
CHUNK = 32


def summarize_all(raws: Iterable[RawUsage], chunk: int = CHUNK) -> Iterator[UsageSummary]:
    """Each host's summary, in order, `chunk` hosts at a time (only those hosts' raw series are held)."""
    batch: list[RawUsage] = []
    for raw in raws:
        batch.append(raw)
        if len(batch) >= chunk:
            yield from _summaries(batch)
            batch = []
    yield from _summaries(batch)


@dataclass(frozen=True, slots=True)
class _Clock:
    """What a group's hosts share: the window, the timestamps (and period) of their 5-minute series
    (unit utilisation, CPU, network) and of their hourly ones (unit peaks, and memory where published:
    the agent publishes it for every GPU, Neuron cores have none)."""

    window_start: datetime
    window_end: datetime
    fine: Ints
    fine_period: int
    hourly: Ints
    memory: bool

    def fits(self, other: _Clock) -> bool:
        return (
            other.window_start == self.window_start
            and other.window_end == self.window_end
            and other.fine_period == self.fine_period
            and other.memory == self.memory
            and same_stamps(other.fine, self.fine)
            and same_stamps(other.hourly, self.hourly)
        )


@dataclass
class _Group:
    clock: _Clock
    positions: list[int] = field(default_factory=list)


def _all_on(series: Sequence[Series], stamps: Ints) -> bool:
    return all(one and (one.timestamps is stamps or same_stamps(one.stamps, stamps)) for one in series)


def _clock_of(raw: RawUsage) -> _Clock | None:
    """The host's clocks when every series the group path reads is there (memory for all units or none)
    and each kind shares one clock; None sends the host down the one-host path."""
    if not raw.devices or raw.window_end <= raw.window_start:
        return None
    first = raw.devices[0]
    fine, hourly = first.utilization_avg.stamps, first.utilization_max.stamps
    period = first.utilization_avg.period_seconds
    memory = bool(first.memory_used_max)
    fine_series = [device.utilization_avg for device in raw.devices] + [
        raw.cpu_avg,
        raw.network_in_sum,
        raw.network_out_sum,
    ]
    hourly_series = [device.utilization_max for device in raw.devices]
    if memory:
        hourly_series += [device.memory_used_max for device in raw.devices]
    elif any(device.memory_used_max for device in raw.devices):
        return None
    if not (_all_on(fine_series, fine) and _all_on(hourly_series, hourly)):
        return None
    if any(device.utilization_avg.period_seconds != period for device in raw.devices):
        return None
    return _Clock(raw.window_start, raw.window_end, fine, period, hourly, memory)


def summarize_one(raw: RawUsage) -> UsageSummary:
    """One host's summary as `summarize_all` makes it: on its current type, on its current regime."""
    return _summaries([raw])[0]


def _summaries(batch: Sequence[RawUsage]) -> list[UsageSummary]:
    """The batch's summaries in order. Each host is first cut to the samples on its current type; hosts on one
    clock are summarised together, the others one by one; a host whose work changed regime inside the window is
    then summarised again over the time since (see domain/regimes.py)."""
    current = [_on_current_type(raw.silence_filled()) for raw in batch]
    batch = [raw for raw, _ in current]
    found: dict[int, tuple[UsageSummary, Timelines]] = {}
    groups: list[_Group] = []
    for position, raw in enumerate(batch):
        clock = _clock_of(raw)
        if clock is None:
            found[position] = summarize_timed(raw)
            continue
        group = next((group for group in groups if group.clock.fits(clock)), None)
        if group is None:
            group = _Group(clock)
            groups.append(group)
        group.positions.append(position)
    for group in groups:
        if len(group.positions) == 1:
            # A host alone on its clock (launched or stopped within the window): the stacks would only
            # add copies to the one-host path's work.
            found[group.positions[0]] = summarize_timed(batch[group.positions[0]])
            continue
        # By number of units: the hosts of each count are then one block of rows (see _per_host).
        positions = sorted(group.positions, key=lambda position: len(batch[position].devices))
        for position, summary in zip(
            positions, _summarize_group(group.clock, [batch[p] for p in positions]), strict=True
        ):
            found[position] = summary
    return [
        _checked(raw, _settled(raw, *found[position], type_change))
        for position, (raw, type_change) in enumerate(zip(batch, (change for _, change in current), strict=True))
    ]


def _checked(raw: RawUsage, summary: UsageSummary) -> UsageSummary:
    """The summary, with the series whose readings no host can give named (the analyzer judges nothing on them) and
    those CloudWatch answered only in part (no one click rests on them)."""
    errors = raw.out_of_range()
    if errors:
        summary = replace(summary, out_of_range=errors)
    if raw.incomplete:
        shown = ", ".join(raw.incomplete[:3]) + (
            f" and {len(raw.incomplete) - 3} more" if len(raw.incomplete) > 3 else ""
        )
        summary = replace(summary, gaps=(*summary.gaps, Gap(Source.METRICS, shown)))
    return summary


def _on_current_type(raw: RawUsage) -> tuple[RawUsage, TypeChange | None]:
    """The host's samples on its current type. The agent's series carry the type they were published on; those of
    earlier types are not read (the collector names them in `previous_types`), so the first accelerator sample left
    is the first on the current type. CloudTrail's record of a resize (`resized_at`) holds whatever the series
    carry. The EC2 series, which carry no type, are cut at the later of the two."""
    seen: list[tuple[datetime, str]] = []
    first = raw.first_accelerator_sample if raw.previous_types else None
    if first is not None:
        seen.append(
            (datetime.fromtimestamp(first - first % 3600, UTC), "the CloudWatch agent's InstanceType dimension")
        )
    if raw.resized_at is not None:
        seen.append((_next_hour(raw.resized_at), "CloudTrail's ModifyInstanceAttribute"))
    if raw.started_at is not None:
        seen.append((_next_hour(raw.started_at), STARTED))
    inside = [(since, source) for since, source in seen if raw.window_start < since < raw.window_end]
    if not inside:
        return raw, None
    since = max(at for at, _ in inside)
    sources = [source for _, source in sorted(inside)]
    change = TypeChange(raw.previous_types, since, " and ".join(sources), assumed=sources == [STARTED])
    return raw.since(since), change


# The evidence of a possible resize when CloudTrail could not be read: the host's last start (domain/guards.py).
STARTED = "its last start (LaunchTime)"


def _next_hour(at: datetime) -> datetime:
    """From the next whole hour: the stop, modify and start around a change are not the new type's load."""
    moment = at.astimezone(UTC)
    hour = moment.replace(minute=0, second=0, microsecond=0)
    return hour if hour == moment else hour + timedelta(hours=1)


def _settled(
    raw: RawUsage, summary: UsageSummary, timelines: Timelines, type_change: TypeChange | None
) -> UsageSummary:
    """The summary of the host's current regime: the whole window's, or the time since its work changed."""
    found = regimes.find(timelines)
    if found is None:
        return replace(summary, type_change=type_change) if type_change else summary
    since = found.since_time
    start, end = int(raw.window_start.timestamp()), int(raw.window_end.timestamp())
    level = _cpu_mean if found.measure == "cpu" else _busiest_mean
    change = RegimeChange(
        kind=found.kind,
        since=since,
        level_before=level(raw, start, found.since),
        level_after=level(raw, found.since, end),
        days_before=round(found.days_before, 2),
        measure=found.measure,
    )
    now = summarize(raw.since(since))  # the one-host reference: the cut window has a clock of its own
    # The daily means keep the whole window: they are evidence of what changed, not a basis for sizing.
    return replace(now, regime=change, type_change=type_change, daily_accelerator_mean=summary.daily_accelerator_mean)


def _cpu_mean(raw: RawUsage, start: int, end: int) -> float:
    """The host's mean CPU over [start, end) (0 without a reading there)."""
    stamps, values = raw.cpu_avg.stamps, raw.cpu_avg.array
    inside = values[stamps.searchsorted(start) : stamps.searchsorted(end)]
    return float(inside.mean()) if len(inside) else 0.0


def _busiest_mean(raw: RawUsage, start: int, end: int) -> float:
    """The busiest unit's mean utilisation over [start, end) (0 when no unit has a reading there)."""
    means = []
    for device in raw.devices:
        series = device.utilization_avg or device.utilization_max
        if series:
            stamps = series.stamps
            values = series.array[stamps.searchsorted(start) : stamps.searchsorted(end)]
            if len(values):
                means.append(float(values.mean()))
    return max(means, default=0.0)


def _per_host(rows: Floats, unit_counts: Sequence[int], combine: np.ufunc) -> Floats:
    """`combine` of each host's unit rows, for hosts ordered by their number of units.

    Each run of hosts with as many units is one block, reduced along its unit axis: numpy then combines a
    host's rows in order, as the one-host path does (reduceat over rows would add them pairwise, and the
    sums would differ in the last bits)."""
    combined = []
    start = 0
    for units, hosts in itertools.groupby(unit_counts):
        count = len(list(hosts))
        block = rows[start : start + count * units].reshape(count, units, rows.shape[1])
        combined.append(combine.reduce(block, axis=1))
        start += count * units
    return np.concatenate(combined)


def _memory_views(
    clock: _Clock, devices: Sequence[DeviceSeries], peaks: Floats
) -> tuple[list[float | None], list[float | None], list[float | None]]:
    """Each unit's memory peak, its low while loaded, and how it follows the unit's hourly peaks."""
    if not clock.memory:
        nothing: list[float | None] = [None] * len(devices)
        return nothing, nothing, nothing
    memory = np.stack([device.memory_used_max.array for device in devices])
    ordered = np.sort(memory, axis=1)
    tops = ordered[:, -1]
    top_values: list[float | None] = tops.tolist()
    low_values = [memory_low(row) for row in ordered]
    return top_values, low_values, memory_load_correlations(memory, peaks, tops)


@dataclass(frozen=True, slots=True)
class _Stacks:
    """A group's series as rows: one per unit (in host order), or one per host."""

    utilization: Floats  # units' 5-minute averages
    peaks: Floats  # units' hourly maxima
    cpu: Floats
    inbound: Floats
    outbound: Floats

    @classmethod
    def of(cls, raws: Sequence[RawUsage]) -> _Stacks:
        devices = [device for raw in raws for device in raw.devices]
        return cls(
            utilization=np.stack([device.utilization_avg.array for device in devices]),
            peaks=np.stack([device.utilization_max.array for device in devices]),
            cpu=np.stack([raw.cpu_avg.array for raw in raws]),
            inbound=np.stack([raw.network_in_sum.array for raw in raws]),
            outbound=np.stack([raw.network_out_sum.array for raw in raws]),
        )


@dataclass(frozen=True, slots=True)
class _Timelines:
    """A group's time views, one entry per host."""

    hour_peaks: list[tuple[float | None, ...]]
    daily: list[tuple[float | None, ...]]
    week: WeekViews
    network_p95: list[float | None]
    hour_peak_rows: Floats  # the same two as rows (-inf / NaN where no reading), for the reading of regimes
    daily_rows: Floats
    cpu_daily_rows: Floats  # the host's CPU mean per day (NaN where none)
    # Each direction's sustained level (p99 of its hourly means, Gbps) per host: hours_with_data columns, sorted.
    inbound_hours: Floats
    outbound_hours: Floats


def _timelines(clock: _Clock, raws: Sequence[RawUsage], stacks: _Stacks) -> _Timelines:
    """Busiest unit per clock hour of the window, the units' mean per day, and the hour-of-week views of
    the accelerators, CPU and network (before any stack is sorted)."""
    unit_counts = [len(raw.devices) for raw in raws]
    grid = WindowGrid.of(clock.window_start, clock.window_end)
    hour_bins = Bins(clock.hourly, grid.first_hour, 3600, grid.hours)
    hour_peaks = hour_bins.reduce(_per_host(stacks.peaks, unit_counts, np.maximum), np.maximum, -np.inf)
    day_bins = Bins(clock.fine, grid.start, 86400, grid.days)
    day_sums = day_bins.reduce(_per_host(stacks.utilization, unit_counts, np.add), np.add, 0.0)
    day_counts = day_bins.counts[np.newaxis, :] * np.array(unit_counts)[:, np.newaxis]

    # Clock hours of the window, widened to the 5-minute series' own span, for the hour-of-week views.
    span = HourSpan.covering(grid, [raws[0].cpu_avg])
    fine_bins = Bins(clock.fine, span.first, 3600, span.count)
    has = ~fine_bins.empty
    counts = np.maximum(fine_bins.counts, 1)
    network = np.zeros((len(raws), span.count))
    flows = []
    for stack, rates in (
        (stacks.inbound, [gbps(raw.network_in_sum) for raw in raws]),
        (stacks.outbound, [gbps(raw.network_out_sum) for raw in raws]),
    ):
        flow = (fine_bins.reduce(stack, np.add, 0.0) / counts * np.array(rates)[:, np.newaxis])[:, has]
        network[:, has] += flow
        flows.append(flow)  # a copy already (boolean indexing): sorted for its percentiles below
    network_hours = network[:, has]
    network_hours.sort(axis=1)
    daily = np.where(day_counts > 0, day_sums / np.maximum(day_counts, 1), np.nan)
    cpu_peaks = fine_bins.reduce(stacks.cpu, np.maximum, -np.inf)
    return _Timelines(
        hour_peak_rows=hour_peaks,
        daily_rows=daily,
        cpu_daily_rows=day_means(day_bins, stacks.cpu),
        hour_peaks=optional_rows(hour_peaks, ~hour_bins.empty),
        daily=optional_rows(daily, day_counts[0] > 0),
        week=week_views(
            grid,
            span,
            hour_peaks,
            fine_bins.reduce(stacks.cpu, np.add, 0.0),
            fine_bins.counts,
            network,
            has,
            cpu_peaks,
        ),
        network_p95=[row[0] for row in pick_rows(network_hours, 95)] if network_hours.shape[1] else [None] * len(raws),
        inbound_hours=flows[0],
        outbound_hours=flows[1],
    )


def _unit_usages(clock: _Clock, raws: Sequence[RawUsage], stacks: _Stacks) -> list[DeviceUsage]:
    """Every unit's usage, in host order (sorts the utilisation stack in place)."""
    devices = [device for raw in raws for device in raw.devices]
    bursts = pick_rows(np.sort(stacks.peaks, axis=1), 99, 100)
    memory_peaks, lows, followed = _memory_views(clock, devices, stacks.peaks)
    signals = profiles(devices)
    return [
        DeviceUsage(
            index=device.index,
            utilization=stats,
            utilization_peak=peak,
            memory_used_peak_mib=memory_peak,
            memory_total_mib=series_peak(device.memory_total_max),
            utilization_burst=burst,
            memory_used_low_mib=low,
            memory_load_correlation=follows,
            silent_share=device.silent_share,
            profile=profile,
            slices=slice_usages(device),
        )
        for device, stats, (burst, peak), memory_peak, low, follows, profile in zip(
            devices, row_stats(stacks.utilization), bursts, memory_peaks, lows, followed, signals, strict=True
        )
    ]


def _summarize_group(clock: _Clock, raws: Sequence[RawUsage]) -> list[tuple[UsageSummary, Timelines]]:
    """The summaries of hosts on one clock (see _clock_of), ordered by their number of units, with the timelines
    they were read from; each statistic is one numpy call for them all."""
    stacks = _Stacks.of(raws)
    timelines = _timelines(clock, raws, stacks)
    grid = WindowGrid.of(clock.window_start, clock.window_end)
    accelerator_days, coverage = accelerator_coverage(raws[0], (clock.window_end - clock.window_start).total_seconds())
    inbound_peaks, outbound_peaks = stacks.inbound.max(axis=1).tolist(), stacks.outbound.max(axis=1).tolist()
    inbound, outbound = _flows(raws, timelines, inbound_peaks, outbound_peaks)
    storage = _storage(clock, raws)
    units = iter(_unit_usages(clock, raws, stacks))
    ran = running_share(raws[0].cpu_avg, clock.window_end)  # the hosts share the CPU series' clock
    summaries = [
        UsageSummary(
            instance_id=raw.instance_id,
            window_start=raw.window_start,
            window_end=raw.window_end,
            accelerator_data=raw.accelerator_data,
            devices=tuple(itertools.islice(units, len(raw.devices))),
            accelerator_days=accelerator_days,
            accelerator_coverage=coverage,
            cpu=cpu,
            # peak(in) + peak(out) can only over-state the peak of in+out: the safe side for sizing.
            network_peak_gbps=inbound_peaks[host] * gbps(raw.network_in_sum)
            + outbound_peaks[host] * gbps(raw.network_out_sum),
            network_p95_gbps=timelines.network_p95[host],
            host_memory_peak_pct=series_peak(raw.host_memory_max),
            hourly_accelerator_peak=timelines.week.accelerator[host],
            hourly_cpu_mean=timelines.week.cpu[host],
            hourly_network_mean_gbps=timelines.week.network[host],
            daily_accelerator_mean=timelines.daily[host],
            accelerator_hour_peaks=timelines.hour_peaks[host],
            running_share=ran,
            hourly_cpu_peak=timelines.week.cpu_peak[host],
            daily_cpu_mean=nan_as_none(timelines.cpu_daily_rows[host]),
            network_in=inbound[host],
            network_out=outbound[host],
            ebs_mbps=storage[host][0],
            ebs_iops=storage[host][1],
            local_disk_mbps=storage[host][2],
            graphics_processes=raw.graphics_processes,
        )
        for host, (raw, cpu) in enumerate(zip(raws, row_stats(stacks.cpu), strict=True))
    ]
    found = []
    for host, (raw, summary) in enumerate(zip(raws, summaries, strict=True)):
        encoders = encoder_views(raw.devices, grid)
        line = Timelines(
            grid,
            timelines.hour_peak_rows[host],
            timelines.daily_rows[host],
            encoders.hours if encoders else None,
            timelines.cpu_daily_rows[host],
        )
        found.append((with_last_days(with_encoders(summary, encoders), raw, one_clock=True), line))
    return found


def _flows(
    raws: Sequence[RawUsage], timelines: _Timelines, inbound_peaks: list[float], outbound_peaks: list[float]
) -> tuple[list[Rate | None], list[Rate | None]]:
    """Each host's network per direction (Gbps): its hourly means' p99, its 5-minute peak."""
    if not timelines.inbound_hours.shape[1]:
        return [None] * len(raws), [None] * len(raws)
    directions: list[list[Rate | None]] = []
    for hours, peaks, series in (
        (timelines.inbound_hours, inbound_peaks, [raw.network_in_sum for raw in raws]),
        (timelines.outbound_hours, outbound_peaks, [raw.network_out_sum for raw in raws]),
    ):
        sustained = rates_of_rows(hours)
        directions.append(
            [Rate(found.sustained, peak * gbps(one)) for found, peak, one in zip(sustained, peaks, series, strict=True)]
        )
    return directions[0], directions[1]


def _storage(clock: _Clock, raws: Sequence[RawUsage]) -> list[tuple[Rate | None, Rate | None, Rate | None]]:
    """Each host's EBS MB/s and IOPS and instance-store MB/s (usage.storage_rates): hosts whose EBS series (and
    diskio, where any host has it) share the group's hourly clock in one numpy pass, the others one by one."""
    if not any(raw.ebs_read_bytes or raw.ebs_write_bytes or raw.disk_bytes for raw in raws):
        return [(None, None, None)] * len(raws)
    hourly = clock.hourly
    names = ("ebs_read_bytes", "ebs_write_bytes", "ebs_read_ops", "ebs_write_ops")
    disks = any(raw.disk_bytes for raw in raws)
    if not all(
        _all_on([getattr(raw, name) for name in names] + ([raw.disk_bytes] if disks else []), hourly) for raw in raws
    ):
        return [storage_rates(raw) for raw in raws]
    read, write, read_ops, write_ops = (np.stack([getattr(raw, name).array for raw in raws]) for name in names)
    seconds = float(raws[0].ebs_read_bytes.period_seconds)
    ebs = read + write
    mbps = rates_of_rows(ebs / seconds / MB)
    iops = rates_of_rows((read_ops + write_ops) / seconds)
    if not disks:
        return [(one, ops, None) for one, ops in zip(mbps, iops, strict=True)]
    disk = np.stack([raw.disk_bytes.array for raw in raws])
    local = rates_of_rows(np.maximum(disk - ebs, 0.0) / seconds / MB)
    return list(zip(mbps, iops, local, strict=True))
