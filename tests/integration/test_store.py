"""The DynamoDB store's approval access patterns, on the table template.yaml declares."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
import pytest
from demo.aws_table import create_table_from_template

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.services.ports import Approval

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def approval(rec_id: str) -> Approval:
    return Approval(rec_id, "123456789012", "us-east-1", "i-0123456789abcdef0", "g5.12xlarge", "g5.2xlarge", "U1", NOW)


@pytest.fixture
def store(moto_aws: None) -> DynamoStore:
    table = create_table_from_template(boto3.client("dynamodb", region_name="us-east-1"))
    return DynamoStore(boto3.resource("dynamodb", region_name="us-east-1").Table(table))


def test_an_approval_is_created_once_and_listed_while_open(store: DynamoStore) -> None:
    assert store.create_approval(approval("rec-a")) is True
    assert store.create_approval(approval("rec-a")) is False  # a double click loses the conditional write
    assert store.create_approval(approval("rec-b")) is True
    store.update_approval("rec-b", status="running")

    assert sorted(a.recommendation_id for a in store.pending_approvals()) == ["rec-a", "rec-b"]

    store.update_approval("rec-a", status="succeeded")
    assert [a.recommendation_id for a in store.pending_approvals()] == ["rec-b"]


def test_an_outcome_is_final(store: DynamoStore) -> None:
    store.create_approval(approval("rec-c"))
    store.update_approval("rec-c", status="refused", detail="type changed")

    late = store.update_approval("rec-c", status="running", execution_arn="arn:aws:states:::execution:x")

    assert late.status == "refused" and late.execution_arn == "arn:aws:states:::execution:x"
    assert store.pending_approvals() == []
