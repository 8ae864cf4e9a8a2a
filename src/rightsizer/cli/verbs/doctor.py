"""`rightsizer doctor`: what a new deployment needs, checked line by line, each line "ok" or the fix.

For an account (`--region`, `--all-regions`, `--account-role-arn`) or a deployed stack (`--stack NAME`, found as
`report --stack` finds it): credentials and regions; the member roles; which GPU and Inferentia/Trainium hosts publish
the metrics the bot reads, by name, with the SSM commands that install the CloudWatch agent; the stack's functions,
state machines, secret and schedules; Slack (the token, the channel, the bot in it); the action role's permissions on a
tagged host, simulated by IAM. `CHECKS` is the checklist, one small function per line (services/doctor.py runs it);
what they share is read once, by `Doctor`. Exit 0 when every line is ok, 1 when one needs fixing (errors.EXIT_CODES).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import textwrap
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, TextIO

from rightsizer.cli.deployment import Deployment, open_deployment
from rightsizer.cli.errors import EXIT_FAILURE, EXIT_OK, UsageError, aws_failure
from rightsizer.cli.options import Verb, add_connection_options, add_stack_option
from rightsizer.cli.output.document import Output, add_output_options, write_document
from rightsizer.cli.output.paint import Paint
from rightsizer.cli.session import NO_REGION, aws_session, checked_regions, checked_role_arn, default_region
from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.models.hosts import AcceleratorKind, Instance
from rightsizer.services.doctor import (
    Check,
    Found,
    Line,
    Status,
    agent_fix,
    named,
    needs_fixing,
    plural,
    run_checks,
)
from rightsizer.services.formatting import printable
from rightsizer.settings import Settings

if TYPE_CHECKING:
    from rightsizer.adapters.aws.session import AwsSession

SESSION_NAME = "gpu-rightsizer-doctor"
RECENTLY = "PT3H"  # a host publishes when its series had data in the last 3 hours (ListMetrics' RecentlyActive)


# ---------------------------------------------------------------------------------------------
# The stack's parts doctor looks for: logical id (after the SAM transform) -> kind. A test keeps it equal to
# template.yaml's functions, state machines, secret and schedules.


class Part(StrEnum):
    FUNCTION = "AWS::Lambda::Function"
    STATE_MACHINE = "AWS::StepFunctions::StateMachine"
    SECRET = "AWS::SecretsManager::Secret"
    SCHEDULE = "AWS::Scheduler::Schedule"


STACK_PARTS: Mapping[str, Part] = {
    **dict.fromkeys(
        (
            "CollectFunction",
            "AnalyzeFunction",
            "ReportFunction",
            "PricesFunction",
            "SlackFunction",
            "NotifierFunction",
        ),
        Part.FUNCTION,
    ),
    **dict.fromkeys(("PipelineStateMachine", "ResizeStateMachine"), Part.STATE_MACHINE),
    "SlackSecret": Part.SECRET,
    **dict.fromkeys(
        ("CollectFunctionDaily", "AnalyzeFunctionCatchUp", "ReportFunctionDailyReport", "PricesFunctionWeekly"),
        Part.SCHEDULE,
    ),
}
# The error codes with which each service says a resource does not exist.
NOT_FOUND = frozenset({"ResourceNotFoundException", "StateMachineDoesNotExist", "NotFoundException"})


@dataclass(frozen=True)
class Listed:
    """One resource of the stack as ListStackResources names it."""

    physical_id: str
    status: str


@dataclass(frozen=True)
class Watched:
    """A running accelerated host and where its accelerator series are published (empty: nowhere)."""

    instance: Instance
    kind: AcceleratorKind | None
    series: frozenset[str]

    @property
    def label(self) -> str:
        name = printable(self.instance.name) if self.instance.name else ""
        return f"{name} ({self.instance.instance_id})" if name else self.instance.instance_id


# ---------------------------------------------------------------------------------------------
# What the checks share, read once


class Doctor:
    """The account, regions, fleet and stack the checks look at; each AWS answer is read on first use."""

    def __init__(
        self,
        session: AwsSession,
        home_region: str,
        regions: tuple[str, ...] | None,
        role_arns: tuple[str, ...],
        deployment: Deployment | None,
    ) -> None:
        self.session = session
        self.home_region = home_region
        self.asked_regions = regions  # None: every enabled region with accelerated hosts (--all-regions)
        self._role_arns = role_arns
        self.deployment = deployment
        self.settings = deployment.settings if deployment is not None else Settings(regions=(home_region,))

    @property
    def where(self) -> str:
        if self.deployment is not None:
            return self.deployment.where
        return f"account {self.account}"

    @cached_property
    def identity(self) -> Mapping[str, str]:
        return dict(self.session.client("sts", self.home_region).get_caller_identity())

    @property
    def account(self) -> str:
        return str(self.identity.get("Account", ""))

    @property
    def known_account(self) -> str | None:
        """The caller's account once GetCallerIdentity answered (None before, or when it failed)."""
        identity = self.__dict__.get("identity")
        return None if identity is None else str(identity.get("Account", ""))

    @cached_property
    def enabled_regions(self) -> frozenset[str]:
        described = self.session.client("ec2", self.home_region).describe_regions()["Regions"]
        return frozenset(str(region["RegionName"]) for region in described)

    @cached_property
    def regions(self) -> tuple[str, ...]:
        """The regions read: those asked for (the stack's Regions) that exist and are enabled (the Regions line says
        which are not), or (--all-regions) every enabled one with GPU hosts."""
        if self.asked_regions is not None:
            from rightsizer.adapters.aws.session import known_regions

            usable = self.enabled_regions & known_regions()
            return tuple(region for region in self.asked_regions if region in usable)
        from rightsizer.cli import wiring

        found, _ = wiring.regions_with_accelerated_hosts(self.session, self.home_region)
        return tuple(found)

    @cached_property
    def member_roles(self) -> tuple[tuple[str, str], ...]:
        """(account, role ARN) of every member account: --account-role-arn, or the stack's, as the pipeline plans."""
        from rightsizer.adapters.aws.accounts import active_accounts
        from rightsizer.services.pipeline import plan_targets

        settings = self.settings if self.deployment is not None else Settings(account_role_arns=self._role_arns)
        organizations = self.session.client("organizations", self.home_region)
        targets = plan_targets(
            settings.with_overrides(regions=(self.home_region,)), self.account, lambda: active_accounts(organizations)
        )
        return tuple((target.account_id, target.role_arn) for target in targets if target.role_arn)

    @cached_property
    def assumed(self) -> Mapping[str, AwsSession | str]:
        """Each member role (account mode): the session it gave, or why it could not be assumed."""
        from rightsizer.adapters.aws.session import AWS_FAILURES, describe_aws_error

        reached: dict[str, AwsSession | str] = {}
        for _, arn in self.member_roles:
            try:
                reached[arn] = self.session.assume(arn, SESSION_NAME, self.home_region)
            except AWS_FAILURES as error:
                reached[arn] = describe_aws_error(error, self.home_region)
        return reached

    @cached_property
    def accounts(self) -> tuple[tuple[str, AwsSession], ...]:
        """The accounts whose hosts are checked: the caller's, and (account mode) each member role it assumed."""
        members = [] if self.deployment is not None else [(arn, reached) for arn, reached in self.assumed.items()]
        reached = [(arn.split(":")[4], session) for arn, session in members if not isinstance(session, str)]
        return ((self.account, self.session), *reached)

    @cached_property
    def hosts(self) -> tuple[Watched, ...]:
        """Every running accelerated host of the accounts and regions, with where its series are published."""
        return tuple(
            host
            for account, session in self.accounts
            for region in self.regions
            for host in self._watch(account, session, region)
        )

    def _watch(self, account: str, session: AwsSession, region: str) -> list[Watched]:
        from rightsizer.adapters import bundled
        from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
        from rightsizer.adapters.aws.ec2 import Ec2Fleet
        from rightsizer.services.collect import build_catalog

        table = bundled.accelerator_table()
        fleet = Ec2Fleet(session.client("ec2", region), account, region, table)
        running = [instance for instance in fleet.accelerated_instances() if instance.is_running]
        if not running:
            return []
        specs = build_catalog(region, fleet.accelerated_specs(), bundled.legacy_specs(), table, None).specs
        usage = CloudWatchUsage(session.client("cloudwatch", region), self.settings.metrics, recently_active=RECENTLY)
        series = usage.accelerator_series(running, specs)
        return [
            Watched(
                host,
                specs[host.instance_type].accelerator_kind if host.instance_type in specs else None,
                series.get(host.instance_id, frozenset()),
            )
            for host in running
        ]

    @cached_property
    def stack_resources(self) -> Mapping[str, Listed]:
        assert self.deployment is not None
        client = self.session.client("cloudformation", self.deployment.stack.region)
        listed: dict[str, Listed] = {}
        for page in client.get_paginator("list_stack_resources").paginate(StackName=self.deployment.stack.name):
            for item in page.get("StackResourceSummaries", []):
                listed[str(item["LogicalResourceId"])] = Listed(
                    str(item.get("PhysicalResourceId", "")), str(item.get("ResourceStatus", ""))
                )
        return listed

    @cached_property
    def function_environment(self) -> Mapping[str, str]:
        """The Slack function's environment as deployed (SLACK_API_URL, where it is not Slack's own)."""
        listed = self.stack_resources.get("SlackFunction")
        if listed is None:
            return {}
        client = self.session.client("lambda", self.home_region)
        configuration = client.get_function_configuration(FunctionName=listed.physical_id)
        return dict(configuration.get("Environment", {}).get("Variables", {}))

    @cached_property
    def slack_api_url(self) -> str:
        return self.function_environment.get("SLACK_API_URL") or self.settings.slack.api_url

    @cached_property
    def slack_token(self) -> str:
        """The bot token from the stack's secret (never printed); a SlackNotConfigured saying what is missing."""
        from rightsizer.adapters.slack.secrets import SlackNotConfigured, parse_credentials

        secret = self.settings.slack.secret_name
        client = self.session.client("secretsmanager", self.home_region)
        try:
            value = client.get_secret_value(SecretId=secret).get("SecretString") or ""
        except Exception as error:
            if _code(error) == "ResourceNotFoundException":
                raise SlackNotConfigured(f"the secret {secret} has no value yet") from None
            raise
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            raise SlackNotConfigured(f"the secret {secret} is not JSON") from None
        return parse_credentials(decoded, secret).bot_token

    def slack(self) -> Any:
        from rightsizer.adapters.slack.client import web_client

        return web_client(self.slack_token, self.slack_api_url)

    @cached_property
    def slack_identity(self) -> Mapping[str, Any]:
        """Slack's auth.test for the bot token: the bot's user and team."""
        return dict(self.slack().auth_test().data)


