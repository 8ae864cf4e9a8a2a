"""Use-case: a fleet report — recommendations ranked by savings, with totals — and its JSON form."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from rightsizer.domain.models import CENT, Finding, Recommendation


def _savings_key(rec: Recommendation) -> tuple[int, Decimal, str]:
    savings = rec.monthly_savings
    # Known savings first, largest first; unknown savings last; stable by instance id.
    return (0 if savings is not None else 1, -(savings or Decimal(0)), rec.instance_id)


@dataclass(frozen=True)
class Totals:
    instances: int
    monthly_cost: Decimal
    monthly_savings: Decimal  # every recommendation that saves money
    actionable_savings: Decimal  # ...of which one click in Slack can realise
    additional_cost: Decimal  # upsizes (underprovisioned / not GPU-bound) cost this much more
    by_finding: dict[str, int]
    unpriced: int


@dataclass(frozen=True)
class FleetReport:
    generated_at: datetime
    lookback_days: int
    recommendations: tuple[Recommendation, ...]
    warnings: tuple[str, ...] = ()

    @property
    def totals(self) -> Totals:
        cost = saving = actionable = extra = Decimal("0.00")
        unpriced = 0
        for rec in self.recommendations:
            if rec.monthly_cost is None:
                unpriced += 1
            else:
                cost += rec.monthly_cost
            delta = rec.monthly_savings
            if delta is None:
                continue
            if delta > 0:
                saving += delta
                if rec.actionable:
                    actionable += delta
            elif delta < 0:
                extra -= delta
        counts = Counter(rec.finding.value for rec in self.recommendations)
        return Totals(
            instances=len(self.recommendations),
            monthly_cost=cost.quantize(CENT),
            monthly_savings=saving.quantize(CENT),
            actionable_savings=actionable.quantize(CENT),
            additional_cost=extra.quantize(CENT),
            by_finding={finding.value: counts.get(finding.value, 0) for finding in Finding},
            unpriced=unpriced,
        )


def build_report(
    recommendations: Iterable[Recommendation],
    generated_at: datetime,
    lookback_days: int,
    warnings: Sequence[str] = (),
) -> FleetReport:
    return FleetReport(
        generated_at=generated_at,
        lookback_days=lookback_days,
        recommendations=tuple(sorted(recommendations, key=_savings_key)),
        warnings=tuple(dict.fromkeys(warnings)),
    )


def _usd(amount: Decimal | None) -> float | None:
    # JSON has no decimal type: money leaves the program as a number rounded to cents.
    return None if amount is None else float(amount.quantize(CENT))


def recommendation_json(rec: Recommendation) -> dict[str, Any]:
    evidence = rec.evidence
    return {
        "recommendation_id": rec.recommendation_id,
        "account_id": rec.account_id,
        "instance_id": rec.instance_id,
        "name": rec.instance_name,
        "region": rec.region,
        "availability_zone": rec.availability_zone,
        "state": rec.state,
        "instance_type": rec.instance_type,
        "finding": rec.finding.value,
        "target_type": rec.target_type,
        "monthly_cost_usd": _usd(rec.monthly_cost),
        "monthly_cost_after_usd": _usd(rec.monthly_cost_after),
        "monthly_savings_usd": _usd(rec.monthly_savings),
        "confidence": rec.confidence.value,
        "actionable": rec.actionable,
        "reasons": list(rec.reasons),
        "alternatives": [
            {
                "instance_type": alt.instance_type,
                "monthly_cost_usd": _usd(alt.monthly_cost),
                "confidence": alt.confidence.value,
                "note": alt.note,
            }
            for alt in rec.alternatives
        ],
        "auto_scaling_group": rec.asg_name,
        "evidence": {
            "observed_days": evidence.observed_days,
            "coverage": evidence.coverage,
            "busy_units": evidence.busy_units,
            "total_units": evidence.total_units,
            "accelerator_p95_pct": evidence.accelerator_p95,
            "accelerator_peak_pct": evidence.accelerator_peak,
            "memory_peak_mib": evidence.memory_peak_mib,
            "memory_per_unit_mib": evidence.memory_per_unit_mib,
            "cpu_p95_pct": evidence.cpu_p95,
            "network_peak_gbps": evidence.network_peak_gbps,
            "host_memory_peak_pct": evidence.host_memory_peak_pct,
            "daily_accelerator_mean_pct": list(evidence.daily_accelerator_mean),
            "idle_hours_per_week": evidence.idle_hours_per_week,
            "schedule": evidence.schedule,
        },
    }


def report_json(report: FleetReport) -> dict[str, Any]:
    totals = report.totals
    return {
        "generated_at": report.generated_at.isoformat(),
        "lookback_days": report.lookback_days,
        "recommendations": [recommendation_json(rec) for rec in report.recommendations],
        "totals": {
            "instances": totals.instances,
            "monthly_cost_usd": _usd(totals.monthly_cost),
            "monthly_savings_usd": _usd(totals.monthly_savings),
            "actionable_savings_usd": _usd(totals.actionable_savings),
            "additional_cost_usd": _usd(totals.additional_cost),
            "unpriced_instances": totals.unpriced,
            "by_finding": totals.by_finding,
        },
        "warnings": list(report.warnings),
    }
