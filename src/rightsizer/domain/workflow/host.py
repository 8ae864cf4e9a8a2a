"""The instance workflow's EC2 host path, shared by the actions on a host: the host checks, the validation's record,
the guarded stop (a stop ends after it, a resize changes the type after it), the rollback to the recorded original,
and how a host action ends.

Where an action leaves this path is its fragment's (domain/workflow/plugs.py `Entry`): the Choices CheckInstance,
TypeChecksNeeded, ActionRoute, WasRunning and StopOnly are composed from the actions, so no action is named here.
"""

from __future__ import annotations

from rightsizer.domain.owners import OWNER_TAG_FILTERS
from rightsizer.domain.workflow.asl import (
    Path,
    State,
    all_of,
    any_of,
    compare,
    equals,
    fmt,
    goto,
    intrinsic,
    not_,
    one_of,
    present,
    state,
)
from rightsizer.domain.workflow.fragments import (
    AUDIT_ERROR,
    AZ,
    CAUSE,
    FAILURE,
    HEALTH,
    IN,
    INSTANCE,
    INSTANCE_TYPE,
    PAIR,
    PAIR_PREFIX,
    POLL,
    RETRY_EC2_ROLLBACK,
    ROLLBACK_FAILURE,
    STATE_NAME,
    SUCCEEDED,
    audit,
    count_poll,
    count_tagged,
    describe_instance,
    ec2,
    ends_as,
    failed,
    note,
    progress,
    refuse,
    reset_polls,
    scheduler,
    wait,
)
from rightsizer.domain.workflow.plugs import Actions, Entry, rest, routes

ROLLBACK = Path("$.rollback")


def validation(actions: Actions) -> dict[str, State]:
    """The host as it is now, against the request: stale, unsafe, not ours or owned by something that replaces it."""
    lifecycle, root = (INSTANCE.dot(n) for n in ("InstanceLifecycle", "RootDeviceType"))
    bad_requests = [all_of(equals(IN.action, kind), f.bad_request) for kind, f in actions.items() if f.bad_request]
    own_checks = [
        goto(all_of(equals(IN.action, kind), rule), refusal)
        for kind, f in actions.items()
        for rule, refusal in f.host_checks
    ]
    return {
        "DescribeInstance": describe_instance(
            "CheckInstance",
            on_error="RefuseNotDescribed",
            comment="Read the host as it is now; the recommendation may be days old.",
        ),
        "CheckInstance": state(
            "Choice",
            Comment=(
                "Refuse stale or unsafe requests before touching anything: never Spot or a Capacity Block, never an "
                "instance-store root."
            ),
            Choices=[
                *([goto(any_of(*bad_requests), "RefuseBadRequest")] if bad_requests else []),
                goto(not_(equals(INSTANCE_TYPE, IN.expected_type)), "RefuseStaleType"),
                goto(not_(equals(STATE_NAME, IN.expected_state)), "RefuseStaleState"),
                goto(all_of(present(lifecycle), not_(equals(lifecycle, "on-demand"))), "RefuseLifecycle"),
                goto(any_of(present(root, False), not_(equals(root, "ebs"))), "RefuseRootDevice"),
                *own_checks,
            ],
            Default="CountOptOutTag",
        ),
        "CountOptOutTag": count_tagged(
            {"Name": "tag-key", "Values": intrinsic("Array", IN.opt_out_tag)},
            Path("$.opt_out_check"),
            "CountManagedTag",
            "Tag keys come from the input, and JSONPath filters cannot use them: let EC2 filter by tag and count.",
        ),
        "CountManagedTag": count_tagged(
            {"Name": fmt("tag:{}", IN.managed_tag_key), "Values": ["true"]},
            Path("$.managed_check"),
            "CountAsgTag",
            (
                "The IAM policy only allows stop/modify/start on hosts tagged <managed key>=true; refuse "
                "early and clearly."
            ),
        ),
        "CountAsgTag": count_tagged(
            {"Name": "tag-key", "Values": list(OWNER_TAG_FILTERS)},
            Path("$.asg_check"),
            "CheckTags",
            (
                "An Auto Scaling group, node group, autoscaler, cluster or fleet (domain/owners.py) would replace or "
                "recycle a host changed in place; its template is the thing to change."
            ),
        ),
        "CheckTags": state(
            "Choice",
            Choices=[
                goto(compare(Path("$.opt_out_check.count"), "GreaterThan", 0), "RefuseOptedOut"),
                goto(equals(Path("$.managed_check.count"), 0), "RefuseNotManaged"),
                goto(compare(Path("$.asg_check.count"), "GreaterThan", 0), "RefuseAsgMember"),
            ],
            Default="TypeChecksNeeded",
        ),
        "TypeChecksNeeded": state("Choice", Choices=routes(actions, Entry.HOST_CHECKED), Default="RecordValidated"),
    }


