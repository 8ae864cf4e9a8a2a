"""Acceptance: the full demo fleet (14 days, two regions) seeded into moto; the CLI finds what each host deserves."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from io import StringIO
from typing import Any

import pytest
from demo import fast_cloudwatch, moto_commitments
from demo.fleet import GROUPS, Host, fleet
from demo.seed import seed

from rightsizer.adapters.bundled import snapshot_prices
from rightsizer.cli import main as cli_main
from tests.environment import use_fake_aws

pytestmark = pytest.mark.integration

REGIONS = ("us-east-1", "eu-west-1")
HOST_KEYS = [host.key for host in fleet()]


@dataclass(frozen=True)
class Outcome:
    code: int
    stderr: str
    document: dict[str, Any]
    hosts: dict[str, Host]  # instance id -> seeded host

    def row_for(self, key: str) -> dict[str, Any]:
        (instance_id,) = [iid for iid, host in self.hosts.items() if host.key == key]
        rows = [row for row in self.document["recommendations"] if row["instance_id"] == instance_id]
        assert len(rows) == 1, f"{key} ({instance_id}) reported {len(rows)} times"
        row: dict[str, Any] = rows[0]
        return row


@pytest.fixture(scope="module")
def outcome() -> Iterator[Outcome]:
    """Seed once per module (module scope runs before conftest's per-test environment: set it here)."""
    from moto import mock_aws

    with pytest.MonkeyPatch.context() as env:
        use_fake_aws(env, TZ="UTC")  # moto's naive timestamps are read as local time
        time.tzset()
        try:
            with mock_aws(), moto_commitments.installed():
                fast_cloudwatch.install(list_once=True)
                try:
                    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
                    hosts = {item.instance_id: item.host for item in seed(end, days=14)}
                    out, err = StringIO(), StringIO()
                    args = ["analyze", *(a for r in REGIONS for a in ("--region", r))]
                    code = cli_main.main(
                        [*args, "--format", "json", "--prices", "snapshot", "--no-progress"], stdout=out, stderr=err
                    )
                finally:
                    fast_cloudwatch.uninstall()
        finally:
            env.undo()
            time.tzset()
    yield Outcome(code, err.getvalue(), json.loads(out.getvalue()) if code == 0 else {}, hosts)


def test_the_run_succeeds_quietly_and_reports_exactly_the_seeded_fleet(outcome: Outcome) -> None:
    assert (outcome.code, outcome.stderr) == (0, "")
    assert outcome.document["warnings"] == []
    assert outcome.document["lookback_days"] == 14
    rows = [row for row in outcome.document["recommendations"] if row["kind"] == "ec2"]
    groups = {row["resource_id"] for row in outcome.document["recommendations"] if row["kind"] != "ec2"}
    assert groups == set(GROUPS)  # the node groups' own advice, beside their nodes
    assert sorted(row["instance_id"] for row in rows) == sorted(outcome.hosts)
    assert {row["instance_id"]: row["region"] for row in rows} == {
        iid: host.region for iid, host in outcome.hosts.items()
    }
    assert outcome.document["totals"]["instances"] == len(HOST_KEYS)
    assert outcome.document["totals"]["unpriced_instances"] == 0


@pytest.mark.parametrize("key", HOST_KEYS)
def test_every_demo_host_gets_its_expected_finding(outcome: Outcome, key: str) -> None:
    row = outcome.row_for(key)
    (host,) = [h for h in outcome.hosts.values() if h.key == key]

    assert row["finding"] == host.expected, row["reasons"]
    assert row["instance_type"] == host.instance_type
    assert row["name"] == host.name


def test_one_click_advice_names_a_priced_target_and_its_cost(outcome: Outcome) -> None:
    actionable = [row for row in outcome.document["recommendations"] if row["actionable"]]

    assert {row["action"] for row in actionable} == {"resize", "stop", "schedule"}
    assert {row["finding"] for row in actionable if row["action"] == "resize"} >= {"overprovisioned"}
    # The upsize's host carries no rightsizer:managed=true, which the instance workflow requires: no one click,
    # and the reason says which tag to set.
    [upsize] = [row for row in outcome.document["recommendations"] if row["name"] == "llm-chat-t4"]
    assert upsize["finding"] == "underprovisioned" and upsize["target_type"] and not upsize["actionable"]
    assert "aws ec2 create-tags" in upsize["not_actionable_reason"]
    assert "Key=rightsizer:managed,Value=true" in upsize["not_actionable_reason"]
    assert {row["finding"] for row in actionable if row["action"] == "stop"} == {"idle"}
    assert {row["finding"] for row in actionable if row["action"] == "schedule"} == {"schedulable"}
    for row in (row for row in actionable if row["action"] == "resize"):
        book = snapshot_prices(row["region"])
        assert book is not None
        assert row["target_type"] not in (None, row["instance_type"]), row
        target_monthly = book.monthly(row["target_type"])
        assert target_monthly is not None, row
        assert row["monthly_cost_after_usd"] == float(target_monthly)
        assert row["monthly_savings_usd"] == pytest.approx(row["monthly_cost_usd"] - row["monthly_cost_after_usd"])
        if row["finding"] == "overprovisioned":
            assert row["monthly_savings_usd"] > 0, row
        if row["finding"] == "underprovisioned":
            assert row["monthly_savings_usd"] < 0, row  # an upsize costs more
