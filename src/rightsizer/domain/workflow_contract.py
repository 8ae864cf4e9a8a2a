"""The instance workflow's contract with the Python around it (statemachine/resize.asl.json).

* `WorkflowInput` is the execution input: adapters/aws/workflow.py builds it, and the workflow's builders
  (domain/workflow/) take every `$.…` path the ASL reads of it from these field names (a field renamed here fails
  the build, not an execution).
* `InputKey` spells its top-level keys for code that reads an input back (the notifier).
* `WorkflowError` names the Error of each Fail state: the ASL raises them, the notifier reads them back from the
  execution's status change.

Pure data (stdlib and the domain only): the Slack app's cold start may import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import timedelta
from enum import StrEnum
from typing import Any

from rightsizer.domain.action_kinds import ActionKind

# The state machine's TimeoutSeconds: no execution outlives it (the per-instance lock expires after it).
EXECUTION_TIMEOUT = timedelta(hours=3)
# Bounds on the wait loops (CheckRequest refuses larger values as invalid input): 30 minutes at most per loop.
MAX_WAIT_SECONDS = 60
MAX_POLLS = 30
# An endpoint update (new instances, a canary, its bake time, the rest of the traffic) takes tens of minutes.
MAX_SAGEMAKER_POLLS = 150
RESIZABLE_STATES = ("running", "stopped")  # the states a resize may find the host in (a stop: running only)

# Progress events the instance workflow puts on the default EventBridge bus; the notifier posts them to the
# recommendation's Slack thread. Detail: {"recommendation_id", "instance_id", "action" (an ActionKind value), "step",
# "status" ("running" or an outcome: "succeeded" | "rolled_back" | "unchanged" | "refused" | "failed"), "message",
# "from_type", "to_type"}.
RESIZE_EVENT_SOURCE = "gpu-rightsizer.resize"
RESIZE_EVENT_DETAIL_TYPE = "Resize progress"

# The table items the workflow writes itself (its audit entries, its per-instance lock): their key attributes and
# formats, whose `{}` slots str.format and Step Functions' States.Format fill alike, in order. The store's keys
# (adapters/aws/dynamo/keys.py) are these.
PK = "PK"
SK = "SK"
AUDIT_PK = "AUDIT#{}"  # recommendation id
AUDIT_SK = "{}#{}"  # ISO 8601 time, event
LOCK_PK = "LOCK#{}"  # instance id
LOCK_SK = "LOCK"

# What keeps the endpoint update from copying an endpoint config safely, in words. The workflow refuses these
# (domain/actions/update_endpoint.py tests the described config for each key), and the inventory holds their advice
# back from one click with the same words (adapters/aws/sagemaker.py), so no Approve button leads to a refusal.
ENDPOINT_COPY_HELD_BACK: Mapping[str, str] = {
    "components": "its models are inference components, which an endpoint config does not name",
    "serverless": "it has serverless variants",
    "instance_pools": "the variant spreads over instance pools of several types",
    "capacity_reservation": "the variant runs on a capacity reservation of its current type",
    "gpu_partitions": "the variant partitions its GPUs for its current type",
    "execution_role": "its config passes an execution role, which the action role may not pass",
}


class WorkflowError(StrEnum):
    """The Error of the state machine's Fail states (an execution's `error`); the Cause is written for people."""

    INVALID_REQUEST = "InvalidRequest"  # the input failed CheckRequest: nothing ran
    REFUSED = "ResizeRefused"  # a check refused the action: nothing was touched
    AUDIT_UNAVAILABLE = "AuditUnavailable"  # the first audit entry could not be written: nothing was touched
    UNCHANGED = "ResizeUnchanged"  # the action failed before it changed anything
    ROLLED_BACK = "ResizeRolledBack"  # the host was changed, then restored
    ROLLBACK_FAILED = "RollbackFailed"  # the host may be in any state: a person must look


@dataclass(frozen=True)
class SchedulePair:
    """`pair`: the host's stop/start pair, if EventBridge Scheduler has one (a stop or a resize is refused then)."""

    group: str
    stop_name: str
    start_name: str


@dataclass(frozen=True)
class ScheduleInput:
    """`schedule`: the pair a schedule creates or an unschedule deletes, and what each half does when it fires
    (EventBridge Scheduler's target: `Arn`, `RoleArn`, `Input`, `RetryPolicy`, in the Scheduler API's words)."""

    group: str
    stop_name: str
    start_name: str
    stop_cron: str
    start_cron: str
    time_zone: str
    description: str
    scheduler_role_arn: str
    stop_target: Mapping[str, Any]
    start_target: Mapping[str, Any]


