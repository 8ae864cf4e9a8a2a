"""The AWS Price List API (GetProducts): on-demand hourly prices of one platform (Linux, Windows, RHEL, ...) and
tenancy; Linux on shared tenancy unless asked otherwise."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from botocore.exceptions import ClientError, NoCredentialsError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from rightsizer.domain.platforms import LINUX, PLATFORMS, Billing
from rightsizer.services.ports import SourceUnavailable

# The Price List API is served from these regions only; any of them answers for every region.
PRICING_API_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")

_SERVICE_CODE = "AmazonEC2"
_PAGE_SIZE = 100  # the GetProducts maximum
# A filter Value is at most 1024 characters (botocore's pricing model), so the comma-separated
# ANY_OF list of instance types is split into requests that stay within it.
_MAX_FILTER_VALUE_CHARS = 1024
# Attributes checked only when present: older price lists (e.g. 2021) have no `marketoption`.
_OPTIONAL_ATTRIBUTES: Mapping[str, str] = {
    "licenseModel": "No License required",  # licence included (Windows, RHEL, SQL Server), or none needed (Linux)
    "marketoption": "OnDemand",
}
_TENANCY = {"default": "Shared", "dedicated": "Dedicated"}


def _required(billing: Billing) -> dict[str, str]:
    """Attributes every usable row must carry with exactly these values: the request filters on them too, and they
    are checked again so that a loosened server-side match can never leak another platform's or tenancy's price."""
    if billing.platform is None or billing.tenancy not in _TENANCY:
        raise ValueError(f"{billing.description} has no instance-hour price in the Price List")
    info = PLATFORMS[billing.platform]
    return {
        "operatingSystem": info.operating_system,
        "tenancy": _TENANCY[billing.tenancy],
        "preInstalledSw": info.pre_installed_sw,
        "capacitystatus": "Used",
    }


@dataclass(frozen=True)
class _Row:
    instance_type: str
    price: Decimal
    usage_type: str
    region_code: str | None

    @property
    def rank(self) -> tuple[bool, Decimal]:
        return ("BoxUsage:" in self.usage_type, self.price)


def _mapping(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _hourly_usd(terms: dict[str, Any]) -> Decimal | None:
    """The highest positive USD per-hour price among the OnDemand terms (Reserved terms are ignored)."""
    on_demand = _mapping(terms.get("OnDemand"))
    if on_demand is None:
        return None
    best: Decimal | None = None
    for term in on_demand.values():
        dimensions = _mapping((_mapping(term) or {}).get("priceDimensions"))
        for raw_dimension in (dimensions or {}).values():
            dimension = _mapping(raw_dimension)
            if dimension is None or dimension.get("unit") != "Hrs":
                continue
            usd = (_mapping(dimension.get("pricePerUnit")) or {}).get("USD")
            if not isinstance(usd, str):
                continue
            try:
                price = Decimal(usd)  # exactly as published, never through float
            except (InvalidOperation, ValueError, ArithmeticError):
                continue
            # 0.00 rows are placeholders (e.g. reserved-capacity), not a price anyone pays.
            if not price.is_finite() or price <= 0:
                continue
            if best is None or price > best:
                best = price
    return best


def _parse_row(item: str, billing: Billing = LINUX) -> _Row | None:
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
    instance_type = attributes.get("instanceType")
    if not isinstance(instance_type, str) or not instance_type:
        return None
    if any(attributes.get(name) != wanted for name, wanted in _required(billing).items()):
        return None
    if any(name in attributes and attributes[name] != wanted for name, wanted in _OPTIONAL_ATTRIBUTES.items()):
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
    )


def parse_price_list_item(item: str) -> tuple[str, Decimal] | None:
    """(instanceType, USD per hour) from one PriceList JSON string.

    None when the item is not a Linux, shared-tenancy, no-pre-installed-software, on-demand hourly
    compute price with a positive USD amount. Never raises on malformed input.
    """
    row = _parse_row(item)
    return None if row is None else (row.instance_type, row.price)


def _chunks(instance_types: Sequence[str]) -> Iterator[list[str]]:
    """Sorted, de-duplicated types in groups whose comma-joined form fits one filter Value."""
    chunk: list[str] = []
    length = 0
    for instance_type in sorted({t for t in instance_types if t}):
        added = len(instance_type) + (1 if chunk else 0)
        if chunk and length + added > _MAX_FILTER_VALUE_CHARS:
            yield chunk
            chunk, length = [], 0
            added = len(instance_type)
        chunk.append(instance_type)
        length += added
    if chunk:
        yield chunk


def _filters(region: str, instance_types: Sequence[str], billing: Billing = LINUX) -> list[dict[str, str]]:
    term_match = {
        "regionCode": region,
        **_required(billing),
        "marketoption": "OnDemand",
        "licenseModel": "No License required",
    }
    filters = [{"Type": "TERM_MATCH", "Field": field, "Value": value} for field, value in term_match.items()]
    filters.append({"Type": "ANY_OF", "Field": "instanceType", "Value": ",".join(instance_types)})
    return filters


class PriceListApi:
    """Implements the OnDemandPrices port with a boto3 'pricing' client created by the caller."""

    source = "AWS Price List API"

    def __init__(self, client: Any) -> None:
        self._pricing = client
        self.calls = 0  # GetProducts calls made

    def hourly(self, region: str, instance_types: Sequence[str], billing: Billing = LINUX) -> dict[str, Decimal]:
        """On-demand USD per hour, for hosts billed this way (Linux on shared tenancy unless told), of the requested
        types that have a price."""
        try:
            return self._hourly(region, instance_types, billing)
        except ClientError as error:
            details = error.response.get("Error", {})
            code = details.get("Code") or "Unknown"
            message = details.get("Message") or "no message"
            raise SourceUnavailable(f"Price List API refused GetProducts for {region}: {code} ({message})") from error
        except NoCredentialsError as error:
            raise SourceUnavailable("Price List API could not be called: no AWS credentials were found") from error
        except (BotocoreConnectionError, ReadTimeoutError) as error:
            # botocore's ConnectionError covers EndpointConnectionError and ConnectTimeoutError.
            raise SourceUnavailable(f"Price List API could not be reached: {error}") from error

    def _hourly(self, region: str, instance_types: Sequence[str], billing: Billing) -> dict[str, Decimal]:
        best: dict[str, _Row] = {}
        for chunk in _chunks(instance_types):
            wanted = set(chunk)
            for item in self._items(region, chunk, billing):
                row = _parse_row(item, billing)
                if row is None or row.instance_type not in wanted:
                    continue
                if row.region_code is not None and row.region_code != region:
                    continue
                # With every filter applied AWS should list one row per type. If several survive, prefer
                # the plain instance-hour row ("BoxUsage:", possibly region-prefixed as "EU-BoxUsage:"),
                # then the highest price: the choice does not depend on page order, and the cost of a
                # type we might recommend is never understated.
                current = best.get(row.instance_type)
                if current is None or row.rank > current.rank:
                    best[row.instance_type] = row
        return {instance_type: row.price for instance_type, row in best.items()}

    def _items(self, region: str, chunk: list[str], billing: Billing) -> Iterator[str]:
        request: dict[str, Any] = {
            "ServiceCode": _SERVICE_CODE,
            "Filters": _filters(region, chunk, billing),
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
