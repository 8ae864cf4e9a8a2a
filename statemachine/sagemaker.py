"""The instance workflow's SageMaker branches: an endpoint variant's update and a notebook instance's stop.

They share the workflow's input checks, audit trail, lock (keyed by the resource id), refusals, outcome path and
action role with the EC2 actions; what differs is how the resource is read and changed. docs/resize-workflow.md
section 2d tells the story.

- **Endpoint update.** Endpoint configs are immutable, so an endpoint still on the config it was advised on is the
  one that was judged. The branch checks that (InService, same config, managed, not opted out), creates the alarm
  SageMaker's auto-rollback watches (5XX errors of the variant), a new endpoint config with the target type and
  count, and calls UpdateEndpoint with a blue/green deployment: a canary of 10 % of the capacity first, all traffic
  after 5 minutes, the old fleet kept 2 more minutes; SageMaker rolls back by itself when the alarm fires. It then
  follows the endpoint until it is InService again: on the new config (done), back on the old one (rolled back by
  SageMaker), or failed (a person looks).
- **Notebook stop.** InService, still its type, managed, not opted out: StopNotebookInstance (the ML storage volume is
  kept), then follow it until it is Stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rightsizer.domain.models import ActionKind
from rightsizer.domain.workflow_contract import MAX_SAGEMAKER_POLLS
from statemachine.asl import (
    Format,
    Path,
    Rule,
    State,
    all_of,
    any_of,
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
    ERROR,
    FAILURE,
    HEALTH,
    IN,
    POLL,
    audit,
    count_poll,
    progress,
    refuse,
    reset_polls,
    sdk,
    wait,
)

EndsAs = Callable[[str, str, Format | Path], State]  # resize.ends_as: one table of endings for every action

UPDATE_ENDPOINT, STOP_NOTEBOOK = ActionKind.UPDATE_ENDPOINT.value, ActionKind.STOP_NOTEBOOK.value
SM = IN.sagemaker
ENDPOINT = Path("$.endpoint")  # {Status, Config} as SageMaker describes the endpoint
NOTEBOOK = Path("$.notebook")  # {Status, Type}
TAGS = Path("$.sm_tags")
CAUSE = ERROR.dot("Cause")
# SageMaker's own throttling and internal errors are retried; anything else is an answer (Catch decides).
RETRY_SAGEMAKER = retry(
    ("SageMaker.ThrottlingException", "SageMaker.InternalFailure", "SageMaker.ServiceUnavailable", "States.Timeout"),
    interval=2,
    attempts=5,
    max_delay=30,
)
# A create or an update that timed out may have gone through: never sent twice (the endpoint is read instead).
RETRY_SAGEMAKER_CHANGE = retry(
    ("SageMaker.ThrottlingException", "SageMaker.ServiceUnavailable"), interval=2, attempts=4, max_delay=30
)
RETRY_CLOUDWATCH = retry(("CloudWatch.CloudWatchException", "States.Timeout"), interval=2, attempts=4, max_delay=20)
CANARY_PERCENT = 10
CANARY_WAIT_SECONDS = 300
OLD_FLEET_SECONDS = 120


def sagemaker(operation: str, parameters: dict[str, Any], next_state: str, **options: Any) -> State:
    return sdk(f"sagemaker:{operation}", parameters, next_state, **{"retrier": RETRY_SAGEMAKER, **options})


def routes() -> list[Rule]:
    """ResourceRoute's choices (after the lock): the SageMaker actions read their resource, not an EC2 instance."""
    return [
        goto(equals(IN.action, UPDATE_ENDPOINT), "DescribeEndpoint"),
        goto(equals(IN.action, STOP_NOTEBOOK), "DescribeNotebook"),
    ]


def request_fields() -> list[Rule]:
    """What CheckScheduleRequest requires of a SageMaker action's input."""
    texts = [SM.name, SM.arn]
    endpoint = [SM.variant_name, SM.model_name, SM.expected_config, SM.new_config_name, SM.alarm_name]
    return [
        goto(
            all_of(equals(IN.action, UPDATE_ENDPOINT), not_(all_of(*_texts(*texts, *endpoint), *_counts()))),
            "InvalidRequest",
        ),
        goto(all_of(equals(IN.action, STOP_NOTEBOOK), not_(all_of(*_texts(*texts)))), "InvalidRequest"),
    ]


def _texts(*paths: Path) -> list[Rule]:
    """Present, text and not empty: an empty name would create a config or an alarm for nothing."""
    return [rule for path in paths for rule in (present(path), is_type(path, "String"), not_(equals(path, "")))]


