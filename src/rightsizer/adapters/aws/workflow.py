"""Starts the instance workflow (statemachine/resize.asl.json: resize, stop, schedule, unschedule): one execution
per approval, in the state machine of the host's region, acting through the action role of the host's account.

Two layers keep a retry from resizing twice:
  1. The execution name is derived from the recommendation id. Step Functions refuses a second execution
     with that name (ExecutionAlreadyExists) and we answer with the existing execution's ARN.
  2. Optionally, Powertools idempotency records the answer in our table, so a retried Lambda invocation
     gets the stored ARN without calling Step Functions at all, and concurrent starters are serialised.
Different recommendations for the same host are different executions: the state machine's per-instance
lock (a conditional put in the table) lets only one of them touch the host at a time.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from rightsizer.adapters.aws.dynamo import keys
from rightsizer.adapters.codec import from_jsonable, to_jsonable
from rightsizer.domain import workflow_contract
from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.approval import attempt_key
from rightsizer.domain.schedule_plan import schedule_names
from rightsizer.domain.scope import ACTION_ROLE_NAME, ActionScope
from rightsizer.domain.workflow_contract import (
    MAX_POLLS,
    MAX_SAGEMAKER_POLLS,
    MAX_WAIT_SECONDS,
    RESIZABLE_STATES,
    SageMakerInput,
    ScheduleInput,
    SchedulePair,
    WorkflowInput,
)
from rightsizer.services.ports import Approval
from rightsizer.settings import Settings

# Mirrors store.AUDIT_RETENTION: the workflow writes audit items straight from Step Functions.
AUDIT_RETENTION = timedelta(days=800)
# Step Functions keeps a closed execution (and so its name) for 90 days; the idempotency record covers
# the same window. After that the approval record's conditional write is what stops a second resize.
IDEMPOTENCY_TTL = timedelta(days=90)
IDEMPOTENCY_FUNCTION = "resize-start"
IDEMPOTENCY_PK = keys.idempotency_pk(IDEMPOTENCY_FUNCTION)
SCHEDULER_ROLE_NAME = "GpuRightsizerScheduler"  # member-account/template.yaml's role EventBridge Scheduler runs as
# The state machine's TimeoutSeconds: no execution outlives it, so a lock older than this (plus a margin for the
# start) belongs to an execution that has ended without releasing it.
EXECUTION_TIMEOUT = workflow_contract.EXECUTION_TIMEOUT
LOCK_TTL = EXECUTION_TIMEOUT + timedelta(minutes=10)

_NAME_MAX = 80
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def execution_name(recommendation_id: str) -> str:
    """A valid, deterministic Step Functions execution name (1-80 of [A-Za-z0-9_-]) for a recommendation.

    Ids produced by the analyzer ("rec-" + 20 hex digits) pass through unchanged. Anything else is
    sanitised, and a digest of the original keeps two ids that sanitise alike from sharing a name.
    """
    if not recommendation_id:
        raise ValueError("recommendation id is empty")
    clean = _INVALID_NAME_CHARS.sub("-", recommendation_id)
    if clean == recommendation_id and len(clean) <= _NAME_MAX:
        return clean
    digest = hashlib.sha256(recommendation_id.encode()).hexdigest()[:16]
    return f"{clean[: _NAME_MAX - len(digest) - 1]}-{digest}"


def attempt_execution_name(recommendation_id: str, attempt: int) -> str:
    """The execution of one attempt of an approval (domain.approval.attempt_key, made a valid name)."""
    return execution_name(attempt_key(recommendation_id, attempt))


@dataclass(frozen=True)
class ActionRoles:
    """The roles an action runs as: the workflow assumes the action role of the host's account (task Credentials),
    and EventBridge Scheduler runs a schedule pair as that account's scheduler role. The stack's own account has
    roles of its own (template.yaml); member accounts have the roles member-account/template.yaml creates."""

    home_account: str
    action_role_arn: str
    scheduler_role_arn: str
    member_action_role_name: str = ACTION_ROLE_NAME
    member_scheduler_role_name: str = SCHEDULER_ROLE_NAME
    partition: str = "aws"

    @classmethod
    def of_state_machine(cls, state_machine_arn: str) -> ActionRoles:
        """Member-style role names in the state machine's own account (tests and hand-started workflows)."""
        parts = state_machine_arn.split(":")
        account, partition = (parts[4], parts[1]) if len(parts) == 7 else ("", "aws")
        return cls(
            home_account=account,
            action_role_arn=f"arn:{partition}:iam::{account}:role/{ACTION_ROLE_NAME}",
            scheduler_role_arn=f"arn:{partition}:iam::{account}:role/{SCHEDULER_ROLE_NAME}",
            partition=partition,
        )

    def action_role(self, account_id: str) -> str:
        if account_id == self.home_account and self.action_role_arn:
            return self.action_role_arn
        return f"arn:{self.partition}:iam::{account_id}:role/{self.member_action_role_name}"

    def scheduler_role(self, account_id: str) -> str:
        if account_id == self.home_account and self.scheduler_role_arn:
            return self.scheduler_role_arn
        return f"arn:{self.partition}:iam::{account_id}:role/{self.member_scheduler_role_name}"


