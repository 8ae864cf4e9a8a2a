"""What adding an action or a finding costs, counted by doing it: the files a new dummy one touches.

Each test copies the repository's shipped parts to a temporary directory, adds a dummy member the way a contributor
would (for an action its module in domain/actions/: its spec and its workflow fragment; for a finding its registry
entry, with its row's words on its spec, and its rule), runs the generators (`make asl`, `make schema`: the state
machine and ActionKind, the schema's enums and the table of findings in docs/how-it-decides.md) and then the checks
that hold the registries, the generated artefacts and the documents together, in that copy. The files whose bytes
changed are the footprint; the closing note of issue 30 quotes these sets. A new AWS right would add the two
templates' ActionRole statements (CloudFormation stays literal; test_registries.py checks them against the
registry): the dummy action reuses rights the notebook stop already has, so it shows the floor.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What the generators and the registry checks read: the package, the fragments, the schema and its generator, the
# templates and docs.
COPIED = (
    "src",
    "statemachine",
    "schema",
    "report_schema",
    "tests",
    "demo",
    "docs",
    "member-account",
    "regional",
    "slack",
)
COPIED_FILES = ("template.yaml", "README.md", "pyproject.toml")
GENERATORS = (["-m", "statemachine.build", "--write"], ["-m", "report_schema.build", "--write"])
# The checks of the registries against everything that names their members, run in the copy after the change.
CHECKS = (
    "tests/unit/test_registries.py",
    "tests/unit/test_report_schema.py",
    "tests/unit/test_statemachine_build.py",
    "tests/unit/test_findings_documented.py",
    # Every action walks the generated definition to a change, and its input less any field it reads is refused
    # (InvalidRequest) before anything runs: a fragment without its request checks fails here.
    "tests/unit/test_cli_dryrun.py",
)


def _copy(destination: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache")
    for folder in COPIED:
        shutil.copytree(ROOT / folder, destination / folder, ignore=ignore)
    for name in COPIED_FILES:
        shutil.copy2(ROOT / name, destination / name)
    return destination


def _digests(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": f"{copy / 'src'}{os.pathsep}{copy}", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=environment, capture_output=True, text=True, timeout=600, check=False
    )


def _edit(path: Path, anchor: str, insertion: str, *, before: bool = False) -> None:
    """Insert `insertion` after (or before) the one occurrence of `anchor` in `path`."""
    text = path.read_text(encoding="utf-8")
    assert text.count(anchor) == 1, f"{path.name} no longer holds {anchor!r} once: update this test's dummy"
    path.write_text(text.replace(anchor, insertion + anchor if before else anchor + insertion), encoding="utf-8")


def _footprint(tmp_path: Path, change: Callable[[Path], None]) -> tuple[Path, set[str]]:
    copy = _copy(tmp_path / "repo")
    before = _digests(copy)
    change(copy)
    for generator in GENERATORS:
        generated = _run(copy, *generator)
        assert generated.returncode == 0, generated.stderr
    after = _digests(copy)
    checked = _run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *CHECKS)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    return copy, {path for path in after if before.get(path) != after[path]}


# A dummy action as a contributor would write it: one module, its spec beside its fragment (its request checks, where
# it leaves the shared workflow, its own states). It reads the notebook as the notebook stop does (the shared
# SageMaker validation), then parks it with states of its own; its rights are ones the templates already grant.
PARK_NOTEBOOK = '''"""Notebook park (a dummy: tests/integration/test_new_member_footprint.py adds it): stop a notebook
instance with states of its own and follow it until it is Stopped."""

from __future__ import annotations

from rightsizer.domain.action_spec import ActionSpec, kind_of
from rightsizer.domain.workflow.asl import State, compare, equals, fmt, goto, state
from rightsizer.domain.workflow.fragments import (
    CAUSE,
    FAILURE,
    IN,
    POLL,
    audit,
    count_poll,
    ends_as,
    health,
    reset_polls,
    wait,
)
from rightsizer.domain.workflow.plugs import Entry, Fragment, Route
from rightsizer.domain.workflow.sagemaker import (
    NOTEBOOK,
    RESOURCE_FIELDS,
    RETRY_SAGEMAKER_CHANGE,
    SM,
    describe_notebook,
    sagemaker,
)

SPEC = ActionSpec(
    kind_of(__name__),
    name="Notebook park",
    done="Notebook parked",
    becomes="parked",
    change="notebook park",
    target_text="park",
    approve_label="Approve park",
    confirm_title="Park this notebook instance?",
    confirm_button="Park",
    confirm_text="park the {type} notebook instance (running kernels end).",
    permissions=frozenset(
        {"sagemaker:DescribeNotebookInstance", "sagemaker:ListTags", "sagemaker:StopNotebookInstance"}
    ),
)


def states() -> dict[str, State]:
    return {
        "ParkNotebook": sagemaker(
            "stopNotebookInstance",
            {"NotebookInstanceName": SM.name},
            "RecordParkRequested",
            on_error="ParkNotStarted",
            retrier=RETRY_SAGEMAKER_CHANGE,
            result=None,
        ),
        "RecordParkRequested": audit("park_requested", fmt("StopNotebookInstance {}", SM.name), "ResetParkPolls"),
        "ResetParkPolls": reset_polls("WaitForPark"),
        "WaitForPark": wait("DescribeParkedNotebook"),
        "DescribeParkedNotebook": describe_notebook("Parked", on_error="ParkNotStarted"),
        "Parked": state(
            "Choice",
            Choices=[
                goto(equals(NOTEBOOK.dot("Status"), "Stopped"), "NotebookParked"),
                goto(compare(POLL.dot("count"), "GreaterThanEquals", IN.max_polls), "ParkTimedOut"),
            ],
            Default="CountParkPoll",
        ),
        "CountParkPoll": count_poll("WaitForPark"),
        "NotebookParked": health("SageMaker reports it Stopped", "OutcomeNotebookParked"),
        "ParkNotStarted": state(
            "Pass",
            Parameters={"reason": fmt("the park failed: {}", CAUSE)},
            ResultPath=FAILURE,
            Next="OutcomeSageMakerNeedsPerson",
        ),
        "ParkTimedOut": state(
            "Pass",
            Parameters={"reason": fmt("still {} after {} polls", NOTEBOOK.dot("Status"), IN.max_polls)},
            ResultPath=FAILURE,
            Next="OutcomeSageMakerNeedsPerson",
        ),
        "OutcomeNotebookParked": ends_as(
            "succeeded", "succeeded", fmt("Done: notebook instance {} is parked.", SM.name)
        ),
    }


WORKFLOW = Fragment(
    states,
    routes={Entry.LOCKED: Route("DescribeNotebook"), Entry.SAGEMAKER_VALIDATED: Route("ParkNotebook")},
    request=RESOURCE_FIELDS,
    done="DoneSageMaker",
)
'''


def _add_action(copy: Path) -> None:
    (copy / "src/rightsizer/domain/actions/park_notebook.py").write_text(PARK_NOTEBOOK, encoding="utf-8")


def _add_finding(copy: Path) -> None:
    findings = copy / "src/rightsizer/domain/findings.py"
    _edit(findings, '    HELD_UNUSED = "held_unused"\n', '    PARKED = "parked"\n')
    _edit(
        findings,
        "    }\n)\n",
        # Its row in docs/how-it-decides.md is written from these two by `make schema`.
        """        Finding.PARKED: FindingSpec(
            Finding.PARKED,
            "parked",
            no_action="a dummy",
            needs_nothing=True,
            decided_when="never (a dummy)",
            advice="nothing",
        ),
