"""The instance workflow (resize, stop, schedule, unschedule), state by state, in the order of resize.asl.json.

Each section is a function returning its states; the shapes they share are in statemachine/fragments.py. What a
state does is said in its Comment (which the JSON keeps) or next to it here. docs/resize-workflow.md tells the story.
"""

from __future__ import annotations

from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import ActionKind
from rightsizer.domain.owners import OWNER_TAG_FILTERS
from rightsizer.domain.schedule_plan import schedule_names
from rightsizer.domain.workflow_contract import (
    EXECUTION_TIMEOUT,
    MAX_POLLS,
    MAX_WAIT_SECONDS,
    RESIZABLE_STATES,
    WorkflowError,
)
from statemachine import sagemaker as sm
from statemachine.asl import (
    Format,
    Path,
    Rule,
    State,
    all_of,
    any_of,
    catch,
    compare,
    equals,
    fmt,
    goto,
    intrinsic,
    is_type,
    not_,
    one_of,
    present,
    retry,
    state,
)
from statemachine.fragments import (
    AUDIT_ERROR,
    CONDITION_FAILED,
    ENTERED,
    ERROR,
    EXECUTION,
    FAILURE,
    HEALTH,
    IN,
    INSTANCE,
    INSTANCE_TYPE,
    NO_RETRY_ON_CONDITION,
    OUTCOME,
    POLL,
    REFUSAL,
    RETRY_EC2_ROLLBACK,
    RETRY_WRITE,
    ROLLBACK_FAILURE,
    STATE_NAME,
    audit,
    count_poll,
    count_tagged,
    describe_instance,
    dynamodb,
    ec2,
    failed,
    health,
    lock_key,
    note,
    outcome,
    progress,
    refuse,
    reset_polls,
    scheduler,
    sdk,
    wait,
)

COMMENT = (
    "GPU Rightsizer: the instance workflow. One guarded one-click action on one EC2 instance: resize (validate, stop, "
    "modify, start, verify, with rollback to the recorded original type and state), stop (never terminate), create "
    "or remove an EventBridge Scheduler stop/start pair. Every action shares the input checks, the audit trail in "
    "DynamoDB, the per-instance lock, the validation, the progress events on the default EventBridge bus and the "
    "outcome path. EC2 and Scheduler calls run with the account's action role (task Credentials). See "
    "docs/resize-workflow.md."
)
TIMEOUT_SECONDS = int(EXECUTION_TIMEOUT.total_seconds())
# The EC2 host's actions this fragment implements; with the SageMaker fragment's, every action CheckScheduleRequest
# lets in. A registered ActionKind that no fragment routes fails the build (`machine`), never runs another's path.
RESIZE, STOP, SCHEDULE, UNSCHEDULE = (
    kind.value for kind in (ActionKind.RESIZE, ActionKind.STOP, ActionKind.SCHEDULE, ActionKind.UNSCHEDULE)
)
HANDLED_ACTIONS = (RESIZE, STOP, SCHEDULE, UNSCHEDULE)
NVME_READY_TAG = "rightsizer:nvme-ready"  # a person's word that the OS has NVMe drivers
PAIR_PREFIX = schedule_names("{}")[0].rsplit("-", 1)[0] + "-"  # rightsizer-<instance id>-: one pair per host
CAUSE = ERROR.dot("Cause")
AZ = INSTANCE.dot("Placement", "AvailabilityZone")
TARGET_TYPE_INFO, CURRENT_TYPE_INFO = Path("$.target_info.Type"), Path("$.current_info.Type")
CURRENT_STATUS = Path("$.status.Current")
ROLLBACK = Path("$.rollback")
SCHEDULE_IN = IN.schedule
PAIR = IN.pair

# How an execution ends: the outcome's kind -> (the approval's status, its Fail state, that state's Error). The
# notifier reads the Error back (services/notify.py); a success ends in Done (or DoneUnscheduled) instead.
SUCCEEDED = "succeeded"
ENDINGS: dict[str, tuple[str, str, WorkflowError | None]] = {
    SUCCEEDED: (ApprovalStatus.SUCCEEDED.value, "", None),
    "refused": (ApprovalStatus.REFUSED.value, "Refused", WorkflowError.REFUSED),
    "audit_unavailable": (ApprovalStatus.UNCHANGED.value, "AuditFailed", WorkflowError.AUDIT_UNAVAILABLE),
    "rolled_back": (ApprovalStatus.ROLLED_BACK.value, "RolledBack", WorkflowError.ROLLED_BACK),
    "unchanged": (ApprovalStatus.UNCHANGED.value, "Unchanged", WorkflowError.UNCHANGED),
    "rollback_failed": (ApprovalStatus.FAILED.value, "RollbackFailed", WorkflowError.ROLLBACK_FAILED),
}
UNKNOWN_END = "rollback_failed"  # Finish's Default: an outcome it does not know needs a person