def _counts() -> list[Rule]:
    return [
        present(SM.target_count),
        is_type(SM.target_count, "Numeric"),
        compare(SM.target_count, "GreaterThanEquals", 1),
        present(SM.max_polls),
        is_type(SM.max_polls, "Numeric"),
        compare(SM.max_polls, "GreaterThanEquals", 1),
        compare(SM.max_polls, "LessThanEquals", MAX_SAGEMAKER_POLLS),
    ]


def validation() -> dict[str, State]:
    """Read the resource as it is now and refuse anything that changed or is not ours to change."""
    return {
        "DescribeEndpoint": sagemaker(
            "describeEndpoint",
            {"EndpointName": SM.name},
            "CheckEndpoint",
            on_error="RefuseResourceNotRead",
            result=ENDPOINT,
            selector={"Status": Path("$.EndpointStatus"), "Config": Path("$.EndpointConfigName")},
            comment="Read the endpoint as it is now; the recommendation may be days old.",
        ),
        "CheckEndpoint": state(
            "Choice",
            Comment=(
                "Only an endpoint at rest, still on the config that was judged: configs are immutable, so the same "
                "name is the same variant, model and type."
            ),
            Choices=[
                goto(not_(equals(ENDPOINT.dot("Status"), "InService")), "RefuseEndpointBusy"),
                goto(not_(equals(ENDPOINT.dot("Config"), SM.expected_config)), "RefuseEndpointChanged"),
            ],
            Default="ListResourceTags",
        ),
        "DescribeNotebook": sagemaker(
            "describeNotebookInstance",
            {"NotebookInstanceName": SM.name},
            "CheckNotebook",
            on_error="RefuseResourceNotRead",
            result=NOTEBOOK,
            selector={"Status": Path("$.NotebookInstanceStatus"), "Type": Path("$.InstanceType")},
            comment="Read the notebook instance as it is now.",
        ),
        "CheckNotebook": state(
            "Choice",
            Choices=[
                goto(not_(equals(NOTEBOOK.dot("Status"), "InService")), "RefuseNotebookNotRunning"),
                goto(not_(equals(NOTEBOOK.dot("Type"), IN.expected_type)), "RefuseNotebookChanged"),
            ],
            Default="ListResourceTags",
        ),
        "ListResourceTags": sagemaker(
            "listTags",
            {"ResourceArn": SM.arn, "MaxResults": 100},
            "TagPairs",
            on_error="RefuseResourceNotRead",
            result=TAGS,
            selector={"Tags": Path("$.Tags")},
            comment=(
                "The same tags as for an EC2 host: the opt-out tag refuses, the managed tag (value true) is required "
                "(the action role's policy requires it too)."
            ),
        ),
        "TagPairs": state(
            "Map",
            Comment=(
                "Each tag as key=value: the managed tag is then one ArrayContains, with no JSONPath filter (tag keys "
                "come from the input, which a filter cannot use) and no comparison of objects."
            ),
            ItemsPath=TAGS.dot("Tags"),
            ItemProcessor={
                "ProcessorConfig": {"Mode": "INLINE"},
                "StartAt": "Pair",
                "States": {
                    "Pair": state(
                        "Pass",
                        Parameters={"pair": fmt("{}={}", Path("$.Key"), Path("$.Value"))},
                        OutputPath=Path("$.pair"),
                        End=True,
                    )
                },
            },
            ResultPath=TAGS.dot("pairs"),
            Next="TagsToCheck",
        ),
        "TagsToCheck": state(
            "Pass",
            Parameters={"wanted": fmt("{}=true", IN.managed_tag_key)},
            ResultPath=TAGS.dot("managed"),
            Next="TagFacts",
        ),
        "TagFacts": state(
            "Pass",
            Parameters={
                "opted_out": intrinsic("ArrayContains", TAGS.dot("Tags[*]", "Key"), IN.opt_out_tag),
                "managed": intrinsic("ArrayContains", TAGS.dot("pairs"), TAGS.dot("managed", "wanted")),
            },
            ResultPath=TAGS.dot("facts"),
            Next="CheckResourceTags",
        ),
        "CheckResourceTags": state(
            "Choice",
            Choices=[
                goto(equals(TAGS.dot("facts", "opted_out"), True), "RefuseOptedOut"),
                goto(equals(TAGS.dot("facts", "managed"), False), "RefuseNotManaged"),
            ],
            Default="RecordSageMakerValidated",
        ),
        "RecordSageMakerValidated": audit(
            "validated",
            fmt(
                "checks passed for the {}: {} ({}), managed, not opted out", IN.change, IN.instance_id, IN.expected_type
            ),
            "NotifySageMakerValidated",
            on_error="AuditUnavailable",
        ),
        "NotifySageMakerValidated": progress(
            "validated", fmt("Checks passed: {} of {} ({}).", IN.change, SM.name, IN.expected_type), "SageMakerRoute"
        ),
        "SageMakerRoute": state(
            "Choice",
            Choices=[goto(equals(IN.action, UPDATE_ENDPOINT), "PutRollbackAlarm")],
            Default="StopNotebook",
        ),
        "RefuseResourceNotRead": refuse("not-described", fmt("could not read {}: {}", SM.name, CAUSE)),
        "RefuseEndpointBusy": refuse(
            "endpoint-busy",
            fmt(
                "endpoint {} is {}, not InService: only an endpoint at rest is updated", SM.name, ENDPOINT.dot("Status")
            ),
        ),
        "RefuseEndpointChanged": refuse(
            "endpoint-changed",
            fmt(
                "endpoint {} now runs endpoint config {}, not {} as when it was advised on: the advice is stale",
                SM.name,
                ENDPOINT.dot("Config"),
                SM.expected_config,
            ),
        ),
        "RefuseNotebookNotRunning": refuse(
            "notebook-not-running",
            fmt("notebook instance {} is {}, not InService", SM.name, NOTEBOOK.dot("Status")),
        ),
        "RefuseNotebookChanged": refuse(
            "notebook-changed",
            fmt(
                "notebook instance {} is now {}, the recommendation expected {}: the advice is stale",
                SM.name,
                NOTEBOOK.dot("Type"),
                IN.expected_type,
            ),
        ),
    }


