"""The one typed settings object. Configuration is read here, once, and never at import time."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import Enum, StrEnum
from typing import Any, Generic, TypeVar

from rightsizer.domain.policy import DEFAULT_MANAGED_TAG_KEY, Policy, TimeZones
from rightsizer.domain.scope import ACTION_ROLE_NAME, ActionScope
from rightsizer.domain.signals import Signal

T = TypeVar("T")
E = TypeVar("E", bound=Enum)


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names it and says what is expected."""


class PriceMode(StrEnum):
    AUTO = "auto"  # Price List API, falling back to the bundled snapshot
    API = "api"  # Price List API only; fail if unreachable
    SNAPSHOT = "snapshot"  # bundled snapshot only (offline)


@dataclass(frozen=True)
class MetricNames:
    """Where the usage metrics live. Defaults match the CloudWatch agent's nvidia_gpu plugin."""

    gpu_namespace: str = "CWAgent"
    gpu_utilization: str = "nvidia_smi_utilization_gpu"
    gpu_memory_used: str = "nvidia_smi_memory_used"
    gpu_memory_total: str = "nvidia_smi_memory_total"
    # The video encoder (NVENC), which utilization.gpu does not see: published where the agent config asks for them.
    gpu_encoder_sessions: str = "nvidia_smi_encoder_stats_session_count"
    gpu_encoder_fps: str = "nvidia_smi_encoder_stats_average_fps"
    # NVIDIA DCGM's profiling signals, per GPU in percent, as agent/dcgm/publish-dcgm-metrics.py publishes them through
    # the agent's StatsD listener (domain/signals.py); read where a host publishes them.
    gpu_sm_active: str = "dcgm_sm_active"
    gpu_sm_occupancy: str = "dcgm_sm_occupancy"
    gpu_tensor_active: str = "dcgm_tensor_active"
    gpu_dram_active: str = "dcgm_dram_active"
    gpu_encoder_util: str = "dcgm_encoder_util"
    gpu_decoder_util: str = "dcgm_decoder_util"
    # The same per MIG GPU instance (a slice), as the publisher sends them for a GPU in MIG mode: the instance's SMs'
    # load (occupancy only where its SM active reads N/A) and framebuffer in use (MiB), with the GPU's index, the
    # instance's id and its profile as dimensions (domain/mig.py sizes each slice on them).
    gpu_instance_sm_active: str = "dcgm_mig_sm_active"
    gpu_instance_sm_occupancy: str = "dcgm_mig_sm_occupancy"
    gpu_instance_memory_used: str = "dcgm_mig_fb_used"
    gpu_instance_dimension: str = "gpu_instance"
    mig_profile_dimension: str = "mig_profile"
    gpu_index_dimension: str = "index"
    host_memory_used_pct: str = "mem_used_percent"
    # The agent's diskio (bytes per collection interval, per disk): read where published, for the instance store's work.
    disk_read_bytes: str = "diskio_read_bytes"
    disk_write_bytes: str = "diskio_write_bytes"
    # The agent's procstat: processes it watches, by exe or pattern; read where a graphics process is watched.
    process_count: str = "procstat_lookup_pid_count"
    instance_dimension: str = "InstanceId"
    instance_type_dimension: str = "InstanceType"
    # neuron-monitor's CloudWatch companion lets users pick names: all three are configurable.
    neuron_namespace: str = "NeuronMonitor"
    neuron_utilization: str = "neuroncore_utilization"
    neuron_core_dimension: str = "NeuronCore"

    @property
    def signal_metrics(self) -> dict[str, Signal]:
        """The DCGM metrics by name, and the signal each publishes."""
        return {
            self.gpu_sm_active: Signal.SM_ACTIVE,
            self.gpu_sm_occupancy: Signal.SM_OCCUPANCY,
            self.gpu_tensor_active: Signal.TENSOR_ACTIVE,
            self.gpu_dram_active: Signal.DRAM_ACTIVE,
            self.gpu_encoder_util: Signal.ENCODER,
            self.gpu_decoder_util: Signal.DECODER,
        }

    @property
    def slice_signal_metrics(self) -> dict[str, Signal]:
        """The per-MIG-instance DCGM metrics of the SMs' load by name, and the signal each publishes."""
        return {self.gpu_instance_sm_active: Signal.SM_ACTIVE, self.gpu_instance_sm_occupancy: Signal.SM_OCCUPANCY}


