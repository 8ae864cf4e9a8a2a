"""DynamoDB single-table store: runs, usage summaries, recommendations, decisions, approvals, audit.

Key design (PK / SK), one access pattern each:
  RUN                         / <run>                          runs, newest first (latest run)
  RUN#<run>                   / TARGETS                         the (account, region) targets planned
  RUN#<run>                   / REGION#<acct>#<region>          a region's instances, catalog, prices
  RUN#<run>                   / USAGE#<acct>#<region>#<id>      one instance's usage summary
  PRICES                      / <region>                        weekly Price List API cache
  LATEST                      / <acct>#<region>#<id>            latest recommendation per instance
  REC#<rec id>                / REC                             a recommendation by id (Slack buttons)
  INSTANCE#<acct>#<region>#<id> / REC#<run>                     one instance's history
  DECISIONS                   / <acct>#<region>#<id>#<kind>#<rec>  snoozes and dismissals
  APPROVAL#<rec id>           / APPROVAL                        one approval (GSI1: pending ones)
  AUDIT#<rec id>              / <iso time>#<event>              the audit trail of one recommendation
  SLACKREQ#<digest>           / SLACKREQ                        replay guard for Slack requests
  MESSAGE#<channel>#<ts>      / MESSAGE                         a posted report message (to edit it later)
  SHOWN#<rec id>              / <channel>#<ts>                  the messages showing a recommendation's buttons
  REPORTPOST#<post key>       / <index>                         a daily report's posted messages (to resume)
  LOCK#<instance id>          / LOCK                            the instance workflow's per-instance lock
  SCHEDULE                    / <acct>#<region>#<id>            a stop/start schedule pair the workflow created
  IDEMPOTENCY#<function>      / <function>#<hash>               Powertools idempotency records
Items that expire carry `expiration` (epoch seconds), the table's TTL attribute, which Powertools'
idempotency records use as well.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from rightsizer.adapters import bundled
from rightsizer.adapters.codec import from_jsonable, to_jsonable
from rightsizer.domain.approval import ApprovalStatus, sources_of
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import Commitments
from rightsizer.domain.models import Instance, InstanceTypeSpec, Recommendation, UsageSummary
from rightsizer.domain.prices import PriceBook
from rightsizer.services.ports import (
    Approval,
    ApprovalUpdate,
    AuditEntry,
    Decision,
    PostedMessage,
    ScheduleRecord,
    Window,
)

if TYPE_CHECKING:  # the Slack app loads this module on its cold-start path: no collectors at import
    from rightsizer.services.collect import RegionData

TTL_ATTRIBUTE = "expiration"
RUN_RETENTION = timedelta(days=35)
HISTORY_RETENTION = timedelta(days=400)
RECOMMENDATION_RETENTION = timedelta(days=90)
AUDIT_RETENTION = timedelta(days=800)
MESSAGE_RETENTION = timedelta(days=30)
OPEN_APPROVALS = "APPROVAL#PENDING"  # GSI1 partition of the approvals still waiting for an outcome
# Approval fields that change after creation; each is an attribute of its own (see create_approval).
_APPROVAL_MUTABLE = ("status", "detail", "execution_arn", "slack_channel", "slack_ts")


def _pack(value: Any) -> bytes:
    # Usage summaries and catalogs are repetitive JSON: zlib keeps items far below DynamoDB's 400 KB.
    return zlib.compress(json.dumps(to_jsonable(value), separators=(",", ":")).encode(), 6)


def _unpack(blob: Any) -> Any:
    raw = blob.value if hasattr(blob, "value") else blob
    return json.loads(zlib.decompress(bytes(raw)))


def _expires(now: datetime, keep: timedelta) -> int:
    return int((now + keep).timestamp())


def _instance_key(account_id: str, region: str, instance_id: str) -> str:
    return f"{account_id}#{region}#{instance_id}"


def _message_item(message: PostedMessage) -> dict[str, Any]:
    return {
        "PK": f"MESSAGE#{message.channel}#{message.ts}",
        "SK": "MESSAGE",
        "text": message.text,
        "blocks": _pack(list(message.blocks)),
        "recommendation_ids": list(message.recommendation_ids),
    }


def _message_of(item: Mapping[str, Any]) -> PostedMessage:
    channel, _, ts = str(item["PK"]).removeprefix("MESSAGE#").partition("#")
    return PostedMessage(
        channel=channel,
        ts=ts,
        text=str(item.get("text", "")),
        blocks=tuple(_unpack(item["blocks"])),
        recommendation_ids=tuple(str(r) for r in item.get("recommendation_ids", [])),
    )


def _approval_attributes(approval: Approval) -> dict[str, str]:
    return {name: str(to_jsonable(getattr(approval, name))) for name in _APPROVAL_MUTABLE}


def _approval_of(item: Mapping[str, Any]) -> Approval:
    fields = json.loads(item["data"])
    fields.update({name: str(item[name]) for name in _APPROVAL_MUTABLE if name in item})
    return from_jsonable(Approval, fields)


class DynamoStore:
    """All persistent state of the bot. `table` is a boto3 DynamoDB Table resource."""

    def __init__(self, table: Any) -> None:
        self._table = table

    @classmethod
    def from_name(cls, session: Any, table_name: str, region: str) -> DynamoStore:
        return cls(session.resource("dynamodb", region_name=region).Table(table_name))

    # -- queries -------------------------------------------------------------------------------

    def _query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        while True:
            page = self._table.query(**kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._table.get_item(Key={"PK": pk, "SK": sk}, ConsistentRead=True).get("Item")
        return item

    # -- runs and collected data ---------------------------------------------------------------

    def put_run(self, run: str, targets: Sequence[Mapping[str, str]], now: datetime) -> None:
        expiration = _expires(now, RUN_RETENTION)
        with self._table.batch_writer(overwrite_by_pkeys=["PK", "SK"]) as batch:
            batch.put_item(Item={"PK": "RUN", "SK": run, TTL_ATTRIBUTE: expiration})
            batch.put_item(
                Item={
                    "PK": f"RUN#{run}",
                    "SK": "TARGETS",
                    "targets": json.dumps(list(targets)),
                    TTL_ATTRIBUTE: expiration,
                }
            )

    def runs(self, limit: int = 7) -> list[str]:
        """Run names, newest first."""
        items = self._table.query(KeyConditionExpression=Key("PK").eq("RUN"), ScanIndexForward=False, Limit=limit)
        return [str(item["SK"]) for item in items.get("Items", [])]

    def latest_run(self) -> str | None:
        """The newest run that collected at least one region (a day whose collection failed is skipped)."""
        for run in self.runs():
            found = self._table.query(
                KeyConditionExpression=Key("PK").eq(f"RUN#{run}") & Key("SK").begins_with("REGION#"),
                Limit=1,
                ProjectionExpression="PK",
            )
            if found.get("Items"):
                return run
        return None

    def put_region(self, run: str, data: RegionData) -> None:
        """Store one (account, region) collection. Same run, same keys: a re-run overwrites, never duplicates."""
        expiration = _expires(data.collected_at, RUN_RETENTION)
        scope = f"{data.account_id}#{data.region}"
        snapshot = {
            "account_id": data.account_id,
            "region": data.region,
            "collected_at": data.collected_at,
            "window": data.window,
            "instances": list(data.instances),
            "specs": list(data.catalog.specs.values()),
            "offered": None if data.catalog.offered is None else sorted(data.catalog.offered),
            "prices": data.prices,
            "warnings": list(data.warnings),
            "commitments": data.commitments,
        }
        with self._table.batch_writer(overwrite_by_pkeys=["PK", "SK"]) as batch:
            batch.put_item(Item={"PK": "RUN", "SK": run, TTL_ATTRIBUTE: expiration})  # also for ad-hoc runs
            batch.put_item(
                Item={"PK": f"RUN#{run}", "SK": f"REGION#{scope}", "data": _pack(snapshot), TTL_ATTRIBUTE: expiration}
            )
            for instance_id, summary in data.usage.items():
                batch.put_item(
                    Item={
                        "PK": f"RUN#{run}",
                        "SK": f"USAGE#{scope}#{instance_id}",
                        "data": _pack(summary),
                        TTL_ATTRIBUTE: expiration,
                    }
                )

    def regions(self, run: str) -> list[RegionData]:
        from rightsizer.services.collect import RegionData

        snapshots = list(
            self._query(KeyConditionExpression=Key("PK").eq(f"RUN#{run}") & Key("SK").begins_with("REGION#"))
        )
        usage: dict[str, dict[str, UsageSummary]] = {}
        for item in self._query(KeyConditionExpression=Key("PK").eq(f"RUN#{run}") & Key("SK").begins_with("USAGE#")):
            _, account_id, region, instance_id = str(item["SK"]).split("#", 3)
            usage.setdefault(f"{account_id}#{region}", {})[instance_id] = from_jsonable(
                UsageSummary, _unpack(item["data"])
            )
        result = []
        for item in snapshots:
            raw = _unpack(item["data"])
            specs = [from_jsonable(InstanceTypeSpec, s) for s in raw["specs"]]
            catalog = Catalog(
                region=raw["region"],
                specs={spec.instance_type: spec for spec in specs},
                accelerators=bundled.accelerator_table(),
                offered=None if raw["offered"] is None else frozenset(raw["offered"]),
            )
            result.append(
                RegionData(
                    account_id=raw["account_id"],
                    region=raw["region"],
                    collected_at=datetime.fromisoformat(raw["collected_at"]),
                    window=from_jsonable(Window, raw["window"]),
                    instances=tuple(from_jsonable(Instance, i) for i in raw["instances"]),
                    catalog=catalog,
                    prices=from_jsonable(PriceBook, raw["prices"]),
                    usage=usage.get(f"{raw['account_id']}#{raw['region']}", {}),
                    warnings=tuple(raw["warnings"]),
                    # Collections stored before commitments were read have none: savings at list price.
                    commitments=from_jsonable(Commitments, raw.get("commitments") or {}),
                )
            )
        return result

    # -- prices --------------------------------------------------------------------------------

    def put_prices(self, region: str, prices: Mapping[str, Decimal], source: str, now: datetime) -> None:
        self._table.put_item(
            Item={
                "PK": "PRICES",
                "SK": region,
                "prices": {k: str(v) for k, v in prices.items()},
                "source": source,
                "fetched_at": now.isoformat(),
            }
        )

    def prices(self, region: str) -> tuple[dict[str, Decimal], str, datetime] | None:
        item = self._get("PRICES", region)
        if item is None:
            return None
        prices = {k: Decimal(str(v)) for k, v in item["prices"].items()}
        return prices, str(item["source"]), datetime.fromisoformat(item["fetched_at"])

    # -- recommendations -----------------------------------------------------------------------

    def put_recommendations(
        self, run: str, account_id: str, region: str, recommendations: Sequence[Recommendation], now: datetime
    ) -> None:
        """Replace the region's latest recommendations; keep history and the by-id copies."""
        scope = f"{account_id}#{region}#"
        fresh = {_instance_key(r.account_id, r.region, r.instance_id) for r in recommendations}
        stale = [
            item["SK"]
            for item in self._query(
                KeyConditionExpression=Key("PK").eq("LATEST") & Key("SK").begins_with(scope),
                ProjectionExpression="PK, SK",
            )
            if item["SK"] not in fresh
        ]
        with self._table.batch_writer(overwrite_by_pkeys=["PK", "SK"]) as batch:
            for sk in stale:  # terminated hosts leave the latest view
                batch.delete_item(Key={"PK": "LATEST", "SK": sk})
            for rec in recommendations:
                data = _pack(rec)
                key = _instance_key(rec.account_id, rec.region, rec.instance_id)
                batch.put_item(Item={"PK": "LATEST", "SK": key, "run": run, "data": data})
                batch.put_item(
                    Item={
                        "PK": f"REC#{rec.recommendation_id}",
                        "SK": "REC",
                        "run": run,
                        "data": data,
                        TTL_ATTRIBUTE: _expires(now, RECOMMENDATION_RETENTION),
                    }
                )
                batch.put_item(
                    Item={
                        "PK": f"INSTANCE#{key}",
                        "SK": f"REC#{run}",
                        "data": data,
                        TTL_ATTRIBUTE: _expires(now, HISTORY_RETENTION),
                    }
                )

    def latest_recommendations(self, account_id: str | None = None, region: str | None = None) -> list[Recommendation]:
        condition: Any = Key("PK").eq("LATEST")
        if account_id:
            prefix = f"{account_id}#{region}#" if region else f"{account_id}#"
            condition = condition & Key("SK").begins_with(prefix)
        return [
            from_jsonable(Recommendation, _unpack(item["data"]))
            for item in self._query(KeyConditionExpression=condition)
        ]

    def latest_for_instance(self, instance_id: str) -> Recommendation | None:
        for rec in self.latest_recommendations():
            if rec.instance_id == instance_id:
                return rec
        return None

    def recommendation(self, recommendation_id: str) -> Recommendation | None:
        item = self._get(f"REC#{recommendation_id}", "REC")
        return None if item is None else from_jsonable(Recommendation, _unpack(item["data"]))

    def is_current(self, rec: Recommendation) -> bool:
        """True when `rec` is still the latest advice for its instance (the buttons act only on that)."""
        item = self._get("LATEST", _instance_key(rec.account_id, rec.region, rec.instance_id))
        if item is None:
            return False
        latest = from_jsonable(Recommendation, _unpack(item["data"]))
        return latest.recommendation_id == rec.recommendation_id

    def history(self, account_id: str, region: str, instance_id: str, limit: int = 30) -> list[Recommendation]:
        items = self._table.query(
            KeyConditionExpression=Key("PK").eq(f"INSTANCE#{_instance_key(account_id, region, instance_id)}")
            & Key("SK").begins_with("REC#"),
            ScanIndexForward=False,
            Limit=limit,
        ).get("Items", [])
        return [from_jsonable(Recommendation, _unpack(item["data"])) for item in items]

    # -- decisions -----------------------------------------------------------------------------

    def put_decision(self, decision: Decision) -> None:
        key = _instance_key(decision.account_id, decision.region, decision.instance_id)
        sort_key = f"{key}#{decision.kind}#{decision.recommendation_id or '*'}"
        keep_until = decision.until or (decision.at + RECOMMENDATION_RETENTION)
        self._table.put_item(
            Item={
                "PK": "DECISIONS",
                "SK": sort_key,
                "data": json.dumps(to_jsonable(decision)),
                TTL_ATTRIBUTE: int(keep_until.timestamp()),
            }
        )

    def active_decisions(self, now: datetime) -> list[Decision]:
        decisions = [
            from_jsonable(Decision, json.loads(item["data"]))
            for item in self._query(KeyConditionExpression=Key("PK").eq("DECISIONS"))
        ]
        # TTL deletion lags by up to days: filter expired snoozes here too.
        return [d for d in decisions if d.until is None or d.until > now]

    # -- approvals and audit -------------------------------------------------------------------

    def create_approval(self, approval: Approval) -> bool:
        """Record an approval once. False when this recommendation was already approved."""
        item = {
            "PK": f"APPROVAL#{approval.recommendation_id}",
            "SK": "APPROVAL",
            # What an approval is (who, what, when) never changes; its mutable fields are attributes of
            # their own, so that updates are conditional UpdateItems instead of read-then-put.
            "data": json.dumps({k: v for k, v in to_jsonable(approval).items() if k not in _APPROVAL_MUTABLE}),
            **{name: value for name, value in _approval_attributes(approval).items() if value},
            "GSI1PK": OPEN_APPROVALS,
            "GSI1SK": approval.approved_at.isoformat(),
        }
        try:
            self._table.put_item(Item=item, ConditionExpression=Attr("PK").not_exists())
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def approval(self, recommendation_id: str) -> Approval | None:
        item = self._get(f"APPROVAL#{recommendation_id}", "APPROVAL")
        return None if item is None else _approval_of(item)

    def update_approval(
        self,
        recommendation_id: str,
        *,
        status: ApprovalStatus | None = None,
        detail: str | None = None,
        execution_arn: str | None = None,
        slack_channel: str | None = None,
        slack_ts: str | None = None,
    ) -> ApprovalUpdate:
        """One conditional UpdateItem (see ports.ApprovalRecords): the condition lists the statuses the
        lifecycle lets `status` replace; when it fails, the same update runs without status and detail."""
        always: dict[str, str] = {}
        if slack_channel is not None:
            always["slack_channel"] = slack_channel
        if slack_ts is not None:
            always["slack_ts"] = slack_ts
        if status is not None:
            moving = {"status": status.value, **({"detail": detail} if detail is not None else {})}
            try:
                return ApprovalUpdate(self._update_approval(recommendation_id, always, execution_arn, moving), True)
            except ClientError as error:
                if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                # Either the lifecycle refused the move, or there is no such approval: tell them apart.
        item = self._update_approval(recommendation_id, always, execution_arn, {})
        return ApprovalUpdate(item, False)

    def _update_approval(
        self, recommendation_id: str, always: Mapping[str, str], execution_arn: str | None, moving: Mapping[str, str]
    ) -> Approval:
        key = {"PK": f"APPROVAL#{recommendation_id}", "SK": "APPROVAL"}
        names: dict[str, str] = {"#pk": "PK"}
        values: dict[str, Any] = {}
        sets: list[str] = []
        for number, (name, value) in enumerate({**always, **moving}.items()):
            names[f"#f{number}"], values[f":f{number}"] = name, value
            sets.append(f"#f{number} = :f{number}")
        if execution_arn:  # written once: a second execution never replaces the first one's ARN
            names["#arn"], values[":arn"] = "execution_arn", execution_arn
            sets.append("#arn = if_not_exists(#arn, :arn)")
        if not sets:
            found = self._get(key["PK"], key["SK"])
            if found is None:
                raise KeyError(recommendation_id)
            return _approval_of(found)
        expression, condition = f"SET {', '.join(sets)}", "attribute_exists(#pk)"
        if moving:
            requested = ApprovalStatus(moving["status"])
            sources = sorted(sources_of(requested))
            names["#status"] = "status"
            values.update({f":from{n}": source.value for n, source in enumerate(sources)})
            condition += f" AND #status IN ({', '.join(f':from{n}' for n in range(len(sources)))})"
            if requested.terminal:  # sparse index: only open approvals are listed
                expression += " REMOVE GSI1PK, GSI1SK"
        try:
            answer = self._table.update_item(
                Key=key,
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if not moving and error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise KeyError(recommendation_id) from None
            raise
        return _approval_of(answer["Attributes"])

    def pending_approvals(self) -> list[Approval]:
        """Approvals still waiting for an outcome (pending, start_failed, running)."""
        return [
            _approval_of(item)
            for item in self._query(IndexName="GSI1", KeyConditionExpression=Key("GSI1PK").eq(OPEN_APPROVALS))
        ]

    def audit(self, entry: AuditEntry) -> None:
        self._table.put_item(
            Item={
                "PK": f"AUDIT#{entry.recommendation_id}",
                "SK": f"{entry.at.isoformat()}#{entry.event}",
                "actor": entry.actor,
                "event": entry.event,
                "detail": entry.detail,
                TTL_ATTRIBUTE: _expires(entry.at, AUDIT_RETENTION),
            }
        )

    def audit_log(self, recommendation_id: str) -> list[AuditEntry]:
        entries = []
        for item in self._query(KeyConditionExpression=Key("PK").eq(f"AUDIT#{recommendation_id}")):
            at = str(item["SK"]).rsplit("#", 1)[0]
            entries.append(
                AuditEntry(
                    recommendation_id=recommendation_id,
                    at=datetime.fromisoformat(at),
                    actor=str(item.get("actor", "")),
                    event=str(item.get("event", "")),
                    detail=str(item.get("detail", "")),
                )
            )
        return entries

    # -- Slack messages the bot posted ----------------------------------------------------------

    def save_message(self, message: PostedMessage, now: datetime, *, post_key: str = "", index: int = 0) -> None:
        """Keep a posted message (and which recommendations it shows); with `post_key`, also note it as
        message `index` of that report post, so that a retried post resumes after it."""
        key = f"{message.channel}#{message.ts}"
        expiration = _expires(now, MESSAGE_RETENTION)
        with self._table.batch_writer(overwrite_by_pkeys=["PK", "SK"]) as batch:
            batch.put_item(Item={**_message_item(message), TTL_ATTRIBUTE: expiration})
            for recommendation_id in message.recommendation_ids:
                batch.put_item(Item={"PK": f"SHOWN#{recommendation_id}", "SK": key, TTL_ATTRIBUTE: expiration})
            if post_key:
                batch.put_item(
                    Item={
                        "PK": f"REPORTPOST#{post_key}",
                        "SK": f"{index:04d}",
                        "ts": message.ts,
                        TTL_ATTRIBUTE: expiration,
                    }
                )

    def replace_message(self, message: PostedMessage) -> None:
        """Store an edited copy of a message saved before (nothing happens for a message never saved)."""
        item = _message_item(message)
        try:
            self._table.update_item(
                Key={"PK": item["PK"], "SK": item["SK"]},
                UpdateExpression="SET #text = :text, #blocks = :blocks",
                ConditionExpression=Attr("PK").exists(),
                ExpressionAttributeNames={"#text": "text", "#blocks": "blocks"},
                ExpressionAttributeValues={":text": item["text"], ":blocks": item["blocks"]},
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise

    def message(self, channel: str, ts: str) -> PostedMessage | None:
        item = self._get(f"MESSAGE#{channel}#{ts}", "MESSAGE")
        return None if item is None else _message_of(item)

    def messages_showing(self, recommendation_id: str) -> list[PostedMessage]:
        found = []
        for shown in self._query(KeyConditionExpression=Key("PK").eq(f"SHOWN#{recommendation_id}")):
            channel, _, ts = str(shown["SK"]).partition("#")
            message = self.message(channel, ts)
            if message is not None:
                found.append(message)
        return found

    def report_progress(self, post_key: str) -> dict[int, str]:
        """The messages of report post `post_key` already in Slack: index -> ts."""
        items = self._query(KeyConditionExpression=Key("PK").eq(f"REPORTPOST#{post_key}"), ConsistentRead=True)
        return {int(item["SK"]): str(item["ts"]) for item in items}

    # -- the resize workflow's per-instance lock -------------------------------------------------

    def release_instance_lock(self, instance_id: str, holder: str) -> bool:
        """Delete the lock the resize state machine took for `instance_id`, if `holder` (an execution ARN)
        still holds it. The state machine releases it at each end it can catch; this is for the others."""
        try:
            self._table.delete_item(
                Key={"PK": f"LOCK#{instance_id}", "SK": "LOCK"},
                ConditionExpression=Attr("holder").eq(holder),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    # -- stop/start schedules the instance workflow created ------------------------------------------

    def put_schedule(self, record: ScheduleRecord) -> None:
        """Record a schedule pair (the notifier, when the workflow reports it created). Idempotent."""
        self._table.put_item(Item={"PK": "SCHEDULE", "SK": record.key, "data": json.dumps(to_jsonable(record))})

    def schedule(self, account_id: str, region: str, instance_id: str) -> ScheduleRecord | None:
        item = self._get("SCHEDULE", _instance_key(account_id, region, instance_id))
        return None if item is None else from_jsonable(ScheduleRecord, json.loads(item["data"]))

    def schedules(self) -> list[ScheduleRecord]:
        items = self._query(KeyConditionExpression=Key("PK").eq("SCHEDULE"))
        return [from_jsonable(ScheduleRecord, json.loads(item["data"])) for item in items]

    def delete_schedule(self, account_id: str, region: str, instance_id: str) -> None:
        self._table.delete_item(Key={"PK": "SCHEDULE", "SK": _instance_key(account_id, region, instance_id)})

    # -- Slack replay guard ----------------------------------------------------------------------

    def claim_request(self, digest: str, now: datetime, keep: timedelta = timedelta(minutes=10)) -> bool:
        """True the first time a signed Slack request is seen; False for a replay or a retry."""
        try:
            self._table.put_item(
                Item={"PK": f"SLACKREQ#{digest}", "SK": "SLACKREQ", TTL_ATTRIBUTE: _expires(now, keep)},
                ConditionExpression=Attr("PK").not_exists(),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True
