"""DynamoDB single-table store: runs, usage summaries, recommendations, decisions, approvals, audit.

Key design (PK / SK), one access pattern each. No item grows with the fleet, and the per-instance items have
a partition each, so a day's writes spread over the table instead of queueing on a few hot keys:
  RUN                         / <run>                          runs, newest first (latest run)
  RUN#<run>                   / REGION#<acct>#<region>          a planned (account, region), with its shard count
  RUN#<run>                   / RANK#<acct>#<region>#<shard>    one shard's ranking (merged into RANKING)
  RUN#<run>                   / FAILED#<acct>#<region>#<shard>  a shard (or a plan: shard "plan") that failed
  SCOPE#<run>#<acct>#<region> / CONTEXT                         a region's catalog, prices and window
  SCOPE#<run>#<acct>#<region> / SHARD#<shard>                   the instances of one shard
  USAGE#<run>#<acct>#<region>#<id> / USAGE                      one instance's usage summary
  PRICES                      / <region>                        weekly Price List API cache
  LATEST#<id>                 / LATEST                          latest recommendation of an instance (Slack
                                                                `show`/`why`/`snooze`, buttons); GSI1:
                                                                LATEST#<bucket> / <acct>#<region>#<id> lists them
  RANKING                     / LATEST                          the fleet's ranking (`top`, `report`, the post)
  REC#<rec id>                / REC                             a recommendation by id (Slack buttons)
  INSTANCE#<acct>#<region>#<id> / REC#<run>                     one instance's history (runs that changed it)
  DECISION#<id>               / snooze | dismiss#<rec id>       a host's snooze, a dismissal of one piece of
                                                                advice (`show` reads the two that can hide its
                                                                advice by key); GSI1: DECISIONS /
                                                                <acct>#<region>#<id>#<kind>#<rec> lists them
  APPROVAL#<rec id>           / APPROVAL                        one approval (GSI1: pending ones)
  AUDIT#<rec id>              / <iso time>#<event>              the audit trail of one recommendation
  SLACKREQ#<digest>           / SLACKREQ                        replay guard for Slack requests
  MESSAGE#<channel>#<ts>      / MESSAGE                         a posted report message (to edit it later;
                                                                `version` counts its edits: conditional writes)
  SHOWN#<rec id>              / <channel>#<ts>                  the messages showing a recommendation's buttons
  REPORTPOST#<post key>       / <index>                         a daily report's posted messages (to resume)
  LOCK#<instance id>          / LOCK                            the instance workflow's per-instance lock
  SCHEDULE                    / <acct>#<region>#<id>            a stop/start schedule pair the workflow created
  IDEMPOTENCY#<function>      / <function>#<hash>               Powertools idempotency records
Items that expire carry `expiration` (epoch seconds), the table's TTL attribute, which Powertools'
idempotency records use as well. Every key is built by adapters/aws/dynamo/keys.py, the one source of these
formats (the state machines' audit, lock and failure items take theirs from it too).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from rightsizer.adapters import bundled
from rightsizer.adapters.aws.dynamo import keys
from rightsizer.adapters.codec import from_jsonable, to_jsonable
from rightsizer.domain.approval import RETRYABLE, ApprovalStatus, sources_of
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import Commitments, CoverRef
from rightsizer.domain.findings import Finding
from rightsizer.domain.guards import Gap
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import Resize, UsageSummary
from rightsizer.domain.platforms import LINUX, Billing
from rightsizer.domain.prices import PriceBook
from rightsizer.services.ports import (
    Approval,
    ApprovalUpdate,
    AuditEntry,
    Decision,
    PostedMessage,
    ScheduleRecord,
    Window,
    Written,
)
from rightsizer.services.since import Prior, SinceLastTime, TrendPoint

if TYPE_CHECKING:  # the Slack app loads this module on its cold-start path: no collectors at import
    from rightsizer.services.collect import PlannedShard, RegionContext
    from rightsizer.services.ranking import Ranking
    from rightsizer.services.sagemaker import SageMakerData

TTL_ATTRIBUTE = "expiration"
RUN_RETENTION = timedelta(days=35)
HISTORY_RETENTION = timedelta(days=400)
RECOMMENDATION_RETENTION = timedelta(days=90)
AUDIT_RETENTION = timedelta(days=800)
MESSAGE_RETENTION = timedelta(days=30)
OPEN_APPROVALS = keys.OPEN_APPROVALS  # GSI1 partition of the approvals still waiting for an outcome
DECISIONS = keys.DECISIONS  # GSI1 partition listing the snoozes and dismissals
LATEST_BUCKETS = 16  # GSI1 partitions listing the latest recommendations: writes spread, listing is 16 queries
BATCH_GET = 100  # BatchGetItem's limit
# Approval fields that change after creation; each is an attribute of its own (see create_approval).
_APPROVAL_MUTABLE = (
    "status",
    "detail",
    "execution_arn",
    "slack_channel",
    "slack_ts",
    # A retry is a new attempt by whoever retried it, when they did.
    "attempt",
    "approver",
    "approved_at",
)


def _pack(value: Any) -> bytes:
    # Usage summaries and catalogs are repetitive JSON: zlib keeps items far below DynamoDB's 400 KB.
    return zlib.compress(json.dumps(to_jsonable(value), separators=(",", ":")).encode(), 6)


def _unpack(blob: Any) -> Any:
    raw = blob.value if hasattr(blob, "value") else blob
    return json.loads(zlib.decompress(bytes(raw)))


def _expires(now: datetime, keep: timedelta) -> int:
    return int((now + keep).timestamp())


_T = TypeVar("_T")
CONDITION_FAILED = "ConditionalCheckFailedException"
# The usage item of a region's SageMaker resources sits beside its hosts' (no instance id starts so).
SAGEMAKER_USAGE = "sagemaker"


def _unless_condition_fails(write: Callable[[], _T]) -> _T | None:
    """`write()`'s answer, or None when DynamoDB refused it on its ConditionExpression; other errors raise."""
    try:
        return write()
    except ClientError as error:
        if error.response["Error"]["Code"] == CONDITION_FAILED:
            return None
        raise


