"""Who launches and replaces a host, read from the tags launchers put on the instances they start.

A host that an Auto Scaling group, a Kubernetes node group or autoscaler (EKS, Karpenter, the cluster autoscaler), an
ECS capacity provider, AWS Batch, EMR, ParallelCluster, a Ray cluster or an EC2 or Spot Fleet launches belongs to
that owner: stopped in place it is marked unhealthy and replaced (or its job fails), resized in place it drifts from
its template and is recycled. The expert's advice for such a host is about the owner's object (its template, its
sizes, its requirements), never one click on the host. One `Launcher` per owner in `LAUNCHERS`, asked in order, most
specific first (an EKS managed node group's nodes are Auto Scaling members too). A tag that an AWS service set
(`aws:...`, a prefix no user may use) and this table does not know is read as an owner too, unnamed: whatever set it
may manage the host, and a guess the other way could stop a working node.

Pure data and functions: the instance workflow's host checks (domain/workflow/host.py) refuse hosts with any of
`OWNER_TAG_FILTERS`, the analyzer's `owned_elsewhere` rule words the advice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rightsizer.domain.resources import ResourceKind, resource_id

ASG_TAG = "aws:autoscaling:groupName"
# Tags AWS sets that say where an instance came from, not who replaces it: a CloudFormation stack, a launch
# template, a Service Catalog product, a restore from AWS Backup, a migration. Such a host is its owner's to change.
PROVENANCE_PREFIXES = (
    "aws:cloudformation:",
    "aws:ec2launchtemplate:",
    "aws:servicecatalog:",
    "aws:backup:",
    "aws:migrationhub:",
    "aws:ec2:instance-connect",
)


@dataclass(frozen=True, slots=True)
class Launcher:
    """One kind of owner: the tags that name it, and what its owner changes instead of the host."""

    key: str
    label: str  # in people's words: "Karpenter NodePool"
    tags: tuple[str, ...]  # tag keys that identify it (the first present names the owner); "x/*" matches a prefix
    idle: str  # what the owner changes for a host that does nothing
    schedulable: str  # ...for a host busy only some hours
    resize: str  # ...for any other change (a smaller or larger type)
    cluster_tags: tuple[str, ...] = ()  # tags naming the cluster the owner belongs to ("x/*": the suffix names it)
    member: str = "a node of"  # how a host is said to belong to it
    # Tags whose value names the owner better than the identifying tag's (ECS marks its group, which names it).
    name_tags: tuple[str, ...] = ()
    # The resource kind its nodes' group advice is about (domain/node_groups/); None: each node is advised alone.
    resource: ResourceKind | None = None
    kubernetes: bool = False  # its hosts are Kubernetes nodes (Container Insights may publish their GPU metrics)


def _matches(pattern: str, key: str) -> bool:
    return key.startswith(pattern[:-1]) if pattern.endswith("*") else key == pattern


def _found(patterns: tuple[str, ...], tags: Mapping[str, str]) -> tuple[str, str] | None:
    """The first (tag key, name) a pattern finds: a prefix pattern's name is the key's suffix (Kubernetes'
    kubernetes.io/cluster/<name>), an exact key's name its value."""
    for pattern in patterns:
        for key, value in tags.items():
            if _matches(pattern, key):
                return key, (key[len(pattern) - 1 :] if pattern.endswith("*") else value)
    return None


_REPLACED = "a stopped or resized node is replaced"