def endpoint_update() -> dict[str, State]:
    """The alarm, the new config, UpdateEndpoint with SageMaker's guardrails, then follow it to its end."""
    dimensions = [{"Name": "EndpointName", "Value": SM.name}, {"Name": "VariantName", "Value": SM.variant_name}]
    return {
        "PutRollbackAlarm": sdk(
            "cloudwatch:putMetricAlarm",
            {
                "AlarmName": SM.alarm_name,
                "AlarmDescription": fmt("GPU Rightsizer: SageMaker rolls back the update of {} when it fires", SM.name),
                "Namespace": "AWS/SageMaker",
                "MetricName": "Invocation5XXErrors",
                "Dimensions": dimensions,
                "Statistic": "Sum",
                "Period": 60,
                "EvaluationPeriods": 1,
                "Threshold": 0,
                "ComparisonOperator": "GreaterThanThreshold",
                "TreatMissingData": "notBreaching",
            },
            "CreateEndpointConfig",
            on_error="EndpointNotUpdated",
            retrier=RETRY_CLOUDWATCH,
            result=None,
            comment="The alarm the deployment's auto-rollback watches: any 5XX of the variant during the update.",
        ),
        "CreateEndpointConfig": sagemaker(
            "createEndpointConfig",
            {
                "EndpointConfigName": SM.new_config_name,
                "ProductionVariants": [
                    {
                        "VariantName": SM.variant_name,
                        "ModelName": SM.model_name,
                        "InstanceType": IN.target_type,
                        "InitialInstanceCount": SM.target_count,
                        "InitialVariantWeight": 1,
                    }
                ],
            },
            "UpdateEndpoint",
            on_error="EndpointNotUpdated",
            retrier=RETRY_SAGEMAKER_CHANGE,
            result=None,
            comment="The judged config's one variant, on the target type and count.",
        ),
        "UpdateEndpoint": sagemaker(
            "updateEndpoint",
            {
                "EndpointName": SM.name,
                "EndpointConfigName": SM.new_config_name,
                "DeploymentConfig": {
                    "BlueGreenUpdatePolicy": {
                        "TrafficRoutingConfiguration": {
                            "Type": "CANARY",
                            "CanarySize": {"Type": "CAPACITY_PERCENT", "Value": CANARY_PERCENT},
                            "WaitIntervalInSeconds": CANARY_WAIT_SECONDS,
                        },
                        "TerminationWaitInSeconds": OLD_FLEET_SECONDS,
                    },
                    "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": SM.alarm_name}]},
                },
            },
            "RecordUpdateRequested",
            on_error="UpdateAnswered",
            retrier=RETRY_SAGEMAKER_CHANGE,
            result=None,
            comment="Blue/green: the old fleet serves until the new one has taken the canary and then all traffic.",
        ),
        "UpdateAnswered": sagemaker(
            "describeEndpoint",
            {"EndpointName": SM.name},
            "UpdateStarted",
            on_error="EndpointLost",
            result=ENDPOINT,
            selector={"Status": Path("$.EndpointStatus"), "Config": Path("$.EndpointConfigName")},
            error_path=Path("$.update_error"),
            comment=(
                "UpdateEndpoint answered an error, but a call that timed out may have gone through: the endpoint says "
                "whether it is updating, never the error's name."
            ),
        ),
        "UpdateStarted": state(
            "Choice",
            Choices=[
                goto(
                    any_of(
                        not_(equals(ENDPOINT.dot("Status"), "InService")),
                        equals(ENDPOINT.dot("Config"), SM.new_config_name),
                    ),
                    "RecordUpdateRequested",
                )
            ],
            Default="EndpointNotUpdated",
        ),
        "RecordUpdateRequested": audit(
            "update_requested",
            fmt(
                "UpdateEndpoint {} to config {} ({} x {})", SM.name, SM.new_config_name, SM.target_count, IN.target_type
            ),
            "NotifyUpdateRequested",
        ),
        "NotifyUpdateRequested": progress(
            "update_requested",
            fmt(
                "Updating {}: a canary of {} percent of the capacity on {}, then all traffic; SageMaker rolls back if "
                "the 5XX alarm fires.",
                SM.name,
                str(CANARY_PERCENT),
                IN.target_type,
            ),
            "ResetEndpointPolls",
        ),
        "ResetEndpointPolls": reset_polls("WaitForEndpoint"),
        "WaitForEndpoint": wait("DescribeEndpointAfterUpdate"),
        "DescribeEndpointAfterUpdate": sagemaker(
            "describeEndpoint",
            {"EndpointName": SM.name},
            "EndpointSettled",
            on_error="EndpointLost",
            result=ENDPOINT,
            selector={"Status": Path("$.EndpointStatus"), "Config": Path("$.EndpointConfigName")},
        ),
        "EndpointSettled": state(
            "Choice",
            Choices=[
                goto(
                    all_of(
                        equals(ENDPOINT.dot("Status"), "InService"), equals(ENDPOINT.dot("Config"), SM.new_config_name)
                    ),
                    "EndpointUpdated",
                ),
                goto(
                    all_of(
                        equals(ENDPOINT.dot("Status"), "InService"), equals(ENDPOINT.dot("Config"), SM.expected_config)
                    ),
                    "EndpointRolledBack",
                ),
                goto(one_of(ENDPOINT.dot("Status"), "Failed", "UpdateRollbackFailed", "Deleting"), "EndpointFailed"),
                goto(compare(POLL.dot("count"), "GreaterThanEquals", SM.max_polls), "EndpointTimedOut"),
            ],
            Default="CountEndpointPoll",
        ),
        "CountEndpointPoll": count_poll("WaitForEndpoint"),
        "EndpointUpdated": state(
            "Pass",
            Parameters={"note": fmt("SageMaker reports it InService on endpoint config {}", SM.new_config_name)},
            ResultPath=HEALTH,
            Next="OutcomeEndpointUpdated",
        ),
        "EndpointNotUpdated": state(
            "Pass",
            Parameters={"reason": fmt("the update could not be started: {}", CAUSE)},
            ResultPath=FAILURE,
            Next="OutcomeEndpointUnchanged",
        ),
        "EndpointRolledBack": state(
            "Pass",
            Parameters={
                "reason": "SageMaker rolled the deployment back (the 5XX alarm fired, or the new fleet failed)"
            },
            ResultPath=FAILURE,
            Next="OutcomeEndpointRolledBack",
        ),
        "EndpointFailed": state(
            "Pass",
            Parameters={"reason": fmt("SageMaker reports the endpoint {}", ENDPOINT.dot("Status"))},
            ResultPath=FAILURE,
            Next="OutcomeSageMakerNeedsPerson",
        ),
        "EndpointTimedOut": state(
            "Pass",
            Parameters={
                "reason": fmt("the endpoint was still {} after {} polls", ENDPOINT.dot("Status"), SM.max_polls)
            },
            ResultPath=FAILURE,
            Next="OutcomeSageMakerNeedsPerson",
        ),
        "EndpointLost": state(
            "Pass",
            Parameters={"reason": fmt("the endpoint could not be read after the update started: {}", CAUSE)},
            ResultPath=FAILURE,
            Next="OutcomeSageMakerNeedsPerson",
        ),
    }