@dataclass(frozen=True)
class SlackSettings:
    secret_name: str = ""  # Secrets Manager secret holding bot_token and signing_secret
    channel: str = ""  # where the daily report goes
    approvers: tuple[str, ...] = ()  # Slack user ids allowed to approve
    approver_group: str = ""  # or a Slack user group id
    command: str = "/gpu"
    top_n: int = 10
    api_url: str = "https://slack.com/api/"  # GovSlack: https://slack-gov.com/api/; the demo: a local double


# The parts of Settings that are settings objects of their own, as SETTINGS' fields name them ("policy.team_tag").
_SECTIONS: dict[str, type[Any]] = {"policy": Policy, "metrics": MetricNames, "slack": SlackSettings}


@dataclass(frozen=True)
class Settings:
    regions: tuple[str, ...] = ("us-east-1",)
    lookback_days: int = 14
    price_mode: PriceMode = PriceMode.AUTO
    policy: Policy = field(default_factory=Policy)
    metrics: MetricNames = field(default_factory=MetricNames)
    # Serverless deployment
    table_name: str = ""
    account_role_arns: tuple[str, ...] = ()  # roles to assume in member accounts; empty: this account
    role_session_name: str = "gpu-rightsizer"
    use_organizations: bool = False
    member_role_name: str = "GpuRightsizerCollector"  # role name assumed in Organizations accounts
    sagemaker: bool = True  # also read SageMaker endpoints, notebook instances and training jobs
    # The instance workflow may only touch hosts with this tag (value "true"); the analyzer reads it from `policy`,
    # which always carries the same key (see __post_init__).
    managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY
    resize_state_machine_arn: str = ""  # the instance workflow (resize, stop, schedule) of the home region
    pipeline_state_machine_arn: str = ""
    resize_poll_seconds: int = 30  # the resize workflow's wait between EC2 state checks
    home_region: str = "us-east-1"  # where the table, secret and state machines live
    home_account_id: str = ""  # the stack's account; other accounts are reached through their action role
    slack: SlackSettings = field(default_factory=SlackSettings)
    # The pipeline's shards: at most this many instances per collect invocation. 500 eight-GPU hosts read and
    # summarise in about 6 minutes at 1769 MB (one vCPU) with ~150 MB of memory; `make bench` prints the
    # estimate for the largest shard against the function's timeout and memory.
    shard_size: int = 500
    plan_bucket: str = ""  # S3 bucket for each run's target list (the Distributed Map's ItemReader)
    # False: a report-only deployment (the stack's ActionsEnabled): the report and the commands work, no button starts
    # a workflow, Approve buttons are absent with a sentence why (domain.scope.REPORT_ONLY).
    actions_enabled: bool = True
    # One-click actions beyond the home account and region (docs/multi-account.md)
    action_regions: tuple[str, ...] = ()  # regions with an instance workflow (the home region always has one)
    member_actions: bool = False  # member accounts may deploy the action role (member-account/template.yaml)
    member_action_role_name: str = ACTION_ROLE_NAME
    action_role_arn: str = ""  # the home account's action role (the workflow assumes it for EC2 and Scheduler)
    scheduler_role_name: str = "GpuRightsizerScheduler"  # what EventBridge Scheduler runs a member's pair as
    scheduler_role_arn: str = ""  # ...and in the home account
    # The EventBridge Scheduler group of every pair: not a setting, since the IAM (schedule/default/rightsizer-*) and
    # the schedule registry's listing (adapters/aws/scheduler.py) know only this one.
    schedule_group: str = "default"
    schedule_time_zone: str = "UTC"  # schedules' default time zone (the stack's ScheduleTimezone)
    regional_table_name: str = ""  # regional/template.yaml's table (locks, audit) in each other action region
    team_time_zones: Mapping[str, str] = field(default_factory=dict)  # team tag value -> IANA time zone

    def __post_init__(self) -> None:
        if self.policy.managed_tag_key != self.managed_tag_key:
            # One key for the workflow's check and the analyzer's: the report offers one click exactly where the
            # workflow may act. The settings' key wins (it is what the stack passes the workflow).
            object.__setattr__(self, "policy", replace(self.policy, managed_tag_key=self.managed_tag_key))
        zones = TimeZones(self.schedule_time_zone, tuple(sorted(self.team_time_zones.items())))
        if self.policy.time_zones != zones:
            # The zones schedules are created in are the ones the analyzer prices them in.
            object.__setattr__(self, "policy", replace(self.policy, time_zones=zones))
        if not self.regions:
            raise ConfigError("at least one region is required")
        if not 1 <= self.shard_size <= 5000:
            raise ConfigError(f"SHARD_SIZE must be between 1 and 5000 instances, got {self.shard_size}")
        shortest = self.shortest_lookback
        if not shortest <= self.lookback_days <= 62:
            # CloudWatch keeps 5-minute data for 63 days; a window shorter than the history the analyzer needs makes
            # every host `insufficient_data`, which reads like a fleet without the agent.
            raise ConfigError(
                f"lookback days must be between {shortest} and 62, got {self.lookback_days} (the analyzer needs "
                f"{self.policy.min_days:g} days of GPU history, MIN_HISTORY_DAYS, to judge a host)"
            )

    @property
    def shortest_lookback(self) -> int:
        """The shortest window worth collecting: the history the analyzer needs before it judges a host."""
        return max(1, math.ceil(self.policy.min_days))

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def home_account(self) -> str:
        """HOME_ACCOUNT_ID, else the account of the instance workflow's ARN (empty when neither is set)."""
        arn = self.resize_state_machine_arn.split(":")
        return self.home_account_id or (arn[4] if len(arn) == 7 else "")

    @property
    def action_scope(self) -> ActionScope:
        """Where one click acts: the home account (and member accounts when enabled) in the action regions."""
        return ActionScope.of(
            self.home_account,
            {self.home_region, *self.action_regions},
            member_accounts=self.member_actions,
            action_role_name=self.member_action_role_name,
            actions_enabled=self.actions_enabled,
        )

    @property
    def report_scope(self) -> ActionScope | None:
        """The action scope reports and Slack judge one click by; None while the home account is unknown (no
        HOME_ACCOUNT_ID and no workflow ARN), where nothing is ruled out of reach, unless actions are off: a report-only
        deployment rules out every click wherever it is."""
        if self.home_account:
            return self.action_scope
        return None if self.actions_enabled else ActionScope.of("", None, actions_enabled=False)

    def time_zone_of(self, team: str) -> str:
        """A team's time zone for its schedules: TEAM_TIME_ZONES, else the stack's ScheduleTimezone."""
        return self.policy.time_zones.of(team)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings for a Lambda function, from the environment variables SETTINGS names (template.yaml sets them).
        A variable that is unset, or empty where empty means nothing, leaves its field's default."""
        env = os.environ if env is None else env
        given: dict[str, dict[str, Any]] = {"": {}, **{section: {} for section in _SECTIONS}}
        for setting in SETTINGS:
            raw = setting.raw(env)
            if raw is not None:
                section, _, name = setting.into.rpartition(".")
                given[section][name] = setting.parse(raw)
        values = given.pop("")
        if "lookback_days" in values:  # one window for the collector and the analyzer
            given["policy"]["lookback_days"] = values["lookback_days"]
        values["regions"] = values.get("regions") or (values.get("home_region", cls.home_region),)
        return cls(**values, **{section: kind(**given[section]) for section, kind in _SECTIONS.items()})


