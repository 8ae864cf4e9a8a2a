"""The instance workflow's repeated shapes, each defined once: the Retry policies, an audit entry, a progress event,
an SDK call as the account's action role, a refusal, a failure, an outcome and how each outcome ends, the request
checks' rules.

Paths of the execution input come from `IN` (the fields of WorkflowInput); the audit and lock keys and the event
source from the workflow's contract (domain/workflow_contract.py), which the Python that reads them shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.schedule_plan import schedule_names
from rightsizer.domain.workflow.asl import (
    Dyn,
    Fields,
    Format,
    Path,
    Rule,
    State,
    catch,
    compare,
    fmt,
    intrinsic,
    is_type,
    jsonata,
    never,
    present,
    retry,
    state,
)
from rightsizer.domain.workflow_contract import (
    AUDIT_PK,
    AUDIT_SK,
    LOCK_PK,
    LOCK_SK,
    PK,
    RESIZE_EVENT_DETAIL_TYPE,
    RESIZE_EVENT_SOURCE,
    SK,
    WorkflowError,
    WorkflowInput,
)

IN: Any = Fields(WorkflowInput)  # IN.instance_id == "$.instance_id"; IN.pair.group == "$.pair.group"
ENTERED = Path("$$.State.EnteredTime")
EXECUTION = Path("$$.Execution.Id")
TABLE = "${TableName}"  # a DefinitionSubstitution (template.yaml)
TASK_TIMEOUT = 60
ACTOR = "resize-workflow"  # who the audit entries of the workflow's own steps name

# What the states write into the execution's data.
DESCRIBED = Path("$.described")  # the host as EC2 last described it
INSTANCE = DESCRIBED.dot("Instance")
STATE_NAME = INSTANCE.dot("State", "Name")
INSTANCE_TYPE = INSTANCE.dot("InstanceType")
ERROR, AUDIT_ERROR, NOTIFY_ERROR = Path("$.error"), Path("$.audit_error"), Path("$.notify_error")
REFUSAL, FAILURE, ROLLBACK_FAILURE = Path("$.refusal"), Path("$.failure"), Path("$.rollback_failure")
OUTCOME, HEALTH, POLL = Path("$.outcome"), Path("$.health"), Path("$.poll")
CAUSE = ERROR.dot("Cause")
AZ = INSTANCE.dot("Placement", "AvailabilityZone")
SCHEDULE_IN = IN.schedule
PAIR = IN.pair
PAIR_PREFIX = schedule_names("{}")[0].rsplit("-", 1)[0] + "-"  # rightsizer-<instance id>-: one pair per host

# -- Retry: each policy once --------------------------------------------------------------------------------------
# DynamoDB and EventBridge writes: a short retry, then the Catch decides (no audit, no action).
RETRY_WRITE = retry(["States.TaskFailed", "States.Timeout"], interval=1, attempts=2)
# Step Functions names every EC2 error Ec2.Ec2Exception, throttling included (moto: ec2.ec2Exception).
EC2_ERRORS = ("Ec2.Ec2Exception", "ec2.ec2Exception", "States.Timeout")
RETRY_EC2 = retry(EC2_ERRORS, interval=1, attempts=5, max_delay=20)
RETRY_EC2_ROLLBACK = retry(EC2_ERRORS, interval=5, attempts=6, max_delay=60)  # undoing: try harder
RETRY_SCHEDULER = retry(
    ("Scheduler.ThrottlingException", "Scheduler.InternalServerException", "States.Timeout"),
    interval=1,
    attempts=5,
    max_delay=20,
)
CONDITION_FAILED = "DynamoDB.ConditionalCheckFailedException"
NO_RETRY_ON_CONDITION = never([CONDITION_FAILED])  # an answer, not a fault


def dynamodb(operation: str, parameters: Mapping[str, Any], next_state: str, **fields: Any) -> State:
    return state(
        "Task",
        Resource=f"arn:aws:states:::dynamodb:{operation}",
        TimeoutSeconds=TASK_TIMEOUT,
        Parameters={"TableName": TABLE, **parameters},
        Next=next_state,
        **fields,
    )


def lock_key() -> dict[str, Any]:
    """The instance's lock item (keys.lock_key in the store), as the ASL writes it."""
    return {PK: {"S": fmt(LOCK_PK, IN.instance_id)}, SK: {"S": LOCK_SK}}


def audit(
    event: str | Format | Path,
    detail: Format | Path,
    next_state: str,
    *,
    on_error: str | None = None,
    actor: str | Path = ACTOR,
    comment: str | None = None,
) -> State:
    """One audit entry (AUDIT_PK / AUDIT_SK): `on_error` is where a failed write goes (default: on)."""
    item = {
        PK: {"S": fmt(AUDIT_PK, IN.recommendation_id)},
        SK: {"S": fmt(AUDIT_SK, ENTERED, event)},
        "actor": {"S": actor},
        "event": {"S": event},
        "detail": {"S": detail},
        "expiration": {"N": IN.audit_expiration},
    }
    return dynamodb(
        "putItem",
        {"Item": item},
        next_state,
        Comment=comment,
        ResultPath=None,
        Retry=[RETRY_WRITE],
        Catch=[catch(on_error or next_state, AUDIT_ERROR)],
    )


