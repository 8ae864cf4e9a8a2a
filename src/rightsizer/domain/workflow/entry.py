"""The instance workflow's way in, shared by every action: the request checks, the first audit entry, the action
role, the per-instance lock, and the refusals on the way.

CheckScheduleRequest's allow-list and per-action checks, and the routes after the role check and after the lock, are
composed from the actions' fragments (domain/workflow/plugs.py): no action is named here.
"""

from __future__ import annotations

from rightsizer.domain.workflow.asl import (
    Path,
    State,
    all_of,
    catch,
    equals,
    fmt,
    goto,
    not_,
    one_of,
    present,
    retry,
    state,
)
from rightsizer.domain.workflow.fragments import (
    AUDIT_ERROR,
    CAUSE,
    CONDITION_FAILED,
    ENTERED,
    ERROR,
    EXECUTION,
    IN,
    NO_RETRY_ON_CONDITION,
    RETRY_WRITE,
    audit,
    bounded,
    dynamodb,
    ends_as,
    lock_key,
    refuse,
    sdk,
    text,
)
from rightsizer.domain.workflow.plugs import Actions, Entry, requests, routes
from rightsizer.domain.workflow_contract import MAX_POLLS, MAX_WAIT_SECONDS, WorkflowError


def request_checks(actions: Actions) -> dict[str, State]:
    required = [
        *(
            rule
            for path in (
                IN.recommendation_id,
                IN.instance_id,
                IN.expected_type,
                IN.target_type,
                IN.expected_state,
                IN.approver,
                IN.approved_at,
                IN.managed_tag_key,
                IN.opt_out_tag,
                IN.audit_expiration,
            )
            for rule in text(path)
        ),
        *bounded(IN.wait_seconds, 0, MAX_WAIT_SECONDS),
        *bounded(IN.max_polls, 1, MAX_POLLS),
        *(
            rule
            for path in (
                IN.lock_expires_at,
                IN.lock_expiration,
                IN.action,
                IN.account_id,
                IN.region,
                IN.action_role_arn,
                IN.change,
            )
            for rule in text(path)
        ),
    ]
    return {
        "CheckRequest": state(
            "Choice",
            Comment=(
                "States.Runtime errors (a missing path) cannot be caught: prove the input complete before anything "
                f"runs. wait_seconds <= {MAX_WAIT_SECONDS} and max_polls <= {MAX_POLLS} bound every wait loop "
                f"({MAX_WAIT_SECONDS * MAX_POLLS // 60} minutes at most), well inside the execution's TimeoutSeconds. "
                "A schedule or its removal also needs the pair's names, expressions, time zone and role."
            ),
            Choices=[goto(not_(all_of(*required)), "InvalidRequest")],
            Default="CheckScheduleRequest",
        ),
        "CheckScheduleRequest": state(
            "Choice",
            Comment=(
                "A schedule or its removal also needs the pair: names, expressions, time zone and each schedule's "
                "target (EC2 call, the account's scheduler role, the instance), which the starter writes; a SageMaker "
                "action its resource (domain/workflow/sagemaker.py)."
            ),
            Choices=[
                # The registered actions (each has its fragment), and nothing else; then what each one's path reads.
                goto(not_(one_of(IN.action, *actions)), "InvalidRequest"),
                *requests(actions, "InvalidRequest"),
            ],
            Default="RecordApproval",
        ),
        "InvalidRequest": state(
            "Fail",
            Error=WorkflowError.INVALID_REQUEST.value,
            Cause=(
                "The execution input lacks a field, has a wrong type or an out-of-range value; see "
                "docs/resize-workflow.md. Nothing was changed."
            ),
        ),
        "RecordApproval": audit(
            fmt("{}_started", IN.action),
            fmt(
                "approved by {} at {}: {} of {} ({}, account {}, {})",
                IN.approver,
                IN.approved_at,
                IN.change,
                IN.instance_id,
                IN.expected_type,
                IN.account_id,
                IN.region,
            ),
            "CheckActionRole",
            on_error="AuditUnavailable",
            actor=IN.approver,
            comment=(
                "First audit entry, in the approver's name. No audit, no action: a failed write ends the run untouched."
            ),
        ),
        "CheckActionRole": sdk(
            "sts:getCallerIdentity",
            {},
            "ActionRoleAccount",
            on_error="RefuseNoActionRole",
            retrier=retry(["States.Timeout"], interval=1, attempts=2),
            result=Path("$.caller"),
            selector={"Account": Path("$.Account")},
            comment=(
                "Every EC2 and Scheduler call runs as the action role of the host's account (task Credentials): prove "
                "it can be assumed before anything else, so that an account without it gets a refusal in words."
            ),
        ),
        "ActionRoleAccount": state(
            "Choice",
            Comment=(
                "The role must belong to the host's account: a role of another account would act on the wrong hosts."
            ),
            Choices=[
                goto(not_(equals(Path("$.caller.Account"), IN.account_id)), "RefuseWrongAccount"),
                *routes(actions, Entry.ROLE_CHECKED),
            ],
            Default="AcquireLock",
        ),
    }


