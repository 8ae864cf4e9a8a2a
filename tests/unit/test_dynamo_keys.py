"""The table's key formats have one source (adapters/aws/dynamo/keys.py): the store, the state machines and the IAM
conditions of the templates agree with it."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from demo.aws_table import cloudformation_yaml

from rightsizer.adapters.aws.dynamo import keys
from rightsizer.domain.schedule_plan import SchedulePlan
from rightsizer.services.ports import ScheduleRecord

ROOT = Path(__file__).resolve().parents[2]


def _prefix(template: str) -> str:
    return template.split("{}", 1)[0]


def _leading_keys(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for name, value in node.items():
            found += list(value) if name == "dynamodb:LeadingKeys" else _leading_keys(value)
    elif isinstance(node, list):
        for item in node:
            found += _leading_keys(item)
    return found


def test_keys_fill_their_templates() -> None:
    assert keys.audit_pk("rec-1") == "AUDIT#rec-1"
    assert keys.audit_sk("2026-12-01T12:00:00+00:00", "stopped") == "2026-12-01T12:00:00+00:00#stopped"
    assert keys.audit_time(keys.audit_sk("2026-12-01T12:00:00+00:00", "stopped")) == "2026-12-01T12:00:00+00:00"
    assert keys.lock_key("i-1") == {"PK": "LOCK#i-1", "SK": "LOCK"}
    assert keys.run_pk("2026-12-01") == "RUN#2026-12-01"
    assert keys.FAILED_SK.format("1", "r", "plan").startswith(keys.FAILED_PREFIX)
    assert keys.message_of(keys.message_key("C1", "1.2")[keys.PK]) == ("C1", "1.2")
    assert keys.shown_of(keys.shown_sk("C1", "1.2")) == ("C1", "1.2")
    assert keys.usage_instance(keys.usage_key("run", "1", "r", "i-1")[keys.PK]) == "i-1"


def test_a_schedule_records_key_is_the_registrys_sort_key() -> None:
    plan = SchedulePlan(
        stop_cron="cron(0 19 ? * MON-FRI *)",
        start_cron="cron(0 7 ? * MON-FRI *)",
        time_zone="UTC",
        description="weekdays",
    )
    at = datetime(2026, 12, 1, tzinfo=UTC)
    record = ScheduleRecord("111122223333", "eu-west-1", "i-1", "g5.xlarge", "rec-1", "s", "t", plan, "U1", at)
    assert keys.schedule_key("111122223333", "eu-west-1", "i-1") == {"PK": keys.SCHEDULE, "SK": record.key}


def test_the_pipeline_writes_its_failures_under_these_keys() -> None:
    text = (ROOT / "statemachine" / "pipeline.asl.json").read_text()
    partitions = set(re.findall(r"\"PK\": \{ \"S.\$\": \"States.Format\('([^']*)'", text))
    sorts = set(re.findall(r"\"SK\": \{ \"S.\$\": \"States.Format\('([^']*)'", text))
    assert partitions == {keys.RUN_PK}
    assert sorts == {keys.FAILED_SK, keys.FAILED_SK.rsplit("{}", 1)[0] + "plan"}


def test_iam_leading_keys_name_these_partitions() -> None:
    known = {keys.SCHEDULE} | {_prefix(t) + "*" for t in (keys.AUDIT_PK, keys.LOCK_PK, keys.RUN_PK)}
    for path in ("template.yaml", "regional/template.yaml"):
        leading = _leading_keys(cloudformation_yaml((ROOT / path).read_text()))
        assert leading, path
        assert set(leading) <= known, path
