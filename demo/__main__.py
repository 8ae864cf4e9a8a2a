"""`make demo`: the whole job end to end on an embedded local AWS (moto server), no account needed.

1. start moto's server on 127.0.0.1 and point boto3 at it (AWS_ENDPOINT_URL);
2. seed a GPU fleet in two regions with 14 days of 5-minute metrics;
3. run `rightsizer analyze` against it and check every host got the finding its workload deserves;
4. run the daily pipeline as the Lambdas do, posting the report to a local Slack API double (printed
   here, Block Kit JSON in demo-output/), and point at a host whose savings are zero because of a reservation;
5. one click each, with signed Slack interactions: the top resize, a stop of the idle p3.8xlarge and a stop/start
   schedule for the office-hours host, following each instance workflow execution; then `/gpu schedules`;
6. write demo-output/report.html (the Slack report rendered, savings and per-GPU utilisation charts) and,
   where the OS package `chromium` is installed, PNG screenshots of it.
"""

from __future__ import annotations

import io
import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from demo.server import local_aws

OUTPUT = Path("demo-output")
REGIONS = ("us-east-1", "eu-west-1")


def banner(title: str) -> None:
    print(f"\n{'=' * 100}\n{title}\n{'=' * 100}", flush=True)


def analyze_with_cli(seeded: list[Any], sagemaker: list[Any]) -> tuple[int, dict[str, Any]]:
    """The CLI's table, then its JSON checked host by host: (exit status, the JSON document)."""
    from rightsizer import cli

    command = ["analyze", *[arg for region in REGIONS for arg in ("--region", region)]]
    print("$ rightsizer " + " ".join(command), flush=True)
    status = cli.main(command)
    if status != 0:
        return status, {}
    buffer = io.StringIO()
    cli.main([*command, "--format", "json", "--no-progress"], stdout=buffer, stderr=io.StringIO())
    document = json.loads(buffer.getvalue())
    by_id = {rec["instance_id"]: rec for rec in document["recommendations"]}
    print("\nDoes every seeded host get the finding its workload deserves?")
    failures = 0
    for item in seeded:
        got = by_id.get(item.instance_id, {}).get("finding", "missing")
        ok = got == item.host.expected
        failures += not ok
        mark = "ok  " if ok else "FAIL"
        print(
            f"  {mark} {item.host.name:<20} {item.host.instance_type:<14} expected {item.host.expected:<18} got {got}"
        )
    from demo.fleet import GROUPS

    for group, expected in {**GROUPS, **{item.resource_id: item.expected for item in sagemaker}}.items():
        got = by_id.get(group, {}).get("finding", "missing")
        failures += got != expected
        mark = "ok  " if got == expected else "FAIL"
        print(f"  {mark} {group:<35} expected {expected:<18} got {got}")
    print("All findings as expected." if not failures else f"{failures} finding(s) differ.")
    print("\nTwo workloads no single-metric rule gets right:")
    for key in ("video-transcoder", "finetune-ended"):
        item = next(item for item in seeded if item.host.key == key)
        rec = by_id[item.instance_id]
        target = f" -> {rec['target_type']}" if rec["target_type"] else ""
        print(f"  {item.host.name} ({item.host.instance_type}): {rec['finding']}{target}: {rec['reasons'][0]}")
    return (1 if failures else 0), document


def slack_messages(stack: Any) -> list[dict[str, Any]]:
    """What the Slack API double received through chat.postMessage, blocks decoded."""
    messages = []
    for call in stack.slack.of("chat.postMessage"):
        message = dict(call.params)
        if isinstance(message.get("blocks"), str):
            message["blocks"] = json.loads(message["blocks"])
        messages.append(message)
    return messages


def compare_totals(cli_document: dict[str, Any], posted: dict[str, Any]) -> None:
    """The CLI's totals and the Slack report's, side by side with their scopes: one function computes both, and
    they differ exactly where the scopes do (a host one surface reaches is another owner's for the other)."""
    print("\nThe totals of both surfaces, each with its scope:")
    for surface, document in (("CLI", cli_document), ("Slack", posted)):
        totals = document["totals"]
        print(
            f"  {surface:<5} {totals['monthly_savings_usd']:>10,.2f} USD/month can be saved "
            f"({totals['actionable_savings_usd']:,.2f} with one click), {totals['other_owner_savings_usd']:,.2f} "
            f"needs another owner; {document['scope']['description']}"
        )
    both = [d["totals"]["monthly_savings_usd"] + d["totals"]["other_owner_savings_usd"] for d in (cli_document, posted)]
    same = "the same" if abs(both[0] - both[1]) < 0.01 else "NOT the same"
    print(
        f"  Saved plus another owner's: {both[0]:,.2f} and {both[1]:,.2f} USD/month, {same} fleet; what a deployment "
        "does not reach (a region without its workflow) moves from one to the other."
    )


