"""The verbs beside `analyze`: `show` (one host), `report` (what a deployed stack decided) and `act --dry-run` (the
AWS calls an approval would make). `VERBS` is their registry; cli_main.py builds the parser from it.

A deployment is found as the AWS CLI would: `--stack NAME` in `--region` (or the default region). Its settings are
rebuilt from the stack's parameters and outputs through `settings.SETTINGS` (the table template.yaml's environment is
generated from), so the CLI judges scope, tags and the window as the deployed functions do.
"""

from __future__ import annotations

import argparse
import difflib
import json
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rightsizer import cli, cli_output
from rightsizer.cli import CommandFailed, Verb
from rightsizer.cli_output import Output, UsageError
from rightsizer.domain.findings import FINDINGS
from rightsizer.domain.models import Recommendation
from rightsizer.domain.scope import ActionScope
from rightsizer.services.approvals import action_risks
from rightsizer.services.formatting import printable, spark_label, sparkline, usd
from rightsizer.services.report import FleetReport, build_report, money_phrase, recommendation_json
from rightsizer.settings import SETTINGS, ConfigError, SetBy, Settings

if TYPE_CHECKING:
    from rightsizer.adapters.aws.session import AwsSession
    from rightsizer.adapters.aws.store import DynamoStore
    from rightsizer.cli_dryrun import DryRun, InputOf, Started
    from rightsizer.services.ports import Approval, Decision, ScheduleRecord

# The instance workflow's definition in a checkout (statemachine/ beside src/): a dry run without --stack reads it.
CHECKOUT_DEFINITION = Path(__file__).resolve().parents[2] / "statemachine" / "resize.asl.json"
NOT_DEPLOYED_TABLE = "<the stack's table>"


# ---------------------------------------------------------------------------------------------
# A deployed stack: its settings, its table


@contextmanager
def aws_errors(region: str | None) -> Iterator[None]:
    """AWS failures as one line and exit 1 (credentials, network, throttling, access, an answer that is not AWS's)."""
    from rightsizer.adapters.aws.session import AWS_FAILURES, describe_aws_error

    try:
        yield
    except AWS_FAILURES as error:
        raise CommandFailed(describe_aws_error(error, region)) from None


# The outputs template.yaml names otherwise than the variable they set: the SlackSecret's Ref is its ARN.
_OUTPUT_OF = {"SLACK_SECRET_NAME": "SlackSecretArn"}


def output_key(name: str) -> str:
    """The stack output that gives variable `name` its value: TABLE_NAME -> TableName, as template.yaml names most."""
    return _OUTPUT_OF.get(name) or "".join(part.capitalize() for part in name.split("_"))


@dataclass(frozen=True)
class Stack:
    """A GPU Rightsizer stack as CloudFormation describes it."""

    name: str
    region: str
    account_id: str
    parameters: Mapping[str, str]
    outputs: Mapping[str, str]

    def environment(self) -> dict[str, str]:
        """The functions' environment as template.yaml sets it: each parameter's variable, each STACK variable from
        its output (TABLE_NAME from TableName), the account and region."""
        env = {
            setting.name: self.parameters[setting.parameter]
            for setting in SETTINGS
            if setting.source is SetBy.PARAMETER and setting.parameter in self.parameters
        }
        env.update(
            (setting.name, self.outputs[output_key(setting.name)])
            for setting in SETTINGS
            if setting.source is SetBy.STACK and output_key(setting.name) in self.outputs
        )
        return {**env, "HOME_ACCOUNT_ID": self.account_id, "AWS_REGION": self.region}

    def settings(self) -> Settings:
        try:
            return Settings.from_env(self.environment())
        except ConfigError as error:
            raise UsageError(f"stack {self.name!r}: {error}") from None