def notebook_stop() -> dict[str, State]:
    return {
        "StopNotebook": sagemaker(
            "stopNotebookInstance",
            {"NotebookInstanceName": SM.name},
            "RecordNotebookStopRequested",
            on_error="NotebookNotStopped",
            retrier=RETRY_SAGEMAKER_CHANGE,
            result=None,
        ),
        "RecordNotebookStopRequested": audit(
            "stop_requested", fmt("StopNotebookInstance {}", SM.name), "ResetNotebookPolls"
        ),
        "ResetNotebookPolls": reset_polls("WaitForNotebook"),
        "WaitForNotebook": wait("DescribeNotebookAfterStop"),
        "DescribeNotebookAfterStop": sagemaker(
            "describeNotebookInstance",
            {"NotebookInstanceName": SM.name},
            "NotebookSettled",
            on_error="NotebookLost",
            result=NOTEBOOK,
            selector={"Status": Path("$.NotebookInstanceStatus"), "Type": Path("$.InstanceType")},
        ),
        "NotebookSettled": state(
            "Choice",
            Choices=[
                goto(equals(NOTEBOOK.dot("Status"), "Stopped"), "NotebookStopped"),
                goto(one_of(NOTEBOOK.dot("Status"), "Failed", "Deleting"), "NotebookFailed"),
                goto(compare(POLL.dot("count"), "GreaterThanEquals", IN.max_polls), "NotebookTimedOut"),
            ],
            Default="CountNotebookPoll",
        ),
        "CountNotebookPoll": count_poll("WaitForNotebook"),
        "NotebookStopped": state(
            "Pass",
            Result={"note": "SageMaker reports it Stopped; its ML storage volume is kept"},
            ResultPath=HEALTH,
            Next="OutcomeNotebookStopped",
        ),
        "NotebookNotStopped": state(
            "Pass",
            Parameters={"reason": fmt("StopNotebookInstance failed: {}", CAUSE)},
            ResultPath=FAILURE,
            Next="OutcomeNotebookUnchanged",
        ),
        "NotebookFailed": state(
            "Pass",
            Parameters={"reason": fmt("SageMaker reports the notebook instance {}", NOTEBOOK.dot("Status"))},
            ResultPath=FAILURE,
            Next="OutcomeSageMakerNeedsPerson",
        ),
        "NotebookTimedOut": state(
            "Pass",
            Parameters={
                "reason": fmt("the notebook instance was still {} after {} polls", NOTEBOOK.dot("Status"), IN.max_polls)
            },
            ResultPath=FAILURE,
            Next="OutcomeSageMakerNeedsPerson",
        ),
        "NotebookLost": state(
            "Pass",
            Parameters={"reason": fmt("the notebook instance could not be read after its stop: {}", CAUSE)},
            ResultPath=FAILURE,
            Next="OutcomeSageMakerNeedsPerson",
        ),
    }


