"""The one-click actions, one `ActionSpec` per `ActionKind` in `ACTIONS`: the one place their words and rights live.

The Slack buttons and their confirmations, the notifier's headlines, the approval's `to_type` and what the advice
says of a host read them here; a test checks that the action role (template.yaml and member-account/template.yaml)
grants each spec's permissions and that the instance workflow's branch of the action calls each of them. Adding an
action is one member and one entry here, plus its workflow fragment (statemachine/resize.py for an EC2 host's,
statemachine/sagemaker.py for a SageMaker resource's), then `make asl` and `make schema`: the state machine's
allow-list and the schema's enum are generated from this registry (tests/integration/test_new_member_footprint.py
adds one and counts the files it touches). An action that needs input no other action has also extends what
adapters/aws/workflow.py puts in the execution input, and one that needs a right no action has the ActionRole of both
templates.

Pure data: no I/O; the Slack app's cold start imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from rightsizer.domain.guards import Source


class ActionKind(StrEnum):
    """What one approved click does to a host (the instance workflow runs each, see docs/resize-workflow.md)."""

    RESIZE = "resize"
    STOP = "stop"
    SCHEDULE = "schedule"  # an EventBridge Scheduler stop/start pair
    UNSCHEDULE = "unschedule"  # remove that pair again (`/gpu schedules`)
    # A SageMaker endpoint variant's resize: a new endpoint config, then UpdateEndpoint with blue/green guardrails.
    UPDATE_ENDPOINT = "update_endpoint"
    STOP_NOTEBOOK = "stop_notebook"  # StopNotebookInstance: its ML storage volume is kept


class PairChange(StrEnum):
    """What an action does to the host's stop/start pair: the `/gpu schedules` registry follows it on success."""

    CREATES = "creates"
    REMOVES = "removes"


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """One action in every surface's words. Texts may hold `{type}` (the host's type), `{target}` (the target type)
    and `{schedule}` (the busy hours in words) where the field says so."""

    kind: ActionKind
    name: str  # what its workflow is called: "Resize started by", "Resize refused", "the resize workflow"
    done: str  # the headline of a success: "Resized"
    becomes: str  # what the host becomes, as `from_type → to_type` shows it (Approval.to_type); {target}
    # The change in words, for the workflow's audit entries and messages ("The {change} failed: ..."): {target},
    # {count} (the endpoint's instance count) and {schedule} (the approved pair's description).
    change: str
    # Only what advice carries (an Approve button, /gpu show): what it says after "`{type}` →"; {target}.
    target_text: str = ""
    approve_label: str = ""  # the Approve button
    confirm_title: str = ""  # the Approve button's confirmation: its title, its confirm button, what will happen
    confirm_button: str = ""
    confirm_text: str = ""  # {type}, {target}, {schedule}
    needs_target: bool = False  # advice carries it only with a target type (and a target type always means it)
    # Leaves the host stopped, for good or for hours: a scarce type may find no capacity to start again, so such
    # advice takes the button that names the risk (unless a capacity reservation holds the host's capacity).
    stops_host: bool = False
    pair: PairChange | None = None  # the approval carries a stop/start plan, and the registry follows the change
    # The sources its guards read (domain/guards.py): while one cannot be read, advice does not offer it.
    guarded_by: frozenset[Source] = frozenset()
    # The AWS actions its branch of the instance workflow calls as the action role (sts:GetCallerIdentity, which
    # every branch calls first, needs none). A test checks both templates grant them and the branch calls them.
    permissions: frozenset[str] = frozenset()

    @property
    def offered(self) -> bool:
        """Advice can carry it (an Approve button); the others start elsewhere (`/gpu schedules` → Remove)."""
        return bool(self.approve_label)

    @property
    def on_host(self) -> bool:
        """Acts on an EC2 host (its branch starts with the host checks): the action role needs its rights on every
        host tagged for one click (`rightsizer doctor` simulates them)."""
        return self.permissions >= _DESCRIBE

    @property
    def workflow(self) -> str:
        """'resize workflow', 'schedule removal workflow'."""
        return f"{self.name.lower()} workflow"


_DESCRIBE = frozenset({"ec2:DescribeInstances"})  # the host checks every action on a host starts with
# What any one click on a host relies on: the host judged on its current type (its resizes), as it is now (described
# again, its tags), on series read whole.
_HOST_GUARDS = frozenset({Source.RESIZES, Source.DESCRIBED, Source.METRICS})
_SAFE_FROM_PAIRS = frozenset({"scheduler:ListSchedules"})  # a stop or resize is refused while the host has a pair

