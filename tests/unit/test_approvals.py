"""Approve / dismiss / snooze use-cases over an in-memory store that keeps DynamoStore's contracts."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import ActionKind, Finding
from rightsizer.domain.schedule_plan import SchedulePlan
from rightsizer.domain.scope import ActionScope
from rightsizer.services import approvals
from rightsizer.services.approvals import DurationError, Outcome
from rightsizer.services.ports import Approval
from tests.fakes import MemoryStore
from tests.slack_double import ACCOUNT, NOW, idle, no_data, recommendation, schedulable, schedule_record, superseding

APPROVER, OTHER = "U0APPROVER", "U0MALLORY"


class RecordingWorkflow:
    def __init__(self, fail: Exception | None = None) -> None:
        self.started: list[Approval] = []
        self.fail = fail

    def start(self, approval: Approval) -> str:
        self.started.append(approval)
        if self.fail is not None:
            raise self.fail
        return f"arn:aws:states:us-east-1:123456789012:execution:rightsizer-resize:{approval.recommendation_id}"


def only(user: str) -> Any:
    return lambda actor: actor == user


RULES = approvals.ApprovalRules(only(APPROVER))


REQUEST_FIELDS = frozenset({"capacity_risk_confirmed", "slack_channel", "slack_ts"})
RULE_FIELDS = frozenset({"scope", "time_zone", "managed_tag_key"})


def approve(store: MemoryStore, workflow: RecordingWorkflow, rec_id: str, actor: str = APPROVER, **kw: Any) -> Any:
    """One click by `actor` (an approver unless told), the request's and the rules' fields by name."""
    request = approvals.ApprovalRequest(
        rec_id, actor, kw.pop("now", NOW), **{k: kw.pop(k) for k in REQUEST_FIELDS & kw.keys()}
    )
    rules = approvals.ApprovalRules(only(APPROVER), **{k: kw.pop(k) for k in RULE_FIELDS & kw.keys()})
    return approvals.approve(store, lambda: workflow, request, rules, **kw)


# -- durations -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12h", timedelta(hours=12)),
        ("3d", timedelta(days=3)),
        ("2w", timedelta(weeks=2)),
        ("3 days", timedelta(days=3)),
        ("1 Week", timedelta(weeks=1)),
        ("90d", timedelta(days=90)),
        (" 1h ", timedelta(hours=1)),
    ],
)
def test_parse_duration_accepts_hours_days_weeks(text: str, expected: timedelta) -> None:
    assert approvals.parse_duration(text) == expected


@pytest.mark.parametrize("text", ["0d", "91d", "13w", "2161h", "abc", "", "3x", "-1d", "1.5d", "d3", "3d4h"])
def test_parse_duration_rejects_with_a_hint(text: str) -> None:
    with pytest.raises(DurationError, match=r"e\.g\.|at least|at most"):
        approvals.parse_duration(text)


@given(st.text(max_size=30))
def test_parse_duration_only_raises_duration_errors(text: str) -> None:
    try:
        duration = approvals.parse_duration(text)
    except DurationError:
        return
    assert timedelta(hours=1) <= duration <= approvals.MAX_SNOOZE


# -- approve -------------------------------------------------------------------------------------


def test_approver_starts_the_workflow_once_and_it_is_recorded() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()

    result = approve(store, workflow, rec.recommendation_id, slack_channel="C1", slack_ts="171.1")

    assert result.outcome is Outcome.STARTED
    assert [a.to_type for a in workflow.started] == ["g5.xlarge"]
    stored = store.approval(rec.recommendation_id)
    assert stored is not None
    assert (stored.status, stored.approver, stored.slack_channel, stored.slack_ts) == (
        ApprovalStatus.RUNNING,
        APPROVER,
        "C1",
        "171.1",
    )
    assert stored.execution_arn.endswith(rec.recommendation_id)
    assert store.events() == ["approve"]


def test_second_approval_does_not_start_a_second_workflow() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    approve(store, workflow, rec.recommendation_id)

    again = approve(store, workflow, rec.recommendation_id, now=NOW + timedelta(seconds=1))

    assert again.outcome is Outcome.ALREADY_APPROVED
    assert again.approval is not None and again.approval.approver == APPROVER
    assert len(workflow.started) == 1


def test_non_approver_is_refused_and_audited() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()

    result = approve(store, workflow, rec.recommendation_id, actor=OTHER)

    assert result.outcome is Outcome.NOT_APPROVER
    assert workflow.started == [] and store.approvals == {}
    assert [(e.event, e.actor) for e in store.audits] == [("approve-refused", OTHER)]


def test_superseded_recommendation_is_refused() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    store.publish(superseding(rec))

    result = approve(store, workflow, rec.recommendation_id)

    assert result.outcome is Outcome.STALE
    assert workflow.started == [] and store.approvals == {}


def test_unknown_and_not_actionable_recommendations_start_nothing() -> None:
    advice = recommendation(2, finding=Finding.OPTIMIZED, target_type=None, cost_after="4140.00", actionable=False)
    store, workflow = MemoryStore.of(advice), RecordingWorkflow()

    assert approve(store, workflow, "rec-nope").outcome is Outcome.NOT_FOUND
    assert approve(store, workflow, advice.recommendation_id).outcome is Outcome.NOT_ACTIONABLE
    assert workflow.started == []


def test_failed_start_is_reported_and_a_later_approval_retries() -> None:
    rec = recommendation()
    store = MemoryStore.of(rec)
    broken = RecordingWorkflow(fail=RuntimeError("throttled"))

    failed = approve(store, broken, rec.recommendation_id)
    assert failed.outcome is Outcome.FAILED and "could not be started" in failed.detail
    assert "RuntimeError" not in failed.detail, "no exception names for people"
    assert failed.cause == "RuntimeError: throttled", "but the log gets them"
    stored = store.approval(rec.recommendation_id)
    assert stored is not None and stored.status is ApprovalStatus.START_FAILED

    working = RecordingWorkflow()
    retried = approve(store, working, rec.recommendation_id, now=NOW + timedelta(seconds=5))
    assert retried.outcome is Outcome.STARTED
    assert len(working.started) == 1
    assert "approve-failed" in store.events() and "approve-resumed" in store.events()


def test_an_approval_abandoned_before_its_workflow_started_is_resumed_only_when_old() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    # A winner that wrote the approval and died before StartExecution.
    store.create_approval(
        Approval(
            rec.recommendation_id,
            rec.account_id,
            rec.region,
            rec.instance_id,
            "g5.12xlarge",
            "g5.xlarge",
            APPROVER,
            NOW,
        )
    )

    soon = approve(store, workflow, rec.recommendation_id, now=NOW + timedelta(seconds=10))
    assert soon.outcome is Outcome.ALREADY_APPROVED and workflow.started == []

    later = approve(store, workflow, rec.recommendation_id, now=NOW + approvals.RESUME_AFTER)
    assert later.outcome is Outcome.STARTED and len(workflow.started) == 1


# -- dismiss and snooze --------------------------------------------------------------------------


def test_dismiss_hides_that_advice_only() -> None:
    rec = recommendation()
    store = MemoryStore.of(rec)

    result = approvals.dismiss(store, rec.recommendation_id, OTHER, now=NOW)

    assert result.outcome is Outcome.DISMISSED
    assert [(d.kind, d.recommendation_id, d.actor) for d in store.decisions] == [
        ("dismiss", rec.recommendation_id, OTHER)
    ]
    assert approvals.hidden_by(rec, store.decisions, NOW) is not None
    assert approvals.hidden_by(superseding(rec), store.decisions, NOW) is None  # new advice shows again
    assert store.events() == ["dismiss"]


def test_snooze_hides_the_host_until_it_expires() -> None:
    rec = recommendation()
    store = MemoryStore.of(rec)

    result = approvals.snooze(store, rec.recommendation_id, OTHER, now=NOW)

    assert result.outcome is Outcome.SNOOZED and result.until == NOW + timedelta(days=7)
    newer = superseding(rec)
    visible, hidden = approvals.split_hidden([rec, newer, recommendation(2)], store.decisions, NOW + timedelta(days=6))
    assert [r.instance_id for r in hidden] == [rec.instance_id, newer.instance_id]
    assert [r.instance_id for r in visible] == [recommendation(2).instance_id]
    assert approvals.hidden_by(rec, store.decisions, NOW + timedelta(days=7, seconds=1)) is None


def test_buttons_on_superseded_advice_write_nothing() -> None:
    rec = recommendation()
    store = MemoryStore.of(rec)
    store.publish(superseding(rec))

    assert approvals.dismiss(store, rec.recommendation_id, OTHER, now=NOW).outcome is Outcome.STALE
    assert approvals.snooze(store, rec.recommendation_id, OTHER, now=NOW).outcome is Outcome.STALE
    assert approvals.dismiss(store, "rec-gone", OTHER, now=NOW).outcome is Outcome.NOT_FOUND
    assert store.decisions == []


def test_snooze_instance_by_id() -> None:
    rec = no_data(3)
    store = MemoryStore.of(rec)

    result = approvals.snooze_instance(store, rec.instance_id, OTHER, now=NOW, duration=timedelta(hours=12))

    assert result.outcome is Outcome.SNOOZED
    assert store.decisions[0].until == NOW + timedelta(hours=12)
    assert approvals.snooze_instance(
        store, "i-00000000deadbeef0", OTHER, now=NOW, duration=timedelta(days=1)
    ).outcome is (Outcome.NOT_FOUND)
    with pytest.raises(DurationError):
        approvals.snooze_instance(store, rec.instance_id, OTHER, now=NOW, duration=timedelta(days=91))


def test_the_winner_opens_a_thread_before_the_workflow_starts() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    opened: list[str] = []

    def open_thread(approval: Approval) -> tuple[str, str]:
        assert workflow.started == []  # progress events can only come after this
        opened.append(approval.approver)
        return "C0REPORT", "1764590400.000009"

    first = approve(store, workflow, rec.recommendation_id, open_thread=open_thread)
    again = approve(store, workflow, rec.recommendation_id, open_thread=open_thread)

    assert opened == [APPROVER]
    assert (workflow.started[0].slack_channel, workflow.started[0].slack_ts) == ("C0REPORT", "1764590400.000009")
    assert first.approval is not None and first.approval.slack_ts == "1764590400.000009"
    assert again.outcome is Outcome.ALREADY_APPROVED


def test_a_status_the_notifier_already_moved_on_is_not_set_back() -> None:
    rec = recommendation()
    store = MemoryStore.of(rec)

    class RefusedAtOnce(RecordingWorkflow):
        def start(self, approval: Approval) -> str:
            arn = super().start(approval)
            store.update_approval(approval.recommendation_id, status=ApprovalStatus.REFUSED, execution_arn=arn)
            return arn

    result = approve(store, RefusedAtOnce(), rec.recommendation_id)

    assert result.outcome is Outcome.STARTED
    assert result.approval is not None and result.approval.status is ApprovalStatus.REFUSED


@pytest.mark.parametrize("decide", ["dismiss", "snooze"])
def test_dismissed_or_snoozed_advice_cannot_be_approved_from_an_older_message(decide: str) -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    getattr(approvals, decide)(store, rec.recommendation_id, OTHER, now=NOW)

    result = approve(store, workflow, rec.recommendation_id, now=NOW + timedelta(hours=1))

    assert result.outcome is Outcome.HIDDEN
    assert result.decision is not None and (result.decision.kind, result.decision.actor) == (decide, OTHER)
    assert workflow.started == [] and store.approvals == {}
    assert store.events()[-1] == "approve-refused"


def test_an_expired_snooze_no_longer_blocks_the_approval() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    approvals.snooze(store, rec.recommendation_id, OTHER, now=NOW, duration=timedelta(hours=1))

    result = approve(store, workflow, rec.recommendation_id, now=NOW + timedelta(hours=2))

    assert result.outcome is Outcome.STARTED


def test_hosts_outside_the_workflows_reach_are_refused_with_what_to_deploy() -> None:
    elsewhere = recommendation(region="eu-west-1")
    store, workflow = MemoryStore.of(elsewhere), RecordingWorkflow()
    scope = ActionScope.of(ACCOUNT, {"us-east-1"})

    result = approve(store, workflow, elsewhere.recommendation_id, scope=scope)

    assert result.outcome is Outcome.OUT_OF_SCOPE
    assert "eu-west-1" in result.detail and "us-east-1" in result.detail and "regional/template.yaml" in result.detail
    assert workflow.started == [] and store.approvals == {}
    assert approvals.can_act(elsewhere) and not approvals.can_act(elsewhere, scope)
    assert approvals.can_act(elsewhere, ActionScope.of(ACCOUNT, {"us-east-1", "eu-west-1"}))


def test_member_accounts_are_reached_only_when_the_stack_allows_it() -> None:
    member = replace(recommendation(), account_id="444455556666")
    own_only = ActionScope.of(ACCOUNT, {"us-east-1"})
    with_members = ActionScope.of(ACCOUNT, {"us-east-1"}, member_accounts=True)

    refusal = own_only.refusal(member.instance_id, member.account_id, member.region)
    assert refusal is not None and "EnableActions=true" in refusal and "MemberActions=true" in refusal
    assert with_members.refusal(member.instance_id, member.account_id, member.region) is None
    store, workflow = MemoryStore.of(member), RecordingWorkflow()
    assert approve(store, workflow, member.recommendation_id, scope=with_members).outcome is Outcome.STARTED
    assert workflow.started[0].account_id == "444455556666"


# -- stops and schedules --------------------------------------------------------------------------


def test_an_idle_host_is_stopped_by_one_click() -> None:
    host = idle(3)
    store, workflow = MemoryStore.of(host), RecordingWorkflow()

    result = approve(store, workflow, host.recommendation_id)

    assert result.outcome is Outcome.STARTED
    (started,) = workflow.started
    assert (started.action, started.from_type, started.to_type) == (ActionKind.STOP, "p3.8xlarge", "stopped")
    assert store.audits[-1].detail == "stop p3.8xlarge -> stopped"


def test_stopping_a_scarce_type_needs_the_explicit_confirmation() -> None:
    host = idle(4, instance_type="p4d.24xlarge", cost="23922.10")
    store, workflow = MemoryStore.of(host), RecordingWorkflow()

    refused = approve(store, workflow, host.recommendation_id)
    assert refused.outcome is Outcome.NEEDS_CONFIRMATION and "no explicit confirmation" in refused.detail
    assert workflow.started == [] and store.audits[-1].event == "approve-refused"

    confirmed = approve(store, workflow, host.recommendation_id, capacity_risk_confirmed=True)
    assert confirmed.outcome is Outcome.STARTED
    assert workflow.started[0].capacity_risk_confirmed is True
    assert "confirmed: restart capacity is not guaranteed" in store.audits[-1].detail


def test_a_scarce_host_in_a_capacity_reservation_is_stopped_with_a_plain_approve() -> None:
    # The reservation holds its restart capacity: no risk to confirm, and none is recorded as confirmed.
    host = replace(idle(7, instance_type="p4d.24xlarge", cost="23922.10"), capacity_reservation="cr-0p4d")
    store, workflow = MemoryStore.of(host), RecordingWorkflow()

    result = approve(store, workflow, host.recommendation_id)

    assert result.outcome is Outcome.STARTED
    assert workflow.started[0].capacity_risk_confirmed is False
    assert "restart capacity is not guaranteed" not in store.audits[-1].detail


def test_a_host_the_analysis_found_untagged_is_refused_in_the_reports_words() -> None:
    untagged = replace(idle(8), managed=False)
    unknown = replace(idle(9), managed=None)  # stored before tags were read: the workflow checks the tag itself
    store, workflow = MemoryStore.of(untagged, unknown), RecordingWorkflow()

    refused = approve(store, workflow, untagged.recommendation_id, managed_tag_key="rightsizer:managed")
    assert refused.outcome is Outcome.OUT_OF_SCOPE
    assert "is not tagged `rightsizer:managed=true`" in refused.detail and "aws ec2 create-tags" in refused.detail
    assert workflow.started == [] and store.audits[-1].event == "approve-refused"

    assert approve(store, workflow, unknown.recommendation_id, managed_tag_key="rightsizer:managed").outcome is (
        Outcome.STARTED
    )


def test_a_schedule_is_written_in_the_teams_time_zone() -> None:
    host = schedulable(5, team="research")
    store, workflow = MemoryStore.of(host), RecordingWorkflow()

    result = approve(
        store, workflow, host.recommendation_id, time_zone=lambda rec: {"research": "Europe/Berlin"}[rec.team]
    )

    assert result.outcome is Outcome.STARTED
    (started,) = workflow.started
    assert started.action is ActionKind.SCHEDULE and started.to_type == "stop/start schedule"
    assert started.instance_name == host.instance_name and host.instance_name
    # 08:00-19:00 UTC in December is 09:00-20:00 in Berlin; the start fires 15 minutes early for the boot, the
    # stop 30 minutes late for late work, and Berlin changes its clock: an hour more each side.
    assert started.schedule == SchedulePlan(
        stop_cron="cron(30 21 ? * MON-FRI *)",
        start_cron="cron(45 7 ? * MON-FRI *)",
        time_zone="Europe/Berlin",
        description="starts 07:45 Mon-Fri, stops 21:30 Mon-Fri (Europe/Berlin, an hour's margin each side for the "
        "clock change)",
    )
    assert "schedule g5.xlarge -> stop/start schedule: starts 07:45 Mon-Fri" in store.audits[-1].detail


def test_no_schedule_without_a_usable_time_zone_or_over_an_existing_pair() -> None:
    host = schedulable(6)
    store, workflow = MemoryStore.of(host), RecordingWorkflow()

    unknown = approve(store, workflow, host.recommendation_id, time_zone=lambda rec: "Mars/Olympus")
    assert unknown.outcome is Outcome.NO_SCHEDULE and "not an IANA time zone" in unknown.detail

    store.put_schedule(schedule_record(host))
    existing = approve(store, workflow, host.recommendation_id)
    assert existing.outcome is Outcome.NO_SCHEDULE and "already has a stop/start schedule" in existing.detail
    assert workflow.started == []


def test_removing_a_schedule_runs_the_workflow_once_and_only_for_approvers() -> None:
    host = schedulable(7)
    store, workflow = MemoryStore.of(host), RecordingWorkflow()
    record = schedule_record(host)
    store.put_schedule(record)

    def remove(actor: str = APPROVER) -> Any:
        return approvals.remove_schedule(
            store, lambda: workflow, approvals.RemovalRequest(record.key, actor, NOW), RULES
        )

    assert remove(OTHER).outcome is Outcome.NOT_APPROVER
    assert remove().outcome is Outcome.STARTED
    assert remove().outcome is Outcome.ALREADY_APPROVED
    (started,) = workflow.started
    assert started.action is ActionKind.UNSCHEDULE and started.schedule == record.plan
    assert started.recommendation_id == f"{host.recommendation_id}-unschedule"
    assert started.instance_name == record.instance_name == host.instance_name
    gone = approvals.remove_schedule(
        store, lambda: workflow, approvals.RemovalRequest("123#us-east-1#i-gone", APPROVER, NOW), RULES
    )
    assert gone.outcome is Outcome.NOT_FOUND


@pytest.mark.parametrize(
    ("scope", "audited"),
    [
        pytest.param(ActionScope.of(ACCOUNT, {"us-east-1"}, actions_enabled=False), "report-only", id="report-only"),
        pytest.param(ActionScope.of(ACCOUNT, {"eu-west-1"}), "deploy regional/template.yaml", id="region-left"),
    ],
)
def test_a_schedule_removal_the_workflow_cannot_run_is_refused_as_an_approval_is(
    scope: ActionScope, audited: str
) -> None:
    host = schedulable(9)
    store, workflow = MemoryStore.of(host), RecordingWorkflow()
    record = schedule_record(host)
    store.put_schedule(record)
    rules = approvals.ApprovalRules(only(APPROVER), scope=scope)

    refused = approvals.remove_schedule(
        store, lambda: workflow, approvals.RemovalRequest(record.key, APPROVER, NOW), rules
    )

    assert refused.outcome is Outcome.OUT_OF_SCOPE and workflow.started == []
    assert store.events()[-1] == "approve-refused" and audited in store.audits[-1].detail


# -- retries: an outcome other than success can be tried again by an approver ---------------------------------


def _ended(store: MemoryStore, approval_id: str, status: ApprovalStatus) -> None:
    assert store.update_approval(approval_id, status=status, detail="the host needs a person").moved


@pytest.mark.parametrize(
    "status", [ApprovalStatus.FAILED, ApprovalStatus.UNCHANGED, ApprovalStatus.ROLLED_BACK, ApprovalStatus.REFUSED]
)
def test_an_action_that_did_not_succeed_is_retried_as_a_new_attempt(status: ApprovalStatus) -> None:
    # Before: the approval stayed in its outcome and every later click answered "Already approved".
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    approve(store, workflow, rec.recommendation_id)
    _ended(store, rec.recommendation_id, status)

    retried = approve(store, workflow, rec.recommendation_id, now=NOW + timedelta(hours=1))

    assert retried.outcome is Outcome.STARTED
    first, second = workflow.started
    assert (first.attempt, second.attempt) == (1, 2)
    stored = store.approval(rec.recommendation_id)
    assert stored is not None and (stored.status, stored.attempt) == (ApprovalStatus.RUNNING, 2)
    assert stored.approved_at == NOW + timedelta(hours=1)
    assert store.events()[-2:] == ["approve-retried", "approve"]


def test_a_success_is_not_run_again_and_a_running_attempt_is_not_doubled() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    approve(store, workflow, rec.recommendation_id)

    assert approve(store, workflow, rec.recommendation_id).outcome is Outcome.ALREADY_APPROVED  # still running
    _ended(store, rec.recommendation_id, ApprovalStatus.SUCCEEDED)
    assert approve(store, workflow, rec.recommendation_id).outcome is Outcome.ALREADY_APPROVED
    assert len(workflow.started) == 1


def test_news_of_an_earlier_attempt_never_touches_the_retry() -> None:
    rec = recommendation()
    store, workflow = MemoryStore.of(rec), RecordingWorkflow()
    approve(store, workflow, rec.recommendation_id)
    _ended(store, rec.recommendation_id, ApprovalStatus.FAILED)
    approve(store, workflow, rec.recommendation_id)

    late = store.update_approval(rec.recommendation_id, status=ApprovalStatus.FAILED, attempt=1)

    assert late.moved is False
    current = store.approval(rec.recommendation_id)
    assert current is not None and (current.status, current.attempt) == (ApprovalStatus.RUNNING, 2)


def test_a_failed_schedule_removal_can_be_removed_again() -> None:
    # Before: a removal that ended "needs a person" answered every later Remove with "Already approved".
    host = schedulable(8)
    store, workflow = MemoryStore.of(host), RecordingWorkflow()
    record = schedule_record(host)
    store.put_schedule(record)

    def remove() -> Any:
        return approvals.remove_schedule(
            store, lambda: workflow, approvals.RemovalRequest(record.key, APPROVER, NOW), RULES
        )

    assert remove().outcome is Outcome.STARTED
    _ended(store, f"{host.recommendation_id}-unschedule", ApprovalStatus.FAILED)

    assert remove().outcome is Outcome.STARTED
    assert [started.attempt for started in workflow.started] == [1, 2]


def test_a_stop_of_a_host_on_a_schedule_is_refused_before_the_workflow_starts() -> None:
    host = idle(9)
    store, workflow = MemoryStore.of(host), RecordingWorkflow()
    store.put_schedule(schedule_record(host))

    refused = approve(store, workflow, host.recommendation_id)

    assert refused.outcome is Outcome.NO_SCHEDULE and "remove it first" in refused.detail
    assert workflow.started == []
