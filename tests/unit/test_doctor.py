"""`rightsizer doctor` against the demo's deployed stack in moto (demo/serverless.py: its functions, state machines,
secret and schedules, recorded in moto's CloudFormation) with a few hosts seeded as the agents publish, and the local
Slack API double its functions talk to. IAM's SimulatePrincipalPolicy, which moto lacks, is answered through botocore's
Stubber. Each line must say "ok" or what to fix, and the exit code whether something needs fixing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from demo.fleet import IDLE_GPU, Host, constant
from demo.seed import Seeded, seed
from demo.serverless import CHANNEL, STACK_NAME, Stack, deployed_stack
from demo.slack_double import BOT_TOKEN, SIGNING_SECRET, Channel

from rightsizer.adapters.aws.session import AwsSession
from rightsizer.cli.verbs.doctor import CHECKS, STACK_PARTS, Part
from rightsizer.domain.action_kinds import ActionKind
from rightsizer.domain.actions import ACTIONS
from rightsizer.services.doctor import AGENT_CONFIG_PARAMETER, AGENT_INSTALL, AGENT_TAG, agent_commands
from tests.unit.test_cli import Run, run

REGION = "us-east-1"
MANAGED = {"rightsizer:managed": "true"}
HOSTS = (
    Host("trainer", REGION, "g5.xlarge", "trainer", "idle", gpus=(IDLE_GPU,), tags=MANAGED),
    Host("inference", REGION, "g5.xlarge", "inference", "idle", gpus=(IDLE_GPU,)),
    Host("neuron", REGION, "inf1.xlarge", "neuron", "idle", neuron_cores={0: constant(20.0)}),
    Host("stopped", REGION, "g5.xlarge", "stopped-box", "stopped", stopped=True),  # publishes nothing, judged not
)
NO_AGENT = Host("no-agent", REGION, "g5.xlarge", "render-node", "insufficient_data")
NO_NEURON = Host("no-neuron", REGION, "inf1.xlarge", "silent-inferentia", "insufficient_data")


@dataclass(frozen=True)
class World:
    stack: Stack
    hosts: dict[str, str]  # host key -> instance id

    def doctor(self, *args: str) -> Run:
        return run("doctor", "--stack", STACK_NAME, "--region", REGION, "--color", "off", *args)

    def document(self, *args: str) -> dict[str, Any]:
        result = self.doctor("--output", "json", *args)
        document: dict[str, Any] = json.loads(result.out)
        return document


def seeded(*extra: Host) -> dict[str, str]:
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    made: list[Seeded] = seed(end, days=1, hosts=[*HOSTS, *extra])
    return {item.host.key: item.instance_id for item in made}


@pytest.fixture
def stack(moto_aws: None) -> Iterator[Stack]:
    with deployed_stack() as deployed:
        yield deployed


@pytest.fixture
def world(stack: Stack, simulator: Simulator) -> World:
    return World(stack, seeded())


# ---------------------------------------------------------------------------------------------
# IAM's policy simulator (moto has none): botocore's Stubber, its answers from a policy the test states


Decide = Callable[[str, Mapping[str, str]], str]  # (action, context) -> EvalDecision


def as_template_grants(action: str, context: Mapping[str, str]) -> str:
    """template.yaml's ActionRole: changes only on hosts tagged rightsizer:managed=true, reads everywhere."""
    verb = action.split(":")[1]
    if verb.startswith(("Describe", "List")) or action.startswith(("scheduler:", "iam:")):
        return "allowed"
    return "allowed" if context.get("aws:ResourceTag/rightsizer:managed") == "true" else "implicitDeny"


