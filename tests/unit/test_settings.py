"""Settings.from_env: what each environment variable sets, its default, and the errors that name it; the one table
of settings (SETTINGS) against template.yaml's function environments and parameters, and the list in
docs/configuration.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from rightsizer.domain.policy import Policy
from rightsizer.settings import (
    SETTINGS,
    ConfigError,
    MetricNames,
    PriceMode,
    SetBy,
    Settings,
    SlackSettings,
    environment_region,
    with_settings_markdown,
)
from tests.unit.test_template import functions, sam

CONFIGURATION = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
TABLE = {setting.name: setting for setting in SETTINGS}

EVERY_VARIABLE = {
    "AWS_REGION": "eu-west-1",
    "REGIONS": "eu-west-1, us-west-2",
    "ACCOUNT_ROLE_ARNS": "arn:aws:iam::111122223333:role/a,arn:aws:iam::444455556666:role/b",
    "USE_ORGANIZATIONS": "TRUE",
    "MEMBER_ROLE_NAME": "Collector",
    "LOOKBACK_DAYS": "21",
    "SHARD_SIZE": "250",
    "MANAGED_TAG_KEY": "ops:managed",
    "OPT_OUT_TAG": "ops:ignore",
    "TEAM_TAG_KEY": "squad",
    "NEURON_NAMESPACE": "Neuron",
    "NEURON_UTILIZATION_METRIC": "core_util",
    "NEURON_CORE_DIMENSION": "Core",
    "SLACK_CHANNEL": "C123",
    "SLACK_APPROVERS": "U1, U2",
    "SLACK_APPROVER_GROUP": "S1",
    "SLACK_COMMAND": "/fleet",
    "ACTION_REGIONS": "us-west-2",
    "MEMBER_ACTIONS": "true",
    "MEMBER_ACTION_ROLE_NAME": "Act",
    "MEMBER_SCHEDULER_ROLE_NAME": "Sched",
    "SCHEDULE_TIMEZONE": "Europe/Paris",
    "TEAM_TIME_ZONES": "research=Europe/Berlin",
    "TABLE_NAME": "table",
    "PLAN_BUCKET": "bucket",
    "PIPELINE_STATE_MACHINE_ARN": "arn:aws:states:eu-west-1:111122223333:stateMachine:p",
    "RESIZE_STATE_MACHINE_ARN": "arn:aws:states:eu-west-1:111122223333:stateMachine:r",
    "HOME_ACCOUNT_ID": "111122223333",
    "ACTION_ROLE_ARN": "arn:aws:iam::111122223333:role/action",
    "SCHEDULER_ROLE_ARN": "arn:aws:iam::111122223333:role/scheduler",
    "SLACK_SECRET_NAME": "secret",
    "REGIONAL_TABLE_NAME": "actions",
    "PRICE_SOURCE": "snapshot",
    "RESIZE_POLL_SECONDS": "5",
    "SLACK_API_URL": "https://slack-gov.com/api/",
    "REPORT_TOP_N": "7",
    "MEMORY_HEADROOM": "1.5",
    "MIN_HISTORY_DAYS": "4.5",
}


def test_nothing_set_is_the_typed_defaults() -> None:
    assert Settings.from_env({}) == Settings()


def test_every_variable_lands_in_its_field() -> None:
    settings = Settings.from_env(EVERY_VARIABLE)

    assert settings == Settings(
        regions=("eu-west-1", "us-west-2"),
        lookback_days=21,
        price_mode=PriceMode.SNAPSHOT,
        policy=Policy(
            lookback_days=21,
            memory_headroom=1.5,
            min_days=4.5,
            opt_out_tag="ops:ignore",
            team_tag="squad",
            managed_tag_key="ops:managed",
        ),
        metrics=MetricNames(neuron_namespace="Neuron", neuron_utilization="core_util", neuron_core_dimension="Core"),
        table_name="table",
        account_role_arns=("arn:aws:iam::111122223333:role/a", "arn:aws:iam::444455556666:role/b"),
        use_organizations=True,
        member_role_name="Collector",
        managed_tag_key="ops:managed",
        resize_state_machine_arn="arn:aws:states:eu-west-1:111122223333:stateMachine:r",
        pipeline_state_machine_arn="arn:aws:states:eu-west-1:111122223333:stateMachine:p",
        resize_poll_seconds=5,
        home_region="eu-west-1",
        home_account_id="111122223333",
        slack=SlackSettings(
            secret_name="secret",
            channel="C123",
            approvers=("U1", "U2"),
            approver_group="S1",
            command="/fleet",
            top_n=7,
            api_url="https://slack-gov.com/api/",
        ),
        shard_size=250,
        plan_bucket="bucket",
        action_regions=("us-west-2",),
        member_actions=True,
        member_action_role_name="Act",
        action_role_arn="arn:aws:iam::111122223333:role/action",
        scheduler_role_name="Sched",
        scheduler_role_arn="arn:aws:iam::111122223333:role/scheduler",
        schedule_time_zone="Europe/Paris",
        regional_table_name="actions",
        team_time_zones={"research": "Europe/Berlin"},
    )


def test_regions_default_to_the_functions_region() -> None:
    assert Settings.from_env({"AWS_DEFAULT_REGION": "ap-south-1"}).regions == ("ap-south-1",)
    assert Settings.from_env({"AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"}).home_region == "ap-south-1"
    assert Settings.from_env({"AWS_REGION": "eu-west-1", "REGIONS": " , "}).regions == ("eu-west-1",)


def test_an_empty_value_is_the_default_except_where_empty_means_something() -> None:
    empty = Settings.from_env(dict.fromkeys(EVERY_VARIABLE, "") | {"PRICE_SOURCE": "auto"})

    # An empty value is taken as it is by these (CloudFormation passes an empty parameter as "").
    assert empty.policy.opt_out_tag == "" and empty.member_role_name == "" and empty.slack.command == ""
    assert (empty.metrics.neuron_namespace, empty.metrics.neuron_utilization) == ("", "")
    # ...and means the default everywhere else.
    assert empty.with_overrides(
        policy=Settings().policy,
        member_role_name=Settings.member_role_name,
        slack=SlackSettings(),
        metrics=MetricNames(),
    ) == Settings(price_mode=PriceMode.AUTO)


NEEDS_THREE_DAYS = " (the analyzer needs 3 days of GPU history, MIN_HISTORY_DAYS, to judge a host)"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("LOOKBACK_DAYS", "two weeks", "LOOKBACK_DAYS must be a whole number, got 'two weeks'"),
        ("LOOKBACK_DAYS", "63", "lookback days must be between 3 and 62, got 63" + NEEDS_THREE_DAYS),
        ("LOOKBACK_DAYS", "2", "lookback days must be between 3 and 62, got 2" + NEEDS_THREE_DAYS),
        ("SHARD_SIZE", "0", "SHARD_SIZE must be between 1 and 5000 instances, got 0"),
        ("REPORT_TOP_N", "1.5", "REPORT_TOP_N must be a whole number, got '1.5'"),
        ("MEMORY_HEADROOM", "lots", "MEMORY_HEADROOM must be a number, got 'lots'"),
        ("PRICE_SOURCE", "", "PRICE_SOURCE must be one of auto, api, snapshot"),
        ("PRICE_SOURCE", "cheap", "PRICE_SOURCE must be one of auto, api, snapshot"),
        ("TEAM_TIME_ZONES", "a=UTC,b", "TEAM_TIME_ZONES must be comma-separated key=value pairs, got 'b'"),
    ],
)
def test_a_malformed_value_is_an_error_that_names_the_variable(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({name: value})
    assert str(raised.value) == message


def test_the_shortest_lookback_follows_the_minimum_history() -> None:
    """A window shorter than the history the analyzer needs would judge no host: refused, whatever MIN_HISTORY_DAYS."""
    assert Settings.from_env({"LOOKBACK_DAYS": "5", "MIN_HISTORY_DAYS": "4.5"}).lookback_days == 5
    with pytest.raises(ConfigError, match="between 5 and 62, got 4"):
        Settings.from_env({"LOOKBACK_DAYS": "4", "MIN_HISTORY_DAYS": "4.5"})


def test_the_schedule_group_is_not_a_setting() -> None:
    # The IAM (schedule/default/rightsizer-*) and the schedule registry's listing know only the default group.
    assert Settings.from_env({"SCHEDULE_GROUP": "mine"}).schedule_group == Settings.schedule_group == "default"


def test_the_cli_reads_the_region_as_the_functions_do() -> None:
    assert environment_region({"AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"}) == "ap-south-1"
    assert environment_region({}) is None


def test_the_table_names_each_variable_once_and_sets_a_field_that_exists() -> None:
    names = [name for setting in SETTINGS for name in (setting.name, *setting.fallbacks)]
    assert len(names) == len(set(names))
    assert len({setting.into for setting in SETTINGS}) == len(SETTINGS)
    for setting in SETTINGS:
        assert setting.parse(setting.default_text) == setting.default or setting.default_text == "", setting.name


def _template_environment() -> list[tuple[str, str, Any]]:
    """(where, variable, value) of every variable template.yaml sets: Globals' and each function's."""
    found = [("Globals", *item) for item in sam()["Globals"]["Function"]["Environment"]["Variables"].items()]
    for function, resource in functions().items():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        found += [(function, *item) for item in variables.items()]
    return found


def test_every_variable_a_function_is_given_is_a_setting_and_every_setting_the_stack_sets_is_given() -> None:
    given = [item for item in _template_environment() if not item[1].startswith("POWERTOOLS_")]  # Powertools' own
    parameters = sam()["Parameters"]

    assert {name for _, name, _ in given} == {s.name for s in SETTINGS if s.source in (SetBy.PARAMETER, SetBy.STACK)}
    for where, name, value in given:
        setting = TABLE[name]
        if setting.source is SetBy.PARAMETER:
            assert value == {"Ref": setting.parameter}, (where, name)
        else:  # from what the stack creates, never from a parameter
            assert not (isinstance(value, dict) and value.get("Ref") in parameters), (where, name)


def test_each_parameter_defaults_to_what_its_setting_defaults_to() -> None:
    parameters = sam()["Parameters"]
    for setting in SETTINGS:
        if setting.parameter:
            assert str(parameters[setting.parameter].get("Default", "")) == setting.default_text, setting.name


def test_the_configuration_page_lists_the_settings_as_the_table_generates_them_and_names_every_parameter() -> None:
    page = CONFIGURATION.read_text(encoding="utf-8")

    assert with_settings_markdown(page) == page, "stale: run .venv/bin/python -m rightsizer.settings"
    named = set(re.findall(r"`(\w+)`", page))
    assert not set(sam()["Parameters"]) - named, "template.yaml parameters docs/configuration.md does not name"