def refusals() -> dict[str, State]:
    """Every refusal says why in words; nothing was touched (the lock is released if this execution took it)."""
    return {
        "RefuseBadRequest": refuse(
            "bad-request",
            fmt(
                "invalid request: {} of {} with expected state {} ({} -> {})",
                IN.change,
                IN.instance_id,
                IN.expected_state,
                IN.expected_type,
                IN.target_type,
            ),
        ),
        "RefuseNotDescribed": refuse("not-described", fmt("could not read {} or its types: {}", IN.instance_id, CAUSE)),
        "RefuseStaleType": refuse(
            "stale-type",
            fmt(
                "recommendation is stale: {} is now {}, the recommendation was for {}",
                IN.instance_id,
                INSTANCE_TYPE,
                IN.expected_type,
            ),
        ),
        "RefuseStaleState": refuse(
            "stale-state",
            fmt(
                "recommendation is stale: {} is {}, the recommendation expected {}",
                IN.instance_id,
                STATE_NAME,
                IN.expected_state,
            ),
        ),
        "RefuseLifecycle": refuse(
            "not-on-demand",
            fmt(
                "{} is a {} instance: only On-Demand instances are changed in place",
                IN.instance_id,
                INSTANCE.dot("InstanceLifecycle"),
            ),
        ),
        "RefuseRootDevice": refuse(
            "not-ebs", fmt("{} is not EBS-backed: an instance-store root does not survive a stop", IN.instance_id)
        ),
        "RefuseOptedOut": refuse("opted-out", fmt("{} carries the opt-out tag {}", IN.instance_id, IN.opt_out_tag)),
        "RefuseNotManaged": refuse(
            "not-managed",
            fmt("{} is not tagged {}=true, so the workflow may not touch it", IN.instance_id, IN.managed_tag_key),
        ),
        "RefuseAsgMember": refuse(
            "asg-member",
            fmt(
                "{} belongs to an Auto Scaling group, node group, cluster or fleet that launches and replaces it: "
                "change the template of that owner instead of the host",
                IN.instance_id,
            ),
        ),
    }


def validated(actions: Actions) -> dict[str, State]:
    """Record the validation, then each action's way; the default is the guarded stop, after Scheduler is asked."""
    return {
        "RecordValidated": audit(
            "validated",
            fmt(
                "checks passed for the {}: {} {} in {}, managed, on-demand, EBS-backed, not in an Auto Scaling group",
                IN.change,
                IN.instance_id,
                STATE_NAME,
                AZ,
            ),
            "NotifyValidated",
            on_error="AuditUnavailable",
        ),
        "NotifyValidated": progress(
            "validated",
            fmt("Checks passed: {} of {} ({}, {}).", IN.change, IN.instance_id, IN.expected_type, STATE_NAME),
            "ActionRoute",
        ),
        "ActionRoute": state(
            "Choice",
            Comment=(
                "Validated: a schedule creates its pair (the start half first: alone it is harmless); a stop and a "
                "resize first make sure no stop/start pair would undo or race them, then both start with the guarded "
                "stop."
            ),
            Choices=routes(actions, Entry.VALIDATED),
            Default="FindSchedulePair",
        ),
        "FindSchedulePair": scheduler(
            "listSchedules",
            {"GroupName": PAIR.group, "NamePrefix": fmt(PAIR_PREFIX, IN.instance_id)},
            "HasSchedulePair",
            on_error="RefuseSchedulesUnreadable",
            result=PAIR.dot("found"),
            selector={"count": intrinsic("ArrayLength", Path("$.Schedules"))},
            comment=(
                "EventBridge Scheduler is the truth: a pair's start would restart a stopped host, and its stop or "
                "start would race a resize; the approval refuses what the registry knows, this refuses what "
                "Scheduler has."
            ),
        ),
        "HasSchedulePair": state(
            "Choice",
            Choices=[goto(compare(PAIR.dot("found", "count"), "GreaterThan", 0), "RefuseScheduled")],
            Default="WasRunning",
        ),
        "RefuseScheduled": refuse(
            "scheduled",
            fmt(
                "{} runs on a stop/start schedule ({}, {} in group {}): its start would undo a stop and its stop or "
                "start would race a resize, so this {} is refused; remove the schedule first (/gpu schedules -> "
                "Remove), then approve again",
                IN.instance_id,
                PAIR.stop_name,
                PAIR.start_name,
                PAIR.group,
                IN.change,
            ),
        ),
        "RefuseSchedulesUnreadable": refuse(
            "schedules-unreadable",
            fmt(
                "the schedules of {} could not be listed, so this {} is refused before anything was touched (a "
                "stop/start pair would undo or race it): {}",
                IN.instance_id,
                IN.change,
                CAUSE,
            ),
        ),
    }