def post_daily_report(stack: Any, run: str, account_id: str, cli_document: dict[str, Any]) -> dict[str, Any]:
    from demo.serverless import run_pipeline
    from demo.slack_render import render_blocks

    result = run_pipeline(run, account_id, REGIONS)
    messages = slack_messages(stack)
    OUTPUT.mkdir(exist_ok=True)
    report_file = OUTPUT / "daily-report.json"
    report_file.write_text(json.dumps(messages, indent=2) + "\n")
    for number, message in enumerate(messages, start=1):
        where = "in the thread" if message.get("thread_ts") else f"to {message['channel']}"
        print(f"\n--- Slack message {number} of {len(messages)}, posted {where} ---")
        print("\n".join(render_blocks(message["blocks"])))
    print(f"\nBlock Kit JSON of the {len(messages)} message(s): {report_file}")
    compare_totals(cli_document, result)
    return result


PICTURED_HOST = "embeddings-api"  # docs/images/utilisation.png: GPU 0 follows its users, GPUs 1-3 stay idle


def write_html_report(report: dict[str, Any], messages: list[dict[str, Any]], now: datetime, days: int) -> None:
    """demo-output/report.html: the product's report page (rightsizer.adapters.html) of the analysis the daily
    report posted, with its Slack messages and each host's per-GPU series; screenshots where Chromium is."""
    from demo import browser, html_report
    from rightsizer.adapters.aws.session import AwsSession
    from rightsizer.adapters.html import page

    series = html_report.unit_series(AwsSession(), report, now, days)
    path = OUTPUT / "report.html"
    source = "generated by GPU Rightsizer's demo on a local AWS"
    html = page.render(report, series=series, slack_messages=messages, now=now, source=source)
    path.write_text(html)
    print(f"The daily report as a page (self-contained: inline SVG and CSS, no script): {path.resolve().as_uri()}")
    parts = {"slack-report.png": ('<section id="slack"', OUTPUT / "slack-report.html")}
    card = next((rec["instance_id"] for rec in report["recommendations"] if rec["name"] == PICTURED_HOST), None)
    if card is not None:
        parts["utilisation.png"] = (f'data-instance="{card}"', OUTPUT / "utilisation.html")
    for marker, part in parts.values():
        part.write_text(browser.section_only(html, marker))
    try:
        shots = browser.screenshots(path, OUTPUT, {name: part for name, (_, part) in parts.items()})
    except RuntimeError as missing:  # no Chromium on this machine
        print(f"Screenshots skipped: {missing}.")
        return
    print("Screenshots: " + ", ".join(str(shot) for shot in shots))


def reservation_example(report: dict[str, Any]) -> None:
    """The host whose list-price savings the bill never sees: a reservation pays for it whatever happens."""
    host = next(
        (rec for rec in report["recommendations"] if rec["monthly_savings_usd"] and not rec["monthly_savings_net_usd"]),
        None,
    )
    if host is None:
        print("No host's savings are held back by a reservation.")
        return
    why = next((reason for reason in host["reasons"] if "net savings" in reason), "")
    print(
        f"{host['name']} ({host['instance_id']}, {host['instance_type']}) is {host['finding']}: "
        f"${host['monthly_savings_usd']:,.2f}/month at list price, ${host['monthly_savings_net_usd']:,.2f} net:\n"
        f"  it {why}."
    )


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
    posted_call = next(
        call for call in stack.slack.of("chat.postMessage") if rec_id in json.dumps(call.params.get("blocks"))
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


def one_click_each(stack: Any, report: dict[str, Any]) -> int:
    """The top resize, the idle p3.8xlarge's stop, the office-hours host's schedule: one approval each."""
    import boto3

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


def main() -> int:
    with local_aws() as endpoint:
        from demo.seed import seed
        from demo.serverless import deployed_stack

        now = datetime.now(UTC)
        banner("1. A GPU fleet in a local AWS")
        print(f"Local AWS (moto) at {endpoint}; seeding the demo fleet with 14 days of metrics...", flush=True)
        # History from a day before the 14-day window to an hour past now: each step reads the window that ends
        # at its own clock's hour, and an hour boundary may pass while the demo runs (a window short of its last
        # or first hour changes advice that depends on whole weeks, such as a schedule's one click).
        hour = now.replace(minute=0, second=0, microsecond=0)
        seeded = seed(hour + timedelta(hours=1), days=15)
        from moto.core.models import DEFAULT_ACCOUNT_ID

        from demo.sagemaker_fleet import seed_sagemaker

        sagemaker = seed_sagemaker(hour + timedelta(hours=1), 15, DEFAULT_ACCOUNT_ID)
        print(
            f"Seeded {len(seeded)} instances in {' and '.join(REGIONS)} and {len(sagemaker)} SageMaker resources "
            "(endpoints and a notebook instance).",
            flush=True,
        )

        banner("2. The CLI: rightsizer analyze")
        status, cli_document = analyze_with_cli(seeded, sagemaker)
        if status:
            return status

        banner("3. The daily pipeline (Collect per region -> Analyze -> Report), posted to Slack")
        with deployed_stack() as stack:
            report = post_daily_report(stack, now.date().isoformat(), "123456789012", cli_document)
            daily_report = slack_messages(stack)
            print("\nSavings that match the bill:")
            reservation_example(report)
            banner("4. One click for every kind of saving, through signed Slack interactions")
            status = one_click_each(stack, report)
        banner("5. The report as a page: demo-output/report.html")
        write_html_report(report, daily_report, now, days=14)
        return status


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    if sys.argv[1:2] == ["serve"]:
        from demo.serve import main as serve

        sys.exit(serve(sys.argv[2:]))
    sys.exit(main())
