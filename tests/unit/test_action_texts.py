"""Each action's texts name only the placeholders the code that formats them supplies.

`ActionSpec.change` is formatted when an approval starts its workflow (adapters/aws/workflow.py's `_change_text`:
target, count, schedule) and `ActionSpec.confirm_text` when the Approve button is drawn (adapters/slack/blocks.py's
`change_words`: type, target, schedule). A placeholder outside those would raise KeyError only when someone clicks
that action's button; these tests fail first, for every action, and pin what each formatter supplies. `becomes` and
`target_text` are formatted with the target alone.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from rightsizer.adapters.aws import workflow
from rightsizer.adapters.slack import blocks
from rightsizer.domain.action_kinds import ActionKind
from rightsizer.domain.action_spec import ActionSpec
from rightsizer.domain.actions import ACTIONS
from tests.slack_double import recommendation
from tests.unit.test_notify import approval

CHANGE_FIELDS = frozenset({"target", "count", "schedule"})  # what `_change_text` supplies to `ActionSpec.change`
CONFIRM_FIELDS = frozenset({"type", "target", "schedule"})  # what `change_words` supplies to `ActionSpec.confirm_text`


def placeholders(text: str) -> set[str]:
    """The fields `text.format` looks up ("" for a positional `{}`, "target.x" for an attribute of one)."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


class RecordingText(str):
    """A spec's text that records the fields its formatter supplies."""

    supplied: set[str]

    def format(self, *args: Any, **kwargs: Any) -> str:
        self.supplied = set(kwargs)
        return super().format(*args, **kwargs)


def registry_with(spec: ActionSpec) -> Mapping[ActionKind, ActionSpec]:
    """ACTIONS with `spec` in place of its kind's."""
    return {**ACTIONS, spec.kind: spec}


RESIZE = ACTIONS[ActionKind.RESIZE]


def test_placeholders_lists_what_format_looks_up() -> None:
    assert placeholders("resize to {target} x {count}") == {"target", "count"}
    assert placeholders("{} and {target.x}, {{not one}}") == {"", "target.x"}
    assert placeholders("no placeholder") == set()


@pytest.mark.parametrize("kind", list(ACTIONS))
def test_every_actions_change_names_only_what_the_workflow_supplies(kind: ActionKind) -> None:
    assert placeholders(ACTIONS[kind].change) <= CHANGE_FIELDS, kind


@pytest.mark.parametrize("kind", [kind for kind, spec in ACTIONS.items() if spec.offered])
def test_every_offered_actions_confirmation_names_only_what_the_button_supplies(kind: ActionKind) -> None:
    assert ACTIONS[kind].confirm_text, f"{kind} is offered (an Approve button) and says nothing in its confirmation"
    assert placeholders(ACTIONS[kind].confirm_text) <= CONFIRM_FIELDS, kind


@pytest.mark.parametrize("kind", list(ACTIONS))
def test_what_the_host_becomes_and_the_advices_target_name_only_the_target(kind: ActionKind) -> None:
    # `becomes` is formatted with the target alone (services/approvals.py, the confirmation's brief in
    # adapters/slack/blocks.py), as is `target_text` (the advice's "`type` → ..." in adapters/slack/blocks.py).
    assert placeholders(ACTIONS[kind].becomes) <= {"target"}, kind
    assert placeholders(ACTIONS[kind].target_text) <= {"target"}, kind


def test_a_schedule_removal_becomes_what_its_spec_says_as_written() -> None:
    # `/gpu schedules` → Remove records the spec's `becomes` unformatted (services/approvals.py): no placeholder.
    assert placeholders(ACTIONS[ActionKind.UNSCHEDULE].becomes) == set()


def test_the_workflow_formats_the_change_with_exactly_its_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    text = RecordingText("".join(f"<{{{field}}}>" for field in sorted(CHANGE_FIELDS)))
    monkeypatch.setattr(workflow, "ACTIONS", registry_with(replace(RESIZE, change=text)))

    change = workflow._change_text(approval(action=ActionKind.RESIZE, to_type="g5.2xlarge"))

    assert text.supplied == CHANGE_FIELDS
    assert "<g5.2xlarge>" in change


def test_the_button_formats_the_confirmation_with_exactly_its_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    text = RecordingText("".join(f"<{{{field}}}>" for field in sorted(CONFIRM_FIELDS)))
    monkeypatch.setattr(blocks, "ACTIONS", registry_with(replace(RESIZE, confirm_text=text)))
    rec = recommendation(instance_type="g5.12xlarge", target_type="g5.xlarge")
    assert rec.action is ActionKind.RESIZE

    words = blocks.change_words(rec)

    assert text.supplied == CONFIRM_FIELDS
    assert "<g5.12xlarge>" in words
    assert "<g5.xlarge>" in words


def test_a_placeholder_neither_formatter_supplies_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflow, "ACTIONS", registry_with(replace(RESIZE, change="resize to {target} ({volume})")))
    monkeypatch.setattr(blocks, "ACTIONS", registry_with(replace(RESIZE, confirm_text="{type} → {count}")))

    with pytest.raises(KeyError, match="volume"):
        workflow._change_text(approval(action=ActionKind.RESIZE))
    with pytest.raises(KeyError, match="count"):
        blocks.change_words(recommendation())