def in_region(state_machine_arn: str, region: str) -> str:
    """The same state machine in another region: each action region runs a copy named like the home one."""
    parts = state_machine_arn.split(":")
    if len(parts) != 7 or parts[5] != "stateMachine":
        raise ValueError(f"not a state machine ARN: {state_machine_arn}")
    return ":".join([*parts[:3], region, *parts[4:]])


def execution_arn(state_machine_arn: str, name: str) -> str:
    """arn:<p>:states:<r>:<acct>:stateMachine:<sm>  ->  arn:<p>:states:<r>:<acct>:execution:<sm>:<name>."""
    parts = state_machine_arn.split(":")
    if len(parts) != 7 or parts[5] != "stateMachine":
        raise ValueError(f"not a state machine ARN: {state_machine_arn}")
    return ":".join([*parts[:5], "execution", parts[6], name])


class StepFunctionsResizeWorkflow:
    """`ResizeWorkflow` (every action, not only resizes) on Step Functions. `client` is a boto3 `stepfunctions`
    client of the home region; `client_for(region)` gives one for another action region.

    `expected_state` ("running" / "stopped") is the state the recommendation saw; the workflow refuses
    when the host is no longer in it. `Approval` does not carry it, so it comes from `start(...,
    expected_state=)`, else from `expected_state_of(recommendation_id)` (e.g. a store lookup of the
    recommendation's `state`), else "running".
    """

    def __init__(
        self,
        client: Any,
        state_machine_arn: str,
        *,
        wait_seconds: int = 30,
        managed_tag_key: str = "rightsizer:managed",
        opt_out_tag: str = "rightsizer:ignore",
        table_name: str = "",
        max_polls: int = 30,
        expected_state_of: Callable[[str], str | None] | None = None,
        persistence_store: Any | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        scope: ActionScope | None = None,
        roles: ActionRoles | None = None,
        schedule_group: str = "default",
        client_for: Callable[[str], Any] | None = None,
    ) -> None:
        if not (0 <= wait_seconds <= MAX_WAIT_SECONDS and 1 <= max_polls <= MAX_POLLS):
            raise ValueError(f"wait_seconds must be 0..{MAX_WAIT_SECONDS} and max_polls 1..{MAX_POLLS}")
        self._client = client
        self.state_machine_arn = state_machine_arn
        self._wait_seconds = wait_seconds
        self._managed_tag_key = managed_tag_key
        self._opt_out_tag = opt_out_tag
        self._table_name = table_name
        self._max_polls = max_polls
        self._expected_state_of = expected_state_of
        self._clock = clock
        self._roles = roles or ActionRoles.of_state_machine(state_machine_arn)
        home_region = state_machine_arn.split(":")[3] if state_machine_arn.count(":") == 6 else ""
        self._scope = scope or ActionScope.of(self._roles.home_account, {home_region})
        self._home_region = home_region
        self._schedule_group = schedule_group
        self._client_for = client_for
        self._idempotent_start: Callable[..., str] | None = None
        self._idempotency_config: Any | None = None
        if persistence_store is not None:
            self._idempotency_config = _idempotency_config()
            self._idempotent_start = _make_idempotent(
                self._start_from_approval, persistence_store, self._idempotency_config
            )

    @classmethod
    def with_idempotency(
        cls,
        client: Any,
        state_machine_arn: str,
        table_name: str,
        *,
        dynamodb_client: Any | None = None,
        **kwargs: Any,
    ) -> StepFunctionsResizeWorkflow:
        """The production wiring: Powertools idempotency records live in our single table."""
        return cls(
            client,
            state_machine_arn,
            table_name=table_name,
            persistence_store=idempotency_store(table_name, dynamodb_client),
            **kwargs,
        )

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        client: Any,
        *,
        dynamodb_client: Any | None = None,
        expected_state_of: Callable[[str], str | None] | None = None,
        client_for: Callable[[str], Any] | None = None,
    ) -> StepFunctionsResizeWorkflow:
        """Wired like the deployed stack: the tag keys the IAM policy and the analyzer use, the state machine
        from RESIZE_STATE_MACHINE_ARN, the action scope and roles, and idempotency records in the table."""
        if not settings.resize_state_machine_arn:
            raise ValueError("RESIZE_STATE_MACHINE_ARN is not set")
        partition, home = settings.resize_state_machine_arn.split(":")[1], settings.home_account
        options: dict[str, Any] = {
            "managed_tag_key": settings.managed_tag_key,
            "opt_out_tag": settings.policy.opt_out_tag,
            "expected_state_of": expected_state_of,
            "wait_seconds": settings.resize_poll_seconds,
            "scope": settings.action_scope,
            "roles": ActionRoles(
                home_account=home,
                action_role_arn=settings.action_role_arn,
                scheduler_role_arn=settings.scheduler_role_arn,
                member_action_role_name=settings.member_action_role_name,
                member_scheduler_role_name=settings.scheduler_role_name,
                partition=partition,
            ),
            "schedule_group": settings.schedule_group,
            "client_for": client_for,
        }
        if settings.table_name:
            return cls.with_idempotency(
                client,
                settings.resize_state_machine_arn,
                settings.table_name,
                dynamodb_client=dynamodb_client,
                **options,
            )
        return cls(client, settings.resize_state_machine_arn, **options)

    def register_lambda_context(self, context: Any) -> None:
        """In Lambda: lets Powertools expire an in-progress record when the invocation times out."""
        if self._idempotency_config is not None:
            self._idempotency_config.register_lambda_context(context)

    # -- ResizeWorkflow ----------------------------------------------------------------------------

    def start(self, approval: Approval, expected_state: str | None = None) -> str:
        """Start (or find) the execution for this approval and return its ARN."""
        # A SageMaker resource is checked as InService by its own branch; the EC2 state field keeps its default.
        lookup = None if approval.sagemaker is not None else self._lookup_state(approval.recommendation_id)
        state = expected_state or lookup or "running"
        if state not in RESIZABLE_STATES:
            raise ValueError(f"expected_state must be one of {RESIZABLE_STATES}, got {state!r}")
        self._check_scope(approval)
        # Powertools' idempotency hashes the JSON of the approval: the typed Approval is rebuilt on the other side.
        approval_data = to_jsonable(approval)
        if self._idempotent_start is None:
            return self._start_from_approval(approval=approval_data, expected_state=state)
        from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError

        try:
            return self._idempotent_start(approval=approval_data, expected_state=state)
        except IdempotencyAlreadyInProgressError:
            # Another invocation is starting this approval right now, or died while doing so (outside
            # Lambda the in-progress record has no expiry). The execution name makes a direct call
            # safe: it either starts the one execution or reports the existing one.
            return self._start_from_approval(approval=approval_data, expected_state=state)

    # -- internals ---------------------------------------------------------------------------------

    def execution_input(self, approval: Approval, expected_state: str) -> dict[str, Any]:
        """The state machine's input, as JSON. A repeated StartExecution of the same approval is answered with the
        first execution's ARN (see _start_from_approval), whatever the lock's expiry says."""
        return self.workflow_input(approval, expected_state).to_json()

    def workflow_input(self, approval: Approval, expected_state: str) -> WorkflowInput:
        """The state machine's input for `approval`."""
        expires = int((approval.approved_at + AUDIT_RETENTION).timestamp())
        lock_until = self._clock().astimezone(UTC) + LOCK_TTL
        action, account_id, instance_id = approval.action, approval.account_id, approval.instance_id
        stop_name, start_name = schedule_names(instance_id)
        schedule: ScheduleInput | None = None
        plan = approval.schedule
        if ACTIONS[action].pair is not None:  # a schedule or its removal: the pair the workflow creates or deletes
            if plan is None:
                raise ValueError(f"a {action.value} approval needs its schedule plan")
            role = self._roles.scheduler_role(account_id)
            instance = json.dumps({"InstanceIds": [instance_id]})
            schedule = ScheduleInput(
                group=self._schedule_group,
                stop_name=stop_name,
                start_name=start_name,
                stop_cron=plan.stop_cron,
                start_cron=plan.start_cron,
                time_zone=plan.time_zone,
                description=plan.description,
                scheduler_role_arn=role,
                # What each schedule does when it fires: EventBridge Scheduler's universal target for EC2, run as
                # the account's scheduler role (tag-scoped, opt-out honoured at every firing).
                stop_target=_target("stopInstances", role, instance),
                start_target=_target("startInstances", role, instance),
            )
        return WorkflowInput(
            recommendation_id=approval.recommendation_id,
            instance_id=instance_id,
            account_id=account_id,
            region=approval.region,
            action=action,
            change=_change_text(approval),
            action_role_arn=self._roles.action_role(account_id),
            expected_type=approval.from_type,
            target_type=approval.to_type,
            expected_state=expected_state,
            approver=approval.approver,
            approved_at=approval.approved_at.isoformat(),
            managed_tag_key=self._managed_tag_key,
            opt_out_tag=self._opt_out_tag,
            wait_seconds=self._wait_seconds,
            table_name=self._table_name,
            max_polls=self._max_polls,
            # DynamoDB wants N as a string; the state machine cannot do date arithmetic itself.
            audit_expiration=str(expires),
            # Compared as text with $$.State.EnteredTime (ISO 8601, UTC): same prefix format.
            lock_expires_at=lock_until.strftime("%Y-%m-%dT%H:%M:%SZ"),
            lock_expiration=str(int(lock_until.timestamp())),
            # Every action knows the host's pair: a stop or resize is refused while one exists (Scheduler is asked).
            pair=SchedulePair(group=self._schedule_group, stop_name=stop_name, start_name=start_name),
            schedule=schedule,
            sagemaker=_sagemaker_input(approval, self._max_polls),
        )

    def _start_from_approval(self, *, approval: dict[str, Any], expected_state: str) -> str:
        """`approval` as JSON (to_jsonable of an Approval): the data Powertools' idempotency hashes."""
        typed = from_jsonable(Approval, approval)
        name = attempt_execution_name(typed.recommendation_id, typed.attempt)
        payload = json.dumps(self.execution_input(typed, expected_state), sort_keys=True)
        region = typed.region
        machine = in_region(self.state_machine_arn, region)
        client = self._client if region == self._home_region or self._client_for is None else self._client_for(region)
        try:
            response = client.start_execution(stateMachineArn=machine, name=name, input=payload)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ExecutionAlreadyExists":
                return execution_arn(machine, name)
            raise
        return str(response["executionArn"])

    def _lookup_state(self, recommendation_id: str) -> str | None:
        return self._expected_state_of(recommendation_id) if self._expected_state_of else None

    def _check_scope(self, approval: Approval) -> None:
        # approvals.approve refuses these first, with the same words; this guards every other caller, which
        # would otherwise get a confusing "not found" from a workflow that cannot reach the host.
        refusal = self._scope.refusal(approval.instance_id, approval.account_id, approval.region)
        if refusal is not None:
            raise ValueError(refusal.replace("`", ""))


