"""Node groups (domain/node_groups/): the nodes an EKS node group, a Karpenter NodePool, an ECS capacity provider,
AWS Batch or an Auto Scaling group launches get one recommendation for that owner, saying what it edits; the nodes'
own advice points at it and saves nothing twice."""

from __future__ import annotations

from decimal import Decimal

from demo.fleet import IDLE_GPU, diurnal, noisy

from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Recommendation
from rightsizer.domain.models.hosts import Instance
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import ResourceKind
from rightsizer.services.analyze import analyze_as_read, analyze_hosts, for_the_fleet
from rightsizer.services.collect import shard_instances
from rightsizer.services.report import Category, build_report, category, fleet_totals, report_json
from tests import factories
from tests.expert_fleet import A10G, GIB, gpu, mib
from tests.factories import NOW
from tests.unit.shapes import Workload, summary

EKS_TAGS = {
    "eks:nodegroup-name": "gpu-inference",
    "eks:cluster-name": "ml",
    "aws:autoscaling:groupName": "eks-gpu-inference-4ec6",
    "kubernetes.io/cluster/ml": "owned",
}
ONE_OF_FOUR = Workload(
    gpus=(gpu(diurnal(25, 55), mib(7 * GIB, 150, cap=A10G)), IDLE_GPU, IDLE_GPU, IDLE_GPU),
    cpu=diurnal(4, 9, 1),
    network_gbps=diurnal(0.02, 0.08, 0.005),
    host_memory_pct=noisy(10, 1),
)
IDLE_NODE = Workload(gpus=(IDLE_GPU,) * 4, cpu=noisy(2, 0.4, lo=0.1), host_memory_pct=noisy(6, 0.5))


def nodes(
    count: int, tags: dict[str, str], instance_type: str = "g5.12xlarge", prefix: str = "i-0eks"
) -> list[Instance]:
    return [
        factories.instance(instance_type, f"{prefix}{n:013x}", tags={**tags, "Name": f"node-{n}"}) for n in range(count)
    ]


def analyse(hosts: list[Instance], workloads: list[Workload]) -> list[Recommendation]:
    usage = {
        h.instance_id: summary(w, instance_id=h.instance_id, seed=h.instance_id)
        for h, w in zip(hosts, workloads, strict=True)
    }
    return analyze_hosts(hosts, usage, factories.catalog(), factories.prices(), Policy(), NOW, {})


def group_of(recs: list[Recommendation], kind: ResourceKind) -> Recommendation:
    (group,) = [r for r in recs if r.kind is kind]
    return group


def test_an_eks_node_group_whose_nodes_use_1_of_4_gpus_is_told_to_use_a_1_gpu_type() -> None:
    hosts = nodes(3, EKS_TAGS)
    recs = analyse(hosts, [ONE_OF_FOUR] * 3)

    group = group_of(recs, ResourceKind.EKS_NODEGROUP)
    assert group.instance_id == "eks-nodegroup/ml/gpu-inference"
    assert group.finding is Finding.OVERPROVISIONED
    target = factories.catalog().spec(group.target_type or "")
    assert target is not None and target.compute_units == 1
    node_cost = sum((r.monthly_cost or Decimal(0) for r in recs if r.kind is ResourceKind.EC2), Decimal(0))
    assert group.monthly_cost == node_cost
    assert group.monthly_savings is not None and group.monthly_savings > node_cost / 2
    assert not group.actionable and group.action is None
    assert group.confidence.at_most(Confidence.MEDIUM) is group.confidence
    assert "1 of 4 GPUs" in group.reasons[0]
    assert any('instanceTypes ["' in r for r in group.reasons), group.reasons  # what the owner edits


def test_each_node_points_at_its_group_and_saves_nothing_itself() -> None:
    hosts = nodes(2, EKS_TAGS)
    recs = analyse(hosts, [ONE_OF_FOUR] * 2)

    group = group_of(recs, ResourceKind.EKS_NODEGROUP)
    own = [r for r in recs if r.kind is ResourceKind.EC2]
    assert len(own) == 2
    for rec in own:
        assert rec.finding is Finding.EXCLUDED and rec.would_be is Finding.OVERPROVISIONED
        assert group.instance_id in rec.reasons[0]
        assert rec.monthly_savings == 0 and not rec.actionable and rec.target_type is None


def test_the_totals_count_a_groups_nodes_once_and_its_saving_under_another_owner() -> None:
    hosts = nodes(2, EKS_TAGS)
    recs = analyse(hosts, [ONE_OF_FOUR] * 2)
    group = group_of(recs, ResourceKind.EKS_NODEGROUP)

    totals = fleet_totals(recs, None)

    assert totals.instances == 2  # the nodes, not the group as a third host
    assert totals.monthly_cost == sum(r.monthly_cost or Decimal(0) for r in recs if r.kind is ResourceKind.EC2)
    assert category(group, None) is Category.OTHER_OWNER
    assert totals.other_owner_savings == group.monthly_savings