class Simulator:
    """Answers the calls doctor makes for the action role: per resource, the host's actions, tagged then not."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.client: Any = boto3.client("iam", region_name=REGION)
        self.stubber = Stubber(self.client)
        original = AwsSession.client

        def client(session: AwsSession, service: str, region: str, **kwargs: Any) -> Any:
            return self.client if service == "iam" else original(session, service, region, **kwargs)

        monkeypatch.setattr(AwsSession, "client", client)

    def expect(self, role: str, instance_id: str, scheduler_role: str, decide: Decide = as_template_grants) -> None:
        """Each action of a resize, a stop and a schedule on its resource (reads on "*"), as a host tagged for one
        click and as one that is not: the calls doctor must make, checked by the Stubber against IAM's model."""
        account = role.split(":")[4]
        resources = {
            "ec2": f"arn:aws:ec2:{REGION}:{account}:instance/{instance_id}",
            "scheduler": f"arn:aws:scheduler:{REGION}:{account}:schedule/default/rightsizer-{instance_id}-stop",
            "iam": scheduler_role,
        }
        kinds = (ActionKind.RESIZE, ActionKind.STOP, ActionKind.SCHEDULE)
        actions = sorted({action for kind in kinds for action in ACTIONS[kind].permissions})
        groups: dict[str, list[str]] = {}
        for action in actions:
            reads = action.split(":")[1].startswith(("Describe", "List"))
            groups.setdefault("*" if reads else resources[action.split(":")[0]], []).append(action)
        host = resources["ec2"]
        untagged = {host: [name for name in groups[host] if not name.split(":")[1].startswith("Describe")]}
        for context, asked in (({"aws:ResourceTag/rightsizer:managed": "true"}, groups), ({}, untagged)):
            entries = {**context, "iam:PassedToService": "scheduler.amazonaws.com"}
            for resource, names in asked.items():
                results = [
                    {"EvalActionName": name, "EvalResourceName": resource, "EvalDecision": decide(name, context)}
                    for name in names
                ]
                self.stubber.add_response(
                    "simulate_principal_policy",
                    {"EvaluationResults": results, "IsTruncated": False},
                    {
                        "PolicySourceArn": role,
                        "ActionNames": names,
                        "ResourceArns": [resource],
                        "ContextEntries": [
                            {"ContextKeyName": key, "ContextKeyValues": [value], "ContextKeyType": "string"}
                            for key, value in entries.items()
                        ],
                    },
                )
        self.stubber.activate()


@pytest.fixture
def simulator(monkeypatch: pytest.MonkeyPatch) -> Simulator:
    return Simulator(monkeypatch)


def outputs(name: str = STACK_NAME) -> dict[str, str]:
    described = boto3.client("cloudformation", region_name=REGION).describe_stacks(StackName=name)["Stacks"][0]
    return {item["OutputKey"]: item["OutputValue"] for item in described["Outputs"]}


def expect_simulation(world: World, simulator: Simulator, decide: Decide = as_template_grants) -> None:
    out = outputs()
    simulator.expect(out["ActionRoleArn"], world.hosts["trainer"], out["SchedulerRoleArn"], decide)