def read_stack(session: AwsSession, name: str, region: str) -> Stack:
    """DescribeStacks: a usage error for a stack that does not exist or is no GPU Rightsizer stack."""
    from botocore.exceptions import ClientError

    client = session.client("cloudformation", region)
    try:
        with aws_errors(region):
            try:
                (described,) = client.describe_stacks(StackName=name)["Stacks"]
            except ClientError as error:
                if "does not exist" in str(error.response.get("Error", {}).get("Message", "")):
                    raise UsageError(
                        f"no stack {name!r} in {region}: check --stack and --region "
                        "(`aws cloudformation list-stacks` lists them)"
                    ) from None
                raise
    except ValueError:
        raise CommandFailed(f"DescribeStacks answered no single stack for {name!r} in {region}") from None
    outputs = {item["OutputKey"]: str(item.get("OutputValue", "")) for item in described.get("Outputs", [])}
    if not outputs.get("TableName"):
        raise UsageError(
            f"stack {name!r} in {region} has no TableName output: is it a GPU Rightsizer stack (template.yaml), "
            "and has it finished creating?"
        )
    parameters = {item["ParameterKey"]: str(item.get("ParameterValue", "")) for item in described.get("Parameters", [])}
    account = str(described.get("StackId", "")).split(":")[4:5] or [""]
    return Stack(str(described.get("StackName", name)), region, account[0], parameters, outputs)


@dataclass(frozen=True)
class Deployment:
    """What the stack verbs read: the session, the stack, its settings and its table."""

    session: AwsSession
    stack: Stack
    settings: Settings
    store: DynamoStore

    @property
    def where(self) -> str:
        return f"the {self.stack.name} stack ({self.stack.region})"


def open_deployment(args: argparse.Namespace) -> Deployment:
    from rightsizer.adapters.aws.store import DynamoStore

    regions = list(dict.fromkeys(args.region or []))
    if len(regions) > 1:
        raise UsageError("--stack takes one --region: the stack's")
    if getattr(args, "all_regions", False):
        raise UsageError("--all-regions analyses live; --stack reads a deployment: give one of them")
    session = cli.aws_session(args)
    region = regions[0] if regions else cli.default_region(session)
    if not region:
        raise UsageError(cli.NO_REGION)
    stack = read_stack(session, args.stack, region)
    settings = stack.settings()
    # The table with the CLI's timeouts and attempts (a person is waiting), not the Lambdas' patient ones.
    dynamodb = session.boto3_session.resource(
        "dynamodb", region_name=settings.home_region, config=cli.client_config(args)
    )
    return Deployment(session, stack, settings, DynamoStore(dynamodb.Table(settings.table_name)))


# ---------------------------------------------------------------------------------------------
# Finding one host: by instance or resource id, else by its Name tag; close names when nothing matches


def find_host(
    recommendations: Sequence[Recommendation],
    query: str,
    where: str,
    elsewhere: Callable[[str], list[str]] | None = None,
) -> Recommendation:
    """The one recommendation whose host has this id (any case) or Name tag; CommandFailed naming close names, or the
    regions not analysed where `elsewhere` finds the host."""
    by_id = [rec for rec in recommendations if rec.instance_id.lower() == query.lower()]
    named = [rec for rec in recommendations if rec.instance_name == query] or [
        rec for rec in recommendations if rec.instance_name.lower() == query.lower() and rec.instance_name
    ]
    found = by_id or named
    if len(found) == 1:
        return found[0]
    if found:
        ids = ", ".join(rec.instance_id for rec in found[:10])
        raise CommandFailed(f"{len(found)} hosts are named {query!r} in {where}: {ids}; give an instance id")
    raise CommandFailed(f"no recommendation for {query!r} in {where}{_close(recommendations, query, elsewhere)}")


def _close(
    recommendations: Sequence[Recommendation], query: str, elsewhere: Callable[[str], list[str]] | None = None
) -> str:
    names = {name for rec in recommendations for name in (rec.instance_id, rec.instance_name) if name}
    close = difflib.get_close_matches(query, sorted(names), n=5, cutoff=0.6)
    if close:
        return f"; did you mean {', '.join(printable(name) for name in close)}?"
    regions = elsewhere(query) if elsewhere is not None else []
    if regions:
        return (
            f"; it runs in {', '.join(regions)}, which was not analysed: add --region {regions[0]}, or use "
            "--all-regions"
        )
    return (
        "; it may not be a GPU host, or it runs in an account or region that is not analysed (--all-regions analyses "
        "every region with GPU hosts; --account-role-arn another account)"
    )


