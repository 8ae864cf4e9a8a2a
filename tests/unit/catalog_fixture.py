"""A small, hand-written catalog for the analyzer's unit tests.

Every figure a test's expected value depends on is here, on one screen, so money and projections can be
checked by hand: monthly = hourly x 730. Specs are those DescribeInstanceTypes reports for each type and
prices are us-east-1 on-demand (both as of 2026; the tests only depend on this file, not on moto's
instance table or the bundled price snapshot). Accelerator figures are the bundled table's (dense tensor
TFLOPS, GB/s, NVENC/NVDEC engines per device); A10G's tensor figure (70) is an estimate, the same in both
(no vendor publishes one: see its entry in src/rightsizer/domain/data/accelerators.json). Inferentia's FP32
stays None here; the bundled table's estimate (16 TFLOPS, a quarter of its BF16 rate as on NeuronCore-v2)
gives the same ratio as its tensor figure against Inferentia2 and Trainium, the fixture's other Neuron
devices, so it would decide no projection here.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from rightsizer.domain.catalog import AcceleratorTable, Catalog
from rightsizer.domain.models.hosts import AcceleratorKind, AcceleratorSpec, InstanceTypeSpec
from rightsizer.domain.prices import PriceBook

REGION = "us-east-1"
GIB = 1024


def _acc(
    model: str,
    memory_gib: float,
    bandwidth: float,
    fp32: float | None,
    tensor: float | None,
    cc: str | None = None,
    cores: int = 0,
    vendor: str = "NVIDIA",
    *,
    engines: tuple[int, int] = (0, 0),
) -> AcceleratorSpec:
    """`engines`: (NVENC, NVDEC) per device, as in the bundled table."""
    encoders, decoders = engines
    return AcceleratorSpec(
        model=model,
        vendor=vendor,
        memory_gib=memory_gib,
        memory_bandwidth_gbps=bandwidth,
        fp32_tflops=fp32,
        tensor_tflops=tensor,
        compute_capability=cc,
        neuroncores_per_device=cores,
        video_encoders=encoders,
        video_decoders=decoders,
    )


ACCELERATORS = {
    a.model: a
    for a in (
        #    model              GiB  GB/s  FP32   tensor  CUDA   (NVENC, NVDEC)
        _acc("V100-SXM2-16GB", 16, 900, 15.7, 125, "7.0", engines=(3, 1)),
        _acc("A100-SXM4-40GB", 40, 1555, 19.5, 312, "8.0", engines=(0, 5)),
        _acc("A100-SXM4-80GB", 80, 2039, 19.5, 312, "8.0", engines=(0, 5)),
        _acc("H100-SXM5-80GB", 80, 3350, 67, 989.4, "9.0", engines=(0, 7)),
        _acc("T4", 16, 320, 8.1, 65, "7.5", engines=(1, 2)),
        _acc("T4G", 16, 320, 8.1, 65, "7.5", engines=(1, 2)),
        _acc("A10G", 24, 600, 31.2, 70, "8.6", engines=(1, 2)),
        _acc("L4", 24, 300, 30.3, 121, "8.9", engines=(2, 4)),
        _acc("L40S", 48, 864, 91.6, 362.05, "8.9", engines=(3, 3)),
        _acc("Inferentia", 8, 50, None, 64, cores=4, vendor="AWS"),
        _acc("Inferentia2", 32, 820, 47.5, 190, cores=2, vendor="AWS"),
        _acc("Trainium", 32, 820, 47.5, 190, cores=2, vendor="AWS"),
    )
}


def _type(
    name: str,
    vcpus: int,
    ram_gib: int,
    model: str,
    count: int,
    unit_mib: int,
    network: float,
    storage_gb: int = 0,
    *,
    efa: bool = False,
    arch: str = "x86_64",
    cores: int = 0,
    xen: bool = False,
) -> InstanceTypeSpec:
    kind = AcceleratorKind.NEURON if cores else AcceleratorKind.NVIDIA
    return InstanceTypeSpec(
        instance_type=name,
        vcpus=vcpus,
        memory_mib=ram_gib * GIB,
        accelerator_kind=kind,
        accelerator_model=model,
        accelerator_count=count,
        accelerator_memory_mib=unit_mib,
        network_gbps=network,
        neuron_cores=cores,
        architectures=(arch,),
        ena_support="supported" if xen else "required",
        nvme_support="unsupported" if xen else "required",
        efa_supported=efa,
        instance_storage_gb=storage_gb,
        listed_by_api=not xen,
    )


A10G_MIB, L4_MIB, L40S_MIB, T4_MIB = 22888, 22888, 45776, 16384

# fmt: off
TYPES = {
    t.instance_type: t
    for t in (
        #     type            vCPU  RAM  accelerator       n  MiB each   Gbps  NVMe GB
        _type("g4dn.xlarge",     4,  16, "T4",             1, T4_MIB,     5.0,   125),
        _type("g4dn.2xlarge",    8,  32, "T4",             1, T4_MIB,    10.0,   225),
        _type("g4dn.12xlarge",  48, 192, "T4",             4, T4_MIB,    50.0,   900, efa=True),
        _type("g5.xlarge",       4,  16, "A10G",           1, A10G_MIB,   2.5,   250),
        _type("g5.2xlarge",      8,  32, "A10G",           1, A10G_MIB,   5.0,   450),
        _type("g5.4xlarge",     16,  64, "A10G",           1, A10G_MIB,  10.0,   600),
        _type("g5.8xlarge",     32, 128, "A10G",           1, A10G_MIB,  25.0,   900, efa=True),
        _type("g5.16xlarge",    64, 256, "A10G",           1, A10G_MIB,  25.0,  1900, efa=True),
        _type("g5.12xlarge",    48, 192, "A10G",           4, A10G_MIB,  40.0,  3800, efa=True),
        _type("g5.48xlarge",   192, 768, "A10G",           8, A10G_MIB, 100.0,  7600, efa=True),
        _type("g6.xlarge",       4,  16, "L4",             1, L4_MIB,     2.5,   250),
        _type("g6.2xlarge",      8,  32, "L4",             1, L4_MIB,     5.0,   450),
        _type("g6.4xlarge",     16,  64, "L4",             1, L4_MIB,    10.0,   600),
        _type("g6.12xlarge",    48, 192, "L4",             4, L4_MIB,    40.0,  3760, efa=True),
        _type("g6e.xlarge",      4,  32, "L40S",           1, L40S_MIB,   2.5,   250),
        _type("g6e.2xlarge",     8,  64, "L40S",           1, L40S_MIB,   5.0,   450),
        _type("g6e.4xlarge",    16, 128, "L40S",           1, L40S_MIB,  20.0,   600),
        _type("g5g.xlarge",      4,   8, "T4G",            1, T4_MIB,     1.25, arch="arm64"),
        _type("g5g.2xlarge",     8,  16, "T4G",            1, T4_MIB,     2.5,  arch="arm64"),
        _type("p3.2xlarge",      8,  61, "V100-SXM2-16GB", 1, 16384,     10.0, xen=True),
        _type("p3.8xlarge",     32, 244, "V100-SXM2-16GB", 4, 16384,     10.0, xen=True),
        _type("p4d.24xlarge",   96, 1152, "A100-SXM4-40GB", 8, 40960,   400.0,  8000, efa=True),
        _type("p4de.24xlarge",  96, 1152, "A100-SXM4-80GB", 8, 81920,   400.0,  8000, efa=True),
        _type("p5.48xlarge",   192, 2048, "H100-SXM5-80GB", 8, 81920,  3200.0, 30400, efa=True),
        _type("inf1.xlarge",     4,   8, "Inferentia",     1, 8192,       5.0, cores=4),
        _type("inf1.2xlarge",    8,  16, "Inferentia",     1, 8192,       5.0, cores=4),
        _type("inf1.6xlarge",   24,  48, "Inferentia",     4, 8192,      25.0, cores=16),
        _type("inf2.xlarge",     4,  16, "Inferentia2",    1, 32768,      2.083, cores=2),
        _type("trn1.2xlarge",    8,  32, "Trainium",       1, 32768,      3.125, 474, cores=2),
        _type("trn1.32xlarge", 128, 512, "Trainium",      16, 32768,    800.0, 7600, efa=True, cores=32),
    )
}

HOURLY = {
    "g4dn.xlarge": "0.526", "g4dn.2xlarge": "0.752", "g4dn.12xlarge": "3.912",
    "g5.xlarge": "1.006", "g5.2xlarge": "1.212", "g5.4xlarge": "1.624", "g5.8xlarge": "2.448",
    "g5.12xlarge": "5.672", "g5.16xlarge": "4.096", "g5.48xlarge": "16.288",
    "g6.xlarge": "0.8048", "g6.2xlarge": "0.9776", "g6.4xlarge": "1.3232", "g6.12xlarge": "4.6016",
    "g6e.xlarge": "1.861", "g6e.2xlarge": "2.24208", "g6e.4xlarge": "3.00424",
    "g5g.xlarge": "0.42", "g5g.2xlarge": "0.556",
    "p3.2xlarge": "3.06", "p3.8xlarge": "12.24",
    "p4d.24xlarge": "21.957642", "p4de.24xlarge": "27.44705", "p5.48xlarge": "55.04",
    "inf1.xlarge": "0.228", "inf1.2xlarge": "0.362", "inf1.6xlarge": "1.18", "inf2.xlarge": "0.7582",
    "trn1.2xlarge": "1.34375", "trn1.32xlarge": "21.5",
}
# fmt: on


def catalog(*, offered: frozenset[str] | None = None) -> Catalog:
    """Every fixture type, all offered unless told otherwise."""
    return Catalog(
        region=REGION,
        specs=dict(TYPES),
        accelerators=AcceleratorTable(by_model=dict(ACCELERATORS)),
        offered=frozenset(TYPES) if offered is None else offered,
    )


def prices(**overrides: str) -> PriceBook:
    hourly = {**HOURLY, **overrides}
    return PriceBook(
        region=REGION,
        on_demand={name: Decimal(value) for name, value in hourly.items()},
        source="test price list",
    )


def without(book: PriceBook, *types: str) -> PriceBook:
    return replace(book, on_demand={k: v for k, v in book.on_demand.items() if k not in types})


def spec(name: str) -> InstanceTypeSpec:
    return TYPES[name]


def monthly(name: str) -> Decimal:
    """What the fixture type costs per month: hourly x 730, in cents."""
    return (Decimal(HOURLY[name]) * 730).quantize(Decimal("0.01"))
