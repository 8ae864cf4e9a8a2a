"""Use-case: the analysis the CLI runs itself (`analyze`; `show` and `act` without --stack).

Every (account, region) the command line names is read and analysed in turn, each region as its usage arrives
(services/analyze.analyze_region, behind `analyse`): only the advice and the warnings go on from one region to the
next, then the fleet's advice is ranked together. An account whose role cannot be assumed, or a region that cannot be
read, is a warning and a failed target, as in the Lambda pipeline; only when nothing at all can be read does it raise
RegionFailure (with the first error).

Also the region probes, which ask every enabled region at once so one slow region does not hold up the rest: the
regions that run a GPU host (`--all-regions`), and those that hold a host `show` did not find.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import Protocol, Self, TypeVar

from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.pipeline import role_account
from rightsizer.services.ports import Progress
from rightsizer.services.report import FleetReport, TargetFailure, build_report

PROBES_AT_ONCE = 8

# An error met in a region, in one line (adapters/aws/session.describe_aws_error, for the CLI).
Describe = Callable[[BaseException, str], str]


class RegionFailure(Exception):
    """Collection of one region failed; carries the region for the error message."""

    def __init__(self, region: str, error: BaseException) -> None:
        super().__init__(f"{region}: {error}")
        self.region = region
        self.error = error


class AccountReach(Protocol):
    """How one account is read (adapters/aws/session.AwsSession): its id, and another account's role assumed."""

    def account_id(self, region: str) -> str: ...

    def assume(self, role_arn: str, session_name: str, region: str) -> Self: ...


Reach = TypeVar("Reach", bound=AccountReach)


class Advised(Protocol):
    """What one region's analysis leaves for the next (services/analyze.RegionAdvice): its advice (none when the advice
    went into a store) and its warnings."""

    @property
    def recommendations(self) -> Sequence[Recommendation]: ...

    @property
    def warnings(self) -> Sequence[str]: ...


Failed = tuple[TargetFailure, BaseException]


def analyze_fleet(
    home: Reach,
    regions: Sequence[str],
    role_arns: Sequence[str],
    role_session_name: str,
    analyse: Callable[[Reach, str], Advised],
    describe: Describe,
    now: datetime,
    lookback_days: int,
    progress: Progress | None = None,
) -> FleetReport:
    """Every (account, region) in turn through `analyse` (the advice kept in its store, or returned), ranked together:
    this account, or each role's account in `role_arns`, asked in the first region."""
    home_region = regions[0]
    if progress is not None:
        progress.stage(f"connecting to AWS in {home_region}", 1)  # before the first call, which may be slow
    try:
        home_account = home.account_id(home_region)
    except Exception as error:
        raise RegionFailure(home_region, error) from error
    reaches, failures = _reaches(home, home_account, role_arns, role_session_name, home_region, describe)
    recommendations: list[Recommendation] = []
    warnings: list[str] = []
    analysed = 0
    for account, reach in reaches:
        for region in regions:
            try:
                advice = analyse(reach, region)
            except Exception as error:
                failures.append((TargetFailure(account, region, describe(error, region)), error))
                continue
            # Only the advice and the warnings go on to the next region: not its inventory, catalog or prices.
            analysed += 1
            recommendations += advice.recommendations
            warnings += advice.warnings
    if not analysed and failures:
        first, cause = failures[0]
        raise RegionFailure(first.region if first.region != "*" else home_region, cause)
    warnings += [_not_analysed(failure) for failure, _ in failures]
    return build_report(
        recommendations,
        now,
        lookback_days,
        warnings,
        home_account=home_account,
        failures=[failure for failure, _ in failures],
    )


def _reaches(
    home: Reach,
    home_account: str,
    role_arns: Sequence[str],
    role_session_name: str,
    home_region: str,
    describe: Describe,
) -> tuple[list[tuple[str, Reach]], list[Failed]]:
    """The accounts to read: this one, or each member account's role (one that cannot be assumed is a failure)."""
    if not role_arns:
        return [(home_account, home)], []
    reaches: list[tuple[str, Reach]] = []
    failures: list[Failed] = []
    for arn in role_arns:
        account = role_account(arn)
        try:
            reaches.append((account, home.assume(arn, role_session_name, home_region)))
        except Exception as error:
            failures.append((TargetFailure(account, "*", describe(error, home_region)), error))
    return reaches, failures


def _not_analysed(failure: TargetFailure) -> str:
    where = f"account {failure.account_id}" + ("" if failure.region == "*" else f" in {failure.region}")
    return f"{where} not analysed: {failure.message}"


class RegionHosts(Protocol):
    """One region's EC2 hosts, asked without reading them all (adapters/aws/ec2.Ec2Fleet)."""

    def has_accelerated_instances(self) -> bool: ...

    def holds(self, query: str) -> bool: ...


def regions_with_accelerated_hosts(
    fleets: Mapping[str, RegionHosts], describe: Describe, progress: Progress | None = None
) -> tuple[list[str], list[str]]:
    """`--all-regions`: the regions of `fleets` that run at least one GPU / Neuron host, and warnings for those that
    could not be checked."""
    if progress is not None:
        progress.stage(f"finding GPU hosts in {len(fleets)} regions", len(fleets))
    found, failed = _probe({region: fleet.has_accelerated_instances for region, fleet in fleets.items()}, progress)
    return found, [f"{describe(error, region)}: not checked for GPU hosts" for region, error in failed.items()]


def regions_holding(fleets: Mapping[str, RegionHosts], query: str, analysed: Collection[str]) -> list[str]:
    """The regions of `fleets` other than `analysed` where an instance has the id or Name tag `query`: where to look
    for a host `show` did not find. A region that cannot be asked is left out (this only points the way)."""
    asked = {region: partial(fleet.holds, query) for region, fleet in fleets.items() if region not in analysed}
    found, _ = _probe(asked)
    return found


def _probe(
    probes: Mapping[str, Callable[[], bool]], progress: Progress | None = None
) -> tuple[list[str], dict[str, BaseException]]:
    """Each region's probe at once: the regions that answered yes, in the probes' order, and the errors of those
    that could not be asked."""
    found: list[str] = []
    failed: dict[str, BaseException] = {}
    with ThreadPoolExecutor(max_workers=PROBES_AT_ONCE) as pool:
        futures = {region: pool.submit(probe) for region, probe in probes.items()}
        for region, future in futures.items():
            try:
                if future.result():
                    found.append(region)
            except Exception as error:
                failed[region] = error
            if progress is not None:
                progress.advance()
    return found, failed