def _target(operation: str, role_arn: str, instance_input: str) -> dict[str, Any]:
    return {
        "Arn": f"arn:aws:scheduler:::aws-sdk:ec2:{operation}",
        "RoleArn": role_arn,
        "Input": instance_input,
        "RetryPolicy": {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 3600},
    }


def _sagemaker_input(approval: Approval, max_polls: int) -> SageMakerInput | None:
    """The `sagemaker` input of an endpoint update or a notebook stop (None for an EC2 host). The new endpoint config's
    and the alarm's names derive from the approval (its id and attempt): a retried start writes the same ones."""
    target = approval.sagemaker
    if target is None:
        return None
    digest = hashlib.sha256(f"{approval.recommendation_id}#{approval.attempt}".encode()).hexdigest()[:12]
    name = target.name
    return SageMakerInput(
        name=name,
        arn=target.arn,
        variant_name=target.variant_name,
        expected_config=target.endpoint_config_name,
        # SageMaker names: at most 63 characters of [a-zA-Z0-9-].
        new_config_name=f"rightsizer-{name[:38]}-{digest}",
        target_count=target.target_count,
        alarm_name=f"rightsizer-{name}-rollback",  # endpoint names are unique per region, alarms take 255
        # An endpoint's blue/green update (new instances, the canary and its bake time) takes tens of minutes.
        max_polls=min(MAX_SAGEMAKER_POLLS, max_polls * 5),
    )


