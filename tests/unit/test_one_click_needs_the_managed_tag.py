"""Issue 21, item 1: Approve only where the instance workflow can act. A host without `<ManagedTagKey>=true` gets
no Approve button, a note with the command that tags it, and the summary says what tagging would unlock."""

from __future__ import annotations

import json
from dataclasses import asdict
from decimal import Decimal
from typing import Any

from rightsizer.adapters.codec import from_jsonable, to_jsonable
from rightsizer.adapters.slack import blocks
from rightsizer.domain.analyzer import analyze_instance
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.domain.scope import ActionScope
from rightsizer.services.report import build_report, fleet_totals, not_actionable_reason, report_json
from rightsizer.settings import Settings
from tests.factories import ACCOUNT, NOW, idle_device, instance, usage
from tests.unit import catalog_fixture as fx
from tests.unit._builders import V100_TOTAL_MIB
from tests.unit.test_report import validate

TAGGED, UNTAGGED = "i-0000000000000000a", "i-0000000000000000b"
COMMAND = f"aws ec2 create-tags --region us-east-1 --resources {UNTAGGED} --tags Key=rightsizer:managed,Value=true"
HOME = ActionScope.of(ACCOUNT, {"us-east-1"})


def idle_p3(instance_id: str, tags: dict[str, str], policy: Policy | None = None) -> Recommendation:
    """An idle p3.8xlarge as the analyzer sees it: one click stops it, if the workflow may touch the host."""
    host = instance("p3.8xlarge", instance_id, tags=tags)
    summary = usage([idle_device(str(i), V100_TOTAL_MIB) for i in range(4)], instance_id=instance_id, cpu_p95=2.0)
    return analyze_instance(host, summary, fx.catalog(), fx.prices(), policy or Policy(), NOW)


def fleet() -> list[Recommendation]:
    return [idle_p3(TAGGED, {"rightsizer:managed": "true"}), idle_p3(UNTAGGED, {"Name": "forgotten"})]


def report_payloads(recs: list[Recommendation]) -> list[dict[str, Any]]:
    report = build_report(recs, NOW, 14, scope=HOME)
    return [m.payload() for m in blocks.daily_report_messages(report, [], top_n=10, scope=HOME)]


def approve_buttons(payloads: list[dict[str, Any]]) -> dict[str, str]:
    """block id of each Approve button -> its action id."""
    return {
        b["block_id"]: e["action_id"]
        for p in payloads
        for b in p["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] in (blocks.ACTION_APPROVE, blocks.ACTION_APPROVE_SCARCE)
    }


def by_id(recs: list[Recommendation]) -> dict[str, Recommendation]:
    return {rec.instance_id: rec for rec in recs}


def test_the_report_offers_approve_only_on_the_tagged_host_and_says_how_to_tag_the_other() -> None:
    recs = by_id(fleet())
    assert recs[TAGGED].finding is recs[UNTAGGED].finding is Finding.IDLE

    payloads = report_payloads(list(recs.values()))

    assert set(approve_buttons(payloads)) == {blocks.actions_id(recs[TAGGED].recommendation_id)}
    text = json.dumps(payloads)
    assert COMMAND in text, "the exact command that lets the workflow act"
    notes = [
        b
        for p in payloads
        for b in p["blocks"]
        if b["type"] == "context" and "No Approve button" in json.dumps(b) and UNTAGGED in json.dumps(b)
    ]
    assert len(notes) == 1 and "is not tagged `rightsizer:managed=true`" in json.dumps(notes[0])


def test_the_summary_says_how_many_hosts_and_how_much_one_click_saving_a_tag_unlocks() -> None:
    recs = fleet()

    summary = json.dumps(report_payloads(recs)[0]["blocks"][1])

    assert "Tagging *1* host(s) `rightsizer:managed=true` would unlock *$8,935.20/month* more with one click" in summary
    totals = fleet_totals(recs, HOME)
    assert (totals.actionable_count, totals.actionable_savings) == (1, Decimal("8935.20"))
    assert (totals.untagged_count, totals.untagged_savings, totals.untagged_savings_net) == (
        1,
        Decimal("8935.20"),
        Decimal("8935.20"),
    )
    assert totals.savings_count == 2 and totals.monthly_savings == Decimal("17870.40")


def test_the_json_and_the_table_give_the_same_reason_and_the_totals_count_what_a_tag_unlocks() -> None:
    recs = by_id(fleet())
    document = report_json(build_report(list(recs.values()), NOW, 14, scope=HOME))

    validate(document)
    rows = {row["instance_id"]: row for row in document["recommendations"]}
    assert (rows[TAGGED]["actionable"], rows[TAGGED]["action"]) == (True, "stop")
    assert (rows[UNTAGGED]["actionable"], rows[UNTAGGED]["action"]) == (False, None)
    assert COMMAND in rows[UNTAGGED]["not_actionable_reason"]
    assert not_actionable_reason(recs[UNTAGGED], HOME) == rows[UNTAGGED]["not_actionable_reason"]
    assert document["totals"]["untagged_recommendations"] == 1
    assert document["totals"]["untagged_savings_usd"] == 8935.20


def test_the_analyzer_reads_the_key_the_settings_carry() -> None:
    settings = Settings.from_env({"MANAGED_TAG_KEY": "team:managed"})
    assert settings.policy.managed_tag_key == settings.managed_tag_key == "team:managed"
    assert Settings(managed_tag_key="ops:ok").policy.managed_tag_key == "ops:ok", "one key for workflow and analyzer"

    custom = idle_p3(UNTAGGED, {"team:managed": "true"}, settings.policy)
    default_key = idle_p3(UNTAGGED, {"team:managed": "true"})
    not_true = idle_p3(UNTAGGED, {"team:managed": "yes"}, settings.policy)  # the workflow and IAM want "true"

    assert (custom.managed, default_key.managed, not_true.managed) == (True, False, False)
    reason = not_actionable_reason(not_true, HOME, settings.managed_tag_key) or ""
    assert "Key=team:managed,Value=true" in reason


def test_a_recommendation_stored_before_the_tag_was_read_is_not_offered_as_one_click() -> None:
    """Unknown is not shown as one click (the button might be a dead end), nor counted as a tag to add."""
    stored = to_jsonable(idle_p3(TAGGED, {"rightsizer:managed": "true"}))
    del stored["managed"]  # an item written by the previous version
    old = from_jsonable(Recommendation, json.loads(json.dumps(stored)))

    assert old.managed is None
    payloads = report_payloads([old])
    assert approve_buttons(payloads) == {}
    assert "the next analysis tells" in json.dumps(payloads)
    totals = fleet_totals([old], HOME)
    assert (totals.actionable_count, totals.untagged_count) == (0, 0)


def test_a_tag_key_that_needs_quoting_is_quoted_in_the_command() -> None:
    rec = idle_p3(UNTAGGED, {}, Policy(managed_tag_key="ops team:managed"))

    reason = not_actionable_reason(rec, HOME, "ops team:managed") or ""

    assert "--tags 'Key=ops team:managed,Value=true'" in reason
    assert asdict(rec)["managed"] is False