def guarded_stop(actions: Actions) -> dict[str, State]:
    """Stop the host and wait until EC2 reports it stopped; then each action that entered goes its way (StopOnly)."""
    stopped = rest(actions, Entry.STOPPED)  # ...which a host found stopped goes to as well
    return {
        "WasRunning": state(
            "Choice",
            Comment="A stopped host is only modified and stays stopped; a running one is stopped first.",
            Choices=[goto(equals(STATE_NAME, "running"), "StopInstance")],
            Default=stopped,
        ),
        "StopInstance": ec2(
            "stopInstances",
            {"InstanceIds": intrinsic("Array", IN.instance_id)},
            "RecordStopRequested",
            on_error="StopFailed",
        ),
        "RecordStopRequested": audit(
            "stop_requested", fmt("stopping {}", IN.instance_id), "ResetStopPolls", on_error="AuditFailedAfterTouch"
        ),
        "ResetStopPolls": reset_polls("WaitForStop"),
        "WaitForStop": wait("DescribeAfterStop"),
        "DescribeAfterStop": describe_instance("IsStopped", on_error="DescribeFailed"),
        "IsStopped": state(
            "Choice",
            Comment="The type may only change once EC2 reports the host stopped (moto would allow it anyway).",
            Choices=[
                goto(equals(STATE_NAME, "stopped"), "RecordStopped"),
                goto(one_of(STATE_NAME, "terminated", "shutting-down"), "HostTerminated"),
                goto(compare(POLL.dot("count"), "GreaterThanEquals", IN.max_polls), "StopTimedOut"),
            ],
            Default="CountStopPoll",
        ),
        "CountStopPoll": count_poll("WaitForStop"),
        "HostTerminated": failed(
            "stop", fmt("{} is {} (terminated, not stopped): nothing can be done to it", IN.instance_id, STATE_NAME)
        ),
        "RecordStopped": audit(
            "stopped", fmt("{} stopped", IN.instance_id), "StopOnly", on_error="AuditFailedAfterTouch"
        ),
        "StopOnly": state("Choice", Choices=routes(actions, Entry.STOPPED), Default=stopped),
        "StopFailed": failed("stop", fmt("stop failed: {}", CAUSE)),
        "StopTimedOut": failed("stop", fmt("{} did not stop after {} polls", IN.instance_id, IN.max_polls)),
        "DescribeFailed": failed("describe", fmt("could not read the instance state: {}", CAUSE)),
        "AuditFailedAfterTouch": failed("audit", fmt("audit log unavailable: {}", AUDIT_ERROR.dot("Cause"))),
    }


def _acted(next_state: str) -> State:
    """The rollback changed something: its end is a rollback, not 'unchanged'."""
    parameters = {"count": ROLLBACK.dot("count"), "limit": ROLLBACK.dot("limit"), "acted": True}
    return state("Pass", Parameters=parameters, ResultPath=ROLLBACK, Next=next_state)


