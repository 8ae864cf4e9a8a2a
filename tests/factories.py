"""Builders for domain objects, so each test states only what it is about."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import cache

from rightsizer.adapters.aws.ec2 import parse_instance_type
from rightsizer.adapters.bundled import accelerator_table, legacy_specs, snapshot_prices
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import AcceleratorData, DeviceUsage, SeriesStats, UsageSummary
from rightsizer.domain.prices import PriceBook

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ACCOUNT = "123456789012"
# What `rightsizer analyze --format json` promises for each recommendation (the list).
PROMISED_RECOMMENDATION_KEYS = frozenset(
    {
        "instance_id",
        "region",
        "instance_type",
        "finding",
        "target_type",
        "monthly_cost_usd",
        "monthly_savings_usd",
        "confidence",
        "actionable",
        "reasons",
    }
)


@cache
def api_specs() -> dict[str, InstanceTypeSpec]:
    """Specs parsed from moto's copy of the DescribeInstanceTypes data (the real API shape)."""
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    table = accelerator_table()
    specs = {}
    for name, raw in INSTANCE_TYPES.items():
        if name.split(".")[0].startswith(("p", "g", "inf", "trn")):
            spec = parse_instance_type(raw, table)
            if spec is not None:
                specs[name] = spec
    return specs


def catalog(region: str = "us-east-1", offered: Iterable[str] | None = None) -> Catalog:
    specs = {**legacy_specs(), **api_specs()}
    offered_set = frozenset(offered) if offered is not None else frozenset(api_specs())
    return Catalog(region=region, specs=specs, accelerators=accelerator_table(), offered=offered_set)


def prices(region: str = "us-east-1") -> PriceBook:
    book = snapshot_prices(region)
    assert book is not None
    return book


def instance(
    instance_type: str = "g5.12xlarge",
    instance_id: str = "i-0123456789abcdef0",
    *,
    tags: dict[str, str] | None = None,
    state: str = "running",
    lifecycle: str = "on-demand",
    asg_name: str | None = None,
    root_device_type: str = "ebs",
    region: str = "us-east-1",
    launch_time: datetime | None = None,
    uses_efa: bool = False,
    ena_support: bool = True,
) -> Instance:
    all_tags = {"Name": f"{instance_type}-host", **(tags or {})}
    if asg_name:
        all_tags["aws:autoscaling:groupName"] = asg_name
    return Instance(
        instance_id=instance_id,
        account_id=ACCOUNT,
        region=region,
        availability_zone=f"{region}a",
        instance_type=instance_type,
        state=state,
        launch_time=launch_time or NOW - timedelta(days=60),
        tags=all_tags,
        lifecycle=lifecycle,
        asg_name=asg_name,
        root_device_type=root_device_type,
        ena_support=ena_support,
        uses_efa=uses_efa,
    )


def stats(
    p95: float,
    *,
    mean: float | None = None,
    p50: float | None = None,
    p99: float | None = None,
    peak: float | None = None,
    samples: int = 4032,
) -> SeriesStats:
    return SeriesStats(
        samples=samples,
        mean=mean if mean is not None else p95 * 0.7,
        p50=p50 if p50 is not None else p95 * 0.7,
        p95=p95,
        p99=p99 if p99 is not None else min(100.0, p95 * 1.05),
        peak=peak if peak is not None else min(100.0, p95 * 1.1),
    )


def device(
    index: str,
    util_p95: float,
    memory_used_mib: float | None,
    memory_total_mib: float | None = None,
    *,
    p50: float | None = None,
    p99: float | None = None,
    peak: float | None = None,
    encoder_sessions: float | None = 0.0,
) -> DeviceUsage:
    """A GPU as the shipped agent config reports it: encoder stats published (no sessions unless told; None: the
    agent does not publish them)."""
    utilization = stats(util_p95, p50=p50, p99=p99, peak=peak)
    return DeviceUsage(
        index=index,
        utilization=utilization,
        utilization_peak=utilization.peak,
        memory_used_peak_mib=memory_used_mib,
        memory_total_mib=memory_total_mib,
        encoder_sessions_peak=encoder_sessions,
        encoder_active_hours=336 if encoder_sessions else 0,
    )


def idle_device(index: str, memory_total_mib: float | None = None) -> DeviceUsage:
    return device(index, 0.0, 3.0, memory_total_mib, p50=0.0, p99=0.0, peak=1.0)


def usage(
    devices: Sequence[DeviceUsage],
    *,
    instance_id: str = "i-0123456789abcdef0",
    cpu_p95: float | None = 20.0,
    days: float = 14.0,
    coverage: float = 1.0,
    host_memory_pct: float | None = 30.0,
    network_gbps: float | None = 0.5,
    accelerator_data: AcceleratorData = AcceleratorData.PER_DEVICE,
    hourly_peak: Sequence[float | None] | None = None,
    hourly_cpu: Sequence[float | None] | None = None,
) -> UsageSummary:
    peaks = (
        tuple(hourly_peak)
        if hourly_peak is not None
        else tuple(max((d.utilization_peak or 0.0) for d in devices) if devices else None for _ in range(168))
    )
    return UsageSummary(
        instance_id=instance_id,
        window_start=NOW - timedelta(days=14),
        window_end=NOW,
        accelerator_data=accelerator_data if devices else AcceleratorData.NONE,
        devices=tuple(devices),
        accelerator_days=days if devices else 0.0,
        accelerator_coverage=coverage if devices else 0.0,
        cpu=stats(cpu_p95) if cpu_p95 is not None else None,
        network_peak_gbps=network_gbps,
        host_memory_peak_pct=host_memory_pct,
        hourly_accelerator_peak=peaks,
        hourly_cpu_mean=tuple(hourly_cpu)
        if hourly_cpu is not None
        else tuple((cpu_p95 or 0.0) * 0.5 for _ in range(168)),
        daily_accelerator_mean=tuple(10.0 for _ in range(14)),
    )


def business_hours_profile(
    busy_value: float = 70.0, idle_value: float = 0.0, start: int = 8, end: int = 19
) -> list[float]:
    """Hour-of-week peaks: busy Mon-Fri start..end UTC, idle otherwise."""
    profile = []
    for hour in range(168):
        day, hod = divmod(hour, 24)
        profile.append(busy_value if day < 5 and start <= hod < end else idle_value)
    return profile


def money(value: str) -> Decimal:
    return Decimal(value)


@dataclass
class RecordingProgress:
    """A Progress port fake that remembers what it was told."""

    stages: list[tuple[str, int]] = field(default_factory=list)
    advanced: int = 0
    warnings: list[str] = field(default_factory=list)

    def stage(self, label: str, total: int) -> None:
        self.stages.append((label, total))

    def advance(self, steps: int = 1) -> None:
        self.advanced += steps

    def warn(self, message: str) -> None:
        self.warnings.append(message)