def _in_force(decisions: Iterable[Decision], now: datetime) -> list[Decision]:
    # TTL deletion lags by up to days: expired snoozes are filtered here too.
    return [d for d in decisions if d.until is None or d.until > now]


def _digest(rec: Recommendation) -> str:
    """What the advice says, without when it was computed: equal digests, nothing to rewrite."""
    content = to_jsonable(rec)
    content.pop("generated_at", None)
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]


def _prior(item: Mapping[str, Any], run: str) -> Prior | None:
    """The advice an instance had in the run before `run`: the latest item's own when an earlier run wrote it, else
    (this run rewrote it: a re-run, the catch-up) the earlier advice it kept. None: none known (a host that came, or
    advice stored before findings were kept on the item)."""
    if str(item.get("run", "")) == run:
        kept = item.get("prior")
        return from_jsonable(Prior, json.loads(str(kept))) if kept else None
    if not item.get("finding"):
        return None
    return Prior(
        str(item["recommendation_id"]),
        Finding(str(item["finding"])),
        Decimal(str(item.get("net", "0"))),
        str(item.get("name", "")),
    )


def _prior_item(prior: Prior | None) -> dict[str, str]:
    return {} if prior is None else {"prior": json.dumps(to_jsonable(prior), separators=(",", ":"))}


def _context_item(context: RegionContext) -> dict[str, Any]:
    catalog = context.catalog
    return {
        "account_id": context.account_id,
        "region": context.region,
        "collected_at": context.collected_at,
        "window": context.window,
        "specs": list(catalog.specs.values()),
        "offered": None if catalog.offered is None else sorted(catalog.offered),
        "prices": context.prices,
        "warnings": list(context.warnings),
        "accelerators": context.accelerators,
        "commitments": context.commitments,
        # The shards cut each host's series at its recorded resize: the plan read it, the shards need it.
        "resizes": dict(context.resizes),
        # What the plan could not read: the shards hold back the one clicks it guards (domain/guards.py).
        "gaps": list(context.gaps),
    }


def _context_of(raw: Mapping[str, Any]) -> RegionContext:
    from rightsizer.services.collect import RegionContext

    specs = [from_jsonable(InstanceTypeSpec, s) for s in raw["specs"]]
    return RegionContext(
        account_id=raw["account_id"],
        region=raw["region"],
        collected_at=datetime.fromisoformat(raw["collected_at"]),
        window=from_jsonable(Window, raw["window"]),
        catalog=Catalog(
            region=raw["region"],
            specs={spec.instance_type: spec for spec in specs},
            accelerators=bundled.accelerator_table(),  # bundled data: the same in every function
            offered=None if raw["offered"] is None else frozenset(raw["offered"]),
        ),
        prices=from_jsonable(PriceBook, raw["prices"]),
        warnings=tuple(raw["warnings"]),
        accelerators=int(raw.get("accelerators", 0)),
        # Plans stored before commitments were read have none: savings at list price.
        commitments=from_jsonable(Commitments, raw.get("commitments") or {}),
        resizes={iid: from_jsonable(Resize, value) for iid, value in (raw.get("resizes") or {}).items()},
        gaps=tuple(from_jsonable(Gap, gap) for gap in raw.get("gaps") or ()),
    )


def _shard_item(
    scope: str,
    index: int,
    instances: Sequence[Instance],
    covers: Mapping[str, CoverRef],
    expiration: int,
    gone: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        **keys.key(scope, keys.shard_sk(index)),
        "data": _pack(list(instances)),
        "covers": _pack({i.instance_id: covers[i.instance_id] for i in instances if i.instance_id in covers}),
        **({"gone": list(gone)} if gone else {}),
        TTL_ATTRIBUTE: expiration,
    }


def _message_item(message: PostedMessage) -> dict[str, Any]:
    return {
        **keys.message_key(message.channel, message.ts),
        "text": message.text,
        "blocks": _pack(list(message.blocks)),
        "recommendation_ids": list(message.recommendation_ids),
    }