def rollback() -> dict[str, State]:
    """Converge on the recorded original (type, state) from what EC2 reports, a bounded number of steps."""
    count, limit = ROLLBACK.dot("count"), ROLLBACK.dot("limit")
    changed_type = not_(equals(INSTANCE_TYPE, IN.expected_type))
    the_instance = {"InstanceIds": intrinsic("Array", IN.instance_id)}
    return {
        "RecordRollbackStarted": audit(
            "rollback_started",
            fmt("{} step failed: {}", FAILURE.dot("step"), FAILURE.dot("reason")),
            "NotifyRollback",
            comment="From here on audit failures are noted but never stop the rollback.",
        ),
        "NotifyRollback": progress(
            "rollback",
            fmt(
                "The {} failed ({}). Restoring {} and {} where anything changed.",
                IN.change,
                FAILURE.dot("reason"),
                IN.expected_type,
                IN.expected_state,
            ),
            "InitRollback",
        ),
        "InitRollback": state(
            "Pass",
            Parameters={"count": 0, "limit": intrinsic("MathAdd", IN.max_polls, 6), "acted": False},
            ResultPath=ROLLBACK,
            Next="RollbackDescribe",
        ),
        "RollbackDescribe": describe_instance(
            "RollbackDecide",
            on_error="RollbackUnreadable",
            comment=(
                "Rollback converges on the recorded original (type, state) from what EC2 reports, never from error "
                "names."
            ),
        ),
        "RollbackDecide": state(
            "Choice",
            Choices=[
                goto(compare(count, "GreaterThanEquals", limit), "RollbackGaveUp"),
                goto(one_of(STATE_NAME, "pending", "stopping"), "RollbackWait"),
                goto(all_of(changed_type, equals(STATE_NAME, "running")), "RollbackStop"),
                goto(all_of(changed_type, equals(STATE_NAME, "stopped")), "RollbackModify"),
                goto(all_of(equals(STATE_NAME, "stopped"), equals(IN.expected_state, "running")), "RollbackStart"),
                goto(any_of(equals(STATE_NAME, IN.expected_state), equals(STATE_NAME, "running")), "RollbackSettled"),
            ],
            Default="RollbackUnexpected",
        ),
        "RollbackWait": wait("RollbackCount"),
        "RollbackCount": state(
            "Pass",
            Parameters={
                "count": intrinsic("MathAdd", count, 1),
                "limit": limit,
                "acted": ROLLBACK.dot("acted"),
            },
            ResultPath=ROLLBACK,
            Next="RollbackDescribe",
        ),
        "RollbackStop": ec2(
            "stopInstances",
            the_instance,
            "MarkRollbackStop",
            on_error="RollbackActionFailed",
            retrier=RETRY_EC2_ROLLBACK,
            comment="Running on the new type (e.g. status checks failed): stop before changing the type back.",
        ),
        "MarkRollbackStop": _acted("RecordRollbackStop"),
        "RecordRollbackStop": audit(
            "rollback_stop_requested",
            fmt("stopping {} to restore {}", IN.instance_id, IN.expected_type),
            "RollbackWait",
        ),
        "RollbackModify": ec2(
            "modifyInstanceAttribute",
            {"InstanceId": IN.instance_id, "InstanceType": {"Value": IN.expected_type}},
            "MarkRollbackModify",
            on_error="RollbackActionFailed",
            retrier=RETRY_EC2_ROLLBACK,
        ),
        "MarkRollbackModify": _acted("RecordRollbackModify"),
        "RecordRollbackModify": audit(
            "rollback_modified",
            fmt("instance type {} -> {} (restored)", INSTANCE_TYPE, IN.expected_type),
            "RollbackCount",
        ),
        "RollbackStart": ec2(
            "startInstances",
            the_instance,
            "MarkRollbackStart",
            on_error="RollbackActionFailed",
            retrier=RETRY_EC2_ROLLBACK,
        ),
        "MarkRollbackStart": _acted("RecordRollbackStart"),
        "RecordRollbackStart": audit(
            "rollback_start_requested",
            fmt("starting {} as {} again", IN.instance_id, IN.expected_type),
            "RollbackWait",
        ),
        "RollbackSettled": state(
            "Choice",
            Comment=(
                "Back on the original type and state: a rollback that had nothing to undo (e.g. the stop itself "
                "failed) is not called a rollback."
            ),
            Choices=[goto(equals(ROLLBACK.dot("acted"), True), "OutcomeRolledBack")],
            Default="OutcomeUnchanged",
        ),
        "RollbackUnreadable": note(
            ROLLBACK_FAILURE, fmt("could not read the instance during rollback: {}", CAUSE), "OutcomeRollbackFailed"
        ),
        "RollbackActionFailed": note(
            ROLLBACK_FAILURE, fmt("a rollback step failed: {}", CAUSE), "OutcomeRollbackFailed"
        ),
        "RollbackGaveUp": note(
            ROLLBACK_FAILURE, fmt("rollback did not converge after {} steps", count), "OutcomeRollbackFailed"
        ),
        "RollbackUnexpected": note(
            ROLLBACK_FAILURE, fmt("unexpected state {} during rollback", STATE_NAME), "OutcomeRollbackFailed"
        ),
    }


def outcomes() -> dict[str, State]:
    """How a host action ends: done, rolled back, unchanged, or a person must look."""
    reason, rollback_reason = FAILURE.dot("reason"), ROLLBACK_FAILURE.dot("reason")
    host_now = (IN.instance_id, INSTANCE_TYPE, STATE_NAME)
    return {
        "OutcomeSucceeded": ends_as(
            SUCCEEDED, "succeeded", fmt("Done: {} is now {} and {} ({}).", *host_now, HEALTH.dot("note"))
        ),
        "OutcomeRolledBack": ends_as(
            "rolled_back",
            "rolled_back",
            fmt("Rolled back: {} is {} and {} again. The {} failed: {}", *host_now, IN.change, reason),
        ),
        "OutcomeUnchanged": ends_as(
            "unchanged",
            "unchanged",
            fmt(
                "Nothing was changed: {} is still {} and {}. The {} failed before it touched the host: {}",
                *host_now,
                IN.change,
                reason,
            ),
        ),
        "OutcomeRollbackFailed": ends_as(
            "rollback_failed",
            "rollback_failed",
            fmt(
                "Needs a person: the {} failed ({}) and so did the rollback ({}). {} was last seen {} as {}; it was {} "
                "as {}.",
                IN.change,
                reason,
                rollback_reason,
                IN.instance_id,
                STATE_NAME,
                INSTANCE_TYPE,
                IN.expected_state,
                IN.expected_type,
            ),
        ),
    }
