"""The registries of actions and findings are complete, granted and the one place a kind is named.

As cloud-custodian's `test_resource_permissions` iterates its action registry and checks each action's
permissions, the first tests iterate `ACTIONS`: the action role grants every permission a spec names, in both
templates (read, never edited here), and the instance workflow's branch of the action calls it. The last test
counts where individual members are named outside the registries: only in the rules and the workflow, so that
adding a finding is one registry entry plus its rule, and adding an action one module (domain/actions/<kind>.py).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from demo.aws_table import cloudformation_yaml

from rightsizer.domain.action_kinds import ActionKind
from rightsizer.domain.action_spec import ActionSpec
from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.findings import FINDINGS, Finding, advised_action
from tests.iam_reference import IMPLIED_ACTIONS

ROOT = Path(__file__).resolve().parents[2]
STATE_MACHINE = ROOT / "statemachine" / "resize.asl.json"
ACTION_ROLE_TEMPLATES = ("template.yaml", "member-account/template.yaml")
# Every branch calls it first as the action role (CheckActionRole); AWS requires no permission for it.
NEEDS_NO_PERMISSION = frozenset({"sts:GetCallerIdentity"})
# What a call needs besides its own action: a schedule's target runs as the scheduler role, passed to Scheduler.
# An endpoint update's auto-rollback reads its alarm in the caller's name (SageMaker deployment guardrails).
# What a call brings in besides itself (AWS's dependent actions, and what UpdateEndpoint reads in the caller's name).
IMPLIED = IMPLIED_ACTIONS


# ---------------------------------------------------------------------------------------------
# the templates' action role


@cache
def granted(template: str) -> frozenset[str]:
    """The actions the ActionRole's Allow statements name (patterns as written, e.g. ec2:Describe*)."""
    loaded = cloudformation_yaml((ROOT / template).read_text())
    actions: set[str] = set()
    for policy in loaded["Resources"]["ActionRole"]["Properties"]["Policies"]:
        document = policy["PolicyDocument"]
        if isinstance(document, Mapping) and "Fn::Sub" in document:  # a JSON string whose condition keys hold ${...}
            document = json.loads(re.sub(r"\$\{[^}]*\}", "x", document["Fn::Sub"]))
        for statement in document["Statement"]:
            if statement["Effect"] == "Allow":
                named = statement["Action"]
                actions.update([named] if isinstance(named, str) else named)
    return frozenset(actions)


def allows(patterns: frozenset[str], action: str) -> bool:
    return any(fnmatchcase(action.lower(), pattern.lower()) for pattern in patterns)


@pytest.mark.parametrize("template", ACTION_ROLE_TEMPLATES)
@pytest.mark.parametrize("kind", list(ActionKind))
def test_the_action_role_grants_every_permission_of_every_action(kind: ActionKind, template: str) -> None:
    spec = ACTIONS[kind]
    assert spec.permissions, f"{kind} names no permission"
    missing = sorted(p for p in spec.permissions if not allows(granted(template), p))
    assert not missing, f"{template}'s ActionRole does not grant {kind} {missing}"


# ---------------------------------------------------------------------------------------------
# the state machine: which action-role calls each action's branch can reach


def _decided(rule: Mapping[str, Any], action: str) -> bool | None:
    """A Choice rule's value once `$.action` is known: True, False, or None (it depends on something else)."""
    if "And" in rule:
        values = [_decided(part, action) for part in rule["And"]]
        return False if False in values else (True if all(v is True for v in values) else None)
    if "Or" in rule:
        values = [_decided(part, action) for part in rule["Or"]]
        return True if True in values else (False if all(v is False for v in values) else None)
    if "Not" in rule:
        value = _decided(rule["Not"], action)
        return None if value is None else not value
    if rule.get("Variable") == "$.action" and "StringEquals" in rule:
        return bool(rule["StringEquals"] == action)
    return None


def _next_states(state: Mapping[str, Any], action: str) -> Iterator[str]:
    if state["Type"] == "Choice":
        for choice in state["Choices"]:
            value = _decided(choice, action)
            if value is not False:
                yield choice["Next"]
            if value is True:
                return
        if "Default" in state:
            yield state["Default"]
        return
    if "Next" in state:
        yield state["Next"]
    for catch in state.get("Catch", []):
        yield catch["Next"]


def _api(resource: str) -> str:
    """arn:aws:states:::aws-sdk:ec2:stopInstances -> ec2:StopInstances"""
    service, operation = resource.split(":aws-sdk:", 1)[1].split(":", 1)
    return f"{service}:{operation[0].upper()}{operation[1:]}"


