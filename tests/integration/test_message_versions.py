"""Issue 21, item 2, on the template's table: a saved report message is edited only over the version the edit read,
so two edits racing (two Lambda invocations) cannot undo each other."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import boto3
import pytest
from demo.aws_table import create_table_from_template

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.services.ports import PostedMessage

pytestmark = pytest.mark.integration

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def store(moto_aws: None) -> DynamoStore:
    table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
    return DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(table))


def buttons(rec: str) -> dict[str, object]:
    return {"type": "actions", "block_id": f"act:{rec}", "elements": []}


def note(rec: str, text: str) -> dict[str, object]:
    return {"type": "context", "block_id": f"act:{rec}", "elements": [{"type": "mrkdwn", "text": text}]}


def test_an_edit_is_saved_only_over_the_version_it_read(store: DynamoStore) -> None:
    store.save_message(PostedMessage("C1", "1.1", "report", (buttons("a"), buttons("b")), ("a", "b")), NOW)
    first = store.message("C1", "1.1")
    second = store.message("C1", "1.1")  # another invocation read the same copy
    assert first is not None and second is not None and first.version == second.version == 0

    assert store.replace_message_if(replace(first, blocks=(note("a", "A started"), buttons("b"))))
    assert not store.replace_message_if(replace(second, blocks=(buttons("a"), note("b", "B dismissed"))))

    latest = store.message("C1", "1.1")
    assert latest is not None and latest.version == 1
    assert store.replace_message_if(replace(latest, blocks=(note("a", "A started"), note("b", "B dismissed"))))
    saved = store.message("C1", "1.1")
    assert saved is not None and saved.version == 2
    assert [b["type"] for b in saved.blocks] == ["context", "context"]


def test_a_message_never_saved_is_not_created_by_an_edit(store: DynamoStore) -> None:
    assert not store.replace_message_if(PostedMessage("C1", "9.9", "never saved", (), ()))
    assert store.message("C1", "9.9") is None


def test_an_unconditional_replace_moves_the_version_on_so_a_racing_edit_redoes_its_change(store: DynamoStore) -> None:
    store.save_message(PostedMessage("C1", "2.2", "report", (buttons("a"),), ("a",)), NOW)
    read = store.message("C1", "2.2")
    assert read is not None

    store.replace_message(replace(read, blocks=(note("a", "A snoozed"),)))

    assert not store.replace_message_if(replace(read, blocks=(note("a", "A started"),)))
    saved = store.message("C1", "2.2")
    assert saved is not None and saved.version == 1 and "A snoozed" in str(saved.blocks)
