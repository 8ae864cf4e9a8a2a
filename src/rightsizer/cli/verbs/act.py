"""`rightsizer act HOST --dry-run`: the AWS calls an approval of the host's advice would make (act_dryrun.py walks the
instance workflow's definition), from a live analysis or a deployment. The CLI itself never acts.
"""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rightsizer.cli import analysis
from rightsizer.cli.deployment import Deployment, aws_errors, open_deployment
from rightsizer.cli.errors import EXIT_OK, CommandFailed, UsageError
from rightsizer.cli.hosts import analysed, find_host, stored_host
from rightsizer.cli.options import Verb, add_connection_options, add_where_options
from rightsizer.cli.output.document import Output, add_output_options, write_document
from rightsizer.services.approvals import action_risks
from rightsizer.services.formatting import printable
from rightsizer.settings import Settings

if TYPE_CHECKING:
    from rightsizer.adapters.aws.session import AwsSession
    from rightsizer.cli.verbs.act_dryrun import DryRun, InputOf, Started
    from rightsizer.services.ports import Approval, ScheduleRecord


# The instance workflow's definition in a checkout (statemachine/ beside src/): a dry run without --stack reads it.
CHECKOUT_DEFINITION = Path(__file__).resolve().parents[4] / "statemachine" / "resize.asl.json"
NOT_DEPLOYED_TABLE = "<the stack's table>"


REFUSE_TO_ACT = (
    "the CLI does not act: actions run from Slack, when an approver clicks Approve under the advice (the stack's "
    "instance workflow then acts, audited). `rightsizer act HOST --dry-run` prints the AWS calls that approval "
    "would make"
)


def _act_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", metavar="INSTANCE_OR_RESOURCE", help="an instance id, a resource id or a Name tag")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the AWS calls the approved action would make, in order, with their parameters, and make none "
        "(required: the CLI never acts)",
    )
    parser.add_argument(
        "--remove-schedule",
        action="store_true",
        help="dry-run the removal of the host's stop/start schedule (Slack's `/gpu schedules` Remove; needs --stack)",
    )
    parser.add_argument(
        "--definition",
        metavar="FILE",
        help="the instance workflow's definition (default: the deployed one with --stack, else this checkout's "
        "statemachine/resize.asl.json)",
    )
    add_where_options(parser, stack=True)
    add_output_options(parser, table="the calls, numbered, with their parameters")
    add_connection_options(parser)


