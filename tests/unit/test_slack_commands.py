"""The slash command's registry: every verb parses to a typed command, the help and the manifest's usage hint
come from `COMMANDS`, and each button reads its value with its own parser."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from slack_bolt import Ack as BoltAck
from slack_bolt import Respond as BoltRespond

from rightsizer.adapters.slack import blocks, buttons, commands
from rightsizer.adapters.slack.buttons.button import ScheduleKey
from rightsizer.adapters.slack.commands import COMMANDS, Reply, manifest
from rightsizer.adapters.slack.commands.report import Report
from rightsizer.adapters.slack.commands.schedules import Schedules
from rightsizer.adapters.slack.commands.show import Show
from rightsizer.adapters.slack.commands.snooze import Snooze
from rightsizer.adapters.slack.commands.top import Top
from rightsizer.adapters.slack.commands.verb import Defaults
from rightsizer.adapters.slack.commands.why import Why
from rightsizer.adapters.slack.deps import Ack, Respond
from rightsizer.domain.models import Finding
from rightsizer.domain.resources import ResourceKind
from rightsizer.services.showback import Filters
from tests.slack_double import NOW, schedulable, schedule_record

TOP_EXAMPLE = "`top 5 finding=idle team=search min-savings=100 tag=env=prod kind=ec2`"

ROOT = Path(__file__).resolve().parents[2]
HELP = (
    "*/gpu*: GPU right-sizing. Commands:\n"
    "• `/gpu report`: the fleet summary\n"
    "• `/gpu top [N] [finding=… team=… tag=KEY=VALUE min-savings=… kind=…]`: the N biggest savings, with buttons "
    "(default 10, at most 25), of those the filters keep\n"
    "• `/gpu show <instance-id>`: one host's advice and evidence\n"
    "• `/gpu why <instance-id>`: the reasoning behind the advice\n"
    "• `/gpu snooze <instance-id> <duration>`: hide a host's advice for e.g. 12h, 3d or 2w (at most 90d)\n"
    "• `/gpu schedules`: the stop/start schedules approved here, each with a Remove button\n"
    "• `/gpu help`: this message\n"
    "Approve (a resize, a stop or a schedule), dismiss or snooze with the buttons under each recommendation."
)


# -- parsing (the ack path) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("report", Report()),
        ("schedules", Schedules()),
        ("top", Top(10)),
        ("TOP 3", Top(3)),
        (
            "top 5 finding=idle team=search tag=env=prod min-savings=$1,500 kind=ec2 finding=schedulable",
            Top(
                5,
                Filters(
                    findings=frozenset({Finding.IDLE, Finding.SCHEDULABLE}),
                    min_savings=Decimal(1500),
                    teams=frozenset({"search"}),
                    tags=(("env", "prod"),),
                    kinds=frozenset({ResourceKind.EC2}),
                ),
            ),
        ),
        ("top team=ml", Top(10, Filters(teams=frozenset({"ml"})))),
        ("show i-0123456789abcdef0", Show("i-0123456789abcdef0")),
        ("why  I-0123456789ABCDEF0", Why("i-0123456789abcdef0")),
        ("snooze i-0123456789abcdef0 2w", Snooze("i-0123456789abcdef0", timedelta(weeks=2))),
        ("snooze i-01234567 3 days", Snooze("i-01234567", timedelta(days=3))),
    ],
)
def test_each_verb_parses_to_its_own_typed_command(text: str, parsed: commands.Command) -> None:
    assert commands.parse(text) == parsed


@pytest.mark.parametrize(
    "resource", ["sagemaker-endpoint/chat-Summarizer/AllTraffic", "sagemaker-notebook/nb-1", "eks-nodegroup/ml/gpu"]
)
def test_show_and_why_take_the_id_of_any_kind_of_resource_as_written(resource: str) -> None:
    assert commands.parse(f"show {resource}") == Show(resource)
    assert commands.parse(f"why {resource}") == Why(resource)


def test_top_defaults_to_the_configured_count() -> None:
    assert commands.parse("top", Defaults(top_n=4)) == Top(4)


@pytest.mark.parametrize("text", ["", "help", "?", "-h", "--help", "HELP me"])
def test_help_is_answered_in_the_acknowledgement(text: str) -> None:
    assert commands.parse(text) == Reply(HELP)


def needs_an_id(verb: str, example: str, got: str = "") -> str:
    seen = f" (got `{got}`)" if got else ""
    return (
        f"`{verb}` needs an EC2 instance id or a resource id{seen}, e.g. `{example}` or "
        f"`{verb} sagemaker-endpoint/<endpoint>/<variant>`."
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("top zero", f"`top` takes a number and filters written name=value (got `zero`), e.g. {TOP_EXAMPLE}."),
        ("top 0", f"`top` takes a positive number, e.g. {TOP_EXAMPLE}."),
        ("top ¹", f"`top` takes a number and filters written name=value (got `¹`), e.g. {TOP_EXAMPLE}."),
        (
            "top 5 finding=busy",
            "`top`: no finding 'busy': one of idle, overprovisioned, underprovisioned, "
            "not_gpu_bound, schedulable, optimized, insufficient_data, excluded, consolidate, left_running, gpu_lost, "
            "held_unused.",
        ),
        ("top min-savings=lots", "`top`: min-savings 'lots' is not an amount of dollars a month (e.g. 100 or $1,500)."),
        ("top colour=red", "`top`: no filter 'colour': use finding, min-savings, team, tag, kind."),
        ("show", needs_an_id("show", "show i-0123456789abcdef0")),
        ("show banana", needs_an_id("show", "show i-0123456789abcdef0", "banana")),
        ("why i-012 extra", needs_an_id("why", "why i-0123456789abcdef0", "i-012")),
        ("why i-0123456789abcdef0 extra", "`why` takes a single instance id."),
        ("snooze", needs_an_id("snooze", "snooze i-0123456789abcdef0 3d")),
        ("snooze i-0123456789abcdef0", "`snooze` needs a duration after the instance id, e.g. 12h, 3d or 2w."),
        ("snooze i-0123456789abcdef0 91d", "a snooze can last at most 90 days."),
        ("snooze i-0123456789abcdef0 soon", "`soon` is not a duration: use hours, days or weeks, e.g. 12h, 3d, 2w."),
        ("report now", "`report` takes no arguments."),
        ("schedules all", "`schedules` takes no arguments."),
        ("<!channel> hello", "I don't know `&lt;!channel&gt;`."),
    ],
)
def test_malformed_commands_explain_themselves_before_the_help(text: str, error: str) -> None:
    assert commands.parse(text) == Reply(f"{error}\n\n{HELP}")


# -- one registry: help, manifest ----------------------------------------------------------------------------


def test_every_verb_is_in_the_help_and_the_usage_hint_under_one_name() -> None:
    words = [word for verb in COMMANDS.values() for word in (verb.name, *verb.aliases)]
    assert len(words) == len(set(words))
    assert all(name == verb.name for name, verb in COMMANDS.items())
    for verb in COMMANDS.values():
        assert f"• `/gpu {verb.usage}`: {verb.summary}" in commands.help_text("/gpu")
        assert verb.usage in commands.usage_hint().split(" | ")


def test_the_manifest_carries_the_usage_hint_the_registry_generates() -> None:
    text = (ROOT / manifest.MANIFEST).read_text(encoding="utf-8")
    [slash] = yaml.safe_load(text)["features"]["slash_commands"]

    assert slash["usage_hint"] == commands.usage_hint()
    assert manifest.regenerated(text) == text, "run: python -m rightsizer.adapters.slack.commands.manifest"


def test_regenerating_the_manifest_rewrites_only_its_usage_hint(tmp_path: Path) -> None:
    original = (ROOT / manifest.MANIFEST).read_text(encoding="utf-8")
    stale = original.replace(json.dumps(commands.usage_hint()), '"help | report"')
    path = tmp_path / "manifest.yaml"
    path.write_text(stale, encoding="utf-8")

    assert manifest.main([str(path)]) == 0

    assert path.read_text(encoding="utf-8") == original


# -- buttons --------------------------------------------------------------------------------------------------


def test_every_button_the_blocks_build_has_a_handler() -> None:
    action_ids = {value for name, value in vars(blocks).items() if name.startswith("ACTION_")}

    assert set(buttons.BUTTONS) == action_ids


def test_the_remove_button_carries_a_schedule_key_not_a_recommendation_id() -> None:
    key = ScheduleKey.parse("123456789012#eu-west-1#i-0123456789abcdef0")

    assert key == ScheduleKey("123456789012", "eu-west-1", "i-0123456789abcdef0")
    assert str(key) == "123456789012#eu-west-1#i-0123456789abcdef0"
    record = schedule_record(schedulable(3), NOW)
    [listed] = [b["accessory"] for b in blocks.schedules_message([record]).payload()["blocks"] if "accessory" in b]
    remove = buttons.BUTTONS[listed["action_id"]]
    assert remove.value_of(listed["value"]) == ScheduleKey(record.account_id, record.region, record.instance_id)
    for forged in ("", "rec-1", "1#2", "1##3", "1#2#3#4"):
        assert ScheduleKey.parse(forged) is None


def test_bolts_ack_and_respond_are_what_the_listeners_call() -> None:
    def typed(ack: BoltAck, respond: BoltRespond) -> tuple[Ack, Respond]:
        return ack, respond  # mypy checks Bolt's callables against the protocols

    ack, _ = typed(BoltAck(), BoltRespond(response_url=None))  # type: ignore[no-untyped-call]
    ack(response_type="ephemeral", text="hi")
