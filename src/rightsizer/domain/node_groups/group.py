"""A group's verdict: its nodes sorted into running, counted (not opted out), judged and idle, and what the group's
work says (idle, a smaller or larger node type, nodes the autoscaler keeps, sized for its work, or not judged)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.node_groups.costs import Costs
from rightsizer.domain.node_groups.edits import publish_text
from rightsizer.domain.node_groups.fit import largest_need, needed_type
from rightsizer.domain.node_groups.nodes import Node
from rightsizer.domain.owners import Owner
from rightsizer.domain.resources import RESOURCES, ResourceKind
from rightsizer.domain.wording import pct, plural


@dataclass(frozen=True)
class Verdict:
    finding: Finding
    target: InstanceTypeSpec | None
    lead: str
    confidence: Confidence
    notes: tuple[str, ...] = ()


class Group:
    """The nodes of one owner (account, region, owner), sorted into running, counted, judged and idle."""

    def __init__(self, owner: Owner, nodes: tuple[Node, ...], costs: Costs) -> None:
        if owner.kind is None:
            raise ValueError(f"{owner.description} has no resource kind: its nodes are advised one by one")
        self.kind: ResourceKind = owner.kind
        self.owner, self.nodes, self.costs = owner, nodes, costs
        self.catalog: Catalog = costs.catalog
        self.running = [n for n in nodes if n.instance.is_running]
        self.counted = [n for n in self.running if not n.opted_out]
        self.judged = [n for n in self.counted if n.judged]
        self.unjudged = [n for n in self.counted if not n.judged]
        self.idle = [n for n in self.judged if n.idle]
        self.working = [n for n in self.judged if not n.idle]
        types = Counter(n.instance.instance_type for n in (self.running or nodes))
        self.node_type = sorted(types.items(), key=lambda item: (-item[1], item[0]))[0][0]
        self.types = types
        self.spec = self.catalog.spec(self.node_type)
        self.label = RESOURCES[self.kind].label

    def busiest(self) -> Node | None:
        return max(
            self.working,
            key=lambda n: (n.rec.evidence.busy_units, n.rec.evidence.accelerator_p95 or 0.0, n.iid),
            default=None,
        )

    def _usage_text(self) -> str:
        busiest = self.busiest()
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

    def verdict(self) -> Verdict:
        who = f"{self.label} '{self.owner.name}'"
        if not self.counted:
            why = "every node carries the opt-out tag" if self.running else "none of its nodes runs"
            return Verdict(Finding.EXCLUDED, None, f"{who}: {why}; nothing to advise", Confidence.LOW)
        if not self.judged:
            return Verdict(
                Finding.INSUFFICIENT_DATA,
                None,
                f"{who}: none of its {plural(len(self.counted), 'node')} could be judged (no GPU metrics or too little "
                f"history): {publish_text(self.owner)}",
                Confidence.LOW,
            )
        confidence = self._confidence()
        unit = self.spec.unit_name if self.spec else "GPU"
        if not self.working and not self.unjudged:
            return Verdict(
                Finding.IDLE,
                None,
                f"{who}: none of its {plural(len(self.idle), 'node')} did {unit} work in the window, and the "
                "autoscaler keeps them",
                confidence,
            )
        target, needed_by = largest_need(self.catalog, self.working)
        notes: list[str] = []
        if target is None and self.working:
            notes.append(
                "the nodes' own targets conflict (no one of them carries every other node's work): no node type is "
                "advised for the group"
            )
        downsize = target is not None and any(
            self.costs.after(n, target) != n.rec.monthly_cost for n in self.working if n.rec.monthly_cost is not None
        )
        upsize = target is not None and any(
            n.rec.would_be is Finding.UNDERPROVISIONED
            and getattr(needed_type(self.catalog, n), "instance_type", None) == target.instance_type
            for n in self.working
        )
        if upsize and target is not None and needed_by is not None:
            return Verdict(
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
            return Verdict(Finding.OVERPROVISIONED, target, lead, confidence, tuple(notes))
        if self.idle:
            lead = (
                f"{who}: {len(self.idle)} of its {plural(len(self.counted), 'node')} did no {unit} work in the window "
                f"and the autoscaler keeps them; {self._usage_text()}"
            )
            return Verdict(Finding.OVERPROVISIONED, None, lead, confidence, tuple(notes))
        return Verdict(
            Finding.OPTIMIZED,
            None,
            f"{who}: its nodes are sized for their work ({self._usage_text()}): no smaller node type carries the "
            "busiest node's work",
            confidence,
            tuple(notes),
        )
