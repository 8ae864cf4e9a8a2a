"""The one source of the table's key formats (PK / SK of each item kind; the layout is in store.py's docstring).

The store builds every key here. The state machines write some items themselves (the instance workflow its audit
entries and its per-instance lock, the pipeline its failures): the `*_PK` / `*_SK` templates below, whose `{}` slots
str.format and Step Functions' States.Format fill alike, in order (the instance workflow's own are its contract's,
domain/workflow_contract.py, which its builders in domain/workflow/ read).
A key prefix also appears in template.yaml's IAM conditions (dynamodb:LeadingKeys); a test holds them to these.

Stdlib and the workflow contract only: the Slack app's cold start imports the store.
"""

from __future__ import annotations

from rightsizer.domain import workflow_contract as _workflow

# The instance workflow writes its audit entries and its lock itself: those keys are its contract's.
PK = _workflow.PK
SK = _workflow.SK
GSI1PK = "GSI1PK"
GSI1SK = "GSI1SK"

Key = dict[str, str]

# -- templates the state machines fill too (States.Format('AUDIT#{}', $.recommendation_id)) ----------------------
AUDIT_PK = _workflow.AUDIT_PK  # recommendation id
AUDIT_SK = _workflow.AUDIT_SK  # ISO 8601 time, event
LOCK_PK = _workflow.LOCK_PK  # instance id
LOCK_SK = _workflow.LOCK_SK
RUN_PK = "RUN#{}"  # run
FAILED_SK = "FAILED#{}#{}#{}"  # account, region, shard (or "plan")

# -- fixed partitions ------------------------------------------------------------------------------------------------
RUNS = "RUN"  # / <run>: the runs, newest first
PRICES = "PRICES"  # / <region>[#<platform>]
RANKING = "RANKING"  # / LATEST
SCHEDULE = "SCHEDULE"  # / <acct>#<region>#<id>: the stop/start pairs the workflow created
OPEN_APPROVALS = "APPROVAL#PENDING"  # GSI1 partition of the approvals still waiting for an outcome
DECISIONS = "DECISIONS"  # GSI1 partition listing the snoozes and dismissals
LATEST = "LATEST"
CONTEXT = "CONTEXT"
USAGE = "USAGE"
REC = "REC"
APPROVAL = "APPROVAL"
MESSAGE = "MESSAGE"
SLACKREQ = "SLACKREQ"
SNOOZE = "snooze"


def key(pk: str, sk: str) -> Key:
    return {PK: pk, SK: sk}


def instance_sk(account_id: str, region: str, instance_id: str) -> str:
    """<acct>#<region>#<id>: a host in sort keys and listings (ports.ScheduleRecord.key has the same format)."""
    return f"{account_id}#{region}#{instance_id}"


# -- runs and collected data -----------------------------------------------------------------------------------------
def run_pk(run: str) -> str:
    return RUN_PK.format(run)


REGION_PREFIX = "REGION#"
RANK_PREFIX = "RANK#"
FAILED_PREFIX = FAILED_SK.split("{}", 1)[0]


def region_sk(account_id: str, region: str) -> str:
    return f"{REGION_PREFIX}{account_id}#{region}"


def rank_sk(account_id: str, region: str, shard: int) -> str:
    return f"{RANK_PREFIX}{account_id}#{region}#{shard:05d}"


MOVES_PREFIX = "MOVES#"
TREND_PREFIX = "RUN#"


def moves_sk(account_id: str, region: str) -> str:
    """RUN#<run> / MOVES#<acct>#<region>: the resources of a region that came and went since its previous run."""
    return f"{MOVES_PREFIX}{account_id}#{region}"


def trend_sk(run: str) -> str:
    """RANKING / RUN#<run>: one run's fleet waste and savings, for the report's trend."""
    return f"{TREND_PREFIX}{run}"


def trend_run(sk: str) -> str:
    return sk.removeprefix(TREND_PREFIX)


def scope_pk(run: str, account_id: str, region: str) -> str:
    return f"SCOPE#{run}#{account_id}#{region}"


def shard_sk(index: int) -> str:
    return f"SHARD#{index:05d}"


def usage_key(run: str, account_id: str, region: str, instance_id: str) -> Key:
    return key(f"USAGE#{run}#{account_id}#{region}#{instance_id}", USAGE)


