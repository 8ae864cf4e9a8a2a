"""The demo's clicks: one signed Slack approval for each kind of saving (a resize, an idle host's stop, an office-hours
host's stop/start schedule, an oversized SageMaker endpoint variant's update, an idle notebook's stop), each followed
through its instance workflow execution, its progress in the Slack thread and its audit log. `make demo` prints them;
`make serve` makes the same clicks, so the world it keeps is the one the demo ends in.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from demo.world import World


def saves(rec: dict[str, Any]) -> str:
    saved = rec["monthly_savings_usd"]
    return f"${saved:,.2f}/month" if saved is not None else "an amount not known (no price for its type here)"


def approve(stack: Any, rec: dict[str, Any], action_id: str) -> dict[str, Any] | None:
    """A signed Slack click on the recommendation's Approve button in the daily report; the approval's execution
    followed to its end and its progress delivered to the thread. Returns the finished approval's execution."""
    import boto3

    from demo.serverless import APPROVER, CHANNEL, deliver_progress_events, send_to_slack_function, wait_for_execution
    from demo.slack_double import click_body, function_url_event
    from rightsizer.adapters.aws.store import DynamoStore

    rec_id = rec["recommendation_id"]
    posted_call = next(  # the latest report's message with its buttons (advice keeps its id from day to day)
        call
        for call in reversed(stack.slack.of("chat.postMessage"))
        if f"act:{rec_id}" in json.dumps(call.params.get("blocks"))
    )
    posted, ts = posted_call.params, posted_call.answer["ts"]
    blocks = posted["blocks"] if isinstance(posted["blocks"], list) else json.loads(posted["blocks"])
    label = next(
        element["text"]["text"]
        for block in blocks
        if block.get("block_id") == f"act:{rec_id}"
        for element in block["elements"]
        if element["action_id"] == action_id
    )
    change = rec["target_type"] or {"schedule": "stop/start schedule"}.get(rec["action"], "stopped")
    print(
        f"{rec['name']} ({rec['instance_id']}, {rec['finding']}): {rec['instance_type']} -> {change}, "
        f"saves {saves(rec)}. <@{APPROVER}> clicks '{label}'..."
    )
    body = click_body(action_id, rec_id, user=APPROVER, channel=CHANNEL, message={"ts": ts, "blocks": blocks})
    template = json.loads(Path("events/slack_interaction.json").read_text())
    response = send_to_slack_function(stack, function_url_event(template, body))
    print(f"  Slack function answered {response['statusCode']} within the ack; the approval ran as lazy work.")
    store = DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(stack.table))
    approval = store.approval(rec_id)
    if approval is None or not approval.execution_arn:
        print("  The approval did not start the workflow.")
        return None
    outcome = wait_for_execution(approval.execution_arn)
    history = boto3.client("stepfunctions", region_name="us-east-1").get_execution_history(
        executionArn=approval.execution_arn, maxResults=1000
    )["events"]
    steps = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    print(f"  Execution {approval.execution_arn.rsplit(':', 1)[-1]}: {outcome['status']}")
    print("  Steps: " + " -> ".join(steps))
    delivered = deliver_progress_events(stack)
    print(f"  Progress in the Slack thread ({delivered} events through EventBridge to the notifier):")
    for call in stack.slack.of("chat.postMessage"):
        if call.params.get("thread_ts") == ts and rec["instance_id"] in str(call.params.get("text")):
            print(f"    > {call.params.get('text')}")
    audit = store.audit_log(rec_id)
    print(f"  Audit log: {len(audit)} entries, from '{audit[0].event}' by {audit[0].actor} to '{audit[-1].event}'.")
    return dict(outcome)


def describe(instance_id: str) -> tuple[str, str]:
    import boto3

    found = boto3.client("ec2", region_name="us-east-1").describe_instances(InstanceIds=[instance_id])
    instance = found["Reservations"][0]["Instances"][0]
    return str(instance["InstanceType"]), str(instance["State"]["Name"])


