"""The bundled SageMaker price snapshot (domain/data/sagemaker_prices.json): its structure, its sources, and a few
figures checked against what the sources say."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from importlib import resources
from typing import Any

import pytest

from rightsizer.adapters.bundled import sagemaker_snapshot_prices, sagemaker_snapshot_regions, snapshot_regions
from rightsizer.domain.sagemaker.prices import SAGEMAKER_COMPONENTS, SageMakerComponent

ACCELERATED_FAMILIES = {
    "g4dn", "g5", "g6", "g6e", "p3", "p4d", "p4de", "p5", "p5e", "p5en", "inf1", "inf2", "trn1", "trn1n",
}  # fmt: skip
DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")
DATE = re.compile(r"[0-9]{4}-[0-9]{2}(-[0-9]{2})?")


def _data() -> dict[str, Any]:
    text = resources.files("rightsizer.domain").joinpath("data", "sagemaker_prices.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _prices() -> list[tuple[str, str, str, str]]:
    return [
        (region, component, instance_type, price)
        for region, components in _data()["regions"].items()
        for component, prices in components.items()
        for instance_type, price in prices.items()
    ]


def test_every_region_is_a_region_of_the_ec2_snapshot_and_every_component_known() -> None:
    data = _data()
    assert set(data["regions"]) <= set(snapshot_regions())
    for components in data["regions"].values():
        assert components
        assert set(components) <= set(SAGEMAKER_COMPONENTS)


def test_every_price_is_a_positive_decimal_string_of_an_accelerated_ml_type() -> None:
    assert _prices()
    for region, component, instance_type, price in _prices():
        where = f"{region} {component} {instance_type}"
        assert instance_type.startswith("ml."), where
        assert instance_type.split(".")[1] in ACCELERATED_FAMILIES, where
        assert isinstance(price, str) and DECIMAL.fullmatch(price), where
        assert Decimal(price) > 0, where


def test_every_price_names_exactly_one_source_and_every_source_is_described_and_used() -> None:
    meta = _data()["_meta"]
    named: dict[tuple[str, str, str], str] = {}
    for region, components in meta["regions"].items():
        for component, entry in components.items():
            assert entry["as_of"], (region, component)
            for source_id, instance_types in entry["sources"].items():
                for instance_type in instance_types:
                    assert (region, component, instance_type) not in named
                    named[(region, component, instance_type)] = source_id
    assert set(named) == {(region, component, instance_type) for region, component, instance_type, _ in _prices()}

    assert set(named.values()) == set(meta["sources"])
    for source_id, source in meta["sources"].items():
        for key in ("name", "what", "url", "via", "as_of"):
            assert source.get(key), f"{source_id} has no {key}"
        assert source["as_of"] == "undated" or DATE.fullmatch(source["as_of"]), source_id
        assert source["url"].startswith("https://"), source_id


def test_each_region_and_component_dates_are_its_sources_dates() -> None:
    meta = _data()["_meta"]
    for components in meta["regions"].values():
        for entry in components.values():
            dates = sorted({meta["sources"][source_id]["as_of"] for source_id in entry["sources"]})
            assert entry["as_of"] == ", ".join(dates)


def test_the_regions_without_prices_are_said_and_nothing_is_derived() -> None:
    data = _data()
    meta = data["_meta"]
    assert meta["regions_without_prices"]["regions"] == sorted(set(snapshot_regions()) - set(data["regions"]))
    assert meta["regions_without_prices"]["why"]
    assert meta["derived"].startswith("None.")
    assert "notebook" in meta["components"] and "No source" in meta["components"]["notebook"]
    assert meta["left_out"]


# What the sources say (each row read in the source named in _meta.sources).
@pytest.mark.parametrize(
    ("region", "component", "instance_type", "price"),
    [
        # xbill9/sagemaker-gemma docs/articles/evidence/pricing-us-east-2.txt, get-products of 2026-09-25
        ("us-east-2", "hosting", "ml.g6.xlarge", "1.1267"),
        ("us-east-2", "hosting", "ml.g6.4xlarge", "1.654"),
        # us-east-1 offer file published 2026-09-20: USE1-Host:ml.g6e.2xlarge $2.8026/h
        ("us-east-1", "hosting", "ml.g6e.2xlarge", "2.8026"),
        # aws-samples/foundation-model-benchmarking-tool pricing_fallback.yml (2025-01-26)
        ("us-east-1", "hosting", "ml.g4dn.xlarge", "0.7364"),
        ("us-east-1", "hosting", "ml.inf2.xlarge", "0.99"),
        # aws-samples/sagemaker-ssh-helper Sample_Costs.md: "$7.91 per Hosting ml.g5.12xlarge hour in Europe (Ireland)"
        ("eu-west-1", "hosting", "ml.g5.12xlarge", "7.91"),
        ("eu-west-1", "training", "ml.p3.2xlarge", "4.131"),
        # eu-west-3 price list of 2026-10-04: Host:ml.g4dn.xlarge 0,8610 $/h
        ("eu-west-3", "hosting", "ml.g4dn.xlarge", "0.8610"),
        # us-east-1 training list published 2026-09-04
        ("us-east-1", "training", "ml.p5.48xlarge", "63.296"),
        ("us-east-1", "training", "ml.g6e.2xlarge", "2.8"),
        # OKUniversity/agentcore-public-stack fine_tuning/pricing.py, us-west-2 Training
        ("us-west-2", "training", "ml.g6e.24xlarge", "18.83"),
    ],
)
def test_figures_equal_what_the_sources_say(
    region: str, component: SageMakerComponent, instance_type: str, price: str
) -> None:
    book = sagemaker_snapshot_prices(region, component)
    assert book is not None
    assert book.hourly_of(instance_type) == Decimal(price)


def test_a_component_is_never_priced_from_another() -> None:
    hosting = sagemaker_snapshot_prices("us-east-1", "hosting")
    training = sagemaker_snapshot_prices("us-east-1", "training")
    assert hosting is not None and training is not None
    assert hosting.hourly_of("ml.g6e.2xlarge") == Decimal("2.8026")
    assert training.hourly_of("ml.g6e.2xlarge") == Decimal("2.800")
    # Superseded or unsourced hosting rows stay out rather than borrowing a training figure.
    for instance_type in ("ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.xlarge", "ml.g6e.12xlarge"):
        assert hosting.hourly_of(instance_type) is None, instance_type
        assert hosting.source_of(instance_type) is None


def test_the_loader_names_each_figure_s_source_with_its_date() -> None:
    book = sagemaker_snapshot_prices("us-east-2")
    assert book is not None
    assert book.region == "us-east-2" and book.component == "hosting"
    assert all(isinstance(price, Decimal) for price in book.hourly.values())
    assert "xbill9/sagemaker-gemma" in (book.source_of("ml.g6.xlarge") or "")
    assert "2026-09-25" in (book.source_of("ml.g6.xlarge") or "")
    assert "2026-10-03" in (book.source_of("ml.p5en.48xlarge") or "")


def test_no_prices_means_none_never_another_region_s() -> None:
    assert sagemaker_snapshot_prices("ap-south-1") is None
    assert sagemaker_snapshot_prices("us-west-2", "hosting") is None  # only training prices are sourced there
    assert sagemaker_snapshot_prices("us-east-1", "notebook") is None
    assert sagemaker_snapshot_prices("xx-nowhere-1") is None


def test_the_regions_per_component() -> None:
    assert sagemaker_snapshot_regions() == ("eu-west-1", "eu-west-3", "us-east-1", "us-east-2")
    assert sagemaker_snapshot_regions("training") == ("eu-west-1", "us-east-1", "us-west-2")
    assert sagemaker_snapshot_regions("notebook") == ()
