"""The ports the use-cases talk through. Adapters (AWS, Slack) implement them; tests use fakes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.commitments import CapacityReservation, ReservedInstances, SavingsPlan
from rightsizer.domain.models import ActionKind
from rightsizer.domain.models.advice import DecisionKind, Recommendation
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import Resize, UsageSummary
from rightsizer.domain.platforms import LINUX, Billing
from rightsizer.domain.schedule_plan import SchedulePlan
from rightsizer.services.since import Prior

if TYPE_CHECKING:  # the Slack app imports this module on its cold-start path: numpy stays off it
    from rightsizer.domain.usage.series import RawUsage


@dataclass(frozen=True)
class Written:
    """What storing a shard's recommendations did: how many were written (advice that changed), and the advice each
    instance had before from an earlier run (by resource id), which "since last time" compares with."""

    count: int
    previous: Mapping[str, Prior]


class SourceUnavailable(Exception):
    """A data source could not answer (unreachable, unsupported, throttled after retries)."""


@dataclass(frozen=True)
class Window:
    """The look-back window, aligned to whole hours so re-runs in the same hour ask the same question."""

    start: datetime
    end: datetime

    @property
    def days(self) -> float:
        return (self.end - self.start).total_seconds() / 86400


class Inventory(Protocol):
    def accelerated_instances(self) -> list[Instance]: ...

    def described(self, instance_ids: Sequence[str]) -> list[Instance]:
        """These instances as they are now, those that still exist (not terminated). Raises SourceUnavailable."""
        ...


class InstanceTypes(Protocol):
    def accelerated_specs(self) -> list[InstanceTypeSpec]:
        """Specs of the GPU / Neuron types the region's API lists."""
        ...

    def offered_types(self, instance_types: Sequence[str]) -> frozenset[str]:
        """Which of `instance_types` the region still offers. Raises SourceUnavailable (the catalog then knows none:
        no one-click resize or schedule, domain/guards.py)."""
        ...


class OnDemandPrices(Protocol):
    source: str

    def hourly(self, region: str, instance_types: Sequence[str], billing: Billing = LINUX) -> dict[str, Decimal]:
        """On-demand USD per hour for hosts billed this way (Linux, shared tenancy by default). Raises
        SourceUnavailable."""
        ...


class PriceCache(Protocol):
    """Where the weekly refresh (services/prices.py) keeps the prices it read (DynamoStore in AWS;
    adapters/aws/price_cache.py reads them back)."""

    def put_prices(
        self, region: str, prices: Mapping[str, Decimal], source: str, now: datetime, billing: Billing
    ) -> None: ...


class SpotPrices(Protocol):
    def latest(self, instance_types: Sequence[str], now: datetime) -> dict[str, Decimal]: ...


class CommitmentSource(Protocol):
    """What one account has committed to in one region. Each method raises SourceUnavailable when it cannot read."""

    def reserved_instances(self) -> tuple[ReservedInstances, ...]: ...

    def capacity_reservations(self) -> tuple[CapacityReservation, ...]: ...

    def savings_plans(self, instance_types: Sequence[str]) -> tuple[SavingsPlan, ...]:
        """Active plans that cover EC2, with their rates for `instance_types` in this region."""
        ...


class ResizeHistory(Protocol):
    def resizes(self, start: datetime, end: datetime) -> Mapping[str, Resize]:
        """The last instance-type change of each instance between `start` and `end`. Raises SourceUnavailable."""
        ...


class UsageSource(Protocol):
    warnings: list[str]  # what the last read could not read cleanly, in one sentence each

    def read(
        self, instances: Sequence[Instance], specs: Mapping[str, InstanceTypeSpec], window: Window
    ) -> Iterator[RawUsage]:
        """Raw usage series, one entry per instance (with or without accelerator data), produced a batch at
        a time: the caller summarises them as they come and lets them go, so memory does not grow with the fleet."""
        ...


class AdviceStore(Protocol):
    """Where a live analysis keeps the recommendations it has made, so that its memory does not grow with the fleet
    (the CLI's: a temporary file). A recommendation is kept under (account, region, resource id): putting one again
    replaces it (a step across hosts rewrote it) and keeps its place in the order; `summary` is what a step across
    hosts still reads of the host (consolidation), kept until the recommendation is put again."""

    def put(self, rec: Recommendation, summary: UsageSummary | None = None, *, order: int | None = None) -> None:
        """Keep `rec`; `order` (given the first time) ranks it among recommendations that tie on savings, as the order
        of a list of them would."""
        ...

    def taken(self, account_id: str, region: str, resource_id: str) -> tuple[Recommendation, UsageSummary | None]: ...

    def ranked(self) -> Iterator[Recommendation]:
        """Every recommendation kept, in the report's order (services/report.py's `savings_key`, then `order`): a new
        pass over them each call."""
        ...

    def __len__(self) -> int: ...


class Progress(Protocol):
    def stage(self, label: str, total: int) -> None: ...

    def advance(self, steps: int = 1) -> None: ...

    def warn(self, message: str) -> None: ...


class NullProgress:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def stage(self, label: str, total: int) -> None:
        return None

    def advance(self, steps: int = 1) -> None:
        return None

    def warn(self, message: str) -> None:
        self.warnings.append(message)


# ---------------------------------------------------------------------------------------------
# State kept between runs (DynamoDB in AWS; an in-memory fake in tests).


@dataclass(frozen=True)
class Decision:
    """What a person decided about an instance in Slack: a snooze (until a time) or a dismissal."""

    kind: DecisionKind  # stored as its value, "snooze" or "dismiss"
    account_id: str
    region: str
    instance_id: str
    actor: str
    at: datetime
    until: datetime | None = None  # snoozes only
    recommendation_id: str | None = None  # dismissals apply to one recommendation