def outcomes(end: EndsAs) -> dict[str, State]:
    """How a SageMaker action ends (the kinds and statuses of resize.py's ENDINGS)."""
    reason = FAILURE.dot("reason")
    return {
        "OutcomeEndpointUpdated": end(
            "succeeded",
            "succeeded",
            fmt(
                "Done: endpoint {} variant {} now runs {} x {} ({}).",
                SM.name,
                SM.variant_name,
                SM.target_count,
                IN.target_type,
                HEALTH.dot("note"),
            ),
        ),
        "OutcomeEndpointUnchanged": end(
            "unchanged",
            "unchanged",
            fmt(
                "The endpoint was not changed: {} keeps serving on {} ({}). The {} failed: {}",
                SM.name,
                IN.expected_type,
                SM.expected_config,
                IN.change,
                reason,
            ),
        ),
        "OutcomeEndpointRolledBack": end(
            "rolled_back",
            "rolled_back",
            fmt(
                "Rolled back: endpoint {} serves on {} again ({}). The {} failed: {}",
                SM.name,
                IN.expected_type,
                SM.expected_config,
                IN.change,
                reason,
            ),
        ),
        "OutcomeNotebookStopped": end(
            "succeeded", "succeeded", fmt("Done: notebook instance {} is stopped ({}).", SM.name, HEALTH.dot("note"))
        ),
        "OutcomeNotebookUnchanged": end(
            "unchanged",
            "unchanged",
            fmt(
                "Nothing was changed: notebook instance {} keeps running. The {} failed: {}", SM.name, IN.change, reason
            ),
        ),
        "OutcomeSageMakerNeedsPerson": end(
            "rollback_failed",
            "rollback_failed",
            fmt(
                "Needs a person: the {} of {} did not end as expected: {}. Check it in the SageMaker console.",
                IN.change,
                SM.name,
                reason,
            ),
        ),
    }


def sections(ends_as: EndsAs) -> dict[str, State]:
    return {**validation(), **endpoint_update(), **notebook_stop(), **outcomes(ends_as)}