@cache
def action_role_calls(action: str) -> frozenset[str]:
    """The AWS SDK tasks run as the action role (task Credentials) that the branch of `action` may reach. Choices on
    anything but `$.action` are followed both ways, so this is a superset of what one execution calls."""
    machine = json.loads(STATE_MACHINE.read_text())
    states = machine["States"]
    seen: set[str] = set()
    stack = [machine["StartAt"]]
    calls: set[str] = set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        state = states[name]
        resource = str(state.get("Resource", ""))
        if state["Type"] == "Task" and ":aws-sdk:" in resource and "Credentials" in state:
            calls.add(_api(resource))
        stack.extend(_next_states(state, action))
    return frozenset(calls)


@pytest.mark.parametrize("kind", list(ActionKind))
def test_every_permission_of_an_action_is_called_by_its_branch_of_the_workflow(kind: ActionKind) -> None:
    reachable = action_role_calls(kind.value)
    needed = reachable | {implied for call in reachable for implied in IMPLIED.get(call, ())}
    assert sorted(ACTIONS[kind].permissions - needed) == [], f"{kind} names permissions its branch never uses"


def test_every_call_the_workflow_makes_as_the_action_role_is_some_actions_permission() -> None:
    every = set().union(*(action_role_calls(kind.value) for kind in ActionKind)) - NEEDS_NO_PERMISSION
    declared = set().union(*(spec.permissions for spec in ACTIONS.values()))
    assert every, "no action-role call found in the state machine"
    assert sorted(every - declared) == []


# ---------------------------------------------------------------------------------------------
# the registries themselves


def test_every_kind_has_one_spec_in_the_enums_order() -> None:
    assert list(ACTIONS) == list(ActionKind)
    assert all(spec.kind is kind for kind, spec in ACTIONS.items())
    assert list(FINDINGS) == list(Finding)
    assert all(spec.finding is finding for finding, spec in FINDINGS.items())


@pytest.mark.parametrize("kind", list(ActionKind))
def test_an_action_has_its_words_and_advice_offers_it_with_a_confirmation(kind: ActionKind) -> None:
    spec: ActionSpec = ACTIONS[kind]
    assert spec.name and spec.done and spec.becomes
    if spec.offered:
        assert spec.target_text and spec.confirm_title and spec.confirm_button and spec.confirm_text
    assert "{target}" in spec.becomes or not spec.needs_target


@pytest.mark.parametrize("finding", list(Finding))
def test_a_finding_either_may_carry_an_offered_action_or_says_why_not(finding: Finding) -> None:
    spec = FINDINGS[finding]
    assert spec.label
    if spec.action is not None:
        assert ACTIONS[spec.action].offered
        assert spec.no_action is None
    if spec.needs_nothing or spec.no_metrics:
        assert spec.no_action and not spec.attention


def test_labels_are_distinct() -> None:
    labels = [spec.label for spec in FINDINGS.values()]
    assert len(set(labels)) == len(labels)


def test_a_target_type_means_a_resize_and_otherwise_the_findings_action() -> None:
    assert advised_action(Finding.EXCLUDED, "g5.xlarge") is ActionKind.RESIZE
    assert advised_action(Finding.OVERPROVISIONED, None) is None
    assert advised_action(Finding.IDLE, None) is ActionKind.STOP
    assert advised_action(Finding.SCHEDULABLE, None) is ActionKind.SCHEDULE
    assert advised_action(Finding.CONSOLIDATE, None) is None


# ---------------------------------------------------------------------------------------------
# where individual members are named: what a new kind would touch

# resources.py: what each action becomes for a kind of resource (a resize of an endpoint variant is its update).
# domain/actions/: one module per action (its spec and its workflow fragment); ActionKind is generated from them.
REGISTRIES = {
    *(f"src/rightsizer/domain/actions/{path.name}" for path in (ROOT / "src/rightsizer/domain/actions").glob("*.py")),
    "src/rightsizer/domain/findings.py",
    "src/rightsizer/domain/resources.py",
}
GENERATED = {"statemachine/resize.asl.json", "src/rightsizer/domain/action_kinds.py"}  # `make asl`
RULES = {  # a finding's rule names it (an EC2 host's: a module of domain/rules/, by concern)
    *(f"src/rightsizer/domain/rules/{path.name}" for path in (ROOT / "src/rightsizer/domain/rules").glob("*.py")),
    "src/rightsizer/domain/consolidation.py",
    *(f"src/rightsizer/domain/node_groups/{concern}.py" for concern in ("nodes", "fit", "group", "advice")),
    *(f"src/rightsizer/domain/sagemaker/{kind}.py" for kind in ("advice", "notebooks", "training")),
    *(f"src/rightsizer/domain/sagemaker/endpoints/{kind}.py" for kind in ("gates", "verdicts", "sizing")),
}
# The execution input and the state machine's builders (the shared workflow; each action's branch is its module).
WORKFLOW = {"src/rightsizer/adapters/aws/workflow.py", "src/rightsizer/domain/workflow_contract.py"}
# Actions named elsewhere, and why: no new action would be.
ENTRY_POINTS = {
    "src/rightsizer/services/approvals.py": {"ActionKind.UNSCHEDULE"},  # `/gpu schedules` → Remove starts it
    "src/rightsizer/services/ports.py": {"ActionKind.RESIZE"},  # the default of approvals stored before the others
}
SCANNED = ("src/rightsizer", "demo", "statemachine")
SHIPPED = ("src", "schema", "statemachine", "docs", "slack", "member-account", "regional", "demo")
TEXT = {".py", ".json", ".md", ".yaml", ".yml"}


