"""What every rule shares: the `Draft` a rule returns, the three kinds of rule (gate, finding rule, adjustment)
and the drafts several of them write alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from rightsizer.domain.facts.host import Facts
from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Alternative, Confidence
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.usage import DeviceUsage
from rightsizer.domain.schedule import WeeklyPattern
from rightsizer.domain.schedule_plan import SchedulePlan


@dataclass(frozen=True)
class Draft:
    """A finding being assembled; frozen into a Recommendation at the end."""

    finding: Finding
    reasons: tuple[str, ...]
    target: InstanceTypeSpec | None = None
    cost_after: Decimal | None = None  # None: the host keeps costing what it costs now
    confidence: Confidence = Confidence.HIGH
    actionable: bool = False
    alternatives: tuple[Alternative, ...] = ()
    pattern: WeeklyPattern | None = None
    advice: str | None = None  # what to do, said last; someone who owns the host elsewhere replaces it
    held_back: str | None = None  # why a target is not one click, in a few words for tables
    net_savings: Decimal | None = None  # None: the list-price savings are what the bill saves
    would_be: Finding | None = None  # owned elsewhere: the finding its usage gave before `excluded` replaced it
    risks: tuple[str, ...] = ()  # what carrying the advice out risks besides downtime, briefly (Recommendation.risks)
    plan: SchedulePlan | None = None  # a schedule's pair, as approving it creates it (Evidence.schedule_plan)

    def noting(self, reason: str, *, first: bool = False) -> Draft:
        return replace(self, reasons=(reason, *self.reasons) if first else (*self.reasons, reason))

    def risking(self, reason: str, risk: str) -> Draft:
        """A risk of acting on the advice: explained among the reasons, and said briefly where people approve it."""
        return replace(self.noting(reason), risks=(*self.risks, risk))

    def capped(self, level: Confidence) -> Draft:
        return replace(self, confidence=self.confidence.at_most(level))


Gate = Callable[[Facts], Draft | None]


Rule = Callable[[Measured], Draft | None]


Adjustment = Callable[[Facts, Draft], Draft]


def insufficient(*reasons: str) -> Draft:
    return Draft(Finding.INSUFFICIENT_DATA, reasons, confidence=Confidence.LOW)


def has_reading(device: DeviceUsage) -> bool:
    return any(v is not None for v in (device.utilization, device.utilization_peak, device.memory_used_peak_mib))


def no_target(m: Measured, finding: Finding, reasons: list[str], fallback: str) -> Draft:
    reasons.append(m.comparison_gap or fallback)
    return Draft(finding, tuple(reasons), confidence=m.data_confidence.at_most(Confidence.MEDIUM))