def test_idle_nodes_the_autoscaler_keeps_are_named_with_their_cost() -> None:
    hosts = nodes(3, {"karpenter.sh/nodepool": "gpu", "eks:eks-cluster-name": "ml"}, prefix="i-0kar")
    recs = analyse(hosts, [ONE_OF_FOUR, IDLE_NODE, IDLE_NODE])

    group = group_of(recs, ResourceKind.KARPENTER_NODEPOOL)
    assert group.instance_id == "karpenter-nodepool/ml/gpu"
    assert sum(r.count("idle (no GPU work in 14 days)") for r in group.reasons) == 2, group.reasons
    assert any("consolidationPolicy" in r for r in group.reasons)
    assert group.monthly_savings is not None and group.monthly_savings > 0


def test_a_group_none_of_whose_nodes_publish_gpu_metrics_is_insufficient_data() -> None:
    hosts = nodes(2, EKS_TAGS)
    blind = Workload(gpus=(), cpu=noisy(20, 3), host_memory_pct=None)
    recs = analyse(hosts, [blind, blind])

    group = group_of(recs, ResourceKind.EKS_NODEGROUP)
    assert group.finding is Finding.INSUFFICIENT_DATA
    assert "Container Insights" in group.reasons[0]


def test_nodes_of_owners_without_a_group_kind_are_advised_one_by_one() -> None:
    hosts = nodes(2, {"aws:elasticmapreduce:job-flow-id": "j-1"}, prefix="i-0emr")
    recs = analyse(hosts, [ONE_OF_FOUR] * 2)

    assert [r.kind for r in recs] == [ResourceKind.EC2, ResourceKind.EC2]
    assert all(r.finding is Finding.EXCLUDED and "EMR cluster 'j-1'" in r.reasons[0] for r in recs)


def test_a_group_is_never_cut_across_shards() -> None:
    own = [factories.instance("g5.xlarge", f"i-0own{n:013x}") for n in range(5)]
    group = nodes(4, EKS_TAGS)

    shards = shard_instances([*own, *group], size=3)

    holding = [i for i, shard in enumerate(shards) if any(h.owner is not None for h in shard)]
    assert len(holding) == 1
    assert {h.instance_id for h in shards[holding[0]]} == {h.instance_id for h in group}
    assert sorted(h.instance_id for shard in shards for h in shard) == sorted(h.instance_id for h in [*own, *group])


def test_analysed_as_the_summaries_arrive_the_advice_is_the_same() -> None:
    """The CLI analyses each host as its summary is made and keeps only what the steps across hosts read
    (services.analyze.analyze_as_read): consolidation and node groups come out as from every summary at once."""
    light = Workload(
        gpus=(gpu(diurnal(8, 18), mib(3 * GIB, 100, cap=A10G)),),
        cpu=diurnal(4, 9, 1),
        network_gbps=diurnal(0.02, 0.08, 0.005),
        host_memory_pct=noisy(10, 1),
    )
    team = [factories.instance("g5.xlarge", f"i-0team{n:012x}", tags={"team": "search"}) for n in range(3)]
    hosts = [*team, *nodes(3, EKS_TAGS), factories.instance("g5.12xlarge", "i-0quiet00000000000")]
    workloads = [light] * 3 + [ONE_OF_FOUR, ONE_OF_FOUR, IDLE_NODE, IDLE_NODE]
    usage = {
        h.instance_id: summary(w, instance_id=h.instance_id, seed=h.instance_id)
        for h, w in zip(hosts, workloads, strict=True)
    }
    arriving = [usage[h.instance_id] for h in reversed(hosts[1:])]  # in another order, one host never read
    cat, book = factories.catalog(), factories.prices()

    at_once = analyze_hosts(hosts, {h: u for h, u in usage.items() if h != hosts[0].instance_id}, cat, book, Policy(),
                            NOW, {})  # fmt: skip
    as_read = analyze_as_read(hosts, iter(arriving), cat, book, Policy(), NOW, {})

    assert as_read == at_once
    findings = {r.finding for r in as_read}
    assert {Finding.CONSOLIDATE, Finding.INSUFFICIENT_DATA} <= findings
    assert any(r.kind is ResourceKind.EKS_NODEGROUP for r in as_read)
    kept = for_the_fleet(arriving[0])
    assert arriving[0].hourly_accelerator_peak and kept.hourly_accelerator_peak == ()  # only what is read across hosts
    assert kept.devices == arriving[0].devices


def test_the_json_report_carries_the_groups_kind() -> None:
    hosts = nodes(2, EKS_TAGS)
    recs = analyse(hosts, [ONE_OF_FOUR] * 2)

    document = report_json(build_report(recs, NOW, lookback_days=14))
    (group,) = [r for r in document["recommendations"] if r["kind"] == "eks-nodegroup"]
    assert group["resource_id"] == "eks-nodegroup/ml/gpu-inference"
    assert group["name"] == "gpu-inference" and group["actionable"] is False
