"""Issue 21, item 4: names and tags reach Slack as one visible line. Newlines, tabs, bidi overrides (U+202E...) and
zero-width characters in a Name tag are shown as escapes in every Block Kit text, and mrkdwn stays escaped."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from rightsizer.adapters.slack import blocks
from rightsizer.domain.models.advice import Alternative, Confidence
from rightsizer.services.report import build_report
from tests.slack_double import NOW, idle, no_data, recommendation, schedulable, schedule_record

# Shown reversed ("exe.txt") by a bidi override, with a forged second line and hidden characters.
NAME = "train\ning *run*\t<!channel>\u202eexe.txt\u200b\u2066x\u2069\u2028end"
SHOWN = "train\\ning *run*\\t&lt;!channel&gt;\\u202eexe.txt\\u200b\\u2066x\\u2069\\u2028end"
SHOWN_START = "train\\ning *run*\\t&lt;!channel&gt;\\u202eexe"  # lists shorten names to 50-60 characters
HIDDEN = {"Cf", "Cs", "Zl", "Zp"}


def strings(part: Any) -> Iterator[str]:
    if isinstance(part, str):
        yield part
    elif isinstance(part, dict):
        for value in part.values():
            yield from strings(value)
    elif isinstance(part, list | tuple):
        for value in part:
            yield from strings(value)


def mrkdwn(part: Any) -> Iterator[str]:
    if isinstance(part, dict):
        if part.get("type") == "mrkdwn":
            yield str(part["text"])
        for value in part.values():
            yield from mrkdwn(value)
    elif isinstance(part, list | tuple):
        for value in part:
            yield from mrkdwn(value)


def assert_clean(payload: Any) -> None:
    for text in strings(payload):
        assert not [c for c in text if unicodedata.category(c) in HIDDEN], text
        assert "\t" not in text and "\r" not in text, text
        for line in text.split("\n"):
            assert not line.startswith("ing *run*"), f"the name forged a line: {text!r}"
    for text in mrkdwn(payload):
        assert "<!channel>" not in text, text  # mrkdwn escaping kept


def shows(payload: Any, text: str) -> bool:
    return any(text in value for value in strings(payload))


def named(rec: Any) -> Any:
    return replace(
        rec,
        instance_name=NAME,
        reasons=(f"the host {NAME} is idle",),
        alternatives=(Alternative("g5.xlarge", None, Confidence.LOW, f"for {NAME}"),),
    )


def test_the_daily_report_shows_the_name_as_one_visible_line() -> None:
    recs = [named(recommendation(1)), named(idle(2)), named(no_data(3))]
    report = build_report(recs, NOW, 14, warnings=[f"account 1 not analysed: {NAME}"])

    payloads = [m.payload() for m in blocks.daily_report_messages(report, [], top_n=10)]

    assert_clean(payloads)
    assert shows(payloads, f"*{SHOWN_START}"), "the name, escaped for mrkdwn, with every hidden character made visible"
    assert shows(payloads, f"the host {SHOWN} is idle"), "reasons quoting a tag too"
    assert shows(payloads, "not analysed: train\\ning"), "and warnings"


@pytest.mark.parametrize("make", [recommendation, idle, schedulable])
def test_show_why_top_and_the_approve_confirmation_show_the_name_as_one_visible_line(make: Any) -> None:
    rec = named(make(4))

    detail = blocks.detail_message(rec, now=NOW).payload()
    why = blocks.why_message(rec).payload()
    top = [m.payload() for m in blocks.top_messages(build_report([rec], NOW, 14), [], 5, NOW)]
    confirm = blocks.approve_confirm(rec).to_dict()

    for payload in (detail, why, top, confirm):
        assert_clean(payload)
    assert detail["blocks"][0]["type"] == "header" and "train\\ning" in detail["blocks"][0]["text"]["text"]
    assert "train\\ning *run*\\t<!channel>\\u202e" in confirm["text"]["text"], "plain text: no mrkdwn escaping"


def test_the_schedules_listing_shows_the_name_as_one_visible_line() -> None:
    record = replace(schedule_record(schedulable(5)), instance_name=NAME)

    payload = blocks.schedules_message([record]).payload()

    assert_clean(payload)
    assert shows(payload, SHOWN_START)


def test_ordinary_names_are_untouched() -> None:
    rec = replace(recommendation(6), instance_name="Модель-α 🚀 (prod)")

    assert "*Модель-α 🚀 (prod)*" in blocks.recommendation_section(rec).to_dict()["text"]["text"]