def one_click_each(stack: Any, report: dict[str, Any], world: World) -> int:
    """The top resize, the idle p3.8xlarge's stop, the office-hours host's schedule: one approval each. The resized
    host's agent then publishes under its new type, as on AWS once the host runs again."""
    import boto3

    from demo.seed import after_resize
    from demo.serverless import APPROVER, send_to_slack_function
    from demo.slack_double import command_body, function_url_event
    from demo.slack_render import render_blocks
    from rightsizer.adapters.slack.blocks import ACTION_APPROVE

    def first(action: str, **where: str) -> dict[str, Any] | None:
        return next(
            (
                rec
                for rec in report["recommendations"]
                if rec["action"] == action and all(rec[key] == value for key, value in where.items())
            ),
            None,
        )

    resize, stop, schedule = first("resize"), first("stop", instance_type="p3.8xlarge"), first("schedule")
    if resize is None or stop is None or schedule is None:
        missing = [name for name, rec in (("resize", resize), ("stop", stop), ("schedule", schedule)) if rec is None]
        print(f"The demo fleet lacks a one-click {' and '.join(missing)}. What the advice said:")
        for rec in report["recommendations"]:
            if rec["finding"] in ("idle", "schedulable", "overprovisioned") and rec["action"] is None:
                print(f"  {rec['name']} ({rec['finding']}, {rec['confidence']}): {'; '.join(rec['reasons'])}")
        return 1
    failures = 0

    print("\n-- a resize --")
    done = approve(stack, resize, ACTION_APPROVE)
    now_is = describe(resize["instance_id"])
    print(f"  {resize['instance_id']} is now {now_is[0]} and {now_is[1]} (was {resize['instance_type']}).")
    failures += done is None or done["status"] != "SUCCEEDED" or now_is[0] != resize["target_type"]
    if now_is[0] == resize["target_type"]:
        after_resize(world.host(resize["instance_id"]), datetime.now(UTC), world.end)

    print("\n-- an idle host stopped --")
    done = approve(stack, stop, ACTION_APPROVE)
    now_is = describe(stop["instance_id"])
    print(f"  {stop['instance_id']} is now {now_is[1]}, still a {now_is[0]}: stopped, never terminated.")
    failures += done is None or done["status"] != "SUCCEEDED" or now_is[1] != "stopped"

    print("\n-- an office-hours host put on a schedule --")
    done = approve(stack, schedule, ACTION_APPROVE)
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    pair = scheduler.list_schedules(NamePrefix=f"rightsizer-{schedule['instance_id']}-")["Schedules"]
    for item in sorted(pair, key=lambda s: str(s["Name"])):
        detail = scheduler.get_schedule(Name=item["Name"])
        print(
            f"  EventBridge Scheduler {detail['Name']}: {detail['ScheduleExpression']} "
            f"({detail['ScheduleExpressionTimezone']}) -> {detail['Target']['Arn'].rsplit(':', 1)[-1]}"
        )
    failures += done is None or done["status"] != "SUCCEEDED" or len(pair) != 2

    failures += sagemaker_clicks(stack, first("update_endpoint"), first("stop_notebook"))

    print(f"\n<@{APPROVER}> types /gpu schedules:")
    template = json.loads(Path("events/slack_command.json").read_text())
    url = stack.slack.response_url("schedules")
    send_to_slack_function(
        stack, function_url_event(template, command_body("schedules", user=APPROVER, response_url=url))
    )
    (listing,) = [call.params for call in stack.slack.of("response_url") if call.path.endswith("schedules")]

    print("\n".join(f"  {line}" for line in render_blocks(listing["blocks"])))
    return 1 if failures else 0


def sagemaker_clicks(stack: Any, endpoint: dict[str, Any] | None, notebook: dict[str, Any] | None) -> int:
    """The oversized endpoint's blue/green update and the idle notebook's stop, one approval each."""
    import boto3

    from demo import moto_sagemaker
    from rightsizer.adapters.slack.blocks import ACTION_APPROVE

    if endpoint is None or notebook is None:
        print("The demo's SageMaker resources lack a one-click endpoint update or notebook stop.")
        return 1
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    print("\n-- an oversized SageMaker endpoint variant updated, blue/green --")
    done = approve(stack, endpoint, ACTION_APPROVE)
    now_is = sagemaker.describe_endpoint(EndpointName=endpoint["name"])
    config = sagemaker.describe_endpoint_config(EndpointConfigName=now_is["EndpointConfigName"])
    variant = config["ProductionVariants"][0]
    (update,) = [u for u in moto_sagemaker.updates() if u["EndpointName"] == endpoint["name"]]
    routing = update["DeploymentConfig"]["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]
    print(
        f"  {endpoint['name']} is {now_is['EndpointStatus']} on {now_is['EndpointConfigName']}: "
        f"{variant['InitialInstanceCount']} x {variant['InstanceType']} (was {endpoint['instance_type']}); "
        f"deployed {routing['Type'].lower()} ({routing['CanarySize']['Value']} % first), auto-rollback on "
        f"{update['DeploymentConfig']['AutoRollbackConfiguration']['Alarms'][0]['AlarmName']}."
    )
    failures = done is None or done["status"] != "SUCCEEDED" or variant["InstanceType"] != endpoint["target_type"]

    print("\n-- a notebook instance left running, stopped --")
    done = approve(stack, notebook, ACTION_APPROVE)
    status = sagemaker.describe_notebook_instance(NotebookInstanceName=notebook["name"])["NotebookInstanceStatus"]
    print(f"  {notebook['name']} is now {status}; its ML storage volume is kept.")
    failures += done is None or done["status"] != "SUCCEEDED" or status != "Stopped"
    return int(failures)
