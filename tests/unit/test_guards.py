"""The one-click guards' sources (src/rightsizer/domain/guards.py): each action names those it relies on, and the
operator's documentation says what happens when each cannot be read. Each source's behaviour under a fault is tested
through the real handlers in tests/integration/test_pipeline_faults.py."""

from __future__ import annotations

from pathlib import Path

from rightsizer.domain.action_kinds import ActionKind
from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.guards import GUARDS, Source

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def test_every_source_has_a_guard_and_the_operations_guide_says_what_happens_without_it() -> None:
    text = OPERATIONS.read_text()
    assert set(GUARDS) == set(Source)
    for source, guard in GUARDS.items():
        assert guard.source is source
        assert f"| {guard.read} |" in text, f"docs/operations.md: no row for {guard.read}"


def test_every_one_click_on_a_host_relies_on_its_resizes_its_description_and_its_series() -> None:
    host = {Source.RESIZES, Source.DESCRIBED, Source.METRICS}
    assert ACTIONS[ActionKind.RESIZE].guarded_by == host | {Source.OFFERINGS, Source.COMMITMENTS}
    assert ACTIONS[ActionKind.SCHEDULE].guarded_by == host | {Source.OFFERINGS}
    assert ACTIONS[ActionKind.STOP].guarded_by == host, "a stop adds no cost and needs no type to be offered"
