"""Record the AWS API calls code makes, as IAM actions ("ec2:DescribeInstances"), whatever client it uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from unittest import mock

from botocore.client import BaseClient

# IAM action prefixes that differ from the API's signing name.
_IAM_PREFIX = {"monitoring": "cloudwatch"}
# Calls that need no IAM permission.
UNAUTHORISED_OK = frozenset({"sts:GetCallerIdentity"})


def iam_action(client: BaseClient, operation: str) -> str:
    signing = client.meta.service_model.signing_name
    return f"{_IAM_PREFIX.get(signing, signing)}:{operation}"


@contextmanager
def record_api_calls(
    canned: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]] | None = None,
) -> Iterator[set[str]]:
    """Yield the set of IAM actions called. `canned` answers given actions (services moto lacks)."""
    calls: set[str] = set()
    original = BaseClient._make_api_call

    def recording(self: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        action = iam_action(self, operation)
        calls.add(action)
        if canned and action in canned:
            return canned[action](params)
        return original(self, operation, params)

    with mock.patch.object(BaseClient, "_make_api_call", recording):
        yield calls