def ends_as(kind: str, step: str, message: Format | Path, comment: str | None = None) -> State:
    return outcome(kind, ENDINGS[kind][0], step, message, comment)


def _text(path: Path) -> list[Rule]:
    return [present(path), is_type(path, "String")]


def _bounded(path: Path, low: int, high: int) -> list[Rule]:
    return [
        present(path),
        is_type(path, "Numeric"),
        compare(path, "GreaterThanEquals", low),
        compare(path, "LessThanEquals", high),
    ]


def request_checks() -> dict[str, State]:
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
            for rule in _text(path)
        ),
        *_bounded(IN.wait_seconds, 0, MAX_WAIT_SECONDS),
        *_bounded(IN.max_polls, 1, MAX_POLLS),
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
            for rule in _text(path)
        ),
    ]
    pair = [rule for path in (PAIR.group, PAIR.stop_name, PAIR.start_name) for rule in _text(path)]
    texts = ("group", "stop_name", "start_name", "stop_cron", "start_cron", "time_zone", "description")
    schedule = [rule for name in texts for rule in _text(getattr(SCHEDULE_IN, name))]
    schedule += [
        present(getattr(SCHEDULE_IN, half).dot(field))
        for half in ("stop_target", "start_target")
        for field in ("Arn", "RoleArn", "Input")
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
                "action its resource (statemachine/sagemaker.py)."
            ),
            Choices=[
                # The actions a fragment routes (checked against the registry by `machine`), and nothing else.
                goto(not_(one_of(IN.action, *routed_actions())), "InvalidRequest"),
                goto(all_of(one_of(IN.action, RESIZE, STOP), not_(all_of(*pair))), "InvalidRequest"),
                goto(all_of(one_of(IN.action, SCHEDULE, UNSCHEDULE), not_(all_of(*schedule))), "InvalidRequest"),
                *sm.request_fields(),
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
                goto(equals(IN.action, UNSCHEDULE), "DeleteStopSchedule"),
            ],
            Default="AcquireLock",
        ),
    }