ACTIONS: Mapping[ActionKind, ActionSpec] = MappingProxyType(
    {
        ActionKind.RESIZE: ActionSpec(
            ActionKind.RESIZE,
            name="Resize",
            done="Resized",
            becomes="{target}",
            change="resize to {target}",
            target_text="`{target}`",
            approve_label="Approve resize",
            confirm_title="Resize this host?",
            confirm_button="Resize",
            confirm_text="{type} → {target}. The host is stopped and started: typically a few minutes of downtime.",
            needs_target=True,
            # ...and a target the region offers, a saving no reservation turns into a cost.
            guarded_by=_HOST_GUARDS | {Source.OFFERINGS, Source.COMMITMENTS},
            permissions=_DESCRIBE
            | _SAFE_FROM_PAIRS
            | {
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeInstanceTypeOfferings",
                "ec2:DescribeInstanceStatus",
                "ec2:StopInstances",
                "ec2:ModifyInstanceAttribute",
                "ec2:StartInstances",  # and the rollback's stop and start
            },
        ),
        ActionKind.STOP: ActionSpec(
            ActionKind.STOP,
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
            guarded_by=_HOST_GUARDS,
            # StartInstances: the rollback starts a host that stopped too late again.
            permissions=_DESCRIBE | _SAFE_FROM_PAIRS | {"ec2:StopInstances", "ec2:StartInstances"},
        ),
        ActionKind.SCHEDULE: ActionSpec(
            ActionKind.SCHEDULE,
            name="Schedule",
            done="Scheduled",
            becomes="stop/start schedule",
            change="stop/start schedule ({schedule})",
            target_text="stop/start on a schedule",
            approve_label="Approve schedule",
            confirm_title="Schedule this host?",
            confirm_button="Create schedule",
            confirm_text="stop and start the {type} on a schedule ({schedule}).",
            stops_host=True,
            pair=PairChange.CREATES,
            guarded_by=_HOST_GUARDS | {Source.OFFERINGS},  # ...and its type offered, to start again every day
            # DeleteSchedule: the rollback deletes a half-created pair; PassRole: each half runs as the scheduler role.
            permissions=_DESCRIBE | {"scheduler:CreateSchedule", "scheduler:DeleteSchedule", "iam:PassRole"},
        ),
        ActionKind.UNSCHEDULE: ActionSpec(
            ActionKind.UNSCHEDULE,
            name="Schedule removal",
            done="Schedule removed",
            becomes="no schedule",
            change="removal of the stop/start schedule",
            pair=PairChange.REMOVES,
            # ListSchedules: the removal decides from what is left, never from error names.
            permissions=frozenset({"scheduler:DeleteSchedule", "scheduler:ListSchedules"}),
        ),
        ActionKind.UPDATE_ENDPOINT: ActionSpec(
            ActionKind.UPDATE_ENDPOINT,
            name="Endpoint update",
            done="Endpoint updated",
            becomes="{target}",
            change="endpoint update to {count} x {target}",
            target_text="`{target}`",
            approve_label="Approve endpoint update",
            confirm_title="Update this endpoint?",
            confirm_button="Update endpoint",
            confirm_text=(
                "{type} → {target}: a new endpoint config, deployed blue/green (a canary first, then all traffic); "
                "SageMaker rolls back by itself if the 5XX alarm fires. No downtime."
            ),
            needs_target=True,
            permissions=frozenset(
                {
                    "sagemaker:DescribeEndpoint",
                    "sagemaker:DescribeEndpointConfig",  # the judged config, read whole: its copy keeps every setting
                    "sagemaker:ListTags",
                    "sagemaker:CreateEndpointConfig",
                    "sagemaker:AddTags",  # ...which CreateEndpointConfig's Tags need (tag on create)
                    "sagemaker:UpdateEndpoint",
                    "cloudwatch:PutMetricAlarm",  # the alarm the deployment's auto-rollback watches
                    "cloudwatch:DescribeAlarms",  # ...which UpdateEndpoint reads in the caller's name
                }
            ),
        ),
        ActionKind.STOP_NOTEBOOK: ActionSpec(
            ActionKind.STOP_NOTEBOOK,
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
        ),
    }
)