def line(document: dict[str, Any], check: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [item for item in document["checks"] if item["check"] == check]
    assert len(found) == 1, check
    return found[0]


# ---------------------------------------------------------------------------------------------
# a ready deployment


def test_a_ready_deployment_is_every_line_ok_and_exit_0(world: World, simulator: Simulator) -> None:
    expect_simulation(world, simulator)

    result = world.doctor()

    assert result.code == 0, result.out + result.err
    assert result.err == ""
    body = [text for text in result.lines[2:-2] if text]
    assert [text.split()[0] for text in body] == ["ok"] * len(CHECKS), result.out
    assert result.lines[0] == f"rightsizer doctor: the {STACK_NAME} stack ({REGION}), account 123456789012"
    assert result.lines[-1] == "Everything is ready."
    simulator.stubber.assert_no_pending_responses()


def test_each_line_says_what_it_found(world: World, simulator: Simulator) -> None:
    expect_simulation(world, simulator)

    document = world.document()

    assert document["ok"] is True and document["stack"] == {"name": STACK_NAME, "region": REGION}
    assert [item["check"] for item in document["checks"]] == [check.key for check in CHECKS]
    texts = {item["check"]: item["text"] for item in document["checks"]}
    assert texts["regions"] == "us-east-1 and eu-west-1: enabled"
    assert texts["member-roles"] == "none configured: the stack reads account 123456789012"
    assert texts["gpu-metrics"] == "all 2 running GPU hosts publish GPU metrics (us-east-1 and eu-west-1)"
    assert texts["neuron-metrics"] == "the Inferentia/Trainium host publishes neuron-monitor metrics"
    assert texts["functions"].startswith("6 of 6 present: gpu-rightsizer-collect, gpu-rightsizer-analyze")
    assert texts["state-machines"] == "2 of 2 present: gpu-rightsizer-pipeline and gpu-rightsizer-resize"
    assert texts["schedules"].startswith("group default active; 4 of 4 present: CollectFunctionDaily")
    assert texts["slack-token"].startswith("the bot token works: @gpu-rightsizer in rightsize-demo")
    assert texts["slack-channel"] == f"#gpu-reports ({CHANNEL}): reachable, the bot is a member"
    assert texts["action-role"] == (
        "may do the 11 things one click needs on trainer (" + world.hosts["trainer"] + "), and change no untagged host"
    )


def test_the_bot_token_is_never_printed(world: World, simulator: Simulator) -> None:
    formats = ("table", "json", "text", "yaml")
    for _ in formats:
        expect_simulation(world, simulator)

    for output in formats:
        result = world.doctor("--output", output)
        assert result.code == 0 and result.err == "", result.err
        assert BOT_TOKEN not in result.out and SIGNING_SECRET not in result.out


def test_a_query_picks_the_lines(world: World, simulator: Simulator) -> None:
    expect_simulation(world, simulator)

    result = world.doctor("--output", "text", "--query", "checks[?status=='ok'].check")

    assert result.code == 0 and result.out.split() == [check.key for check in CHECKS]


# ---------------------------------------------------------------------------------------------
# hosts that publish nothing


def test_hosts_without_the_agent_are_named_with_the_ssm_commands_that_install_it(
    stack: Stack, simulator: Simulator
) -> None:
    world = World(stack, seeded(NO_AGENT))
    expect_simulation(world, simulator)

    result = world.doctor()
    gpu = line(world.document(), "gpu-metrics")

    assert result.code == 1
    silent = world.hosts["no-agent"]
    assert gpu["status"] == "fix"
    assert gpu["text"] == (
        f"1 of 3 running GPU hosts publishes no GPU metrics (none in the last 3 hours): render-node ({silent})"
    )
    assert gpu["details"]["silent"] == [silent]
    for command in agent_commands(REGION, [silent]):
        assert command in gpu["fix"] and command in result.out  # whole, never cut, in the table too
    assert f"--instance-ids {silent}" in gpu["fix"] and "AWS-ConfigureAWSPackage" in gpu["fix"]
    assert "agent/ssm-rollout.yaml" in gpu["fix"] and "rightsizer:agent=true" in gpu["fix"]
    assert result.lines[-1] == "1 check needs fixing."


def test_the_ssm_commands_take_fifty_hosts_each() -> None:
    ids = [f"i-{n:017x}" for n in range(120)]

    commands = agent_commands("eu-west-1", ids)

    assert len(commands) == 3 * len(AGENT_INSTALL)
    assert [command.count(" i-") for command in commands] == [50, 50, 50, 50, 20, 20]
    assert all(command.startswith("aws ssm send-command --region eu-west-1 --document-name ") for command in commands)


def test_an_inferentia_host_without_neuron_monitor_is_named(stack: Stack, simulator: Simulator) -> None:
    world = World(stack, seeded(NO_NEURON))
    expect_simulation(world, simulator)

    neuron = line(world.document(), "neuron-metrics")

    assert neuron["status"] == "fix"
    assert neuron["text"].startswith(
        "1 of 2 Inferentia/Trainium hosts publishes no NeuronMonitor/neuroncore_utilization in the last 3 hours: "
        f"silent-inferentia ({world.hosts['no-neuron']})"
    )
    assert "neuron-monitor-cloudwatch.py --namespace NeuronMonitor --region us-east-1" in neuron["fix"]


# ---------------------------------------------------------------------------------------------
# the stack's parts


def disable_schedule(name: str) -> None:
    """Turn one of the stack's schedules off, as someone might in the console (UpdateSchedule replaces it whole)."""
    scheduler = boto3.client("scheduler", region_name=REGION)
    schedule = scheduler.get_schedule(Name=name)
    scheduler.update_schedule(
        Name=name,
        ScheduleExpression=schedule["ScheduleExpression"],
        FlexibleTimeWindow=schedule["FlexibleTimeWindow"],
        Target=schedule["Target"],
        State="DISABLED",
    )


@pytest.mark.parametrize(
    ("check", "remove", "named"),
    [
        (
            "functions",
            lambda: boto3.client("lambda", region_name=REGION).delete_function(FunctionName="gpu-rightsizer-notify"),
            "NotifierFunction (gpu-rightsizer-notify does not exist)",
        ),
        (
            "schedules",
            lambda: boto3.client("scheduler", region_name=REGION).delete_schedule(Name="ReportFunctionDailyReport"),
            "ReportFunctionDailyReport (ReportFunctionDailyReport does not exist)",
        ),
        (
            "schedules",
            lambda: disable_schedule("PricesFunctionWeekly"),
            "PricesFunctionWeekly (PricesFunctionWeekly is disabled)",
        ),
        (
            "state-machines",
            lambda: boto3.client("stepfunctions", region_name=REGION).delete_state_machine(
                stateMachineArn=outputs()["PipelineStateMachineArn"]
            ),
            "PipelineStateMachine (",
        ),
    ],
)
def test_a_part_the_stack_lost_is_named_with_the_redeploy(
    world: World, simulator: Simulator, check: str, remove: Callable[[], object], named: str
) -> None:
    expect_simulation(world, simulator)
    remove()

    found = line(world.document(), check)

    assert found["status"] == "fix" and "1 of " in found["text"] and named in found["text"]
    assert "sam build && sam deploy --stack-name gpu-rightsizer" in found["fix"]


def test_the_slack_secret_without_a_token_is_a_fix_and_the_channel_is_not_checked(
    world: World, simulator: Simulator
) -> None:
    expect_simulation(world, simulator)
    boto3.client("secretsmanager", region_name=REGION).put_secret_value(
        SecretId=outputs()["SlackSecretArn"], SecretString=json.dumps({"signing_secret": SIGNING_SECRET})
    )

    document = world.document()
    token, channel = line(document, "slack-token"), line(document, "slack-channel")

    assert token["status"] == "fix" and "has no bot_token" in token["text"] and "docs/connect-slack.md" in token["fix"]
    assert channel == {**channel, "status": "skipped", "text": "not checked: Slack token must pass first"}


def test_a_token_slack_refuses_says_so(world: World, simulator: Simulator) -> None:
    expect_simulation(world, simulator)
    world.stack.slack.failures["auth.test"] = "invalid_auth"

    token = line(world.document(), "slack-token")

    assert token["status"] == "fix" and token["text"] == "Slack's auth.test failed: invalid_auth"
    assert "Bot User OAuth Token" in token["fix"]


def test_a_channel_the_bot_is_not_in_says_to_invite_it(world: World, simulator: Simulator) -> None:
    expect_simulation(world, simulator)
    world.stack.slack.channels[CHANNEL] = Channel("gpu-reports", is_member=False)

    channel = line(world.document(), "slack-channel")

    assert channel["status"] == "fix" and "the bot is not a member" in channel["text"]
    assert "/invite @gpu-rightsizer" in channel["fix"]


def test_a_channel_slack_does_not_know_says_which(world: World, simulator: Simulator) -> None:
    expect_simulation(world, simulator)
    world.stack.slack.channels.clear()

    channel = line(world.document(), "slack-channel")

    assert channel["status"] == "fix" and channel["text"] == f"channel {CHANNEL} cannot be read: channel_not_found"
    assert "SlackChannel" in channel["fix"]


# ---------------------------------------------------------------------------------------------
# the action role, as IAM's simulator evaluates it


def test_an_action_role_that_cannot_stop_a_tagged_host_is_a_fix(world: World, simulator: Simulator) -> None:
    def no_stop(action: str, context: Mapping[str, str]) -> str:
        return "implicitDeny" if action == "ec2:StopInstances" else as_template_grants(action, context)

    expect_simulation(world, simulator, no_stop)

    role = line(world.document(), "action-role")

    assert role["status"] == "fix" and "denies ec2:StopInstances on trainer" in role["text"]
    assert role["details"]["denied"] == ["ec2:StopInstances"]


def test_an_action_role_that_may_change_untagged_hosts_is_a_fix(world: World, simulator: Simulator) -> None:
    def anywhere(action: str, context: Mapping[str, str]) -> str:
        return "allowed"

    expect_simulation(world, simulator, anywhere)

    role = line(world.document(), "action-role")

    assert role["status"] == "fix"
    assert role["details"]["allowed_untagged"] == [
        "ec2:ModifyInstanceAttribute",
        "ec2:StartInstances",
        "ec2:StopInstances",
    ]
    assert (
        "allows ec2:ModifyInstanceAttribute, ec2:StartInstances and ec2:StopInstances on an untagged host"
        in role["text"]
    )


def test_a_caller_iam_refuses_the_simulator_is_told_what_to_allow(world: World, simulator: Simulator) -> None:
    simulator.stubber.add_client_error("simulate_principal_policy", "AccessDenied", "not authorized", 403)
    simulator.stubber.activate()

    role = line(world.document(), "action-role")

    assert role["status"] == "fix" and role["text"].startswith("could not check: access denied to")
    assert role["fix"].startswith("allow whoever runs doctor iam:SimulatePrincipalPolicy")


# ---------------------------------------------------------------------------------------------
# credentials, regions, member roles


def test_without_credentials_every_other_line_waits_for_them(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))

    result = run("doctor", "--region", REGION)
    document = json.loads(run("doctor", "--region", REGION, "--output", "json").out)

    assert result.code == 1
    statuses = [item["status"] for item in document["checks"]]
    assert statuses == ["fix"] + ["skipped"] * (len(statuses) - 1)
    assert document["checks"][0]["text"].startswith("could not check: no AWS credentials found")
    assert document["checks"][1]["text"] == "not checked: Credentials must pass first"