def _act(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not args.dry_run:
        raise UsageError(REFUSE_TO_ACT)
    if args.remove_schedule and not args.stack:
        raise UsageError("--remove-schedule reads the schedule the bot recorded: pass --stack NAME")
    output = Output.of(args, out)
    run = _stack_dry_run(args) if args.stack else _live_dry_run(args, err, output)
    write_document(_dry_run_json(run), output, out, table=lambda: dry_run_text(run))
    return EXIT_OK


def _dry_run_json(run: DryRun) -> dict[str, Any]:
    from rightsizer.cli.verbs.act_dryrun import dry_run_json

    return dry_run_json(run)


def _stack_dry_run(args: argparse.Namespace) -> DryRun:
    from rightsizer.cli.verbs.act_dryrun import approve_dry, remove_dry

    deployment = open_deployment(args)
    now = datetime.now(UTC)
    input_of = _input_builder(deployment.settings, deployment.session, deployment.stack.region)
    with aws_errors(deployment.stack.region):
        if args.remove_schedule:
            record = _schedule_of(deployment, args.host)
            started = remove_dry(record, input_of, now, deployment.store)
            host, risks = record.instance_id, tuple[str, ...]()
        else:
            rec = stored_host(deployment, args.host)
            started = approve_dry(rec, deployment.settings, input_of, now, deployment.store)
            host, risks = rec.instance_id, action_risks(rec)
    return _walked(started, host, lambda region: _deployed_definition(args, deployment, region), risks)


def _live_dry_run(args: argparse.Namespace, err: TextIO, output: Output) -> DryRun:
    from rightsizer.cli.verbs.act_dryrun import approve_dry

    definition_file = _definition_file(args)  # checked before any AWS call
    live = analysis.live_report(args, err, color=output.color)
    rec = find_host(live.report.recommendations, args.host, analysed(args))
    settings = Settings(
        regions=(rec.region,),
        home_region=rec.region,
        home_account_id=rec.account_id,
        resize_state_machine_arn=f"arn:aws:states:{rec.region}:{rec.account_id}:stateMachine:gpu-rightsizer-resize",
    )
    started = approve_dry(rec, settings, _input_builder(settings, None, rec.region), datetime.now(UTC))
    return _walked(started, rec.instance_id, lambda region: _file_definition(definition_file), action_risks(rec))


Definition = tuple[Any, str]  # the state machine's definition (JSON) and where it came from


def _walked(
    started: Started, host: str, definition_of: Callable[[str], Definition], risks: Sequence[str] = ()
) -> DryRun:
    from rightsizer.cli.verbs.act_dryrun import DryRunError, Refused, dry_run

    if isinstance(started, Refused):
        raise CommandFailed(f"an approval for {host} would be refused ({started.outcome.value}): {started.detail}")
    approval, execution_input = started
    definition, source = definition_of(approval.region)
    try:
        return dry_run(approval, execution_input, definition, source, risks)
    except DryRunError as error:
        raise CommandFailed(f"cannot dry-run {source}: {error}") from None


def _input_builder(settings: Settings, session: AwsSession | None, region: str) -> InputOf:
    """The execution input `adapters.aws.workflow` builds for an approval, wired as the deployed Slack function."""
    from rightsizer.adapters.aws.workflow import StepFunctionsResizeWorkflow

    # The idempotency store it wires is never used here: its client is built, not called.
    dynamodb = session.client("dynamodb", region) if session is not None and settings.table_name else None
    workflow = StepFunctionsResizeWorkflow.from_settings(settings, None, dynamodb_client=dynamodb)

    def input_of(approval: Approval, expected_state: str) -> dict[str, Any]:
        return workflow.execution_input(approval, expected_state)

    return input_of


def _schedule_of(deployment: Deployment, query: str) -> ScheduleRecord:
    records = deployment.store.schedules()
    found = [r for r in records if query.lower() in (r.instance_id.lower(), r.instance_name.lower())]
    if len(found) == 1:
        return found[0]
    if found:
        raise CommandFailed(f"{len(found)} scheduled hosts are named {query!r}: give an instance id")
    names = sorted({name for r in records for name in (r.instance_id, r.instance_name) if name})
    close = difflib.get_close_matches(query, names, n=5, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else f" ({len(records)} host(s) have one)"
    raise CommandFailed(f"no stop/start schedule for {query!r} in {deployment.where}{hint}")


def _deployed_definition(args: argparse.Namespace, deployment: Deployment, region: str) -> Definition:
    """The definition the approval would run: --definition, else the stack's state machine in the host's region
    (each action region runs a copy of the home one)."""
    from rightsizer.adapters.aws.workflow import in_region

    if args.definition:
        return _file_definition(_definition_file(args), deployment.settings.table_name)
    arn = deployment.settings.resize_state_machine_arn
    if not arn:
        raise UsageError(f"{deployment.where} has no ResizeStateMachineArn output: pass --definition FILE")
    machine = in_region(arn, region)
    with aws_errors(region):
        described = deployment.session.client("stepfunctions", region).describe_state_machine(stateMachineArn=machine)
    return json.loads(described["definition"]), machine


def _definition_file(args: argparse.Namespace) -> Path:
    path = Path(args.definition) if args.definition else CHECKOUT_DEFINITION
    if not path.is_file():
        raise UsageError(
            f"no state machine definition at {path}: pass --stack NAME (the deployed one) or --definition "
            "FILE (statemachine/resize.asl.json of a checkout)"
        )
    return path


def _file_definition(path: Path, table_name: str = "") -> Definition:
    from rightsizer.cli.verbs.act_dryrun import substituted

    text = substituted(path.read_text(encoding="utf-8"), {"TableName": table_name or NOT_DEPLOYED_TABLE})
    try:
        return json.loads(text), str(path)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path} is not JSON: {error}") from None


def dry_run_text(run: DryRun) -> str:
    from rightsizer.cli.verbs.act_dryrun import call_lines

    approval = run.approval
    changes = sum(1 for call in run.calls if call.effect == "changes")
    lines = [
        "Dry run: nothing was called and nothing changed.",
        f"{approval.action.value} of {approval.instance_id} in account {approval.account_id}, {approval.region}: "
        f"{approval.from_type} → {approval.to_type}",
        f"An approval in Slack would start the instance workflow ({run.definition}); when every check passes it makes "
        f"these {len(run.calls)} AWS calls in order, {changes} of them changing the resource:",
        "",
        *call_lines(run.calls),
    ]
    if run.risks:
        lines += ["", "Slack's confirmation first asks the approver to accept these risks:"]
        lines += [f"  ! {printable(risk)}" for risk in run.risks]
    return "\n".join(lines) + "\n"


VERB = Verb(
    "act",
    "--dry-run: the AWS calls an approval would make",
    "The AWS calls the instance workflow would make if the host's advice (resize, stop, schedule, endpoint "
    "update, notebook stop; or --remove-schedule) were approved, in order, with their parameters, read from "
    "the workflow's definition. Nothing is called: the CLI never acts, actions run from Slack approvals.",
    _act_options,
    _act,
)
