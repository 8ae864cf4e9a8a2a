"""`analyze --output json` streamed (adapters/spill.py, services/analyze.py's `analyze_into`, cli/output/report.py's
`write_ranked_json`) writes the bytes the report held in memory writes.

The expert fleet's hosts (tests/expert_fleet.py), each with a twin (same type, tags and usage, another id) so that every
step across hosts has groups to work on: placement groups, consolidation (a team's hosts of one type in one zone), node
groups (Auto Scaling groups, Kubernetes nodes); region by region, as the CLI analyses them. The fleet is analysed whole
in memory, each step across hosts over every recommendation at once (`analyze_hosts`, `build_report`, `write_report`),
and as the CLI streams it (`analyze_into` a spilled store, one group at a time), and the two documents must be equal
byte for byte, narrowed or not.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import replace
from io import StringIO

import pytest

from rightsizer.adapters.spill import SpilledAdvice
from rightsizer.cli.options import Narrowing
from rightsizer.cli.output.report import write_ranked_json, write_report
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.services.analyze import analyze_hosts, analyze_into
from rightsizer.services.report import build_report
from tests import factories
from tests.expert_fleet import ARCHETYPES, host, usage

REGIONS = sorted({archetype.region for archetype in ARCHETYPES})


def _twin(instance: Instance, summary: UsageSummary) -> tuple[Instance, UsageSummary]:
    twin_id = instance.instance_id[:-1] + ("0" if instance.instance_id[-1] != "0" else "1")
    return replace(instance, instance_id=twin_id), replace(summary, instance_id=twin_id)


def _region(region: str) -> tuple[list[Instance], list[UsageSummary]]:
    """The region's hosts (of the team ml where they have none) and their twins, and their summaries (a twin's arrives
    first, as a later batch's may)."""
    instances, summaries = [], []
    for archetype in ARCHETYPES:
        if archetype.region != region:
            continue
        instance = host(archetype)
        instance = replace(instance, tags={"team": "ml", **instance.tags})  # a team: consolidation has groups
        summary = usage(archetype.name)
        twin, twin_summary = _twin(instance, summary)
        instances += [instance, twin]
        summaries += [twin_summary, summary]
    return instances, summaries


def _analysed(store: SpilledAdvice | None) -> list[Recommendation]:
    recommendations: list[Recommendation] = []
    for region in REGIONS:
        instances, summaries = _region(region)
        catalog, prices, policy = factories.catalog(region), factories.prices(region), Policy()
        if store is None:
            usage = {summary.instance_id: summary for summary in summaries}
            recommendations += analyze_hosts(instances, usage, catalog, prices, policy, factories.NOW, {})
        else:
            analyze_into(store, instances, summaries, catalog, prices, policy, factories.NOW, {})
    return recommendations


@pytest.fixture(scope="module")
def in_memory() -> list[Recommendation]:
    return _analysed(None)


@pytest.fixture
def spilled() -> Iterator[SpilledAdvice]:
    with SpilledAdvice() as store:
        _analysed(store)
        yield store


def _narrowing(*words: str) -> Narrowing:
    args = argparse.Namespace(finding=None, min_savings=None, team=None, tag=None, kind=None, group_by=None)
    for word in words:
        name, _, value = word.partition("=")
        if name in ("group_by", "min_savings"):
            setattr(args, name, value)
        else:
            setattr(args, name, [*(getattr(args, name) or []), value])
    return Narrowing.of(args)


NARROWINGS = {
    "the whole fleet": (),
    "by account": ("group_by=account",),
    "idle and oversized hosts of the team ml": ("finding=idle", "finding=overprovisioned", "team=ml"),
    "savings of $100 or more, by region": ("min_savings=100", "group_by=region"),
    "nothing kept": ("finding=consolidate", "team=nobody"),
}


@pytest.mark.parametrize("name", NARROWINGS)
def test_the_streamed_document_is_the_in_memory_one_byte_for_byte(
    name: str, in_memory: list[Recommendation], spilled: SpilledAdvice
) -> None:
    narrowing = _narrowing(*NARROWINGS[name])
    report = build_report(in_memory, factories.NOW, 14, ["a warning"], home_account=factories.ACCOUNT)
    held, streamed = StringIO(), StringIO()
    write_report(narrowing.apply(report), "json", held)

    head = build_report([], factories.NOW, 14, ["a warning"], home_account=factories.ACCOUNT)
    write_ranked_json(narrowing.head(head, spilled.ranked), narrowing.kept(spilled.ranked)(), streamed)

    assert streamed.getvalue() == held.getvalue()


def test_the_fleet_exercises_every_step_across_hosts(in_memory: list[Recommendation]) -> None:
    """What makes the comparison above worth its salt: groups of every kind, and advice rewritten by them."""
    findings = {rec.finding for rec in in_memory}
    assert Finding.CONSOLIDATE in findings
    assert any(rec.kind.value != "ec2" for rec in in_memory)  # node groups' own advice
    assert any("placement group" in rec.reasons[0] for rec in in_memory if rec.reasons)
    assert len(in_memory) > 2 * len(ARCHETYPES)
    assert len({(rec.account_id, rec.region, rec.instance_id) for rec in in_memory}) == len(in_memory)


def test_a_store_keeps_a_recommendation_put_again_in_its_place(in_memory: list[Recommendation]) -> None:
    """Put again, a recommendation replaces the one kept under its (account, region, id) and keeps its order, which
    ranks it among those that tie on savings (the same id in two regions, both unpriced)."""
    here = replace(in_memory[0], monthly_cost=None, monthly_cost_after=None, monthly_savings_net=None)
    there = replace(here, region="eu-north-1")
    with SpilledAdvice() as store:
        store.put(here, order=1)
        store.put(there, order=0)
        store.put(replace(here, reasons=("rewritten",)))
        assert len(store) == 2
        rec, summary = store.taken(here.account_id, here.region, here.instance_id)
        assert rec.reasons == ("rewritten",) and summary is None
        assert [(rec.region, rec.reasons[:1]) for rec in store.ranked()] == [
            ("eu-north-1", here.reasons[:1]),
            (here.region, ("rewritten",)),
        ]
