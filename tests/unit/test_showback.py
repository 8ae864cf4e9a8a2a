"""Showback and filters (services.showback): one implementation for the CLI, the daily report, the page and
`/gpu top`. Per group: spend, waste, net savings available, and the resources behind those numbers."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal

import pytest

from rightsizer.adapters.slack import blocks
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.resources import ResourceKind
from rightsizer.services.ranking import Ranking
from rightsizer.services.report import build_report, report_json
from rightsizer.services.showback import (
    BY_TEAM,
    NO_VALUE,
    FilterError,
    Filters,
    GroupBy,
    filters_of,
    showback,
)
from tests.slack_double import NOW, idle, recommendation, schedulable


def fleet() -> list[Recommendation]:
    """search: an idle p3 (waste), an oversized g5 a reservation pays for (waste, no net saving); ads: an office-hours
    host and a right-sized one; a host without a team; an under-provisioned host (it costs more: no waste)."""
    return [
        replace(idle(1), team="search", tags={"team": "search", "env": "prod"}, instance_name="legacy-train-01"),
        replace(recommendation(2), team="search", monthly_savings_net=Decimal("0.00"), tags={"env": "dev"}),
        replace(schedulable(3), team="ads", tags={"env": "prod"}),
        replace(
            recommendation(4, finding=Finding.OPTIMIZED, target_type=None, cost_after="4140.00", actionable=False),
            team="ads",
        ),
        recommendation(5, cost="1000.00", cost_after="600.00"),
        replace(
            recommendation(
                6, finding=Finding.UNDERPROVISIONED, target_type="g6.xlarge", cost="383.98", cost_after="587.50"
            ),
            team="ads",
        ),
    ]


def test_each_team_gets_its_spend_waste_and_net_savings_with_the_hosts_behind_them() -> None:
    grouped = showback(fleet(), BY_TEAM)

    by_key = {group.key: group for group in grouped.groups}
    assert [group.key for group in grouped.groups] == ["search", "ads", NO_VALUE]  # the most waste first
    search = by_key["search"]
    assert search.spend == Decimal("8935.20") + Decimal("4140.00")
    assert search.waste == Decimal("8935.20") + Decimal("3406.00")  # list-price savings of idle and oversized
    assert search.net_savings == Decimal("8935.20")  # the reservation pays for the other whatever is done
    assert search.resources == 2
    assert [host.resource_id for host in search.hosts] == ["i-00000000000000001", "i-00000000000000002"]
    ads = by_key["ads"]
    # The office-hours host's idle hours are waste; the right-sized one and the upsize add none, but cost.
    assert ads.waste == ads.net_savings == Decimal("493.96")
    assert ads.spend == Decimal("734.38") + Decimal("4140.00") + Decimal("383.98")
    assert [host.resource_id for host in ads.hosts] == ["i-00000000000000003"]
    assert by_key[NO_VALUE].net_savings == Decimal("400.00")


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("account", {"123456789012"}),
        ("region", {"us-east-1"}),
        ("tag:env", {"prod", "dev", NO_VALUE}),
        ("TEAM", {"search", "ads", NO_VALUE}),
    ],
)
def test_grouping_by_account_region_or_any_tag(text: str, keys: set[str]) -> None:
    by = GroupBy.parse(text)

    grouped = showback(fleet(), by)

    assert {group.key for group in grouped.groups} == keys
    assert sum(group.spend for group in grouped.groups) == sum(rec.monthly_cost or 0 for rec in fleet())


@pytest.mark.parametrize("text", ["colour", "tag", "tag:", "team:x", ""])
def test_an_unknown_dimension_says_what_would_work(text: str) -> None:
    with pytest.raises(ValueError, match="use team, account, region or tag:KEY"):
        GroupBy.parse(text)


def test_a_node_groups_cost_is_its_nodes_so_it_adds_only_its_saving() -> None:
    node = replace(recommendation(7, finding=Finding.EXCLUDED, target_type=None, cost_after="4140.00"), team="ml")
    group = replace(
        recommendation(8, cost="8280.00", cost_after="2370.00", actionable=False),
        kind=ResourceKind.EKS_NODEGROUP,
        instance_id="eks-nodegroup/ml/gpu",
        team="ml",
    )

    (ml,) = showback([node, group]).groups

    assert ml.spend == Decimal("4140.00")  # the node's; the group's would count it twice
    assert ml.waste == ml.net_savings == Decimal("5910.00")
    assert [host.resource_id for host in ml.hosts] == ["eks-nodegroup/ml/gpu"]


def test_the_rankings_teams_of_its_shards_add_up_to_the_fleets() -> None:
    recs = fleet()
    shards = [Ranking.of(recs[:3], None), Ranking.of(recs[3:], None)]

    merged = Ranking.merge(shards, None).teams

    whole = showback(recs, BY_TEAM)
    assert [(g.key, g.spend, g.waste, g.net_savings, g.resources) for g in merged.groups] == [
        (g.key, g.spend, g.waste, g.net_savings, g.resources) for g in whole.groups
    ]
    assert merged.groups[0].hosts == whole.groups[0].hosts
    assert Ranking.merge(shards, None).report(NOW, 14, None).showback == merged


def test_the_json_carries_the_showback_and_the_daily_report_a_by_team_section() -> None:
    report = build_report(fleet(), NOW, 14)

    document = report_json(report)
    summary = blocks.report_summary_message(report, [], NOW).payload()

    assert document["showback"]["group_by"] == "team"
    search = document["showback"]["groups"][0]
    assert (search["key"], search["waste_usd"], search["net_savings_usd"]) == ("search", 12341.2, 8935.2)
    assert search["behind"][0] == {
        "resource_id": "i-00000000000000001",
        "name": "legacy-train-01",
        "waste_usd": 8935.2,
        "net_savings_usd": 8935.2,
    }
    section = next(block for block in summary["blocks"] if block.get("block_id") == "showback")
    text = section["text"]["text"]
    assert text.startswith("*By team* · spend · waste (idle, oversized, idle hours) · net savings available")
    assert "• *search*: $13,075.20/month · waste $12,341.20 · *$8,935.20* net · legacy-train-01 $8,935.20" in text
    assert "$0.00 net ($3,406.00 wasted at list price)" in text  # the host a reservation pays for
    assert json.dumps(summary).count("showback") == 1


def test_a_fleet_without_teams_has_no_by_team_section() -> None:
    report = build_report([recommendation(n) for n in range(1, 4)], NOW, 14)

    summary = blocks.report_summary_message(report, [], NOW).payload()

    assert not any(block.get("block_id") == "showback" for block in summary["blocks"])


# -- filters


def test_filters_keep_what_every_condition_allows() -> None:
    recs = fleet()

    def ids(filters: Filters) -> list[str]:
        return [rec.instance_id[-1] for rec in filters.apply(recs)]

    assert ids(filters_of([("finding", "idle"), ("finding", "schedulable")])) == ["1", "3"]
    assert ids(filters_of([("min-savings", "$400")])) == ["1", "3", "5"]
    assert ids(filters_of([("team", "search")])) == ["1", "2"]
    assert ids(filters_of([("tag", "env=prod")])) == ["1", "3"]
    assert ids(filters_of([("tag", "env=prod"), ("team", "ads")])) == ["3"]
    assert ids(filters_of([("kind", "sagemaker-endpoint")])) == []
    assert ids(Filters()) == ["1", "2", "3", "4", "5", "6"]
    assert filters_of([("finding", "idle"), ("min-savings", "100"), ("tag", "env=prod")]).describe() == (
        "finding idle; net savings of at least $100.00/month; tag env=prod"
    )


@pytest.mark.parametrize(
    ("term", "message"),
    [
        (("finding", "busy"), "no finding 'busy': one of idle, overprovisioned"),
        (("min-savings", "lots"), "min-savings 'lots' is not an amount of dollars a month"),
        (("tag", "env"), "tag 'env' is not KEY=VALUE"),
        (("kind", "lambda"), "no kind 'lambda': one of ec2, sagemaker-endpoint"),
        (("colour", "red"), "no filter 'colour': use finding, min-savings, team, tag, kind"),
        (("team", ""), "team needs a value"),
    ],
)
def test_a_filter_that_means_nothing_says_what_would_work(term: tuple[str, str], message: str) -> None:
    with pytest.raises(FilterError, match=message):
        filters_of([term])


def test_gpu_top_shows_the_largest_of_what_its_filters_keep() -> None:
    report = build_report(fleet(), NOW, 14)

    (message,) = blocks.top_messages(report, [], 5, NOW, filters=filters_of([("team", "search")]))
    (nothing,) = blocks.top_messages(report, [], 5, NOW, filters=filters_of([("finding", "consolidate")]))

    payload = json.dumps(message.payload())
    assert message.text == "Top 2 of 2 recommendation(s) matching team search"
    assert "i-00000000000000001" in payload and "i-00000000000000002" in payload
    assert "i-00000000000000003" not in payload
    assert nothing.text == "Nothing matching finding consolidate to act on right now."