def lock(actions: Actions) -> dict[str, State]:
    """One workflow per instance at a time; then each resource is read by its own checks."""
    lock_item = Path("$.lock.Item")
    return {
        "AcquireLock": dynamodb(
            "putItem",
            {
                "Item": {
                    **lock_key(),
                    "holder": {"S": EXECUTION},
                    "recommendation_id": {"S": IN.recommendation_id},
                    "approver": {"S": IN.approver},
                    "acquired_at": {"S": ENTERED},
                    "expires_at": {"S": IN.lock_expires_at},
                    "expiration": {"N": IN.lock_expiration},
                },
                "ConditionExpression": "attribute_not_exists(PK) OR holder = :me OR expires_at < :now",
                "ExpressionAttributeValues": {":me": {"S": EXECUTION}, ":now": {"S": ENTERED}},
            },
            "ResourceRoute",
            Comment=(
                "At most one workflow touches an instance: a conditional put, taken before the host is even "
                "described, so the checks and the changes happen under the lock. It expires (lock_expires_at, after "
                "the execution's TimeoutSeconds) in case its release is lost."
            ),
            ResultPath=None,
            Retry=[NO_RETRY_ON_CONDITION, RETRY_WRITE],
            Catch=[catch("ReadLockHolder", ERROR, [CONDITION_FAILED]), catch("RefuseLockUnavailable", ERROR)],
        ),
        "ReadLockHolder": dynamodb(
            "getItem",
            {"Key": lock_key(), "ConsistentRead": True},
            "HolderKnown",
            Comment="Name the resize that holds the instance, for the refusal.",
            ResultPath=Path("$.lock"),
            Catch=[catch("RefuseLockUnavailable", ERROR)],
        ),
        "HolderKnown": state(
            "Choice",
            Choices=[
                goto(
                    all_of(present(lock_item.dot("recommendation_id", "S")), present(lock_item.dot("approver", "S"))),
                    "RefuseBusy",
                )
            ],
            Default="RefuseBusyUnknown",
        ),
        "ResourceRoute": state(
            "Choice",
            Comment=(
                "A SageMaker action reads its endpoint or notebook instance (domain/actions/, "
                "domain/workflow/sagemaker.py)."
            ),
            Choices=routes(actions, Entry.LOCKED),
            Default="DescribeInstance",
        ),
    }


def refusals() -> dict[str, State]:
    """Refused on the way in: nothing was touched (the lock is released if this execution took it)."""
    lock_item = Path("$.lock.Item")
    return {
        "RefuseBusy": refuse(
            "busy",
            fmt(
                "another workflow is changing {} (recommendation {}, approved by {}), so this {} is refused: only one "
                "workflow may change an instance at a time; approve again once it has finished",
                IN.instance_id,
                lock_item.dot("recommendation_id", "S"),
                lock_item.dot("approver", "S"),
                IN.change,
            ),
        ),
        "RefuseBusyUnknown": refuse(
            "busy",
            fmt(
                "another workflow is changing {}, so this {} is refused: only one workflow may change an instance at "
                "a time; approve again once it has finished",
                IN.instance_id,
                IN.change,
            ),
        ),
        "RefuseLockUnavailable": refuse(
            "lock-unavailable", fmt("could not take the lock on {}, nothing was changed: {}", IN.instance_id, CAUSE)
        ),
        "RefuseNoActionRole": refuse(
            "no-action-role",
            fmt(
                "account {} has no action role this stack can assume ({}), so nothing was changed: deploy "
                "member-account/template.yaml there with EnableActions=true (docs/multi-account.md). AWS said: {}",
                IN.account_id,
                IN.action_role_arn,
                CAUSE,
            ),
        ),
        "RefuseWrongAccount": refuse(
            "wrong-account",
            fmt(
                "the action role {} belongs to account {}, not to account {} of {}: nothing was changed",
                IN.action_role_arn,
                Path("$.caller.Account"),
                IN.account_id,
                IN.instance_id,
            ),
        ),
        "AuditUnavailable": ends_as(
            "audit_unavailable",
            "audit",
            fmt(
                "Nothing was changed: the audit log is unavailable ({}), and there is no {} without an audit trail.",
                AUDIT_ERROR.dot("Cause"),
                IN.action,
            ),
        ),
    }
