"""The daily pipeline keeps its word under faults: the real state machine executed by moto, the real Collect, Analyze
and Report handlers behind it, AWS faults answered in front of moto (tests/faults.py) and Slack's errors by its
double. Each test names the fault, then what the pipeline must still leave behind."""

from __future__ import annotations

from typing import Any

import pytest

from tests.faults import injected
from tests.integration.fault_world import fault_world

pytestmark = pytest.mark.integration


def _pk(item: dict[str, Any]) -> str:
    return str(item["PK"]["S"])


# 1. A retried shard leaves every record -----------------------------------------------------------------------------


def test_a_shard_cut_after_its_latest_items_landed_is_retried_and_leaves_every_by_id_copy_and_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DynamoDB processes the part of a batch it likes: of the first batch of advice, only the latest items land and
    the rest come back unprocessed; the function is cut while boto3 resends them. The Map retries the shard."""
    with fault_world(monkeypatch) as world, injected() as faults:
        faults.partial_batch_then_cut(
            first=lambda item: _pk(item).startswith(("LATEST#", "REC#", "INSTANCE#")),
            lands=lambda item: _pk(item).startswith("LATEST#"),
        )
        outcome = world.run_day()

        assert outcome["status"] == "SUCCEEDED", outcome
        assert faults.seen["BatchWriteItem"] >= 1, "the fault met the shard's advice"
        failed = [r for r in world.local.results("collect", "collect") if isinstance(r, str)]
        assert len(failed) == 1 and "Cut" in failed[0], "one attempt was cut, and the Map retried it"
        checked = 0
        for key, seeded in world.seeded.items():
            rec = world.latest(key)
            assert rec is not None, key
            # What Approve reads (by id), and what `/gpu show` and the report page's history read.
            assert world.store.recommendation(rec.recommendation_id) == rec, f"{key}: by-id copy missing"
            assert world.store.history(rec.account_id, rec.region, seeded.instance_id), f"{key}: history missing"
            checked += 1
        assert checked == len(world.seeded)
