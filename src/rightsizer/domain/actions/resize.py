"""Resize: an EC2 host to the target type (validate, stop, modify, start, verify; rolled back to the recorded
original type and state if anything fails). Its type checks run after the host checks every host action shares; it
enters the guarded stop (domain/workflow/host.py) and takes every host the stop leaves (a host found stopped too)."""

from __future__ import annotations

from rightsizer.domain.action_spec import DESCRIBE, HOST_GUARDS, SAFE_FROM_PAIRS, ActionSpec, kind_of
from rightsizer.domain.guards import Source
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
    AZ,
    CAUSE,
    ERROR,
    IN,
    INSTANCE,
    INSTANCE_TYPE,
    PAIR_FIELDS,
    POLL,
    STATE_NAME,
    audit,
    count_poll,
    count_tagged,
    describe_instance,
    ec2,
    failed,
    health,
    progress,
    refuse,
    reset_polls,
    wait,
)
from rightsizer.domain.workflow.plugs import Entry, Fragment, Route
from rightsizer.domain.workflow_contract import RESIZABLE_STATES

SPEC = ActionSpec(
    kind_of(__name__),
    name="Resize",
    done="Resized",
    becomes="{target}",
    change="resize to {target}",
    target_text="`{target}`",
    approve_label="Approve resize",
    confirm_title="Resize this host?",
    confirm_button="Resize",
    confirm_text="{type} → {target}. The host is stopped and started: typically a few minutes of downtime.",
    needs_target=True,
    # ...and a target the region offers, a saving no reservation turns into a cost.
    guarded_by=HOST_GUARDS | {Source.OFFERINGS, Source.COMMITMENTS},
    permissions=DESCRIBE
    | SAFE_FROM_PAIRS
    | {
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeInstanceTypeOfferings",
        "ec2:DescribeInstanceStatus",
        "ec2:StopInstances",
        "ec2:ModifyInstanceAttribute",
        "ec2:StartInstances",  # and the rollback's stop and start
    },
)

NVME_READY_TAG = "rightsizer:nvme-ready"  # a person's word that the OS has NVMe drivers
TARGET_TYPE_INFO, CURRENT_TYPE_INFO = Path("$.target_info.Type"), Path("$.current_info.Type")
CURRENT_STATUS = Path("$.status.Current")
INSTANCE_STATUS = CURRENT_STATUS.dot("InstanceStatus", "Status")
SYSTEM_STATUS = CURRENT_STATUS.dot("SystemStatus", "Status")
VIRTUALIZATION = INSTANCE.dot("VirtualizationType")


def type_checks() -> dict[str, State]:
    """The target must be offered where the host is, and the host's AMI must boot on it."""
    target_ena, target_nvme = (
        TARGET_TYPE_INFO.dot("NetworkInfo", "EnaSupport"),
        TARGET_TYPE_INFO.dot("EbsInfo", "NvmeSupport"),
    )
    current_nvme, host_ena = CURRENT_TYPE_INFO.dot("EbsInfo", "NvmeSupport"), INSTANCE.dot("EnaSupport")
    return {
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
                    "ArrayContains", TARGET_TYPE_INFO.dot("SupportedVirtualizationTypes"), VIRTUALIZATION
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
        "RefuseVirtualization": refuse(
            "not-hvm", fmt("{} is not an HVM instance: current instance types need HVM", IN.instance_id)
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
            fmt("{} does not support {} virtualization", IN.target_type, VIRTUALIZATION),
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
    }


def modify() -> dict[str, State]:
    """The type change, on the host the guarded stop left stopped."""
    return {
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
                goto(all_of(equals(INSTANCE_STATUS, "ok"), equals(SYSTEM_STATUS, "ok")), "StatusPassed"),
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
    """Each way the change can fail after the stop, for the rollback's audit entry and the outcome's message."""
    return {
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
                INSTANCE_STATUS,
                SYSTEM_STATUS,
            ),
        ),
    }


def states() -> dict[str, State]:
    return {**type_checks(), **modify(), **start_and_verify(), **change_failures()}


WORKFLOW = Fragment(
    states,
    routes={Entry.HOST_CHECKED: Route("DescribeTargetType"), Entry.STOPPED: Route("ModifyType", rest=True)},
    request=PAIR_FIELDS,
    bad_request=any_of(not_(one_of(IN.expected_state, *RESIZABLE_STATES)), equals(IN.target_type, IN.expected_type)),
    host_checks=(
        (any_of(present(VIRTUALIZATION, False), not_(equals(VIRTUALIZATION, "hvm"))), "RefuseVirtualization"),
    ),
)
