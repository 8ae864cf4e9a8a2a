"""Block Kit messages: Slack's limits hold by construction, long fleets are paginated, nothing is dropped."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.models.blocks import DividerBlock

from rightsizer.adapters.slack import blocks
from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import DecisionKind, Recommendation
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker_models import SageMakerDetail
from rightsizer.services.ports import Approval, Decision
from rightsizer.services.report import build_report
from tests.slack_double import NOW, idle, no_data, recommendation, schedulable, schedule_record

INSTANCE = re.compile(r"i-[0-9a-f]{17}")
SNOOZE, DISMISS = DecisionKind.SNOOZE, DecisionKind.DISMISS


def fleet(listed: int, missing: int = 0, optimized: int = 0) -> list[Recommendation]:
    recs = [recommendation(n, cost_after=f"{700 + n}.00") for n in range(1, listed + 1)]
    recs += [no_data(1000 + n) for n in range(missing)]
    recs += [
        recommendation(5000 + n, finding=Finding.OPTIMIZED, target_type=None, cost_after="4140.00", actionable=False)
        for n in range(optimized)
    ]
    return recs


def payloads(messages: list[blocks.Message]) -> list[dict[str, Any]]:
    return [message.payload() for message in messages]  # to_dict(): raises on any Block Kit limit


def instances_in(part: Any) -> list[str]:
    return INSTANCE.findall(json.dumps(part.get("blocks", part), ensure_ascii=False))


def test_a_120_recommendation_fleet_is_split_into_messages_of_at_most_50_blocks_with_nothing_dropped() -> None:
    recs = fleet(120, missing=7, optimized=5)
    report = build_report(recs, NOW, 14)

    sent = payloads(blocks.daily_report_messages(report, [], top_n=10))

    assert len(sent) > 1
    assert all(len(p["blocks"]) <= blocks.MAX_BLOCKS for p in sent)
    listed = [
        i for p in sent for b in p["blocks"] if (b.get("block_id") or "").startswith("rec:") for i in instances_in(b)
    ]
    assert sorted(listed) == sorted(r.instance_id for r in recs if r.finding is Finding.OVERPROVISIONED)
    assert len(listed) == len(set(listed)) == 120  # each recommendation exactly once
    every = {i for p in sent for i in instances_in(p)}
    assert {r.instance_id for r in recs if r.finding is Finding.INSUFFICIENT_DATA} <= every
    # The first message: summary and exactly the top 10, largest savings first.
    first = sent[0]
    first_listed = [b["block_id"] for b in first["blocks"] if (b.get("block_id") or "").startswith("rec:")]
    assert first_listed == [f"rec:{r.recommendation_id}" for r in report.recommendations[:10]]
    assert "can be saved across *120* recommendation(s)" in json.dumps(first)
    assert "in the thread" in json.dumps(first)
    assert "right-sized: *5*" in json.dumps(first) and "no GPU metrics: *7*" in json.dumps(first)


def test_every_recommendation_shows_current_to_target_savings_confidence_why_and_sparkline() -> None:
    rec = recommendation(1, daily=(0.0, 30.0, 100.0, None, 55.0))
    section = blocks.recommendation_section(rec).to_dict()["text"]["text"]

    assert "`g5.12xlarge` → `g5.xlarge`" in section
    assert "*saves $3,406.00/month*" in section
    assert "high confidence" in section
    assert "busiest GPU p95 12%" in section
    assert "`▁▃█ ▅`" in section
    assert "training-1" in section and rec.instance_id in section


def test_insufficient_data_hosts_are_listed_with_the_agent_pointer_in_sections_under_3000_chars() -> None:
    report = build_report(fleet(2, missing=300), NOW, 14)

    sent = payloads(blocks.daily_report_messages(report, [], top_n=10))

    text = json.dumps(sent, ensure_ascii=False)
    assert "NVIDIA GPU plugin (agent/README.md)" in text
    assert "300 host(s) send no GPU metrics" in text
    hosts = {i for p in sent for i in instances_in(p)}
    assert {f"i-{1000 + n:017x}" for n in range(300)} <= hosts
    sections = [b for p in sent for b in p["blocks"] if b["type"] == "section" and "text" in b]
    assert all(len(b["text"]["text"]) <= 3000 for b in sections)


def test_snoozed_and_dismissed_recommendations_leave_the_list_and_are_counted() -> None:
    recs = fleet(4)
    snoozed, dismissed = recs[0], recs[1]
    expired = NOW - timedelta(hours=1)
    decisions = [
        Decision(SNOOZE, snoozed.account_id, snoozed.region, snoozed.instance_id, "U1", NOW, NOW + timedelta(3)),
        Decision(DISMISS, dismissed.account_id, dismissed.region, dismissed.instance_id, "U2", NOW, None,
                 dismissed.recommendation_id),
        # An expired snooze and a dismissal of older advice hide nothing.
        Decision(SNOOZE, recs[2].account_id, recs[2].region, recs[2].instance_id, "U1", NOW, expired),
        Decision(DISMISS, recs[3].account_id, recs[3].region, recs[3].instance_id, "U2", NOW, None, "rec-old"),
    ]  # fmt: skip

    sent = payloads(blocks.daily_report_messages(build_report(recs, NOW, 14), decisions, top_n=10))

    shown = {i for p in sent for i in instances_in(p)}
    assert shown == {recs[2].instance_id, recs[3].instance_id}
    assert "2 recommendation(s) hidden because they were snoozed or dismissed" in json.dumps(sent)


def test_a_small_fleet_fits_one_message() -> None:
    sent = payloads(blocks.daily_report_messages(build_report(fleet(3, missing=2), NOW, 14), [], top_n=10))

    assert len(sent) == 1
    assert len({i for i in instances_in(sent[0])}) == 5


def test_a_large_top_n_still_respects_50_blocks() -> None:
    sent = payloads(blocks.daily_report_messages(build_report(fleet(60), NOW, 14), [], top_n=40))

    assert all(len(p["blocks"]) <= 50 for p in sent)
    listed = [b for p in sent for b in p["blocks"] if (b.get("block_id") or "").startswith("rec:")]
    assert len(listed) == 60


def test_hostile_or_huge_text_is_escaped_and_shortened_within_limits() -> None:
    rec = replace(
        recommendation(1, name="<!channel> & " + "x" * 5000),
        reasons=("<@U123> " + "why " * 2000,) * 30,
    )

    section = blocks.recommendation_section(rec).to_dict()["text"]["text"]
    detail = blocks.detail_message(rec, now=NOW).payload()
    why = blocks.why_message(rec).payload()

    assert "<!channel>" not in section and "&lt;!channel&gt; &amp;" in section
    assert "<@U123>" not in json.dumps(detail) + json.dumps(why)
    assert len(section) <= 3000


def test_buttons_carry_only_the_recommendation_id_and_approve_confirms_the_change() -> None:
    rec = recommendation(1)
    actions = blocks.recommendation_actions(rec).to_dict()

    assert [e["action_id"] for e in actions["elements"]] == [
        blocks.ACTION_APPROVE,
        blocks.ACTION_DISMISS,
        blocks.ACTION_SNOOZE,
    ]
    assert {e["value"] for e in actions["elements"]} == {rec.recommendation_id}
    assert [e["text"]["text"] for e in actions["elements"]] == ["Approve resize", "Dismiss", "Snooze 7 days"]
    confirm = actions["elements"][0]["confirm"]["text"]["text"]
    assert "g5.12xlarge → g5.xlarge" in confirm
    assert "stopped and started" in confirm and "few minutes" in confirm
    assert "$3,406.00/month" in confirm


def test_the_approve_confirmation_lists_every_risk_of_the_advice() -> None:
    """`show legacy-train-01` says p3.8xlarge is no longer offered: the Approve stop confirmation says it too."""
    gone = "p3.8xlarge is no longer offered in us-east-1: once stopped, it may not start again"
    rec = replace(idle(1), instance_name="legacy-train-01", risks=(gone,))

    approve = blocks.recommendation_actions(rec).to_dict()["elements"][0]
    confirm = approve["confirm"]["text"]["text"]

    assert approve["action_id"] == blocks.ACTION_APPROVE  # not a scarce family: the plain button
    assert confirm.startswith("i-00000000000000001 (legacy-train-01): stop the p3.8xlarge (never terminated")
    assert confirm.endswith(f"⚠ Risk: {gone}.")


def test_a_confirmation_with_many_risks_keeps_them_within_slacks_300_characters() -> None:
    risks = tuple(f"risk number {n}: " + "x" * 60 for n in range(6))
    rec = replace(idle(1, instance_type="p4d.24xlarge"), instance_name="n" * 60, risks=risks)

    text = blocks.approve_confirm(rec).to_dict()["text"]["text"]  # to_dict() raises past Slack's limits

    assert len(text) <= blocks.CONFIRM_TEXT_MAX
    assert "restart capacity is not guaranteed: p4d.24xlarge is scarce" in text  # the first risk
    shown = [risk for risk in risks if risk in text]
    assert shown == list(risks[: len(shown)]), "the next risks in order, each whole"
    assert f"And {len(risks) - len(shown)} more risk(s): /gpu show i-00000000000000001 lists them." in text


def test_the_schedule_confirmation_shows_the_pair_it_creates_in_its_zone() -> None:
    plan = "starts 07:45 Mon-Fri, stops 21:30 Mon-Fri (Europe/Berlin, an hour's margin each side for the clock change)"
    rec = replace(schedulable(1, team="research"), evidence=replace(schedulable(1).evidence, schedule_plan=plan))

    text = blocks.approve_confirm(rec).to_dict()["text"]["text"]

    assert f"stop and start the g5.xlarge on a schedule ({plan})." in text
    assert "08:00-19:00 UTC" not in text  # the busy hours are not what gets created


def test_no_approve_button_without_an_in_place_resize() -> None:
    idle = recommendation(1, finding=Finding.IDLE, target_type=None, cost_after="0.00", actionable=False)

    ids = [e["action_id"] for e in blocks.recommendation_actions(idle).to_dict()["elements"]]

    assert ids == [blocks.ACTION_DISMISS, blocks.ACTION_SNOOZE]
    assert "→ stop" in blocks.recommendation_section(idle).to_dict()["text"]["text"]


def test_resolving_a_click_replaces_only_that_recommendations_buttons() -> None:
    first, second = recommendation(1), recommendation(2)
    message = [b.to_dict() for r in (first, second) for b in blocks.recommendation_blocks(r)]

    updated = blocks.resolve_in_message(message, first.recommendation_id, "Dismissed by <@U1>.")

    assert len(updated) == len(message)
    assert updated[1] == {
        "type": "context",
        "block_id": f"act:{first.recommendation_id}",
        "elements": [{"type": "mrkdwn", "text": "Dismissed by <@U1>."}],
    }
    assert updated[3] == message[3]  # the other recommendation keeps its buttons


def test_top_messages_cap_and_paginate() -> None:
    report = build_report(fleet(40), NOW, 14)

    sent = payloads(blocks.top_messages(report, [], 100, NOW))

    listed = [b for p in sent for b in p["blocks"] if (b.get("block_id") or "").startswith("rec:")]
    assert len(listed) == blocks.MAX_TOP
    assert all(len(p["blocks"]) <= 50 for p in sent)
    assert "at most 25 here" in json.dumps(sent[0])


def test_show_lists_evidence_and_status() -> None:
    rec = recommendation(1)
    snooze = Decision(SNOOZE, rec.account_id, rec.region, rec.instance_id, "U9", NOW, until=NOW + timedelta(days=2))

    detail = json.dumps(blocks.detail_message(rec, decisions=[snooze], now=NOW).payload(), ensure_ascii=False)

    assert "p95 12%" in detail and "peak 95%" in detail and "9.1 GiB of 22.5 GiB" in detail
    assert "Snoozed by <@U9>" in detail
    assert blocks.ACTION_APPROVE not in detail  # hidden advice gets no buttons


@pytest.mark.parametrize(
    ("status", "buttons"),
    [(ApprovalStatus.FAILED, True), (ApprovalStatus.UNCHANGED, True), (ApprovalStatus.RUNNING, False)],
)
def test_show_offers_approve_again_after_an_attempt_that_did_not_succeed(status: ApprovalStatus, buttons: bool) -> None:
    # Before: "Approved by … · status failed" and no button: a failed attempt could never be retried from Slack,
    # though approvals.approve retries it as a new attempt.
    rec = recommendation(1)
    approval = Approval(
        rec.recommendation_id, rec.account_id, rec.region, rec.instance_id, "g5.12xlarge", "g5.4xlarge", "U0A", NOW
    )
    approval = replace(approval, status=status)

    detail = json.dumps(blocks.detail_message(rec, approval=approval, now=NOW).payload(), ensure_ascii=False)

    assert f"status {status} (attempt 1)" in detail
    assert (blocks.ACTION_APPROVE in detail) is buttons
    assert ("an approver may try again" in detail) is buttons


@given(st.lists(st.integers(min_value=1, max_value=50), max_size=60))
def test_paginate_never_splits_a_group_or_drops_a_block(sizes: list[int]) -> None:
    groups = [[DividerBlock(block_id=f"{g}.{n}") for n in range(size)] for g, size in enumerate(sizes)]

    pages = blocks.paginate(groups)

    assert all(len(page) <= 50 for page in pages)
    assert [b.block_id for page in pages for b in page] == [b.block_id for g in groups for b in g]
    starts = {id(g[0]) for g in groups}
    for page in pages:
        assert id(page[0]) in starts  # each page begins a group


def test_a_recommendation_a_reservation_pays_for_shows_list_and_net_savings() -> None:
    rec = replace(
        recommendation(1, cost="4140.00", cost_after="734.00"),
        monthly_savings_net=Decimal("0.00"),
        reasons=("covered by Reserved Instances ri-1 ...: net savings $0.00/month",),
    )

    text = blocks.recommendation_section(rec).to_dict()["text"]["text"]

    # What the bill drops by comes first (the report ranks on it), the list price beside it.
    assert "*saves $0.00/month net* ($3,406.00 at list price" in text
    confirm = blocks.approve_confirm(rec).to_dict()["text"]["text"]
    assert "Saves $0.00/month net ($3,406.00 at list price)." in confirm


def test_the_schedules_listing_stays_within_slacks_limits() -> None:
    hosts = [replace(schedulable(n), instance_name="<!channel> " + "x" * 200) for n in range(40)]
    records = [schedule_record(host, NOW + timedelta(minutes=n)) for n, host in enumerate(hosts)]

    payload = blocks.schedules_message(records).payload()  # raises past a Block Kit limit

    assert len(payload["blocks"]) <= blocks.MAX_BLOCKS
    assert "and 16 more" in json.dumps(payload) and "<!channel>" not in json.dumps(payload)
    first = payload["blocks"][1]
    assert first["accessory"]["value"] == f"123456789012#us-east-1#i-{39:017x}", "newest first"


# -- resources other than EC2 hosts ---------------------------------------------------------------------------------


def _kind(
    rec: Recommendation, kind: ResourceKind, resource: str, detail: SageMakerDetail | None = None
) -> Recommendation:
    return replace(rec, kind=kind, instance_id=resource, sagemaker=detail)


def _buttons(payload: dict[str, Any]) -> list[str]:
    return [
        element["text"]["text"]
        for block in payload["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element.get("action_id", "").startswith("rightsizer_approve")
    ]


def test_an_endpoint_variants_update_and_a_notebooks_stop_carry_their_own_approve_buttons() -> None:
    endpoint = _kind(
        recommendation(1, instance_type="ml.g4dn.12xlarge", target_type="ml.g4dn.xlarge", name="chat"),
        ResourceKind.SAGEMAKER_ENDPOINT,
        "sagemaker-endpoint/chat/AllTraffic",
        SageMakerDetail(endpoint_name="chat", variant_name="AllTraffic", model_name="chat-model", instance_count=1),
    )
    notebook = _kind(
        recommendation(2, finding=Finding.IDLE, instance_type="ml.p3.2xlarge", target_type=None, cost_after="0"),
        ResourceKind.SAGEMAKER_NOTEBOOK,
        "sagemaker-notebook/nb-1",
        SageMakerDetail(notebook_name="nb-1", instance_count=1),
    )

    (endpoint_message, notebook_message) = (
        blocks.detail_message(rec, now=NOW).payload() for rec in (endpoint, notebook)
    )

    assert _buttons(endpoint_message) == ["Approve endpoint update"]
    assert _buttons(notebook_message) == ["Approve stop"]
    text = json.dumps(endpoint_message)
    assert "sagemaker-endpoint/chat/AllTraffic" in text and "ml.g4dn.xlarge" in text


def test_a_node_groups_advice_shows_its_kind_and_no_approve_button() -> None:
    group = replace(
        _kind(recommendation(3, name="gpu-inference"), ResourceKind.EKS_NODEGROUP, "eks-nodegroup/ml/gpu-inference"),
        actionable=False,
        held_back="advice only: EKS managed node group changes are made by its owner",
    )

    message = blocks.detail_message(group, now=NOW).payload()

    assert _buttons(message) == []
    assert "eks-nodegroup/ml/gpu-inference" in json.dumps(message)
