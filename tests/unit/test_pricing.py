"""The Price List API adapter, against botocore's Stubber with responses in the real GetProducts shape.

moto has no Pricing backend. The fixtures in tests/fixtures/pricing/ say where they come from (`_source`):
the t2.micro one is a real AWS response, the g4dn.xlarge one is synthetic in the real shape.
"""

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
from botocore.exceptions import (
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.stub import Stubber
from hypothesis import given, settings
from hypothesis import strategies as st

from rightsizer.adapters.aws.pricing import PRICING_API_REGIONS, PriceListApi, parse_price_list_item
from rightsizer.domain.platforms import billing
from rightsizer.services.ports import OnDemandPrices, SourceUnavailable

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pricing"
T2_MICRO = "getproducts_t2micro_eu-west-1_2021-01.json"
G4DN = "SYNTHETIC_getproducts_g4dn_xlarge_us-east-1.json"
ENDPOINT = "https://api.pricing.us-east-1.amazonaws.com/"


def _response(name: str) -> dict[str, Any]:
    """A fixture as GetProducts returns it (the `_source` note removed)."""
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if not key.startswith("_")}


def _g4dn_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(_response(G4DN)["PriceList"][0])
    return document


def _item(
    instance_type: str = "g4dn.xlarge",
    price: str = "0.5260000000",
    unit: str = "Hrs",
    usagetype: str | None = None,
    **attributes: str,
) -> str:
    """One PriceList JSON string built from the synthetic g4dn.xlarge item."""
    document = _g4dn_document()
    product_attributes = document["product"]["attributes"]
    product_attributes["instanceType"] = instance_type
    product_attributes["usagetype"] = usagetype or f"BoxUsage:{instance_type}"
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