def _change_text(approval: Approval) -> str:
    """The change in words, for the workflow's audit entries and messages: the action's own (`ActionSpec.change`)."""
    endpoint, plan = approval.sagemaker, approval.schedule
    return ACTIONS[approval.action].change.format(
        target=approval.to_type,
        count=endpoint.target_count if endpoint is not None else None,
        schedule=plan.description if plan is not None else "",
    )


def idempotency_store(table_name: str, dynamodb_client: Any | None = None) -> Any:
    """Powertools' DynamoDB persistence on our single table: PK/SK keys, `expiration` is the table's TTL."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    return DynamoDBPersistenceLayer(
        table_name=table_name,
        key_attr=keys.PK,
        sort_key_attr=keys.SK,
        static_pk_value=IDEMPOTENCY_PK,
        expiry_attr="expiration",
        boto3_client=dynamodb_client,
    )


def _idempotency_config() -> Any:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    return IdempotencyConfig(
        # One record per attempt of a recommendation's approval, whatever else differs.
        event_key_jmespath="[recommendation_id, attempt]",
        expires_after_seconds=int(IDEMPOTENCY_TTL.total_seconds()),
        raise_on_no_idempotency_key=True,
    )


def _make_idempotent(function: Callable[..., str], persistence_store: Any, config: Any) -> Callable[..., str]:
    from aws_lambda_powertools.utilities.idempotency import idempotent_function

    wrapped: Callable[..., str] = idempotent_function(
        function,
        data_keyword_argument="approval",
        persistence_store=persistence_store,
        config=config,
        key_prefix=IDEMPOTENCY_FUNCTION,
    )
    return wrapped