def test_account_mode_checks_no_stack(stack: Stack) -> None:
    seeded()

    document = json.loads(run("doctor", "--region", REGION, "--output", "json").out)

    assert [item["check"] for item in document["checks"]] == [c.key for c in CHECKS if not c.stack_only]
    assert document["stack"] is None and document["ok"] is True


def test_a_member_role_is_assumed_as_analyze_would(stack: Stack) -> None:
    seeded()
    arn = "arn:aws:iam::111122223333:role/GpuRightsizerCollector"

    document = json.loads(run("doctor", "--region", REGION, "--account-role-arn", arn, "--output", "json").out)

    assert line(document, "member-roles")["text"] == f"1 role assumed: {arn}"


def test_an_unknown_region_is_a_usage_error_as_for_every_verb(moto_aws: None) -> None:
    result = run("doctor", "--region", "us-east-1", "--region", "xx-nowhere-9")

    assert result.code == 2 and result.out == ""
    assert "unknown region xx-nowhere-9" in result.err


def test_a_malformed_role_arn_is_a_usage_error() -> None:
    result = run("doctor", "--account-role-arn", "arn:aws:iam::12:role/x")

    assert result.code == 2 and "not an IAM role ARN" in result.err


def expect_simulation_without_hosts(simulator: Simulator) -> None:
    """No tagged host to simulate on: doctor asks about a placeholder instance."""
    out = outputs()
    simulator.expect(out["ActionRoleArn"], "i-00000000000000000", out["SchedulerRoleArn"])


