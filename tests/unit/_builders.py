"""Extra builders for the analyzer and usage tests (tests/factories.py stays the shared base)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from decimal import Decimal

from rightsizer.adapters.aws.ec2 import parse_instance_type
from rightsizer.adapters.bundled import accelerator_table
from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import DeviceUsage, UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.usage.series import EMPTY, DeviceSeries, Series
from tests.factories import NOW
from tests.unit import catalog_fixture as fx

# What nvidia-smi reports as memory.total (MiB) on each GPU model, as the agent publishes it.
A10G_TOTAL_MIB = 23028.0
L4_TOTAL_MIB = 23034.0
T4_TOTAL_MIB = 15360.0
V100_TOTAL_MIB = 16160.0
A100_40_TOTAL_MIB = 40960.0
H100_TOTAL_MIB = 81559.0
L40S_TOTAL_MIB = 46068.0
# neuron-monitor: per-NeuronCore share of the device's memory.
INF1_CORE_MIB = 2048.0
NEURON_V2_CORE_MIB = 16384.0
GIB = 1024.0


def analyze(
    host: Instance,
    summary: UsageSummary | None,
    *,
    cat: Catalog | None = None,
    book: PriceBook | None = None,
    policy: Policy | None = None,
    now: datetime = NOW,
) -> Recommendation:
    """The analyzer over the hand-written fixture catalog and prices unless told otherwise."""
    return analyze_instance(
        host, summary, cat if cat is not None else fx.catalog(), book or fx.prices(), policy or Policy(), now
    )


def load_following(device: DeviceUsage, *, low_mib: float, correlation: float) -> DeviceUsage:
    """The device's memory line as summarize() describes a working set that rises and falls with the load."""
    return replace(device, memory_used_low_mib=low_mib, memory_load_correlation=correlation)


def flat_memory(device: DeviceUsage, *, band_mib: float = 50.0) -> DeviceUsage:
    """The device's memory line flat at its peak from process start (a framework's reservation)."""
    peak = device.memory_used_peak_mib
    assert peak is not None
    return replace(device, memory_used_low_mib=peak - band_mib, memory_load_correlation=None)


def repeating_weeks(summary: UsageSummary) -> UsageSummary:
    """The summary's hour-of-week accelerator profile seen again in each week of its 14-day window."""
    start = summary.window_start
    first = start.weekday() * 24 + start.hour  # hour of week that holds window_start
    profile = summary.hourly_accelerator_peak
    assert len(profile) == 168
    return replace(summary, accelerator_hour_peaks=tuple(profile[(first + h) % 168] for h in range(2 * 168)))


def with_specs(base: Catalog, *specs: InstanceTypeSpec, offered: bool = True) -> Catalog:
    extra = {spec.instance_type: spec for spec in specs}
    offered_set = base.offered
    if offered and offered_set is not None:
        offered_set = offered_set | frozenset(extra)
    return replace(base, specs={**base.specs, **extra}, offered=offered_set)


def with_prices(base: PriceBook, hourly: Mapping[str, str]) -> PriceBook:
    return replace(base, on_demand={**base.on_demand, **{k: Decimal(v) for k, v in hourly.items()}})


def g4ad_spec() -> InstanceTypeSpec:
    """g4ad.xlarge as DescribeInstanceTypes describes it (AMD Radeon Pro V520), through the real parser."""
    raw = {
        "InstanceType": "g4ad.xlarge",
        "VCpuInfo": {"DefaultVCpus": 4},
        "MemoryInfo": {"SizeInMiB": 16384},
        "ProcessorInfo": {"SupportedArchitectures": ["x86_64"]},
        "SupportedVirtualizationTypes": ["hvm"],
        "EbsInfo": {"NvmeSupport": "required"},
        "NetworkInfo": {
            "EnaSupport": "required",
            "EfaSupported": False,
            "NetworkCards": [{"BaselineBandwidthInGbps": 2.0}],
        },
        "GpuInfo": {
            "Gpus": [
                {
                    "Name": "Radeon Pro V520",
                    "Manufacturer": "AMD",
                    "Count": 1,
                    "MemoryInfo": {"SizeInMiB": 8192},
                }
            ],
            "TotalGpuMemoryInMiB": 8192,
        },
    }
    spec = parse_instance_type(raw, accelerator_table())
    assert spec is not None
    return spec


def unmeasured_device(index: str) -> DeviceUsage:
    """A device the collector listed but for which no utilisation or memory series came back."""
    return DeviceUsage(index=index, utilization=None, utilization_peak=None)


def hourly_series(start_epoch: int, values: Sequence[float], period: int = 3600) -> Series:
    return Series(period, tuple(start_epoch + i * period for i in range(len(values))), tuple(values))


def device_series(
    index: str,
    *,
    util_avg: Series = EMPTY,
    util_max: Series = EMPTY,
    memory_used: Series = EMPTY,
    memory_total: Series = EMPTY,
) -> DeviceSeries:
    return DeviceSeries(
        index=index,
        utilization_avg=util_avg,
        utilization_max=util_max,
        memory_used_max=memory_used,
        memory_total_max=memory_total,
    )
