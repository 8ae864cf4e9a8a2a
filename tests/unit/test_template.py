"""template.yaml checks that cfn-lint and `sam validate --lint` do not make (see the library facts):
references to SAM-generated resources, runtimes, handlers, state machine substitutions, sample events."""

from __future__ import annotations

import copy
import importlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
SUPPORTED_RUNTIMES = {"python3.12", "python3.13"}


LANGUAGE_EXTENSIONS = "AWS::LanguageExtensions"


@cache
def raw() -> dict[str, Any]:
    """template.yaml as written (Fn::ForEach loops unexpanded)."""
    from samtranslator.yaml_helper import yaml_parse

    parsed: dict[str, Any] = yaml_parse(TEMPLATE.read_text())
    return parsed


@cache
def sam() -> dict[str, Any]:
    """The SAM template CloudFormation hands to the Serverless transform: the Fn::ForEach loops expanded."""
    return language_extensions(raw())


def language_extensions(template: dict[str, Any]) -> dict[str, Any]:
    """What the AWS::LanguageExtensions transform makes of Fn::ForEach in Resources (this template's one use of
    it): each loop's fragment once per item of its collection, with `${Identifier}` replaced in every key and
    string and {"Ref": Identifier} by the item, and a reference to a copy, {"Ref": {"Fn::Sub": "X${Identifier}"}},
    made {"Ref": "XA"} (docs: intrinsic-function-reference-foreach, transform-aws-languageextensions); the transform
    then leaves the Transform list. Offline, and without SAM CLI's local expansion, which resolves Fn::Sub too."""

    def substitute(node: Any, name: str, item: str) -> Any:
        if isinstance(node, str):
            return node.replace("${" + name + "}", item)
        if isinstance(node, list):
            return [substitute(value, name, item) for value in node]
        if isinstance(node, dict):
            if node == {"Ref": name}:
                return item
            if set(node) == {"Ref"} and isinstance(node["Ref"], dict) and set(node["Ref"]) == {"Fn::Sub"}:
                target = substitute(node["Ref"]["Fn::Sub"], name, item)
                return {"Ref": target} if "${" not in target else {"Ref": {"Fn::Sub": target}}
            return {substitute(key, name, item): substitute(value, name, item) for key, value in node.items()}
        return node

    def expand(section: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in section.items():
            generated = {key: value}
            if key.startswith("Fn::ForEach::"):
                name, collection, fragment = value
                generated = {}
                for item in collection:
                    generated.update(expand(substitute(fragment, name, item)))
            for made in generated:
                assert made not in out, f"{made} is defined twice"
            out.update(generated)
        return out

    expanded = copy.deepcopy(template)
    expanded["Resources"] = expand(expanded["Resources"])
    transforms = [t for t in template.get("Transform", []) if t != LANGUAGE_EXTENSIONS]
    expanded["Transform"] = transforms[0] if len(transforms) == 1 else transforms
    return expanded


@cache
def expanded() -> dict[str, Any]:
    """The template as CloudFormation, expanded offline by the SAM translator."""
    from samtranslator.translator.transform import transform

    class _NoManagedPolicies:
        def load(self) -> dict[str, str]:
            return {}

    template = copy.deepcopy(sam())
    for resource in template["Resources"].values():
        properties = resource.get("Properties", {})
        if resource["Type"] == "AWS::Serverless::Function":
            properties["CodeUri"] = "s3://bucket/code.zip"
        if resource["Type"] == "AWS::Serverless::LayerVersion":
            properties["ContentUri"] = "s3://bucket/layer.zip"
        if resource["Type"] == "AWS::Serverless::StateMachine" and "DefinitionUri" in properties:
            properties["Definition"] = json.loads(_definition_text(properties.pop("DefinitionUri")))
    result: dict[str, Any] = transform(template, {}, _NoManagedPolicies())
    return result


def _definition_text(uri: str) -> str:
    # Substitutions are numbers in some places (MaxConcurrency): make the file parse as JSON.
    return re.sub(r"\$\{(\w+)\}", "1", (ROOT / uri).read_text())


def functions() -> dict[str, dict[str, Any]]:
    return {name: r for name, r in sam()["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}


def _getatts(node: Any) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Fn::GetAtt":
                target = value if isinstance(value, list) else value.split(".", 1)
                found.append((target[0], target[1]))
            else:
                found.extend(_getatts(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_getatts(item))
    return found


@pytest.fixture(autouse=True)
def _region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


def test_every_getatt_names_a_resource_that_exists_after_the_sam_transform() -> None:
    resources = expanded()["Resources"]
    for resource, _attribute in _getatts(expanded()):
        assert resource in resources, f"!GetAtt {resource}: no such resource once SAM has expanded the template"


def test_functions_run_a_supported_python_on_arm64_with_an_importable_handler() -> None:
    globals_ = sam()["Globals"]["Function"]
    assert globals_["Runtime"] in SUPPORTED_RUNTIMES
    assert globals_["Architectures"] == ["arm64"]
    for name, function in functions().items():
        properties = function["Properties"]
        assert properties.get("Runtime", globals_["Runtime"]) in SUPPORTED_RUNTIMES, name
        module_name, _, attribute = properties["Handler"].rpartition(".")
        module = importlib.import_module(module_name)
        assert callable(getattr(module, attribute)), f"{name}: {properties['Handler']} is not callable"


def test_every_function_has_a_sample_event() -> None:
    events = {path.stem for path in (ROOT / "events").glob("*.json")}
    for function in functions().values():
        module = function["Properties"]["Handler"].rsplit(".", 2)[-2]
        assert any(event == module or event.startswith(module + "_") for event in events), module


def test_state_machine_substitutions_match_the_definitions() -> None:
    for name, resource in sam()["Resources"].items():
        if resource["Type"] != "AWS::Serverless::StateMachine":
            continue
        properties = resource["Properties"]
        used = set(re.findall(r"\$\{(\w+)\}", (ROOT / properties["DefinitionUri"]).read_text()))
        assert used == set(properties.get("DefinitionSubstitutions", {})), name


def test_table_keeps_state_safe() -> None:
    table = sam()["Resources"]["Table"]["Properties"]
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["SSESpecification"]["SSEEnabled"] is True
    # Powertools idempotency records expire through the same TTL attribute.
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}


def test_schedules_are_eventbridge_scheduler_with_parameterised_expressions_and_time_zone() -> None:
    for name in ("CollectFunction", "AnalyzeFunction", "ReportFunction", "PricesFunction"):
        events = functions()[name]["Properties"]["Events"]
        (schedule,) = events.values()
        assert schedule["Type"] == "ScheduleV2", name
        assert set(schedule["Properties"]["ScheduleExpression"]) == {"Ref"}, name
        assert schedule["Properties"]["ScheduleExpressionTimezone"] == {"Ref": "ScheduleTimezone"}, name


def test_only_the_resize_workflow_may_change_instances() -> None:
    writes = {"ec2:StopInstances", "ec2:StartInstances", "ec2:ModifyInstanceAttribute", "ec2:TerminateInstances"}
    text = json.dumps(expanded()["Resources"])
    roles = {
        name: json.dumps(resource)
        for name, resource in expanded()["Resources"].items()
        if resource["Type"] == "AWS::IAM::Role"
    }
    holders = {name for name, body in roles.items() if any(action in body for action in writes)}
    # The action role (assumed by the instance workflow per task) and the role EventBridge Scheduler runs pairs as.
    assert holders == {"ActionRole", "SchedulerRole"}, holders
    assert '"ec2:*"' not in text  # no wildcard action (ARNs may name every region: ec2:*:<account>)


def test_the_demos_plain_yaml_reading_of_the_template_equals_sams() -> None:
    from demo.aws_table import cloudformation_yaml

    assert cloudformation_yaml(TEMPLATE.read_text()) == raw()


# ---------------------------------------------------------------------------------------------
# operations: every function and state machine is watched, every asynchronous failure is kept


def _of_type(kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in expanded()["Resources"].items() if r["Type"] == kind}


def _alarms_on(namespace: str, metric: str, dimension: str, value: Any) -> list[dict[str, Any]]:
    """Alarms whose metric (or one of whose metric-math inputs) is namespace/metric with that dimension."""
    found = []
    for alarm in _of_type("AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        stats = [q["MetricStat"]["Metric"] for q in props.get("Metrics", []) if "MetricStat" in q]
        if "MetricName" in props:
            stats.append(props)
        for stat in stats:
            dims = {d["Name"]: d["Value"] for d in stat.get("Dimensions", [])}
            if (stat["Namespace"], stat["MetricName"]) == (namespace, metric) and dims.get(dimension) == value:
                found.append(props)
    return found


def test_the_function_alarms_are_one_definition_for_every_function_and_signal() -> None:
    """template.yaml defines the Lambda alarms once (Fn::ForEach); expanded, each says what it watches in words."""
    (loop,) = [value for key, value in raw()["Resources"].items() if key.startswith("Fn::ForEach::")]
    _, names, _ = loop
    assert {f"{name}Function" for name in names} == set(functions())  # a new function joins the loop
    says = {
        "Errors": "failed (an invocation raised or timed out)",
        "Throttles": "was throttled (account concurrency exhausted)",
    }
    for name in names:
        for signal, words in says.items():
            props = sam()["Resources"][f"{name}{signal}Alarm"]["Properties"]
            text, variables = props["AlarmDescription"]["Fn::Sub"]
            mapping, key, field = variables["Says"]["Fn::FindInMap"]
            assert text.replace("${Says}", sam()["Mappings"][mapping][key][field]) == f"{name}Function {words}"
            assert (props["Namespace"], props["MetricName"]) == ("AWS/Lambda", signal)
            assert props["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": f"{name}Function"}}]


def _notifies_the_topic(alarm: dict[str, Any]) -> bool:
    return {"Ref": "AlarmTopic"} in alarm.get("AlarmActions", [])


DLQ = {"Fn::GetAtt": ["DeadLetterQueue", "Arn"]}


@pytest.mark.parametrize("function", sorted(functions()))
def test_every_function_has_error_and_throttle_alarms_and_a_failure_destination(function: str) -> None:
    for metric in ("Errors", "Throttles"):
        alarms = _alarms_on("AWS/Lambda", metric, "FunctionName", {"Ref": function})
        assert alarms and all(_notifies_the_topic(a) for a in alarms), f"{function}: no {metric} alarm"
    invoke_configs = [
        c["Properties"]
        for c in _of_type("AWS::Lambda::EventInvokeConfig").values()
        if c["Properties"]["FunctionName"] == {"Ref": function}
    ]
    assert [c["DestinationConfig"]["OnFailure"]["Destination"] for c in invoke_configs] == [DLQ], function
    assert "sqs:SendMessage" in json.dumps(expanded()["Resources"][f"{function}Role"]), "may write the DLQ"


def test_every_schedule_and_eventbridge_target_has_a_dead_letter_queue() -> None:
    schedules = _of_type("AWS::Scheduler::Schedule")
    rules = _of_type("AWS::Events::Rule")
    assert len(schedules) == 4 and len(rules) == 2
    for name, schedule in schedules.items():
        assert schedule["Properties"]["Target"]["DeadLetterConfig"] == {"Arn": DLQ}, name
        role = schedule["Properties"]["Target"]["RoleArn"]["Fn::GetAtt"][0]
        assert "sqs:SendMessage" in json.dumps(expanded()["Resources"][role]), name
    (grant,) = sam()["Resources"]["DeadLetterQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert grant["Principal"] == {"Service": "events.amazonaws.com"} and grant["Action"] == "sqs:SendMessage"
    for name, rule in rules.items():
        for target in rule["Properties"]["Targets"]:
            assert target["DeadLetterConfig"] == {"Arn": DLQ}, name
            assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 1, name


@pytest.mark.parametrize("machine", ["PipelineStateMachine", "ResizeStateMachine"])
def test_every_state_machine_logs_its_executions_and_raises_alarms(machine: str) -> None:
    props = expanded()["Resources"][machine]["Properties"]
    logging = props["LoggingConfiguration"]
    assert logging["Level"] == "ALL" and logging["IncludeExecutionData"] is False
    (destination,) = logging["Destinations"]
    group = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    assert sam()["Resources"][group]["Properties"]["LogGroupName"]["Fn::Sub"].startswith("/aws/vendedlogs/states/")
    watched = [
        metric
        for metric in ("ExecutionsFailed", "ExecutionsTimedOut", "ExecutionsAborted")
        if _alarms_on("AWS/States", metric, "StateMachineArn", {"Ref": machine})
    ]
    role = props["RoleArn"]["Fn::GetAtt"][0]
    assert "logs:CreateLogDelivery" in json.dumps(expanded()["Resources"][role]), "the role may deliver the logs"
    expected = ["ExecutionsTimedOut", "ExecutionsAborted"]  # a refused resize ends FAILED on purpose
    assert watched == (["ExecutionsFailed", *expected] if machine == "PipelineStateMachine" else expected)


def test_failed_resizes_and_dead_letters_raise_alarms() -> None:
    needs_person = _alarms_on("GpuRightsizer", "ResizeOutcomes", "outcome", "failed")
    queue = {"Fn::GetAtt": ["DeadLetterQueue", "QueueName"]}
    dead_letters = _alarms_on("AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", queue)
    assert needs_person and dead_letters
    assert all(_notifies_the_topic(a["Properties"]) for a in _of_type("AWS::CloudWatch::Alarm").values())
    assert sam()["Resources"]["AlarmEmailSubscription"]["Condition"] == "HasAlarmEmail"


def test_the_resize_state_machines_role_may_log_and_only_touch_audit_and_lock_items() -> None:
    role = sam()["Resources"]["ResizeStateMachineRole"]["Properties"]
    documents = [p["PolicyDocument"] for p in role["Policies"] if "Statement" in p["PolicyDocument"]]
    statements = {s["Sid"]: s for document in documents for s in document["Statement"]}
    assert "logs:CreateLogDelivery" in statements["ExecutionLogging"]["Action"]
    leading = statements["AuditLogAndInstanceLock"]["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
    assert leading == ["AUDIT#*", "LOCK#*"]
    lock = statements["ReadAndReleaseInstanceLock"]
    assert lock["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"] == ["LOCK#*"]


def test_the_notifier_hears_every_end_of_a_resize_execution() -> None:
    rule = expanded()["Resources"]["NotifierFunctionExecutionEnded"]["Properties"]["EventPattern"]
    assert rule["source"] == ["aws.states"] and rule["detail-type"] == ["Step Functions Execution Status Change"]
    # This region's workflow and the regional copies named alike, whose rule forwards their events to this bus.
    (machines,) = rule["detail"]["stateMachineArn"]
    assert machines["wildcard"]["Fn::Sub"].endswith(":states:*:${AWS::AccountId}:stateMachine:${AWS::StackName}-resize")
    assert sam()["Resources"]["ResizeStateMachine"]["Properties"]["Name"] == {"Fn::Sub": "${AWS::StackName}-resize"}
    assert set(rule["detail"]["status"]) == {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


def test_the_dashboard_shows_savings_findings_and_outcomes_the_code_emits() -> None:
    body = sam()["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    dashboard = json.loads(re.sub(r"\$\{[^}]+\}", "x", body))
    text = json.dumps(dashboard)
    sources = "".join(
        (ROOT / "src" / "rightsizer" / "handlers" / name).read_text() for name in ("report.py", "notify.py")
    )
    for metric in ("ActionableSavingsUSD", "Findings", "ResizeOutcomes"):
        assert metric in text and f'"{metric}"' in sources, metric
    namespace = sam()["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"]
    assert namespace in text


def test_the_plan_bucket_is_private_encrypted_tls_only_and_its_report_pages_expire() -> None:
    resources = sam()["Resources"]
    bucket = resources["PlanBucket"]["Properties"]
    assert set(bucket["PublicAccessBlockConfiguration"].values()) == {True}
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert bucket["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}], "no ACLs"
    rules = {rule.get("Prefix", ""): rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    assert rules["reports/"]["Status"] == "Enabled" and rules["reports/"]["ExpirationInDays"] <= 7
    (statement,) = resources["PlanBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Deny" and statement["Principal"] == "*" and statement["Action"] == "s3:*"
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert resources["PlanBucketPolicy"]["Properties"]["Bucket"] == {"Ref": "PlanBucket"}


def test_the_report_function_writes_and_links_only_report_pages() -> None:
    policies = json.dumps(functions()["ReportFunction"]["Properties"]["Policies"])
    s3 = [s for s in functions()["ReportFunction"]["Properties"]["Policies"][0]["Statement"] if "s3:" in str(s)]
    assert {str(s["Action"]) for s in s3} == {"s3:PutObject", "s3:GetObject"}
    assert all(s["Resource"] == {"Fn::Sub": "${PlanBucket.Arn}/reports/*"} for s in s3), policies


def test_report_only_leaves_the_slack_function_no_right_to_start_the_workflow() -> None:
    parameter = sam()["Parameters"]["ActionsEnabled"]
    assert parameter["Default"] == "true" and parameter["AllowedValues"] == ["true", "false"]
    assert sam()["Conditions"]["ActionsOn"] == {"Fn::Equals": [{"Ref": "ActionsEnabled"}, "true"]}
    policies = functions()["SlackFunction"]["Properties"]["Policies"]
    unconditional = json.dumps([p for p in policies if "Fn::If" not in p])
    assert "states:StartExecution" not in unconditional
    (switched,) = [p["Fn::If"] for p in policies if "Fn::If" in p]
    assert switched[0] == "ActionsOn" and "states:StartExecution" in json.dumps(switched[1])
    assert switched[2] == {"Ref": "AWS::NoValue"}
    env = sam()["Globals"]["Function"]["Environment"]["Variables"]
    assert env["ACTIONS_ENABLED"] == {"Ref": "ActionsEnabled"}, "every function knows, so no surface offers a click"