# =============================================================================================
# The table: every environment variable the functions read, once, with its type, where it goes and what it means.
# Defaults are the dataclasses' (Policy's for "policy.*"); the list in docs/configuration.md is generated from here.


class SetBy(StrEnum):
    PARAMETER = "parameter"  # template.yaml, from the stack parameter `Setting.parameter`
    STACK = "stack"  # template.yaml, from something the stack creates (a table, a state machine, a role)
    LAMBDA = "lambda"  # the Lambda runtime
    NOBODY = "nobody"  # nothing: add it to a function's environment to change the default


@dataclass(frozen=True)
class Kind(Generic[T]):
    """A setting's type: how the docs name it, and how a raw value becomes one (a ConfigError naming the variable
    when it cannot)."""

    description: str
    parse: Callable[[str, str], T]  # (variable, raw value) -> value


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One environment variable: where its value goes, its type, who sets it and what it means."""

    name: str  # the environment variable
    into: str  # the field it sets: one of Settings, or "policy.<field>", "metrics.<field>", "slack.<field>"
    kind: Kind[T]
    source: SetBy = SetBy.NOBODY
    parameter: str = ""  # with SetBy.PARAMETER: the template.yaml parameter
    doc: str = field(kw_only=True)  # what it means, for docs/configuration.md
    fallbacks: tuple[str, ...] = ()  # variables read, in order, when this one is unset or empty
    keep_empty: bool = False  # an empty value is taken as it is, not as the default

    def __post_init__(self) -> None:
        if (self.source is SetBy.PARAMETER) != bool(self.parameter):
            raise ValueError(f"{self.name}: a parameter exactly when the source is {SetBy.PARAMETER}")

    def raw(self, env: Mapping[str, str]) -> str | None:
        """The variable's value in `env` (else a fallback's); None where the default applies."""
        for name in (self.name, *self.fallbacks):
            value = env.get(name)
            if value or (value is not None and self.keep_empty):
                return value
        return None

    def parse(self, raw: str) -> T:
        return self.kind.parse(self.name, raw)

    @property
    def default(self) -> object:
        """The default of the field it sets: what an unset variable leaves."""
        section, _, name = self.into.rpartition(".")
        (found,) = (item for item in fields(_SECTIONS.get(section, Settings)) if item.name == name)
        if found.default is not MISSING:
            return found.default
        if found.default_factory is not MISSING:
            return found.default_factory()
        raise TypeError(f"{self.into} has no default")

    @property
    def default_text(self) -> str:
        """The default written as the variable's value (the docs show it; template.yaml's parameter has it)."""
        value = self.default
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, tuple):
            return ",".join(value)
        if isinstance(value, Mapping):
            return ",".join(f"{key}={item}" for key, item in value.items())
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)


def _text(name: str, raw: str) -> str:
    return raw


def _whole_number(name: str, raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from None


def _number(name: str, raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None


def _list(name: str, raw: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def _flag(name: str, raw: str) -> bool:
    return raw.lower() == "true"


def _pairs(name: str, raw: str) -> dict[str, str]:
    """`team-a=Europe/Berlin,team-b=America/New_York` -> {"team-a": "Europe/Berlin", ...}."""
    pairs: dict[str, str] = {}
    for item in _list(name, raw):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"{name} must be comma-separated key=value pairs, got {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def _one_of(choices: type[E]) -> Kind[E]:
    values = [str(member.value) for member in choices]

    def parse(name: str, raw: str) -> E:
        try:
            return choices(raw)
        except ValueError:
            raise ConfigError(f"{name} must be one of {', '.join(values)}") from None

    shown = [f"`{value}`" for value in values]
    return Kind(f"{', '.join(shown[:-1])} or {shown[-1]}" if len(shown) > 1 else shown[0], parse)


TEXT = Kind("text", _text)
WHOLE_NUMBER = Kind("whole number", _whole_number)
NUMBER = Kind("number", _number)
LIST = Kind("comma-separated list", _list)
FLAG = Kind("`true` or `false`", _flag)
PAIRS = Kind("comma-separated `key=value`", _pairs)

PARAM, STACK, LAMBDA = SetBy.PARAMETER, SetBy.STACK, SetBy.LAMBDA
# fmt: off
SETTINGS: tuple[Setting[Any], ...] = (
    # Collection
    Setting("REGIONS", "regions", LIST, PARAM, "Regions",
            doc="Regions analysed in every account (unset: the function's region)."),
    Setting("ACCOUNT_ROLE_ARNS", "account_role_arns", LIST, PARAM, "AccountRoleArns",
            doc="IAM roles assumed in member accounts; none (and no Organizations): this account only."),
    Setting("USE_ORGANIZATIONS", "use_organizations", FLAG, PARAM, "UseOrganizations",
            doc="List the accounts with AWS Organizations and assume `MEMBER_ROLE_NAME` in each."),
    Setting("MEMBER_ROLE_NAME", "member_role_name", TEXT, PARAM, "MemberRoleName", keep_empty=True,
            doc="The collector role's name in Organizations accounts."),
    Setting("COLLECT_SAGEMAKER", "sagemaker", FLAG, PARAM, "CollectSageMaker",
            doc="Also read SageMaker real-time endpoints, notebook instances and training jobs on GPU, Inferentia and "
                "Trainium `ml.*` types (`false`: EC2 hosts and their node groups only)."),
    Setting("LOOKBACK_DAYS", "lookback_days", WHOLE_NUMBER, PARAM, "LookbackDays",
            doc="Days of CloudWatch history collected and judged (from MIN_HISTORY_DAYS, 3, to 62)."),
    Setting("SHARD_SIZE", "shard_size", WHOLE_NUMBER, PARAM, "ShardSize",
            doc="At most this many instances per collect invocation (1-5000)."),
    # Tags
    Setting("MANAGED_TAG_KEY", "managed_tag_key", TEXT, PARAM, "ManagedTagKey",
            doc="One click acts only on hosts tagged `<key>=true` (the action roles' IAM says the same)."),
    Setting("OPT_OUT_TAG", "policy.opt_out_tag", TEXT, PARAM, "OptOutTagKey", keep_empty=True,
            doc="Hosts with this tag are reported as `excluded`, never analysed or acted on (empty: nobody opts out)."),
    Setting("TEAM_TAG_KEY", "policy.team_tag", TEXT, PARAM, "TeamTagKey",
            doc="Hosts with one value of this tag in one zone are a team: consolidated together, scheduled in its "
                "time zone."),
    # Neuron metrics: neuron-monitor's CloudWatch companion lets users pick the names
    Setting("NEURON_NAMESPACE", "metrics.neuron_namespace", TEXT, PARAM, "NeuronNamespace", keep_empty=True,
            doc="The namespace neuron-monitor's CloudWatch companion publishes to."),
    Setting("NEURON_UTILIZATION_METRIC", "metrics.neuron_utilization", TEXT, PARAM, "NeuronUtilizationMetric",
            keep_empty=True, doc="Its NeuronCore utilisation metric (percent)."),
    Setting("NEURON_CORE_DIMENSION", "metrics.neuron_core_dimension", TEXT, PARAM, "NeuronCoreDimension",
            keep_empty=True, doc="Its dimension naming the NeuronCore."),
    # Slack
    Setting("SLACK_CHANNEL", "slack.channel", TEXT, PARAM, "SlackChannel",
            doc="Channel id (`C...`) of the daily report (empty: not posted)."),
    Setting("SLACK_APPROVERS", "slack.approvers", LIST, PARAM, "SlackApprovers",
            doc="Slack user ids allowed to approve."),
    Setting("SLACK_APPROVER_GROUP", "slack.approver_group", TEXT, PARAM, "SlackApproverGroup",
            doc="A Slack user group id (`S...`) whose members may approve."),
    Setting("SLACK_COMMAND", "slack.command", TEXT, PARAM, "SlackCommand", keep_empty=True,
            doc="The slash command the app answers."),
    # One click: report-only, and beyond the home account and region (docs/multi-account.md)
    Setting("ACTIONS_ENABLED", "actions_enabled", FLAG, PARAM, "ActionsEnabled",
            doc="`false`: report-only, for a first deployment: the report and the commands work, no button starts a "
                "workflow and Approve buttons are absent, saying why (`rightsizer act --dry-run` shows the calls)."),
    Setting("ACTION_REGIONS", "action_regions", LIST, PARAM, "ActionRegions",
            doc="Regions besides the home one running a copy of the instance workflow (regional/template.yaml); "
                "advice elsewhere gets no Approve button."),
    Setting("MEMBER_ACTIONS", "member_actions", FLAG, PARAM, "MemberActions",
            doc="One click also acts in member accounts, through their action role (member-account/template.yaml "
                "with `EnableActions=true`)."),
    Setting("MEMBER_ACTION_ROLE_NAME", "member_action_role_name", TEXT, PARAM, "MemberActionRoleName",
            doc="The action role's name in member accounts."),
    Setting("MEMBER_SCHEDULER_ROLE_NAME", "scheduler_role_name", TEXT, PARAM, "MemberSchedulerRoleName",
            doc="The role EventBridge Scheduler runs a member account's stop/start pairs as."),
    Setting("SCHEDULE_TIMEZONE", "schedule_time_zone", TEXT, PARAM, "ScheduleTimezone",
            doc="IANA time zone of the stop/start schedules of teams `TEAM_TIME_ZONES` does not name (the parameter "
                "is also the zone of the stack's own schedules)."),
    Setting("TEAM_TIME_ZONES", "team_time_zones", PAIRS, PARAM, "TeamTimeZones",
            doc="A team's time zone for its stop/start schedules, e.g. `research=Europe/Berlin`."),
    # What the stack creates
    Setting("TABLE_NAME", "table_name", TEXT, STACK, doc="The DynamoDB table."),
    Setting("PLAN_BUCKET", "plan_bucket", TEXT, STACK,
            doc="The S3 bucket of each run's targets (the Distributed Map reads it)."),
    Setting("PIPELINE_STATE_MACHINE_ARN", "pipeline_state_machine_arn", TEXT, STACK, doc="The daily pipeline."),
    Setting("RESIZE_STATE_MACHINE_ARN", "resize_state_machine_arn", TEXT, STACK,
            doc="The home region's instance workflow (resize, stop, schedule)."),
    Setting("HOME_ACCOUNT_ID", "home_account_id", TEXT, STACK,
            doc="The stack's account (unset: `RESIZE_STATE_MACHINE_ARN`'s); other accounts are reached through their "
                "action role."),
    Setting("ACTION_ROLE_ARN", "action_role_arn", TEXT, STACK,
            doc="The home account's action role, which the workflow assumes for EC2 and Scheduler."),
    Setting("SCHEDULER_ROLE_ARN", "scheduler_role_arn", TEXT, STACK,
            doc="The role EventBridge Scheduler runs the home account's pairs as."),
    Setting("SLACK_SECRET_NAME", "slack.secret_name", TEXT, STACK,
            doc="The Secrets Manager secret holding `bot_token` and `signing_secret`."),
    Setting("REGIONAL_TABLE_NAME", "regional_table_name", TEXT, STACK,
            doc="The table (locks, audit) of regional/template.yaml in each other action region."),
    Setting("AWS_REGION", "home_region", TEXT, LAMBDA, fallbacks=("AWS_DEFAULT_REGION",),
            doc="The home region: where the table, secret and state machines live."),
    # Nothing sets these: a function's environment may
    Setting("PRICE_SOURCE", "price_mode", _one_of(PriceMode), keep_empty=True,
            doc="`auto`: the Price List API, else the bundled snapshot; `api`: the API or fail; `snapshot`: never "
                "asks AWS for prices."),
    Setting("RESIZE_POLL_SECONDS", "resize_poll_seconds", WHOLE_NUMBER,
            doc="The instance workflow's wait between EC2 state checks (at most 60)."),
    Setting("SLACK_API_URL", "slack.api_url", TEXT,
            doc="Slack's Web API (GovSlack: `https://slack-gov.com/api/`)."),
    Setting("REPORT_TOP_N", "slack.top_n", WHOLE_NUMBER,
            doc="Recommendations in the daily report's first message (the others in its thread) and in `/gpu top`."),
    Setting("MEMORY_HEADROOM", "policy.memory_headroom", NUMBER,
            doc="A target's GPU memory must hold the observed peak times this (resizes, consolidation)."),
    Setting("MIN_HISTORY_DAYS", "policy.min_days", NUMBER,
            doc="Fewer days of accelerator metrics than this is `insufficient_data`."),
)
# fmt: on

(_HOME_REGION,) = (setting for setting in SETTINGS if setting.into == "home_region")


def environment_region(env: Mapping[str, str] | None = None) -> str | None:
    """The region AWS_REGION or AWS_DEFAULT_REGION names (the CLI's default after --region)."""
    env = os.environ if env is None else env
    return _HOME_REGION.raw(env)


@dataclass(frozen=True)
class Terminal:
    """What the CLI's environment says about the terminal: NO_COLOR (https://no-color.org: set and not empty, no
    colour unless `--color on`), TERM=dumb (no colour either), COLUMNS (the width its table fits, when set)."""

    no_color: bool = False
    dumb: bool = False
    columns: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Terminal:
        env = os.environ if env is None else env
        columns = env.get("COLUMNS", "").strip()
        return cls(
            no_color=bool(env.get("NO_COLOR")),
            dumb=env.get("TERM") == "dumb",
            columns=int(columns) if columns.isascii() and columns.isdigit() and int(columns) > 0 else None,
        )


# =============================================================================================
# docs/configuration.md's list of settings: `python -m rightsizer.settings` rewrites it; a test checks it is current.

README_BEGIN, README_END = "<!-- settings:begin -->", "<!-- settings:end -->"
_SOURCES = {STACK: "the stack", LAMBDA: "Lambda", SetBy.NOBODY: "—"}


def settings_markdown() -> str:
    """docs/configuration.md's table of SETTINGS."""
    rows = ["| Variable | Parameter | Type | Default | Meaning |", "| --- | --- | --- | --- | --- |"]
    for setting in SETTINGS:
        variable = " or ".join(f"`{name}`" for name in (setting.name, *setting.fallbacks))
        source = f"`{setting.parameter}`" if setting.parameter else _SOURCES[setting.source]
        default = f"`{setting.default_text}`" if setting.default_text else "empty"
        rows.append(f"| {variable} | {source} | {setting.kind.description} | {default} | {setting.doc} |")
    return "\n".join(rows) + "\n"


def with_generated_block(text: str, begin: str, end: str, block: str) -> str:
    """`text` with `block` in place of what lies between the markers `begin` and `end`: a generated list in a
    hand-written page (this one's settings, docs/how-it-decides.md's findings)."""
    head, found_begin, rest = text.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not (found_begin and found_end):
        raise ValueError(f"no {begin} ... {end} block")
    return f"{head}{begin}\n{block}{end}{tail}"


def with_settings_markdown(readme: str) -> str:
    """`readme` with the table between README_BEGIN and README_END generated afresh."""
    return with_generated_block(readme, README_BEGIN, README_END, settings_markdown())


def main(argv: Sequence[str] = ()) -> int:
    """`python -m rightsizer.settings [docs/configuration.md]`: regenerate that page's list of settings."""
    from pathlib import Path

    path = Path(argv[0] if argv else "docs/configuration.md")
    readme = path.read_text(encoding="utf-8")
    updated = with_settings_markdown(readme)
    if updated != readme:
        path.write_text(updated, encoding="utf-8")
    print(f"{path}: {'rewritten' if updated != readme else 'already current'} ({len(SETTINGS)} settings)")
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
