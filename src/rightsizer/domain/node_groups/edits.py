"""What the owner of a group edits, in its own words: the metrics to publish, the setting that keeps idle nodes, and
how its node type is changed (a managed node group, a Karpenter NodePool, an ECS capacity provider, a Batch compute
environment, an Auto Scaling group)."""

from __future__ import annotations

from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.owners import Owner
from rightsizer.domain.resources import ResourceKind


def publish_text(owner: Owner) -> str:
    agent = "install the CloudWatch agent on the nodes' AMI (agent/README.md)"
    if not owner.kubernetes:
        return agent
    return (
        f"{agent}, or turn on Container Insights with enhanced observability (the Amazon CloudWatch "
        "Observability EKS add-on v1.3.0-eksbuild.1 or later, with the NVIDIA device plugin), whose "
        "node_gpu_* metrics the bot reads where the agent publishes none"
    )


def idle_advice(kind: ResourceKind, name: str) -> str:
    if kind is ResourceKind.EKS_NODEGROUP:
        return (
            f"lower the minimum and desired size of node group '{name}' (UpdateNodegroupConfig scalingConfig), "
            "or find "
            "what keeps the Cluster Autoscaler from removing the idle nodes (pods it cannot move: local storage, "
            "a PodDisruptionBudget, cluster-autoscaler.kubernetes.io/safe-to-evict=false)"
        )
    if kind is ResourceKind.KARPENTER_NODEPOOL:
        return (
            f"check the disruption settings of NodePool '{name}' (consolidationPolicy, consolidateAfter, "
            "budgets) and "
            "pods annotated karpenter.sh/do-not-disrupt: they keep Karpenter from removing the idle nodes"
        )
    if kind is ResourceKind.ECS_CAPACITY_PROVIDER:
        return (
            f"lower the minimum size of Auto Scaling group '{name}' or raise its capacity provider's "
            "targetCapacity towards 100 (less spare capacity kept for tasks)"
        )
    if kind is ResourceKind.BATCH_COMPUTE_ENVIRONMENT:
        return f"lower the minvCpus of compute environment '{name}' (Batch keeps that many vCPUs running without jobs)"
    return f"lower the minimum and desired capacity of Auto Scaling group '{name}'"


def type_advice(kind: ResourceKind, name: str, target: InstanceTypeSpec) -> str:
    new = target.instance_type
    if kind is ResourceKind.EKS_NODEGROUP:
        return (
            f"a managed node group's instance types are set when it is created (UpdateNodegroupConfig changes only "
            f'labels, taints and scaling): create a node group with instanceTypes ["{new}"], move the pods '
            f"(cordon and drain the old nodes), then delete '{name}'; if its launch template sets the instance "
            f"type, a new launch template version with {new} and UpdateNodegroupVersion replace the nodes in place"
        )
    if kind is ResourceKind.KARPENTER_NODEPOOL:
        counts = ", ".join(f'"{count}"' for count in range(1, target.accelerator_count + 1))
        return (
            f"narrow the requirements of NodePool '{name}': karpenter.k8s.aws/instance-gpu-count In [{counts}] (or "
            f'node.kubernetes.io/instance-type In ["{new}"]); Karpenter then replaces the larger nodes as its '
            "disruption budgets allow"
        )
    if kind is ResourceKind.ECS_CAPACITY_PROVIDER:
        return (
            f"a new version of the launch template of Auto Scaling group '{name}' (the capacity provider's) with "
            f"instance type {new}, then an instance refresh: ECS drains the tasks of each instance it replaces "
            "when managed instance draining is on"
        )
    if kind is ResourceKind.BATCH_COMPUTE_ENVIRONMENT:
        return (
            f"set the instanceTypes of compute environment '{name}' to [\"{new}\"] (or give its job queue one of {new})"
        )
    return f"a new launch template version with {new} for Auto Scaling group '{name}', then an instance refresh"
