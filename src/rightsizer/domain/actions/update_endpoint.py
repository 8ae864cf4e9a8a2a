"""Endpoint update: a SageMaker endpoint variant's resize. Endpoint configs are immutable, so an endpoint still on the
config it was advised on is the one that was judged. After the lock it reads the endpoint (InService, same config)
and that config whole, refusing the kinds a copy cannot carry safely (inference components, serverless variants, a
variant on instance pools, a capacity reservation or GPU partitions of its type, an execution role to pass); the tags
every SageMaker resource is held to follow (domain/workflow/sagemaker.py). Then it creates the alarm SageMaker's
auto-rollback watches (5XX errors of the variant), a copy of the config that changes only the judged variant's
instance type and count (every other variant, shadow variant and setting kept; every variant's count and weight as
the endpoint runs them now; its tags, with the managed tag the action role's policy asks of the config), and calls
UpdateEndpoint with a blue/green deployment: a canary of 10 % of the capacity first, all traffic after 5 minutes, the
old fleet kept 2 more minutes; SageMaker rolls back by itself when the alarm fires. It then follows the endpoint
until it is InService again: on the new config (done), back on the old one (rolled back by SageMaker), or failed (a
person looks). docs/resize-workflow.md section 2d tells the story.
"""

from __future__ import annotations

from rightsizer.domain.action_spec import ActionSpec, kind_of
from rightsizer.domain.workflow.asl import (
    Path,
    Rule,
    State,
    all_of,
    any_of,
    compare,
    equals,
    fmt,
    goto,
    is_type,
    jsonata,
    not_,
    one_of,
    present,
    retry,
    state,
)
from rightsizer.domain.workflow.fragments import (
    CAUSE,
    FAILURE,
    HEALTH,
    IN,
    POLL,
    audit,
    count_poll,
    data,
    ends_as,
    note,
    progress,
    refuse,
    reset_polls,
    sdk,
    sdk_jsonata,
    wait,
)
from rightsizer.domain.workflow.plugs import Entry, Fragment, Route
from rightsizer.domain.workflow.sagemaker import (
    RESOURCE_FIELDS,
    RETRY_SAGEMAKER,
    RETRY_SAGEMAKER_CHANGE,
    SM,
    sagemaker,
    texts,
)
from rightsizer.domain.workflow_contract import ENDPOINT_COPY_HELD_BACK, MAX_SAGEMAKER_POLLS

SPEC = ActionSpec(
    kind_of(__name__),
    name="Endpoint update",
    done="Endpoint updated",
    becomes="{target}",
    change="endpoint update to {count} x {target}",
    target_text="`{target}`",
    approve_label="Approve endpoint update",
    confirm_title="Update this endpoint?",
    confirm_button="Update endpoint",
    confirm_text=(
        "{type} → {target}: a new endpoint config, deployed blue/green (a canary first, then all traffic); "
        "SageMaker rolls back by itself if the 5XX alarm fires. No downtime."
    ),
    needs_target=True,
    permissions=frozenset(
        {
            "sagemaker:DescribeEndpoint",
            "sagemaker:DescribeEndpointConfig",  # the judged config, read whole: its copy keeps every setting
            "sagemaker:ListTags",
            "sagemaker:CreateEndpointConfig",
            "sagemaker:AddTags",  # ...which CreateEndpointConfig's Tags need (tag on create)
            "sagemaker:UpdateEndpoint",
            "cloudwatch:PutMetricAlarm",  # the alarm the deployment's auto-rollback watches
            "cloudwatch:DescribeAlarms",  # ...which UpdateEndpoint reads in the caller's name
        }
    ),
)

ENDPOINT = Path("$.endpoint")  # {Status, Config[, Variants]} as SageMaker describes the endpoint
CONFIG = Path("$.endpoint_config")  # the judged endpoint config, whole: what CreateEndpointConfig takes of it
CONFIG_ARN = Path("$.config_arn")
CONFIG_TAGS = Path("$.config_tags")  # [{Key, Value}]: the config's tags, which its copy keeps
CONFIG_CHECK = Path("$.config_check")  # {judged: the variant is there, on its type; held: why not one click, or ""}
# DescribeEndpointConfig's answer less what only describes it (CreateEndpointConfig takes the rest: a test holds the
# list to botocore's model of both calls, so a field SageMaker adds is copied, never dropped).
DESCRIBED_ONLY = ("EndpointConfigName", "EndpointConfigArn", "CreationTime")
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
    """Read the endpoint and its config as they are now and refuse anything that changed or cannot be copied."""
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
        "EndpointNotUpdated": note(
            FAILURE, fmt("the update could not be started: {}", CAUSE), "OutcomeEndpointUnchanged"
        ),
        "EndpointRolledBack": note(
            FAILURE,
            "SageMaker rolled the deployment back (the 5XX alarm fired, or the new fleet failed)",
            "OutcomeEndpointRolledBack",
        ),
        "EndpointFailed": note(
            FAILURE, fmt("SageMaker reports the endpoint {}", ENDPOINT.dot("Status")), "OutcomeSageMakerNeedsPerson"
        ),
        "EndpointTimedOut": note(
            FAILURE,
            fmt("the endpoint was still {} after {} polls", ENDPOINT.dot("Status"), SM.max_polls),
            "OutcomeSageMakerNeedsPerson",
        ),
        "EndpointLost": note(
            FAILURE,
            fmt("the endpoint could not be read after the update started: {}", CAUSE),
            "OutcomeSageMakerNeedsPerson",
        ),
    }


def outcomes() -> dict[str, State]:
    reason = FAILURE.dot("reason")
    return {
        "OutcomeEndpointUpdated": ends_as(
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
        "OutcomeEndpointUnchanged": ends_as(
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
        "OutcomeEndpointRolledBack": ends_as(
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
    }


def states() -> dict[str, State]:
    return {**validation(), **endpoint_update(), **outcomes()}


WORKFLOW = Fragment(
    states,
    routes={Entry.LOCKED: Route("DescribeEndpoint"), Entry.SAGEMAKER_VALIDATED: Route("PutRollbackAlarm")},
    request=(
        *RESOURCE_FIELDS,
        *texts(SM.variant_name, SM.expected_config, SM.new_config_name, SM.alarm_name),
        *_counts(),
    ),
    done="DoneSageMaker",
)
