"""statemachine/resize.asl.json is generated from the shared workflow (domain/workflow/) and the actions' fragments
(domain/actions/), and agrees with the Python around it: the execution input's fields (WorkflowInput), the Fail
states' errors (WorkflowError), the table's key formats, the generated ActionKind."""

from __future__ import annotations

import json
import pathlib
import re
from dataclasses import fields
from typing import Any

import pytest
from statemachine import build

from rightsizer.adapters.aws.dynamo import keys
from rightsizer.domain.action_kinds import ActionKind
from rightsizer.domain.actions import WORKFLOWS
from rightsizer.domain.schedule_plan import schedule_names
from rightsizer.domain.workflow.asl import Fields, Path, fmt
from rightsizer.domain.workflow.fragments import ENDINGS
from rightsizer.domain.workflow.machine import machine
from rightsizer.domain.workflow.plugs import Entry, Fragment, Route
from rightsizer.domain.workflow_contract import InputKey, ScheduleInput, SchedulePair, WorkflowError, WorkflowInput
from rightsizer.services.notify import progress_of_execution_end

DYNAMODB = "arn:aws:states:::dynamodb:"


def _definition() -> dict[str, Any]:
    return build.build()


def _states() -> dict[str, dict[str, Any]]:
    states: dict[str, dict[str, Any]] = _definition()["States"]
    return states


def test_the_committed_file_is_what_the_fragments_generate() -> None:
    assert build.ASL_PATH.read_text() == build.serialise(build.build()), "run `make asl`"
    assert build.main(["--check"]) == 0


