"""The instance workflow's SageMaker path, shared by the actions on a SageMaker resource: the notebook instance's
read and checks, the tags every resource is held to (opt-out refuses, the managed tag is required), the validation's
record, and how such an action ends.

They share the workflow's input checks, audit trail, lock (keyed by the resource id), refusals, outcome path and
action role with the EC2 actions; what differs is how the resource is read and changed (each action's module in
domain/actions/; docs/resize-workflow.md section 2d tells the story). SageMakerRoute is composed from the actions.
"""

from __future__ import annotations

from typing import Any

from rightsizer.domain.workflow.asl import (
    Path,
    Rule,
    State,
    equals,
    fmt,
    goto,
    intrinsic,
    is_type,
    not_,
    present,
    retry,
    state,
)
from rightsizer.domain.workflow.fragments import (
    CAUSE,
    FAILURE,
    HEALTH,
    IN,
    audit,
    done,
    ends_as,
    progress,
    refuse,
    sdk,
)
from rightsizer.domain.workflow.plugs import Actions, Entry, rest, routes

SM = IN.sagemaker
NOTEBOOK = Path("$.notebook")  # {Status, Type}
NOTEBOOK_NOW = {
    "Status": Path("$.NotebookInstanceStatus"),
    "Type": Path("$.InstanceType"),
}  # DescribeNotebookInstance's
TAGS = Path("$.sm_tags")
# SageMaker's own throttling and internal errors are retried; anything else is an answer (Catch decides).
RETRY_SAGEMAKER = retry(
    ("SageMaker.ThrottlingException", "SageMaker.InternalFailure", "SageMaker.ServiceUnavailable", "States.Timeout"),
    interval=2,
    attempts=5,
    max_delay=30,
)
# A create or an update that timed out may have gone through: never sent twice (the resource is read instead).
RETRY_SAGEMAKER_CHANGE = retry(
    ("SageMaker.ThrottlingException", "SageMaker.ServiceUnavailable"), interval=2, attempts=4, max_delay=30
)


def sagemaker(operation: str, parameters: dict[str, Any], next_state: str, **options: Any) -> State:
    return sdk(f"sagemaker:{operation}", parameters, next_state, **{"retrier": RETRY_SAGEMAKER, **options})


def describe_notebook(next_state: str, *, on_error: str, comment: str | None = None) -> State:
    """The notebook instance as it is now, into $.notebook ({Status, Type})."""
    return sagemaker(
        "describeNotebookInstance",
        {"NotebookInstanceName": SM.name},
        next_state,
        on_error=on_error,
        result=NOTEBOOK,
        selector=NOTEBOOK_NOW,
        comment=comment,
    )


def texts(*paths: Path) -> list[Rule]:
    """Present, text and not empty: an empty name would create a config or an alarm for nothing."""
    return [rule for path in paths for rule in (present(path), is_type(path, "String"), not_(equals(path, "")))]


RESOURCE_FIELDS = tuple(texts(SM.name, SM.arn))  # what every SageMaker action reads of its input