def stored_host(deployment: Deployment, query: str) -> Recommendation:
    """The latest advice the bot stored for the host, read by key as `/gpu show` does (instance or resource id);
    a Name tag, or nothing found by key, reads the latest recommendations and matches names."""
    store = deployment.store
    with aws_errors(deployment.stack.region):
        for key in dict.fromkeys((query, query.lower())):
            rec = store.latest_for_instance(key)
            if rec is not None:
                return rec
        latest = store.latest_recommendations()
    if not latest:
        raise CommandFailed(no_report(deployment))
    return find_host(latest, query, deployment.where)


def no_report(deployment: Deployment) -> str:
    pipeline = deployment.stack.outputs.get("PipelineStateMachineArn", "<PipelineStateMachineArn>")
    return (
        f"{deployment.where} has no report yet: its daily pipeline has not ranked a run (it runs on its schedule; "
        f"`aws stepfunctions start-execution --state-machine-arn {pipeline}` starts one now)"
    )


# ---------------------------------------------------------------------------------------------
# show


@dataclass(frozen=True)
class HostView:
    """One host's advice as `show` prints it, and what people decided about it (a deployment only)."""

    rec: Recommendation
    scope: ActionScope | None
    managed_tag_key: str
    decisions: tuple[Decision, ...] = ()
    approval: Approval | None = None

    def json(self) -> dict[str, Any]:
        from rightsizer.adapters.codec import to_jsonable

        document = recommendation_json(self.rec, self.scope, self.managed_tag_key)
        document["decisions"] = [to_jsonable(decision) for decision in self.decisions]
        document["approval"] = None if self.approval is None else to_jsonable(self.approval)
        return document


def _show_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", metavar="INSTANCE_OR_NAME", help="an instance id, a resource id or a Name tag")
    cli.add_where_options(parser, stack=True)
    cli_output.add_output_options(parser, table="the advice, its evidence and reasons")
    cli.add_connection_options(parser)


def _show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    output = Output.of(args, out)
    if args.stack:
        deployment = open_deployment(args)
        rec = stored_host(deployment, args.host)
        settings = deployment.settings
        now = datetime.now(UTC)
        with aws_errors(deployment.stack.region):
            decisions = tuple(deployment.store.decisions_about(rec, now))
            approval = deployment.store.approval(rec.recommendation_id)
        view = HostView(rec, settings.report_scope, settings.managed_tag_key, decisions, approval)
        warnings: Sequence[str] = ()
    else:
        live = cli.live_report(args, err, color=output.color)
        rec = find_host(live.report.recommendations, args.host, _analysed(args), live.elsewhere)
        view = HostView(rec, live.report.action_scope, live.report.managed_tag_key)
        warnings = live.warnings
    cli_output.write_document(view.json(), output, out, table=lambda: host_text(view, output.width))
    out.flush()
    cli.print_warnings(err, warnings)
    return cli.EXIT_OK


def _analysed(args: argparse.Namespace) -> str:
    """Where a live analysis looked, for a message that found nothing."""
    if args.all_regions:
        return "every region with accelerated hosts"
    return ", ".join(dict.fromkeys(args.region)) if args.region else "the default region"


