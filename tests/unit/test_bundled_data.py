"""The data shipped in the package: accelerator figures, previous-generation types, the price snapshot.

Checked against the DescribeInstanceTypes shapes moto ships (real API data), so a current family whose
accelerator the table cannot name, or whose figures are missing, fails here rather than quietly making
every host of that family "not comparable".
"""

from __future__ import annotations

import json
from importlib import resources

import pytest

from rightsizer.adapters.bundled import accelerator_table, legacy_specs, snapshot_prices
from rightsizer.domain.models.hosts import AcceleratorKind
from tests.factories import api_specs

CURRENT_FAMILIES = ("p5", "p5e", "p5en", "p6-b200", "g6", "g6e", "g6f", "gr6", "inf2", "trn1", "trn2")
# Capacity Blocks / UltraServers only: no on-demand price exists to bundle.
NOT_SOLD_ON_DEMAND = {"p5e", "trn2"}


def _types_of(family: str) -> list[str]:
    found = sorted(name for name in api_specs() if name.split(".")[0] == family)
    assert found, f"moto's instance table has no {family}"
    return found


@pytest.mark.parametrize("family", CURRENT_FAMILIES)
def test_every_current_family_maps_to_an_accelerator_with_figures(family: str) -> None:
    table = accelerator_table()
    for name in _types_of(family):
        spec = api_specs()[name]
        accelerator = table.get(spec.accelerator_model)
        assert accelerator is not None, f"{name}: accelerator {spec.accelerator_model!r} is not in the table"
        assert accelerator.tensor_tflops, f"{name}: no dense tensor figure"
        assert accelerator.memory_bandwidth_gbps > 0


@pytest.mark.parametrize("family", [f for f in CURRENT_FAMILIES if f not in NOT_SOLD_ON_DEMAND])
def test_every_current_family_sold_on_demand_has_a_us_east_1_price(family: str) -> None:
    book = snapshot_prices("us-east-1")
    assert book is not None
    priced = [name for name in _types_of(family) if book.hourly(name) is not None]
    assert priced, f"no bundled us-east-1 price for any {family} type"


def test_the_snapshot_says_which_families_have_no_on_demand_price() -> None:
    text = resources.files("rightsizer.domain").joinpath("data", "prices_snapshot.json").read_text()
    note = json.loads(text)["_meta"]["not_sold_on_demand"]
    for family in NOT_SOLD_ON_DEMAND:
        assert f"{family}." in note


def test_dl1_is_a_bundled_unmonitored_type() -> None:
    dl1 = legacy_specs()["dl1.24xlarge"]
    assert dl1.accelerator_kind is AcceleratorKind.UNMONITORED
    assert dl1.accelerator_model == "Gaudi-HL-205"
    assert dl1.accelerator_count == 8
    book = snapshot_prices("us-east-1")
    assert book is not None and book.hourly("dl1.24xlarge") is not None


def test_every_accelerator_names_its_sources() -> None:
    text = resources.files("rightsizer.domain").joinpath("data", "accelerators.json").read_text()
    for model, raw in json.loads(text).items():
        if model.startswith("_"):
            continue
        assert raw.get("verification"), f"{model} has no verification note"


@pytest.mark.parametrize(
    ("model", "tensor", "bandwidth"),
    [("A100-SXM4-40GB", 312, 1555), ("L4", 121, 300), ("L40S", 362.05, 864), ("H100-SXM5-80GB", 989.4, 3350)],
)
def test_tensor_figures_are_dense_not_sparse(model: str, tensor: float, bandwidth: float) -> None:
    accelerator = accelerator_table().get(model)
    assert accelerator is not None
    assert accelerator.tensor_tflops == tensor
    assert accelerator.memory_bandwidth_gbps == bandwidth
