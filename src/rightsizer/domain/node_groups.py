"""Node groups: one recommendation for the object that launches a group of GPU nodes, from their per-node analyses.

An EKS managed node group, a Karpenter NodePool, an ECS capacity provider, an AWS Batch compute environment or a
plain Auto Scaling group (`Instance.owner`, read from the nodes' tags) replaces a node that is stopped or resized,
so advice for one node is advice nobody can take. Each node is still analysed on its own (its GPUs, CPU, memory,
network; the `launched_by_owner` adjustment, domain/rules/ownership.py, keeps its finding in
`Recommendation.would_be` and reports it `excluded`), and this fleet-level pass, run where consolidation runs, turns
the nodes of one owner into ONE recommendation whose kind is the owner's (domain/resources.py), saying what the
owner edits:

- the GPUs per node against the GPUs the work uses (k of n on each node, the busiest node named);
- nodes that did no work in the window and that the autoscaler keeps (their whole cost);
- a node type larger than any node's work needs: the per-node downsize targets, of which the largest must carry
  every other node's target (more units, memory per unit, vCPUs, RAM, an accelerator at least as fast); the saving
  is each node's cost at that type, priced as the node is billed and on the hours it runs.

Never one click: the bot sees EC2 and CloudWatch, not the pods, so it cannot check where they would go or whether
their PodDisruptionBudgets allow losing a node. Confidence is medium at most, low when a node could not be judged
(no GPU metrics: never counted idle) or the nodes' needs conflict; a group none of whose nodes could be judged is
`insufficient_data`. Each node's own recommendation stays (excluded, or insufficient_data), saves nothing in the
totals (the group's does) and its first reason names the owner and the group's recommendation.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from rightsizer.domain.analyzer import recommendation_id
from rightsizer.domain.catalog import Catalog
from rightsizer.domain.commitments import Change, HostCover, net_savings
from rightsizer.domain.models import (
    CENT,
    ZERO,
    Confidence,
    Evidence,
    Finding,
    Instance,
    InstanceTypeSpec,
    Recommendation,
)
from rightsizer.domain.owners import Owner
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.resources import RESOURCES, ResourceKind
from rightsizer.domain.sizing.targets import host_prices
from rightsizer.domain.wording import pct, plural, usd

NODES_LISTED = 8  # nodes named one by one in the reasons; the rest are counted


@dataclass(frozen=True)
class Node:
    """One node of a group: its own (per-node) recommendation and what it runs as."""

    rec: Recommendation
    instance: Instance
    spec: InstanceTypeSpec | None
    opted_out: bool

    @property
    def iid(self) -> str:
        return self.instance.instance_id

    @property
    def judged(self) -> bool:
        """The rules measured its work (idle, right-sized, a smaller type, ...): `would_be` holds what they found."""
        return self.rec.would_be is not None

    @property
    def idle(self) -> bool:
        return self.rec.would_be is Finding.IDLE

    @property
    def busy_text(self) -> str:
        ev, unit = self.rec.evidence, self.spec.unit_name if self.spec else "GPU"
        if self.idle:
            return f"{self.iid}: idle (no {unit} work in {ev.observed_days:.0f} days)"
        if not self.judged:
            return f"{self.iid}: not judged ({self.rec.reasons[0] if self.rec.reasons else self.rec.finding.value})"
        would = self.rec.would_be.value if self.rec.would_be else ""
        to = f" to {self.rec.target_type}" if self.rec.target_type else ""
        return (
            f"{self.iid}: {ev.busy_units} of {ev.total_units} {unit}s busy, p95 {pct(ev.accelerator_p95)}; {would}{to}"
        )


def group_nodes(
    recommendations: Sequence[Recommendation],
    instances: Sequence[Instance],
    catalog: Catalog,
    prices: PriceBook,
    policy: Policy,
    covers: Mapping[str, HostCover] | None = None,
) -> list[Recommendation]:
    """`recommendations` of one region (or shard) with each owned node pointing at its group, followed by one
    recommendation per group (account, region, owner)."""
    by_id = {instance.instance_id: instance for instance in instances}
    groups: dict[tuple[str, str, str], list[Node]] = {}
    owners: dict[tuple[str, str, str], Owner] = {}
    for rec in recommendations:
        instance = by_id.get(rec.instance_id)
        grouped = node_group_of(rec, instance)
        if instance is None or grouped is None:
            continue
        key, owner = grouped
        owners[key] = owner
        node = Node(rec, instance, catalog.spec(instance.instance_type), policy.opt_out_tag in instance.tags)
        groups.setdefault(key, []).append(node)
    pointed: dict[str, Recommendation] = {}
    advice: list[Recommendation] = []
    for key, nodes in groups.items():
        group = _Group(owners[key], tuple(sorted(nodes, key=lambda n: n.iid)), catalog, prices, covers or {})
        rec = group.recommendation()
        advice.append(rec)
        for node in nodes:
            pointed[node.iid] = _pointing(node, group.owner, rec)
    return [*(pointed.get(rec.instance_id, rec) for rec in recommendations), *advice]


def node_group_of(rec: Recommendation, instance: Instance | None) -> tuple[tuple[str, str, str], Owner] | None:
    """The node group `group_nodes` advises the host in (its key: account, region, owner) and its owner; None: a host of
    its own, or an owner whose nodes are advised one by one (EMR, Ray, a fleet, ...)."""
    owner = instance.owner if instance is not None else None
    if owner is None or owner.kind is None or rec.kind is not ResourceKind.EC2:
        return None
    return (rec.account_id, rec.region, owner.resource_id), owner


def _pointing(node: Node, owner: Owner, group: Recommendation) -> Recommendation:
    """A node's own advice once its group has one: it names the owner and the group's advice, and saves nothing in
    the totals (the group's recommendation counts the node's share)."""
    rec = node.rec
    lead = (
        f"a node of {owner.description} ({owner.evidence}): advised as a group in {group.instance_id} "
        f"({group.finding.value}); its saving is counted there, not here"
    )
    cost = rec.monthly_cost
    return replace(
        rec,
        reasons=(lead, *rec.reasons),
        target_type=None,
        monthly_cost_after=cost,
        monthly_savings_net=ZERO if cost is not None else None,
        actionable=False,
        held_back=f"advised as a group in {group.instance_id}",
        recommendation_id=recommendation_id(node.instance, rec.finding, None),
    )


@dataclass(frozen=True)
class _Verdict:
    finding: Finding
    target: InstanceTypeSpec | None
    lead: str
    confidence: Confidence
    notes: tuple[str, ...] = ()


class _Group:
    def __init__(
        self,
        owner: Owner,
        nodes: tuple[Node, ...],
        catalog: Catalog,
        prices: PriceBook,
        covers: Mapping[str, HostCover],
    ) -> None:
        if owner.kind is None:
            raise ValueError(f"{owner.description} has no resource kind: its nodes are advised one by one")
        self.kind: ResourceKind = owner.kind
        self.owner, self.nodes, self.catalog, self.prices, self.covers = owner, nodes, catalog, prices, covers
        self.running = [n for n in nodes if n.instance.is_running]
        self.counted = [n for n in self.running if not n.opted_out]
        self.judged = [n for n in self.counted if n.judged]
        self.unjudged = [n for n in self.counted if not n.judged]
        self.idle = [n for n in self.judged if n.idle]
        self.working = [n for n in self.judged if not n.idle]
        types = Counter(n.instance.instance_type for n in (self.running or nodes))
        self.node_type = sorted(types.items(), key=lambda item: (-item[1], item[0]))[0][0]
        self.types = types
        self.spec = catalog.spec(self.node_type)
        self.label = RESOURCES[self.kind].label

    # What the work needs -------------------------------------------------------------------------------

    def _need(self, node: Node) -> InstanceTypeSpec | None:
        """The type a working node's work needs: its own downsize (or upsize) target, else its current type."""
        if node.rec.would_be in (Finding.OVERPROVISIONED, Finding.UNDERPROVISIONED) and node.rec.target_type:
            return self.catalog.spec(node.rec.target_type) or node.spec
        return node.spec

    def _covers(self, big: InstanceTypeSpec, small: InstanceTypeSpec) -> bool:
        """`big` carries whatever `small` was chosen to carry (the per-node sizing already checked `small`)."""
        if big.instance_type == small.instance_type:
            return True
        fits = (
            big.accelerator_kind is small.accelerator_kind
            and big.compute_units >= small.compute_units
            and big.memory_per_unit_mib >= small.memory_per_unit_mib
            and big.vcpus >= small.vcpus
            and big.memory_mib >= small.memory_mib
            and big.network_gbps >= small.network_gbps
            and bool(set(big.architectures) & set(small.architectures))
        )
        if not fits or big.accelerator_model == small.accelerator_model:
            return fits
        a, b = self.catalog.accelerator(big), self.catalog.accelerator(small)
        if a is None or b is None:
            return False
        return (
            a.memory_bandwidth_gbps >= b.memory_bandwidth_gbps
            and (a.tensor_tflops or 0) >= (b.tensor_tflops or 0)
            and (a.fp32_tflops or 0) >= (b.fp32_tflops or 0)
            and a.compute_capability_tuple >= b.compute_capability_tuple
            and a.video_encoders >= b.video_encoders
        )

    def _largest_need(self) -> tuple[InstanceTypeSpec | None, Node | None]:
        """The one type every working node's work fits, taken from their own targets: the largest of them, if it
        carries all the others (None: the nodes' needs conflict, or one has no known type)."""
        needs = [(self._need(n), n) for n in self.working]
        if not needs or any(need is None for need, _ in needs):
            return None, None
        known = [(need, n) for need, n in needs if need is not None]
        for need, node in sorted(
            known, key=lambda x: (-x[0].compute_units, -x[0].memory_per_unit_mib, -x[0].vcpus, -x[0].memory_mib)
        ):
            if all(self._covers(need, other) for other, _ in known):
                return need, node
        return None, None

    # What it costs --------------------------------------------------------------------------------------

    def _cost_as(self, node: Node, instance_type: str) -> Decimal | None:
        """The node's monthly cost were it `instance_type`: billed as it is (platform, Spot) and on the hours it
        runs (its own cost scaled by the two types' rates). None: a rate is not known (no saving is claimed)."""
        cost = node.rec.monthly_cost
        if cost is None:
            return None
        if instance_type == node.instance.instance_type:
            return cost
        if node.instance.lifecycle == "spot":
            now, then = self.prices.spot.get(node.instance.instance_type), self.prices.spot.get(instance_type)
        else:
            book = host_prices(self.catalog, self.prices, node.instance.billing)
            now, then = book.hourly(node.instance.instance_type), book.hourly(instance_type)
        if not now or then is None:
            return None
        return (cost * then / now).quantize(CENT)

    def _after(self, node: Node, target: InstanceTypeSpec | None) -> Decimal | None:
        """The node's monthly cost after the group's change: nothing for an idle node the group sheds, the target
        type's cost where it is cheaper (a node whose type costs less already keeps it), else as now."""
        if not node.instance.is_running or node.opted_out or not node.judged:
            return node.rec.monthly_cost
        if node.idle:
            return ZERO if node.rec.monthly_cost is not None else None
        if target is None:
            return node.rec.monthly_cost
        after = self._cost_as(node, target.instance_type)
        now = node.rec.monthly_cost
        if after is None or now is None or after >= now:
            return now
        return after

    def _net(self, node: Node, after: Decimal | None, target: InstanceTypeSpec | None) -> tuple[Decimal | None, str]:
        now = node.rec.monthly_cost
        if now is None or after is None:
            return None, ""
        cover = self.covers.get(node.iid)
        if cover is None or after == now:
            return now - after, ""
        moved = target.instance_type if target is not None and after > 0 else None
        net = net_savings(node.instance, cover, Change(cost_now=now, cost_after=after, target_type=moved))
        if net is None:
            return now - after, ""
        return net.amount, f"{node.iid}: {net.reason}"

    # The verdict -----------------------------------------------------------------------------------------

    def _busiest(self) -> Node | None:
        return max(
            self.working,
            key=lambda n: (n.rec.evidence.busy_units, n.rec.evidence.accelerator_p95 or 0.0, n.iid),
            default=None,
        )

    def _usage_text(self) -> str:
        busiest = self._busiest()
        unit = self.spec.unit_name if self.spec else "GPU"
        if busiest is None:
            return f"no node did {unit} work"
        ev = busiest.rec.evidence
        return (
            f"the work uses at most {ev.busy_units} of {ev.total_units} {unit}s on any of its "
            f"{plural(len(self.judged), 'judged node')} (busiest: {busiest.iid}, {unit} p95 {pct(ev.accelerator_p95)})"
        )

    def _confidence(self) -> Confidence:
        level = Confidence.MEDIUM
        for node in self.judged:
            level = level.at_most(node.rec.confidence)
        if self.unjudged or len(self.types) > 1:
            level = level.at_most(Confidence.LOW)
        return level

    def verdict(self) -> _Verdict:
        who = f"{self.label} '{self.owner.name}'"
        if not self.counted:
            why = "every node carries the opt-out tag" if self.running else "none of its nodes runs"
            return _Verdict(Finding.EXCLUDED, None, f"{who}: {why}; nothing to advise", Confidence.LOW)
        if not self.judged:
            return _Verdict(
                Finding.INSUFFICIENT_DATA,
                None,
                f"{who}: none of its {plural(len(self.counted), 'node')} could be judged (no GPU metrics or too little "
                f"history): {self._publish_text()}",
                Confidence.LOW,
            )
        confidence = self._confidence()
        unit = self.spec.unit_name if self.spec else "GPU"
        if not self.working and not self.unjudged:
            return _Verdict(
                Finding.IDLE,
                None,
                f"{who}: none of its {plural(len(self.idle), 'node')} did {unit} work in the window, and the "
                "autoscaler keeps them",
                confidence,
            )
        target, needed_by = self._largest_need()
        notes: list[str] = []
        if target is None and self.working:
            notes.append(
                "the nodes' own targets conflict (no one of them carries every other node's work): no node type is "
                "advised for the group"
            )
        downsize = target is not None and any(
            self._after(n, target) != n.rec.monthly_cost for n in self.working if n.rec.monthly_cost is not None
        )
        upsize = target is not None and any(
            n.rec.would_be is Finding.UNDERPROVISIONED
            and getattr(self._need(n), "instance_type", None) == target.instance_type
            for n in self.working
        )
        if upsize and target is not None and needed_by is not None:
            return _Verdict(
                Finding.UNDERPROVISIONED,
                target,
                f"{who}: node {needed_by.iid} needs a larger type ({target.instance_type}, "
                f"{plural(target.compute_units, target.unit_name)}): {self._usage_text()}",
                confidence,
                tuple(notes),
            )
        if downsize and target is not None and needed_by is not None:
            lead = (
                f"{who}: use {target.instance_type} ({plural(target.compute_units, target.unit_name)}) instead of "
                f"{self.node_type} ({plural(self.spec.compute_units if self.spec else 0, unit)}): "
                f"{self._usage_text()}"
            )
            notes.append(
                f"{target.instance_type} is the largest type any node's work needs ({needed_by.iid}'s); every other "
                "node's own target fits in it"
            )
            return _Verdict(Finding.OVERPROVISIONED, target, lead, confidence, tuple(notes))
        if self.idle:
            lead = (
                f"{who}: {len(self.idle)} of its {plural(len(self.counted), 'node')} did no {unit} work in the window "
                f"and the autoscaler keeps them; {self._usage_text()}"
            )
            return _Verdict(Finding.OVERPROVISIONED, None, lead, confidence, tuple(notes))
        return _Verdict(
            Finding.OPTIMIZED,
            None,
            f"{who}: its nodes are sized for their work ({self._usage_text()}): no smaller node type carries the "
            "busiest node's work",
            confidence,
            tuple(notes),
        )

    # Words -----------------------------------------------------------------------------------------------

    def _publish_text(self) -> str:
        agent = "install the CloudWatch agent on the nodes' AMI (agent/README.md)"
        if not self.owner.kubernetes:
            return agent
        return (
            f"{agent}, or turn on Container Insights with enhanced observability (the Amazon CloudWatch "
            "Observability EKS add-on v1.3.0-eksbuild.1 or later, with the NVIDIA device plugin), whose "
            "node_gpu_* metrics the bot reads where the agent publishes none"
        )

    def _idle_advice(self) -> str:
        kind, name = self.kind, self.owner.name
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
            return (
                f"lower the minvCpus of compute environment '{name}' (Batch keeps that many vCPUs running without jobs)"
            )
        return f"lower the minimum and desired capacity of Auto Scaling group '{name}'"

    def _type_advice(self, target: InstanceTypeSpec) -> str:
        kind, name, new = self.kind, self.owner.name, target.instance_type
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
                f"set the instanceTypes of compute environment '{name}' to [\"{new}\"] (or give its job queue one of "
                f"{new})"
            )
        return f"a new launch template version with {new} for Auto Scaling group '{name}', then an instance refresh"

    def _nodes_text(self) -> str:
        shown = [node.busy_text for node in self.running[:NODES_LISTED]]
        more = len(self.running) - NODES_LISTED
        tail = f"; and {plural(more, 'more node')}" if more > 0 else ""
        mix = "" if len(self.types) == 1 else " (types: " + ", ".join(f"{n} {t}" for t, n in self.types.items()) + ")"
        return f"nodes{mix}: " + "; ".join(shown) + tail

    # The recommendation ---------------------------------------------------------------------------------

    def recommendation(self) -> Recommendation:
        verdict = self.verdict()
        target = verdict.target
        first = self.nodes[0]
        costs = [n.rec.monthly_cost for n in self.running]
        cost = sum((c for c in costs if c is not None), ZERO) if any(c is not None for c in costs) else None
        unpriced = sum(1 for c in costs if c is None)
        savings: list[Decimal] = []
        nets: list[Decimal] = []
        net_reasons: list[str] = []
        after_total = ZERO
        if verdict.finding in (Finding.OVERPROVISIONED, Finding.IDLE, Finding.UNDERPROVISIONED):
            for node in self.running:
                after = self._after(node, target)
                if node.rec.monthly_cost is None or after is None:
                    continue
                after_total += after
                savings.append(node.rec.monthly_cost - after)
                net, why = self._net(node, after, target)
                nets.append(net if net is not None else node.rec.monthly_cost - after)
                if why:
                    net_reasons.append(why)
            cost_after = after_total if cost is not None else None
        else:
            cost_after = cost
        saved = cost - cost_after if cost is not None and cost_after is not None else None
        reasons = [verdict.lead + (f"; saves {usd(saved)}/month for the group" if saved else "")]
        reasons.append(self._nodes_text())
        reasons.extend(verdict.notes)
        if self.unjudged and verdict.finding is not Finding.INSUFFICIENT_DATA:
            ids = ", ".join(n.iid for n in self.unjudged[:NODES_LISTED])
            reasons.append(
                f"{plural(len(self.unjudged), 'node')} could not be judged ({ids}): never counted idle; the advice "
                f"holds only if their work is like the others' (low confidence): {self._publish_text()}"
            )
        opted = [n for n in self.running if n.opted_out]
        if opted and self.counted:
            reasons.append(f"{plural(len(opted), 'node')} carry the opt-out tag: not counted")
        if unpriced:
            reasons.append(f"{plural(unpriced, 'node')} have no price: their cost is not in the group's")
        if net_reasons:
            shown = "; ".join(net_reasons[:3]) + (f"; and {len(net_reasons) - 3} more" if len(net_reasons) > 3 else "")
            reasons.append(f"net of reservations and plans: {shown}")
        if self.idle and verdict.finding in (Finding.OVERPROVISIONED, Finding.IDLE):
            reasons.append(self._idle_advice())
        if target is not None and verdict.finding in (Finding.OVERPROVISIONED, Finding.UNDERPROVISIONED):
            reasons.append(self._type_advice(target))
        reasons.append(
            f"advice only: the bot never changes {RESOURCES[self.kind].owner_edits}; scaling it down or "
            "replacing its nodes evicts their pods, and the bot sees EC2 and CloudWatch, not the pods, so it cannot "
            "check where they would go or whether their PodDisruptionBudgets allow it"
        )
        zones = {n.instance.availability_zone for n in self.running or self.nodes}
        teams = {n.rec.team for n in self.nodes}
        groups = {n.instance.asg_name for n in self.nodes}
        spot = all(n.instance.lifecycle == "spot" for n in self.nodes)
        finding = verdict.finding
        return Recommendation(
            recommendation_id=_group_id(first.instance, self.owner, self.node_type, finding, target),
            generated_at=first.rec.generated_at,
            account_id=first.instance.account_id,
            region=first.instance.region,
            instance_id=self.owner.resource_id,
            instance_name=self.owner.name,
            instance_type=self.node_type,
            availability_zone=zones.pop() if len(zones) == 1 else "",
            state="running" if self.running else "stopped",
            finding=finding,
            target_type=target.instance_type if target is not None else None,
            monthly_cost=cost,
            monthly_cost_after=cost_after,
            confidence=verdict.confidence,
            actionable=False,
            reasons=tuple(reasons),
            evidence=self._evidence(),
            asg_name=groups.pop() if len(groups) == 1 else None,
            lookback_days=first.rec.lookback_days,
            lifecycle="spot" if spot else "on-demand",
            held_back=f"advice only: {RESOURCES[self.kind].label} changes are made by its owner",
            team=teams.pop() if len(teams) == 1 else "",
            monthly_savings_net=sum(nets, ZERO) if nets else (saved if saved is not None else None),
            managed=None,
            kind=self.kind,
            tags=self._shared_tags(),
        )

    def _shared_tags(self) -> dict[str, str]:
        """The tags every node carries, with the same value: the group's, for showback and filters."""
        shared = dict(self.nodes[0].instance.tags) if self.nodes else {}
        for node in self.nodes[1:]:
            shared = {key: value for key, value in shared.items() if node.instance.tags.get(key) == value}
        return shared

    def _evidence(self) -> Evidence:
        judged = self.judged
        if not judged:
            return Evidence(total_units=self.spec.compute_units if self.spec else 0)
        busiest = self._busiest()
        evs = [n.rec.evidence for n in judged]

        def top(values: list[float | None]) -> float | None:
            known = [v for v in values if v is not None]
            return max(known) if known else None

        return Evidence(
            observed_days=min(ev.observed_days for ev in evs),
            coverage=min(ev.coverage for ev in evs),
            busy_units=busiest.rec.evidence.busy_units if busiest else 0,
            total_units=self.spec.compute_units if self.spec else max(ev.total_units for ev in evs),
            accelerator_p95=busiest.rec.evidence.accelerator_p95
            if busiest
            else top([ev.accelerator_p95 for ev in evs]),
            accelerator_peak=top([ev.accelerator_peak for ev in evs]),
            accelerator_burst=top([ev.accelerator_burst for ev in evs]),
            memory_peak_mib=top([ev.memory_peak_mib for ev in evs]),
            memory_per_unit_mib=self.spec.memory_per_unit_mib if self.spec else None,
            memory_reserved=any(ev.memory_reserved for ev in evs),
            cpu_p95=top([ev.cpu_p95 for ev in evs]),
            network_peak_gbps=top([ev.network_peak_gbps for ev in evs]),
            network_p95_gbps=top([ev.network_p95_gbps for ev in evs]),
            host_memory_peak_pct=top([ev.host_memory_peak_pct for ev in evs]),
            daily_accelerator_mean=busiest.rec.evidence.daily_accelerator_mean if busiest else (),
            daily_busiest_unit=busiest.rec.evidence.daily_busiest_unit if busiest else (),
        )


def _group_id(
    instance: Instance, owner: Owner, node_type: str, finding: Finding, target: InstanceTypeSpec | None
) -> str:
    """Stable across re-runs, like a host's: the same advice for the same group keeps the same id."""
    parts = (
        instance.account_id,
        instance.region,
        owner.resource_id,
        node_type,
        finding,
        target.instance_type if target else "",
    )
    return "rec-" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:20]