def _code(error: Exception) -> str:
    response = getattr(error, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


# ---------------------------------------------------------------------------------------------
# The checks, one per line


def credentials(d: Doctor) -> Found:
    identity = d.identity
    return Found(f"{identity.get('Arn', '?')} (account {identity.get('Account', '?')})")


def regions(d: Doctor) -> Found:
    from rightsizer.adapters.aws.session import known_regions

    asked = d.asked_regions
    if asked is None:  # --all-regions
        found = d.regions
        where = f"GPU hosts in {named(found)}" if found else "no GPU, Inferentia or Trainium host in any"
        return Found(f"{plural(len(d.enabled_regions), 'region')} enabled; {where}")
    unknown = [region for region in asked if region not in known_regions()]
    disabled = [region for region in asked if region in known_regions() and region not in d.enabled_regions]
    if not unknown and not disabled:
        return Found(f"{named(list(asked))}: enabled", details={"regions": list(asked)})
    problems = ([f"{named(unknown)} unknown"] if unknown else []) + (
        [f"{named(disabled)} not enabled"] if disabled else []
    )
    source = "the stack's Regions parameter" if d.deployment is not None else "--region"
    fix = "; ".join(
        [f"enable {region}: aws account enable-region --region-name {region}" for region in disabled]
        + [f"correct {region} in {source}" for region in unknown]
    )
    return Found(f"{'; '.join(problems)} for account {d.account}", fix, {"unknown": unknown, "disabled": disabled})


def member_roles(d: Doctor) -> Found:
    roles = d.member_roles
    if not roles:
        return Found(f"none configured: {'the stack reads' if d.deployment else 'doctor reads'} account {d.account}")
    if d.deployment is not None:
        return _collected_members(d, roles)
    refused = {arn: why for arn, why in d.assumed.items() if isinstance(why, str)}
    details = {"assumable": [arn for arn in d.assumed if arn not in refused], "refused": refused}
    if not refused:
        return Found(f"{plural(len(roles), 'role')} assumed: {named([arn for _, arn in roles])}", details=details)
    return Found(
        f"{len(refused)} of {plural(len(roles), 'role')} could not be assumed: "
        + "; ".join(f"{arn}: {why}" for arn, why in refused.items()),
        "deploy member-account/template.yaml in each of those accounts, trusting the caller or the stack's "
        "collector role (docs/multi-account.md)",
        details,
    )


def _collected_members(d: Doctor, roles: Sequence[tuple[str, str]]) -> Found:
    """A stack's member roles trust only its collector's role: what the collector met in the latest run."""
    assert d.deployment is not None
    store = d.deployment.store
    run = store.latest_run()
    collector = d.deployment.stack.outputs.get("CollectorRoleArn", "the stack's CollectorRoleArn")
    if run is None:
        return Found(
            f"{plural(len(roles), 'member role')}: not tried yet; they trust only the collector's role, which assumes "
            "them when the daily pipeline runs",
            f"start the pipeline now ({_start_pipeline(d)}), then run doctor again",
        )
    failed = {item.get("account_id", ""): item for item in store.failures(run) if item.get("shard") == "plan"}
    collected = [arn for account, arn in roles if all(store.region(run, account, r) for r in d.settings.regions)]
    refused = [(arn, failed.get(account)) for account, arn in roles if arn not in collected]
    details = {"run": run, "collected": collected, "refused": [arn for arn, _ in refused]}
    if not refused:
        return Found(f"{plural(len(roles), 'member role')} assumed by the collector in run {run}", details=details)
    why = "; ".join(f"{arn}: {_cause(item)}" for arn, item in refused)
    return Found(
        f"{len(refused)} of {plural(len(roles), 'member role')} not read in run {run}: {why}",
        f"deploy member-account/template.yaml in those accounts with CollectorRoleArn={collector} "
        "(docs/multi-account.md)",
        details,
    )


def _cause(item: Mapping[str, str] | None) -> str:
    if item is None:
        return "not collected"
    cause = item.get("cause", "")
    with contextlib.suppress(json.JSONDecodeError, AttributeError):  # a Lambda's error: its errorMessage
        cause = str(json.loads(cause).get("errorMessage", cause))
    return f"{item.get('error', 'failed')}: {cause}" if cause else item.get("error", "failed")


def _start_pipeline(d: Doctor) -> str:
    assert d.deployment is not None
    arn = d.deployment.stack.outputs.get("PipelineStateMachineArn", "<PipelineStateMachineArn>")
    return f"aws stepfunctions start-execution --state-machine-arn {arn}"


def _every(count: int, what: str) -> str:
    """'the running GPU host publishes' / 'all 19 running GPU hosts publish'."""
    return f"the {what} publishes" if count == 1 else f"all {count} {what}s publish"


def _publish(count: int) -> str:
    return "publishes" if count == 1 else "publish"


def _need(count: int) -> str:
    return "needs" if count == 1 else "need"


def _silent(d: Doctor, kinds: set[AcceleratorKind | None]) -> tuple[list[Watched], list[Watched]]:
    """(the running hosts of these kinds, those of them that publish no accelerator series)."""
    hosts = [host for host in d.hosts if host.kind in kinds]
    return hosts, [host for host in hosts if not host.series]


def gpu_metrics(d: Doctor) -> Found:
    hosts, silent = _silent(d, {AcceleratorKind.NVIDIA})
    where = named(list(d.regions)) if d.regions else "no region"
    if not hosts:
        return Found(f"no running NVIDIA GPU host in {where}")
    details = {"hosts": len(hosts), "silent": [host.instance.instance_id for host in silent]}
    if not silent:
        return Found(f"{_every(len(hosts), 'running GPU host')} GPU metrics ({where})", details=details)
    by_region: dict[str, list[str]] = defaultdict(list)
    for host in silent:
        by_region[host.instance.region].append(host.instance.instance_id)
    return Found(
        f"{len(silent)} of {plural(len(hosts), 'running GPU host')} {_publish(len(silent))} no GPU metrics (none in "
        f"the last 3 hours): {named([host.label for host in silent])}",
        agent_fix(by_region),
        details,
    )


def neuron_metrics(d: Doctor) -> Found:
    hosts, silent = _silent(d, {AcceleratorKind.NEURON})
    metrics = d.settings.metrics
    if not hosts:
        return Found("no running Inferentia or Trainium host")
    details = {"hosts": len(hosts), "silent": [host.instance.instance_id for host in silent]}
    if not silent:
        return Found(f"{_every(len(hosts), 'Inferentia/Trainium host')} neuron-monitor metrics", details=details)
    regions_of = sorted({host.instance.region for host in silent})
    return Found(
        f"{len(silent)} of {plural(len(hosts), 'Inferentia/Trainium host')} {_publish(len(silent))} no "
        f"{metrics.neuron_namespace}/"
        f"{metrics.neuron_utilization} in the last 3 hours: {named([host.label for host in silent])} (neuron-monitor "
        "reports only NeuronCores an application uses: an idle host is silent too)",
        "run neuron-monitor with its CloudWatch companion on them (agent/README.md#neuron-and-windows): "
        + "; ".join(
            f"neuron-monitor | /opt/aws/neuron/bin/neuron-monitor-cloudwatch.py --namespace {metrics.neuron_namespace} "
            f"--region {region}"
            for region in regions_of
        ),
        details,
    )


def _parts(d: Doctor, kind: Part) -> Found:
    """The stack's parts of one kind: listed by CloudFormation, complete, and there in their own service."""
    wanted = [logical for logical, part in STACK_PARTS.items() if part is kind]
    missing: list[str] = []
    present: list[str] = []
    for logical in wanted:
        listed = d.stack_resources.get(logical)
        if listed is None or not listed.status.endswith("_COMPLETE") or listed.status.startswith("DELETE"):
            missing.append(f"{logical} ({listed.status if listed else 'not in the stack'})")
        elif problem := _problem(d, kind, listed.physical_id):
            missing.append(f"{logical} ({problem})")
        else:
            present.append(listed.physical_id)
    details = {"present": present, "missing": missing}
    if not missing:
        return Found(f"{len(present)} of {len(wanted)} present: {named([_short(p) for p in present])}", details=details)
    return Found(
        f"{len(missing)} of {len(wanted)} missing: {named(missing)}",
        f"deploy the stack again from this version's template.yaml: sam build && sam deploy --stack-name "
        f"{d.deployment.stack.name if d.deployment else '<stack>'} (docs/deploy.md)",
        details,
    )


def _short(physical_id: str) -> str:
    """A resource's name as people say it: an ARN's last part (stateMachine:NAME, secret:NAME-suffix)."""
    return physical_id.rsplit(":", 1)[-1] if physical_id.startswith("arn:") else physical_id


def _function_problem(d: Doctor, name: str) -> str | None:
    d.session.client("lambda", d.home_region).get_function_configuration(FunctionName=name)
    return None


def _state_machine_problem(d: Doctor, arn: str) -> str | None:
    d.session.client("stepfunctions", d.home_region).describe_state_machine(stateMachineArn=arn)
    return None


def _secret_problem(d: Doctor, arn: str) -> str | None:
    d.session.client("secretsmanager", d.home_region).describe_secret(SecretId=arn)
    return None


def _schedule_problem(d: Doctor, name: str) -> str | None:
    client = d.session.client("scheduler", d.home_region)
    state = str(client.get_schedule(Name=name, GroupName=d.settings.schedule_group).get("State", ""))
    return None if state == "ENABLED" else f"{name} is {state.lower() or 'in no state'}"


# How each kind of part is looked up in its own service: None when it is there (a schedule: and enabled), else what
# is wrong with it. A part that does not exist raises its service's not-found error.
PROBLEM: Mapping[Part, Callable[[Doctor, str], str | None]] = {
    Part.FUNCTION: _function_problem,
    Part.STATE_MACHINE: _state_machine_problem,
    Part.SECRET: _secret_problem,
    Part.SCHEDULE: _schedule_problem,
}


def _problem(d: Doctor, kind: Part, physical_id: str) -> str | None:
    try:
        return PROBLEM[kind](d, physical_id)
    except Exception as error:
        if _code(error) in NOT_FOUND:
            return f"{physical_id} does not exist"
        raise


def functions(d: Doctor) -> Found:
    return _parts(d, Part.FUNCTION)


def state_machines(d: Doctor) -> Found:
    return _parts(d, Part.STATE_MACHINE)


def secret(d: Doctor) -> Found:
    return _parts(d, Part.SECRET)


def schedules(d: Doctor) -> Found:
    group = d.settings.schedule_group
    try:
        state = str(d.session.client("scheduler", d.home_region).get_schedule_group(Name=group).get("State", ""))
    except Exception as error:
        if _code(error) not in NOT_FOUND:
            raise
        state = "missing"
    found = _parts(d, Part.SCHEDULE)
    if state != "ACTIVE":
        return Found(
            f"schedule group {group} is {state.lower()}; {found.text}",
            f"the stack's schedules live in EventBridge Scheduler's group {group}: deploy the stack again "
            "(docs/deploy.md)",
            found.details,
        )
    return Found(f"group {group} active; {found.text}", found.fix, found.details)


def slack_token(d: Doctor) -> Found:
    from rightsizer.adapters.slack.secrets import SETUP_HINT, SlackNotConfigured

    try:
        answer = d.slack_identity
    except SlackNotConfigured as missing:
        return Found(str(missing), f"put the bot token and signing secret into it: {SETUP_HINT}")
    except Exception as error:
        return Found(f"Slack's auth.test failed: {_slack_error(error)}", _slack_fix(error, d))
    return Found(
        f"the bot token works: @{answer.get('user', '?')} in {answer.get('team', '?')} ({d.slack_api_url})",
        details={"team_id": answer.get("team_id"), "user_id": answer.get("user_id"), "api_url": d.slack_api_url},
    )


def slack_channel(d: Doctor) -> Found:
    channel = d.settings.slack.channel
    if not channel:
        return Found(
            "no SlackChannel: the daily report is not posted",
            "set it: sam deploy --parameter-overrides SlackChannel=C0123456789 (docs/connect-slack.md, step 5)",
        )
    try:
        info = d.slack().conversations_info(channel=channel).get("channel", {})
    except Exception as error:
        return Found(f"channel {channel} cannot be read: {_slack_error(error)}", _slack_fix(error, d, channel))
    name = f"#{info.get('name', channel)} ({channel})"
    if not info.get("is_member"):
        return Found(
            f"{name}: the bot is not a member, so it cannot post the report there",
            f"in {name}, send /invite @{d.slack_identity.get('user', 'GPU Rightsizer')} "
            "(docs/connect-slack.md, step 6)",
        )
    return Found(f"{name}: reachable, the bot is a member", details={"channel": channel, "name": info.get("name")})


def _slack_error(error: Exception) -> str:
    response = getattr(error, "response", None)
    if response is not None and hasattr(response, "get"):
        return str(response.get("error", error))
    return printable(str(error).splitlines()[0] if str(error) else type(error).__name__)


def _slack_fix(error: Exception, d: Doctor, channel: str = "") -> str:
    code = _slack_error(error)
    fixes = {
        "invalid_auth": "the token is not valid: put the app's current Bot User OAuth Token into the secret",
        "account_inactive": "the app was uninstalled or its workspace closed: install it again (docs/connect-slack.md)",
        "token_revoked": "the token was revoked: reinstall the app and put its new token into the secret",
        "missing_scope": "reinstall the app from slack/manifest.yaml: it asks for channels:read and groups:read",
        "channel_not_found": f"check SlackChannel ({channel}): the id of a channel the bot can see (a private one "
        "only once it is invited)",
    }
    return fixes.get(code, f"check that {d.slack_api_url} is Slack's Web API and reachable (SLACK_API_URL)")


def action_role(d: Doctor) -> Found:
    """The action role's rights on a host tagged for one click, and on one that is not, as IAM's policy simulator
    evaluates them (sts:AssumeRole by the workflow is the template's trust policy, not simulated here)."""
    settings = d.settings
    role = settings.action_role_arn
    if not role:
        return Found("the stack has no ActionRoleArn output", "deploy the stack again (docs/deploy.md)")
    host = next(
        (
            host.instance
            for host in d.hosts
            if host.instance.account_id == d.account
            and host.instance.region == d.home_region
            and host.instance.tags.get(settings.managed_tag_key) == "true"
        ),
        None,
    )
    instance_id = host.instance_id if host else "i-00000000000000000"
    arns = _action_resources(d, instance_id)
    tagged = _simulate(d, role, arns, {f"aws:ResourceTag/{settings.managed_tag_key}": "true"})
    # The same host untagged: no change to the instance itself may be allowed (schedules and PassRole name no host's
    # tag; the scheduler role they run as is tag-scoped in turn).
    on_host = {action: arn for action, arn in arns.items() if arn == arns["ec2:StopInstances"] and _changes(action)}
    untagged = _simulate(d, role, on_host, {})
    denied = sorted(action for action, allowed in tagged.items() if not allowed)
    changes_untagged = sorted(action for action, allowed in untagged.items() if allowed)
    subject = (
        f"{host.name or host.instance_id} ({host.instance_id})"
        if host
        else f"a host tagged {settings.managed_tag_key}=true"
    )
    details = {"role": role, "host": instance_id, "denied": denied, "allowed_untagged": changes_untagged}
    if denied or changes_untagged:
        problems = ([f"denies {named(denied)} on {subject}"] if denied else []) + (
            [f"allows {named(changes_untagged)} on an untagged host"] if changes_untagged else []
        )
        return Found(
            f"{role} {'; '.join(problems)}",
            "deploy the stack again from this version's template.yaml: its ActionRole grants exactly these, on "
            f"hosts tagged {settings.managed_tag_key}=true only (docs/iam.md)",
            details,
        )
    return Found(
        f"may do the {len(tagged)} things one click needs on {subject}, and change no untagged host",
        details=details,
    )


def _action_resources(d: Doctor, instance_id: str) -> dict[str, str]:
    """Each action the instance workflow takes on a host (resize, stop, schedule) -> the resource it acts on."""
    account, region = d.account, d.home_region
    resources = {
        "ec2": f"arn:aws:ec2:{region}:{account}:instance/{instance_id}",
        "scheduler": f"arn:aws:scheduler:{region}:{account}:schedule/{d.settings.schedule_group}/rightsizer-"
        f"{instance_id}-stop",
        "iam": d.settings.scheduler_role_arn or f"arn:aws:iam::{account}:role/scheduler",
    }
    actions = sorted({action for spec in ACTIONS.values() if spec.on_host for action in spec.permissions})
    # Reads (Describe*, List*) take no resource ARN: "*", as the role grants them.
    return {action: resources[action.split(":")[0]] if _changes(action) else "*" for action in actions}


def _changes(action: str) -> bool:
    verb = action.split(":")[1]
    return not verb.startswith(("Describe", "List", "Get"))


def _simulate(d: Doctor, role: str, arns: Mapping[str, str], context: Mapping[str, str]) -> dict[str, bool]:
    """IAM's SimulatePrincipalPolicy for each (action, resource): allowed or not."""
    client = d.session.client("iam", d.home_region)
    entries = [
        {"ContextKeyName": key, "ContextKeyValues": [value], "ContextKeyType": "string"}
        for key, value in {**context, "iam:PassedToService": "scheduler.amazonaws.com"}.items()
    ]
    by_resource: dict[str, list[str]] = defaultdict(list)
    for action, resource in arns.items():
        by_resource[resource].append(action)
    allowed: dict[str, bool] = {}
    for resource, actions in by_resource.items():
        for page in client.get_paginator("simulate_principal_policy").paginate(
            PolicySourceArn=role, ActionNames=actions, ResourceArns=[resource], ContextEntries=entries
        ):
            for result in page.get("EvaluationResults", []):
                allowed[str(result["EvalActionName"])] = result.get("EvalDecision") == "allowed"
    return allowed


# The checklist, in the order it is printed.
CHECKS: tuple[Check[Doctor], ...] = (
    Check("credentials", "Credentials", credentials, ("sts:GetCallerIdentity",)),
    Check("regions", "Regions", regions, ("ec2:DescribeRegions",), needs=("credentials",)),
    Check(
        "member-roles",
        "Member roles",
        member_roles,
        ("sts:AssumeRole", "organizations:ListAccounts", "dynamodb:Query"),
        needs=("credentials",),
    ),
    Check(
        "gpu-metrics",
        "GPU metrics",
        gpu_metrics,
        ("ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "cloudwatch:ListMetrics"),
        needs=("credentials",),
    ),
    Check(
        "neuron-metrics",
        "Neuron metrics",
        neuron_metrics,
        ("ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "cloudwatch:ListMetrics"),
        needs=("credentials",),
    ),
    Check(
        "functions",
        "Functions",
        functions,
        ("cloudformation:ListStackResources", "lambda:GetFunctionConfiguration"),
        needs=("credentials",),
        stack_only=True,
    ),
    Check(
        "state-machines",
        "State machines",
        state_machines,
        ("cloudformation:ListStackResources", "states:DescribeStateMachine"),
        needs=("credentials",),
        stack_only=True,
    ),
    Check(
        "secret",
        "Slack secret",
        secret,
        ("cloudformation:ListStackResources", "secretsmanager:DescribeSecret"),
        needs=("credentials",),
        stack_only=True,
    ),
    Check(
        "schedules",
        "Schedules",
        schedules,
        ("cloudformation:ListStackResources", "scheduler:GetScheduleGroup", "scheduler:GetSchedule"),
        needs=("credentials",),
        stack_only=True,
    ),
    Check(
        "slack-token",
        "Slack token",
        slack_token,
        ("secretsmanager:GetSecretValue", "lambda:GetFunctionConfiguration"),
        needs=("secret",),
        stack_only=True,
    ),
    Check("slack-channel", "Slack channel", slack_channel, needs=("slack-token",), stack_only=True),
    Check(
        "action-role",
        "Action role",
        action_role,
        ("iam:SimulatePrincipalPolicy", "ec2:DescribeInstances"),
        needs=("credentials",),
        stack_only=True,
    ),
)


# ---------------------------------------------------------------------------------------------
# The verb


def _options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--region",
        action="append",
        metavar="REGION",
        help="a region to check, repeatable (default: AWS_REGION, AWS_DEFAULT_REGION or the profile's); with "
        "--stack: the stack's region (its Regions parameter says which it reads)",
    )
    where.add_argument("--all-regions", action="store_true", help="every enabled region that runs GPU hosts")
    parser.add_argument(
        "--account-role-arn",
        action="append",
        metavar="ARN",
        help="also check a member account by assuming this role, repeatable (with --stack: the stack's member roles)",
    )
    add_stack_option(
        parser, "check the deployment too: its functions, state machines, secret, schedules, Slack and action role"
    )
    add_output_options(
        parser,
        table="one line per check, ok or the fix",
        document="the checklist's: ok, and checks, each with check, title, status, text, fix and details",
        query="checks[?status=='fix'].[title, fix]",
    )
    add_connection_options(parser)


def _doctor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    output = Output.of(args, out)
    roles = tuple(dict.fromkeys(checked_role_arn(arn) for arn in args.account_role_arn or ()))
    if args.stack:
        if roles:
            raise UsageError(
                "--account-role-arn checks an account; with --stack doctor checks the stack's member roles"
            )
        deployment = open_deployment(args)
        doctor = Doctor(deployment.session, deployment.stack.region, deployment.settings.regions, (), deployment)
    else:
        session = aws_session(args)
        home = default_region(session)
        asked = None if args.all_regions else tuple(dict.fromkeys(args.region or [home or ""]))
        if asked is not None and not all(asked):
            raise UsageError(NO_REGION)
        if asked is not None:
            from rightsizer.adapters.aws.session import known_regions

            asked = checked_regions(asked, known_regions())  # an unknown one: exit 2, as every verb
        doctor = Doctor(session, (asked or (home or "us-east-1",))[0], asked, roles, None)
    checks = [check for check in CHECKS if args.stack or not check.stack_only]
    lines = run_checks(checks, doctor, aws_failure)
    document = doctor_json(doctor, lines)
    write_document(document, output, out, table=lambda: doctor_text(doctor, lines, output))
    return EXIT_FAILURE if needs_fixing(lines) else EXIT_OK


def doctor_json(doctor: Doctor, lines: Sequence[Line]) -> dict[str, Any]:
    stack = doctor.deployment.stack if doctor.deployment is not None else None
    return {
        "checked_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "stack": None if stack is None else {"name": stack.name, "region": stack.region},
        "account": doctor.known_account,
        "ok": not needs_fixing(lines),
        "checks": [line.json() for line in lines],
    }


STATUS_STYLE = {Status.OK: "green", Status.FIX: "red+bold", Status.SKIPPED: "dim"}
STATUS_WORD = {Status.OK: "ok", Status.FIX: "FIX", Status.SKIPPED: "--"}


def doctor_text(doctor: Doctor, lines: Sequence[Line], output: Output) -> str:
    """The checklist for people: one line per check, its fix indented under it."""
    paint = Paint(output.color)
    width = output.width
    title_width = max(len(line.title) for line in lines)
    indent = " " * (8 + title_width)  # under the text: status (4), two spaces, the title, two spaces
    account = doctor.known_account
    head = f"rightsizer doctor: {doctor.where if doctor.deployment is not None or account else 'an account'}" + (
        f", account {account}" if doctor.deployment is not None and account else ""
    )
    out = [head, ""]
    for line in lines:
        first = f"{STATUS_WORD[line.status]:<4}  {line.title:<{title_width}}  "
        out.extend(_wrap(printable(line.text), width, paint(STATUS_STYLE[line.status], first), indent))
        for index, fix in enumerate(line.fix.splitlines()):
            lead = f"{indent}fix: " if index == 0 else f"{indent}     "
            command = fix.startswith("  ")  # a command to paste: never cut
            out.extend(_wrap(printable(fix), None if command else width, lead, f"{indent}     "))
    fixes = sum(1 for line in lines if line.status is Status.FIX)
    out += ["", "Everything is ready." if not fixes else f"{plural(fixes, 'check')} {_need(fixes)} fixing."]
    return "\n".join(out) + "\n"


def _wrap(text: str, width: int | None, first: str, rest: str) -> list[str]:
    if width is None:
        return [first + text]
    wrapped = textwrap.wrap(text, max(40, width), initial_indent=first, subsequent_indent=rest, break_on_hyphens=False)
    return wrapped or [first]


VERB = Verb(
    "doctor",
    "check a deployment (--stack) or an account: each line ok or the fix",
    "What a new deployment needs, checked line by line: credentials and regions, member roles, which GPU and "
    "Inferentia/Trainium hosts publish the metrics the bot reads (by name, with the SSM command that installs "
    "the CloudWatch agent) and, with --stack, the stack's functions, state machines, secret and schedules, Slack "
    "(the token, the channel, the bot in it) and the action role's permissions on a tagged host, simulated by "
    "IAM. Exit 0 when every line is ok, 1 when one needs fixing. Run it after the first deploy.",
    _options,
    _doctor,
)