def test_an_unknown_region_in_the_stack_is_a_fix(
    moto_aws: None, monkeypatch: pytest.MonkeyPatch, simulator: Simulator
) -> None:
    from demo import serverless

    monkeypatch.setitem(serverless.PARAMETERS, "Regions", "us-east-1,xx-nowhere-9")
    with deployed_stack():
        expect_simulation_without_hosts(simulator)
        document = json.loads(
            run("doctor", "--stack", STACK_NAME, "--region", REGION, "--output", "json", "--query", "checks[1]").out
        )

    assert document["status"] == "fix" and document["text"] == "xx-nowhere-9 unknown for account 123456789012"
    assert "correct xx-nowhere-9 in the stack's Regions parameter" in document["fix"]


def test_the_stacks_member_roles_are_judged_by_what_the_collector_met(
    moto_aws: None, monkeypatch: pytest.MonkeyPatch, simulator: Simulator
) -> None:
    from demo import serverless

    from rightsizer.adapters.aws.dynamo import keys
    from rightsizer.adapters.aws.store import DynamoStore

    member = "arn:aws:iam::111122223333:role/GpuRightsizerCollector"
    monkeypatch.setitem(serverless.PARAMETERS, "AccountRoleArns", member)
    with deployed_stack() as deployed:
        expect_simulation_without_hosts(simulator)
        expect_simulation_without_hosts(simulator)  # doctor runs twice
        before = json.loads(run("doctor", "--stack", STACK_NAME, "--output", "json").out)
        table = boto3.resource("dynamodb", region_name=REGION).Table(deployed.table)
        run_pk = keys.run_pk("2026-12-05")
        DynamoStore(table).put_run("2026-12-05", datetime.now(UTC))
        table.put_item(Item={**keys.key(run_pk, keys.region_sk("123456789012", REGION)), "shards": 1})  # home: planned
        table.put_item(  # the member's plan failed, as statemachine/pipeline.asl.json records it
            Item={
                **keys.key(run_pk, keys.FAILED_SK.format("111122223333", REGION, "plan")),
                "account_id": "111122223333",
                "region": REGION,
                "shard": "plan",
                "error": "AccessDenied",
                "cause": json.dumps({"errorMessage": "not authorized to perform sts:AssumeRole"}),
            }
        )
        after = json.loads(run("doctor", "--stack", STACK_NAME, "--output", "json").out)

    first, second = line(before, "member-roles"), line(after, "member-roles")
    assert first["status"] == "fix" and "not tried yet" in first["text"]
    assert "aws stepfunctions start-execution --state-machine-arn" in first["fix"]
    assert second["status"] == "fix" and second["text"] == (
        f"1 of 1 member role not read in run 2026-12-05: {member}: AccessDenied: not authorized to perform "
        "sts:AssumeRole"
    )
    assert "CollectorRoleArn=arn:aws:iam::123456789012:role/gpu-rightsizer-CollectFunctionRole" in second["fix"]