def lock_and_validation() -> dict[str, State]:
    lock_item = Path("$.lock.Item")
    target_ena, target_nvme = (
        TARGET_TYPE_INFO.dot("NetworkInfo", "EnaSupport"),
        TARGET_TYPE_INFO.dot("EbsInfo", "NvmeSupport"),
    )
    current_nvme, host_ena = CURRENT_TYPE_INFO.dot("EbsInfo", "NvmeSupport"), INSTANCE.dot("EnaSupport")
    lifecycle, root, virtualization = (
        INSTANCE.dot(n) for n in ("InstanceLifecycle", "RootDeviceType", "VirtualizationType")
    )
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
            Comment="A SageMaker action reads its endpoint or notebook instance (statemachine/sagemaker.py).",
            Choices=sm.routes(),
            Default="DescribeInstance",
        ),
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
                goto(
                    any_of(
                        all_of(
                            equals(IN.action, RESIZE),
                            any_of(
                                not_(one_of(IN.expected_state, *RESIZABLE_STATES)),
                                equals(IN.target_type, IN.expected_type),
                            ),
                        ),
                        all_of(equals(IN.action, STOP), not_(equals(IN.expected_state, "running"))),
                    ),
                    "RefuseBadRequest",
                ),
                goto(not_(equals(INSTANCE_TYPE, IN.expected_type)), "RefuseStaleType"),
                goto(not_(equals(STATE_NAME, IN.expected_state)), "RefuseStaleState"),
                goto(all_of(present(lifecycle), not_(equals(lifecycle, "on-demand"))), "RefuseLifecycle"),
                goto(any_of(present(root, False), not_(equals(root, "ebs"))), "RefuseRootDevice"),
                goto(
                    all_of(
                        equals(IN.action, RESIZE),
                        any_of(present(virtualization, False), not_(equals(virtualization, "hvm"))),
                    ),
                    "RefuseVirtualization",
                ),
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
        "TypeChecksNeeded": state(
            "Choice", Choices=[goto(equals(IN.action, RESIZE), "DescribeTargetType")], Default="RecordValidated"
        ),
        "DescribeTargetType": ec2(
            "describeInstanceTypes",
            {"InstanceTypes": intrinsic("Array", IN.target_type)},
            "DescribeCurrentType",
            on_error="RefuseUnknownTarget",
            result=Path("$.target_info"),
            selector={"Type": Path("$.InstanceTypes[0]")},
        ),
        "DescribeCurrentType": ec2(
            "describeInstanceTypes",
            {"InstanceTypes": intrinsic("Array", IN.expected_type)},
            "CountOfferings",
            on_error="RefuseNotDescribed",
            result=Path("$.current_info"),
            selector={"Type": Path("$.InstanceTypes[0]")},
        ),
        "CountOfferings": ec2(
            "describeInstanceTypeOfferings",
            {
                "LocationType": "availability-zone",
                "Filters": [
                    {"Name": "location", "Values": intrinsic("Array", AZ)},
                    {"Name": "instance-type", "Values": intrinsic("Array", IN.target_type)},
                ],
            },
            "Compatibility",
            on_error="RefuseNotDescribed",
            result=Path("$.offering_check"),
            selector={"count": intrinsic("ArrayLength", Path("$.InstanceTypeOfferings"))},
            comment="A type the AZ does not offer would leave the host stopped with nothing to start.",
        ),
        "Compatibility": state(
            "Pass",
            Parameters={
                "architecture": intrinsic(
                    "ArrayContains",
                    TARGET_TYPE_INFO.dot("ProcessorInfo", "SupportedArchitectures"),
                    INSTANCE.dot("Architecture"),
                ),
                "virtualization": intrinsic(
                    "ArrayContains", TARGET_TYPE_INFO.dot("SupportedVirtualizationTypes"), virtualization
                ),
            },
            ResultPath=Path("$.compat"),
            Next="CheckCompatibility",
        ),
        "CheckCompatibility": state(
            "Choice",
            Comment=(
                "The AMI must boot on the target: same architecture, HVM, and the ENA/NVMe drivers the target needs."
            ),
            Choices=[
                goto(equals(Path("$.offering_check.count"), 0), "RefuseNotOffered"),
                goto(equals(Path("$.compat.architecture"), False), "RefuseArchitecture"),
                goto(equals(Path("$.compat.virtualization"), False), "RefuseTargetVirtualization"),
                goto(
                    all_of(
                        present(target_ena),
                        equals(target_ena, "required"),
                        any_of(present(host_ena, False), equals(host_ena, False)),
                    ),
                    "RefuseEna",
                ),
                goto(
                    all_of(
                        present(target_nvme),
                        equals(target_nvme, "required"),
                        present(current_nvme),
                        equals(current_nvme, "unsupported"),
                    ),
                    "CountNvmeReadyTag",
                ),
            ],
            Default="RecordValidated",
        ),
        "CountNvmeReadyTag": count_tagged(
            {"Name": f"tag:{NVME_READY_TAG}", "Values": ["true"]},
            Path("$.nvme_check"),
            "CheckNvmeReady",
            (
                "Moving from a Xen type to an NVMe-only type needs NVMe drivers in the OS; only a person "
                "can vouch for that."
            ),
        ),
        "CheckNvmeReady": state(
            "Choice", Choices=[goto(equals(Path("$.nvme_check.count"), 0), "RefuseNvme")], Default="RecordValidated"
        ),
    }


