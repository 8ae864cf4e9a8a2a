"""Use-cases behind the Slack buttons and commands: approve (a resize, a stop or a schedule), remove a schedule,
dismiss, snooze; which advice is hidden.

Pure of Slack: callers pass who acted, whether they may approve, and where the conversation lives.
Every path is idempotent, because Slack retries, people double-click and Lambda re-runs async work. Every action
runs through the same instance workflow (one execution per approval id), so resizes, stops and schedules share
its validation, lock, audit trail, progress and the approval lifecycle.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol

from rightsizer.domain.action_spec import PairChange
from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.approval import ApprovalStatus, retryable
from rightsizer.domain.catalog import is_scarce
from rightsizer.domain.models import ActionKind
from rightsizer.domain.models.advice import DecisionKind, Recommendation
from rightsizer.domain.schedule_plan import NoSchedulePair, schedule_plan
from rightsizer.domain.scope import REPORT_ONLY, ActionScope
from rightsizer.services.ports import (
    Approval,
    ApprovalRecords,
    AuditEntry,
    Decision,
    ResizeWorkflow,
    SageMakerAction,
    ScheduleRecord,
)
from rightsizer.services.report import untagged_refusal

MAX_SNOOZE = timedelta(days=90)
BUTTON_SNOOZE = timedelta(days=7)
# An approval that is still "pending" without an execution this long after it was written belongs to an
# invocation that died between the conditional write and StartExecution (the Slack function times out
# after 30 s). Past this age the next approver's click, or Lambda's retry, may finish the job.
RESUME_AFTER = timedelta(seconds=60)

_DURATION = re.compile(r"^\s*(\d{1,4})\s*(h|hr|hrs|hours?|d|days?|w|wk|wks|weeks?)\s*$", re.IGNORECASE)
_UNIT_HOURS = {"h": 1, "d": 24, "w": 24 * 7}


class ApprovalStore(ApprovalRecords, Protocol):
    """The part of the store (DynamoStore in AWS) the use-cases need."""

    def recommendation(self, recommendation_id: str) -> Recommendation | None: ...

    def schedule(self, account_id: str, region: str, instance_id: str) -> ScheduleRecord | None: ...

    def is_current(self, rec: Recommendation) -> bool: ...

    def latest_for_instance(self, instance_id: str) -> Recommendation | None: ...

    def put_decision(self, decision: Decision) -> None: ...

    def decisions_about(self, rec: Recommendation, now: datetime) -> list[Decision]:
        """The decisions in force that can hide `rec` (its host's snooze, its dismissal), read by key."""
        ...


class Outcome(StrEnum):
    STARTED = "started"  # this call started (or resumed) the resize workflow
    ALREADY_APPROVED = "already_approved"  # someone (maybe this very click) approved before
    NOT_APPROVER = "not_approver"
    NOT_FOUND = "not_found"  # unknown or expired recommendation id
    STALE = "stale"  # a newer recommendation replaced it
    NOT_ACTIONABLE = "not_actionable"  # no one-click action for this advice (e.g. an ASG member, advice only)
    OUT_OF_SCOPE = "out_of_scope"  # an account or region the instance workflow does not reach (see ActionScope)
    NEEDS_CONFIRMATION = "needs_confirmation"  # stopping a scarce type: restart capacity is not guaranteed
    NO_SCHEDULE = "no_schedule"  # no stop/start pair can be written (e.g. an unknown time zone); detail says why
    HIDDEN = "hidden"  # dismissed or snoozed: a decision hides the advice everywhere, Approve included
    FAILED = "failed"  # the workflow could not be started; approving again retries
    DISMISSED = "dismissed"
    SNOOZED = "snoozed"


@dataclass(frozen=True)
class ActionResult:
    outcome: Outcome
    recommendation: Recommendation | None = None
    approval: Approval | None = None
    until: datetime | None = None  # snoozes
    detail: str = ""  # for people: never an exception name
    decision: Decision | None = None  # what hid the advice (HIDDEN)
    cause: str = ""  # for the log: what went wrong, exception type included


class DurationError(ValueError):
    """A snooze duration that cannot be used; the message says what would work."""


def parse_duration(text: str) -> timedelta:
    """`12h`, `3d`, `2w` (also `3 days`, `1 week`) -> timedelta; between one hour and 90 days."""
    match = _DURATION.match(text)
    if match is None:
        raise DurationError(f"`{text.strip()[:40]}` is not a duration: use hours, days or weeks, e.g. 12h, 3d, 2w")
    amount, unit = int(match.group(1)), match.group(2)[0].lower()
    duration = timedelta(hours=amount * _UNIT_HOURS[unit])
    if duration <= timedelta(0):
        raise DurationError("a snooze must last at least one hour")
    if duration > MAX_SNOOZE:
        raise DurationError(f"a snooze can last at most {MAX_SNOOZE.days} days")
    return duration


def hidden_by(rec: Recommendation, decisions: Iterable[Decision], now: datetime) -> Decision | None:
    """The decision that hides `rec` from the actionable list: an active snooze of its instance, or its dismissal."""
    for decision in decisions:
        same_host = (decision.account_id, decision.region, decision.instance_id) == (
            rec.account_id,
            rec.region,
            rec.instance_id,
        )
        if not same_host:
            continue
        if decision.kind is DecisionKind.SNOOZE and decision.until is not None and decision.until > now:
            return decision
        # A dismissal answers one piece of advice: different advice for the same host shows again.
        if decision.kind is DecisionKind.DISMISS and decision.recommendation_id == rec.recommendation_id:
            return decision
    return None


def split_hidden(
    recommendations: Sequence[Recommendation], decisions: Sequence[Decision], now: datetime
) -> tuple[list[Recommendation], list[Recommendation]]:
    """(visible, hidden) in the given order."""
    visible: list[Recommendation] = []
    hidden: list[Recommendation] = []
    for rec in recommendations:
        (hidden if hidden_by(rec, decisions, now) else visible).append(rec)
    return visible, hidden


def can_act(rec: Recommendation, scope: ActionScope | None = None) -> bool:
    """Is there a one-click action for `rec`? `scope` None: the workflow's reach is not known here."""
    in_scope = scope is None or scope.covers(rec.account_id, rec.region)
    return rec.action is not None and in_scope


CAPACITY_RISK = "restart capacity is not guaranteed: {type} is scarce, a stopped host may not start again"


def action_risks(rec: Recommendation) -> tuple[str, ...]:
    """Every risk of carrying out `rec`'s one-click action besides downtime, a few words each: a scarce type's restart
    where no capacity reservation holds it, then what the analysis found (`Recommendation.risks`: an instance store
    wiped, a type no longer offered, state in host RAM). Slack's confirmation and `act --dry-run` list them all."""
    if rec.action is None:
        return ()
    capacity = (CAPACITY_RISK.format(type=rec.instance_type),) if needs_capacity_confirmation(rec) else ()
    return (*capacity, *rec.risks)


def needs_capacity_confirmation(rec: Recommendation) -> bool:
    """Stopping a scarce type (p4d, p5, trn...) may leave it without capacity to start again: a person must say
    they know (Slack shows a second, explicit button for it)."""
    return (
        rec.action is not None
        and ACTIONS[rec.action].stops_host
        and is_scarce(rec.instance_type)
        and rec.capacity_reservation is None  # a reservation holds the host's restart capacity
    )


def _current(store: ApprovalStore, recommendation_id: str) -> tuple[Recommendation | None, ActionResult | None]:
    rec = store.recommendation(recommendation_id)
    if rec is None:
        return None, ActionResult(Outcome.NOT_FOUND, detail=recommendation_id)
    if not store.is_current(rec):
        return rec, ActionResult(Outcome.STALE, recommendation=rec)
    return rec, None


@dataclass(frozen=True)
class ApprovalRequest:
    """One click on Approve: which advice, by whom and when, and the message whose thread receives its progress."""

    recommendation_id: str
    actor: str
    now: datetime
    capacity_risk_confirmed: bool = False  # a scarce type's approver confirmed restart capacity is not guaranteed
    slack_channel: str = ""
    slack_ts: str = ""


def _utc(rec: Recommendation) -> str:
    return "UTC"


@dataclass(frozen=True)
class ApprovalRules:
    """What this deployment lets a click do: who approves, where one click reaches (`scope`, the managed tag) and
    the time zone a team's schedule is written in."""

    is_approver: Callable[[str], bool]
    scope: ActionScope | None = None
    time_zone: Callable[[Recommendation], str] = _utc
    managed_tag_key: str | None = None


def approve(
    store: ApprovalStore,
    workflow_factory: Callable[[], ResizeWorkflow],
    request: ApprovalRequest,
    rules: ApprovalRules,
    open_thread: Callable[[Approval], tuple[str, str] | None] | None = None,
) -> ActionResult:
    """Approve the advice's one-click action (its ActionSpec) and start the instance workflow exactly once
    per recommendation id.

    The conditional write in `create_approval` elects one winner among double clicks, Slack retries and
    Lambda's async retries; only the winner starts the workflow. Losers report the existing approval.
    `request.slack_channel`/`slack_ts` name the message whose thread receives progress; without them the winner
    calls `open_thread` (returns channel and ts, or None) before the workflow starts, so that no progress
    event can arrive before the thread is recorded. A schedule is written in `rules.time_zone(rec)` (the team's).
    """
    recommendation_id, actor, now = request.recommendation_id, request.actor, request.now
    capacity_risk_confirmed = request.capacity_risk_confirmed
    rec = store.recommendation(recommendation_id)
    if rec is None:
        return ActionResult(Outcome.NOT_FOUND, detail=recommendation_id)
    if not rules.is_approver(actor):
        store.audit(AuditEntry(recommendation_id, now, actor, "approve-refused", "not an approver"))
        return ActionResult(Outcome.NOT_APPROVER, recommendation=rec)
    refused = _refusal(store, rec, rules.scope, now, capacity_risk_confirmed, rules.managed_tag_key)
    if refused is not None:
        decision = refused.decision
        if decision is not None or refused.detail:  # an approver tried: keep a trace
            reason = f"{decision.kind} by {decision.actor}" if decision is not None else refused.detail
            store.audit(AuditEntry(recommendation_id, now, actor, "approve-refused", reason[:1000]))
        return refused
    action = rec.action
    if action is None:  # _refusal answers this first
        return ActionResult(Outcome.NOT_ACTIONABLE, recommendation=rec)
    plan = None
    if ACTIONS[action].pair is PairChange.CREATES:
        try:
            plan = schedule_plan(rec.evidence.busy_windows, rules.time_zone(rec), now)
        except NoSchedulePair as why:
            store.audit(AuditEntry(recommendation_id, now, actor, "approve-refused", str(why)[:1000]))
            return ActionResult(Outcome.NO_SCHEDULE, recommendation=rec, detail=str(why))
    approval = Approval(
        recommendation_id=rec.recommendation_id,
        account_id=rec.account_id,
        region=rec.region,
        instance_id=rec.instance_id,
        from_type=rec.instance_type,
        to_type=ACTIONS[action].becomes.format(target=rec.target_type or ""),
        approver=actor,
        approved_at=now,
        slack_channel=request.slack_channel,
        slack_ts=request.slack_ts,
        action=action,
        schedule=plan,
        capacity_risk_confirmed=capacity_risk_confirmed,
        sagemaker=sagemaker_action(rec),
        instance_name=rec.instance_name,
    )
    return _start(store, workflow_factory, rec, approval, actor, now, open_thread)


def sagemaker_action(rec: Recommendation) -> SageMakerAction | None:
    """The SageMaker resource advice on an endpoint variant or a notebook instance acts on (None for EC2 hosts)."""
    detail = rec.sagemaker
    if detail is None:
        return None
    if detail.notebook_name:
        return SageMakerAction(detail.notebook_name, sagemaker_arn(rec, "notebook-instance", detail.notebook_name))
    return SageMakerAction(
        name=detail.endpoint_name,
        arn=sagemaker_arn(rec, "endpoint", detail.endpoint_name),
        variant_name=detail.variant_name,
        model_name=detail.model_name,
        endpoint_config_name=detail.endpoint_config_name,
        target_count=detail.target_instance_count or detail.instance_count,
    )


def sagemaker_arn(rec: Recommendation, resource: str, name: str) -> str:
    """SageMaker's ARN of a resource (its names are case-insensitive; ARNs carry them in lower case)."""
    partition = (
        "aws-cn" if rec.region.startswith("cn-") else "aws-us-gov" if rec.region.startswith("us-gov-") else "aws"
    )
    return f"arn:{partition}:sagemaker:{rec.region}:{rec.account_id}:{resource}/{name.lower()}"


@dataclass(frozen=True)
class RemovalRequest:
    """One click on Remove (`/gpu schedules`): whose stop/start pair (`<account>#<region>#<instance id>`), by whom and
    when."""

    schedule_key: str
    actor: str
    now: datetime


def remove_schedule(
    store: ApprovalStore,
    workflow_factory: Callable[[], ResizeWorkflow],
    request: RemovalRequest,
    rules: ApprovalRules,
    open_thread: Callable[[Approval], tuple[str, str] | None] | None = None,
) -> ActionResult:
    """`/gpu schedules` → Remove: the instance workflow deletes the host's schedule pair (audited like its creation).

    One removal per schedule (its approval id derives from the approval that created it). Who may remove and where
    one click reaches are `approve`'s rules: a report-only deployment, or a host the workflow does not reach (its
    region or account left the stack's scope since the pair was made), starts no workflow."""
    actor, now = request.actor, request.now
    account_id, _, rest = request.schedule_key.partition("#")
    region, _, instance_id = rest.partition("#")
    record = store.schedule(account_id, region, instance_id)
    if record is None:
        return ActionResult(Outcome.NOT_FOUND, detail=request.schedule_key)
    removal_id = f"{record.recommendation_id}-unschedule"
    if not rules.is_approver(actor):
        store.audit(AuditEntry(removal_id, now, actor, "approve-refused", "not an approver"))
        return ActionResult(Outcome.NOT_APPROVER)
    refusal = rules.scope.refusal(instance_id, account_id, region) if rules.scope is not None else None
    if refusal is not None:
        reason = "report-only deployment" if refusal == REPORT_ONLY else refusal
        store.audit(AuditEntry(removal_id, now, actor, "approve-refused", reason[:1000]))
        return ActionResult(Outcome.OUT_OF_SCOPE, detail=refusal)
    approval = Approval(
        recommendation_id=removal_id,
        account_id=record.account_id,
        region=record.region,
        instance_id=record.instance_id,
        from_type=record.instance_type,
        to_type=ACTIONS[ActionKind.UNSCHEDULE].becomes,
        approver=actor,
        approved_at=now,
        action=ActionKind.UNSCHEDULE,
        schedule=record.plan,
        instance_name=record.instance_name,
    )
    return _start(store, workflow_factory, None, approval, actor, now, open_thread)


def _start(
    store: ApprovalStore,
    workflow_factory: Callable[[], ResizeWorkflow],
    rec: Recommendation | None,
    approval: Approval,
    actor: str,
    now: datetime,
    open_thread: Callable[[Approval], tuple[str, str] | None] | None,
) -> ActionResult:
    """Record the approval once, open its thread, start its workflow: the one path every action takes."""
    approval_id = approval.recommendation_id
    if not store.create_approval(approval):
        existing = store.approval(approval_id)
        if existing is not None and retryable(existing.status):
            # An earlier attempt ended without success: an approver tries again, as a new attempt with its own
            # execution (the conditional write elects one retrier among double clicks).
            retried = store.retry_approval(approval_id, existing.attempt, actor, now)
            if retried is None:
                store.audit(AuditEntry(approval_id, now, actor, "approve-duplicate"))
                return ActionResult(Outcome.ALREADY_APPROVED, recommendation=rec, approval=store.approval(approval_id))
            store.audit(
                AuditEntry(
                    approval_id, now, actor, "approve-retried", f"attempt {retried.attempt} after {existing.status}"
                )
            )
            approval = retried
        elif existing is None or not _needs_resume(existing, now):
            store.audit(AuditEntry(approval_id, now, actor, "approve-duplicate"))
            return ActionResult(Outcome.ALREADY_APPROVED, recommendation=rec, approval=existing)
        else:
            # The earlier winner never started the workflow (it failed, or died): finish its job. The
            # workflow port is itself idempotent per recommendation id, so a rare tie here is harmless.
            store.audit(
                AuditEntry(approval_id, now, actor, "approve-resumed", f"first approved by {existing.approver}")
            )
            approval = existing
    store.audit(AuditEntry(approval_id, now, actor, "approve", _audit_detail(approval)))
    if open_thread is not None and not (approval.slack_channel and approval.slack_ts):
        thread = open_thread(approval)
        if thread is not None:
            update = store.update_approval(approval_id, slack_channel=thread[0], slack_ts=thread[1])
            approval = update.approval
    try:
        execution_arn = workflow_factory().start(approval)
    except Exception as error:  # the click must get an answer; the approval stays retryable
        cause = f"{type(error).__name__}: {str(error)[:300]}"
        detail = f"the {approval.action.value} workflow could not be started (the error has been logged)"
        failed = store.update_approval(
            approval_id, status=ApprovalStatus.START_FAILED, detail=detail, attempt=approval.attempt
        )
        store.audit(AuditEntry(approval_id, now, actor, "approve-failed", cause))
        return ActionResult(Outcome.FAILED, recommendation=rec, approval=failed.approval, detail=detail, cause=cause)
    started = store.update_approval(
        approval_id, status=ApprovalStatus.RUNNING, detail="", execution_arn=execution_arn, attempt=approval.attempt
    )
    # A quick refusal may already have reached the notifier: the lifecycle keeps that outcome.
    return ActionResult(Outcome.STARTED, recommendation=rec, approval=started.approval)


def _audit_detail(approval: Approval) -> str:
    change = f"{approval.action.value} {approval.from_type} -> {approval.to_type}"
    if approval.schedule is not None:
        change += f": {approval.schedule.description}"
    if approval.capacity_risk_confirmed:
        change += " (confirmed: restart capacity is not guaranteed)"
    return change


def _refusal(
    store: ApprovalStore,
    rec: Recommendation,
    scope: ActionScope | None,
    now: datetime,
    confirmed: bool,
    managed_tag_key: str | None,
) -> ActionResult | None:
    """Why `rec` cannot be approved now, or None. With `managed_tag_key`, a host the analysis found without that
    tag is refused in the report's own words (the workflow would refuse it); a host whose tag is not known (advice
    stored before tags were read) is left to the workflow, which checks the tag itself."""
    if not store.is_current(rec):
        return ActionResult(Outcome.STALE, recommendation=rec)
    if rec.action is None:
        return ActionResult(Outcome.NOT_ACTIONABLE, recommendation=rec)
    refusal = scope.refusal(rec.instance_id, rec.account_id, rec.region) if scope is not None else None
    if refusal is None and managed_tag_key is not None and rec.managed is False:
        refusal = untagged_refusal(rec, managed_tag_key)
    if refusal is not None:
        return ActionResult(Outcome.OUT_OF_SCOPE, recommendation=rec, detail=refusal)
    decision = hidden_by(rec, store.decisions_about(rec, now), now)
    if decision is not None:
        return ActionResult(Outcome.HIDDEN, recommendation=rec, decision=decision)
    if needs_capacity_confirmation(rec) and not confirmed:
        detail = (
            f"{rec.instance_type} capacity is scarce: a stopped host may not start again (no explicit confirmation)"
        )
        return ActionResult(Outcome.NEEDS_CONFIRMATION, recommendation=rec, detail=detail)
    if store.schedule(rec.account_id, rec.region, rec.instance_id):
        # A pair would undo a stop (its start) or race a resize; the workflow checks EventBridge Scheduler too.
        detail = f"`{rec.instance_id}` already has a stop/start schedule: remove it first (`/gpu schedules`)"
        return ActionResult(Outcome.NO_SCHEDULE, recommendation=rec, detail=detail)
    return None


def _needs_resume(existing: Approval, now: datetime) -> bool:
    if existing.execution_arn:
        return False
    if existing.status is ApprovalStatus.START_FAILED:
        return True
    return existing.status is ApprovalStatus.PENDING and now - existing.approved_at >= RESUME_AFTER


def dismiss(store: ApprovalStore, recommendation_id: str, actor: str, *, now: datetime) -> ActionResult:
    """Hide this piece of advice (not the host: different advice for it will show again)."""
    rec, problem = _current(store, recommendation_id)
    if problem is not None or rec is None:
        return problem or ActionResult(Outcome.NOT_FOUND)
    store.put_decision(
        Decision(
            kind=DecisionKind.DISMISS,
            account_id=rec.account_id,
            region=rec.region,
            instance_id=rec.instance_id,
            actor=actor,
            at=now,
            recommendation_id=rec.recommendation_id,
        )
    )
    store.audit(AuditEntry(rec.recommendation_id, now, actor, "dismiss"))
    return ActionResult(Outcome.DISMISSED, recommendation=rec)


def snooze(
    store: ApprovalStore, recommendation_id: str, actor: str, *, now: datetime, duration: timedelta = BUTTON_SNOOZE
) -> ActionResult:
    """Hide every recommendation for the recommendation's host until now + duration."""
    rec, problem = _current(store, recommendation_id)
    if problem is not None or rec is None:
        return problem or ActionResult(Outcome.NOT_FOUND)
    return _snooze(store, rec, actor, now, duration)


def snooze_instance(
    store: ApprovalStore, instance_id: str, actor: str, *, now: datetime, duration: timedelta
) -> ActionResult:
    """`/gpu snooze <instance-id> <duration>`: snooze the host's latest recommendation."""
    rec = store.latest_for_instance(instance_id)
    if rec is None:
        return ActionResult(Outcome.NOT_FOUND, detail=instance_id)
    return _snooze(store, rec, actor, now, duration)


def _snooze(store: ApprovalStore, rec: Recommendation, actor: str, now: datetime, duration: timedelta) -> ActionResult:
    if duration > MAX_SNOOZE or duration <= timedelta(0):
        raise DurationError(f"a snooze lasts between one hour and {MAX_SNOOZE.days} days")
    until = now + duration
    store.put_decision(
        Decision(
            kind=DecisionKind.SNOOZE,
            account_id=rec.account_id,
            region=rec.region,
            instance_id=rec.instance_id,
            actor=actor,
            at=now,
            until=until,
        )
    )
    store.audit(AuditEntry(rec.recommendation_id, now, actor, "snooze", f"until {until.isoformat()}"))
    return ActionResult(Outcome.SNOOZED, recommendation=rec, until=until)