# ---------------------------------------------------------------------------------------------
# the registry against the sources of truth


def test_the_parts_doctor_looks_for_are_the_templates() -> None:
    from tests.unit.test_template import expanded

    kinds = {part.value for part in Part}
    declared = {name: r["Type"] for name, r in expanded()["Resources"].items() if r["Type"] in kinds}

    assert {name: part.value for name, part in STACK_PARTS.items()} == declared


def test_the_agent_commands_are_the_rollouts_associations() -> None:
    from demo.aws_table import cloudformation_yaml

    from tests.unit.test_template import ROOT

    rollout = cloudformation_yaml((ROOT / "agent" / "ssm-rollout.yaml").read_text())
    resources, parameters = rollout["Resources"], rollout["Parameters"]
    associations = [resources["InstallAgent"]["Properties"], resources["ConfigureAgent"]["Properties"]]
    refs = {"AgentConfig": parameters["ConfigParameterName"]["Default"]}

    def value(item: Any) -> str:
        return refs[item["Ref"]] if isinstance(item, dict) else str(item)

    assert [(a["Name"], {key: value(values[0]) for key, values in a["Parameters"].items()}) for a in associations] == [
        (document, dict(params)) for document, params in AGENT_INSTALL
    ]
    assert parameters["ConfigParameterName"]["Default"] == AGENT_CONFIG_PARAMETER
    assert (parameters["TargetTagKey"]["Default"], parameters["TargetTagValue"]["Default"]) == AGENT_TAG


# ---------------------------------------------------------------------------------------------
# the runner


def test_a_bug_in_a_check_is_raised_not_made_a_line() -> None:
    from rightsizer.services.doctor import Check, Found, run_checks

    def broken(context: None) -> Found:
        raise KeyError("a bug")

    checks = [Check("ok", "Fine", lambda context: Found("fine")), Check("broken", "Broken", broken)]

    with pytest.raises(KeyError):
        run_checks(checks, None, lambda error: None)
    lines = run_checks(checks, None, lambda error: f"described {error}")
    assert [(line.status.value, line.text) for line in lines] == [
        ("ok", "fine"),
        ("fix", "could not check: described 'a bug'"),
    ]


def test_hosts_are_named_whole_up_to_ten() -> None:
    from rightsizer.services.doctor import named

    assert named(["a"]) == "a" and named(["a", "b", "c"]) == "a, b and c"
    assert named([str(n) for n in range(12)]) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more"
