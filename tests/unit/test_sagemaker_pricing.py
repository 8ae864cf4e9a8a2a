"""The SageMaker Price List adapter, against botocore's Stubber (moto has no Pricing backend) with responses in the
real GetProducts shape: tests/fixtures/pricing/SYNTHETIC_getproducts_sagemaker_hosting_g6_xlarge_us-east-2.json is
SYNTHETIC, built around a real us-east-2 hosting row (its `_source` says which parts are real)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError
from botocore.stub import Stubber

from rightsizer.adapters.aws.pricing import PRICING_API_REGIONS
from rightsizer.adapters.aws.sagemaker_pricing import (
    SERVICE_CODE,
    SageMakerPriceListApi,
    parse_sagemaker_price_list_item,
)
from rightsizer.adapters.bundled import sagemaker_snapshot_prices
from rightsizer.domain.sagemaker.prices import SageMakerComponent
from rightsizer.services.ports import SourceUnavailable

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "pricing"
    / "SYNTHETIC_getproducts_sagemaker_hosting_g6_xlarge_us-east-2.json"
)
ENDPOINT = "https://api.pricing.us-east-1.amazonaws.com/"


def _response() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if not key.startswith("_")}


def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(_response()["PriceList"][0])
    return document


def _item(
    instance_type: str = "ml.g6.xlarge",
    price: str = "1.1267000000",
    *,
    component: str = "Hosting",
    usagetype: str | None = None,
    unit: str = "Hrs",
    product_family: str = "ML Instance",
    **attributes: str,
) -> str:
    """One PriceList JSON string built from the synthetic us-east-2 hosting row."""
    document = _document()
    document["product"]["productFamily"] = product_family
    product_attributes = document["product"]["attributes"]
    marker = {"Hosting": "Host", "Training": "Train", "Notebook": "Notebk"}.get(component, component)
    product_attributes.update(
        instanceName=instance_type,
        instanceType=instance_type,
        component=component,
        platoinstancetype=component,
        usagetype=usagetype or f"USE2-{marker}:{instance_type}",
    )
    product_attributes.update(attributes)
    (term,) = document["terms"]["OnDemand"].values()
    (dimension,) = term["priceDimensions"].values()
    dimension["unit"] = unit
    dimension["pricePerUnit"] = {"USD": price}
    return json.dumps(document)


def _page(*items: str, next_token: str | None = None) -> dict[str, Any]:
    page: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": list(items)}
    if next_token is not None:
        page["NextToken"] = next_token
    return page


def _request(region: str, component: str, names: str, next_token: str | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "ServiceCode": "AmazonSageMaker",
        "Filters": [
            {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
            {"Type": "TERM_MATCH", "Field": "component", "Value": component},
            {"Type": "ANY_OF", "Field": "instanceName", "Value": names},
        ],
        "FormatVersion": "aws_v1",
        "MaxResults": 100,
    }
    if next_token is not None:
        request["NextToken"] = next_token
    return request


@pytest.fixture
def client() -> Any:
    return boto3.client("pricing", region_name=PRICING_API_REGIONS[0])


@pytest.fixture
def stubber(client: Any) -> Iterator[Stubber]:
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


# --- parse_sagemaker_price_list_item -----------------------------------------------------------------------


def test_parses_the_synthetic_us_east_2_hosting_row() -> None:
    (item,) = _response()["PriceList"]
    assert parse_sagemaker_price_list_item(item) == ("ml.g6.xlarge", Decimal("1.1267000000"))


def test_the_fixture_price_is_the_bundled_figure_of_the_same_source() -> None:
    (item,) = _response()["PriceList"]
    parsed = parse_sagemaker_price_list_item(item)
    book = sagemaker_snapshot_prices("us-east-2")
    assert parsed is not None and book is not None
    assert book.hourly_of("ml.g6.xlarge") == parsed[1]


def test_a_hosting_row_is_not_a_training_or_notebook_price() -> None:
    (item,) = _response()["PriceList"]
    assert parse_sagemaker_price_list_item(item, "training") is None
    assert parse_sagemaker_price_list_item(item, "notebook") is None


@pytest.mark.parametrize(
    ("component", "value"), [("hosting", "Hosting"), ("training", "Training"), ("notebook", "Notebook")]
)
def test_each_component_reads_its_own_rows(component: SageMakerComponent, value: str) -> None:
    item = _item("ml.g5.xlarge", "1.4080000000", component=value)
    assert parse_sagemaker_price_list_item(item, component) == ("ml.g5.xlarge", Decimal("1.4080000000"))


@pytest.mark.parametrize(
    "item",
    [
        _item(component="BatchTransform"),
        _item(component="AsyncInf"),
        _item(product_family="ML Serverless"),
        _item(locationType="AWS Outposts"),
        _item(instanceName="g6.xlarge"),
        _item(unit="GB-Mo"),
        _item(price="0.0000000000"),
        _item(price="-1"),
        _item(price="not a number"),
    ],
    ids=[
        "batch-transform",
        "async-inference",
        "not-an-instance-row",
        "outposts",
        "no-ml-prefix",
        "storage-unit",
        "zero",
        "negative",
        "garbage-price",
    ],
)
def test_rows_that_are_not_an_on_demand_hosting_hour_are_not_prices(item: str) -> None:
    assert parse_sagemaker_price_list_item(item) is None


def test_the_type_is_read_from_instance_name_not_instance_type() -> None:
    item = _item("ml.p3.2xlarge", "3.8250000000", instanceType="ml.p3.2xlarge-Hosting")
    assert parse_sagemaker_price_list_item(item) == ("ml.p3.2xlarge", Decimal("3.8250000000"))


def test_a_row_without_instance_name_or_component_is_rejected() -> None:
    for attribute in ("instanceName", "component"):
        document = _document()
        del document["product"]["attributes"][attribute]
        assert parse_sagemaker_price_list_item(json.dumps(document)) is None


def test_reserved_terms_alone_are_no_price() -> None:
    document = _document()
    document["terms"] = {"Reserved": copy.deepcopy(document["terms"]["OnDemand"])}
    assert parse_sagemaker_price_list_item(json.dumps(document)) is None


@pytest.mark.parametrize(
    "item", ["", "null", "[]", "{}", '{"product": []}', '{"product": {"attributes": {}}, "terms": 1}', "[" * 5000]
)
def test_garbage_items_are_not_prices(item: str) -> None:
    assert parse_sagemaker_price_list_item(item) is None


# --- SageMakerPriceListApi ---------------------------------------------------------------------------------


def test_sends_every_filter_and_returns_the_price(client: Any, stubber: Stubber) -> None:
    stubber.add_response("get_products", _response(), _request("us-east-2", "Hosting", "ml.g6.xlarge"))
    api = SageMakerPriceListApi(client)

    assert api.hourly("us-east-2", ["ml.g6.xlarge"]) == {"ml.g6.xlarge": Decimal("1.1267000000")}
    assert api.calls == 1
    assert SERVICE_CODE == "AmazonSageMaker"


@pytest.mark.parametrize(
    ("component", "value"), [("hosting", "Hosting"), ("training", "Training"), ("notebook", "Notebook")]
)
def test_asks_for_the_component_it_prices(
    client: Any, stubber: Stubber, component: SageMakerComponent, value: str
) -> None:
    page = _page(_item("ml.g5.2xlarge", "1.5150000000", component=value, regionCode="us-west-2"))
    stubber.add_response("get_products", page, _request("us-west-2", value, "ml.g5.2xlarge"))

    prices = SageMakerPriceListApi(client).hourly("us-west-2", ["ml.g5.2xlarge"], component)

    assert prices == {"ml.g5.2xlarge": Decimal("1.5150000000")}


def test_rows_of_other_components_regions_or_types_are_ignored(client: Any, stubber: Stubber) -> None:
    page = _page(
        _item("ml.g6.xlarge", "9.9", component="Training"),
        _item("ml.g6.xlarge", "8.8", regionCode="us-west-2"),
        _item("ml.g6.2xlarge", "7.7"),
        _item("ml.g6.xlarge", "1.1267000000"),
    )
    stubber.add_response("get_products", page, _request("us-east-2", "Hosting", "ml.g6.xlarge"))

    assert SageMakerPriceListApi(client).hourly("us-east-2", ["ml.g6.xlarge"]) == {
        "ml.g6.xlarge": Decimal("1.1267000000")
    }


@pytest.mark.parametrize("reverse", [False, True], ids=["instance-hour-row-first", "instance-hour-row-last"])
def test_several_rows_for_one_type_prefer_the_component_hour_row_then_the_highest_price(
    client: Any, stubber: Stubber, reverse: bool
) -> None:
    rows = [
        _item("ml.g6.xlarge", "1.1267000000"),
        _item("ml.g6.xlarge", "1.5000000000", usagetype="USE2-Host:ml.g6.xlarge-Something"),
        _item("ml.g6.xlarge", "0.9000000000"),
    ]
    page = _page(*(reversed(rows) if reverse else rows))
    stubber.add_response("get_products", page, _request("us-east-2", "Hosting", "ml.g6.xlarge"))

    assert SageMakerPriceListApi(client).hourly("us-east-2", ["ml.g6.xlarge"]) == {
        "ml.g6.xlarge": Decimal("1.1267000000")
    }


def test_follows_next_token_across_pages(client: Any, stubber: Stubber) -> None:
    names = "ml.g6.2xlarge,ml.g6.xlarge"
    stubber.add_response(
        "get_products",
        _page(_item("ml.g6.xlarge", "1.1267000000"), next_token="page-2"),
        _request("us-east-2", "Hosting", names),
    )
    stubber.add_response(
        "get_products",
        _page(_item("ml.g6.2xlarge", "1.2220000000")),
        _request("us-east-2", "Hosting", names, next_token="page-2"),
    )
    api = SageMakerPriceListApi(client)

    assert api.hourly("us-east-2", ["ml.g6.xlarge", "ml.g6.2xlarge"]) == {
        "ml.g6.xlarge": Decimal("1.1267000000"),
        "ml.g6.2xlarge": Decimal("1.2220000000"),
    }
    assert api.calls == 2


def test_only_ml_types_are_asked_for_and_none_means_no_call(client: Any, stubber: Stubber) -> None:
    api = SageMakerPriceListApi(client)
    assert api.hourly("us-east-2", []) == {}
    assert api.hourly("us-east-2", ["g6.xlarge", ""]) == {}
    assert api.calls == 0


def test_long_type_lists_are_split_to_fit_one_filter_value(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"ml.g6.{n}xlarge" for n in range(200)]
    requests: list[dict[str, Any]] = []

    def get_products(**request: Any) -> dict[str, Any]:
        requests.append(request)
        return _page()

    monkeypatch.setattr(client, "get_products", get_products)
    SageMakerPriceListApi(client).hourly("us-east-2", names)

    assert len(requests) > 1
    asked = [name for request in requests for name in request["Filters"][-1]["Value"].split(",")]
    assert sorted(asked) == sorted(names)
    assert all(len(request["Filters"][-1]["Value"]) <= 1024 for request in requests)


@pytest.mark.parametrize(
    ("code", "message"),
    [("AccessDeniedException", "not authorized to perform pricing:GetProducts"), ("ThrottlingException", "slow down")],
)
def test_client_errors_become_source_unavailable(client: Any, stubber: Stubber, code: str, message: str) -> None:
    stubber.add_client_error("get_products", service_error_code=code, service_message=message, http_status_code=400)

    with pytest.raises(SourceUnavailable) as raised:
        SageMakerPriceListApi(client).hourly("us-east-2", ["ml.g6.xlarge"])

    text = str(raised.value)
    assert "AmazonSageMaker" in text and code in text and message in text and "us-east-2" in text


def test_network_errors_become_source_unavailable() -> None:
    client = boto3.client("pricing", region_name="us-east-1", config=Config(retries={"total_max_attempts": 1}))
    error = EndpointConnectionError(endpoint_url=ENDPOINT)

    def fail(**_: Any) -> None:
        raise error

    client.meta.events.register("before-send.pricing.GetProducts", fail)

    with pytest.raises(SourceUnavailable, match=r"^Price List API could not be reached") as raised:
        SageMakerPriceListApi(client).hourly("us-east-2", ["ml.g6.xlarge"])
    assert raised.value.__cause__ is error


@pytest.mark.parametrize(
    "response",
    [
        {"PriceList": "not a list"},
        {"PriceList": [{"product": {}}]},
        {"PriceList": [], "NextToken": 7},
    ],
    ids=["price-list-not-a-list", "items-not-strings", "token-not-a-string"],
)
def test_unexpected_response_shapes_become_source_unavailable(
    client: Any, monkeypatch: pytest.MonkeyPatch, response: dict[str, Any]
) -> None:
    monkeypatch.setattr(client, "get_products", lambda **_: response)
    with pytest.raises(SourceUnavailable):
        SageMakerPriceListApi(client).hourly("us-east-2", ["ml.g6.xlarge"])


def test_a_repeating_next_token_stops_with_source_unavailable(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "get_products", lambda **_: _page(next_token="again"))
    with pytest.raises(SourceUnavailable, match="repeating"):
        SageMakerPriceListApi(client).hourly("us-east-2", ["ml.g6.xlarge"])