""",
        before=True,
    )
    # Its rule in the module of its concern (a quiet host), first in that module's `RULES`: the registry places the
    # modules, not each rule.
    rules = copy / "src/rightsizer/domain/rules/quiet_accelerators.py"
    _edit(
        rules,
        "# Asked in this order",
        '''def parked(m: Measured) -> Draft | None:
    """A dummy rule: never decides (the footprint test adds it)."""
    return None


''',
        before=True,
    )
    _edit(rules, "RULES: tuple[Rule, ...] = (\n", "    parked,\n")


@pytest.mark.integration
def test_a_new_action_is_one_module_plus_what_make_asl_and_make_schema_generate(tmp_path: Path) -> None:
    copy, touched = _footprint(tmp_path, _add_action)

    assert touched == {
        "src/rightsizer/domain/actions/park_notebook.py",  # its ActionSpec (words, rights) and its workflow fragment
        "src/rightsizer/domain/action_kinds.py",  # generated: `make asl` (its ActionKind member, added last)
        "statemachine/resize.asl.json",  # generated: `make asl` (its allow-list entry, its routes, its states)
        "schema/report.schema.json",  # generated: `make schema`
    }
    machine = json.loads((copy / "statemachine/resize.asl.json").read_text())
    assert "park_notebook" in json.dumps(machine["States"]["CheckScheduleRequest"])  # the allow-list took it
    assert "ParkNotebook" in json.dumps(machine["States"]["SageMakerRoute"])  # the shared Choice routes it
    kinds = (copy / "src/rightsizer/domain/action_kinds.py").read_text()
    assert kinds.rstrip().endswith('PARK_NOTEBOOK = "park_notebook"')  # the others keep their places
    schema = json.loads((copy / "schema/report.schema.json").read_text())
    assert "park_notebook" in schema["$defs"]["recommendation"]["properties"]["action"]["enum"]


@pytest.mark.integration
def test_a_new_finding_touches_its_registry_entry_its_rule_and_two_generated_files(tmp_path: Path) -> None:
    copy, touched = _footprint(tmp_path, _add_finding)

    assert touched == {
        "src/rightsizer/domain/findings.py",  # its Finding member and its FindingSpec (label, severity, row text)
        "src/rightsizer/domain/rules/quiet_accelerators.py",  # its rule, in the module of its concern
        "docs/how-it-decides.md",  # generated: `make schema` writes its row in the table that explains every finding
        "schema/report.schema.json",  # generated: `make schema`
    }
    schema = json.loads((copy / "schema/report.schema.json").read_text())
    assert "parked" in schema["$defs"]["finding"]["enum"]
    page = (copy / "docs/how-it-decides.md").read_text(encoding="utf-8")
    assert "\n| `parked` | never (a dummy) | nothing |\n<!-- findings:end -->\n" in page  # after the others
