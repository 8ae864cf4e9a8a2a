"""How every execution of the instance workflow ends: a refusal's outcome, then for every outcome one audit entry,
one progress event, the lock's release, and a Fail state named after the outcome or the action's Done state (Finish
routes each action to its own, from the actions' fragments)."""

from __future__ import annotations

from rightsizer.domain.workflow.asl import Path, State, catch, equals, goto, retry, state
from rightsizer.domain.workflow.fragments import (
    ENDINGS,
    EXECUTION,
    HEALTH,
    NO_RETRY_ON_CONDITION,
    OUTCOME,
    REFUSAL,
    RETRY_WRITE,
    STATE_NAME,
    SUCCEEDED,
    UNKNOWN_END,
    audit,
    done,
    dynamodb,
    ends_as,
    lock_key,
    progress,
)
from rightsizer.domain.workflow.plugs import HOST_DONE, Actions, done_routes


def refused() -> dict[str, State]:
    return {
        "OutcomeRefused": ends_as(
            "refused",
            "refused",
            REFUSAL.dot("reason"),
            comment=(
                "Every end goes through one audit entry, one progress event, the lock's release and a Fail (or Done) "
                "named after the outcome."
            ),
        ),
    }


def the_end(actions: Actions) -> dict[str, State]:
    """Record and announce the outcome, release the lock, end as the outcome says."""
    kind = OUTCOME.dot("kind")
    fails = {name: error for _, name, error in ENDINGS.values() if error is not None}
    default = ENDINGS[UNKNOWN_END][1]
    return {
        "RecordOutcome": audit(OUTCOME.dot("step"), OUTCOME.dot("message"), "NotifyOutcome"),
        "NotifyOutcome": progress(
            OUTCOME.dot("step"), OUTCOME.dot("message"), "ReleaseLock", status=OUTCOME.dot("status")
        ),
        "ReleaseLock": dynamodb(
            "deleteItem",
            {
                "Key": lock_key(),
                "ConditionExpression": "holder = :me",
                "ExpressionAttributeValues": {":me": {"S": EXECUTION}},
            },
            "Finish",
            Comment=(
                "Every end releases the instance, if this execution holds it (a refusal because another resize holds "
                "it leaves that lock alone). The notifier releases it for the ends no state can catch."
            ),
            ResultPath=None,
            Retry=[NO_RETRY_ON_CONDITION, retry(RETRY_WRITE["ErrorEquals"], interval=1, attempts=3)],
            Catch=[catch("Finish", Path("$.release_error"))],
        ),
        "Finish": state(
            "Choice",
            Choices=[
                *done_routes(actions, equals(kind, SUCCEEDED), HOST_DONE),
                *(
                    goto(equals(kind, k), name)
                    for k, (_, name, _) in ENDINGS.items()
                    if k not in (SUCCEEDED, UNKNOWN_END)
                ),
            ],
            Default=default,
        ),
        HOST_DONE: done(
            STATE_NAME, HEALTH.dot("note"), "A clean output: the raw EC2 answers carry timestamps nobody needs here."
        ),
        **{name: state("Fail", Error=error.value, CausePath=OUTCOME.dot("message")) for name, error in fails.items()},
    }
