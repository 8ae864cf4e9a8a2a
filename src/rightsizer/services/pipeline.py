"""Use-cases of the scheduled pipeline: plan targets, collect one target, analyse a run, report.

Each step is idempotent: a run is named by its UTC date and everything it writes is keyed by that
name, so re-running a day overwrites the same items and yields the same recommendation ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from rightsizer.domain.models import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.services.analyze import analyze_regions
from rightsizer.services.collect import RegionData
from rightsizer.services.ports import Decision
from rightsizer.services.report import FleetReport, build_report
from rightsizer.settings import ConfigError, Settings


@dataclass(frozen=True)
class Target:
    """One (account, region) to collect. An empty role means the function's own account."""

    account_id: str
    region: str
    role_arn: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Target:
        try:
            return cls(
                account_id=str(data["account_id"]), region=str(data["region"]), role_arn=str(data.get("role_arn", ""))
            )
        except KeyError as missing:
            raise ConfigError(f"a collection target needs {missing.args[0]!r}: got {dict(data)}") from None


class RunStore(Protocol):
    def put_run(self, run: str, targets: Sequence[Mapping[str, str]], now: datetime) -> None: ...
    def latest_run(self) -> str | None: ...
    def put_region(self, run: str, data: RegionData) -> None: ...
    def regions(self, run: str) -> list[RegionData]: ...
    def put_recommendations(
        self, run: str, account_id: str, region: str, recommendations: Sequence[Recommendation], now: datetime
    ) -> None: ...
    def latest_recommendations(
        self, account_id: str | None = None, region: str | None = None
    ) -> list[Recommendation]: ...
    def active_decisions(self, now: datetime) -> list[Decision]: ...


def run_name(now: datetime) -> str:
    return now.date().isoformat()


def role_account(arn: str) -> str:
    """The account id of an IAM role ARN; ConfigError for anything else."""
    parts = arn.split(":")
    if len(parts) < 6 or not parts[4].isdigit() or not parts[5].startswith("role/"):
        raise ConfigError(f"not an IAM role ARN: {arn!r} (expected arn:aws:iam::<account>:role/<name>)")
    return parts[4]


def plan_targets(settings: Settings, own_account: str, organization_accounts: Callable[[], list[str]]) -> list[Target]:
    """Every (account, region) to collect: role ARNs, Organizations accounts, or just this account."""
    if settings.account_role_arns:
        accounts = [(role_account(arn), arn) for arn in settings.account_role_arns]
    elif settings.use_organizations:
        accounts = [
            (account, "" if account == own_account else f"arn:aws:iam::{account}:role/{settings.member_role_name}")
            for account in organization_accounts()
        ]
    else:
        accounts = [(own_account, "")]
    return [Target(account, region, role) for account, role in accounts for region in settings.regions]


def pipeline_input(run: str, targets: Iterable[Target]) -> dict[str, Any]:
    return {"run": run, "targets": [asdict(target) for target in targets]}


def collect_target(
    run: str, data: RegionData, store: RunStore, api_calls: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """Store one target's collection; the summary is what the Map state records."""
    store.put_region(run, data)
    return {
        "api_calls": dict(api_calls or {}),
        "run": run,
        "account_id": data.account_id,
        "region": data.region,
        "instances": len(data.instances),
        "with_accelerator_data": sum(1 for u in data.usage.values() if u.devices),
        "warnings": list(data.warnings),
        "status": "collected",
    }


@dataclass(frozen=True)
class RunAnalysis:
    run: str
    recommendations: tuple[Recommendation, ...]

    @property
    def findings(self) -> dict[str, int]:
        return dict(Counter(rec.finding.value for rec in self.recommendations))

    @property
    def potential_savings(self) -> Decimal:
        savings = (rec.monthly_savings for rec in self.recommendations)
        return sum((saving for saving in savings if saving is not None and saving > 0), Decimal(0))

    def summary(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "instances": len(self.recommendations),
            "findings": self.findings,
            "potential_savings_usd": float(self.potential_savings),
        }


def analyze_run(run: str | None, store: RunStore, policy: Policy, now: datetime) -> RunAnalysis:
    """Analyse every region collected in `run` (default: the latest) and store the recommendations."""
    chosen = run or store.latest_run()
    if chosen is None:
        return RunAnalysis(run="", recommendations=())
    regions = store.regions(chosen)
    recommendations = analyze_regions(regions, policy, now)
    by_scope: dict[tuple[str, str], list[Recommendation]] = {(d.account_id, d.region): [] for d in regions}
    for rec in recommendations:
        by_scope[(rec.account_id, rec.region)].append(rec)
    for (account_id, region), recs in by_scope.items():
        store.put_recommendations(chosen, account_id, region, recs, now)
    return RunAnalysis(run=chosen, recommendations=tuple(recommendations))


def latest_report(store: RunStore, lookback_days: int, now: datetime) -> tuple[FleetReport, list[Decision]]:
    """The fleet report from the latest recommendations, and the snoozes and dismissals in force."""
    return build_report(store.latest_recommendations(), now, lookback_days), store.active_decisions(now)
