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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from demo.server import local_aws
from demo.world import REGIONS

OUTPUT = Path("demo-output")


def banner(title: str) -> None:
    print(f"\n{'=' * 100}\n{title}\n{'=' * 100}", flush=True)


def analyze_with_cli(seeded: list[Any], sagemaker: list[Any]) -> tuple[int, dict[str, Any]]:
    """The CLI's table, then its JSON checked host by host: (exit status, the JSON document)."""
    from demo.serverless import TEAM_ZONE
    from rightsizer.cli import main as cli_main

    # The deployment's team zone (demo/serverless.py): the CLI prices the notebooks' schedule as Slack does.
    command = ["analyze", *[arg for region in REGIONS for arg in ("--region", region)], "--time-zone", TEAM_ZONE]
    print("$ rightsizer " + " ".join(command), flush=True)
    status = cli_main.main(command)
    if status != 0:
        return status, {}
    buffer = io.StringIO()
    cli_main.main([*command, "--format", "json", "--no-progress"], stdout=buffer, stderr=io.StringIO())
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
    print("\nWhat a smaller host has less of, and what no GPU metric shows (one host each):")
    for key, says in LIMIT_HOSTS.items():
        item = next(item for item in seeded if item.host.key == key)
        rec = by_id[item.instance_id]
        target = f" -> {rec['target_type']}" if rec["target_type"] else ""
        reason = next((reason for reason in rec["reasons"] if says in reason), rec["reasons"][0])
        print(f"  {item.host.name} ({item.host.instance_type}): {rec['finding']}{target}: {reason}")
    return (1 if failures else 0), document


# The demo's hosts of issue 28, each with the words of the reason that shows its limit.
LIMIT_HOSTS = {
    "ebs-bound": "EBS throughput (",
    "network-bound": "cheaper types fall short of",
    "gpu-lost": "stopped reporting",
    "held-unused": "idle in all but memory",
    "graphics-workstation": "a graphics host",
}


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
            f"  {surface:<5} {totals['monthly_savings_usd']:>10,.2f} USD/month can be saved at list price "
            f"({totals['actionable_savings_usd']:,.2f} with one click), {totals['other_owner_savings_usd']:,.2f} "
            f"needs another owner; {document['scope']['description']}"
        )
    both = [d["totals"]["monthly_savings_usd"] + d["totals"]["other_owner_savings_usd"] for d in (cli_document, posted)]
    same = "the same" if abs(both[0] - both[1]) < 0.01 else "NOT the same"
    print(
        f"  Saved plus another owner's: {both[0]:,.2f} and {both[1]:,.2f} USD/month, {same} fleet; what a deployment "
        "does not reach (a region without its workflow) moves from one to the other."
    )


def post_daily_report(stack: Any, now: datetime, cli_document: dict[str, Any], before: int = 0) -> dict[str, Any]:
    """Today's run and its report (the Slack messages posted after the first `before`: yesterday's came first)."""
    from demo.slack_render import render_blocks
    from demo.world import daily_run

    result = daily_run(now)
    messages = slack_messages(stack)[before:]
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
    parts = {
        "slack-report.png": ('<section id="slack"', OUTPUT / "slack-report.html"),
        "since-last-time.png": ('<section id="since"', OUTPUT / "since-last-time.html"),
        "by-team.png": ('<section id="showback"', OUTPUT / "by-team.html"),
    }
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


def main() -> int:
    with local_aws() as endpoint:
        from moto.core.models import DEFAULT_ACCOUNT_ID

        from demo import history
        from demo.clicks import approve, one_click_each
        from demo.serverless import deployed_stack
        from demo.world import seed_world

        now = datetime.now(UTC)
        banner("1. A GPU fleet in a local AWS")
        print(f"Local AWS (moto) at {endpoint}; seeding the demo fleet with 14 days of metrics...", flush=True)
        world = seed_world(now, days=14)
        yesterdays = history.seed_yesterdays_fleet(world.end, days=15)
        print(f"Seeded {world.summary}, and {len(yesterdays)} hosts only yesterday's fleet had.", flush=True)

        with deployed_stack() as stack:
            banner("1b. Yesterday: the daily pipeline's previous run, and what changed since")
            history.yesterday(stack, DEFAULT_ACCOUNT_ID, REGIONS, now, yesterdays, approve)

            banner("2. The CLI: rightsizer analyze")
            status, cli_document = analyze_with_cli(world.hosts, world.sagemaker)
            if status:
                return status

            banner("3. The daily pipeline (Collect per region -> Analyze -> Report), posted to Slack")
            before = len(slack_messages(stack))
            report = post_daily_report(stack, now, cli_document, before)
            daily_report = slack_messages(stack)[before:]
            print("\nSavings that match the bill:")
            reservation_example(report)
            banner("4. One click for every kind of saving, through signed Slack interactions")
            status = one_click_each(stack, report, world)
        banner("5. The report as a page: demo-output/report.html")
        write_html_report(report, daily_report, now, days=14)
        return status


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    if sys.argv[1:2] == ["serve"]:
        from demo.serve import main as serve

        code = serve(sys.argv[2:])
        # The server is closed and "Stopped." printed: end now. A normal exit would first free moto's state (millions
        # of seeded datapoints) object by object, for seconds, while the terminal waits on a process that said it
        # stopped.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(main())
