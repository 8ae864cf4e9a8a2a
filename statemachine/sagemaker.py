"""The instance workflow's SageMaker branches: an endpoint variant's update and a notebook instance's stop.

They share the workflow's input checks, audit trail, lock (keyed by the resource id), refusals, outcome path and
action role with the EC2 actions; what differs is how the resource is read and changed. docs/resize-workflow.md
section 2d tells the story.

- **Endpoint update.** Endpoint configs are immutable, so an endpoint still on the config it was advised on is the
  one that was judged. The branch checks that (InService, same config, managed, not opted out), reads that config
  whole and refuses the kinds a copy cannot carry safely (inference components, serverless variants, a variant on
  instance pools, a capacity reservation or GPU partitions of its type, an execution role to pass), creates the alarm
  SageMaker's auto-rollback watches (5XX errors of the variant), then a copy of the config that changes only the
  judged variant's instance type and count (every other variant, shadow variant and setting kept; every variant's
  count and weight as the endpoint runs them now; its tags, with the managed tag the action role's policy asks of
  the config), and calls UpdateEndpoint with a blue/green deployment: a canary of 10 % of the capacity first, all
  traffic after 5 minutes, the old fleet kept 2 more minutes; SageMaker rolls back by itself when the alarm fires.
  It then follows the endpoint until it is InService again: on the new config (done), back on the old one (rolled
  back by SageMaker), or failed (a person looks).
- **Notebook stop.** InService, still its type, managed, not opted out: StopNotebookInstance (the ML storage volume is
  kept), then follow it until it is Stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rightsizer.domain.models import ActionKind
from rightsizer.domain.workflow_contract import ENDPOINT_COPY_HELD_BACK, MAX_SAGEMAKER_POLLS
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
    jsonata,
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
    data,
    progress,
    refuse,
    reset_polls,
    sdk,
    sdk_jsonata,
    wait,
)

EndsAs = Callable[[str, str, Format | Path], State]  # resize.ends_as: one table of endings for every action

UPDATE_ENDPOINT, STOP_NOTEBOOK = ActionKind.UPDATE_ENDPOINT.value, ActionKind.STOP_NOTEBOOK.value
HANDLED_ACTIONS = (UPDATE_ENDPOINT, STOP_NOTEBOOK)  # what this fragment runs: its routes and request checks
SM = IN.sagemaker
ENDPOINT = Path("$.endpoint")  # {Status, Config[, Variants]} as SageMaker describes the endpoint
CONFIG = Path("$.endpoint_config")  # the judged endpoint config, whole: what CreateEndpointConfig takes of it
CONFIG_ARN = Path("$.config_arn")
CONFIG_TAGS = Path("$.config_tags")  # [{Key, Value}]: the config's tags, which its copy keeps
CONFIG_CHECK = Path("$.config_check")  # {judged: the variant is there, on its type; held: why not one click, or ""}
# DescribeEndpointConfig's answer less what only describes it (CreateEndpointConfig takes the rest: a test holds the
# list to botocore's model of both calls, so a field SageMaker adds is copied, never dropped).
DESCRIBED_ONLY = ("EndpointConfigName", "EndpointConfigArn", "CreationTime")
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


# DescribeEndpoint's answer as the workflow keeps it: status, config, and each (shadow) variant's count and weight now.
_ENDPOINT_NOW = """{
  'Status': $states.result.EndpointStatus,
  'Config': $states.result.EndpointConfigName,
  'Variants': [$map($append($states.result.ProductionVariants, $states.result.ShadowProductionVariants), function($v) {
    {'VariantName': $v.VariantName, 'DesiredInstanceCount': $v.DesiredInstanceCount, 'DesiredWeight': $v.DesiredWeight}
  })]
}"""

# Why a copy of the config could not be made safely, in words ("" when it can): each reason a refusal states.
_HELD_BACK_TESTS = {
    "components": "$count($all[$not($exists(ModelName))]) > 0",
    "serverless": "$count($all[$exists(ServerlessConfig)]) > 0",
    "instance_pools": "$exists($judged.InstancePools)",
    "capacity_reservation": "$exists($judged.CapacityReservationConfig)",
    "gpu_partitions": "$exists($judged.AcceleratorPartitionLayouts)",
    "execution_role": "$exists($config.ExecutionRoleArn)",
}
_HELD_BACK = tuple((_HELD_BACK_TESTS[key], words) for key, words in ENDPOINT_COPY_HELD_BACK.items())

_CONFIG_READ = f"""(
  $config := $states.result;
  $all := $append($config.ProductionVariants, $config.ShadowProductionVariants);
  $judged := $config.ProductionVariants[VariantName = {data(SM.variant_name)}];
  $merge([$states.input, {{
    '{CONFIG[2:]}': $sift($config, function($v, $k) {{ $not($k in {list(DESCRIBED_ONLY)}) }}),
    '{CONFIG_ARN[2:]}': $config.EndpointConfigArn,
    '{CONFIG_CHECK[2:]}': {{
      'judged': $count($judged) = 1 and $judged.InstanceType = {data(IN.expected_type)},
      'held': $join([{", ".join(f"{test} ? '{words}'" for test, words in _HELD_BACK)}], '; ')
    }}
  }}])
)"""

# CreateEndpointConfig's request: the config as read, the judged variant's type and count changed, each variant's count
# and weight as the endpoint runs them now, the config's tags with the managed tag set.
_CONFIG_COPY = f"""(
  $in := $states.input;
  $copy := function($v) {{(
    $now := $in.{ENDPOINT[2:]}.Variants[VariantName = $v.VariantName];
    $judged := $v.VariantName = $in.{SM.variant_name[2:]};
    $merge([
      $v,
      $exists($now.DesiredInstanceCount) ? {{'InitialInstanceCount': $now.DesiredInstanceCount}} : {{}},
      $exists($now.DesiredWeight) ? {{'InitialVariantWeight': $now.DesiredWeight}} : {{}},
      $judged ? {{'InstanceType': $in.{IN.target_type[2:]}, 'InitialInstanceCount': $in.{SM.target_count[2:]}}} : {{}}
    ])
  )}};
  $merge([
    $in.{CONFIG[2:]},
    {{
      'EndpointConfigName': $in.{SM.new_config_name[2:]},
      'ProductionVariants': [$map($in.{CONFIG[2:]}.ProductionVariants, $copy)],
      'Tags': $append(
        $in.{CONFIG_TAGS[2:]}[Key != $in.{IN.managed_tag_key[2:]}],
        [{{'Key': $in.{IN.managed_tag_key[2:]}, 'Value': 'true'}}]
      )
    }},
    $exists($in.{CONFIG[2:]}.ShadowProductionVariants)
      ? {{'ShadowProductionVariants': [$map($in.{CONFIG[2:]}.ShadowProductionVariants, $copy)]}}
      : {{}}
  ])
)"""


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
    endpoint = [SM.variant_name, SM.expected_config, SM.new_config_name, SM.alarm_name]
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
        "DescribeEndpoint": sdk_jsonata(
            "sagemaker:describeEndpoint",
            {"EndpointName": jsonata(data(SM.name))},
            jsonata(f"$merge([$states.input, {{'{ENDPOINT[2:]}': {_ENDPOINT_NOW}}}])"),
            "CheckEndpoint",
            on_error="RefuseResourceNotRead",
            retrier=RETRY_SAGEMAKER,
            comment=(
                "Read the endpoint as it is now (the recommendation may be days old), with each variant's count and "
                "weight as it runs them: the copy of its config keeps them."
            ),
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
            Default="DescribeEndpointConfig",
        ),
        "DescribeEndpointConfig": sdk_jsonata(
            "sagemaker:describeEndpointConfig",
            {"EndpointConfigName": jsonata(data(SM.expected_config))},
            jsonata(_CONFIG_READ),
            "ListEndpointConfigTags",
            on_error="RefuseResourceNotRead",
            retrier=RETRY_SAGEMAKER,
            comment=(
                "The judged config, whole: its copy changes one variant's type and count and keeps the rest. What a "
                "copy cannot carry safely is refused here, before anything is touched."
            ),
        ),
        "ListEndpointConfigTags": sdk_jsonata(
            "sagemaker:listTags",
            {"ResourceArn": jsonata(data(CONFIG_ARN)), "MaxResults": 100},
            jsonata(
                f"$merge([$states.input, {{'{CONFIG_TAGS[2:]}':"
                " $exists($states.result.Tags) ? $states.result.Tags[] : [],"
                f" 'config_opted_out': $count($states.result.Tags[Key = {data(IN.opt_out_tag)}]) > 0}}])"
            ),
            "CheckEndpointConfig",
            on_error="RefuseResourceNotRead",
            retrier=RETRY_SAGEMAKER,
            comment="The config's tags (at most 50, one page): its copy keeps them; an opted-out config is refused.",
        ),
        "CheckEndpointConfig": state(
            "Choice",
            Choices=[
                goto(equals(CONFIG_CHECK.dot("judged"), False), "RefuseVariantChanged"),
                goto(not_(equals(CONFIG_CHECK.dot("held"), "")), "RefuseEndpointKind"),
                goto(equals(Path("$.config_opted_out"), True), "RefuseConfigOptedOut"),
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
        "RefuseVariantChanged": refuse(
            "endpoint-changed",
            fmt(
                "endpoint config {} has no production variant {} on {}: the advice is stale",
                SM.expected_config,
                SM.variant_name,
                IN.expected_type,
            ),
        ),
        "RefuseEndpointKind": refuse(
            "endpoint-not-one-click",
            fmt(
                "endpoint {} cannot be updated in one click: {}. Change its endpoint config by hand",
                SM.name,
                CONFIG_CHECK.dot("held"),
            ),
        ),
        "RefuseConfigOptedOut": refuse(
            "opted-out",
            fmt("endpoint config {} carries the opt-out tag {}", SM.expected_config, IN.opt_out_tag),
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
        "CreateEndpointConfig": sdk_jsonata(
            "sagemaker:createEndpointConfig",
            jsonata(_CONFIG_COPY),
            jsonata("$states.input"),
            "UpdateEndpoint",
            on_error="EndpointNotUpdated",
            retrier=RETRY_SAGEMAKER_CHANGE,
            comment=(
                "The judged config, copied: the judged variant on the target type and count; every other variant, "
                "shadow variant and setting as they are, each variant's count and weight as the endpoint runs them; "
                "its tags, with the managed tag (the action role may update an endpoint only to a managed config)."
            ),
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
