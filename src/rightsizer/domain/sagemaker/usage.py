"""Usage summaries of SageMaker resources: the raw series the CloudWatch adapter builds and what is read from them.

Pure: no I/O (see the package's docstring for what SageMaker publishes and how it is read).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from rightsizer.domain.models.usage import SeriesStats
from rightsizer.domain.usage.series import EMPTY, Series
from rightsizer.domain.usage.stats import HOURS_PER_WEEK, hour_of_week, percentile, series_stats

MICROSECONDS_PER_MS = 1000.0
_FIVE_MINUTES = 300
_HOUR = 3600

# =============================================================================================
# Raw series (the CloudWatch adapter builds them) and their summaries


@dataclass(frozen=True, slots=True)
class VariantSeries:
    """What CloudWatch holds for one endpoint variant over the window, as published (GPU and CPU summed)."""

    resource_id: str
    window_start: datetime
    window_end: datetime
    gpu_avg: Series = EMPTY  # GPUUtilization, 5-minute Average (mean over instances of the sum over GPUs)
    gpu_max: Series = EMPTY  # GPUUtilization, hourly Maximum (the busiest instance)
    gpu_memory_max: Series = EMPTY  # GPUMemoryUtilization, hourly Maximum
    cpu_avg: Series = EMPTY  # CPUUtilization, 5-minute Average (sum over vCPUs)
    memory_max: Series = EMPTY  # MemoryUtilization, hourly Maximum (0-100)
    invocations: Series = EMPTY  # Invocations, hourly Sum (variant, or its inference components: the larger)
    invocations_per_instance: Series = EMPTY  # InvocationsPerInstance, hourly Sum
    latency_avg: Series = EMPTY  # ModelLatency, hourly Average (microseconds)
    # Enhanced metrics: GPUUtilization of each GPU of each instance (AcceleratorId), 0-100 each, not summed; 5-minute
    # Averages and hourly Maximums. Empty where the endpoint does not publish them.
    gpu_accelerators_avg: tuple[Series, ...] = ()
    gpu_accelerators_max: tuple[Series, ...] = ()

    @property
    def instance_metrics(self) -> bool:
        return bool(self.gpu_avg or self.cpu_avg or self.gpu_max)


@dataclass(frozen=True, slots=True)
class VariantUsage:
    """What the window says about one endpoint variant. GPU and CPU figures are per GPU / per vCPU (see module)."""

    resource_id: str
    window_start: datetime
    window_end: datetime
    gpus: int  # GPUs (or Neuron devices) per instance: what GPUUtilization was divided by
    vcpus: int
    observed_days: float = 0.0  # from the first instance metric to the end of the window
    coverage: float = 0.0  # share of the window's 5-minute periods with an instance metric
    gpu: SeriesStats | None = None  # per GPU, 5-minute averages
    gpu_burst: float | None = None  # per GPU, p99 of the hourly maxima (busiest instance)
    gpu_peak: float | None = None
    gpu_summed_p95: float | None = None  # as published: p95 of the 5-minute averages, summed over GPUs
    gpu_summed_burst: float | None = None
    gpu_memory_peak_pct: float | None = None  # per GPU: the busiest instance's hourly peak / GPUs
    cpu: SeriesStats | None = None  # per vCPU
    memory_peak_pct: float | None = None  # MemoryUtilization's peak (0-100)
    invocations: float | None = None  # over the window; None: no datapoint at all
    invocation_hours: int = 0
    # Per hour of the week (Monday 00:00 UTC first): the most invocations that hour saw in any week; None: no hour of
    # the window fell there with instance metrics.
    hourly_invocations: tuple[float | None, ...] = ()
    busy_weeks_share: float | None = None  # share of the busy hours-of-week busy in at least two weeks
    weeks_observed: int = 0
    peak_invocations_per_instance: float | None = None
    latency_p95_ms: float | None = None
    latency_mean_ms: float | None = None
    daily_gpu_mean: tuple[float | None, ...] = ()  # per GPU, one value per day of the window, oldest first
    # Enhanced metrics, per GPU: the busiest GPU's 5-minute averages, and its busiest hours (p99 of the hourly maxima).
    # A GPU's own work does not spread over the others: no target GPU carries less than this. None: not published.
    gpu_busiest: SeriesStats | None = None
    gpu_busiest_burst: float | None = None

    @property
    def instance_metrics(self) -> bool:
        return self.gpu is not None or self.cpu is not None


def _divided(values: np.ndarray, by: int) -> np.ndarray:
    return values / by if by > 0 else values


def _days(window_start: datetime, window_end: datetime) -> int:
    return max(1, math.ceil((window_end - window_start).total_seconds() / 86400))


def _daily_means(series: Series, window_start: datetime, days: int, by: int) -> tuple[float | None, ...]:
    if not series:
        return (None,) * days
    start = int(window_start.timestamp())
    day = (series.stamps - start) // 86400
    values = _divided(series.array, by)
    means: list[float | None] = []
    for number in range(days):
        chosen = values[day == number]
        means.append(float(chosen.mean()) if len(chosen) else None)
    return tuple(means)


def _stats_per(series: Series, by: int) -> SeriesStats | None:
    return series_stats(_divided(series.array, by)) if series else None


def _p(series: Series, pct_rank: float) -> float | None:
    return percentile(sorted(series.array.tolist()), pct_rank) if series else None


def _week_views(
    invocations: Series, monitored: Series, window_start: datetime
) -> tuple[tuple[float | None, ...], float | None, int]:
    """Hour-of-week busiest invocation counts (None: no monitored hour fell there), the share of busy hours-of-week
    seen busy in two or more weeks, and the whole weeks observed."""
    if not monitored:
        return (), None, 0
    hours = np.unique(monitored.stamps - monitored.stamps % _HOUR)
    peaks: list[float | None] = [None] * HOURS_PER_WEEK
    for hour in hours.tolist():
        peaks[hour_of_week(hour)] = 0.0
    busy_weeks: dict[int, set[int]] = {}
    start = int(window_start.timestamp())
    for stamp, value in zip(invocations.stamps.tolist(), invocations.array.tolist(), strict=True):
        slot = hour_of_week(stamp)
        current = peaks[slot]
        peaks[slot] = max(value, current or 0.0)
        if value > 0:
            busy_weeks.setdefault(slot, set()).add((stamp - start) // (7 * 86400))
    # The last datapoint covers a period too: 14 days of 5-minute averages are two whole weeks, not one.
    span = int(monitored.stamps[-1]) + monitored.period_seconds - int(monitored.stamps[0])
    weeks = span // (7 * 86400)
    recurring = (sum(1 for seen in busy_weeks.values() if len(seen) >= 2) / len(busy_weeks)) if busy_weeks else None
    return tuple(peaks), recurring, weeks


def summarize_variant(raw: VariantSeries, gpus: int, vcpus: int) -> VariantUsage:
    """Per-GPU and per-vCPU figures of one variant's series (GPUUtilization / gpus, CPUUtilization / vcpus)."""
    monitored = raw.gpu_avg or raw.cpu_avg
    window = (raw.window_end - raw.window_start).total_seconds()
    expected = max(1, int(window // _FIVE_MINUTES))
    first = int(monitored.stamps[0]) if monitored else None
    observed = (raw.window_end.timestamp() - first) / 86400 if first is not None else 0.0
    invocations = float(raw.invocations.array.sum()) if raw.invocations else None
    hourly, recurring, weeks = _week_views(raw.invocations, monitored, raw.window_start)
    latency = raw.latency_avg
    burst = _p(raw.gpu_max, 99)
    return VariantUsage(
        resource_id=raw.resource_id,
        window_start=raw.window_start,
        window_end=raw.window_end,
        gpus=gpus,
        vcpus=vcpus,
        observed_days=round(max(0.0, observed), 2),
        coverage=min(1.0, len(monitored.array) / expected) if monitored else 0.0,
        gpu=_stats_per(raw.gpu_avg, gpus),
        gpu_burst=burst / gpus if burst is not None and gpus else burst,
        gpu_peak=float(raw.gpu_max.array.max()) / max(gpus, 1) if raw.gpu_max else None,
        gpu_summed_p95=_p(raw.gpu_avg, 95),
        gpu_summed_burst=burst,
        gpu_memory_peak_pct=float(raw.gpu_memory_max.array.max()) / max(gpus, 1) if raw.gpu_memory_max else None,
        cpu=_stats_per(raw.cpu_avg, vcpus),
        memory_peak_pct=float(raw.memory_max.array.max()) if raw.memory_max else None,
        invocations=invocations,
        invocation_hours=int((raw.invocations.array > 0).sum()) if raw.invocations else 0,
        hourly_invocations=hourly,
        busy_weeks_share=recurring,
        weeks_observed=weeks,
        peak_invocations_per_instance=float(raw.invocations_per_instance.array.max())
        if raw.invocations_per_instance
        else None,
        latency_p95_ms=(_p(latency, 95) or 0.0) / MICROSECONDS_PER_MS if latency else None,
        latency_mean_ms=float(latency.array.mean()) / MICROSECONDS_PER_MS if latency else None,
        daily_gpu_mean=_daily_means(raw.gpu_avg, raw.window_start, _days(raw.window_start, raw.window_end), gpus),
        gpu_busiest=_busiest_accelerator(raw.gpu_accelerators_avg),
        gpu_busiest_burst=max((_p(one, 99) or 0.0 for one in raw.gpu_accelerators_max), default=None),
    )


def _busiest_accelerator(series: Sequence[Series]) -> SeriesStats | None:
    """The stats of the GPU whose 5-minute p95 is the highest (enhanced metrics: each GPU's reading, not a sum)."""
    found = [stats for one in series if (stats := series_stats(one.array)) is not None]
    return max(found, key=lambda stats: (stats.p95, stats.peak), default=None)


@dataclass(frozen=True, slots=True)
class NotebookSeries:
    """The CloudWatch agent's GPU series of one notebook instance (namespace CWAgent, dimension NotebookInstanceName),
    where its lifecycle configuration publishes them; empty tuples: none."""

    resource_id: str
    window_start: datetime
    window_end: datetime
    gpu_avg: tuple[Series, ...] = ()  # nvidia_smi_utilization_gpu, 5-minute Average, one per GPU
    gpu_max: tuple[Series, ...] = ()  # hourly Maximum
    memory_used_max: tuple[Series, ...] = ()  # nvidia_smi_memory_used (MiB), hourly Maximum


@dataclass(frozen=True, slots=True)
class NotebookUsage:
    resource_id: str
    measured: bool  # the agent's GPU series exist for the notebook
    observed_days: float = 0.0
    coverage: float = 0.0
    busiest_p99: float | None = None  # the busiest GPU's p99 of 5-minute averages
    busiest_peak: float | None = None  # ...and the highest hourly maximum of any GPU
    memory_peak_mib: float | None = None
    daily_gpu_mean: tuple[float | None, ...] = ()  # the busiest GPU's per day
    last_sample: datetime | None = None  # the agent's last 5-minute average of any GPU


def summarize_notebook(raw: NotebookSeries) -> NotebookUsage:
    if not raw.gpu_avg and not raw.gpu_max:
        return NotebookUsage(raw.resource_id, measured=False)
    averages = [s for s in raw.gpu_avg if s]
    window = (raw.window_end - raw.window_start).total_seconds()
    first = min((int(s.stamps[0]) for s in averages), default=None)
    longest = max((len(s.array) for s in averages), default=0)
    days = _days(raw.window_start, raw.window_end)
    dailies = [_daily_means(s, raw.window_start, days, 1) for s in averages]
    busiest_daily = tuple(
        max((d[n] for d in dailies if d[n] is not None), default=None)  # type: ignore[type-var]
        for n in range(days)
    )
    return NotebookUsage(
        resource_id=raw.resource_id,
        measured=True,
        observed_days=round((raw.window_end.timestamp() - first) / 86400, 2) if first is not None else 0.0,
        coverage=min(1.0, longest / max(1, int(window // _FIVE_MINUTES))),
        busiest_p99=max((_p(s, 99) or 0.0 for s in averages), default=None),
        busiest_peak=max((float(s.array.max()) for s in raw.gpu_max if s), default=None),
        memory_peak_mib=max((float(s.array.max()) for s in raw.memory_used_max if s), default=None),
        daily_gpu_mean=busiest_daily,
        last_sample=datetime.fromtimestamp(max(int(s.stamps[-1]) for s in averages), UTC) if averages else None,
    )


@dataclass(frozen=True, slots=True)
class JobSeries:
    """One training job's hosts: GPUUtilization and GPUMemoryUtilization (summed over each host's GPUs)."""

    job: str
    gpu_avg: tuple[Series, ...] = ()  # one per host, 5-minute Average
    gpu_memory_max: tuple[Series, ...] = ()  # one per host, hourly Maximum
    cpu_avg: tuple[Series, ...] = ()  # CPUUtilization (summed over the host's vCPUs), one per host, 5-minute Average
    memory_max: tuple[Series, ...] = ()  # MemoryUtilization (0-100), one per host, hourly Maximum


@dataclass(frozen=True, slots=True)
class TrainingSeries:
    resource_id: str
    window_start: datetime
    window_end: datetime
    jobs: tuple[JobSeries, ...] = ()


@dataclass(frozen=True, slots=True)
class JobUsage:
    job: str
    gpu: SeriesStats | None  # per GPU, over every host's 5-minute averages
    gpu_memory_peak_pct: float | None  # per GPU
    cpu_summed_p95: float | None = None  # CPUUtilization as published (vCPU-percent), p95 over every host
    memory_peak_pct: float | None = None  # MemoryUtilization's peak over every host (0-100)


@dataclass(frozen=True, slots=True)
class TrainingUsage:
    resource_id: str
    jobs: tuple[JobUsage, ...] = ()

    @property
    def measured(self) -> tuple[JobUsage, ...]:
        return tuple(job for job in self.jobs if job.gpu is not None)


def summarize_training(raw: TrainingSeries, gpus: int) -> TrainingUsage:
    usages = []
    for job in raw.jobs:
        values = [s.array for s in job.gpu_avg if s]
        joined = np.concatenate(values) if values else np.asarray([], dtype=np.float64)
        memory = [float(s.array.max()) for s in job.gpu_memory_max if s]
        cpu = [s.array for s in job.cpu_avg if s]
        ram = [float(s.array.max()) for s in job.memory_max if s]
        usages.append(
            JobUsage(
                job=job.job,
                gpu=series_stats(_divided(joined, gpus)) if len(joined) else None,
                gpu_memory_peak_pct=max(memory) / max(gpus, 1) if memory else None,
                cpu_summed_p95=percentile(sorted(np.concatenate(cpu).tolist()), 95) if cpu else None,
                memory_peak_pct=max(ram) if ram else None,
            )
        )
    return TrainingUsage(raw.resource_id, tuple(usages))
