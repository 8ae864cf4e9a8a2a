"""The AWS Price List API (GetProducts) for SageMaker: on-demand hourly prices of `ml.*` instance types, for one
component (real-time endpoints, training jobs or notebook instances).

SageMaker is its own Price List service, `AmazonSageMaker`. Its instance rows (productFamily "ML Instance") carry
the type in `instanceName` ("ml.g5.xlarge"; `instanceType` has a component suffix on some SKUs), the use in
`component` ("Hosting", "Training", "Notebook", and others such as "BatchTransform" or "AsyncInf" that are not
asked for here), and a usage type such as `USE1-Host:ml.g5.xlarge`. A row of `US East (Ohio)`:

    usagetype USE2-Host:ml.g6.xlarge, pricePerUnit USD 1.1267000000, unit Hrs,
    description "$1.1267 per Hosting ml.g6.xlarge hour in US East (Ohio)"

The same type is priced for each component on its own (hosting ml.g6e.2xlarge $2.8026, training $2.80 in
us-east-1): a component's rows are never taken for another's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError, NoCredentialsError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

# The EC2 adapter's own helpers: the highest positive USD per-hour OnDemand price of a row, and the split of a type
# list into filter values of at most 1024 characters. Shared so that both services read a price the same way.
from rightsizer.adapters.aws.pricing import _chunks, _hourly_usd, _mapping
from rightsizer.domain.sagemaker.prices import SageMakerComponent
from rightsizer.services.ports import SourceUnavailable

SERVICE_CODE = "AmazonSageMaker"
_PAGE_SIZE = 100  # the GetProducts maximum
_PRODUCT_FAMILY = "ML Instance"
_LOCATION_TYPE = "AWS Region"


@dataclass(frozen=True)
class _Component:
    value: str  # the Price List `component` attribute
    usage: str  # what the usage type holds before the type: "USE1-Host:ml.g5.xlarge"


COMPONENTS: Mapping[SageMakerComponent, _Component] = {
    "hosting": _Component(value="Hosting", usage="Host:"),
    "training": _Component(value="Training", usage="Train:"),
    "notebook": _Component(value="Notebook", usage="Notebk:"),
}


@dataclass(frozen=True)
class _Row:
    instance_type: str
    price: Decimal
    usage_type: str
    region_code: str | None
    component: _Component

    @property
    def rank(self) -> tuple[bool, Decimal]:
        # The instance-hour row of the component ("USE2-Host:ml.g6.xlarge") first, then the higher price.
        return (self.usage_type.endswith(f"{self.component.usage}{self.instance_type}"), self.price)


def _parse_row(item: str, component: SageMakerComponent) -> _Row | None:
    wanted = COMPONENTS[component]
    try:
        document = json.loads(item)
    except (ValueError, RecursionError):
        return None
    document = _mapping(document)
    if document is None:
        return None
    attributes = _mapping((_mapping(document.get("product")) or {}).get("attributes"))
    terms = _mapping(document.get("terms"))
    if attributes is None or terms is None:
        return None
    instance_type = attributes.get("instanceName")
    if not isinstance(instance_type, str) or not instance_type.startswith("ml."):
        return None
    if attributes.get("component") != wanted.value:
        return None
    product_family = (_mapping(document.get("product")) or {}).get("productFamily")
    if product_family is not None and product_family != _PRODUCT_FAMILY:
        return None
    if "locationType" in attributes and attributes["locationType"] != _LOCATION_TYPE:
        return None
    price = _hourly_usd(terms)
    if price is None:
        return None
    usage_type = attributes.get("usagetype")
    region_code = attributes.get("regionCode")
    return _Row(
        instance_type=instance_type,
        price=price,
        usage_type=usage_type if isinstance(usage_type, str) else "",
        region_code=region_code if isinstance(region_code, str) else None,
        component=wanted,
    )


def parse_sagemaker_price_list_item(item: str, component: SageMakerComponent = "hosting") -> tuple[str, Decimal] | None:
    """(instanceName, USD per hour) from one AmazonSageMaker PriceList JSON string.

    None when the item is not an on-demand hourly price of an `ml.*` instance for `component` with a positive USD
    amount. Never raises on malformed input.
    """
    row = _parse_row(item, component)
    return None if row is None else (row.instance_type, row.price)


def _filters(region: str, component: SageMakerComponent, instance_types: Sequence[str]) -> list[dict[str, str]]:
    return [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
        {"Type": "TERM_MATCH", "Field": "component", "Value": COMPONENTS[component].value},
        {"Type": "ANY_OF", "Field": "instanceName", "Value": ",".join(instance_types)},
    ]


class SageMakerPriceListApi:
    """SageMaker `ml.*` on-demand prices from a boto3 'pricing' client created by the caller."""

    source = "AWS Price List API (AmazonSageMaker)"

    def __init__(self, client: Any) -> None:
        self._pricing = client
        self.calls = 0  # GetProducts calls made

    def hourly(
        self, region: str, instance_types: Sequence[str], component: SageMakerComponent = "hosting"
    ) -> dict[str, Decimal]:
        """On-demand USD per hour of the requested `ml.*` types that have a `component` price in `region`
        (real-time endpoints unless told). Names without the `ml.` prefix are not SageMaker types: never asked."""
        try:
            return self._hourly(region, [t for t in instance_types if t.startswith("ml.")], component)
        except ClientError as error:
            details = error.response.get("Error", {})
            code = details.get("Code") or "Unknown"
            message = details.get("Message") or "no message"
            raise SourceUnavailable(
                f"Price List API refused GetProducts ({SERVICE_CODE}) for {region}: {code} ({message})"
            ) from error
        except NoCredentialsError as error:
            raise SourceUnavailable("Price List API could not be called: no AWS credentials were found") from error
        except (BotocoreConnectionError, ReadTimeoutError) as error:
            raise SourceUnavailable(f"Price List API could not be reached: {error}") from error

    def _hourly(self, region: str, instance_types: Sequence[str], component: SageMakerComponent) -> dict[str, Decimal]:
        best: dict[str, _Row] = {}
        for chunk in _chunks(instance_types):
            wanted = set(chunk)
            for item in self._items(region, component, chunk):
                row = _parse_row(item, component)
                if row is None or row.instance_type not in wanted:
                    continue
                if row.region_code is not None and row.region_code != region:
                    continue
                current = best.get(row.instance_type)
                if current is None or row.rank > current.rank:
                    best[row.instance_type] = row
        return {instance_type: row.price for instance_type, row in best.items()}

    def _items(self, region: str, component: SageMakerComponent, chunk: list[str]) -> Iterator[str]:
        request: dict[str, Any] = {
            "ServiceCode": SERVICE_CODE,
            "Filters": _filters(region, component, chunk),
            "FormatVersion": "aws_v1",
            "MaxResults": _PAGE_SIZE,
        }
        seen_tokens: set[str] = set()
        while True:
            self.calls += 1
            response = self._pricing.get_products(**request)
            if not isinstance(response, dict):
                raise SourceUnavailable("Price List API returned a GetProducts response that is not a mapping")
            price_list = response.get("PriceList", [])
            if not isinstance(price_list, list) or not all(isinstance(item, str) for item in price_list):
                raise SourceUnavailable(
                    "Price List API returned a GetProducts PriceList that is not a list of JSON strings"
                )
            yield from price_list
            token = response.get("NextToken")
            if not token:
                return
            if not isinstance(token, str) or token in seen_tokens:
                raise SourceUnavailable("Price List API returned an invalid or repeating GetProducts NextToken")
            seen_tokens.add(token)
            request["NextToken"] = token