@dataclass(frozen=True)
class SageMakerAction:
    """What an approved SageMaker action acts on (the instance workflow's `sagemaker` input): an endpoint variant and
    the config it ran when advised on, or a notebook instance."""

    name: str  # EndpointName or NotebookInstanceName
    arn: str
    variant_name: str = ""
    model_name: str = ""
    endpoint_config_name: str = ""
    target_count: int = 0


@dataclass(frozen=True)
class Approval:
    """One approved resize. Created once per recommendation id (a conditional write)."""

    recommendation_id: str
    account_id: str
    region: str
    instance_id: str
    from_type: str
    to_type: str
    approver: str
    approved_at: datetime
    expected_state: str = "running"  # the host's state when the recommendation was made
    status: ApprovalStatus = ApprovalStatus.PENDING  # moves only as domain.approval.transition allows
    execution_arn: str = ""
    slack_channel: str = ""
    slack_ts: str = ""  # the message (thread root) progress is posted to
    detail: str = ""
    action: ActionKind = ActionKind.RESIZE  # what the workflow does; to_type says it in words
    schedule: SchedulePlan | None = None  # SCHEDULE and UNSCHEDULE: the pair, in the team's time zone
    capacity_risk_confirmed: bool = False  # a scarce type's approver confirmed restart capacity is not guaranteed
    attempt: int = 1  # an approver may retry an outcome other than success: each attempt has its own execution
    sagemaker: SageMakerAction | None = None  # a SageMaker action's resource (endpoint variant, notebook instance)
    instance_name: str = ""  # the host's Name when approved: the schedule pair it creates is listed and found by it


@dataclass(frozen=True)
class ScheduleRecord:
    """A stop/start pair the instance workflow created (`/gpu schedules` lists them; Remove deletes them)."""

    account_id: str
    region: str
    instance_id: str
    instance_type: str
    recommendation_id: str  # the approval that created it
    stop_name: str
    start_name: str
    plan: SchedulePlan
    created_by: str
    created_at: datetime
    instance_name: str = ""
    # Halves EventBridge Scheduler no longer has (the daily plan checks; services/schedule_registry.py): Remove
    # deletes what is left.
    missing: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.account_id}#{self.region}#{self.instance_id}"


class ScheduleWriter(Protocol):
    """Records and forgets the stop/start pairs: the notifier follows each approved change (DynamoStore in AWS)."""

    def put_schedule(self, record: ScheduleRecord) -> None: ...

    def delete_schedule(self, account_id: str, region: str, instance_id: str) -> None: ...


class ScheduleRegistry(ScheduleWriter, Protocol):
    """The schedule pairs `/gpu schedules` lists, read and corrected by the daily check."""

    def schedules(self) -> list[ScheduleRecord]: ...


@dataclass(frozen=True)
class ApprovalUpdate:
    """The approval after an update, and whether this very write moved its status (False: the lifecycle
    refused the move, or another writer got there first; the other fields may still have been written)."""

    approval: Approval
    moved: bool


@dataclass(frozen=True)
class AuditEntry:
    recommendation_id: str
    at: datetime
    actor: str  # Slack user id, "rightsizer", or "resize-workflow"
    event: str  # e.g. "approve", "approve-refused", "dismiss", "snooze", "stopped", "modified", "rolled_back"
    detail: str = ""


class ApprovalRecords(Protocol):
    """Approvals and their audit trail (DynamoStore in AWS, tests.fakes.MemoryStore in tests).

    `update_approval` moves the status only where `domain.approval.transition` allows it (a conditional
    write in DynamoDB); `detail` travels with the status and is dropped when the move is refused;
    `execution_arn` is written once per attempt; the Slack thread fields are written whenever given. With
    `attempt`, nothing is written unless the approval is at that attempt (the write is about an execution of it).
    Raises KeyError for an unknown recommendation id.
    """

    def create_approval(self, approval: Approval) -> bool: ...

    def approval(self, recommendation_id: str) -> Approval | None: ...

    def update_approval(
        self,
        recommendation_id: str,
        *,
        status: ApprovalStatus | None = None,
        detail: str | None = None,
        execution_arn: str | None = None,
        slack_channel: str | None = None,
        slack_ts: str | None = None,
        attempt: int | None = None,
    ) -> ApprovalUpdate: ...

    def retry_approval(self, recommendation_id: str, attempt: int, approver: str, at: datetime) -> Approval | None:
        """Open attempt `attempt` + 1 of an approval whose attempt `attempt` ended in a retryable outcome (one
        conditional write: two approvers retrying at once elect one). None when it is not retryable now."""
        ...

    def audit(self, entry: AuditEntry) -> None: ...


@dataclass(frozen=True)
class PostedMessage:
    """A message the bot posted and may have to edit later (the daily report): Slack cannot be asked for
    it back without extra scopes, so the store keeps what was sent."""

    channel: str
    ts: str
    text: str
    blocks: tuple[Mapping[str, Any], ...]
    recommendation_ids: tuple[str, ...] = ()  # whose buttons it shows
    # How many times the saved copy was edited: an edit is saved only over the version it started from
    # (DynamoStore.replace_message_if), so that two edits racing compose instead of one undoing the other.
    version: int = 0


class ResizeWorkflow(Protocol):
    """Starts the guarded resize (Step Functions). One execution per recommendation id, ever."""

    def start(self, approval: Approval) -> str:
        """Start (or find the already started) execution for this approval; return its ARN."""
        ...
