"""Least privilege, checked against behaviour: each function's IAM policy in template.yaml names exactly
the AWS actions its code calls when it runs (recorded at the botocore layer against moto)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from demo.lambda_context import FakeLambdaContext

from tests.api_calls import UNAUTHORISED_OK, policy_actions, record_api_calls
from tests.events import load_event

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pricing"


def _canned_products(params: dict[str, Any]) -> dict[str, Any]:
    sample = json.loads((FIXTURES / "SYNTHETIC_getproducts_g4dn_xlarge_us-east-1.json").read_text())
    return {"FormatVersion": "aws_v1", "PriceList": sample["PriceList"]}


def assert_least_privilege(function: str, called: set[str]) -> None:
    needed = called - UNAUTHORISED_OK
    granted = policy_actions(function)
    assert granted - needed == set(), f"{function} is granted actions its code never calls"
    assert needed - granted == set(), f"{function} calls actions its policy does not grant"


def test_collect_function_policy(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from rightsizer.handlers import collect

    with record_api_calls() as called:
        collect.handler(load_event("collect.json"), FakeLambdaContext())
        item = load_event("collect_target.json")
        collect.handler(
            {
                **item,
                "target": {
                    "account_id": "111111111111",
                    "region": "us-east-1",
                    "role_arn": "arn:aws:iam::111111111111:role/GpuRightsizerCollector",
                },
            },
            FakeLambdaContext(),
        )
        # The Organizations variant of planning (UseOrganizations=true).
        boto3.client("organizations", region_name="us-east-1").create_organization(FeatureSet="ALL")
        monkeypatch.setenv("ACCOUNT_ROLE_ARNS", "")
        monkeypatch.setenv("USE_ORGANIZATIONS", "true")
        collect.handler({**load_event("collect.json"), "detail": "{}"}, FakeLambdaContext())

    assert "organizations:ListAccounts" in called and "sts:AssumeRole" in called
    assert_least_privilege("CollectFunction", called - {"organizations:CreateOrganization"})


def test_analyze_function_policy(world: dict[str, Any]) -> None:
    from rightsizer.handlers import analyze, collect

    collect.handler(load_event("collect_target.json"), FakeLambdaContext())
    with record_api_calls() as called:
        result = analyze.handler(load_event("analyze.json"), FakeLambdaContext())

    assert result["instances"] > 0
    assert_least_privilege("AnalyzeFunction", called)


def test_prices_function_policy(world: dict[str, Any]) -> None:
    from rightsizer.handlers import prices

    with record_api_calls({"pricing:GetProducts": _canned_products}) as called:
        result = prices.handler(load_event("prices.json"), FakeLambdaContext())

    assert result["regions"]["us-east-1"] >= 1  # the canned g4dn.xlarge price was cached
    assert_least_privilege("PricesFunction", called)
