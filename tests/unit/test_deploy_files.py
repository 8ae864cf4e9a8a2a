"""The files a multi-account deployment uses besides template.yaml stay in step with it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from demo.aws_table import cloudformation_yaml

from tests.iam_reference import resolve
from tests.unit.test_template import functions

ROOT = Path(__file__).resolve().parents[2]


def load(path: str) -> dict[str, Any]:
    loaded: dict[str, Any] = cloudformation_yaml((ROOT / path).read_text())
    return loaded


def statement(policies: list[Any], sid: str) -> dict[str, Any]:
    for policy in policies:
        for item in policy.get("PolicyDocument", policy).get("Statement", []):
            if item.get("Sid") == sid:
                return dict(item)
    raise AssertionError(f"no statement {sid}")


def test_the_member_role_grants_exactly_what_the_collector_reads() -> None:
    member = load("member-account/template.yaml")["Resources"]["CollectorRole"]["Properties"]
    collector = functions()["CollectFunction"]["Properties"]["Policies"]

    granted = statement(member["Policies"], "ReadFleet")
    assert sorted(granted["Action"]) == sorted(statement(collector, "ReadFleet")["Action"])
    trust = member["AssumeRolePolicyDocument"]["Statement"][0]
    assert trust["Condition"] == {"ArnEquals": {"aws:PrincipalArn": {"Ref": "CollectorRoleArn"}}}
    assert (
        load("member-account/template.yaml")["Parameters"]["RoleName"]["Default"]
        == load("template.yaml")["Parameters"]["MemberRoleName"]["Default"]
    )


def test_member_accounts_grant_the_workflow_exactly_what_the_stack_grants_its_own_account() -> None:
    member, hub = load("member-account/template.yaml"), load("template.yaml")
    for role in ("ActionRole", "SchedulerRole"):
        ours = hub["Resources"][role]["Properties"]["Policies"]
        theirs = member["Resources"][role]["Properties"]["Policies"]
        assert theirs == ours, role  # the same tag-scoped rights in every account
        assert member["Resources"][role]["Condition"] == "ActionsEnabled"
    assert hub["Resources"]["ResizeStateMachineRole"]["Properties"]["RoleName"] == {
        "Fn::Sub": "${AWS::StackName}-${AWS::Region}-workflow"
    }
    for stack, member_side in (
        ("MemberActionRoleName", "ActionRoleName"),
        ("MemberSchedulerRoleName", "SchedulerRoleName"),
        ("ManagedTagKey", "ManagedTagKey"),
        ("OptOutTagKey", "OptOutTagKey"),
    ):
        assert hub["Parameters"][stack]["Default"] == member["Parameters"][member_side]["Default"], stack
    assert {"WorkflowRoleArn", "ActionRoleArn", "CollectorRoleArn"} <= set(hub["Outputs"])


def test_a_regional_copy_runs_the_same_workflow_with_the_same_rights_and_reports_home() -> None:
    hub, regional = load("template.yaml")["Resources"], load("regional/template.yaml")["Resources"]
    machine = regional["StateMachine"]["Properties"]
    assert machine["DefinitionUri"] == "../" + hub["ResizeStateMachine"]["Properties"]["DefinitionUri"]
    assert machine["Name"] == {"Fn::Sub": "${HubStackName}-resize"}  # what the Slack app starts in each region

    def rights(role: dict[str, Any]) -> dict[str, list[str]]:
        actions: dict[str, list[str]] = {}
        for policy in role["Properties"]["Policies"]:
            for item in policy["PolicyDocument"]["Statement"]:
                listed = item["Action"]
                actions[item["Sid"]] = sorted([listed] if isinstance(listed, str) else listed)
        return actions

    assert rights(regional["WorkflowRole"]) == rights(hub["ResizeStateMachineRole"])
    assert regional["WorkflowRole"]["Properties"]["RoleName"] == {"Fn::Sub": "${HubStackName}-${AWS::Region}-workflow"}
    # The action role it assumes at home is the stack's, by name.
    assert hub["ActionRole"]["Properties"]["RoleName"] == {"Fn::Sub": "${AWS::StackName}-action"}
    home_role = {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/${HubStackName}-action"}
    assume = regional["WorkflowRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"][0]["Resource"]
    assert all(home_role in branch for branch in assume["Fn::If"][1:])
    # Its table is the one the stack's notifier releases locks in; its events go to the stack's region.
    assert regional["Table"]["Properties"]["TableName"] == {"Fn::Sub": "${HubStackName}-actions"}
    notifier = hub["NotifierFunction"]["Properties"]
    assert notifier["Environment"]["Variables"]["REGIONAL_TABLE_NAME"] == {"Fn::Sub": "${AWS::StackName}-actions"}
    for rule in ("ForwardProgress", "ForwardEnds"):
        (target,) = regional[rule]["Properties"]["Targets"]
        assert target["Arn"] == {
            "Fn::Sub": "arn:${AWS::Partition}:events:${HubRegion}:${AWS::AccountId}:event-bus/default"
        }
        assert "DeadLetterConfig" in target


def test_the_collector_role_arn_is_a_stack_output() -> None:
    assert load("template.yaml")["Outputs"]["CollectorRoleArn"]["Value"] == {
        "Fn::GetAtt": ["CollectFunctionRole", "Arn"]
    }


def test_the_ssm_rollout_pushes_the_agent_configuration_in_the_repository() -> None:
    rollout = load("agent/ssm-rollout.yaml")["Resources"]
    pushed = json.loads(rollout["AgentConfig"]["Properties"]["Value"])

    assert pushed == json.loads((ROOT / "agent" / "amazon-cloudwatch-agent.json").read_text())
    assert rollout["InstallAgent"]["Properties"]["Name"] == "AWS-ConfigureAWSPackage"
    assert rollout["InstallAgent"]["Properties"]["Parameters"]["name"] == ["AmazonCloudWatchAgent"]
    configure = rollout["ConfigureAgent"]["Properties"]
    assert configure["Name"] == "AmazonCloudWatch-ManageAgent"
    assert configure["Parameters"]["optionalConfigurationLocation"] == [{"Ref": "AgentConfig"}]


# The action roles' trust, resolved as CloudFormation would for given parameters: exact workflow role names only.


def _trusted(template: str, parameters: dict[str, str]) -> list[str]:
    loaded = load(template)
    values = {
        "AWS::Partition": "aws",
        "AWS::AccountId": "111122223333",
        "AWS::Region": "us-east-1",
        "AWS::StackName": "gpu",
        **{name: str(p.get("Default", "")) for name, p in loaded["Parameters"].items()},
        **parameters,
    }
    trust = loaded["Resources"]["ActionRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
    (arns,) = trust["Condition"]["ArnEquals"].values()
    resolved: list[str] = resolve(arns, values, loaded["Conditions"])
    return resolved


@pytest.mark.parametrize("regions", ["", "eu-west-1", "eu-west-1,ap-southeast-2,us-west-2"])
def test_the_action_roles_trust_each_workflow_role_by_its_exact_name(regions: str) -> None:
    # Before: role/gpu-*-workflow, which a stack named gpu-rightsizer's workflow role also matches.
    expected = [
        f"arn:aws:iam::111122223333:role/gpu-{region}-workflow"
        for region in ["us-east-1", *filter(None, regions.split(","))]
    ]

    assert _trusted("template.yaml", {"ActionRegions": regions}) == expected
    member = {
        "RightsizerAccountId": "111122223333",
        "HubStackName": "gpu",
        "WorkflowRegions": f"us-east-1,{regions}".rstrip(","),
    }
    assert _trusted("member-account/template.yaml", member) == expected
    assert not any("*" in arn for arn in expected)


def test_action_regions_are_limited_to_what_the_trust_can_name() -> None:
    hub, member = load("template.yaml"), load("member-account/template.yaml")
    pattern = re.compile(hub["Parameters"]["ActionRegions"]["AllowedPattern"])
    nine = ",".join(f"eu-west-{n}" for n in range(1, 10))

    assert pattern.fullmatch("") and pattern.fullmatch("eu-west-1") and pattern.fullmatch(nine)
    assert not pattern.fullmatch(nine + ",eu-west-0") and not pattern.fullmatch("eu-west-1, us-west-2")
    assert re.compile(member["Parameters"]["WorkflowRegions"]["AllowedPattern"]).fullmatch("us-east-1," + nine)
    assert len(_trusted("template.yaml", {"ActionRegions": nine})) == 10