@dataclass(frozen=True)
class SageMakerInput:
    """`sagemaker`: the SageMaker resource an endpoint update or a notebook stop acts on. Endpoint configs are
    immutable: the one the endpoint ran when it was advised on (`expected_config`) is the one whose production variant
    `variant_name` was judged, so the new config copies it whole with that variant's target type and count
    (`target_count`)."""

    name: str  # EndpointName or NotebookInstanceName
    arn: str  # for ListTags (the opt-out and managed tags)
    variant_name: str = ""
    expected_config: str = ""  # the endpoint's EndpointConfigName at analysis
    new_config_name: str = ""  # the endpoint config the update creates (rightsizer-..., unique per approval)
    target_count: int = 0
    alarm_name: str = ""  # the CloudWatch alarm SageMaker's auto-rollback watches (rightsizer-...)
    max_polls: int = 0  # endpoint updates take longer than an EC2 stop: their own bound on the poll loop


@dataclass(frozen=True)
class WorkflowInput:
    """One execution's input: one approved action on one host (docs/resize-workflow.md)."""

    recommendation_id: str
    instance_id: str
    account_id: str
    region: str
    action: ActionKind
    change: str  # the change in words ("resize to g5.2xlarge"): "The {change} failed: ..."
    action_role_arn: str  # every EC2 and Scheduler call runs as this role (task Credentials)
    expected_type: str  # the host's type when it was recommended (the workflow refuses when it has changed)
    target_type: str
    expected_state: str  # "running" or "stopped", likewise
    approver: str
    approved_at: str  # ISO 8601
    managed_tag_key: str
    opt_out_tag: str
    wait_seconds: int  # between polls, 0..60
    table_name: str
    max_polls: int  # per wait loop, 1..30
    audit_expiration: str  # epoch seconds as text (DynamoDB's N): the state machine does no date arithmetic
    lock_expires_at: str  # ISO 8601 UTC ending in Z, compared as text with $$.State.EnteredTime
    lock_expiration: str  # epoch seconds as text
    pair: SchedulePair
    schedule: ScheduleInput | None = None  # schedule and unschedule only; absent from the JSON otherwise
    sagemaker: SageMakerInput | None = None  # a SageMaker action's only; absent from the JSON otherwise

    def to_json(self) -> dict[str, Any]:
        """The execution input as Step Functions receives it."""
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NESTED}
        data["action"] = self.action.value
        data["pair"] = {f.name: getattr(self.pair, f.name) for f in fields(self.pair)}
        if self.schedule is not None:
            data["schedule"] = {f.name: _plain(getattr(self.schedule, f.name)) for f in fields(self.schedule)}
        if self.sagemaker is not None:
            data["sagemaker"] = {f.name: getattr(self.sagemaker, f.name) for f in fields(self.sagemaker)}
        return data


_NESTED = ("pair", "schedule", "sagemaker")


class InputKey(StrEnum):
    """The top-level keys of the execution input (the fields of WorkflowInput, which a test holds them to), for code
    that reads an input back: the notifier reads the input of every execution that ends, hand-started ones too."""

    RECOMMENDATION_ID = "recommendation_id"
    INSTANCE_ID = "instance_id"
    ACCOUNT_ID = "account_id"
    REGION = "region"
    ACTION = "action"
    CHANGE = "change"
    ACTION_ROLE_ARN = "action_role_arn"
    EXPECTED_TYPE = "expected_type"
    TARGET_TYPE = "target_type"
    EXPECTED_STATE = "expected_state"
    APPROVER = "approver"
    APPROVED_AT = "approved_at"
    MANAGED_TAG_KEY = "managed_tag_key"
    OPT_OUT_TAG = "opt_out_tag"
    WAIT_SECONDS = "wait_seconds"
    TABLE_NAME = "table_name"
    MAX_POLLS = "max_polls"
    AUDIT_EXPIRATION = "audit_expiration"
    LOCK_EXPIRES_AT = "lock_expires_at"
    LOCK_EXPIRATION = "lock_expiration"
    PAIR = "pair"
    SCHEDULE = "schedule"
    SAGEMAKER = "sagemaker"


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value