def workflow_fragment(path: str) -> bool:
    return path in WORKFLOW or path.startswith(("statemachine/", "src/rightsizer/domain/workflow/"))


def modules_naming_members() -> dict[str, set[str]]:
    """Module path -> the `ActionKind.X` / `Finding.X` it names (an attribute of the enum, as code refers to one)."""
    members = {"ActionKind": set(ActionKind.__members__), "Finding": set(Finding.__members__)}
    found: dict[str, set[str]] = {}
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.attr in members.get(node.value.id, ())
                ):
                    found.setdefault(path.relative_to(ROOT).as_posix(), set()).add(f"{node.value.id}.{node.attr}")
    return found


def naming(enum: str) -> dict[str, set[str]]:
    """The modules besides the registries that name members of `enum`, and which."""
    found = {
        module: {n for n in names if n.startswith(f"{enum}.")} for module, names in modules_naming_members().items()
    }
    return {module: names for module, names in found.items() if names and module not in REGISTRIES}


def closed_lists(values: list[str]) -> set[str]:
    """The files besides tests that quote every one of `values` ("x", 'x' or `x`): lists a new member must join."""
    paths = [p for folder in SHIPPED for p in (ROOT / folder).rglob("*") if p.suffix in TEXT]
    paths += [ROOT / "README.md", ROOT / "template.yaml"]
    patterns = [re.compile(f"[\"'`]{re.escape(value)}[\"'`]") for value in values]
    texts = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in paths}
    return {name for name, text in texts.items() if all(pattern.search(text) for pattern in patterns)}


def test_outside_the_registries_only_rules_name_a_finding() -> None:
    assert set(naming("Finding")) <= RULES, "dispatch on a finding belongs in its FindingSpec (domain/findings.py)"


def test_outside_the_registries_only_the_workflow_names_an_action_but_for_two_entry_points() -> None:
    elsewhere = {module: names for module, names in naming("ActionKind").items() if not workflow_fragment(module)}
    assert all(names <= ENTRY_POINTS.get(module, set()) for module, names in elsewhere.items()), (
        f"dispatch on an action belongs in its module (domain/actions/<kind>.py): {elsewhere}"
    )


def test_only_the_registry_the_generated_schema_and_the_findings_table_list_every_finding() -> None:
    """No other file enumerates the findings: the schema's enum and the table in docs/how-it-decides.md are generated
    from FINDINGS (`make schema`). What a new finding touches is counted by adding one:
    tests/integration/test_new_member_footprint.py."""
    listing = closed_lists([finding.value for finding in Finding])
    assert listing == {"src/rightsizer/domain/findings.py", "schema/report.schema.json", "docs/how-it-decides.md"}
    assert len(listing | {"src/rightsizer/domain/rules/quiet_accelerators.py"}) == 4  # + its rule, by concern


def test_no_hand_written_file_lists_every_action() -> None:
    """Only what `make asl` generates lists every action (ActionKind, from the action modules, and the state
    machine's allow-list, from the registry): no module dispatches on all of them and no document enumerates them by
    hand. What a new action touches is counted by adding one: tests/integration/test_new_member_footprint.py."""
    building = {module for module, names in naming("ActionKind").items() if len(names) == len(ActionKind)}
    listing = closed_lists([kind.value for kind in ActionKind]) - REGISTRIES
    assert building | listing == GENERATED


# -- resource kinds -------------------------------------------------------------------------------


def test_every_resource_kind_has_one_spec_a_distinct_id_prefix_and_the_schemas_enum() -> None:
    import json
    from pathlib import Path

    from rightsizer.domain.resources import RESOURCES, ResourceKind, kind_of, resource_id

    assert list(RESOURCES) == list(ResourceKind) and all(spec.kind is kind for kind, spec in RESOURCES.items())
    prefixes = [spec.id_prefix for spec in RESOURCES.values()]
    assert len(set(prefixes)) == len(prefixes)
    assert not any(a != b and b.startswith(a) for a in prefixes for b in prefixes if a != "i-")
    schema = json.loads(Path("schema/report.schema.json").read_text())
    assert schema["$defs"]["kind"]["enum"] == [kind.value for kind in ResourceKind]
    for kind in ResourceKind:
        names = ("i-0123456789abcdef0",) if kind is ResourceKind.EC2 else ("prod", "gpu-a10g")
        assert kind_of(resource_id(kind, *names)) is kind
    assert resource_id(ResourceKind.SAGEMAKER_ENDPOINT, "chat", "AllTraffic") == "sagemaker-endpoint/chat/AllTraffic"
