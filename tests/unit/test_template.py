"""template.yaml checks that cfn-lint and `sam validate --lint` do not make (see the library facts):
references to SAM-generated resources, runtimes, handlers, state machine substitutions, sample events."""

from __future__ import annotations

import copy
import importlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
SUPPORTED_RUNTIMES = {"python3.12", "python3.13"}


@cache
def sam() -> dict[str, Any]:
    from samtranslator.yaml_helper import yaml_parse

    parsed: dict[str, Any] = yaml_parse(TEMPLATE.read_text())
    return parsed


@cache
def expanded() -> dict[str, Any]:
    """The template as CloudFormation, expanded offline by the SAM translator."""
    from samtranslator.translator.transform import transform

    class _NoManagedPolicies:
        def load(self) -> dict[str, str]:
            return {}

    template = copy.deepcopy(sam())
    for resource in template["Resources"].values():
        properties = resource.get("Properties", {})
        if resource["Type"] == "AWS::Serverless::Function":
            properties["CodeUri"] = "s3://bucket/code.zip"
        if resource["Type"] == "AWS::Serverless::LayerVersion":
            properties["ContentUri"] = "s3://bucket/layer.zip"
        if resource["Type"] == "AWS::Serverless::StateMachine" and "DefinitionUri" in properties:
            properties["Definition"] = json.loads(_definition_text(properties.pop("DefinitionUri")))
    result: dict[str, Any] = transform(template, {}, _NoManagedPolicies())
    return result


def _definition_text(uri: str) -> str:
    # Substitutions are numbers in some places (MaxConcurrency): make the file parse as JSON.
    return re.sub(r"\$\{(\w+)\}", "1", (ROOT / uri).read_text())


def functions() -> dict[str, dict[str, Any]]:
    return {name: r for name, r in sam()["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}


def _getatts(node: Any) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Fn::GetAtt":
                target = value if isinstance(value, list) else value.split(".", 1)
                found.append((target[0], target[1]))
            else:
                found.extend(_getatts(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_getatts(item))
    return found


@pytest.fixture(autouse=True)
def _region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


def test_every_getatt_names_a_resource_that_exists_after_the_sam_transform() -> None:
    resources = expanded()["Resources"]
    for resource, _attribute in _getatts(expanded()):
        assert resource in resources, f"!GetAtt {resource}: no such resource once SAM has expanded the template"


def test_functions_run_a_supported_python_on_arm64_with_an_importable_handler() -> None:
    globals_ = sam()["Globals"]["Function"]
    assert globals_["Runtime"] in SUPPORTED_RUNTIMES
    assert globals_["Architectures"] == ["arm64"]
    for name, function in functions().items():
        properties = function["Properties"]
        assert properties.get("Runtime", globals_["Runtime"]) in SUPPORTED_RUNTIMES, name
        module_name, _, attribute = properties["Handler"].rpartition(".")
        module = importlib.import_module(module_name)
        assert callable(getattr(module, attribute)), f"{name}: {properties['Handler']} is not callable"


def test_every_function_has_a_sample_event() -> None:
    events = {path.stem for path in (ROOT / "events").glob("*.json")}
    for function in functions().values():
        module = function["Properties"]["Handler"].rsplit(".", 2)[-2]
        assert any(event == module or event.startswith(module + "_") for event in events), module


def test_state_machine_substitutions_match_the_definitions() -> None:
    for name, resource in sam()["Resources"].items():
        if resource["Type"] != "AWS::Serverless::StateMachine":
            continue
        properties = resource["Properties"]
        used = set(re.findall(r"\$\{(\w+)\}", (ROOT / properties["DefinitionUri"]).read_text()))
        assert used == set(properties.get("DefinitionSubstitutions", {})), name


def test_table_keeps_state_safe() -> None:
    table = sam()["Resources"]["Table"]["Properties"]
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["SSESpecification"]["SSEEnabled"] is True
    # Powertools idempotency records expire through the same TTL attribute.
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}


def test_schedules_are_eventbridge_scheduler_with_parameterised_expressions_and_time_zone() -> None:
    for name in ("CollectFunction", "AnalyzeFunction", "ReportFunction", "PricesFunction"):
        events = functions()[name]["Properties"]["Events"]
        (schedule,) = events.values()
        assert schedule["Type"] == "ScheduleV2", name
        assert set(schedule["Properties"]["ScheduleExpression"]) == {"Ref"}, name
        assert schedule["Properties"]["ScheduleExpressionTimezone"] == {"Ref": "ScheduleTimezone"}, name


def test_only_the_resize_workflow_may_change_instances() -> None:
    writes = {"ec2:StopInstances", "ec2:StartInstances", "ec2:ModifyInstanceAttribute", "ec2:TerminateInstances"}
    text = json.dumps(expanded()["Resources"])
    roles = {
        name: json.dumps(resource)
        for name, resource in expanded()["Resources"].items()
        if resource["Type"] == "AWS::IAM::Role"
    }
    holders = {name for name, body in roles.items() if any(action in body for action in writes)}
    assert all("Resize" in name for name in holders), holders
    assert "ec2:*" not in text


def test_the_demos_plain_yaml_reading_of_the_template_equals_sams() -> None:
    from demo.aws_table import cloudformation_yaml

    assert cloudformation_yaml(TEMPLATE.read_text()) == sam()
