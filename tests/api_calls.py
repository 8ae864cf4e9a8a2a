"""Record the AWS API calls code makes, as IAM actions ("ec2:DescribeInstances"), whatever client it uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from unittest import mock

from botocore.client import BaseClient

# IAM action prefixes that differ from the API's signing name, and actions named unlike their operation.
_IAM_PREFIX = {"monitoring": "cloudwatch"}
_IAM_ACTION = {"lambda:Invoke": "lambda:InvokeFunction"}
# Calls that need no IAM permission.
UNAUTHORISED_OK = frozenset({"sts:GetCallerIdentity"})


def iam_action(client: BaseClient, operation: str) -> str:
    signing = client.meta.service_model.signing_name
    action = f"{_IAM_PREFIX.get(signing, signing)}:{operation}"
    return _IAM_ACTION.get(action, action)


@contextmanager
def record_api_calls(
    canned: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]] | None = None,
) -> Iterator[set[str]]:
    """Yield the set of IAM actions called. `canned` answers given actions (services moto lacks)."""
    calls: set[str] = set()
    original = BaseClient._make_api_call  # type: ignore[attr-defined]  # botocore's private dispatch, patched below

    def recording(self: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        action = iam_action(self, operation)
        calls.add(action)
        if canned and action in canned:
            return canned[action](params)
        return original(self, operation, params)

    with mock.patch.object(BaseClient, "_make_api_call", recording):
        yield calls


def _statements(node: Any) -> Iterator[dict[str, Any]]:
    """Every statement of a policy, in every branch of an Fn::If (a condition may enable either)."""
    if isinstance(node, dict):
        if "Fn::If" in node:
            for branch in node["Fn::If"][1:]:
                yield from _statements(branch)
        elif "Statement" in node:
            yield from node["Statement"]
    elif isinstance(node, list):
        for item in node:
            yield from _statements(item)


def policy_actions(function: str) -> set[str]:
    """The IAM actions template.yaml grants a function in its inline policies."""
    from demo.aws_table import TEMPLATE
    from samtranslator.yaml_helper import yaml_parse

    resource = yaml_parse(TEMPLATE.read_text())["Resources"][function]
    actions: set[str] = set()
    for statement in _statements(resource["Properties"].get("Policies", [])):
        listed = statement["Action"]
        actions.update([listed] if isinstance(listed, str) else listed)
    return actions
