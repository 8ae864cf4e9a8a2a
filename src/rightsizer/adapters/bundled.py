"""Data shipped inside the package: accelerator figures, legacy instance types, a price snapshot, SageMaker prices.

Each JSON file names its sources in `_meta`.
"""

from __future__ import annotations

import json
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

from rightsizer.domain.catalog import AcceleratorTable
from rightsizer.domain.models.hosts import AcceleratorKind, AcceleratorSpec, InstanceTypeSpec
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.sagemaker.prices import SageMakerComponent, SageMakerPrices


def _load(name: str) -> dict[str, Any]:
    text = resources.files("rightsizer.domain").joinpath("data", name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def accelerator_table() -> AcceleratorTable:
    by_model: dict[str, AcceleratorSpec] = {}
    ec2_names: dict[tuple[str, int | None], str] = {}
    for model, raw in _load("accelerators.json").items():
        if model.startswith("_"):
            continue
        by_model[model] = AcceleratorSpec(
            model=model,
            vendor=raw["vendor"],
            memory_gib=float(raw["memory_gib"]),
            memory_bandwidth_gbps=float(raw["memory_bandwidth_gbps"]),
            fp32_tflops=raw.get("fp32_tflops"),
            tensor_tflops=raw.get("tensor_tflops"),
            compute_capability=raw.get("compute_capability"),
            neuroncores_per_device=int(raw.get("neuroncores_per_device", 0)),
            video_encoders=int(raw.get("video_encoders", 0)),
            video_decoders=int(raw.get("video_decoders", 0)),
            graphics=bool(raw.get("graphics", False)),
            ray_tracing=bool(raw.get("ray_tracing", False)),
            estimated=tuple(raw.get("estimated", ())),
        )
        ec2_names[(raw["ec2_name"], raw.get("ec2_memory_mib"))] = model
    return AcceleratorTable(by_model=by_model, ec2_names=ec2_names)


@cache
def legacy_specs() -> dict[str, InstanceTypeSpec]:
    """Previous-generation accelerated types that DescribeInstanceTypes no longer lists (p2, p3, g3, dl1)."""
    specs: dict[str, InstanceTypeSpec] = {}
    for instance_type, raw in _load("legacy_instance_types.json").items():
        if instance_type.startswith("_"):
            continue
        specs[instance_type] = InstanceTypeSpec(
            instance_type=instance_type,
            vcpus=raw["vcpus"],
            memory_mib=raw["memory_mib"],
            accelerator_kind=AcceleratorKind(raw.get("accelerator_kind", "nvidia")),
            accelerator_model=raw["accelerator_model"],
            accelerator_count=raw["accelerator_count"],
            accelerator_memory_mib=raw["accelerator_memory_mib"],
            network_gbps=float(raw["network_gbps"]),
            architectures=tuple(raw["architectures"]),
            virtualization_types=tuple(raw["virtualization_types"]),
            ena_support=raw["ena_support"],
            nvme_support=raw["nvme_support"],
            efa_supported=raw["efa_supported"],
            instance_storage_gb=int(raw.get("instance_storage_gb", 0)),
            listed_by_api=False,
        )
    return specs


@cache
def _snapshot() -> dict[str, Any]:
    return _load("prices_snapshot.json")


def snapshot_prices(region: str) -> PriceBook | None:
    """The bundled on-demand prices for `region` (Linux, and the other platforms the snapshot has), or None when
    the snapshot does not cover it."""
    data = _snapshot()
    platforms = data["regions"].get(region)
    if platforms is None or "linux" not in platforms:
        return None
    dates = {platform: meta["as_of"] for platform, meta in data["_meta"]["regions"][region].items()}
    return PriceBook(
        region=region,
        on_demand=_decimals(platforms["linux"]),
        source=f"bundled price snapshot (as of {dates['linux']})",
        variants={platform: _decimals(prices) for platform, prices in platforms.items() if platform != "linux"},
        variant_sources={
            platform: f"bundled price snapshot (as of {dates[platform]})"
            for platform in platforms
            if platform != "linux"
        },
    )


def snapshot_regions() -> tuple[str, ...]:
    """The regions the bundled snapshot prices."""
    return tuple(sorted(_snapshot()["regions"]))


def _decimals(prices: dict[str, str]) -> dict[str, Decimal]:
    return {instance_type: Decimal(price) for instance_type, price in prices.items()}


@cache
def _sagemaker_snapshot() -> dict[str, Any]:
    return _load("sagemaker_prices.json")


def sagemaker_snapshot_prices(region: str, component: SageMakerComponent = "hosting") -> SageMakerPrices | None:
    """The bundled SageMaker prices of `ml.*` types for `component` in `region` (real-time endpoints unless told),
    each with its own source and date, or None when the snapshot has none for that region and component."""
    data = _sagemaker_snapshot()
    prices = data["regions"].get(region, {}).get(component)
    if not prices:
        return None
    meta = data["_meta"]
    sources: dict[str, str] = {}
    for source_id, instance_types in meta["regions"][region][component]["sources"].items():
        source = meta["sources"][source_id]
        for instance_type in instance_types:
            sources[instance_type] = f"bundled SageMaker price snapshot: {source['name']}"
    return SageMakerPrices(
        region=region,
        component=component,
        hourly=_decimals(prices),
        source="bundled SageMaker price snapshot",
        sources=sources,
    )


def sagemaker_snapshot_regions(component: SageMakerComponent = "hosting") -> tuple[str, ...]:
    """The regions for which the bundled SageMaker snapshot has `component` prices."""
    return tuple(
        sorted(region for region, components in _sagemaker_snapshot()["regions"].items() if component in components)
    )
