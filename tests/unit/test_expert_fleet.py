"""The expert fleet (tests/expert_fleet.py): every archetype gets the finding a GPU expert expects, and never a stop
of a host that works.

Each archetype is analysed on the bundled catalog and price snapshot of its region. Where the analyzer disagrees
with the expert, the archetype is a strict xfail with the reason in DISAGREEMENTS: the expectation is not weakened,
and the test fails as soon as the analyzer agrees (then the entry goes).
"""

from __future__ import annotations

import pytest

from rightsizer.domain.models.advice import Recommendation
from tests.expert_fleet import (
    ARCHETYPES,
    LIMIT_CATEGORIES,
    TEAMS,
    Archetype,
    Category,
    Team,
    advise,
    advise_team,
    advise_without_dcgm,
    team_violations,
    violations,
)

# archetype name -> why the analyzer's answer differs from the expert's (see the report of the change that added it).
DISAGREEMENTS: dict[str, str] = {}


def _explain(archetype: Archetype, rec: Recommendation, problems: list[str]) -> str:
    lines = [
        f"{archetype.name} ({archetype.instance_type}, {archetype.region}): {archetype.story}",
        f"expected {archetype.expected}: {archetype.why}",
        f"got {rec.finding.value} target={rec.target_type} action={rec.action} confidence={rec.confidence.value} "
        f"cost={rec.monthly_cost} savings={rec.monthly_savings}",
        *(f"  problem: {p}" for p in problems),
        "reasons:",
        *(f"  - {r}" for r in rec.reasons),
    ]
    return "\n".join(lines)


def _params() -> list[object]:
    return [
        pytest.param(
            a,
            id=a.name,
            marks=[pytest.mark.xfail(strict=True, reason=DISAGREEMENTS[a.name])] if a.name in DISAGREEMENTS else [],
        )
        for a in ARCHETYPES
    ]


@pytest.mark.parametrize("archetype", _params())
def test_the_analyzer_gives_the_expert_answer(archetype: Archetype) -> None:
    rec = advise(archetype)

    problems = violations(archetype, rec)

    assert not problems, _explain(archetype, rec, problems)


def test_the_fleet_has_at_least_40_archetypes_across_every_category() -> None:
    names = [a.name for a in ARCHETYPES]

    assert len(ARCHETYPES) >= 40
    assert len(set(names)) == len(names)
    assert {a.category for a in ARCHETYPES} == set(Category)
    assert {a.region for a in ARCHETYPES} >= {"us-east-1", "eu-west-1", "ap-southeast-2"}


def test_every_limit_of_issue_28_is_tried_on_several_workloads_of_several_families() -> None:
    """Storage, network, a lost GPU, held memory and graphics: each capability is tested by workloads of varied kinds,
    sizes and families, so the capability is what passes, not one case."""
    for category in LIMIT_CATEGORIES:
        members = [a for a in ARCHETYPES if a.category is category]
        families = {a.instance_type.split(".")[0] for a in members}
        assert len(members) >= 3 and len(families) >= 2, (category, [a.name for a in members])


@pytest.mark.parametrize(
    "archetype", [a for a in ARCHETYPES if a.category is Category.SIGNALS], ids=lambda archetype: archetype.name
)
def test_only_dcgms_signals_decide_these_right_kernel_time_alone_does_not(archetype: Archetype) -> None:
    """Each archetype of issue 32 proves something about the signals: with the shipped agent configuration (kernel time,
    no DCGM) the analyzer's answer breaks the expert's expectation."""
    blind = advise_without_dcgm(archetype)

    assert violations(archetype, blind), _explain(archetype, blind, ["kernel time alone got it right too"])


def test_the_signals_are_tried_on_several_workloads_of_several_families() -> None:
    members = [a for a in ARCHETYPES if a.category is Category.SIGNALS]
    assert len(members) >= 5 and len({a.instance_type.split(".")[0] for a in members}) >= 3
    # Each publishes DCGM's readings: per GPU, or per GPU instance where its GPUs run in MIG mode.
    assert {a.workload.gpus[0].dcgm != () or a.workload.slices != () for a in members} == {True}


def test_every_archetype_says_what_it_does_and_why() -> None:
    for archetype in ARCHETYPES:
        assert archetype.story and archetype.why and archetype.findings, archetype.name


def test_disagreements_name_archetypes_that_exist() -> None:
    assert set(DISAGREEMENTS) <= {a.name for a in ARCHETYPES}


def _explain_team(team: Team, recs: list[Recommendation], problems: list[str]) -> str:
    lines = [f"{team.name} ({len(team.members)} x {team.instance_type}): {team.story}", f"expected: {team.why}"]
    lines += [f"  problem: {p}" for p in problems]
    for rec in recs:
        lines.append(
            f"{rec.instance_id}: {rec.finding.value} target={rec.target_type} confidence={rec.confidence.value}"
        )
        lines += [f"  - {r}" for r in rec.reasons]
    return "\n".join(lines)


@pytest.mark.parametrize("team", TEAMS, ids=lambda team: team.name)
def test_a_team_of_hosts_gets_the_expert_answer_together(team: Team) -> None:
    recs = advise_team(team)

    problems = team_violations(team, recs)

    assert not problems, _explain_team(team, recs, problems)


@pytest.mark.parametrize("team", [t for t in TEAMS if t.without_dcgm], ids=lambda team: team.name)
def test_only_dcgms_signals_put_these_teams_on_fewer_hosts(team: Team) -> None:
    """Kernel time reads these GPUs saturated, and encoder sessions are no share of an engine: without DCGM the work
    stays where it is, which the expert calls wrong."""
    blind = advise_team(team, dcgm=False)

    assert team_violations(team, blind), _explain_team(team, blind, ["kernel time alone got it right too"])


def test_the_teams_try_compute_and_both_video_engines_on_several_families() -> None:
    assert {t.fewer_hosts for t in TEAMS} == {True, False}
    assert len({t.instance_type.split(".")[0] for t in TEAMS}) >= 3
    signals = {s for t in TEAMS for w in t.members for g in w.gpus for s, _ in g.dcgm}
    assert {"sm_active", "encoder_util", "decoder_util"} <= {s.value for s in signals}
