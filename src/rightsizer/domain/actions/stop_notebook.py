"""Notebook stop: a SageMaker notebook instance, its ML storage volume kept. After the lock it reads the notebook
(InService, still its type) and its tags (domain/workflow/sagemaker.py), then StopNotebookInstance and follows it
until it is Stopped."""

from __future__ import annotations

from rightsizer.domain.action_spec import ActionSpec, kind_of
from rightsizer.domain.workflow.asl import State, compare, equals, fmt, goto, one_of, state
from rightsizer.domain.workflow.fragments import (
    CAUSE,
    FAILURE,
    HEALTH,
    IN,
    POLL,
    audit,
    count_poll,
    ends_as,
    note,
    reset_polls,
    wait,
)
from rightsizer.domain.workflow.plugs import Entry, Fragment, Route
from rightsizer.domain.workflow.sagemaker import (
    NOTEBOOK,
    RESOURCE_FIELDS,
    RETRY_SAGEMAKER_CHANGE,
    SM,
    describe_notebook,
    sagemaker,
)

SPEC = ActionSpec(
    kind_of(__name__),
    name="Notebook stop",
    done="Notebook stopped",
    becomes="stopped",
    change="notebook stop",
    target_text="stop",
    approve_label="Approve stop",
    confirm_title="Stop this notebook instance?",
    confirm_button="Stop",
    confirm_text="stop the {type} notebook instance (its ML storage volume is kept; running kernels end).",
    stops_host=True,
    permissions=frozenset(
        {"sagemaker:DescribeNotebookInstance", "sagemaker:ListTags", "sagemaker:StopNotebookInstance"}
    ),
)


def notebook_stop() -> dict[str, State]:
    return {
        "StopNotebook": sagemaker(
            "stopNotebookInstance",
            {"NotebookInstanceName": SM.name},
            "RecordNotebookStopRequested",
            on_error="NotebookNotStopped",
            retrier=RETRY_SAGEMAKER_CHANGE,
            result=None,
        ),
        "RecordNotebookStopRequested": audit(
            "stop_requested", fmt("StopNotebookInstance {}", SM.name), "ResetNotebookPolls"
        ),
        "ResetNotebookPolls": reset_polls("WaitForNotebook"),
        "WaitForNotebook": wait("DescribeNotebookAfterStop"),
        "DescribeNotebookAfterStop": describe_notebook("NotebookSettled", on_error="NotebookLost"),
        "NotebookSettled": state(
            "Choice",
            Choices=[
                goto(equals(NOTEBOOK.dot("Status"), "Stopped"), "NotebookStopped"),
                goto(one_of(NOTEBOOK.dot("Status"), "Failed", "Deleting"), "NotebookFailed"),
                goto(compare(POLL.dot("count"), "GreaterThanEquals", IN.max_polls), "NotebookTimedOut"),
            ],
            Default="CountNotebookPoll",
        ),
        "CountNotebookPoll": count_poll("WaitForNotebook"),
        "NotebookStopped": state(
            "Pass",
            Result={"note": "SageMaker reports it Stopped; its ML storage volume is kept"},
            ResultPath=HEALTH,
            Next="OutcomeNotebookStopped",
        ),
        "NotebookNotStopped": note(FAILURE, fmt("StopNotebookInstance failed: {}", CAUSE), "OutcomeNotebookUnchanged"),
        "NotebookFailed": note(
            FAILURE,
            fmt("SageMaker reports the notebook instance {}", NOTEBOOK.dot("Status")),
            "OutcomeSageMakerNeedsPerson",
        ),
        "NotebookTimedOut": note(
            FAILURE,
            fmt("the notebook instance was still {} after {} polls", NOTEBOOK.dot("Status"), IN.max_polls),
            "OutcomeSageMakerNeedsPerson",
        ),
        "NotebookLost": note(
            FAILURE,
            fmt("the notebook instance could not be read after its stop: {}", CAUSE),
            "OutcomeSageMakerNeedsPerson",
        ),
    }


def outcomes() -> dict[str, State]:
    reason = FAILURE.dot("reason")
    return {
        "OutcomeNotebookStopped": ends_as(
            "succeeded", "succeeded", fmt("Done: notebook instance {} is stopped ({}).", SM.name, HEALTH.dot("note"))
        ),
        "OutcomeNotebookUnchanged": ends_as(
            "unchanged",
            "unchanged",
            fmt(
                "Nothing was changed: notebook instance {} keeps running. The {} failed: {}", SM.name, IN.change, reason
            ),
        ),
    }


def states() -> dict[str, State]:
    return {**notebook_stop(), **outcomes()}


WORKFLOW = Fragment(
    states,
    routes={Entry.LOCKED: Route("DescribeNotebook"), Entry.SAGEMAKER_VALIDATED: Route("StopNotebook", rest=True)},
    request=RESOURCE_FIELDS,
    done="DoneSageMaker",
)