def validation(actions: Actions) -> dict[str, State]:
    """A notebook instance read as it is now, then every resource's tags; refuse anything not ours to change."""
    return {
        "DescribeNotebook": describe_notebook(
            "CheckNotebook", on_error="RefuseResourceNotRead", comment="Read the notebook instance as it is now."
        ),
        "CheckNotebook": state(
            "Choice",
            Choices=[
                goto(not_(equals(NOTEBOOK.dot("Status"), "InService")), "RefuseNotebookNotRunning"),
                goto(not_(equals(NOTEBOOK.dot("Type"), IN.expected_type)), "RefuseNotebookChanged"),
            ],
            Default="ListResourceTags",
        ),
        "ListResourceTags": sagemaker(
            "listTags",
            {"ResourceArn": SM.arn, "MaxResults": 100},
            "TagPairs",
            on_error="RefuseResourceNotRead",
            result=TAGS,
            selector={"Tags": Path("$.Tags")},
            comment=(
                "The same tags as for an EC2 host: the opt-out tag refuses, the managed tag (value true) is required "
                "(the action role's policy requires it too)."
            ),
        ),
        "TagPairs": state(
            "Map",
            Comment=(
                "Each tag as key=value: the managed tag is then one ArrayContains, with no JSONPath filter (tag keys "
                "come from the input, which a filter cannot use) and no comparison of objects."
            ),
            ItemsPath=TAGS.dot("Tags"),
            ItemProcessor={
                "ProcessorConfig": {"Mode": "INLINE"},
                "StartAt": "Pair",
                "States": {
                    "Pair": state(
                        "Pass",
                        Parameters={"pair": fmt("{}={}", Path("$.Key"), Path("$.Value"))},
                        OutputPath=Path("$.pair"),
                        End=True,
                    )
                },
            },
            ResultPath=TAGS.dot("pairs"),
            Next="TagsToCheck",
        ),
        "TagsToCheck": state(
            "Pass",
            Parameters={"wanted": fmt("{}=true", IN.managed_tag_key)},
            ResultPath=TAGS.dot("managed"),
            Next="TagFacts",
        ),
        "TagFacts": state(
            "Pass",
            Parameters={
                "opted_out": intrinsic("ArrayContains", TAGS.dot("Tags[*]", "Key"), IN.opt_out_tag),
                "managed": intrinsic("ArrayContains", TAGS.dot("pairs"), TAGS.dot("managed", "wanted")),
            },
            ResultPath=TAGS.dot("facts"),
            Next="CheckResourceTags",
        ),
        "CheckResourceTags": state(
            "Choice",
            Choices=[
                goto(equals(TAGS.dot("facts", "opted_out"), True), "RefuseOptedOut"),
                goto(equals(TAGS.dot("facts", "managed"), False), "RefuseNotManaged"),
            ],
            Default="RecordSageMakerValidated",
        ),
        "RecordSageMakerValidated": audit(
            "validated",
            fmt(
                "checks passed for the {}: {} ({}), managed, not opted out", IN.change, IN.instance_id, IN.expected_type
            ),
            "NotifySageMakerValidated",
            on_error="AuditUnavailable",
        ),
        "NotifySageMakerValidated": progress(
            "validated", fmt("Checks passed: {} of {} ({}).", IN.change, SM.name, IN.expected_type), "SageMakerRoute"
        ),
        "SageMakerRoute": state(
            "Choice",
            Choices=routes(actions, Entry.SAGEMAKER_VALIDATED),
            Default=rest(actions, Entry.SAGEMAKER_VALIDATED),
        ),
        "RefuseResourceNotRead": refuse("not-described", fmt("could not read {}: {}", SM.name, CAUSE)),
        "RefuseNotebookNotRunning": refuse(
            "notebook-not-running",
            fmt("notebook instance {} is {}, not InService", SM.name, NOTEBOOK.dot("Status")),
        ),
        "RefuseNotebookChanged": refuse(
            "notebook-changed",
            fmt(
                "notebook instance {} is now {}, the recommendation expected {}: the advice is stale",
                SM.name,
                NOTEBOOK.dot("Type"),
                IN.expected_type,
            ),
        ),
    }


def outcomes() -> dict[str, State]:
    """How a SageMaker action ends when a person must look, and its clean output on success."""
    reason = FAILURE.dot("reason")
    return {
        "OutcomeSageMakerNeedsPerson": ends_as(
            "rollback_failed",
            "rollback_failed",
            fmt(
                "Needs a person: the {} of {} did not end as expected: {}. Check it in the SageMaker console.",
                IN.change,
                SM.name,
                reason,
            ),
        ),
        "DoneSageMaker": done(
            IN.action,
            HEALTH.dot("note"),
            "A SageMaker action describes no EC2 instance: its health note says its state.",
        ),
    }