LAUNCHERS: tuple[Launcher, ...] = (
    Launcher(
        "karpenter",
        "Karpenter NodePool",
        ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name"),
        idle="let Karpenter remove it: check the NodePool's disruption settings (consolidationPolicy, "
        f"consolidateAfter) and what keeps a pod on it ({_REPLACED})",
        schedulable="let Karpenter remove it when its pods are gone: scale the workload down for the idle hours "
        f"({_REPLACED})",
        resize="change the NodePool's requirements (e.g. karpenter.k8s.aws/instance-gpu-count, instance families)",
        cluster_tags=("eks:eks-cluster-name", "kubernetes.io/cluster/*"),
        resource=ResourceKind.KARPENTER_NODEPOOL,
        kubernetes=True,
    ),
    Launcher(
        "eks-nodegroup",
        "EKS managed node group",
        ("eks:nodegroup-name",),
        idle=f"lower the node group's desired and minimum size ({_REPLACED})",
        schedulable=f"scale the node group down for the idle hours ({_REPLACED})",
        resize="change the node group's instance types (a new launch template version)",
        cluster_tags=("eks:cluster-name", "kubernetes.io/cluster/*"),
        resource=ResourceKind.EKS_NODEGROUP,
        kubernetes=True,
    ),
    Launcher(
        "batch",
        "AWS Batch compute environment",
        ("aws:batch:compute-environment", "AWSBatchServiceTag"),
        idle=f"lower the compute environment's minimum vCPUs ({_REPLACED})",
        schedulable=f"lower the compute environment's minimum vCPUs for the idle hours ({_REPLACED})",
        resize="change the compute environment's instance types",
        name_tags=("aws:batch:compute-environment", ASG_TAG),
        resource=ResourceKind.BATCH_COMPUTE_ENVIRONMENT,
    ),
    Launcher(
        "emr",
        "EMR cluster",
        ("aws:elasticmapreduce:job-flow-id",),
        idle="resize or terminate the cluster's instance group (managed scaling, or auto-termination when idle)",
        schedulable="use EMR managed scaling or run the work as transient clusters",
        resize="change the instance group's or fleet's instance type (a new cluster, or a new instance group)",
    ),
    Launcher(
        "parallelcluster",
        "ParallelCluster cluster",
        ("parallelcluster:cluster-name",),
        idle="let Slurm power the node down: lower the queue's MinCount and set ScaledownIdletime "
        "(pcluster update-cluster)",
        schedulable="set the queue's MinCount to 0 so Slurm starts nodes for jobs and powers them down after",
        resize="change the compute resource's InstanceType (pcluster update-cluster)",
    ),
    Launcher(
        "ray",
        "Ray cluster",
        ("ray-cluster-name", "skypilot-cluster-name"),
        idle="lower the node type's min_workers and idle_timeout_minutes (ray up)",
        schedulable="set the node type's min_workers to 0 so the autoscaler starts workers for the work",
        resize="change the node type's InstanceType in the cluster YAML (ray up)",
    ),
    Launcher(
        "ecs",
        "ECS capacity provider",
        ("AmazonECSManaged",),
        idle=f"lower the capacity provider's target capacity or its Auto Scaling group's minimum ({_REPLACED})",
        schedulable=f"scale the capacity provider's Auto Scaling group down for the idle hours ({_REPLACED})",
        resize="change the launch template of the capacity provider's Auto Scaling group",
        name_tags=(ASG_TAG,),
        resource=ResourceKind.ECS_CAPACITY_PROVIDER,
    ),
    Launcher(
        "auto-scaling",
        "Auto Scaling group",
        (ASG_TAG,),
        idle="lower the group's desired capacity (a stopped or terminated member is replaced)",
        schedulable="add scheduled scaling actions for the idle hours (a stopped member is replaced)",
        resize="change the launch template of Auto Scaling group '{name}'",
        member="a member of",
        # A self-managed Kubernetes node group is an Auto Scaling group whose nodes name their cluster.
        cluster_tags=("kubernetes.io/cluster/*",),
        resource=ResourceKind.AUTO_SCALING_GROUP,
    ),
    # Kubernetes nodes no group launches (Cluster API machines, nodes joined by hand).
    Launcher(
        "kubernetes",
        "Kubernetes cluster",
        ("kubernetes.io/cluster/*", "k8s.io/cluster-autoscaler/*", "kops.k8s.io/instancegroup"),
        idle=f"drain and remove the node through the cluster's node management ({_REPLACED})",
        schedulable="let the cluster autoscaler remove it when its pods are gone",
        resize="change the node group's instance type where the cluster's nodes are defined",
        kubernetes=True,
    ),
    Launcher(
        "ec2-fleet",
        "EC2 Fleet",
        ("aws:ec2:fleet-id",),
        idle=f"lower the fleet's target capacity ({_REPLACED} by a maintain-type fleet)",
        schedulable="lower the fleet's target capacity for the idle hours",
        resize="change the fleet's launch template overrides",
    ),
    Launcher(
        "spot-fleet",
        "Spot Fleet",
        ("aws:ec2spot:fleet-request-id",),
        idle="lower the Spot Fleet request's target capacity",
        schedulable="lower the Spot Fleet request's target capacity for the idle hours",
        resize="change the Spot Fleet request's launch specifications",
    ),
)

