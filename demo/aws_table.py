"""The DynamoDB table of template.yaml, created in moto: tests exercise the key schema that gets deployed."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

TEMPLATE = Path(__file__).resolve().parent.parent / "template.yaml"
TABLE_KEYS = ("BillingMode", "AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes")


@cache
def table_properties() -> dict[str, Any]:
    """`Resources.Table.Properties` of template.yaml (SAM's YAML loader understands !Ref, !Sub, ...)."""
    from samtranslator.yaml_helper import yaml_parse

    template = yaml_parse(TEMPLATE.read_text())
    properties: dict[str, Any] = template["Resources"]["Table"]["Properties"]
    return properties


def create_table_from_template(dynamodb_client: Any, table_name: str = "gpu-rightsizer-test") -> str:
    """Create the table as the template declares it (keys, indexes, billing, TTL); return its name."""
    properties = table_properties()
    kwargs = {key: properties[key] for key in TABLE_KEYS if key in properties}
    dynamodb_client.create_table(TableName=table_name, **kwargs)
    ttl = properties.get("TimeToLiveSpecification")
    if ttl:
        dynamodb_client.update_time_to_live(
            TableName=table_name,
            TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": bool(ttl["Enabled"])},
        )
    return table_name
