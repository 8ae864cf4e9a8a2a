"""Who launches and replaces a host (domain/owners.py): read from the tags launchers really put on instances."""

from __future__ import annotations

import pytest
from statemachine.build import build

from rightsizer.domain.owners import LAUNCHERS, OWNER_TAG_FILTERS, UNKNOWN_SERVICE, owner_of


@pytest.mark.parametrize(
    ("tags", "launcher", "described"),
    [
        pytest.param(
            {"karpenter.sh/nodepool": "gpu", "eks:eks-cluster-name": "ml", "aws:ec2:fleet-id": "fleet-1"},
            "karpenter",
            "Karpenter NodePool 'gpu' (cluster 'ml')",
            id="karpenter-v1",
        ),
        pytest.param(
            {"karpenter.sh/provisioner-name": "default", "kubernetes.io/cluster/prod": "owned"},
            "karpenter",
            "Karpenter NodePool 'default' (cluster 'prod')",
            id="karpenter-v1alpha5",
        ),
        pytest.param(
            {"eks:nodegroup-name": "gpu-ng", "eks:cluster-name": "ml", "aws:autoscaling:groupName": "eks-gpu-ng-1a2b"},
            "eks-nodegroup",
            "EKS managed node group 'gpu-ng' (cluster 'ml')",
            id="eks-managed-over-its-asg",
        ),
        pytest.param(
            {"aws:elasticmapreduce:job-flow-id": "j-1", "aws:elasticmapreduce:instance-group-role": "TASK"},
            "emr",
            "EMR cluster 'j-1'",
            id="emr",
        ),
        pytest.param(
            {"parallelcluster:cluster-name": "hpc", "parallelcluster:node-type": "Compute", "aws:ec2:fleet-id": "f"},
            "parallelcluster",
            "ParallelCluster cluster 'hpc'",
            id="parallelcluster-over-its-fleet",
        ),
        pytest.param({"ray-cluster-name": "r", "ray-node-type": "worker"}, "ray", "Ray cluster 'r'", id="ray"),
        pytest.param(
            {"AmazonECSManaged": "", "aws:autoscaling:groupName": "ecs-gpu"}, "ecs", "ECS capacity provider", id="ecs"
        ),
        pytest.param({"kubernetes.io/cluster/edge": "owned"}, "kubernetes", "Kubernetes cluster 'edge'", id="k8s"),
        pytest.param({"aws:ec2:fleet-id": "fleet-9"}, "ec2-fleet", "EC2 Fleet 'fleet-9'", id="ec2-fleet"),
        pytest.param({"aws:ec2spot:fleet-request-id": "sfr-1"}, "spot-fleet", "Spot Fleet 'sfr-1'", id="spot-fleet"),
        pytest.param(
            {"aws:autoscaling:groupName": "serving"}, "auto-scaling", "Auto Scaling group 'serving'", id="asg"
        ),
        pytest.param(
            {"aws:deadline:fleet-id": "f-1"}, "aws-service", "an AWS service (tag aws:deadline:fleet-id)", id="unknown"
        ),
    ],
)
def test_the_owner_is_read_from_the_tags_its_launcher_sets(tags: dict[str, str], launcher: str, described: str) -> None:
    owner = owner_of(tags)

    assert owner is not None
    assert owner.launcher.key == launcher
    assert owner.description.startswith(described)


@pytest.mark.parametrize(
    "tags",
    [
        {},
        {"Name": "train-01", "team": "ml"},
        # Where the host came from, not who replaces it: a stack, a launch template, a restore, a migration.
        {"aws:cloudformation:stack-name": "gpu-box", "aws:cloudformation:logical-id": "Host"},
        {"aws:ec2launchtemplate:id": "lt-1", "aws:ec2launchtemplate:version": "3"},
        {"aws:backup:source-resource": "i-0abc"},
        {"aws:servicecatalog:productArn": "arn:aws:catalog:us-east-1:123456789012:product/prod-1"},
    ],
)
def test_a_host_of_its_own_has_no_owner(tags: dict[str, str]) -> None:
    assert owner_of(tags) is None


def test_an_auto_scaling_group_ec2_named_without_its_tag_is_an_owner() -> None:
    owner = owner_of({}, asg_name="serving")

    assert owner is not None and owner.membership == "a member of Auto Scaling group 'serving'"


def test_every_launcher_says_what_its_owner_changes_for_each_kind_of_advice() -> None:
    for launcher in (*LAUNCHERS, UNKNOWN_SERVICE):
        assert launcher.idle and launcher.schedulable and launcher.resize, launcher.key
        assert launcher.tags, launcher.key


def test_the_instance_workflow_refuses_every_known_owner_by_its_tags() -> None:
    definition = build()
    values = definition["States"]["CountAsgTag"]["Parameters"]["Filters"][0]["Values"]

    assert values == list(OWNER_TAG_FILTERS)
    assert "aws:autoscaling:groupName" in values and "kubernetes.io/cluster/*" in values