def usage_instance(pk: str) -> str:
    """The instance id of a usage item's PK."""
    return pk.rsplit("#", 1)[1]


def prices_sk(region: str, platform: str | None) -> str:
    """Linux prices under the region (as before platforms were priced, `platform` None), others region#platform."""
    return region if platform is None else f"{region}#{platform}"


# -- recommendations -------------------------------------------------------------------------------------------------
def latest_key(instance_id: str) -> Key:
    # By instance id alone: that is all `/gpu show <instance-id>` knows (EC2 instance ids are unique).
    return key(f"LATEST#{instance_id}", LATEST)


def latest_instance(pk: str) -> str:
    """The instance id of a latest-recommendation item's PK."""
    return pk.removeprefix("LATEST#")


def latest_bucket(bucket: int) -> str:
    """GSI1 partition `bucket` of the latest recommendations."""
    return f"LATEST#{bucket:02d}"


def recommendation_key(recommendation_id: str) -> Key:
    return key(f"REC#{recommendation_id}", REC)


def history_pk(account_id: str, region: str, instance_id: str) -> str:
    return f"INSTANCE#{instance_sk(account_id, region, instance_id)}"


HISTORY_PREFIX = "REC#"


def history_sk(run: str) -> str:
    return f"{HISTORY_PREFIX}{run}"


# -- decisions -------------------------------------------------------------------------------------------------------
def decision_pk(instance_id: str) -> str:
    return f"DECISION#{instance_id}"


def decision_sk(kind: str, recommendation_id: str | None) -> str:
    # A snooze is the host's (one at a time); a dismissal answers one piece of advice.
    return SNOOZE if kind == SNOOZE else f"{kind}#{recommendation_id or '*'}"


def decision_gsi1sk(account_id: str, region: str, instance_id: str, kind: str, recommendation_id: str | None) -> str:
    return f"{instance_sk(account_id, region, instance_id)}#{kind}#{recommendation_id or '*'}"


# -- approvals, audit and the instance workflow's lock ---------------------------------------------------------------
def approval_key(recommendation_id: str) -> Key:
    return key(f"APPROVAL#{recommendation_id}", APPROVAL)


def audit_pk(recommendation_id: str) -> str:
    return AUDIT_PK.format(recommendation_id)


def audit_sk(at: str, event: str) -> str:
    return AUDIT_SK.format(at, event)


def audit_time(sk: str) -> str:
    """The ISO time of an audit entry's SK."""
    return sk.rsplit("#", 1)[0]


def lock_key(instance_id: str) -> Key:
    return key(LOCK_PK.format(instance_id), LOCK_SK)


def schedule_key(account_id: str, region: str, instance_id: str) -> Key:
    return key(SCHEDULE, instance_sk(account_id, region, instance_id))


# -- Slack -----------------------------------------------------------------------------------------------------------
def slack_request_key(digest: str) -> Key:
    return key(f"SLACKREQ#{digest}", SLACKREQ)


MESSAGE_PREFIX = "MESSAGE#"


def message_key(channel: str, ts: str) -> Key:
    return key(f"{MESSAGE_PREFIX}{channel}#{ts}", MESSAGE)


def message_of(pk: str) -> tuple[str, str]:
    """(channel, ts) of a posted message's PK."""
    channel, _, ts = pk.removeprefix(MESSAGE_PREFIX).partition("#")
    return channel, ts


def shown_pk(recommendation_id: str) -> str:
    return f"SHOWN#{recommendation_id}"


def shown_sk(channel: str, ts: str) -> str:
    return f"{channel}#{ts}"


def shown_of(sk: str) -> tuple[str, str]:
    """(channel, ts) of a SHOWN item's SK."""
    channel, _, ts = sk.partition("#")
    return channel, ts


def report_post_pk(post_key: str) -> str:
    return f"REPORTPOST#{post_key}"


def report_post_sk(index: int) -> str:
    return f"{index:04d}"


# -- Powertools idempotency ------------------------------------------------------------------------------------------
def idempotency_pk(function: str) -> str:
    """The static PK of one function's Powertools idempotency records (their SK: <function>#<hash>)."""
    return f"IDEMPOTENCY#{function}"