def refusals() -> dict[str, State]:
    """Every refusal says why in words; nothing was touched (the lock is released if this execution took it)."""
    lock_item = Path("$.lock.Item")
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
        "RefuseVirtualization": refuse(
            "not-hvm", fmt("{} is not an HVM instance: current instance types need HVM", IN.instance_id)
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
        "RefuseUnknownTarget": refuse(
            "unknown-target", fmt("target type {} could not be described: {}", IN.target_type, CAUSE)
        ),
        "RefuseNotOffered": refuse("not-offered", fmt("{} is not offered in {}", IN.target_type, AZ)),
        "RefuseArchitecture": refuse(
            "architecture",
            fmt(
                "{} does not support the {} architecture of {}",
                IN.target_type,
                INSTANCE.dot("Architecture"),
                IN.instance_id,
            ),
        ),
        "RefuseTargetVirtualization": refuse(
            "virtualization",
            fmt("{} does not support {} virtualization", IN.target_type, INSTANCE.dot("VirtualizationType")),
        ),
        "RefuseEna": refuse(
            "ena",
            fmt("{} requires ENA, but enhanced networking (ENA) is not enabled on {}", IN.target_type, IN.instance_id),
        ),
        "RefuseNvme": refuse(
            "nvme",
            fmt(
                "{} exposes EBS volumes as NVMe and {} does not: tag {} {}=true once its OS has NVMe drivers",
                IN.target_type,
                IN.expected_type,
                IN.instance_id,
                NVME_READY_TAG,
            ),
        ),
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


def validated_and_routed() -> dict[str, State]:
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
            Choices=[goto(equals(IN.action, SCHEDULE), "CreateStartSchedule")],
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


def stop_and_modify() -> dict[str, State]:
    """The guarded stop (a stop ends here), then the type change of a resize."""
    return {
        "WasRunning": state(
            "Choice",
            Comment="A stopped host is only modified and stays stopped; a running one is stopped first.",
            Choices=[goto(equals(STATE_NAME, "running"), "StopInstance")],
            Default="ModifyType",
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
        "StopOnly": state("Choice", Choices=[goto(equals(IN.action, STOP), "StoppedAsApproved")], Default="ModifyType"),
        "StoppedAsApproved": health(
            "stopped as approved; its EBS volumes are kept and nothing was terminated",
            comment=(
                "Never terminate: the host is stopped, its EBS volumes and its type are kept (EBS snapshots are not "
                "taken)."
            ),
        ),
        "ModifyType": ec2(
            "modifyInstanceAttribute",
            {"InstanceId": IN.instance_id, "InstanceType": {"Value": IN.target_type}},
            "RecordModified",
            on_error="ModifyFailed",
        ),
        "RecordModified": audit(
            "modified",
            fmt("instance type {} -> {}", IN.expected_type, IN.target_type),
            "StartOrVerify",
            on_error="AuditFailedAfterTouch",
        ),
        "StartOrVerify": state(
            "Choice", Choices=[goto(equals(IN.expected_state, "running"), "NotifyModified")], Default="VerifyStopped"
        ),
    }


def start_and_verify() -> dict[str, State]:
    """A host that was running is started on the new type and must pass its status checks; a stopped one stays so."""
    instance_status, system_status = (
        CURRENT_STATUS.dot("InstanceStatus", "Status"),
        CURRENT_STATUS.dot("SystemStatus", "Status"),
    )
    return {
        "NotifyModified": progress(
            "modified", fmt("Stopped and changed to {}: starting it again.", IN.target_type), "StartInstance"
        ),
        "StartInstance": ec2(
            "startInstances",
            {"InstanceIds": intrinsic("Array", IN.instance_id)},
            "RecordStartRequested",
            on_error="StartFailed",
        ),
        "RecordStartRequested": audit(
            "start_requested",
            fmt("starting {} as {}", IN.instance_id, IN.target_type),
            "ResetStartPolls",
            on_error="AuditFailedAfterTouch",
        ),
        "ResetStartPolls": reset_polls("WaitForRunning"),
        "WaitForRunning": wait("DescribeAfterStart"),
        "DescribeAfterStart": describe_instance("IsRunning", on_error="DescribeFailed"),
        "IsRunning": state(
            "Choice",
            Comment=(
                "Capacity errors can also surface late: the instance goes pending -> stopped. Decide from the state."
            ),
            Choices=[
                goto(all_of(equals(STATE_NAME, "running"), equals(INSTANCE_TYPE, IN.target_type)), "RecordRunning"),
                goto(not_(one_of(STATE_NAME, "pending", "running")), "NotRunningAfterStart"),
                goto(equals(STATE_NAME, "running"), "UnexpectedType"),
                goto(compare(POLL.dot("count"), "GreaterThanEquals", IN.max_polls), "StartTimedOut"),
            ],
            Default="CountStartPoll",
        ),
        "CountStartPoll": count_poll("WaitForRunning"),
        "RecordRunning": audit(
            "running",
            fmt("{} running as {}", IN.instance_id, IN.target_type),
            "ResetStatusPolls",
            on_error="AuditFailedAfterTouch",
        ),
        "ResetStatusPolls": reset_polls("DescribeStatus"),
        "DescribeStatus": ec2(
            "describeInstanceStatus",
            {"InstanceIds": intrinsic("Array", IN.instance_id), "IncludeAllInstances": True},
            "StatusReported",
            on_error="StatusUnavailable",
            result=Path("$.status"),
            selector={
                "reported": intrinsic("ArrayLength", Path("$.InstanceStatuses")),
                "Statuses": Path("$.InstanceStatuses"),
            },
            comment=(
                "IncludeAllInstances: an entry comes back in every state, so an empty answer means no data, not "
                "'not running'."
            ),
        ),
        "StatusReported": state(
            "Choice", Choices=[goto(equals(Path("$.status.reported"), 0), "StatusMissing")], Default="PickStatus"
        ),
        "PickStatus": state(
            "Pass",
            Comment=(
                "A literal [0] at the end of a path yields the element itself (fields under it would come back as "
                "lists)."
            ),
            Parameters={"Current": Path("$.status.Statuses[0]")},
            ResultPath=Path("$.status"),
            Next="StatusChecksOk",
        ),
        "StatusChecksOk": state(
            "Choice",
            Choices=[
                goto(all_of(equals(instance_status, "ok"), equals(system_status, "ok")), "StatusPassed"),
                goto(not_(equals(CURRENT_STATUS.dot("InstanceState", "Name"), "running")), "NotRunningAfterStart"),
                goto(compare(POLL.dot("count"), "GreaterThanEquals", IN.max_polls), "StatusChecksFailed"),
            ],
            Default="CountStatusPoll",
        ),
        "CountStatusPoll": count_poll("WaitForStatus"),
        "WaitForStatus": wait("DescribeStatus"),
        "StatusPassed": health("status checks ok"),
        "StatusMissing": health(
            "no status checks reported; accepted because the instance is running",
            comment=(
                "No status data (some emulators, brand-new partitions): the host was just described running, so "
                "accept it."
            ),
        ),
        "StatusUnavailable": health(
            fmt("status checks unavailable ({}); accepted because the instance is running", ERROR.dot("Error")),
            comment="DescribeInstanceStatus failed even after retries; same degradation as an empty answer.",
        ),
        "VerifyStopped": describe_instance("CheckStoppedResult", on_error="DescribeFailed"),
        "CheckStoppedResult": state(
            "Choice",
            Choices=[goto(all_of(equals(STATE_NAME, "stopped"), equals(INSTANCE_TYPE, IN.target_type)), "LeftStopped")],
            Default="UnexpectedType",
        ),
        "LeftStopped": health("left stopped, as it was"),
    }


def change_failures() -> dict[str, State]:
    """Each way the change can fail, for the rollback's audit entry and the outcome's message."""
    instance_status, system_status = (
        CURRENT_STATUS.dot("InstanceStatus", "Status"),
        CURRENT_STATUS.dot("SystemStatus", "Status"),
    )
    return {
        "StopFailed": failed("stop", fmt("stop failed: {}", CAUSE)),
        "StopTimedOut": failed("stop", fmt("{} did not stop after {} polls", IN.instance_id, IN.max_polls)),
        "ModifyFailed": failed("modify", fmt("changing the type to {} failed: {}", IN.target_type, CAUSE)),
        "StartFailed": failed("start", fmt("starting as {} failed: {}", IN.target_type, CAUSE)),
        "StartTimedOut": failed("start", fmt("{} was not running after {} polls", IN.instance_id, IN.max_polls)),
        "NotRunningAfterStart": failed(
            "start", fmt("{} went {} after the start as {}", IN.instance_id, STATE_NAME, IN.target_type)
        ),
        "UnexpectedType": failed(
            "verify",
            fmt("{} is {} and {}, expected {}", IN.instance_id, STATE_NAME, INSTANCE_TYPE, IN.target_type),
        ),
        "StatusChecksFailed": failed(
            "status",
            fmt(
                "status checks not ok after {} polls (instance {}, system {})",
                IN.max_polls,
                instance_status,
                system_status,
            ),
        ),
        "DescribeFailed": failed("describe", fmt("could not read the instance state: {}", CAUSE)),
        "AuditFailedAfterTouch": failed("audit", fmt("audit log unavailable: {}", AUDIT_ERROR.dot("Cause"))),
    }


def _create_schedule(half: str, next_state: str, on_error: str) -> State:
    """One half of the pair (`half`: "start" or "stop"), as the approver approved it."""
    return scheduler(
        "createSchedule",
        {
            "Name": getattr(SCHEDULE_IN, f"{half}_name"),
            "GroupName": SCHEDULE_IN.group,
            "ScheduleExpression": getattr(SCHEDULE_IN, f"{half}_cron"),
            "ScheduleExpressionTimezone": SCHEDULE_IN.time_zone,
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "State": "ENABLED",
            "Description": fmt(
                f"GPU Rightsizer: {half} {{}} ({{}}), approved by {{}}",
                IN.instance_id,
                SCHEDULE_IN.description,
                IN.approver,
            ),
            "Target": getattr(SCHEDULE_IN, f"{half}_target"),
        },
        next_state,
        on_error=on_error,
    )


def _delete_schedule(half: str, next_state: str, on_error: str, comment: str | None = None) -> State:
    name = getattr(SCHEDULE_IN, f"{half}_name")
    return scheduler(
        "deleteSchedule",
        {"Name": name, "GroupName": SCHEDULE_IN.group},
        next_state,
        on_error=on_error,
        error_path=Path("$.delete_error"),
        comment=comment,
    )


def _scheduled(half: str) -> Format:
    return fmt(
        "schedule {} in group {}: {} in {}",
        getattr(SCHEDULE_IN, f"{half}_name"),
        SCHEDULE_IN.group,
        getattr(SCHEDULE_IN, f"{half}_cron"),
        SCHEDULE_IN.time_zone,
    )


def schedules() -> dict[str, State]:
    """Create the pair, the start half first (alone it is harmless); undo what was created when anything fails."""
    delete_stop_again = _delete_schedule(
        "stop",
        "DeleteStartScheduleAgain",
        "ScheduleUndoFailed",
        "Undo, the stop half first: a start half left alone is harmless.",
    )
    return {
        "CreateStartSchedule": _create_schedule("start", "RecordStartScheduled", "StartScheduleFailed"),
        "RecordStartScheduled": audit(
            "start_scheduled", _scheduled("start"), "CreateStopSchedule", on_error="ScheduleAuditFailed"
        ),
        "CreateStopSchedule": _create_schedule("stop", "RecordStopScheduled", "StopScheduleFailed"),
        "RecordStopScheduled": audit(
            "stop_scheduled", _scheduled("stop"), "ScheduleCreated", on_error="ScheduleAuditFailedAfterBoth"
        ),
        "ScheduleCreated": health(fmt("schedule created: {}", SCHEDULE_IN.description), "OutcomeScheduled"),
        "StopScheduleFailed": note(
            FAILURE, fmt("the stop schedule could not be created: {}", CAUSE), "DeleteStartScheduleAgain"
        ),
        "StartScheduleFailed": note(
            FAILURE, fmt("the start schedule could not be created: {}", CAUSE), "OutcomeScheduleUnchanged"
        ),
        "ScheduleAuditFailed": note(
            FAILURE, fmt("audit log unavailable: {}", AUDIT_ERROR.dot("Cause")), "DeleteStartScheduleAgain"
        ),
        "ScheduleAuditFailedAfterBoth": note(
            FAILURE, fmt("audit log unavailable: {}", AUDIT_ERROR.dot("Cause")), "DeleteStopScheduleAgain"
        ),
        "DeleteStartScheduleAgain": _delete_schedule("start", "OutcomeScheduleRolledBack", "ScheduleUndoFailed"),
        "DeleteStopScheduleAgain": delete_stop_again,
        "ScheduleUndoFailed": note(
            ROLLBACK_FAILURE,
            fmt("deleting it again failed: {}", Path("$.delete_error.Cause")),
            "OutcomeScheduleRollbackFailed",
        ),
    }


def unschedule() -> dict[str, State]:
    """Delete both halves, then decide from what Scheduler still lists (a half deleted by hand is no error)."""
    delete_stop = _delete_schedule(
        "stop",
        "DeleteStartSchedule",
        "DeleteStartSchedule",
        "A schedule deleted by hand is no error: the listing below decides, from what exists, never from error names.",
    )
    return {
        "DeleteStopSchedule": delete_stop,
        "DeleteStartSchedule": _delete_schedule("start", "ListRemainingSchedules", "ListRemainingSchedules"),
        "ListRemainingSchedules": scheduler(
            "listSchedules",
            {"GroupName": SCHEDULE_IN.group, "NamePrefix": fmt(PAIR_PREFIX, IN.instance_id)},
            "SchedulesGone",
            on_error="RemovalUnverified",
            result=Path("$.remaining"),
            selector={"count": intrinsic("ArrayLength", Path("$.Schedules"))},
        ),
        "SchedulesGone": state(
            "Choice",
            Choices=[goto(equals(Path("$.remaining.count"), 0), "RecordUnscheduled")],
            Default="RemovalIncomplete",
        ),
        "RecordUnscheduled": audit(
            "schedules_deleted",
            fmt(
                "schedules {} and {} deleted from group {}",
                SCHEDULE_IN.stop_name,
                SCHEDULE_IN.start_name,
                SCHEDULE_IN.group,
            ),
            "OutcomeUnscheduled",
        ),
        "RemovalUnverified": note(
            ROLLBACK_FAILURE, fmt("the schedules could not be listed: {}", CAUSE), "OutcomeUnscheduleFailed"
        ),
        "RemovalIncomplete": note(
            ROLLBACK_FAILURE,
            fmt("{} schedule(s) of {} are still there", Path("$.remaining.count"), IN.instance_id),
            "OutcomeUnscheduleFailed",
        ),
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
    """One outcome per way of ending; each then goes through the same audit entry, event and lock release."""
    reason, rollback_reason = FAILURE.dot("reason"), ROLLBACK_FAILURE.dot("reason")
    host_now = (IN.instance_id, INSTANCE_TYPE, STATE_NAME)
    return {
        "OutcomeRefused": ends_as(
            "refused",
            "refused",
            REFUSAL.dot("reason"),
            comment=(
                "Every end goes through one audit entry, one progress event, the lock's release and a Fail (or Done) "
                "named after the outcome."
            ),
        ),
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
        "OutcomeScheduled": ends_as(
            SUCCEEDED,
            "scheduled",
            fmt(
                "Scheduled: {} {} (EventBridge Scheduler {} and {} in group {}).",
                IN.instance_id,
                SCHEDULE_IN.description,
                SCHEDULE_IN.stop_name,
                SCHEDULE_IN.start_name,
                SCHEDULE_IN.group,
            ),
        ),
        "OutcomeScheduleUnchanged": ends_as(
            "unchanged",
            "unchanged",
            fmt("Nothing was changed: {} keeps running as before; {}", IN.instance_id, reason),
        ),
        "OutcomeScheduleRolledBack": ends_as(
            "rolled_back",
            "rolled_back",
            fmt(
                "Rolled back: {}, so the schedules created for {} were deleted again: it keeps running as before.",
                reason,
                IN.instance_id,
            ),
        ),
        "OutcomeScheduleRollbackFailed": ends_as(
            "rollback_failed",
            "rollback_failed",
            fmt(
                "Needs a person: {} and {}. Check the schedules rightsizer-{}-* in group {} ({}).",
                reason,
                rollback_reason,
                IN.instance_id,
                SCHEDULE_IN.group,
                IN.region,
            ),
        ),
        "OutcomeUnscheduled": ends_as(
            SUCCEEDED,
            "unscheduled",
            fmt(
                "Removed: {} no longer stops and starts on a schedule ({} and {} deleted).",
                IN.instance_id,
                SCHEDULE_IN.stop_name,
                SCHEDULE_IN.start_name,
            ),
        ),
        "OutcomeUnscheduleFailed": ends_as(
            "rollback_failed",
            "unschedule_failed",
            fmt(
                "Needs a person: removing the schedules of {} failed ({}). Check group {} in {}.",
                IN.instance_id,
                rollback_reason,
                SCHEDULE_IN.group,
                IN.region,
            ),
        ),
    }


def _done(state_text: str | Path, health_text: str | Path, comment: str) -> State:
    """A clean output for a success (the raw EC2 answers carry timestamps nobody needs)."""
    parameters = {
        "recommendation_id": IN.recommendation_id,
        "instance_id": IN.instance_id,
        "action": IN.action,
        "status": ENDINGS[SUCCEEDED][0],
        "from_type": IN.expected_type,
        "to_type": IN.target_type,
        "state": state_text,
        "health": health_text,
        "message": OUTCOME.dot("message"),
    }
    return state("Pass", Comment=comment, Parameters=parameters, End=True)


def the_end() -> dict[str, State]:
    """Record and announce the outcome, release the lock, end as the outcome says."""
    kind = OUTCOME.dot("kind")
    fails = {name: error for _, name, error in ENDINGS.values() if error is not None}
    default = ENDINGS[UNKNOWN_END][1]
    return {
        "RecordOutcome": audit(OUTCOME.dot("step"), OUTCOME.dot("message"), "NotifyOutcome"),
        "NotifyOutcome": progress(
            OUTCOME.dot("step"), OUTCOME.dot("message"), "ReleaseLock", status=OUTCOME.dot("status")
        ),
        "ReleaseLock": dynamodb(
            "deleteItem",
            {
                "Key": lock_key(),
                "ConditionExpression": "holder = :me",
                "ExpressionAttributeValues": {":me": {"S": EXECUTION}},
            },
            "Finish",
            Comment=(
                "Every end releases the instance, if this execution holds it (a refusal because another resize holds "
                "it leaves that lock alone). The notifier releases it for the ends no state can catch."
            ),
            ResultPath=None,
            Retry=[NO_RETRY_ON_CONDITION, retry(RETRY_WRITE["ErrorEquals"], interval=1, attempts=3)],
            Catch=[catch("Finish", Path("$.release_error"))],
        ),
        "Finish": state(
            "Choice",
            Choices=[
                goto(all_of(equals(kind, SUCCEEDED), equals(IN.action, UNSCHEDULE)), "DoneUnscheduled"),
                goto(all_of(equals(kind, SUCCEEDED), one_of(IN.action, *sm.HANDLED_ACTIONS)), "DoneSageMaker"),
                goto(equals(kind, SUCCEEDED), "Done"),
                *(
                    goto(equals(kind, k), name)
                    for k, (_, name, _) in ENDINGS.items()
                    if k not in (SUCCEEDED, UNKNOWN_END)
                ),
            ],
            Default=default,
        ),
        "Done": _done(
            STATE_NAME, HEALTH.dot("note"), "A clean output: the raw EC2 answers carry timestamps nobody needs here."
        ),
        "DoneUnscheduled": _done(
            "unchanged", "no instance change", "A removal never describes the host: its output says what was removed."
        ),
        "DoneSageMaker": _done(
            IN.action,
            HEALTH.dot("note"),
            "A SageMaker action describes no EC2 instance: its health note says its state.",
        ),
        **{name: state("Fail", Error=error.value, CausePath=OUTCOME.dot("message")) for name, error in fails.items()},
    }


def sagemaker_branches() -> dict[str, State]:
    """The endpoint update and the notebook stop (statemachine/sagemaker.py), ending as every action does."""
    return sm.sections(ends_as)


SECTIONS = (
    request_checks,
    lock_and_validation,
    refusals,
    validated_and_routed,
    stop_and_modify,
    start_and_verify,
    change_failures,
    schedules,
    unschedule,
    rollback,
    outcomes,
    sagemaker_branches,
    the_end,
)


def routed_actions() -> tuple[str, ...]:
    """Every action a fragment implements, in the registry's order; refuses a registered action none routes (it
    would fall through to another action's path) and a routed one the registry does not have."""
    routed = {*HANDLED_ACTIONS, *sm.HANDLED_ACTIONS}
    registered = {kind.value for kind in ActionKind}
    if routed != registered:
        raise ValueError(
            f"actions without a workflow fragment: {sorted(registered - routed)}; "
            f"fragments for no registered action: {sorted(routed - registered)}"
        )
    return tuple(kind.value for kind in ActionKind)


def machine() -> dict[str, object]:
    states: dict[str, State] = {}
    for section in SECTIONS:
        for name, body in section().items():
            if name in states:
                raise ValueError(f"state {name} is defined twice")
            states[name] = body
    return {"Comment": COMMENT, "StartAt": "CheckRequest", "TimeoutSeconds": TIMEOUT_SECONDS, "States": states}
