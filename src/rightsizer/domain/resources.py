"""The kinds of resource GPU spend runs on, one `ResourceSpec` per `ResourceKind` in `RESOURCES`.

A recommendation is about one resource: a bare EC2 host, a SageMaker endpoint's production variant or notebook
instance, or a group of nodes whose owner launches them (an EKS managed node group, a Karpenter NodePool, an ECS
capacity provider, an AWS Batch compute environment, a plain Auto Scaling group). Advice names the object its
owner edits; `Recommendation.instance_id` holds the resource's id (`resource_id` below) for every kind, so
stores, ranking and `/gpu show` key every kind alike.

Pure data: no I/O; the Slack app's cold start imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from rightsizer.domain.action_kinds import ActionKind


class ResourceKind(StrEnum):
    EC2 = "ec2"
    SAGEMAKER_ENDPOINT = "sagemaker-endpoint"  # one production variant of a real-time endpoint
    SAGEMAKER_NOTEBOOK = "sagemaker-notebook"
    SAGEMAKER_TRAINING = "sagemaker-training"  # training jobs of the window: advice for the next run
    EKS_NODEGROUP = "eks-nodegroup"
    KARPENTER_NODEPOOL = "karpenter-nodepool"
    ECS_CAPACITY_PROVIDER = "ecs-capacity-provider"
    BATCH_COMPUTE_ENVIRONMENT = "batch-compute-environment"
    AUTO_SCALING_GROUP = "auto-scaling-group"


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    kind: ResourceKind
    label: str  # in people's words: "SageMaker endpoint variant"
    id_prefix: str  # what starts the resource's id (Recommendation.instance_id): kinds never collide
    # What its owner edits to act on advice (None: the resource itself, as for an EC2 host).
    owner_edits: str | None = None
    node_group: bool = False  # EC2 nodes launched by an owner: never resized or stopped in place
    # What each one-click action an EC2 host's advice would carry becomes for this kind (a resize of an endpoint
    # variant is an endpoint update); None: the EC2 host's own actions. A kind with a mapping offers only what it
    # maps: anything else is advice.
    actions: Mapping[ActionKind, ActionKind] | None = field(default=None, hash=False)


RESOURCES: Mapping[ResourceKind, ResourceSpec] = MappingProxyType(
    {
        ResourceKind.EC2: ResourceSpec(ResourceKind.EC2, "EC2 instance", "i-"),
        ResourceKind.SAGEMAKER_ENDPOINT: ResourceSpec(
            ResourceKind.SAGEMAKER_ENDPOINT,
            "SageMaker endpoint variant",
            "sagemaker-endpoint/",
            owner_edits="the endpoint's configuration (a new endpoint config and UpdateEndpoint)",
            actions=MappingProxyType({ActionKind.RESIZE: ActionKind.UPDATE_ENDPOINT}),
        ),
        ResourceKind.SAGEMAKER_NOTEBOOK: ResourceSpec(
            ResourceKind.SAGEMAKER_NOTEBOOK,
            "SageMaker notebook instance",
            "sagemaker-notebook/",
            actions=MappingProxyType({ActionKind.STOP: ActionKind.STOP_NOTEBOOK}),
        ),
        ResourceKind.SAGEMAKER_TRAINING: ResourceSpec(
            ResourceKind.SAGEMAKER_TRAINING,
            "SageMaker training jobs",
            "sagemaker-training/",
            owner_edits="the next run's ResourceConfig (instance type and count)",
            actions=MappingProxyType({}),
        ),
        ResourceKind.EKS_NODEGROUP: ResourceSpec(
            ResourceKind.EKS_NODEGROUP,
            "EKS managed node group",
            "eks-nodegroup/",
            owner_edits="the node group's instance types and scaling (UpdateNodegroupConfig, or a new launch "
            "template version)",
            node_group=True,
            actions=MappingProxyType({}),
        ),
        ResourceKind.KARPENTER_NODEPOOL: ResourceSpec(
            ResourceKind.KARPENTER_NODEPOOL,
            "Karpenter NodePool",
            "karpenter-nodepool/",
            owner_edits="the NodePool's requirements (e.g. karpenter.k8s.aws/instance-gpu-count) and limits",
            node_group=True,
            actions=MappingProxyType({}),
        ),
        ResourceKind.ECS_CAPACITY_PROVIDER: ResourceSpec(
            ResourceKind.ECS_CAPACITY_PROVIDER,
            "ECS capacity provider",
            "ecs-capacity-provider/",
            owner_edits="the capacity provider's Auto Scaling group launch template and scaling",
            node_group=True,
            actions=MappingProxyType({}),
        ),
        ResourceKind.BATCH_COMPUTE_ENVIRONMENT: ResourceSpec(
            ResourceKind.BATCH_COMPUTE_ENVIRONMENT,
            "AWS Batch compute environment",
            "batch-compute-environment/",
            owner_edits="the compute environment's instance types and vCPU limits",
            node_group=True,
            actions=MappingProxyType({}),
        ),
        ResourceKind.AUTO_SCALING_GROUP: ResourceSpec(
            ResourceKind.AUTO_SCALING_GROUP,
            "Auto Scaling group",
            "auto-scaling-group/",
            owner_edits="the group's launch template and desired capacity",
            node_group=True,
            actions=MappingProxyType({}),
        ),
    }
)


def resource_id(kind: ResourceKind, *parts: str) -> str:
    """The id of a resource of `kind` from its names (an EC2 host: its instance id), e.g.
    resource_id(SAGEMAKER_ENDPOINT, "chat-llm", "AllTraffic") == "sagemaker-endpoint/chat-llm/AllTraffic"."""
    if kind is ResourceKind.EC2:
        (instance_id,) = parts
        return instance_id
    return RESOURCES[kind].id_prefix + "/".join(parts)


def kind_of(resource: str) -> ResourceKind:
    """The kind a resource id names (ids are kind-prefixed; an instance id is EC2's)."""
    for spec in RESOURCES.values():
        if spec.kind is not ResourceKind.EC2 and resource.startswith(spec.id_prefix):
            return spec.kind
    return ResourceKind.EC2