def test_action_kind_is_generated_from_the_action_modules_keeping_its_order(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = build.KINDS_PATH.read_text()
    assert build.kinds_text(build.kinds(committed)) == committed, "run `make asl`"
    assert [kind.value for kind in ActionKind] == build.kinds(committed)
    # A new module is added last (the enums and allow-lists generated from ActionKind only grow); a member without
    # its module goes; a stale file fails the check.
    actions = tmp_path / "actions"
    actions.mkdir()
    for name in ("stop", "resize", "park"):
        (actions / f"{name}.py").write_text("")
    monkeypatch.setattr(build, "ACTIONS_DIR", actions)
    assert build.kinds(committed) == ["resize", "stop", "park"]
    stale = tmp_path / "action_kinds.py"
    stale.write_text(committed)
    monkeypatch.setattr(build, "KINDS_PATH", stale)
    assert build.main(["--check"]) == 1


def test_every_input_path_the_machine_reads_is_a_field_of_the_input() -> None:
    text = build.serialise(_definition())
    # JSONPath reads ($.name) and JSONata states' reads of their input ($states.input.name, or $in.name where the
    # expression names the input $in).
    read = set(re.findall(r"(?<![$\w])\$\.([a-z_]+)", text)) | set(
        re.findall(r"\$(?:states\.input|in)\.([a-z_]+)", text)
    )
    written = {
        str(state["ResultPath"]).removeprefix("$.").split(".")[0]
        for state in _states().values()
        if state.get("ResultPath")
    } | {
        str(c["ResultPath"]).removeprefix("$.")
        for s in _states().values()
        for c in s.get("Catch", [])
        if "ResultPath" in c
    }
    # A JSONata state (or its Catch) writes the keys its Output merges into its input.
    outputs = [s.get("Output", "") for s in _states().values()]
    outputs += [c.get("Output", "") for s in _states().values() for c in s.get("Catch", [])]
    written |= {key for output in outputs for key in re.findall(r"'([a-z_]+)':", str(output))}
    inputs = {key.value for key in InputKey}
    # Lower-case names under $ are the input's fields or what a state wrote; the SDK's answers are capitalised.
    assert read - written <= inputs, read - written - inputs
    assert {"pair", "schedule"} <= read
    nested = set(re.findall(r"\$\.(pair|schedule)\.([a-z_]+)", text))
    declared = {("pair", f.name) for f in fields(SchedulePair)} | {("schedule", f.name) for f in fields(ScheduleInput)}
    assert nested - {("pair", "found")} <= declared  # $.pair.found: FindSchedulePair writes it


def test_paths_are_checked_against_the_dataclass() -> None:
    paths: Any = Fields(WorkflowInput)
    assert paths.instance_id == "$.instance_id" and isinstance(paths.instance_id, Path)
    assert paths.schedule.stop_target.dot("Arn") == "$.schedule.stop_target.Arn"
    with pytest.raises(AttributeError):
        _ = paths.instance
    with pytest.raises(AttributeError):
        _ = paths.pair.stop_cron


def test_formats_inline_literals_and_splice_formats() -> None:
    action = Path("$.action")
    started = fmt("{}_started", action)
    assert fmt("{}#{}", Path("$$.State.EnteredTime"), started) == (
        "States.Format('{}#{}_started', $$.State.EnteredTime, $.action)"
    )
    assert fmt("{}#{}", Path("$$.State.EnteredTime"), "validated") == (
        "States.Format('{}#validated', $$.State.EnteredTime)"
    )
    with pytest.raises(ValueError):
        fmt("{} and {}", action)
    with pytest.raises(ValueError):
        fmt("it's {}", action)


def test_the_fail_states_raise_exactly_the_errors_the_notifier_reads() -> None:
    raised = {state["Error"] for state in _states().values() if state["Type"] == "Fail"}
    assert raised == {error.value for error in WorkflowError}


@pytest.mark.parametrize("kind", [k for k, (_, _, error) in ENDINGS.items() if error is not None])
def test_the_notifier_reads_each_fail_state_as_the_status_its_outcome_states(kind: str) -> None:
    status, fail_state, error = ENDINGS[kind]
    assert _states()[fail_state] == {"Type": "Fail", "Error": error, "CausePath": "$.outcome.message"}
    stated = {s["Parameters"]["status"] for s in _states().values() if s.get("Parameters", {}).get("kind") == kind}
    assert stated == {status}
    detail = {"status": "FAILED", "error": error, "cause": "why", "input": json.dumps({"recommendation_id": "rec-1"})}
    ended = progress_of_execution_end(detail)
    assert ended is not None and ended.status == status


def test_audit_and_lock_items_use_the_tables_key_formats() -> None:
    text = build.serialise(_definition())
    partitions = re.findall(r"\"PK\": \{\s*\"S\.\$\": \"States\.Format\('([^']*)'", text)
    assert set(partitions) == {keys.AUDIT_PK, keys.LOCK_PK}
    # Every audit entry (an action's own too: their number grows with the actions) and the lock's three items.
    items = {name: s for name, s in _states().items() if str(s.get("Resource", "")).startswith(DYNAMODB)}
    audits = [name for name, s in items.items() if "event" in s["Parameters"].get("Item", {})]
    assert len(audits) >= 18 and partitions.count(keys.AUDIT_PK) == len(audits)
    assert set(items) - set(audits) == {"AcquireLock", "ReadLockHolder", "ReleaseLock"}
    assert partitions.count(keys.LOCK_PK) == 3
    audit_sorts = {sk for sk in re.findall(r"\"SK\": \{\s*\"S\.\$\": \"States\.Format\('([^']*)'", text)}
    assert all(sk.startswith("{}#") for sk in audit_sorts)  # keys.AUDIT_SK: time, then the event
    assert '"S": "LOCK"' in text and keys.LOCK_SK == "LOCK"


def test_the_pair_prefix_is_the_one_schedule_names_gives() -> None:
    stop, start = schedule_names("i-0abc")
    listed = [s["Parameters"]["NamePrefix.$"] for s in _states().values() if "listSchedules" in s.get("Resource", "")]
    assert listed == ["States.Format('rightsizer-{}-', $.instance_id)"] * 2
    assert stop.startswith("rightsizer-i-0abc-") and start.startswith("rightsizer-i-0abc-")


def test_the_definition_is_json_the_file_holds() -> None:
    assert json.loads(build.ASL_PATH.read_text()) == _definition()


def test_an_action_whose_fragment_routes_nowhere_fails_the_build_instead_of_running_another_path() -> None:
    """Every Default of the shared workflow is a shared path or another action's: an action that leaves the shared
    workflow nowhere would run the EC2 host checks and, past StopOnly, a resize."""
    actions = {kind.value: fragment for kind, fragment in WORKFLOWS.items()}
    lost = Fragment(dict, routes={})
    with pytest.raises(ValueError, match=r"routes nowhere .*\['reboot'\]"):
        machine({**actions, "reboot": lost})


def test_a_choice_without_a_shared_path_needs_exactly_one_action_that_takes_the_rest() -> None:
    actions = {kind.value: fragment for kind, fragment in WORKFLOWS.items()}
    greedy = Fragment(dict, routes={Entry.STOPPED: Route("Elsewhere", rest=True)})
    with pytest.raises(ValueError, match=r"StopOnly.*exactly one action that takes the rest"):
        machine({**actions, "reboot": greedy})


def test_a_new_actions_routes_join_the_shared_choices_in_the_registrys_order() -> None:
    actions = {kind.value: fragment for kind, fragment in WORKFLOWS.items()}
    park = Fragment(
        lambda: {"Park": {"Type": "Pass", "Next": "OutcomeSucceeded"}},
        routes={Entry.LOCKED: Route("DescribeNotebook"), Entry.SAGEMAKER_VALIDATED: Route("Park")},
        done="DoneSageMaker",
    )
    states = machine({**actions, "park": park})["States"]
    assert isinstance(states, dict)
    joined = states["ResourceRoute"]["Choices"][-1]  # with the notebook stop (and any other), which goes there too
    assert joined["Next"] == "DescribeNotebook"
    assert joined["Or"][0] == {"Variable": "$.action", "StringEquals": "stop_notebook"}
    assert joined["Or"][-1] == {"Variable": "$.action", "StringEquals": "park"}
    assert states["SageMakerRoute"]["Choices"][-1] == {
        "Variable": "$.action",
        "StringEquals": "park",
        "Next": "Park",
    }
    assert states["SageMakerRoute"]["Default"] == "StopNotebook"
    assert {"Variable": "$.action", "StringEquals": "park"} in states["CheckScheduleRequest"]["Choices"][0]["Not"]["Or"]