def progress(step: str | Path, message: Format | Path, next_state: str, *, status: str | Path = "") -> State:
    """A progress event on the default bus (RESIZE_EVENT_SOURCE); a lost one never stops the workflow."""
    detail = {
        "recommendation_id": IN.recommendation_id,
        "instance_id": IN.instance_id,
        "step": step,
        "status": status or ApprovalStatus.RUNNING.value,
        "message": message,
        "from_type": IN.expected_type,
        "to_type": IN.target_type,
        "action": IN.action,
    }
    return state(
        "Task",
        Resource="arn:aws:states:::events:putEvents",
        TimeoutSeconds=TASK_TIMEOUT,
        Parameters={
            "Entries": [{"Source": RESIZE_EVENT_SOURCE, "DetailType": RESIZE_EVENT_DETAIL_TYPE, "Detail": detail}]
        },
        ResultPath=None,
        Retry=[RETRY_WRITE],
        Catch=[catch(next_state, NOTIFY_ERROR)],
        Next=next_state,
    )


def sdk(
    service_operation: str,
    parameters: Mapping[str, Any],
    next_state: str,
    *,
    on_error: str,
    retrier: dict[str, Any],
    result: Path | None = None,
    selector: Mapping[str, Any] | None = None,
    error_path: Path = ERROR,
    comment: str | None = None,
) -> State:
    """An AWS SDK call as the host's account's action role (task Credentials); `result` None keeps the input."""
    return state(
        "Task",
        Comment=comment,
        Resource=f"arn:aws:states:::aws-sdk:{service_operation}",
        Credentials={"RoleArn": IN.action_role_arn},
        TimeoutSeconds=TASK_TIMEOUT,
        Parameters=dict(parameters),
        ResultSelector=selector,
        ResultPath=result,
        Retry=[retrier],
        Catch=[catch(on_error, error_path)],
        Next=next_state,
    )


def data(path: Path) -> str:
    """A JSONPath of the execution's data as a JSONata state reads it: "$.sagemaker.name" is
    "$states.input.sagemaker.name" (so names still come from IN, and a renamed field still fails the build)."""
    if not path.startswith("$."):
        raise ValueError(f"not a path into the state's input: {path}")
    return "$states.input" + path[1:]


def sdk_jsonata(
    service_operation: str,
    arguments: Mapping[str, Any] | str,
    output: str,
    next_state: str,
    *,
    on_error: str,
    retrier: dict[str, Any],
    comment: str | None = None,
) -> State:
    """An AWS SDK call as the action role, written in JSONata: `arguments` and `output` are JSONata (the output
    replaces the state's data: merge the answer into `$states.input`); a caught error lands in $.error, as `sdk`'s."""
    return state(
        "Task",
        Comment=comment,
        QueryLanguage="JSONata",
        Resource=f"arn:aws:states:::aws-sdk:{service_operation}",
        Credentials={"RoleArn": jsonata(data(IN.action_role_arn))},
        TimeoutSeconds=TASK_TIMEOUT,
        Arguments=arguments,
        Output=output,
        Retry=[retrier],
        Catch=[
            {
                "ErrorEquals": ["States.ALL"],
                "Output": jsonata(f"$merge([$states.input, {{'{ERROR[2:]}': $states.errorOutput}}])"),
                "Next": on_error,
            }
        ],
        Next=next_state,
    )


def ec2(operation: str, parameters: Mapping[str, Any], next_state: str, **options: Any) -> State:
    return sdk(f"ec2:{operation}", parameters, next_state, **{"retrier": RETRY_EC2, **options})


def scheduler(operation: str, parameters: Mapping[str, Any], next_state: str, **options: Any) -> State:
    return sdk(f"scheduler:{operation}", parameters, next_state, retrier=RETRY_SCHEDULER, **options)


THE_INSTANCE = {"InstanceIds": intrinsic("Array", IN.instance_id)}


def describe_instance(next_state: str, *, on_error: str, comment: str | None = None) -> State:
    """The host as it is now, into $.described.Instance."""
    selector = {"Instance": Path("$.Reservations[0].Instances[0]")}
    return ec2(
        "describeInstances",
        THE_INSTANCE,
        next_state,
        on_error=on_error,
        result=DESCRIBED,
        selector=selector,
        comment=comment,
    )