def host_text(view: HostView, width: int | None = None) -> str:
    """`show` for people: what the host is, the advice, why, the evidence, and what people decided."""
    rec, document = view.rec, view.json()
    name = printable(rec.instance_name)
    target = f" → {rec.target_type}" if rec.target_type else ""
    act = document["not_actionable_reason"]
    lines = [
        f"{name} ({rec.instance_id})" if name else rec.instance_id,
        f"{rec.instance_type} in {rec.region}, account {rec.account_id} ({rec.state})",
        "",
        f"FINDING  {FINDINGS[rec.finding].label}{target} (confidence {rec.confidence.value})",
        f"COST     {usd(rec.monthly_cost)}/month now, {usd(rec.monthly_cost_after)}/month after",
        f"MONEY    {money_phrase(rec.monthly_savings, rec.net_savings)}",
        f"ACT      {'yes: ' + str(document['action']) + ' with one click in Slack' if act is None else 'no'}",
    ]
    if act is not None:
        lines.extend(_wrapped(printable(act), width, "         "))
    lines += ["", "Why:"]
    for reason in rec.reasons:
        lines.extend(_wrapped(printable(reason), width, "  - ", "    "))
    daily = rec.evidence.daily_trace
    if daily:
        lines.append(
            f"{spark_label(rec.evidence, len(daily)).capitalize()}, oldest first (0-100 %): {sparkline(daily)}"
        )
    lines += ["", f"Evidence ({rec.lookback_days} days):"]
    evidence = {key: value for key, value in document["evidence"].items() if value not in (None, [], "")}
    lines.extend(f"  {key:<28} {_value(value)}" for key, value in evidence.items())
    if rec.alternatives:
        lines += ["", "Alternatives:"]
        for alt in rec.alternatives:
            note = f"{alt.instance_type} {usd(alt.monthly_cost)}/month ({alt.confidence.value}): {printable(alt.note)}"
            lines.extend(_wrapped(note, width, "  - ", "    "))
    lines.extend(_decision_lines(view))
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    return printable(json.dumps(value) if isinstance(value, list | dict) else str(value))


def _wrapped(text: str, width: int | None, first: str, rest: str | None = None) -> list[str]:
    """`text` after `first`, wrapped to a terminal's width only (a file gets it whole)."""
    if width is None:
        return [first + text]
    return textwrap.wrap(text, max(20, width), initial_indent=first, subsequent_indent=rest or first) or [first]


def _decision_lines(view: HostView) -> list[str]:
    lines = [
        f"{decision.kind.value} by {decision.actor} at {decision.at:%Y-%m-%d %H:%M} UTC"
        + (f" until {decision.until:%Y-%m-%d %H:%M} UTC" if decision.until else "")
        for decision in view.decisions
    ]
    if view.approval is not None:
        approval = view.approval
        lines.append(
            f"{approval.action.value} approved by {approval.approver} at {approval.approved_at:%Y-%m-%d %H:%M} UTC: "
            f"{approval.status.value}" + (f" ({printable(approval.detail)})" if approval.detail else "")
        )
    return ["", "In Slack:", *(f"  {line}" for line in lines)] if lines else []


# ---------------------------------------------------------------------------------------------
# report


def _report_options(parser: argparse.ArgumentParser) -> None:
    cli.add_stack_option(parser, "the report its daily pipeline ranked (required)")
    parser.set_defaults(all_regions=False)
    parser.add_argument("--region", action="append", metavar="REGION", help="the stack's region (default as analyze)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="every latest recommendation (the daily report lists the ranking's head, the whole fleet's totals)",
    )
    cli.add_report_outputs(parser, "the ranking, the fleet's totals under it")
    cli.add_narrowing_options(parser)
    cli.add_connection_options(parser)


def _report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not args.stack:
        raise UsageError("report reads a deployment: pass --stack NAME (`rightsizer analyze` analyses live)")
    output = Output.of(args, out)
    page_file = cli.html_target(args)
    narrowing = cli.Narrowing.of(args)
    deployment = open_deployment(args)
    now = datetime.now(UTC)
    # Filters and groups other than the ranking's teams are exact only over every latest recommendation.
    report, hidden = stored_report(deployment, now, every=args.all or narrowing.reads_everything)
    report = narrowing.apply(report)
    page = cli.Page()  # the table keeps no per-GPU series: the page draws each host's daily means
    cli.write_report(report, output, out, page=page)
    out.flush()
    if page_file is not None:
        cli.write_page_file(page_file, report, page)
    notes = [f"{hidden} recommendation(s) snoozed or dismissed in Slack are listed too (Slack's report hides them)"]
    cli.print_warnings(err, [*report.warnings, *(notes if hidden else [])])
    return cli.EXIT_OK


