"""Record the AWS API calls code makes, as IAM actions ("ec2:DescribeInstances"), whatever client it uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

from botocore.client import BaseClient
from botocore.signers import RequestSigner

# IAM action prefixes that differ from the API's signing name, and actions named unlike their operation.
_IAM_PREFIX = {"monitoring": "cloudwatch"}
_IAM_ACTION = {"lambda:Invoke": "lambda:InvokeFunction"}
# Calls that need no IAM permission.
UNAUTHORISED_OK = frozenset({"sts:GetCallerIdentity"})


def iam_action(client: BaseClient, operation: str) -> str:
    signing = client.meta.service_model.signing_name
    action = f"{_IAM_PREFIX.get(signing, signing)}:{operation}"
    return _IAM_ACTION.get(action, action)


@dataclass(frozen=True)
class ApiCall:
    """One AWS API call as the code made it: the IAM action, the request and the answer."""

    action: str
    params: dict[str, Any]
    answer: Any
    region: str = ""  # the client's region
    access_key: str = ""  # whose credentials signed it (tests map keys to roles)
    api: tuple[str, str] = ("", "")  # botocore's (service, operation): its model says what the request may hold

    @property
    def items_read(self) -> int:
        """Items a DynamoDB read examined (what DynamoDB reads and bills, not what moto walked through):
        GetItem 0 or 1, Query and Scan their ScannedCount, BatchGetItem every item returned."""
        if not isinstance(self.answer, dict):
            return 0
        if self.action == "dynamodb:GetItem":
            return 1 if "Item" in self.answer else 0
        if self.action == "dynamodb:BatchGetItem":
            return sum(len(items) for items in self.answer.get("Responses", {}).values())
        return int(self.answer.get("ScannedCount", 0))


Canned = Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]


@contextmanager
def _intercept(canned: Canned | None, seen: Callable[[ApiCall], None]) -> Iterator[None]:
    original = BaseClient._make_api_call  # type: ignore[attr-defined]  # botocore's private dispatch, patched below

    def recording(self: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        action = iam_action(self, operation)
        answer = canned[action](params) if canned and action in canned else original(self, operation, params)
        api = (self.meta.service_model.service_name, operation)
        seen(ApiCall(action, params, answer, self.meta.region_name, _access_key(self), api))
        return answer

    presign = RequestSigner.generate_presigned_url

    def presigning(self: RequestSigner, request_dict: dict[str, Any], operation_name: str, **kwargs: Any) -> Any:
        # A presigned URL lets its reader make the call with the signer's rights: the signer needs the action.
        url = presign(self, request_dict, operation_name, **kwargs)
        signing = kwargs.get("signing_name") or self.signing_name
        seen(ApiCall(f"{_IAM_PREFIX.get(signing, signing)}:{operation_name}", {"url": url}, None))
        return url

    with (
        mock.patch.object(BaseClient, "_make_api_call", recording),
        mock.patch.object(RequestSigner, "generate_presigned_url", presigning),
    ):
        yield


def _access_key(client: BaseClient) -> str:
    signer: Any = getattr(client, "_request_signer", None)  # botocore's signer holds the client's credentials
    credentials = getattr(signer, "_credentials", None)
    return str(getattr(credentials, "access_key", "") or "")


@contextmanager
def record_api_calls(canned: Canned | None = None) -> Iterator[set[str]]:
    """Yield the set of IAM actions called. `canned` answers given actions (services moto lacks)."""
    actions: set[str] = set()
    with _intercept(canned, lambda call: actions.add(call.action)):
        yield actions


@contextmanager
def record_api_call_details(canned: Canned | None = None) -> Iterator[list[ApiCall]]:
    """Yield the calls made, in order, with their requests and answers."""
    calls: list[ApiCall] = []
    with _intercept(canned, calls.append):
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