def count_tagged(tag_filter: Mapping[str, Any], result: Path, next_state: str, comment: str | None = None) -> State:
    """How many reservations hold the host with this tag filter (0 or 1): tag keys from the input cannot go into a
    JSONPath filter, EC2's filter takes them."""
    return ec2(
        "describeInstances",
        {**THE_INSTANCE, "Filters": [dict(tag_filter)]},
        next_state,
        on_error="RefuseNotDescribed",
        result=result,
        selector={"count": intrinsic("ArrayLength", Path("$.Reservations"))},
        comment=comment,
    )


def refuse(code: str, reason: Format) -> State:
    """Nothing was touched: say why, in words (`code` for machines)."""
    return state("Pass", Parameters={"code": code, "reason": reason}, ResultPath=REFUSAL, Next="OutcomeRefused")


def failed(step: str, reason: Format) -> State:
    """A step of the change failed after the host may have been touched: roll back."""
    return state("Pass", Parameters={"step": step, "reason": reason}, ResultPath=FAILURE, Next="RecordRollbackStarted")


def note(result: Path, reason: str | Format, next_state: str) -> State:
    """Why a schedule or a rollback went wrong, for the outcome's message."""
    return state("Pass", Parameters={"reason": reason}, ResultPath=result, Next=next_state)


def health(note_text: str | Format, next_state: str = "OutcomeSucceeded", comment: str | None = None) -> State:
    """What the success is based on ($.health.note, in the outcome's message)."""
    if isinstance(note_text, Dyn):
        return state("Pass", Comment=comment, Parameters={"note": note_text}, ResultPath=HEALTH, Next=next_state)
    return state("Pass", Comment=comment, ResultPath=HEALTH, Next=next_state, Result={"note": note_text})


def outcome(kind: str, status: str, step: str, message: Format | Path, comment: str | None = None) -> State:
    """How the execution ends: `kind` picks the Fail (or Done) state, `status` is the approval's (ApprovalStatus)."""
    parameters = {"kind": kind, "status": status, "step": step, "message": message}
    return state("Pass", Comment=comment, Parameters=parameters, ResultPath=OUTCOME, Next="RecordOutcome")


def reset_polls(next_state: str) -> State:
    return state("Pass", ResultPath=POLL, Next=next_state, Result={"count": 0})


def count_poll(next_state: str) -> State:
    return state(
        "Pass", Parameters={"count": intrinsic("MathAdd", POLL.dot("count"), 1)}, ResultPath=POLL, Next=next_state
    )


def wait(next_state: str) -> State:
    """`wait_seconds` from the input: 0 in tests (Wait states sleep for real in moto)."""
    return state("Wait", Next=next_state, SecondsPath=IN.wait_seconds)


# -- how an execution ends ------------------------------------------------------------------------------------------
# The outcome's kind -> (the approval's status, its Fail state, that state's Error). The notifier reads the Error back
# (services/notify.py); a success ends in a Done state of its action's (`Fragment.done`) instead.
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
    """An outcome of one of ENDINGS' kinds (its status follows)."""
    return outcome(kind, ENDINGS[kind][0], step, message, comment)


def done(state_text: str | Path, health_text: str | Path, comment: str) -> State:
    """A success's clean output (the raw answers carry timestamps nobody needs): each action names its Done state."""
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


# -- the request checks' rules (States.Runtime errors cannot be caught: a path must be proved there first) ---------


def text(path: Path) -> list[Rule]:
    return [present(path), is_type(path, "String")]


def bounded(path: Path, low: int, high: int) -> list[Rule]:
    return [
        present(path),
        is_type(path, "Numeric"),
        compare(path, "GreaterThanEquals", low),
        compare(path, "LessThanEquals", high),
    ]


# The host's pair (every stop and resize asks Scheduler for it), and the pair a schedule creates or removes.
PAIR_FIELDS = tuple(rule for path in (PAIR.group, PAIR.stop_name, PAIR.start_name) for rule in text(path))
SCHEDULE_FIELDS = (
    *(
        rule
        for name in ("group", "stop_name", "start_name", "stop_cron", "start_cron", "time_zone", "description")
        for rule in text(getattr(SCHEDULE_IN, name))
    ),
    *(
        present(getattr(SCHEDULE_IN, half).dot(field))
        for half in ("stop_target", "start_target")
        for field in ("Arn", "RoleArn", "Input")
    ),
)


def delete_schedule(half: str, next_state: str, on_error: str, comment: str | None = None) -> State:
    """Delete one half of the pair (`half`: "start" or "stop"): a schedule's undo, an unschedule's work."""
    name = getattr(SCHEDULE_IN, f"{half}_name")
    return scheduler(
        "deleteSchedule",
        {"Name": name, "GroupName": SCHEDULE_IN.group},
        next_state,
        on_error=on_error,
        error_path=Path("$.delete_error"),
        comment=comment,
    )
