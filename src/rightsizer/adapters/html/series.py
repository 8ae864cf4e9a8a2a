"""Per-unit use for the page's charts: each GPU's (or NeuronCore's) hourly means over the window.

The report itself carries one figure per host and day (`evidence.daily_accelerator_mean`); a caller that reads
CloudWatch (the CLI, the demo) keeps the finer series as they pass through collection with `UnitSeriesTap`, at no
extra GetMetricData call:

    kept: dict[str, tuple[UnitSeries, ...]] = {}
    report = cli.wiring.analyze(session, regions, settings, now, usage_tap=lambda usage: UnitSeriesTap(usage, kept))
    html = page.render_report(report, series=kept, now=now)

(one tap per region, all keeping into the same dict).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.usage.series import RawUsage, Series
from rightsizer.services.ports import UsageSource, Window


@dataclass(frozen=True)
class UnitSeries:
    """One GPU's or NeuronCore's use (or its memory, or the host's CPU): hourly values as (epoch seconds of the hour,
    percent), oldest first."""

    label: str  # "GPU 0", "NeuronCore 3", "GPU 0 memory", "CPU"
    points: tuple[tuple[int, float], ...]
    # What it measures: "use" (utilisation, the hourly mean), "memory" (the hourly peak, % of the unit's memory.total)
    # or "cpu" (the host's CPU, the hourly mean): the page charts what decided the finding.
    measure: str = "use"


def hourly(series: Series) -> tuple[tuple[int, float], ...]:
    """The series' mean per clock hour (epoch seconds of the hour's start), oldest first."""
    import numpy as np

    if not series:
        return ()
    hours = series.stamps - series.stamps % 3600
    unique, inverse = np.unique(hours, return_inverse=True)
    sums = np.bincount(inverse, weights=series.array)
    counts = np.bincount(inverse)
    return tuple((int(hour), float(total / count)) for hour, total, count in zip(unique, sums, counts, strict=True))


def unit_series(raw: RawUsage, unit_name: str) -> tuple[UnitSeries, ...]:
    """Each unit's hourly means, as the analyzer reads them (a NeuronCore's silence while its host runs is 0 %:
    `RawUsage.silence_filled`), each GPU's memory peaks as a share of its memory.total, and the host's CPU."""
    devices = raw.silence_filled().devices
    use = tuple(
        UnitSeries(f"{unit_name} {device.index}", hourly(device.utilization_avg))
        for device in devices
        if device.utilization_avg
    )
    memory = tuple(
        UnitSeries(
            f"{unit_name} {device.index} memory", _share(device.memory_used_max, device.memory_total_max), "memory"
        )
        for device in devices
        if device.memory_used_max and device.memory_total_max
    )
    cpu = (UnitSeries("CPU", hourly(raw.cpu_avg), "cpu"),) if raw.cpu_avg and use else ()
    return use + memory + cpu if use else ()


def _share(used: Series, total: Series) -> tuple[tuple[int, float], ...]:
    """Hourly memory in use as a percentage of the unit's memory.total (its largest reading)."""
    size = float(total.array.max())
    return tuple((hour, 100.0 * value / size) for hour, value in hourly(used)) if size > 0 else ()


@dataclass
class UnitSeriesTap:
    """A UsageSource that hands every host's raw series on unchanged and keeps its units' hourly means in `kept`,
    by instance id (hosts without accelerator series keep nothing)."""

    inner: UsageSource
    kept: dict[str, tuple[UnitSeries, ...]] = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        return self.inner.warnings

    @warnings.setter
    def warnings(self, value: list[str]) -> None:
        self.inner.warnings = value

    def read(
        self, instances: Sequence[Instance], specs: Mapping[str, InstanceTypeSpec], window: Window
    ) -> Iterator[RawUsage]:
        types = {instance.instance_id: instance.instance_type for instance in instances}
        for raw in self.inner.read(instances, specs, window):
            spec = specs.get(types.get(raw.instance_id, ""))
            units = unit_series(raw, spec.unit_name if spec else "GPU")
            if units:
                self.kept[raw.instance_id] = units
            yield raw