def _message_of(item: Mapping[str, Any]) -> PostedMessage:
    channel, ts = keys.message_of(str(item[keys.PK]))
    return PostedMessage(
        channel=channel,
        ts=ts,
        text=str(item.get("text", "")),
        blocks=tuple(_unpack(item["blocks"])),
        recommendation_ids=tuple(str(r) for r in item.get("recommendation_ids", [])),
        version=int(item.get("version", 0)),  # saved before edits were versioned: 0
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
        return self._item(keys.key(pk, sk))

    def _item(self, key: keys.Key) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._table.get_item(Key=key, ConsistentRead=True).get("Item")
        return item

    # -- runs and collected data ---------------------------------------------------------------

    def put_run(self, run: str, now: datetime) -> None:
        self._table.put_item(Item={**keys.key(keys.RUNS, run), TTL_ATTRIBUTE: _expires(now, RUN_RETENTION)})

    def runs(self, limit: int = 7) -> list[str]:
        """Run names, newest first."""
        items = self._table.query(
            KeyConditionExpression=Key(keys.PK).eq(keys.RUNS), ScanIndexForward=False, Limit=limit
        )
        return [str(item[keys.SK]) for item in items.get("Items", [])]

    def latest_run(self) -> str | None:
        """The newest run that planned at least one region (a day whose collection failed is skipped)."""
        for run in self.runs():
            if self._table.query(
                KeyConditionExpression=Key(keys.PK).eq(keys.run_pk(run)) & Key(keys.SK).begins_with(keys.REGION_PREFIX),
                Limit=1,
                ProjectionExpression=keys.PK,
            ).get("Items"):
                return run
        return None

    def put_region(
        self,
        run: str,
        context: RegionContext,
        shards: Sequence[Sequence[Instance]],
        covers: Mapping[str, CoverRef] | None = None,
    ) -> None:
        """A region's plan: its context once (with its commitments), each shard's instances and what covers each
        on the bill, then the marker that lists the region in the run. Same run, same keys: a re-planned region
        overwrites, never duplicates."""
        covers = covers or {}
        expiration = _expires(context.collected_at, RUN_RETENTION)
        scope = keys.scope_pk(run, context.account_id, context.region)
        with self._table.batch_writer(overwrite_by_pkeys=[keys.PK, keys.SK]) as batch:
            batch.put_item(Item={**keys.key(keys.RUNS, run), TTL_ATTRIBUTE: expiration})  # also for ad-hoc runs
            batch.put_item(
                Item={**keys.key(scope, keys.CONTEXT), "data": _pack(_context_item(context)), TTL_ATTRIBUTE: expiration}
            )
            for index, instances in enumerate(shards):
                batch.put_item(Item=_shard_item(scope, index, instances, covers, expiration))
        # The marker last, once its context and shards are all in: a plan cut half-way is no plan.
        self._table.put_item(
            Item={
                **keys.key(keys.run_pk(run), keys.region_sk(context.account_id, context.region)),
                "shards": len(shards),
                TTL_ATTRIBUTE: expiration,
            }
        )

    def put_shard(self, run: str, context: RegionContext, index: int, shard: PlannedShard) -> None:
        """One planned shard again, as its hosts are now (the collecting shard described them again): its retries
        and the catch-up analysis then read the hosts that are still there, and those that are gone."""
        scope = keys.scope_pk(run, context.account_id, context.region)
        expiration = _expires(context.collected_at, RUN_RETENTION)
        self._table.put_item(
            Item=_shard_item(scope, index, shard.instances, shard.covers, expiration, sorted(shard.gone))
        )

    def region(self, run: str, account_id: str, region: str) -> tuple[RegionContext, int] | None:
        """A planned region's context and its number of shards."""
        marker = self._get(keys.run_pk(run), keys.region_sk(account_id, region))
        item = self._get(keys.scope_pk(run, account_id, region), keys.CONTEXT)
        if marker is None or item is None:
            return None
        return _context_of(_unpack(item["data"])), int(marker.get("shards", 0))

    def shard(self, run: str, account_id: str, region: str, index: int) -> PlannedShard:
        """A planned shard: its instances, what covers each of them on the bill, the hosts gone since the plan."""
        from rightsizer.services.collect import PlannedShard

        item = self._get(keys.scope_pk(run, account_id, region), keys.shard_sk(index))
        if item is None:
            return PlannedShard()
        instances = tuple(from_jsonable(Instance, i) for i in _unpack(item["data"]))
        refs = _unpack(item["covers"]) if "covers" in item else {}  # plans written before covers were: none
        covers = {iid: from_jsonable(CoverRef, ref) for iid, ref in refs.items()}
        return PlannedShard(instances, covers, tuple(str(iid) for iid in item.get("gone", ())))

    def previous_members(self, run: str, account_id: str, region: str) -> set[str] | None:
        """Instance ids of the region in the newest earlier run that planned it (None: no such run kept)."""
        for earlier in self.runs(limit=40):
            if earlier >= run:
                continue
            marker = self._get(keys.run_pk(earlier), keys.region_sk(account_id, region))
            if marker is None:
                continue
            return {
                i.instance_id
                for index in range(int(marker.get("shards", 0)))
                for i in self.shard(earlier, account_id, region, index).instances
            }
        return None

    def put_usage(self, run: str, context: RegionContext, usage: Mapping[str, UsageSummary]) -> None:
        expiration = _expires(context.collected_at, RUN_RETENTION)
        with self._table.batch_writer(overwrite_by_pkeys=[keys.PK, keys.SK]) as batch:
            for instance_id, summary in usage.items():
                batch.put_item(
                    Item={
                        **keys.usage_key(run, context.account_id, context.region, instance_id),
                        "data": _pack(summary),
                        TTL_ATTRIBUTE: expiration,
                    }
                )

    def usage(self, run: str, account_id: str, region: str, instance_ids: Sequence[str]) -> dict[str, UsageSummary]:
        """Usage summaries of these instances, read by key."""
        found = self._batch_get([keys.usage_key(run, account_id, region, iid) for iid in instance_ids])
        return {
            keys.usage_instance(str(item[keys.PK])): from_jsonable(UsageSummary, _unpack(item["data"]))
            for item in found
        }

    def put_sagemaker(self, run: str, data: SageMakerData, collected_at: datetime) -> None:
        """A region's SageMaker resources and summaries, for the catch-up's analysis (one item: they are few)."""
        self._table.put_item(
            Item={
                **keys.usage_key(run, data.account_id, data.region, SAGEMAKER_USAGE),
                "data": _pack(data),
                TTL_ATTRIBUTE: _expires(collected_at, RUN_RETENTION),
            }
        )

    def sagemaker(self, run: str, account_id: str, region: str) -> SageMakerData | None:
        from rightsizer.services.sagemaker import SageMakerData

        item = self._item(keys.usage_key(run, account_id, region, SAGEMAKER_USAGE))
        return from_jsonable(SageMakerData, _unpack(item["data"])) if item is not None else None

    def put_shard_ranking(
        self, run: str, account_id: str, region: str, index: int, ranking: Ranking, now: datetime
    ) -> None:
        self._table.put_item(
            Item={
                **keys.key(keys.run_pk(run), keys.rank_sk(account_id, region, index)),
                "data": _pack(ranking),
                TTL_ATTRIBUTE: _expires(now, RUN_RETENTION),
            }
        )

    def shard_rankings(self, run: str) -> list[Ranking]:
        from rightsizer.services.ranking import Ranking

        items = self._query(
            KeyConditionExpression=Key(keys.PK).eq(keys.run_pk(run)) & Key(keys.SK).begins_with(keys.RANK_PREFIX)
        )
        return [from_jsonable(Ranking, _unpack(item["data"])) for item in items]

    def failures(self, run: str) -> list[dict[str, str]]:
        """The shards (and plans) the pipeline recorded as failed in `run`, as the state machine wrote them."""
        items = self._query(
            KeyConditionExpression=Key(keys.PK).eq(keys.run_pk(run)) & Key(keys.SK).begins_with(keys.FAILED_PREFIX)
        )
        return [{k: str(v) for k, v in item.items() if k not in (keys.PK, TTL_ATTRIBUTE)} for item in items]

    def put_ranking(self, run: str, ranking: Ranking) -> None:
        self._table.put_item(Item={**keys.key(keys.RANKING, keys.LATEST), "run": run, "data": _pack(ranking)})

    def put_trend_point(self, point: TrendPoint, now: datetime) -> None:
        """One run's fleet waste and savings, kept for the report's trend (RANKING / RUN#<run>)."""
        self._table.put_item(
            Item={
                **keys.key(keys.RANKING, keys.trend_sk(point.run)),
                "waste": str(point.waste),
                "net": str(point.net_savings),
                TTL_ATTRIBUTE: _expires(now, HISTORY_RETENTION),
            }
        )

    def trend(self, limit: int) -> list[TrendPoint]:
        """The last `limit` runs' points, newest first (one Query)."""
        items = self._table.query(
            KeyConditionExpression=Key(keys.PK).eq(keys.RANKING) & Key(keys.SK).begins_with(keys.TREND_PREFIX),
            ScanIndexForward=False,
            Limit=limit,
        ).get("Items", [])
        return [
            TrendPoint(keys.trend_run(str(item[keys.SK])), Decimal(str(item["waste"])), Decimal(str(item["net"])))
            for item in items
        ]

    def put_moves(self, run: str, account_id: str, region: str, moved: SinceLastTime, now: datetime) -> None:
        """The resources of a region that came and went since its previous run (RUN#<run> / MOVES#...)."""
        self._table.put_item(
            Item={
                **keys.key(keys.run_pk(run), keys.moves_sk(account_id, region)),
                "data": _pack(moved),
                TTL_ATTRIBUTE: _expires(now, RUN_RETENTION),
            }
        )

    def moves(self, run: str) -> list[SinceLastTime]:
        items = self._query(
            KeyConditionExpression=Key(keys.PK).eq(keys.run_pk(run)) & Key(keys.SK).begins_with(keys.MOVES_PREFIX)
        )
        return [from_jsonable(SinceLastTime, _unpack(item["data"])) for item in items]

    def ranking(self) -> Ranking | None:
        from rightsizer.services.ranking import Ranking

        item = self._get(keys.RANKING, keys.LATEST)
        if item is None:
            return None
        ranking = from_jsonable(Ranking, _unpack(item["data"]))
        # A ranking stored before it named its run: the item's attribute does.
        return ranking if ranking.run else replace(ranking, run=str(item.get("run", "")))

    def _batch_get(
        self,
        wanted: Sequence[Mapping[str, str]],
        projection: str | None = None,
        names: Mapping[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        client = self._table.meta.client
        found: list[dict[str, Any]] = []
        for start in range(0, len(wanted), BATCH_GET):
            request: dict[str, Any] = {"Keys": list(wanted[start : start + BATCH_GET]), "ConsistentRead": True}
            if projection:
                request["ProjectionExpression"] = projection
            if names:
                request["ExpressionAttributeNames"] = dict(names)
            pending: dict[str, Any] = {self._table.name: request}
            while pending:
                answer = client.batch_get_item(RequestItems=pending)
                found.extend(answer.get("Responses", {}).get(self._table.name, []))
                pending = answer.get("UnprocessedKeys") or {}
        return found

    # -- prices --------------------------------------------------------------------------------

    def put_prices(
        self, region: str, prices: Mapping[str, Decimal], source: str, now: datetime, billing: Billing = LINUX
    ) -> None:
        self._table.put_item(
            Item={
                **keys.key(keys.PRICES, _prices_key(region, billing)),
                "prices": {k: str(v) for k, v in prices.items()},
                "source": source,
                "fetched_at": now.isoformat(),
            }
        )

    def prices(self, region: str, billing: Billing = LINUX) -> tuple[dict[str, Decimal], str, datetime] | None:
        item = self._get(keys.PRICES, _prices_key(region, billing))
        if item is None:
            return None
        prices = {k: Decimal(str(v)) for k, v in item["prices"].items()}
        return prices, str(item["source"]), datetime.fromisoformat(item["fetched_at"])

    # -- recommendations -----------------------------------------------------------------------

    def put_recommendations(self, run: str, recommendations: Sequence[Recommendation], now: datetime) -> Written:
        """Make these the latest recommendations of their instances; keep the by-id copies and the history.

        An instance whose advice did not change (same content, whatever the analysis time) is not rewritten:
        the catch-up analysis of a day costs reads, not writes. Returns how many recommendations were written, and
        the advice each instance had before from an earlier run (what "since last time" compares with), read in the
        same BatchGetItem.

        The latest item is the marker that says the rest was written: the by-id copies and the history go first, in
        batches of their own, and the latest items only once those are all in. A write cut half-way (the function
        timing out while DynamoDB leaves part of a batch unprocessed) leaves no latest item whose by-id copy or
        history is missing, so the retried shard, which skips advice whose latest item is unchanged, never skips
        a record that was not written."""
        read = self._batch_get(
            [keys.latest_key(r.instance_id) for r in recommendations],
            f"{keys.PK}, #digest, #run, #rec, #finding, #net, #name, #prior",  # aliased: some are reserved words
            {f"#{name}": name for name in ("digest", "run", "finding", "net", "name", "prior")}
            | {"#rec": "recommendation_id"},
        )
        latest = {str(item[keys.PK]): str(item.get("digest", "")) for item in read}
        previous = {
            keys.latest_instance(str(item[keys.PK])): prior for item in read if (prior := _prior(item, run)) is not None
        }
        changed = [
            (rec, digest)
            for rec in recommendations
            if latest.get(keys.latest_key(rec.instance_id)[keys.PK]) != (digest := _digest(rec))
        ]
        packed = {rec.recommendation_id: _pack(rec) for rec, _ in changed}
        with self._table.batch_writer(overwrite_by_pkeys=[keys.PK, keys.SK]) as batch:
            for rec, _ in changed:
                data = packed[rec.recommendation_id]
                batch.put_item(
                    Item={
                        **keys.recommendation_key(rec.recommendation_id),
                        "run": run,
                        "data": data,
                        TTL_ATTRIBUTE: _expires(now, RECOMMENDATION_RETENTION),
                    }
                )
                batch.put_item(
                    Item={
                        **keys.key(keys.history_pk(rec.account_id, rec.region, rec.instance_id), keys.history_sk(run)),
                        "data": data,
                        TTL_ATTRIBUTE: _expires(now, HISTORY_RETENTION),
                    }
                )
        with self._table.batch_writer(overwrite_by_pkeys=[keys.PK, keys.SK]) as batch:
            for rec, digest in changed:
                bucket = int(hashlib.sha256(rec.instance_id.encode()).hexdigest(), 16) % LATEST_BUCKETS
                batch.put_item(
                    Item={
                        **keys.latest_key(rec.instance_id),
                        "run": run,
                        "recommendation_id": rec.recommendation_id,
                        "digest": digest,
                        "data": packed[rec.recommendation_id],
                        # Read back unpacked by the next run's comparison (services.since), and the advice of the
                        # run before, which a re-run or the catch-up of this run compares with again.
                        "finding": rec.finding.value,
                        "net": str(rec.net_savings if rec.net_savings is not None and rec.net_savings > 0 else 0),
                        "name": rec.instance_name,
                        **_prior_item(previous.get(rec.instance_id)),
                        keys.GSI1PK: keys.latest_bucket(bucket),
                        keys.GSI1SK: keys.instance_sk(rec.account_id, rec.region, rec.instance_id),
                    }
                )
        return Written(len(changed), previous)

    def forget_instances(self, instance_ids: Iterable[str]) -> None:
        """Terminated hosts leave the latest view (their history and by-id copies expire on their own)."""
        with self._table.batch_writer(overwrite_by_pkeys=[keys.PK, keys.SK]) as batch:
            for instance_id in instance_ids:
                batch.delete_item(Key=keys.latest_key(instance_id))

    def latest_recommendations(self, account_id: str | None = None, region: str | None = None) -> list[Recommendation]:
        """Every latest recommendation (of one account or region): a query per GSI1 bucket. Only an export (the
        report with "include_recommendations") reads this; the report post and Slack's commands read the ranking
        and by key."""
        prefix = "" if not account_id else (f"{account_id}#{region}#" if region else f"{account_id}#")
        found: list[dict[str, Any]] = []
        for bucket in range(LATEST_BUCKETS):
            condition: Any = Key(keys.GSI1PK).eq(keys.latest_bucket(bucket))
            if prefix:
                condition = condition & Key(keys.GSI1SK).begins_with(prefix)
            found.extend(self._query(IndexName="GSI1", KeyConditionExpression=condition))
        return [from_jsonable(Recommendation, _unpack(item["data"])) for item in found]

    def latest_for_instance(self, instance_id: str) -> Recommendation | None:
        item = self._item(keys.latest_key(instance_id))
        return None if item is None else from_jsonable(Recommendation, _unpack(item["data"]))

    def recommendation(self, recommendation_id: str) -> Recommendation | None:
        item = self._item(keys.recommendation_key(recommendation_id))
        return None if item is None else from_jsonable(Recommendation, _unpack(item["data"]))

    def is_current(self, rec: Recommendation) -> bool:
        """True when `rec` is still the latest advice for its instance (the buttons act only on that)."""
        item = self._item(keys.latest_key(rec.instance_id))
        return item is not None and str(item.get("recommendation_id")) == rec.recommendation_id

    def history(self, account_id: str, region: str, instance_id: str, limit: int = 30) -> list[Recommendation]:
        items = self._table.query(
            KeyConditionExpression=Key(keys.PK).eq(keys.history_pk(account_id, region, instance_id))
            & Key(keys.SK).begins_with(keys.HISTORY_PREFIX),
            ScanIndexForward=False,
            Limit=limit,
        ).get("Items", [])
        return [from_jsonable(Recommendation, _unpack(item["data"])) for item in items]

    # -- decisions -----------------------------------------------------------------------------

    def put_decision(self, decision: Decision) -> None:
        """Keyed by instance, so that one host's decisions are read by key; listed (GSI1) for `top` and the report.
        A new snooze of a host replaces its earlier one, as a dismissal of the same advice does."""
        keep_until = decision.until or (decision.at + RECOMMENDATION_RETENTION)
        listed = keys.decision_gsi1sk(
            decision.account_id, decision.region, decision.instance_id, decision.kind, decision.recommendation_id
        )
        self._table.put_item(
            Item={
                **keys.key(
                    keys.decision_pk(decision.instance_id), keys.decision_sk(decision.kind, decision.recommendation_id)
                ),
                "data": json.dumps(to_jsonable(decision)),
                keys.GSI1PK: keys.DECISIONS,
                keys.GSI1SK: listed,
                TTL_ATTRIBUTE: int(keep_until.timestamp()),
            }
        )

    def decisions_about(self, rec: Recommendation, now: datetime) -> list[Decision]:
        """The decisions in force that can hide `rec`: its host's snooze and its own dismissal (two GetItems,
        whatever the number of hosts or decisions)."""
        found = (
            self._get(keys.decision_pk(rec.instance_id), keys.decision_sk(kind, rec.recommendation_id))
            for kind in (keys.SNOOZE, "dismiss")
        )
        return _in_force((from_jsonable(Decision, json.loads(item["data"])) for item in found if item), now)

    def active_decisions(self, now: datetime) -> list[Decision]:
        """Every decision in force (`top` and the report hide what they hide): one GSI1 partition, as long as
        the list of what people snoozed and dismissed, not as the fleet."""
        items = self._query(IndexName="GSI1", KeyConditionExpression=Key(keys.GSI1PK).eq(keys.DECISIONS))
        return _in_force((from_jsonable(Decision, json.loads(item["data"])) for item in items), now)

    # -- approvals and audit -------------------------------------------------------------------

    def create_approval(self, approval: Approval) -> bool:
        """Record an approval once. False when this recommendation was already approved."""
        item = {
            **keys.approval_key(approval.recommendation_id),
            # What an approval is (who, what, when) never changes; its mutable fields are attributes of
            # their own, so that updates are conditional UpdateItems instead of read-then-put.
            "data": json.dumps({k: v for k, v in to_jsonable(approval).items() if k not in _APPROVAL_MUTABLE}),
            **{name: value for name, value in _approval_attributes(approval).items() if value},
            keys.GSI1PK: keys.OPEN_APPROVALS,
            keys.GSI1SK: approval.approved_at.isoformat(),
        }
        return (
            _unless_condition_fails(
                lambda: self._table.put_item(Item=item, ConditionExpression=Attr(keys.PK).not_exists())
            )
            is not None
        )

    def approval(self, recommendation_id: str) -> Approval | None:
        item = self._item(keys.approval_key(recommendation_id))
        return None if item is None else _approval_of(item)

    def approvals_of(self, recommendation_ids: Sequence[str]) -> dict[str, Approval]:
        """The approvals of these recommendations, by id (those never approved are absent): BatchGetItem by key."""
        wanted = [keys.approval_key(rid) for rid in dict.fromkeys(recommendation_ids)]
        return {approval.recommendation_id: approval for approval in map(_approval_of, self._batch_get(wanted))}

    def update_approval(
        self,
        recommendation_id: str,
        *,
        status: ApprovalStatus | None = None,
        detail: str | None = None,
        execution_arn: str | None = None,
        slack_channel: str | None = None,
        slack_ts: str | None = None,
        attempt: int | None = None,
    ) -> ApprovalUpdate:
        """One conditional UpdateItem (see ports.ApprovalRecords): the condition lists the statuses the
        lifecycle lets `status` replace; when it fails, the same update runs without status and detail. With
        `attempt`, both writes are conditioned on the approval being at that attempt: a write about an earlier
        attempt's execution changes nothing."""
        always: dict[str, str] = {}
        if slack_channel is not None:
            always["slack_channel"] = slack_channel
        if slack_ts is not None:
            always["slack_ts"] = slack_ts
        if status is not None:
            moving = {"status": status.value, **({"detail": detail} if detail is not None else {})}
            moved = self._update_approval(recommendation_id, always, execution_arn, moving, attempt)
            if moved is not None:
                return ApprovalUpdate(moved, True)
            # Either the lifecycle refused the move, or there is no such approval: tell them apart.
        item = self._update_approval(recommendation_id, always, execution_arn, {}, attempt)
        if item is None:
            current = self.approval(recommendation_id)  # another attempt: leave it be
            if current is None:
                raise KeyError(recommendation_id) from None
            return ApprovalUpdate(current, False)
        return ApprovalUpdate(item, False)

    def retry_approval(self, recommendation_id: str, attempt: int, approver: str, at: datetime) -> Approval | None:
        """Attempt `attempt` + 1 as pending (ports.ApprovalRecords), by one conditional UpdateItem."""
        names = {"#status": "status", "#attempt": "attempt", "#arn": "execution_arn", "#detail": "detail"}
        sources = sorted(RETRYABLE)
        values: dict[str, Any] = {f":from{n}": source.value for n, source in enumerate(sources)}
        values.update(
            {
                ":pending": ApprovalStatus.PENDING.value,
                ":next": str(attempt + 1),
                ":attempt": str(attempt),
                ":approver": approver,
                ":at": at.isoformat(),
                ":open": keys.OPEN_APPROVALS,
                ":empty": "",
            }
        )
        same_attempt = (
            "#attempt = :attempt" if attempt > 1 else "(attribute_not_exists(#attempt) OR #attempt = :attempt)"
        )
        answer = _unless_condition_fails(
            lambda: self._table.update_item(
                Key=keys.approval_key(recommendation_id),
                UpdateExpression="SET #status = :pending, #attempt = :next, approver = :approver, approved_at = :at, "
                "#detail = :empty, GSI1PK = :open, GSI1SK = :at REMOVE #arn",
                ConditionExpression=f"#status IN ({', '.join(f':from{n}' for n in range(len(sources)))}) "
                f"AND {same_attempt}",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
        )
        return None if answer is None else _approval_of(answer["Attributes"])

    def _update_approval(
        self,
        recommendation_id: str,
        always: Mapping[str, str],
        execution_arn: str | None,
        moving: Mapping[str, str],
        attempt: int | None = None,
    ) -> Approval | None:
        """The approval as updated; None when the condition refused the write (the status move, or the attempt)."""
        key = keys.approval_key(recommendation_id)
        names: dict[str, str] = {"#pk": keys.PK}
        values: dict[str, Any] = {}
        sets: list[str] = []
        for number, (name, value) in enumerate({**always, **moving}.items()):
            names[f"#f{number}"], values[f":f{number}"] = name, value
            sets.append(f"#f{number} = :f{number}")
        if execution_arn:  # written once: a second execution never replaces the first one's ARN
            names["#arn"], values[":arn"] = "execution_arn", execution_arn
            sets.append("#arn = if_not_exists(#arn, :arn)")
        if not sets:
            found = self._item(key)
            if found is None:
                raise KeyError(recommendation_id)
            return _approval_of(found)
        expression, condition = f"SET {', '.join(sets)}", "attribute_exists(#pk)"
        if attempt is not None:
            names["#attempt"], values[":attempt"] = "attempt", str(attempt)
            condition += (
                " AND #attempt = :attempt"
                if attempt > 1
                else " AND (attribute_not_exists(#attempt) OR #attempt = :attempt)"
            )
        if moving:
            requested = ApprovalStatus(moving["status"])
            sources = sorted(sources_of(requested))
            names["#status"] = "status"
            values.update({f":from{n}": source.value for n, source in enumerate(sources)})
            condition += f" AND #status IN ({', '.join(f':from{n}' for n in range(len(sources)))})"
            if requested.terminal:  # sparse index: only open approvals are listed
                expression += " REMOVE GSI1PK, GSI1SK"
        answer = _unless_condition_fails(
            lambda: self._table.update_item(
                Key=key,
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
        )
        if answer is None and not moving and attempt is None:  # only attribute_exists(#pk) was asked
            raise KeyError(recommendation_id)
        return None if answer is None else _approval_of(answer["Attributes"])

    def pending_approvals(self) -> list[Approval]:
        """Approvals still waiting for an outcome (pending, start_failed, running)."""
        return [
            _approval_of(item)
            for item in self._query(IndexName="GSI1", KeyConditionExpression=Key(keys.GSI1PK).eq(keys.OPEN_APPROVALS))
        ]

    def audit(self, entry: AuditEntry) -> None:
        self._table.put_item(
            Item={
                **keys.key(keys.audit_pk(entry.recommendation_id), keys.audit_sk(entry.at.isoformat(), entry.event)),
                "actor": entry.actor,
                "event": entry.event,
                "detail": entry.detail,
                TTL_ATTRIBUTE: _expires(entry.at, AUDIT_RETENTION),
            }
        )

    def audit_log(self, recommendation_id: str) -> list[AuditEntry]:
        entries = []
        for item in self._query(KeyConditionExpression=Key(keys.PK).eq(keys.audit_pk(recommendation_id))):
            at = keys.audit_time(str(item[keys.SK]))
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
        shown = keys.shown_sk(message.channel, message.ts)
        expiration = _expires(now, MESSAGE_RETENTION)
        with self._table.batch_writer(overwrite_by_pkeys=[keys.PK, keys.SK]) as batch:
            batch.put_item(Item={**_message_item(message), TTL_ATTRIBUTE: expiration})
            for recommendation_id in message.recommendation_ids:
                batch.put_item(Item={**keys.key(keys.shown_pk(recommendation_id), shown), TTL_ATTRIBUTE: expiration})
        if not post_key:
            return
        # Last, in a batch of its own: a resumed post skips only a message whose copy was kept.
        with self._table.batch_writer(overwrite_by_pkeys=[keys.PK, keys.SK]) as batch:
            batch.put_item(
                Item={
                    **keys.key(keys.report_post_pk(post_key), keys.report_post_sk(index)),
                    "ts": message.ts,
                    TTL_ATTRIBUTE: expiration,
                }
            )

    def replace_message(self, message: PostedMessage) -> None:
        """Store an edited copy of a message saved before (nothing happens for a message never saved), whatever
        its version (which moves on, so that a conditional edit racing this one redoes its change)."""
        item = _message_item(message)
        _unless_condition_fails(
            lambda: self._table.update_item(
                Key=keys.message_key(message.channel, message.ts),
                UpdateExpression="SET #text = :text, #blocks = :blocks ADD #version :one",
                ConditionExpression=Attr(keys.PK).exists(),
                ExpressionAttributeNames={"#text": "text", "#blocks": "blocks", "#version": "version"},
                ExpressionAttributeValues={":text": item["text"], ":blocks": item["blocks"], ":one": 1},
            )
        )

    def replace_message_if(self, message: PostedMessage) -> bool:
        """Save an edited copy over the saved one only if that is still at `message.version` (a copy saved
        before versions were kept counts as 0); the saved copy is then at version + 1. False when another edit
        was saved first (re-read, redo the edit) or the message was never saved (or expired)."""
        item = _message_item(message)
        same = Attr("version").eq(message.version)
        current = Attr(keys.PK).exists() & (Attr("version").not_exists() | same) if message.version == 0 else same
        answer = _unless_condition_fails(
            lambda: self._table.update_item(
                Key=keys.message_key(message.channel, message.ts),
                UpdateExpression="SET #text = :text, #blocks = :blocks, #version = :next",
                ConditionExpression=current,
                ExpressionAttributeNames={"#text": "text", "#blocks": "blocks", "#version": "version"},
                ExpressionAttributeValues={
                    ":text": item["text"],
                    ":blocks": item["blocks"],
                    ":next": message.version + 1,
                },
            )
        )
        return answer is not None

    def message(self, channel: str, ts: str) -> PostedMessage | None:
        item = self._item(keys.message_key(channel, ts))
        return None if item is None else _message_of(item)

    def messages_showing(self, recommendation_id: str) -> list[PostedMessage]:
        found = []
        for shown in self._query(KeyConditionExpression=Key(keys.PK).eq(keys.shown_pk(recommendation_id))):
            channel, ts = keys.shown_of(str(shown[keys.SK]))
            message = self.message(channel, ts)
            if message is not None:
                found.append(message)
        return found

    def report_progress(self, post_key: str) -> dict[int, str]:
        """The messages of report post `post_key` already in Slack: index -> ts."""
        items = self._query(KeyConditionExpression=Key(keys.PK).eq(keys.report_post_pk(post_key)), ConsistentRead=True)
        return {int(item[keys.SK]): str(item["ts"]) for item in items}

    # -- the resize workflow's per-instance lock -------------------------------------------------

    def release_instance_lock(self, instance_id: str, holder: str) -> bool:
        """Delete the lock the resize state machine took for `instance_id`, if `holder` (an execution ARN)
        still holds it. The state machine releases it at each end it can catch; this is for the others."""
        answer = _unless_condition_fails(
            lambda: self._table.delete_item(
                Key=keys.lock_key(instance_id), ConditionExpression=Attr("holder").eq(holder)
            )
        )
        return answer is not None

    # -- stop/start schedules the instance workflow created ------------------------------------------

    def put_schedule(self, record: ScheduleRecord) -> None:
        """Record a schedule pair (the notifier, when the workflow reports it created). Idempotent."""
        self._table.put_item(
            Item={
                **keys.schedule_key(record.account_id, record.region, record.instance_id),
                "data": json.dumps(to_jsonable(record)),
            }
        )

    def schedule(self, account_id: str, region: str, instance_id: str) -> ScheduleRecord | None:
        item = self._item(keys.schedule_key(account_id, region, instance_id))
        return None if item is None else from_jsonable(ScheduleRecord, json.loads(item["data"]))

    def schedules(self) -> list[ScheduleRecord]:
        items = self._query(KeyConditionExpression=Key(keys.PK).eq(keys.SCHEDULE))
        return [from_jsonable(ScheduleRecord, json.loads(item["data"])) for item in items]

    def delete_schedule(self, account_id: str, region: str, instance_id: str) -> None:
        self._table.delete_item(Key=keys.schedule_key(account_id, region, instance_id))

    # -- Slack replay guard ----------------------------------------------------------------------

    def claim_request(self, digest: str, now: datetime, keep: timedelta = timedelta(minutes=10)) -> bool:
        """True the first time a signed Slack request is seen; False for a replay or a retry."""
        answer = _unless_condition_fails(
            lambda: self._table.put_item(
                Item={**keys.slack_request_key(digest), TTL_ATTRIBUTE: _expires(now, keep)},
                ConditionExpression=Attr(keys.PK).not_exists(),
            )
        )
        return answer is not None


def _prices_key(region: str, billing: Billing) -> str:
    """Linux prices under the region (as before platforms were priced), others under region#platform."""
    return keys.prices_sk(region, None if billing.key == LINUX.key else billing.key)
