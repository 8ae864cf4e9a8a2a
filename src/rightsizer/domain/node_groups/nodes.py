"""One node of a group: its own (per-node) recommendation, what it runs as, and how it reads in the group's reasons."""

from __future__ import annotations

from dataclasses import dataclass

from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.hosts import Instance, InstanceTypeSpec
from rightsizer.domain.wording import pct


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