def stored_report(deployment: Deployment, now: datetime, *, every: bool = False) -> tuple[FleetReport, int]:
    """The report the bot would post (services.ranking: the ranking's head, the fleet's totals), or with `every`
    the latest recommendations in full, as the report Lambda's export builds it; and how many people hid."""
    from rightsizer.services.approvals import hidden_by
    from rightsizer.services.ranking import ranked_report

    settings, store = deployment.settings, deployment.store
    scope, tag = settings.report_scope, settings.managed_tag_key
    with aws_errors(deployment.stack.region):
        ranked = ranked_report(store, now, settings.lookback_days, scope, tag)
        report = ranked.report
        if every:
            report = build_report(
                store.latest_recommendations(), now, settings.lookback_days, scope=scope, managed_tag_key=tag
            )
    nothing_yet = not report.recommendations if every else report.fleet is None  # no ranking: never analysed
    if nothing_yet:
        raise CommandFailed(no_report(deployment))
    hidden = sum(1 for rec in report.recommendations if hidden_by(rec, ranked.decisions, now))
    return report, hidden


# ---------------------------------------------------------------------------------------------
# act --dry-run

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
    cli.add_where_options(parser, stack=True)
    cli_output.add_output_options(parser, table="the calls, numbered, with their parameters")
    cli.add_connection_options(parser)


def _act(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not args.dry_run:
        raise UsageError(REFUSE_TO_ACT)
    if args.remove_schedule and not args.stack:
        raise UsageError("--remove-schedule reads the schedule the bot recorded: pass --stack NAME")
    output = Output.of(args, out)
    run = _stack_dry_run(args) if args.stack else _live_dry_run(args, err, output)
    cli_output.write_document(_dry_run_json(run), output, out, table=lambda: dry_run_text(run))
    return cli.EXIT_OK


def _dry_run_json(run: DryRun) -> dict[str, Any]:
    from rightsizer.cli_dryrun import dry_run_json

    return dry_run_json(run)


def _stack_dry_run(args: argparse.Namespace) -> DryRun:
    from rightsizer.cli_dryrun import approve_dry, remove_dry

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
    from rightsizer.cli_dryrun import approve_dry

    definition_file = _definition_file(args)  # checked before any AWS call
    live = cli.live_report(args, err, color=output.color)
    rec = find_host(live.report.recommendations, args.host, _analysed(args))
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
    from rightsizer.cli_dryrun import DryRunError, Refused, dry_run

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
    from rightsizer.adapters.codec import to_jsonable

    # The idempotency store it wires is never used here: its client is built, not called.
    dynamodb = session.client("dynamodb", region) if session is not None and settings.table_name else None
    workflow = StepFunctionsResizeWorkflow.from_settings(settings, None, dynamodb_client=dynamodb)

    def input_of(approval: Approval, expected_state: str) -> dict[str, Any]:
        return workflow.execution_input(to_jsonable(approval), expected_state)

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
    from rightsizer.cli_dryrun import substituted

    text = substituted(path.read_text(encoding="utf-8"), {"TableName": table_name or NOT_DEPLOYED_TABLE})
    try:
        return json.loads(text), str(path)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path} is not JSON: {error}") from None


def dry_run_text(run: DryRun) -> str:
    from rightsizer.cli_dryrun import call_lines

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


VERBS: dict[str, Verb] = {
    verb.name: verb
    for verb in (
        Verb(
            "show",
            "one host's advice, evidence and reasons (like /gpu show)",
            "One host's advice, its evidence and reasons: from a live analysis (as analyze), or with --stack the "
            "latest recommendation the deployed bot stored, with what people decided in Slack. The host is an "
            "instance id, a resource id (sagemaker-endpoint/<name>/<variant>) or a Name tag.",
            _show_options,
            _show,
        ),
        Verb(
            "report",
            "what a deployed stack decided (--stack), as table, json, csv or html",
            "The report a deployed stack's bot ranked, read from its DynamoDB table (the stack's TableName output): "
            "the same recommendations and totals as the daily Slack report, without Slack.",
            _report_options,
            _report,
        ),
        Verb(
            "act",
            "--dry-run: the AWS calls an approval would make",
            "The AWS calls the instance workflow would make if the host's advice (resize, stop, schedule, endpoint "
            "update, notebook stop; or --remove-schedule) were approved, in order, with their parameters, read from "
            "the workflow's definition. Nothing is called: the CLI never acts, actions run from Slack approvals.",
            _act_options,
            _act,
        ),
    )
}