AUTO_SCALING = next(launcher for launcher in LAUNCHERS if launcher.key == "auto-scaling")

# Whatever AWS service set an `aws:` tag this table does not know.
UNKNOWN_SERVICE = Launcher(
    "aws-service",
    "AWS service",
    ("aws:*",),
    idle="stop it through the service that launched it, if that service allows",
    schedulable="schedule it through the service that launched it",
    resize="change its type through the service that launched it",
    member="launched by",
)

# The tag-key filters (EC2's DescribeInstances `tag-key`, `*` a wildcard) of every known launcher: the instance
# workflow refuses a host that carries any.
OWNER_TAG_FILTERS: tuple[str, ...] = tuple(pattern for launcher in LAUNCHERS for pattern in launcher.tags)


@dataclass(frozen=True, slots=True)
class Owner:
    """What launches and replaces one host, and the tag that said so."""

    launcher: Launcher
    name: str
    tag: str
    cluster: str = ""

    @property
    def description(self) -> str:
        """In people's words: "Karpenter NodePool 'gpu' (cluster 'ml')", "Auto Scaling group 'serving'"."""
        if self.launcher is UNKNOWN_SERVICE:
            return f"an AWS service (tag {self.tag})"
        cluster = f" (cluster '{self.cluster}')" if self.cluster and self.cluster != self.name else ""
        return f"{self.launcher.label} '{self.name}'{cluster}"

    @property
    def kind(self) -> ResourceKind | None:
        """The resource kind its nodes' group advice is about (None: each node is advised alone)."""
        return self.launcher.resource

    @property
    def resource_id(self) -> str:
        """The group's id (its recommendation's instance_id), e.g. eks-nodegroup/ml/gpu-inference; "" without a
        resource kind."""
        kind = self.launcher.resource
        if kind is None:
            return ""
        clustered = self.cluster and self.launcher.kubernetes
        return resource_id(kind, *((self.cluster, self.name) if clustered else (self.name,)))

    @property
    def kubernetes(self) -> bool:
        """Its hosts are Kubernetes nodes (a group whose nodes name their cluster is a self-managed node group):
        Container Insights may publish their GPU metrics."""
        return self.launcher.kubernetes or bool(self.cluster)

    @property
    def evidence(self) -> str:
        return f"tag {self.tag}"

    @property
    def membership(self) -> str:
        """How the host belongs to it: "a node of Karpenter NodePool 'gpu'", "a member of Auto Scaling group 'x'"."""
        return f"{self.launcher.member} {self.description}"

    def named(self, change: str) -> str:
        """One of the launcher's changes (idle, schedulable, resize) with this owner's name in it."""
        return change.format(name=self.name)


def owner_of(tags: Mapping[str, str], asg_name: str | None = None) -> Owner | None:
    """What launches and replaces a host with these tags (None: nothing does, it is its owner's to change).
    `asg_name` is the Auto Scaling group EC2 named where the tag itself was not kept."""
    for launcher in LAUNCHERS:
        found = _found(launcher.tags, tags)
        if found is not None:
            cluster = _found(launcher.cluster_tags, tags) if launcher.cluster_tags else None
            named = _found(launcher.name_tags, tags) if launcher.name_tags else None
            name = (named[1] if named else "") or found[1] or found[0]
            return Owner(launcher, name, found[0], cluster[1] if cluster else "")
    if asg_name:
        return Owner(AUTO_SCALING, asg_name, ASG_TAG)
    unknown = next((key for key in tags if key.startswith("aws:") and not key.startswith(PROVENANCE_PREFIXES)), None)
    return Owner(UNKNOWN_SERVICE, tags[unknown], unknown) if unknown is not None else None
