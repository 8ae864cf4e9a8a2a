"""The bundled accelerator table (src/rightsizer/domain/data/accelerators.json) is complete and sourced.

Every accelerator gives every figure the analyzer compares (a missing one silently makes hosts "not
comparable"), says which of them are estimates and where the rest were read, and covers every accelerator
an instance type in the catalog maps to. The hand-written fixture catalog carries the same video engines.
"""

from __future__ import annotations

import json
from importlib import resources
from numbers import Real
from typing import Any

import pytest

from rightsizer.adapters.bundled import accelerator_table
from rightsizer.domain.models.hosts import AcceleratorKind
from tests.factories import catalog
from tests.unit import catalog_fixture as fx

FIGURES = ("memory_gib", "memory_bandwidth_gbps", "fp32_tflops", "tensor_tflops", "video_encoders", "video_decoders")
NVIDIA_FIGURES = ("compute_capability",)
NEURON_FIGURES = ("neuroncores_per_device",)
FIGURE_KEYS = frozenset(FIGURES + NVIDIA_FIGURES + NEURON_FIGURES)
# GPUs DescribeInstanceTypes names that the table does not cover yet (g7, g7e, p6-b300): their hosts are
# reported as "not comparable". A new name here is a gap to fill in accelerators.json, not to list.
KNOWN_UNNAMED_GPUS = frozenset({"RTX PRO 4500", "RTX PRO Server 6000", "B300"})


def _raw_table() -> dict[str, dict[str, Any]]:
    text = resources.files("rightsizer.domain").joinpath("data", "accelerators.json").read_text(encoding="utf-8")
    entries: dict[str, dict[str, Any]] = json.loads(text)
    return {model: raw for model, raw in entries.items() if not model.startswith("_")}


def _legacy_models() -> set[str]:
    text = (
        resources.files("rightsizer.domain").joinpath("data", "legacy_instance_types.json").read_text(encoding="utf-8")
    )
    legacy: dict[str, dict[str, Any]] = json.loads(text)
    return {raw["accelerator_model"] for name, raw in legacy.items() if not name.startswith("_")}


RAW = _raw_table()
MODELS = sorted(RAW)


def _is_number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _expected_figures(raw: dict[str, Any]) -> tuple[str, ...]:
    if raw["vendor"] == "NVIDIA":
        return FIGURES + NVIDIA_FIGURES
    if raw["vendor"] == "AWS":
        return FIGURES + NEURON_FIGURES
    return FIGURES


@pytest.mark.parametrize("model", MODELS)
def test_every_figure_is_present_and_numeric(model: str) -> None:
    raw = RAW[model]
    for key in _expected_figures(raw):
        assert key in raw, f"{model}: no {key}"
    for key in FIGURES:
        assert _is_number(raw[key]), f"{model}: {key} is {raw[key]!r}, not a number"
        assert raw[key] >= 0, f"{model}: {key} is negative"
    for key in ("memory_gib", "memory_bandwidth_gbps", "fp32_tflops"):
        assert raw[key] > 0, f"{model}: {key} is 0"


@pytest.mark.parametrize("model", MODELS)
def test_tensor_is_zero_only_for_hardware_without_tensor_cores(model: str) -> None:
    raw = RAW[model]
    if raw["tensor_tflops"] == 0:
        assert "no tensor cores" in raw["verification"].lower(), f"{model}: tensor 0 without saying why"
    else:
        assert raw["tensor_tflops"] > 0


@pytest.mark.parametrize("model", [m for m in MODELS if RAW[m]["vendor"] == "NVIDIA"])
def test_nvidia_accelerators_have_a_compute_capability_and_video_engines(model: str) -> None:
    raw = RAW[model]
    major, minor = raw["compute_capability"].split(".")
    assert major.isdigit() and minor.isdigit(), f"{model}: compute capability {raw['compute_capability']!r}"
    assert isinstance(raw["video_encoders"], int) and isinstance(raw["video_decoders"], int)
    # Every NVIDIA data-centre GPU decodes video; some (A100, H100, B200) have no encoder.
    assert raw["video_decoders"] >= 1, f"{model}: no NVDEC"


@pytest.mark.parametrize("model", [m for m in MODELS if RAW[m]["vendor"] == "AWS"])
def test_neuron_devices_have_neuroncores_and_no_video_engines(model: str) -> None:
    raw = RAW[model]
    assert isinstance(raw["neuroncores_per_device"], int) and raw["neuroncores_per_device"] > 0
    assert (raw["video_encoders"], raw["video_decoders"]) == (0, 0)


@pytest.mark.parametrize("model", MODELS)
def test_estimated_names_real_figures_once(model: str) -> None:
    estimated = RAW[model]["estimated"]
    assert isinstance(estimated, list)
    assert set(estimated) <= FIGURE_KEYS, f"{model}: unknown estimated keys {set(estimated) - FIGURE_KEYS}"
    assert set(estimated) <= set(RAW[model]), f"{model}: estimates a figure it does not give"
    assert len(estimated) == len(set(estimated))


@pytest.mark.parametrize("model", MODELS)
def test_every_entry_names_its_sources(model: str) -> None:
    raw = RAW[model]
    assert raw["verification"].strip()
    assert isinstance(raw["sources"], list) and raw["sources"], f"{model}: no source"
    assert all(isinstance(source, str) and source.strip() for source in raw["sources"])


def test_the_loaded_table_carries_video_engines_and_estimates() -> None:
    table = accelerator_table()
    assert sorted(table.by_model) == MODELS
    for model, raw in RAW.items():
        spec = table.get(model)
        assert spec is not None
        assert (spec.video_encoders, spec.video_decoders) == (raw["video_encoders"], raw["video_decoders"])
        assert spec.estimated == tuple(raw["estimated"])
        assert spec.tensor_tflops == raw["tensor_tflops"]
        assert spec.fp32_tflops == raw["fp32_tflops"]
    a100 = table.get("A100-SXM4-40GB")
    assert a100 is not None and (a100.video_encoders, a100.video_decoders) == (0, 5)
    a10g = table.get("A10G")
    assert a10g is not None and a10g.tensor_tflops and "tensor_tflops" in a10g.estimated


def test_every_accelerator_an_instance_type_maps_to_is_in_the_table() -> None:
    table = accelerator_table()
    mapped = {spec.accelerator_model for spec in catalog().specs.values() if spec.accelerator_model}
    missing = sorted((mapped | _legacy_models()) - set(table.by_model))
    assert not missing, f"instance types map to accelerators the table lacks: {missing}"


def test_gpus_the_table_cannot_name_are_only_the_known_gaps() -> None:
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    unnamed: set[str] = set()
    for name, spec in catalog().specs.items():
        if spec.accelerator_kind is AcceleratorKind.NVIDIA and not spec.accelerator_model and spec.listed_by_api:
            gpus: list[dict[str, Any]] = INSTANCE_TYPES[name].get("GpuInfo", {}).get("Gpus", [])
            unnamed.update(gpu["Name"] for gpu in gpus)
    assert unnamed <= KNOWN_UNNAMED_GPUS, f"GPUs without a table entry: {sorted(unnamed - KNOWN_UNNAMED_GPUS)}"


def test_the_fixture_catalog_has_the_bundled_video_engines() -> None:
    table = accelerator_table()
    for model, fixture in fx.ACCELERATORS.items():
        bundled = table.get(model)
        assert bundled is not None, f"fixture accelerator {model} is not in the bundled table"
        assert (fixture.video_encoders, fixture.video_decoders) == (bundled.video_encoders, bundled.video_decoders)
