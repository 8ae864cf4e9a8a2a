"""Stop: an EC2 host, never terminated (its EBS volumes kept). It is the guarded stop every host stop shares
(domain/workflow/host.py: Scheduler asked first, then stop and wait), ending where the host is stopped."""

from __future__ import annotations

from rightsizer.domain.action_spec import DESCRIBE, HOST_GUARDS, SAFE_FROM_PAIRS, ActionSpec, kind_of
from rightsizer.domain.workflow.asl import State, equals, not_
from rightsizer.domain.workflow.fragments import IN, PAIR_FIELDS, health
from rightsizer.domain.workflow.plugs import Entry, Fragment, Route

SPEC = ActionSpec(
    kind_of(__name__),
    name="Stop",
    done="Stopped",
    becomes="stopped",
    change="stop",
    target_text="stop",
    approve_label="Approve stop",
    confirm_title="Stop this host?",
    confirm_button="Stop",
    confirm_text="stop the {type} (never terminated; EBS volumes kept, no snapshot taken).",
    stops_host=True,
    guarded_by=HOST_GUARDS,
    # StartInstances: the rollback starts a host that stopped too late again.
    permissions=DESCRIBE | SAFE_FROM_PAIRS | {"ec2:StopInstances", "ec2:StartInstances"},
)


def states() -> dict[str, State]:
    return {
        "StoppedAsApproved": health(
            "stopped as approved; its EBS volumes are kept and nothing was terminated",
            comment=(
                "Never terminate: the host is stopped, its EBS volumes and its type are kept (EBS snapshots are not "
                "taken)."
            ),
        ),
    }


WORKFLOW = Fragment(
    states,
    routes={Entry.STOPPED: Route("StoppedAsApproved")},
    request=PAIR_FIELDS,
    bad_request=not_(equals(IN.expected_state, "running")),
)
