"""The DynamoDB table of template.yaml, created in moto: tests exercise the key schema that gets deployed."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

TEMPLATE = Path(__file__).resolve().parent.parent / "template.yaml"
TABLE_KEYS = ("BillingMode", "AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes")


def cloudformation_yaml(text: str) -> Any:
    """A CloudFormation template (short forms !Ref, !Sub, !GetAtt, ... as {"Ref": ...} / {"Fn::...": ...}),
    with PyYAML alone: the demo needs no SAM tooling installed."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def short_form(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
        value: Any
        if isinstance(node, yaml.ScalarNode):
            value = loader.construct_scalar(node)
            if suffix == "GetAtt":
                value = value.split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        return {suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}": value}

    Loader.add_multi_constructor("!", short_form)
    return yaml.load(text, Loader=Loader)


@cache
def template() -> dict[str, Any]:
    """template.yaml as CloudFormation reads it before the transforms (read once)."""
    parsed: dict[str, Any] = cloudformation_yaml(TEMPLATE.read_text())
    return parsed


def table_properties() -> dict[str, Any]:
    """`Resources.Table.Properties` of template.yaml."""
    properties: dict[str, Any] = template()["Resources"]["Table"]["Properties"]
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
