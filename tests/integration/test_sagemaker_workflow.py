"""The instance workflow's SageMaker branches, executed for real by moto: an endpoint variant's blue/green update
(the rollback alarm, a new endpoint config, UpdateEndpoint, then following the endpoint to its end) and a notebook
instance's stop, with the refusals that come before anything is touched.

moto has no UpdateEndpoint: demo/moto_sagemaker.py adds it (and `roll_back_next` ends an update as SageMaker's
auto-rollback does). moto's SageMaker accepts only older instance types (ml.g4dn, ml.p3): the endpoints here use them.
The rest of the world (DynamoDB, EventBridge to SQS, the real ASL) and what it stands in for: resize_world.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from demo import moto_sagemaker
from moto.sagemaker.models import FakeSagemakerNotebookInstance, sagemaker_backends

from rightsizer.adapters.aws.dynamo import keys
from rightsizer.domain.approval import ApprovalStatus
from rightsizer.domain.models import ActionKind
from rightsizer.domain.workflow_contract import MAX_SAGEMAKER_POLLS, SageMakerInput, WorkflowError, WorkflowInput
from rightsizer.services import workflow_events
from rightsizer.services.ports import Approval, SageMakerAction
from tests.botocore_samples import every_member, input_shape, problems
from tests.integration.resize_world import (
    ACCOUNT,
    APPROVED_AT,
    MANAGED,
    OPT_OUT,
    REGION,
    Aws,
    RecordingSlack,
    audit_events,
    status_change_event,
    wait_for,
)

pytestmark = pytest.mark.integration

ROLE = f"arn:aws:iam::{ACCOUNT}:role/SageMakerExecution"
BIG, SMALL = "ml.g4dn.12xlarge", "ml.g4dn.2xlarge"
NOTEBOOK_TYPE = "ml.p3.2xlarge"  # moto's notebook instances accept ml.p3, not ml.g4dn
MANAGED_TAG = {"Key": MANAGED, "Value": "true"}


@dataclass
class SageMaker:
    """moto's SageMaker (with UpdateEndpoint) and CloudWatch, and what the workflow asked of them."""

    client: Any
    cloudwatch: Any
    notebook_stops: list[str] = field(default_factory=list)

    def endpoint(self, name: str, *, tags: list[dict[str, str]] | None = None, configs: int = 1) -> str:
        """An endpoint of one variant (AllTraffic) on 2 x `BIG`, running the last of its `configs` configs
        (`<name>-config-1`, ...), tagged managed unless `tags` says otherwise; returns its ARN."""
        model = f"{name}-model"
        self.client.create_model(ModelName=model, ExecutionRoleArn=ROLE, PrimaryContainer={"Image": "123.dkr.ecr/x:1"})
        for number in range(1, configs + 1):
            self.client.create_endpoint_config(
                EndpointConfigName=f"{name}-config-{number}",
                ProductionVariants=[
                    {
                        "VariantName": "AllTraffic",
                        "ModelName": model,
                        "InitialInstanceCount": 2,
                        "InstanceType": BIG,
                        "InitialVariantWeight": 1.0,
                    }
                ],
            )
        arn: str = self.client.create_endpoint(
            EndpointName=name,
            EndpointConfigName=f"{name}-config-{configs}",
            Tags=[MANAGED_TAG] if tags is None else tags,
        )["EndpointArn"]
        return arn

    def notebook(self, name: str, *, instance_type: str = NOTEBOOK_TYPE, status: str = "InService") -> str:
        """A managed notebook instance in `status` (set on moto's model: moto decides a new one's status itself)."""
        arn: str = self.client.create_notebook_instance(
            NotebookInstanceName=name, InstanceType=instance_type, RoleArn=ROLE, Tags=[MANAGED_TAG]
        )["NotebookInstanceArn"]
        sagemaker_backends[ACCOUNT][REGION].notebook_instances[name].status = status
        return arn

    def config_names(self) -> set[str]:
        return {c["EndpointConfigName"] for c in self.client.list_endpoint_configs(MaxResults=100)["EndpointConfigs"]}

    def endpoint_now(self, name: str) -> tuple[str, str]:
        described = self.client.describe_endpoint(EndpointName=name)
        return described["EndpointStatus"], described["EndpointConfigName"]

    def alarms(self, name: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.cloudwatch.describe_alarms(AlarmNames=[name])["MetricAlarms"]
        return found


@pytest.fixture
def sagemaker(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> Iterator[SageMaker]:
    moto_sagemaker.install()
    moto_sagemaker.reset()
    world = SageMaker(boto3.client("sagemaker", region_name=REGION), boto3.client("cloudwatch", region_name=REGION))
    stop = FakeSagemakerNotebookInstance.stop

    def recorded_stop(notebook: FakeSagemakerNotebookInstance) -> None:
        world.notebook_stops.append(notebook.notebook_instance_name)
        stop(notebook)

    monkeypatch.setattr(FakeSagemakerNotebookInstance, "stop", recorded_stop)
    yield world
    moto_sagemaker.reset()


def endpoint_update(name: str, arn: str, *, expected_config: str | None = None) -> Approval:
    """An approved update of endpoint `name`'s variant AllTraffic from 2 x BIG to 1 x SMALL, as approvals.approve
    writes it: the resource id is the recommendation's instance id, the SageMaker fields name what is acted on."""
    return Approval(
        recommendation_id=f"rec-update-{name}",
        account_id=ACCOUNT,
        region=REGION,
        instance_id=f"sagemaker-endpoint/{name}/AllTraffic",
        from_type=BIG,
        to_type=SMALL,
        approver="U0APPROVER",
        approved_at=APPROVED_AT,
        slack_channel="C0RESIZE",
        slack_ts="1733054400.000100",
        action=ActionKind.UPDATE_ENDPOINT,
        sagemaker=SageMakerAction(
            name=name,
            arn=arn,
            variant_name="AllTraffic",
            model_name=f"{name}-model",
            endpoint_config_name=expected_config or f"{name}-config-1",
            target_count=1,
        ),
    )


def notebook_stop(name: str, arn: str, instance_type: str = NOTEBOOK_TYPE) -> Approval:
    return Approval(
        recommendation_id=f"rec-stop-{name}",
        account_id=ACCOUNT,
        region=REGION,
        instance_id=f"sagemaker-notebook/{name}",
        from_type=instance_type,
        to_type="stopped",
        approver="U0APPROVER",
        approved_at=APPROVED_AT,
        action=ActionKind.STOP_NOTEBOOK,
        sagemaker=SageMakerAction(name=name, arn=arn),
    )


def approved(aws: Aws, request: Approval) -> None:
    """The approval record the Slack app writes before it starts the workflow (the notifier closes it)."""
    aws.store.create_approval(request)
    aws.store.update_approval(request.recommendation_id, status=ApprovalStatus.RUNNING)


def run(aws: Aws, request: Approval) -> dict[str, Any]:
    """Start the execution as the Slack app does (StepFunctionsResizeWorkflow.start) and wait for its end."""
    return wait_for(aws, aws.workflow().start(request))


def sent_input(result: Mapping[str, Any]) -> dict[str, Any]:
    sent: dict[str, Any] = json.loads(result["input"])
    return sent


def lock_of(aws: Aws, resource_id: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = aws.table.get_item(Key=keys.lock_key(resource_id)).get("Item")
    return item


# ------------------------------------------------------------------------------- endpoint update


def test_an_endpoint_is_updated_blue_green_to_a_new_config_on_the_target_type(
    aws: Aws, sagemaker: SageMaker, task_credentials: list[str]
) -> None:
    arn = sagemaker.endpoint("chat-summarizer")
    request = endpoint_update("chat-summarizer", arn)
    approved(aws, request)

    result = run(aws, request)

    assert result["status"] == "SUCCEEDED", result
    sent = sent_input(result)["sagemaker"]
    new_config, alarm = sent["new_config_name"], sent["alarm_name"]
    assert new_config.startswith("rightsizer-chat-summarizer-") and alarm == "rightsizer-chat-summarizer-rollback"
    # the endpoint serves on the new config: the judged variant and model, on the target type and count
    assert sagemaker.endpoint_now("chat-summarizer") == ("InService", new_config)
    (variant,) = sagemaker.client.describe_endpoint_config(EndpointConfigName=new_config)["ProductionVariants"]
    assert (variant["VariantName"], variant["ModelName"]) == ("AllTraffic", "chat-summarizer-model")
    assert (variant["InstanceType"], variant["InitialInstanceCount"]) == (SMALL, 1)
    old = sagemaker.client.describe_endpoint_config(EndpointConfigName="chat-summarizer-config-1")
    assert old["ProductionVariants"][0]["InstanceType"] == BIG  # configs are immutable: the old one is kept
    # one UpdateEndpoint: blue/green, a canary first, rolled back by SageMaker when the alarm fires
    (update,) = moto_sagemaker.updates()
    assert (update["EndpointName"], update["EndpointConfigName"]) == ("chat-summarizer", new_config)
    deployment = update["DeploymentConfig"]
    routing = deployment["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]
    assert routing["Type"] == "CANARY"
    assert routing["CanarySize"] == {"Type": "CAPACITY_PERCENT", "Value": 10}
    assert routing["WaitIntervalInSeconds"] > 0 and deployment["BlueGreenUpdatePolicy"]["TerminationWaitInSeconds"] > 0
    assert deployment["AutoRollbackConfiguration"] == {"Alarms": [{"AlarmName": alarm}]}
    # the alarm the rollback watches exists: any 5XX of this endpoint's variant
    (watched,) = sagemaker.alarms(alarm)
    assert (watched["Namespace"], watched["MetricName"]) == ("AWS/SageMaker", "Invocation5XXErrors")
    assert {(d["Name"], d["Value"]) for d in watched["Dimensions"]} == {
        ("EndpointName", "chat-summarizer"),
        ("VariantName", "AllTraffic"),
    }
    # every SageMaker and CloudWatch call ran as the account's action role
    assert task_credentials and set(task_credentials) == {sent_input(result)["action_role_arn"]}

    assert audit_events(aws, request.recommendation_id) == [
        "update_endpoint_started",
        "validated",
        "update_requested",
        "succeeded",
    ]
    events = aws.events()
    details = [event["detail"] for event in events]
    assert [(d["step"], d["status"]) for d in details] == [
        ("validated", "running"),
        ("update_requested", "running"),
        ("succeeded", "succeeded"),
    ]
    assert {(d["action"], d["instance_id"], d["from_type"], d["to_type"]) for d in details} == {
        ("update_endpoint", request.instance_id, BIG, SMALL)
    }
    assert "canary of 10 percent" in details[1]["message"]
    output = json.loads(result["output"])
    assert (output["action"], output["status"], output["to_type"]) == ("update_endpoint", "succeeded", SMALL)
    assert output["message"] == (
        f"Done: endpoint chat-summarizer variant AllTraffic now runs 1 x {SMALL} "
        f"(SageMaker reports it InService on endpoint config {new_config})."
    )
    assert lock_of(aws, request.instance_id) is None
    # the real notifier closes the approval and tells the thread
    slack = RecordingSlack()
    deps = workflow_events.Dependencies(aws.store, slack)
    for event in [*events, status_change_event(aws, result["executionArn"])]:
        workflow_events.process(event, deps, datetime.now(UTC))
    closed = aws.store.approval(request.recommendation_id)
    assert closed is not None and closed.status is ApprovalStatus.SUCCEEDED
    assert slack.replies[-1] == (f":white_check_mark: `{request.instance_id}` {BIG} → {SMALL}: {output['message']}")
    assert slack.roots == [
        f":white_check_mark: Endpoint updated: `{request.instance_id}` {BIG} → {SMALL} (approved by <@U0APPROVER>). "
        "Details in the thread."
    ]


def test_an_update_sagemaker_rolls_back_ends_rolled_back_on_the_old_config(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("fraud-scorer")
    request = endpoint_update("fraud-scorer", arn)
    moto_sagemaker.roll_back_next(REGION, "fraud-scorer")

    result = run(aws, request)

    assert (result["status"], result["error"]) == ("FAILED", WorkflowError.ROLLED_BACK.value), result
    assert result["cause"].startswith(
        f"Rolled back: endpoint fraud-scorer serves on {BIG} again (fraud-scorer-config-1). "
        f"The endpoint update to 1 x {SMALL} failed: SageMaker rolled the deployment back"
    )
    assert sagemaker.endpoint_now("fraud-scorer") == ("InService", "fraud-scorer-config-1")
    assert len(moto_sagemaker.updates()) == 1  # the update was asked for; SageMaker undid it
    assert audit_events(aws, request.recommendation_id) == [
        "update_endpoint_started",
        "validated",
        "update_requested",
        "rolled_back",
    ]
    assert [e["detail"]["status"] for e in aws.events()][-1] == "rolled_back"
    assert lock_of(aws, request.instance_id) is None


def _update_that_ends(monkeypatch: pytest.MonkeyPatch, status: str | None) -> list[str]:
    """SageMaker accepts UpdateEndpoint and the endpoint then stays `status` on its old config (None: the call itself
    is refused, as SageMaker refuses a config it cannot deploy). Returns the endpoints asked to update."""
    from moto.sagemaker.exceptions import ValidationError

    asked: list[str] = []

    def update(backend: Any, name: str, config_name: str, deployment: dict[str, Any] | None) -> str:
        asked.append(name)
        if status is None:
            raise ValidationError(message=f"The instance type {SMALL} is not supported for this endpoint.")
        endpoint = backend.endpoints[name]
        endpoint.endpoint_status = status
        endpoint.failure_reason = "the new fleet failed its health checks" if status == "Failed" else None
        return str(endpoint.arn)

    monkeypatch.setattr(moto_sagemaker, "_update_endpoint", update)
    return asked


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        pytest.param("Failed", "SageMaker reports the endpoint Failed", id="failed"),
        pytest.param("UpdateRollbackFailed", "SageMaker reports the endpoint UpdateRollbackFailed", id="rollback"),
        pytest.param("Updating", "the endpoint was still Updating after 15 polls", id="never-settles"),
    ],
)
def test_an_update_that_does_not_end_in_service_needs_a_person(
    aws: Aws, sagemaker: SageMaker, monkeypatch: pytest.MonkeyPatch, status: str, reason: str
) -> None:
    name = f"stuck-{status.lower()}"
    request = endpoint_update(name, sagemaker.endpoint(name))
    asked = _update_that_ends(monkeypatch, status)

    result = run(aws, request)

    assert (result["status"], result["error"]) == ("FAILED", WorkflowError.ROLLBACK_FAILED.value), result
    assert result["cause"] == (
        f"Needs a person: the endpoint update to 1 x {SMALL} of {name} did not end as expected: {reason}. "
        "Check it in the SageMaker console."
    )
    assert asked == [name]
    assert sagemaker.endpoint_now(name) == (status, f"{name}-config-1")
    assert audit_events(aws, request.recommendation_id) == [
        "update_endpoint_started",
        "validated",
        "update_requested",
        "rollback_failed",
    ]
    assert [e["detail"]["status"] for e in aws.events()][-1] == ApprovalStatus.FAILED.value
    assert lock_of(aws, request.instance_id) is None


def test_an_update_sagemaker_refuses_leaves_the_endpoint_unchanged(
    aws: Aws, sagemaker: SageMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = endpoint_update("refused-update", sagemaker.endpoint("refused-update"))
    asked = _update_that_ends(monkeypatch, None)

    result = run(aws, request)

    assert (result["status"], result["error"]) == ("FAILED", WorkflowError.UNCHANGED.value), result
    assert result["cause"].startswith(
        f"The endpoint was not changed: refused-update keeps serving on {BIG} (refused-update-config-1). The endpoint "
        f"update to 1 x {SMALL} failed: the update could not be started: "
    )
    assert f"The instance type {SMALL} is not supported" in result["cause"]
    assert asked == ["refused-update"]
    assert sagemaker.endpoint_now("refused-update") == ("InService", "refused-update-config-1")
    assert audit_events(aws, request.recommendation_id) == ["update_endpoint_started", "validated", "unchanged"]
    assert lock_of(aws, request.instance_id) is None


# ------------------------------------------------------------------------------- a copy that changes one thing

CREATE_CONFIG = input_shape("sagemaker", "CreateEndpointConfig")
VARIANT = CREATE_CONFIG.members["ProductionVariants"].member  # type: ignore[attr-defined]
# What a copy of a config cannot carry safely: the workflow refuses these (test below), anywhere in the config or on
# the judged variant. Every other member botocore documents is set in the copy test's config.
REFUSED_IN_CONFIG = {"ExecutionRoleArn"}  # a role the action role would have to pass
REFUSED_ANYWHERE = {"ServerlessConfig"}  # serverless variants are sized by memory, not instance type
REFUSED_ON_JUDGED = {"InstancePools", "CapacityReservationConfig", "AcceleratorPartitionLayouts"}  # tied to its type


def full_variant(name: str, model: str, instance_type: str, count: int, *, judged: bool) -> dict[str, Any]:
    """A production variant with every member botocore documents (placeholder values), less what is refused."""
    variant: dict[str, Any] = every_member(VARIANT, name)
    left_out = REFUSED_ANYWHERE | (REFUSED_ON_JUDGED if judged else set())
    variant = {key: value for key, value in variant.items() if key not in left_out}
    variant.update(VariantName=name, ModelName=model, InstanceType=instance_type, InitialInstanceCount=count)
    variant.update(InitialVariantWeight=0.5, AcceleratorType="ml.eia1.medium")
    if "InstancePools" in variant:
        variant["InstancePools"] = [{"InstanceType": instance_type, "ModelNameOverride": model, "Priority": 1}]
    return variant


def full_config(name: str, model: str) -> dict[str, Any]:
    """CreateEndpointConfig with every member botocore documents set (less the refused ones): the judged variant
    AllTraffic (2 x BIG), an A/B variant and a shadow variant."""
    config: dict[str, Any] = {k: v for k, v in every_member(CREATE_CONFIG).items() if k not in REFUSED_IN_CONFIG}
    config.update(
        EndpointConfigName=f"{name}-config-1",
        ProductionVariants=[
            full_variant("AllTraffic", model, BIG, 2, judged=True),
            full_variant("Challenger", model, "ml.g4dn.xlarge", 1, judged=False),
        ],
        ShadowProductionVariants=[full_variant("Shadow", model, "ml.g4dn.xlarge", 1, judged=False)],
        Tags=[{"Key": "team", "Value": "search"}, {"Key": MANAGED, "Value": "yes-but-not-true"}],
        KmsKeyId=f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    )
    assert problems(config, CREATE_CONFIG) == ""  # a request SageMaker's model accepts
    return config


def test_the_copy_test_sets_every_member_botocore_documents_for_create_endpoint_config() -> None:
    config = full_config("coverage", "m")
    variants = [*config["ProductionVariants"], *config["ShadowProductionVariants"]]

    assert set(config) | REFUSED_IN_CONFIG == set(CREATE_CONFIG.members)  # type: ignore[attr-defined]
    assert {key for v in variants for key in v} | REFUSED_ANYWHERE == set(VARIANT.members)
    assert set(config["ProductionVariants"][1]) >= REFUSED_ON_JUDGED  # another variant keeps them: only the judged not


def test_an_endpoint_update_copies_the_config_whole_and_changes_only_the_judged_variant(
    aws: Aws, sagemaker: SageMaker, task_credentials: list[str]
) -> None:
    name, model = "full-house", "full-house-model"
    sagemaker.client.create_model(ModelName=model, ExecutionRoleArn=ROLE, PrimaryContainer={"Image": "123.dkr.ecr/x:1"})
    config = full_config(name, model)
    sagemaker.client.create_endpoint_config(**config)
    arn = sagemaker.client.create_endpoint(
        EndpointName=name, EndpointConfigName=config["EndpointConfigName"], Tags=[MANAGED_TAG]
    )["EndpointArn"]
    # Auto scaling moved the challenger to 3 instances and a quarter of the traffic since the config was written.
    live = sagemaker_backends[ACCOUNT][REGION].endpoints[name].production_variants
    challenger = next(v for v in live if v["VariantName"] == "Challenger")
    challenger.update(DesiredInstanceCount=3, CurrentInstanceCount=3, DesiredWeight=0.25, CurrentWeight=0.25)
    request = endpoint_update(name, arn)
    approved(aws, request)

    result = run(aws, request)

    assert result["status"] == "SUCCEEDED", result
    new_name = sent_input(result)["sagemaker"]["new_config_name"]
    old = sagemaker.client.describe_endpoint_config(EndpointConfigName=config["EndpointConfigName"])
    new = sagemaker.client.describe_endpoint_config(EndpointConfigName=new_name)
    expected = {key: value for key, value in old.items() if key not in ("EndpointConfigName", "EndpointConfigArn")}
    judged, other = (dict(v) for v in expected["ProductionVariants"])
    judged.update(InstanceType=SMALL, InitialInstanceCount=1)  # the one change
    other.update(InitialInstanceCount=3, InitialVariantWeight=0.25)  # as the endpoint runs it now
    expected["ProductionVariants"] = [judged, other]
    for answer in (expected, new):
        answer.pop("CreationTime"), answer.pop("ResponseMetadata")
    new.pop("EndpointConfigName"), new.pop("EndpointConfigArn")
    assert new == expected
    assert set(new) | {"Tags", "EndpointConfigName"} | REFUSED_IN_CONFIG == set(CREATE_CONFIG.members)  # type: ignore[attr-defined]
    tags = sagemaker.client.list_tags(ResourceArn=f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/{new_name}")
    assert tags["Tags"] == [{"Key": "team", "Value": "search"}, MANAGED_TAG]  # the action role's policy asks it
    assert sagemaker.endpoint_now(name) == ("InService", new_name)


def _pools(variant: dict[str, Any]) -> None:
    variant["InstancePools"] = [{"InstanceType": BIG, "Priority": 1}, {"InstanceType": SMALL, "Priority": 2}]


def _reservation(variant: dict[str, Any]) -> None:
    variant["CapacityReservationConfig"] = {
        "CapacityReservationPreference": "capacity-reservations-only",
        "MlReservationArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:reserved-capacity/rc-1",
    }


def _partitions(variant: dict[str, Any]) -> None:
    variant["AcceleratorPartitionLayouts"] = [{"AcceleratorPartitionTypes": ["mig-1g.5gb"]}]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        pytest.param(_pools, "the variant spreads over instance pools of several types", id="instance-pools"),
        pytest.param(_reservation, "the variant runs on a capacity reservation of its current type", id="reservation"),
        pytest.param(_partitions, "the variant partitions its GPUs for its current type", id="gpu-partitions"),
    ],
)
def test_an_endpoint_whose_judged_variant_is_tied_to_its_type_is_refused(
    aws: Aws,
    sagemaker: SageMaker,
    change: Callable[[dict[str, Any]], None],
    reason: str,
    request: pytest.FixtureRequest,
) -> None:
    name = f"tied-{request.node.callspec.id}"
    arn = sagemaker.endpoint(name)
    config = sagemaker_backends[ACCOUNT][REGION].endpoint_configs[f"{name}-config-1"]
    change(config.production_variants[0])
    update = endpoint_update(name, arn)

    _refused(aws, sagemaker, run(aws, update), update, f"cannot be updated in one click: {reason}")


def test_an_endpoint_whose_models_are_inference_components_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("components")
    # moto requires a ModelName where SageMaker does not: an endpoint whose models are inference components has none.
    sagemaker_backends[ACCOUNT][REGION].endpoint_configs["components-config-1"].production_variants[0].pop("ModelName")
    update = endpoint_update("components", arn)

    _refused(aws, sagemaker, run(aws, update), update, "its models are inference components")


def test_an_endpoint_with_a_serverless_variant_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("half-serverless")
    variants = sagemaker_backends[ACCOUNT][REGION].endpoint_configs["half-serverless-config-1"].production_variants
    variants.append(
        {
            "VariantName": "Cheap",
            "ModelName": "half-serverless-model",
            "ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 5},
        }
    )
    update = endpoint_update("half-serverless", arn)

    _refused(aws, sagemaker, run(aws, update), update, "it has serverless variants")


def test_an_endpoint_whose_config_passes_an_execution_role_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("with-role")
    config = sagemaker_backends[ACCOUNT][REGION].endpoint_configs["with-role-config-1"]
    config.whole_request = {  # type: ignore[attr-defined]  # what demo/moto_sagemaker keeps of a config
        "ProductionVariants": config.production_variants,
        "ExecutionRoleArn": ROLE,
    }
    update = endpoint_update("with-role", arn)

    _refused(aws, sagemaker, run(aws, update), update, "passes an execution role, which the action role may not pass")


def test_an_endpoint_whose_config_is_opted_out_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("config-opted")
    config_arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/config-opted-config-1"
    sagemaker.client.add_tags(ResourceArn=config_arn, Tags=[{"Key": OPT_OUT, "Value": "yes"}])
    update = endpoint_update("config-opted", arn)

    _refused(aws, sagemaker, run(aws, update), update, f"carries the opt-out tag {OPT_OUT}")


def test_an_endpoint_whose_config_lacks_the_judged_variant_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("renamed")
    update = replace(
        endpoint_update("renamed", arn),
        sagemaker=SageMakerAction(
            name="renamed", arn=arn, variant_name="Blue", endpoint_config_name="renamed-config-1", target_count=1
        ),
    )

    _refused(
        aws,
        sagemaker,
        run(aws, update),
        update,
        f"endpoint config renamed-config-1 has no production variant Blue on {BIG}: the advice is stale",
    )


# ------------------------------------------------------------------------------- refusals


def _refused(aws: Aws, sagemaker: SageMaker, result: dict[str, Any], request: Approval, reason: str) -> None:
    """Refused, in words, before anything was touched: no alarm, no config, no update, no stop."""
    assert (result["status"], result["error"]) == ("FAILED", WorkflowError.REFUSED.value), result
    assert reason in result["cause"], result["cause"]
    assert moto_sagemaker.updates() == [] and sagemaker.notebook_stops == []
    sent = sent_input(result)["sagemaker"]
    if request.action is ActionKind.UPDATE_ENDPOINT:
        assert sent["new_config_name"] not in sagemaker.config_names()
        assert sagemaker.alarms(sent["alarm_name"]) == []
    assert audit_events(aws, request.recommendation_id) == [f"{request.action.value}_started", "refused"]
    assert [e["detail"]["status"] for e in aws.events()] == ["refused"]
    assert lock_of(aws, request.instance_id) is None


@pytest.mark.parametrize(
    ("tags", "reason"),
    [
        pytest.param(
            [MANAGED_TAG, {"Key": OPT_OUT, "Value": "keep"}], f"carries the opt-out tag {OPT_OUT}", id="opted"
        ),
        pytest.param([], f"is not tagged {MANAGED}=true", id="untagged"),
        pytest.param([{"Key": MANAGED, "Value": "false"}], f"is not tagged {MANAGED}=true", id="managed-false"),
    ],
)
def test_an_endpoint_not_ours_to_change_is_refused(
    aws: Aws, sagemaker: SageMaker, tags: list[dict[str, str]], reason: str, request: pytest.FixtureRequest
) -> None:
    name = f"tags-{request.node.callspec.id}"
    configs_before = sagemaker.config_names()
    update = endpoint_update(name, sagemaker.endpoint(name, tags=tags))

    _refused(aws, sagemaker, run(aws, update), update, reason)
    assert sagemaker.config_names() == configs_before | {f"{name}-config-1"}
    assert sagemaker.endpoint_now(name) == ("InService", f"{name}-config-1")


def test_an_endpoint_whose_config_changed_since_the_advice_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("reranker", configs=2)  # someone moved it to reranker-config-2 since
    request = endpoint_update("reranker", arn, expected_config="reranker-config-1")

    _refused(
        aws,
        sagemaker,
        run(aws, request),
        request,
        "endpoint reranker now runs endpoint config reranker-config-2, not reranker-config-1 as when it was advised "
        "on: the advice is stale",
    )
    assert sagemaker.endpoint_now("reranker") == ("InService", "reranker-config-2")


def test_an_endpoint_that_is_not_in_service_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("embedder")
    sagemaker_backends[ACCOUNT][REGION].endpoints["embedder"].endpoint_status = "Updating"
    request = endpoint_update("embedder", arn)

    _refused(
        aws,
        sagemaker,
        run(aws, request),
        request,
        "endpoint embedder is Updating, not InService: only an endpoint at rest is updated",
    )


def test_an_endpoint_that_is_gone_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.endpoint("deleted-since")
    sagemaker.client.delete_endpoint(EndpointName="deleted-since")
    request = endpoint_update("deleted-since", arn)

    _refused(aws, sagemaker, run(aws, request), request, "could not read deleted-since")


def test_a_notebook_that_is_not_in_service_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    request = notebook_stop("nb-pending", sagemaker.notebook("nb-pending", status="Pending"))

    _refused(aws, sagemaker, run(aws, request), request, "notebook instance nb-pending is Pending, not InService")
    assert sagemaker.client.describe_notebook_instance(NotebookInstanceName="nb-pending")["NotebookInstanceStatus"] == (
        "Pending"
    )


def test_a_notebook_whose_type_changed_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    request = notebook_stop("nb-resized", sagemaker.notebook("nb-resized", instance_type="ml.p3.8xlarge"))

    _refused(
        aws,
        sagemaker,
        run(aws, request),
        request,
        f"notebook instance nb-resized is now ml.p3.8xlarge, the recommendation expected {NOTEBOOK_TYPE}: the advice "
        "is stale",
    )
    assert sagemaker.client.describe_notebook_instance(NotebookInstanceName="nb-resized")["NotebookInstanceStatus"] == (
        "InService"
    )


def test_an_opted_out_notebook_is_refused(aws: Aws, sagemaker: SageMaker) -> None:
    arn = sagemaker.notebook("nb-opted")
    sagemaker.client.add_tags(ResourceArn=arn, Tags=[{"Key": OPT_OUT, "Value": "mine"}])
    request = notebook_stop("nb-opted", arn)

    _refused(aws, sagemaker, run(aws, request), request, f"carries the opt-out tag {OPT_OUT}")


# ------------------------------------------------------------------------------- notebook stop


def test_an_idle_notebook_is_stopped(aws: Aws, sagemaker: SageMaker) -> None:
    request = notebook_stop("research-nb-alice", sagemaker.notebook("research-nb-alice"))

    result = run(aws, request)

    assert result["status"] == "SUCCEEDED", result
    described = sagemaker.client.describe_notebook_instance(NotebookInstanceName="research-nb-alice")
    assert (described["NotebookInstanceStatus"], described["InstanceType"]) == ("Stopped", NOTEBOOK_TYPE)
    assert sagemaker.notebook_stops == ["research-nb-alice"]
    assert moto_sagemaker.updates() == []
    assert audit_events(aws, request.recommendation_id) == [
        "stop_notebook_started",
        "validated",
        "stop_requested",
        "succeeded",
    ]
    details = [event["detail"] for event in aws.events()]
    assert [(d["step"], d["status"], d["action"]) for d in details] == [
        ("validated", "running", "stop_notebook"),
        ("succeeded", "succeeded", "stop_notebook"),
    ]
    output = json.loads(result["output"])
    assert (output["action"], output["status"], output["instance_id"]) == (
        "stop_notebook",
        "succeeded",
        "sagemaker-notebook/research-nb-alice",
    )
    assert output["message"] == (
        "Done: notebook instance research-nb-alice is stopped (SageMaker reports it Stopped; its ML storage volume "
        "is kept)."
    )
    assert lock_of(aws, request.instance_id) is None


# ------------------------------------------------------------------------------- invalid input


def _input(aws: Aws, request: Approval) -> WorkflowInput:
    """The input StepFunctionsResizeWorkflow writes for `request` (its workflow_input)."""
    return aws.workflow().workflow_input(request, "running")


def _sagemaker_of(data: WorkflowInput) -> SageMakerInput:
    assert data.sagemaker is not None
    return data.sagemaker


def _without_sagemaker(data: WorkflowInput) -> WorkflowInput:
    return replace(data, sagemaker=None)


def _no_target_count(data: WorkflowInput) -> WorkflowInput:
    return replace(data, sagemaker=replace(_sagemaker_of(data), target_count=0))


def _too_many_polls(data: WorkflowInput) -> WorkflowInput:
    return replace(data, sagemaker=replace(_sagemaker_of(data), max_polls=MAX_SAGEMAKER_POLLS + 1))


def _no_variant(data: WorkflowInput) -> WorkflowInput:
    return replace(data, sagemaker=replace(_sagemaker_of(data), variant_name=""))


def _no_expected_config(data: WorkflowInput) -> WorkflowInput:
    return replace(data, sagemaker=replace(_sagemaker_of(data), expected_config=""))


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(_without_sagemaker, id="no-sagemaker-section"),
        pytest.param(_no_target_count, id="no-target-count"),
        pytest.param(_too_many_polls, id="too-many-polls"),
        pytest.param(_no_variant, id="empty-variant"),
        pytest.param(_no_expected_config, id="empty-config"),
    ],
)
def test_an_endpoint_update_without_its_sagemaker_fields_is_invalid(
    aws: Aws, sagemaker: SageMaker, broken: Callable[[WorkflowInput], WorkflowInput], request: pytest.FixtureRequest
) -> None:
    name = f"invalid-{request.node.callspec.id}"
    update = endpoint_update(name, sagemaker.endpoint(name))
    data = broken(_input(aws, update)).to_json()
    assert data["action"] == "update_endpoint"

    arn = aws.sfn.start_execution(stateMachineArn=aws.state_machine_arn, name=name, input=json.dumps(data))[
        "executionArn"
    ]
    result = wait_for(aws, arn)

    assert (result["status"], result["error"]) == ("FAILED", WorkflowError.INVALID_REQUEST.value), result
    assert audit_events(aws, update.recommendation_id) == []  # nothing ran, not even the first audit entry
    assert moto_sagemaker.updates() == []
    assert not any(n.startswith(f"rightsizer-{name}-") for n in sagemaker.config_names())
    assert sagemaker.alarms(f"rightsizer-{name}-rollback") == []
    assert aws.events() == []


def test_a_notebook_stop_without_its_sagemaker_section_is_invalid(aws: Aws, sagemaker: SageMaker) -> None:
    stop = notebook_stop("nb-invalid", sagemaker.notebook("nb-invalid"))
    data = _without_sagemaker(_input(aws, stop)).to_json()

    arn = aws.sfn.start_execution(stateMachineArn=aws.state_machine_arn, name="nb-invalid", input=json.dumps(data))[
        "executionArn"
    ]
    result = wait_for(aws, arn)

    assert (result["status"], result["error"]) == ("FAILED", WorkflowError.INVALID_REQUEST.value), result
    assert audit_events(aws, stop.recommendation_id) == [] and sagemaker.notebook_stops == []
