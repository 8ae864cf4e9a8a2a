"""The schedule registry follows EventBridge Scheduler (services/schedule_registry.py, adapters/aws/scheduler.py).

Issue 21, item 2: a removal that failed, or a pair deleted by hand, left the registry listing a pair that was gone
and refusing a new schedule with "remove it first". What Scheduler has is the truth; the daily plan corrects the
copy from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import boto3
import pytest

from rightsizer.adapters.aws.scheduler import SchedulerPairs
from rightsizer.adapters.slack.blocks import schedules_message
from rightsizer.domain.schedule_plan import schedule_names
from rightsizer.services.ports import ScheduleRecord, SourceUnavailable
from rightsizer.services.schedule_registry import Reconciled, describe, reconcile_schedules
from tests.factories import NOW
from tests.slack_double import OFFICE_HOURS_PLAN

ACCOUNT, REGION = "111122223333", "eu-west-1"


def record(instance_id: str, *, account_id: str = ACCOUNT, region: str = REGION, **changes: Any) -> ScheduleRecord:
    stop, start = schedule_names(instance_id)
    made = ScheduleRecord(
        account_id=account_id,
        region=region,
        instance_id=instance_id,
        instance_type="g5.xlarge",
        recommendation_id=f"rec-{instance_id}",
        stop_name=stop,
        start_name=start,
        plan=OFFICE_HOURS_PLAN,
        created_by="U0APPROVER",
        created_at=NOW,
    )
    return replace(made, **changes)


@dataclass
class Registry:
    """The ScheduleRegistry port, in memory."""

    records: dict[str, ScheduleRecord] = field(default_factory=dict)

    @classmethod
    def of(cls, *records: ScheduleRecord) -> Registry:
        return cls({r.key: r for r in records})

    def schedules(self) -> list[ScheduleRecord]:
        return list(self.records.values())

    def put_schedule(self, record: ScheduleRecord) -> None:
        self.records[record.key] = record

    def delete_schedule(self, account_id: str, region: str, instance_id: str) -> None:
        self.records.pop(f"{account_id}#{region}#{instance_id}", None)


@dataclass(frozen=True)
class Listing:
    """The SchedulerListing port: the names Scheduler has, or the error it answers."""

    found: frozenset[str] = frozenset()
    error: str | None = None

    def names(self) -> frozenset[str]:
        if self.error:
            raise SourceUnavailable(self.error)
        return self.found


def both(instance_id: str) -> set[str]:
    return set(schedule_names(instance_id))


def test_a_pair_gone_from_scheduler_is_forgotten_and_one_still_there_is_kept() -> None:
    registry = Registry.of(record("i-0kept"), record("i-0gone"), record("i-0other", region="us-east-1"))

    done = reconcile_schedules(registry, Listing(frozenset(both("i-0kept"))), ACCOUNT, REGION)

    assert done.forgotten == ("i-0gone",) and done.incomplete == () and done.unrecorded == ()
    assert sorted(registry.records) == [f"{ACCOUNT}#{REGION}#i-0kept", f"{ACCOUNT}#us-east-1#i-0other"]
    assert registry.records[f"{ACCOUNT}#{REGION}#i-0kept"].missing == ()  # untouched
    assert describe(done) == ["pairs gone from EventBridge Scheduler, forgotten: i-0gone"]


def test_a_pair_with_one_half_left_stays_listed_with_the_half_it_lacks_until_it_is_back() -> None:
    registry = Registry.of(record("i-0half"))
    stop, start = schedule_names("i-0half")

    done = reconcile_schedules(registry, Listing(frozenset({start})), ACCOUNT, REGION)
    assert done.incomplete == ("i-0half",)
    assert registry.schedules()[0].missing == (stop,)

    again = reconcile_schedules(registry, Listing(frozenset({start})), ACCOUNT, REGION)
    assert not again.changed  # the same finding is not written twice

    back = reconcile_schedules(registry, Listing(frozenset({stop, start})), ACCOUNT, REGION)
    assert back.restored == ("i-0half",) and registry.schedules()[0].missing == ()


def test_pairs_scheduler_has_but_the_bot_did_not_record_are_named_not_invented() -> None:
    registry = Registry.of(record("i-0known"))
    found = frozenset(both("i-0known") | both("i-0byhand") | {"rightsizer-weekly-report"})

    done = reconcile_schedules(registry, Listing(found), ACCOUNT, REGION)

    assert done.unrecorded == ("i-0byhand",)  # a schedule not named like a pair half is not a pair
    assert [r.instance_id for r in registry.schedules()] == ["i-0known"]
    assert describe(done) == ["pairs in EventBridge Scheduler the bot did not record: i-0byhand"]


def test_a_scheduler_that_cannot_be_listed_leaves_the_registry_as_it_is_and_says_so() -> None:
    registry = Registry.of(record("i-0kept"))

    done = reconcile_schedules(registry, Listing(error="AccessDeniedException: not authorized"), ACCOUNT, REGION)

    assert done == Reconciled(warning=done.warning) and done.warning is not None
    assert "not checked against EventBridge Scheduler (AccessDeniedException" in done.warning
    assert [r.instance_id for r in registry.schedules()] == ["i-0kept"]


def test_the_registry_is_read_before_scheduler_is_asked() -> None:
    # A pair the workflow creates while the check runs is recorded only after Scheduler has it: read first, the
    # registry cannot hold a record whose pair the later list lacks, unless that pair really went away.
    calls: list[str] = []
    registry = Registry.of(record("i-0kept"))

    class Watching(Registry):
        def schedules(self) -> list[ScheduleRecord]:
            calls.append("registry")
            return super().schedules()

    class Asked(Listing):
        def names(self) -> frozenset[str]:
            calls.append("scheduler")
            return super().names()

    reconcile_schedules(Watching(registry.records), Asked(frozenset(both("i-0kept"))), ACCOUNT, REGION)
    assert calls == ["registry", "scheduler"]


def test_scheduler_and_the_table_through_their_real_adapters(moto_aws: None) -> None:
    from rightsizer.adapters.aws.store import DynamoStore

    table = boto3.resource("dynamodb", region_name="us-east-1").create_table(
        TableName="rightsizer",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in ("PK", "SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    )
    store = DynamoStore(table)
    for instance_id in ("i-0kept", "i-0half", "i-0gone"):
        store.put_schedule(record(instance_id))
    scheduler = boto3.client("scheduler", region_name=REGION)
    target = {"Arn": "arn:aws:scheduler:::aws-sdk:ec2:stopInstances", "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/s"}
    made = [*schedule_names("i-0kept"), schedule_names("i-0half")[1], "someone-elses-schedule"]
    for name in made:
        scheduler.create_schedule(
            Name=name, ScheduleExpression="cron(0 19 ? * MON-FRI *)", FlexibleTimeWindow={"Mode": "OFF"}, Target=target
        )

    pairs = SchedulerPairs(scheduler, REGION)
    assert pairs.names() == frozenset(made[:3])
    done = reconcile_schedules(store, pairs, ACCOUNT, REGION)

    assert done.forgotten == ("i-0gone",) and done.incomplete == ("i-0half",)
    assert store.schedule(ACCOUNT, REGION, "i-0gone") is None
    half = store.schedule(ACCOUNT, REGION, "i-0half")
    assert half is not None and half.missing == (schedule_names("i-0half")[0],)


def test_a_scheduler_that_cannot_be_reached_is_source_unavailable() -> None:
    from botocore.config import Config

    # Nothing listens on the discard port of loopback: the connection is refused at once, no retries.
    client = boto3.client(
        "scheduler",
        region_name=REGION,
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1),
    )
    with pytest.raises(SourceUnavailable, match="EventBridge Scheduler ListSchedules"):
        SchedulerPairs(client, REGION).names()


def test_slack_lists_an_incomplete_pair_with_the_half_it_lacks() -> None:
    stop, _ = schedule_names("i-0half")
    message = schedules_message([record("i-0half", missing=(stop,)), record("i-0kept")])

    texts = [block.to_dict().get("text", {}).get("text", "") for block in message.blocks]
    (half,) = [text for text in texts if "i-0half" in text]
    assert f"EventBridge Scheduler no longer has `{stop}`: Remove deletes what is left" in half
    (kept,) = [text for text in texts if "i-0kept" in text]
    assert "no longer has" not in kept
