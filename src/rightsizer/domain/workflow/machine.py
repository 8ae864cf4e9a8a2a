"""The instance workflow's definition (statemachine/resize.asl.json, `make asl`): the shared sections, composed with
every action's fragment in the registry's order (domain/actions/)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rightsizer.domain.workflow import ending, entry, host, sagemaker
from rightsizer.domain.workflow.asl import State
from rightsizer.domain.workflow.plugs import Actions, check_routed
from rightsizer.domain.workflow_contract import EXECUTION_TIMEOUT

COMMENT = (
    "GPU Rightsizer: the instance workflow. One guarded one-click action on one EC2 instance: resize (validate, stop, "
    "modify, start, verify, with rollback to the recorded original type and state), stop (never terminate), create "
    "or remove an EventBridge Scheduler stop/start pair. Every action shares the input checks, the audit trail in "
    "DynamoDB, the per-instance lock, the validation, the progress events on the default EventBridge bus and the "
    "outcome path. EC2 and Scheduler calls run with the account's action role (task Credentials). See "
    "docs/resize-workflow.md."
)
TIMEOUT_SECONDS = int(EXECUTION_TIMEOUT.total_seconds())


def sections(actions: Actions) -> tuple[Callable[[], Mapping[str, State]], ...]:
    """The shared workflow's sections (in the order of the way through it), then each action's own states."""
    return (
        lambda: entry.request_checks(actions),
        lambda: entry.lock(actions),
        entry.refusals,
        lambda: host.validation(actions),
        host.refusals,
        lambda: host.validated(actions),
        lambda: host.guarded_stop(actions),
        host.rollback,
        host.outcomes,
        lambda: sagemaker.validation(actions),
        sagemaker.outcomes,
        *(fragment.states for fragment in actions.values()),
        ending.refused,
        lambda: ending.the_end(actions),
    )


def machine(actions: Actions) -> dict[str, object]:
    """The definition: a state defined twice, or an action that leaves the shared workflow nowhere, fails the build."""
    check_routed(actions)
    states: dict[str, State] = {}
    for section in sections(actions):
        for name, body in section().items():
            if name in states:
                raise ValueError(f"state {name} is defined twice")
            states[name] = body
    return {"Comment": COMMENT, "StartAt": "CheckRequest", "TimeoutSeconds": TIMEOUT_SECONDS, "States": states}
