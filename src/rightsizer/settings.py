"""The one typed settings object. Configuration is read here, once, and never at import time."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from rightsizer.domain.policy import DEFAULT_MANAGED_TAG_KEY, Policy
from rightsizer.domain.scope import ACTION_ROLE_NAME, ActionScope


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
    gpu_index_dimension: str = "index"
    host_memory_used_pct: str = "mem_used_percent"
    instance_dimension: str = "InstanceId"
    instance_type_dimension: str = "InstanceType"
    # neuron-monitor's CloudWatch companion lets users pick names: all three are configurable.
    neuron_namespace: str = "NeuronMonitor"
    neuron_utilization: str = "neuroncore_utilization"
    neuron_core_dimension: str = "NeuronCore"


@dataclass(frozen=True)
class SlackSettings:
    secret_name: str = ""  # Secrets Manager secret holding bot_token and signing_secret
    channel: str = ""  # where the daily report goes
    approvers: tuple[str, ...] = ()  # Slack user ids allowed to approve
    approver_group: str = ""  # or a Slack user group id
    command: str = "/gpu"
    top_n: int = 10
    api_url: str = "https://slack.com/api/"  # GovSlack: https://slack-gov.com/api/; the demo: a local double


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
    # One-click actions beyond the home account and region (docs/multi-account.md)
    action_regions: tuple[str, ...] = ()  # regions with an instance workflow (the home region always has one)
    member_actions: bool = False  # member accounts may deploy the action role (member-account/template.yaml)
    member_action_role_name: str = ACTION_ROLE_NAME
    action_role_arn: str = ""  # the home account's action role (the workflow assumes it for EC2 and Scheduler)
    scheduler_role_name: str = "GpuRightsizerScheduler"  # what EventBridge Scheduler runs a member's pair as
    scheduler_role_arn: str = ""  # ...and in the home account
    schedule_group: str = "default"  # the EventBridge Scheduler group of every pair (IAM scopes rightsizer-* in it)
    schedule_time_zone: str = "UTC"  # schedules' default time zone (the stack's ScheduleTimezone)
    regional_table_name: str = ""  # regional/template.yaml's table (locks, audit) in each other action region
    team_time_zones: Mapping[str, str] = field(default_factory=dict)  # team tag value -> IANA time zone

    def __post_init__(self) -> None:
        if self.policy.managed_tag_key != self.managed_tag_key:
            # One key for the workflow's check and the analyzer's: the report offers one click exactly where the
            # workflow may act. The settings' key wins (it is what the stack passes the workflow).
            object.__setattr__(self, "policy", replace(self.policy, managed_tag_key=self.managed_tag_key))
        if not self.regions:
            raise ConfigError("at least one region is required")
        if not 1 <= self.shard_size <= 5000:
            raise ConfigError(f"SHARD_SIZE must be between 1 and 5000 instances, got {self.shard_size}")
        if not 1 <= self.lookback_days <= 62:
            # CloudWatch keeps 5-minute data for 63 days.
            raise ConfigError(f"lookback days must be between 1 and 62, got {self.lookback_days}")

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
        )

    @property
    def report_scope(self) -> ActionScope | None:
        """The action scope reports and Slack judge one click by; None while the home account is unknown (no
        HOME_ACCOUNT_ID and no workflow ARN), where nothing is ruled out of reach."""
        return self.action_scope if self.home_account else None

    def time_zone_of(self, team: str) -> str:
        """A team's time zone for its schedules: TEAM_TIME_ZONES, else the stack's ScheduleTimezone."""
        return self.team_time_zones.get(team, self.schedule_time_zone)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings for a Lambda function, from its environment variables (see template.yaml)."""
        env = os.environ if env is None else env
        lookback = _int(env, "LOOKBACK_DAYS", 14)
        policy = Policy(
            lookback_days=lookback,
            memory_headroom=_float(env, "MEMORY_HEADROOM", Policy.memory_headroom),
            min_days=_float(env, "MIN_HISTORY_DAYS", Policy.min_days),
            opt_out_tag=env.get("OPT_OUT_TAG", Policy.opt_out_tag),
            team_tag=env.get("TEAM_TAG_KEY") or Policy.team_tag,
        )
        metrics = MetricNames(
            neuron_namespace=env.get("NEURON_NAMESPACE", MetricNames.neuron_namespace),
            neuron_utilization=env.get("NEURON_UTILIZATION_METRIC", MetricNames.neuron_utilization),
            neuron_core_dimension=env.get("NEURON_CORE_DIMENSION", MetricNames.neuron_core_dimension),
        )
        slack = SlackSettings(
            secret_name=env.get("SLACK_SECRET_NAME", ""),
            channel=env.get("SLACK_CHANNEL", ""),
            approvers=_list(env, "SLACK_APPROVERS"),
            approver_group=env.get("SLACK_APPROVER_GROUP", ""),
            command=env.get("SLACK_COMMAND", "/gpu"),
            top_n=_int(env, "REPORT_TOP_N", 10),
            api_url=env.get("SLACK_API_URL") or SlackSettings.api_url,
        )
        try:
            price_mode = PriceMode(env.get("PRICE_SOURCE", "auto"))
        except ValueError:
            raise ConfigError("PRICE_SOURCE must be one of auto, api, snapshot") from None
        default_region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        return cls(
            regions=_list(env, "REGIONS") or (default_region,),
            lookback_days=lookback,
            price_mode=price_mode,
            policy=policy,
            metrics=metrics,
            table_name=env.get("TABLE_NAME", ""),
            account_role_arns=_list(env, "ACCOUNT_ROLE_ARNS"),
            use_organizations=env.get("USE_ORGANIZATIONS", "false").lower() == "true",
            member_role_name=env.get("MEMBER_ROLE_NAME", "GpuRightsizerCollector"),
            managed_tag_key=env.get("MANAGED_TAG_KEY") or DEFAULT_MANAGED_TAG_KEY,
            resize_state_machine_arn=env.get("RESIZE_STATE_MACHINE_ARN", ""),
            pipeline_state_machine_arn=env.get("PIPELINE_STATE_MACHINE_ARN", ""),
            resize_poll_seconds=_int(env, "RESIZE_POLL_SECONDS", 30),
            home_region=default_region,
            home_account_id=env.get("HOME_ACCOUNT_ID", ""),
            slack=slack,
            shard_size=_int(env, "SHARD_SIZE", 500),
            plan_bucket=env.get("PLAN_BUCKET", ""),
            action_regions=_list(env, "ACTION_REGIONS"),
            member_actions=env.get("MEMBER_ACTIONS", "false").lower() == "true",
            member_action_role_name=env.get("MEMBER_ACTION_ROLE_NAME") or ACTION_ROLE_NAME,
            action_role_arn=env.get("ACTION_ROLE_ARN", ""),
            scheduler_role_name=env.get("MEMBER_SCHEDULER_ROLE_NAME") or Settings.scheduler_role_name,
            scheduler_role_arn=env.get("SCHEDULER_ROLE_ARN", ""),
            schedule_group=env.get("SCHEDULE_GROUP") or Settings.schedule_group,
            schedule_time_zone=env.get("SCHEDULE_TIMEZONE") or "UTC",
            team_time_zones=_pairs(env, "TEAM_TIME_ZONES"),
            regional_table_name=env.get("REGIONAL_TABLE_NAME", ""),
        )


def environment_region(env: Mapping[str, str] | None = None) -> str | None:
    """The region AWS_REGION or AWS_DEFAULT_REGION names (the CLI's default after --region)."""
    env = os.environ if env is None else env
    return env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None


def _list(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in env.get(name, "").split(",") if item.strip())


def _pairs(env: Mapping[str, str], name: str) -> dict[str, str]:
    """`team-a=Europe/Berlin,team-b=America/New_York` -> {"team-a": "Europe/Berlin", ...}."""
    pairs: dict[str, str] = {}
    for item in _list(env, name):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"{name} must be comma-separated key=value pairs, got {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from None


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