def _request(region: str, types: str, next_token: str | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "ServiceCode": "AmazonEC2",
        "Filters": [
            {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
            {"Type": "TERM_MATCH", "Field": "operatingSystem", "Value": "Linux"},
            {"Type": "TERM_MATCH", "Field": "tenancy", "Value": "Shared"},
            {"Type": "TERM_MATCH", "Field": "preInstalledSw", "Value": "NA"},
            {"Type": "TERM_MATCH", "Field": "capacitystatus", "Value": "Used"},
            {"Type": "TERM_MATCH", "Field": "marketoption", "Value": "OnDemand"},
            {"Type": "TERM_MATCH", "Field": "licenseModel", "Value": "No License required"},
            {"Type": "ANY_OF", "Field": "instanceType", "Value": types},
        ],
        "FormatVersion": "aws_v1",
        "MaxResults": 100,
    }
    if next_token is not None:
        request["NextToken"] = next_token
    return request


@pytest.fixture
def client() -> Any:
    return boto3.client("pricing", region_name="us-east-1")


@pytest.fixture
def stubber(client: Any) -> Iterator[Stubber]:
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


# --- parse_price_list_item ---------------------------------------------------------------------------------


def test_parses_the_real_t2_micro_item_and_ignores_reserved_terms() -> None:
    (item,) = _response(T2_MICRO)["PriceList"]

    parsed = parse_price_list_item(item)

    # Reserved terms in the same item carry 0.0049, 0.0102, 0.0073, 0.0029 and 0.0000 per hour.
    assert parsed == ("t2.micro", Decimal("0.0126"))
    assert parsed is not None
    assert str(parsed[1]) == "0.0126000000"  # exactly as published, no float round trip


def test_parses_the_synthetic_g4dn_xlarge_item() -> None:
    (item,) = _response(G4DN)["PriceList"]

    assert parse_price_list_item(item) == ("g4dn.xlarge", Decimal("0.526"))


@pytest.mark.parametrize(
    ("override", "value"),
    [
        ("operatingSystem", "Windows"),
        ("operatingSystem", "RHEL"),
        ("tenancy", "Dedicated"),
        ("tenancy", "Host"),
        ("preInstalledSw", "SQL Std"),
        ("capacitystatus", "UnusedCapacityReservation"),
        ("capacitystatus", "AllocatedCapacityReservation"),
        ("licenseModel", "Bring your own license"),
        ("marketoption", "CapacityBlock"),
    ],
)
def test_rows_whose_attributes_do_not_match_the_filters_are_rejected(override: str, value: str) -> None:
    assert parse_price_list_item(_item(**{override: value})) is None


def test_a_row_missing_a_required_attribute_is_rejected() -> None:
    document = _g4dn_document()
    del document["product"]["attributes"]["tenancy"]

    assert parse_price_list_item(json.dumps(document)) is None


@pytest.mark.parametrize(
    "price",
    ["0.0000000000", "0", "-0.5", "NaN", "sNaN", "Infinity", "", "abc", "1e999999999999999999999999"],
)
def test_zero_negative_and_malformed_prices_are_ignored(price: str) -> None:
    assert parse_price_list_item(_item(price=price)) is None


@pytest.mark.parametrize("unit", ["Quantity", "GB-Mo", "hrs", ""])
def test_non_hourly_units_are_ignored(unit: str) -> None:
    assert parse_price_list_item(_item(unit=unit)) is None


def test_a_numeric_usd_value_is_not_trusted() -> None:
    document = _g4dn_document()
    (term,) = document["terms"]["OnDemand"].values()
    (dimension,) = term["priceDimensions"].values()
    dimension["pricePerUnit"] = {"USD": 0.526}

    assert parse_price_list_item(json.dumps(document)) is None


def test_an_item_with_only_reserved_terms_has_no_price() -> None:
    document = json.loads(_response(T2_MICRO)["PriceList"][0])
    del document["terms"]["OnDemand"]

    assert parse_price_list_item(json.dumps(document)) is None


@pytest.mark.parametrize("item", ["", "null", "[]", "{}", '{"product": 1, "terms": {}}', "[" * 100_000, "\x00"])
def test_garbage_items_are_not_prices(item: str) -> None:
    assert parse_price_list_item(item) is None


# --- PriceListApi.hourly -----------------------------------------------------------------------------------


def test_implements_the_port(client: Any) -> None:
    api: OnDemandPrices = PriceListApi(client)

    assert api.source == "AWS Price List API"
    assert "us-east-1" in PRICING_API_REGIONS


def test_sends_every_filter_and_returns_the_price(client: Any, stubber: Stubber) -> None:
    stubber.add_response(
        "get_products",
        _response(G4DN),
        expected_params=_request("us-east-1", "g4dn.2xlarge,g4dn.xlarge"),
    )
    api = PriceListApi(client)

    prices = api.hourly("us-east-1", ["g4dn.xlarge", "g4dn.2xlarge", "g4dn.xlarge"])

    assert prices == {"g4dn.xlarge": Decimal("0.526")}
    assert api.calls == 1


def test_real_t2_micro_response_in_eu_west_1(client: Any, stubber: Stubber) -> None:
    # The 2021 item has no regionCode / marketoption attributes; it is still a usable price.
    stubber.add_response("get_products", _response(T2_MICRO), expected_params=_request("eu-west-1", "t2.micro"))

    assert PriceListApi(client).hourly("eu-west-1", ["t2.micro"]) == {"t2.micro": Decimal("0.0126")}


def test_follows_next_token_across_pages(client: Any, stubber: Stubber) -> None:
    types = "g4dn.2xlarge,g4dn.xlarge"
    stubber.add_response(
        "get_products",
        _page(_item("g4dn.xlarge", "0.5260000000"), next_token="page-2"),
        expected_params=_request("us-east-1", types),
    )
    stubber.add_response(
        "get_products",
        _page(_item("g4dn.2xlarge", "0.7520000000")),
        expected_params=_request("us-east-1", types, next_token="page-2"),
    )
    api = PriceListApi(client)

    prices = api.hourly("us-east-1", ["g4dn.xlarge", "g4dn.2xlarge"])

    assert prices == {"g4dn.xlarge": Decimal("0.526"), "g4dn.2xlarge": Decimal("0.752")}
    assert api.calls == 2


def test_zero_price_rows_are_ignored(client: Any, stubber: Stubber) -> None:
    stubber.add_response(
        "get_products",
        _page(
            _item("g4dn.xlarge", "0.0000000000"),
            _item("g4dn.2xlarge", "0.0000000000"),
            _item("g4dn.2xlarge", "0.7520000000"),
        ),
        expected_params=_request("us-east-1", "g4dn.2xlarge,g4dn.xlarge"),
    )

    prices = PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge", "g4dn.2xlarge"])

    assert prices == {"g4dn.2xlarge": Decimal("0.752")}


def test_non_hourly_rows_are_ignored(client: Any, stubber: Stubber) -> None:
    stubber.add_response(
        "get_products",
        _page(_item("g4dn.xlarge", "12.5", unit="Quantity")),
        expected_params=_request("us-east-1", "g4dn.xlarge"),
    )

    assert PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge"]) == {}


def test_rows_for_other_regions_types_or_platforms_are_ignored(client: Any, stubber: Stubber) -> None:
    stubber.add_response(
        "get_products",
        _page(
            _item("g4dn.xlarge", "0.6", regionCode="us-west-2"),
            _item("g4dn.xlarge", "0.9", operatingSystem="Windows"),
            _item("g4dn.xlarge", "1.2", tenancy="Dedicated"),
            _item("p5.48xlarge", "55.04"),  # not asked for
            _item("g4dn.xlarge", "0.5260000000"),
        ),
        expected_params=_request("us-east-1", "g4dn.xlarge"),
    )

    assert PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge"]) == {"g4dn.xlarge": Decimal("0.526")}


@pytest.mark.parametrize("reverse", [False, True])
def test_several_rows_for_one_type_prefer_box_usage_then_the_highest_price(
    client: Any, stubber: Stubber, reverse: bool
) -> None:
    rows = [
        _item("g4dn.xlarge", "0.9000000000", usagetype="USE1-Other:g4dn.xlarge"),
        _item("g4dn.xlarge", "0.5260000000", usagetype="BoxUsage:g4dn.xlarge"),
        _item("g4dn.xlarge", "0.5000000000", usagetype="BoxUsage:g4dn.xlarge"),
        _item("g4dn.2xlarge", "0.7000000000", usagetype="USE1-Other:g4dn.2xlarge"),
        _item("g4dn.2xlarge", "0.7520000000", usagetype="USE1-Other:g4dn.2xlarge"),
    ]
    stubber.add_response(
        "get_products",
        _page(*(reversed(rows) if reverse else rows)),
        expected_params=_request("us-east-1", "g4dn.2xlarge,g4dn.xlarge"),
    )

    prices = PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge", "g4dn.2xlarge"])

    # BoxUsage wins over a pricier non-BoxUsage row; without BoxUsage the highest price wins.
    assert prices == {"g4dn.xlarge": Decimal("0.526"), "g4dn.2xlarge": Decimal("0.752")}


def test_no_types_means_no_call(client: Any, stubber: Stubber) -> None:
    api = PriceListApi(client)

    assert api.hourly("us-east-1", []) == {}
    assert api.calls == 0


def test_long_type_lists_are_split_to_fit_one_filter_value(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    types = [f"g6e.{size}xlarge{n}" for n in range(20) for size in (2, 4, 8, 12, 16)]  # 100 types
    requests: list[dict[str, Any]] = []

    def get_products(**request: Any) -> dict[str, Any]:
        requests.append(request)
        (any_of,) = (f["Value"] for f in request["Filters"] if f["Type"] == "ANY_OF")
        return _page(*(_item(t, "1.5") for t in any_of.split(",")))

    monkeypatch.setattr(client, "get_products", get_products)
    api = PriceListApi(client)

    prices = api.hourly("us-east-1", types)

    values = [f["Value"] for r in requests for f in r["Filters"] if f["Type"] == "ANY_OF"]
    assert len(values) > 1
    assert all(len(value) <= 1024 for value in values)
    assert sorted(t for value in values for t in value.split(",")) == sorted(types)
    assert prices == dict.fromkeys(types, Decimal("1.5"))
    assert api.calls == len(requests)


# --- failures ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "message"),
    [("ThrottlingException", "Rate exceeded"), ("AccessDeniedException", "not authorized to perform")],
)
def test_client_errors_become_source_unavailable(client: Any, stubber: Stubber, code: str, message: str) -> None:
    stubber.add_client_error("get_products", service_error_code=code, service_message=message, http_status_code=400)

    with pytest.raises(SourceUnavailable) as raised:
        PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge"])

    text = str(raised.value)
    assert "Price List API" in text
    assert code in text
    assert message in text
    assert "us-east-1" in text


@pytest.mark.parametrize(
    "error",
    [
        EndpointConnectionError(endpoint_url=ENDPOINT),
        ConnectTimeoutError(endpoint_url=ENDPOINT),
        ReadTimeoutError(endpoint_url=ENDPOINT),
    ],
    ids=["endpoint-connection", "connect-timeout", "read-timeout"],
)
def test_network_errors_become_source_unavailable(error: Exception) -> None:
    # Raised where the HTTP request would be sent, so it goes through botocore's real send/retry path.
    client = boto3.client("pricing", region_name="us-east-1", config=Config(retries={"total_max_attempts": 1}))

    def fail(**_: Any) -> None:
        raise error

    client.meta.events.register("before-send.pricing.GetProducts", fail)
    api = PriceListApi(client)

    with pytest.raises(SourceUnavailable, match=r"^Price List API could not be reached") as raised:
        api.hourly("us-east-1", ["g4dn.xlarge"])

    assert raised.value.__cause__ is error
    assert api.calls == 1


def test_missing_credentials_become_source_unavailable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    client = boto3.session.Session().client("pricing", region_name="us-east-1")

    with pytest.raises(SourceUnavailable, match="no AWS credentials"):
        PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge"])


@pytest.mark.parametrize(
    "response",
    [
        {"PriceList": "not a list"},
        {"PriceList": [{"product": {}}]},
        {"PriceList": [], "NextToken": 7},
        ["not", "a", "mapping"],
    ],
    ids=["price-list-not-a-list", "decoded-item", "token-not-a-string", "not-a-mapping"],
)
def test_unexpected_response_shapes_become_source_unavailable(
    client: Any, monkeypatch: pytest.MonkeyPatch, response: Any
) -> None:
    monkeypatch.setattr(client, "get_products", lambda **_: response)

    with pytest.raises(SourceUnavailable, match=r"^Price List API returned"):
        PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge"])


def test_a_repeating_next_token_stops_with_source_unavailable(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "get_products", lambda **_: _page(_item(), next_token="same"))
    api = PriceListApi(client)

    with pytest.raises(SourceUnavailable, match="NextToken"):
        api.hourly("us-east-1", ["g4dn.xlarge"])

    assert api.calls == 2


# --- property: parse_price_list_item never raises ----------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_paths(child, (*prefix, key)))
    return found


_G4DN_PATHS = _paths(_g4dn_document())


@st.composite
def _mutated_items(draw: st.DrawFn) -> str:
    """The synthetic g4dn item with one value anywhere in it replaced by random JSON."""
    document = copy.deepcopy(_g4dn_document())
    *parents, leaf = draw(st.sampled_from(_G4DN_PATHS))
    target = document
    for key in parents:
        target = target[key]
    target[leaf] = draw(_json_values)
    return json.dumps(document)


@settings(max_examples=300, deadline=None)
@given(st.text() | _json_values.map(json.dumps) | _mutated_items())
def test_parse_price_list_item_never_raises(item: str) -> None:
    parsed = parse_price_list_item(item)

    if parsed is not None:
        instance_type, price = parsed
        assert isinstance(instance_type, str)
        assert instance_type
        assert price.is_finite()
        assert price > 0


# --- other platforms ---------------------------------------------------------------------------------------

WINDOWS = billing("Windows", "RunInstances:0002")


def test_a_platform_is_asked_for_with_its_own_filters_and_other_platforms_rows_are_refused(
    client: Any, stubber: Stubber
) -> None:
    request = _request("us-east-1", "g4dn.xlarge")
    for condition in request["Filters"]:
        if condition["Field"] == "operatingSystem":
            condition["Value"] = "Windows"
    linux_row = _item(price="0.5260000000")
    windows_row = _item(price="0.7100000000", operatingSystem="Windows")
    sql_row = _item(price="1.2000000000", operatingSystem="Windows", preInstalledSw="SQL Std")
    stubber.add_response("get_products", _page(linux_row, sql_row, windows_row), expected_params=request)

    assert PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge"], WINDOWS) == {"g4dn.xlarge": Decimal("0.71")}


def test_windows_with_sql_server_is_its_own_price(client: Any, stubber: Stubber) -> None:
    request = _request("us-east-1", "g4dn.xlarge")
    for condition in request["Filters"]:
        if condition["Field"] == "operatingSystem":
            condition["Value"] = "Windows"
        if condition["Field"] == "preInstalledSw":
            condition["Value"] = "SQL Std"
    sql_row = _item(price="1.2000000000", operatingSystem="Windows", preInstalledSw="SQL Std")
    stubber.add_response("get_products", _page(sql_row), expected_params=request)

    sql = billing("Windows with SQL Server Standard", "RunInstances:0006")
    assert PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge"], sql) == {"g4dn.xlarge": Decimal("1.2")}


def test_a_platform_without_an_instance_hour_price_is_never_asked_for_as_linux(client: Any) -> None:
    for unknown in (billing("Windows BYOL", "RunInstances:0800"), billing("Linux/UNIX", tenancy="host")):
        with pytest.raises(ValueError, match="no instance-hour price"):
            PriceListApi(client).hourly("us-east-1", ["g4dn.xlarge"], unknown)
