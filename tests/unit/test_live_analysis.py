"""The CLI's live analysis over fakes of its ports: every account and region in turn, a failed one a warning and a
failed target, nothing readable a RegionFailure; the region probes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.live_analysis import (
    RegionFailure,
    analyze_fleet,
    regions_holding,
    regions_with_accelerated_hosts,
)
from rightsizer.services.report import TargetFailure

NOW = datetime(2026, 12, 1, tzinfo=UTC)
HOME, MEMBER, REFUSING = "111111111111", "222222222222", "333333333333"


def role(account: str) -> str:
    return f"arn:aws:iam::{account}:role/rightsizer-read"


@dataclass(frozen=True)
class Account:
    """An AccountReach: the home account, or a member's reached through its role (REFUSING's cannot be assumed)."""

    id: str = HOME
    reachable: bool = True

    def account_id(self, region: str) -> str:
        if not self.reachable:
            raise ConnectionError("no credentials")
        return self.id

    def assume(self, role_arn: str, session_name: str, region: str) -> Account:
        account = role_arn.split(":")[4]
        if account == REFUSING:
            raise PermissionError(f"not authorized to assume {role_arn}")
        return Account(account)


@dataclass(frozen=True)
class Advice:
    recommendations: tuple[Recommendation, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass
class Analyst:
    """Analyses a region, or fails in the regions of `broken`; records what it was asked."""

    broken: frozenset[str] = frozenset()
    asked: list[tuple[str, str]] = field(default_factory=list)

    def __call__(self, reach: Account, region: str) -> Advice:
        self.asked.append((reach.id, region))
        if region in self.broken:
            raise ConnectionError("endpoint unreachable")
        return Advice(warnings=(f"{reach.id}/{region}: 1 host without metrics",))


def describe(error: BaseException, region: str) -> str:
    return f"{error} ({region})"


def test_a_region_that_cannot_be_read_is_a_warning_and_a_failed_target_and_the_others_are_analysed() -> None:
    analyst = Analyst(broken=frozenset({"eu-west-1"}))

    report = analyze_fleet(Account(), ["us-east-1", "eu-west-1", "us-west-2"], (), "cli", analyst, describe, NOW, 14)

    assert analyst.asked == [(HOME, "us-east-1"), (HOME, "eu-west-1"), (HOME, "us-west-2")]
    assert report.failures == (TargetFailure(HOME, "eu-west-1", "endpoint unreachable (eu-west-1)"),)
    assert report.warnings == (
        f"{HOME}/us-east-1: 1 host without metrics",
        f"{HOME}/us-west-2: 1 host without metrics",
        f"account {HOME} in eu-west-1 not analysed: endpoint unreachable (eu-west-1)",
    )
    assert report.home_account == HOME
    assert report.lookback_days == 14


def test_each_member_account_is_read_through_its_role_and_one_that_cannot_be_assumed_is_a_failed_account() -> None:
    analyst = Analyst()

    report = analyze_fleet(
        Account(), ["us-east-1", "eu-west-1"], [role(MEMBER), role(REFUSING)], "cli", analyst, describe, NOW, 14
    )

    assert analyst.asked == [(MEMBER, "us-east-1"), (MEMBER, "eu-west-1")]
    message = f"not authorized to assume {role(REFUSING)} (us-east-1)"
    assert report.failures == (TargetFailure(REFUSING, "*", message),)
    assert report.warnings[-1] == f"account {REFUSING} not analysed: {message}"


def test_when_nothing_can_be_read_the_analysis_fails_with_the_first_error() -> None:
    with pytest.raises(RegionFailure) as failed:
        everywhere = Analyst(broken=frozenset({"us-east-1", "eu-west-1"}))
        analyze_fleet(Account(), ["us-east-1", "eu-west-1"], (), "cli", everywhere, describe, NOW, 14)
    assert failed.value.region == "us-east-1"
    assert isinstance(failed.value.error, ConnectionError)

    with pytest.raises(RegionFailure) as refused:
        analyze_fleet(Account(), ["eu-west-1"], [role(REFUSING)], "cli", Analyst(), describe, NOW, 14)
    assert refused.value.region == "eu-west-1"  # an account's failure ("*") is told in the region it was asked in
    assert isinstance(refused.value.error, PermissionError)


def test_an_unreadable_home_account_fails_in_the_first_region_before_any_analysis() -> None:
    analyst = Analyst()
    with pytest.raises(RegionFailure) as failed:
        analyze_fleet(Account(reachable=False), ["ap-south-1", "us-east-1"], (), "cli", analyst, describe, NOW, 14)

    assert failed.value.region == "ap-south-1"
    assert analyst.asked == []


@dataclass(frozen=True)
class Hosts:
    """A RegionHosts: whether it runs a GPU host, the names it holds, or an error for every question."""

    accelerated: bool = False
    names: frozenset[str] = frozenset()
    error: Exception | None = None

    def has_accelerated_instances(self) -> bool:
        if self.error is not None:
            raise self.error
        return self.accelerated

    def holds(self, query: str) -> bool:
        if self.error is not None:
            raise self.error
        return query in self.names


@dataclass
class Progress:
    stages: list[tuple[str, int]] = field(default_factory=list)
    advanced: int = 0

    def stage(self, label: str, total: int) -> None:
        self.stages.append((label, total))

    def advance(self, steps: int = 1) -> None:
        self.advanced += steps

    def warn(self, message: str) -> None:
        raise AssertionError(f"the probes warn through their answer, not the progress: {message}")


def test_the_regions_with_gpu_hosts_are_found_in_order_and_a_region_not_asked_is_a_warning() -> None:
    fleets = {
        "ap-south-1": Hosts(accelerated=True),
        "eu-west-1": Hosts(error=PermissionError("opt-in region")),
        "us-east-1": Hosts(),
        "us-west-2": Hosts(accelerated=True),
    }
    progress = Progress()

    found, warnings = regions_with_accelerated_hosts(fleets, describe, progress)

    assert found == ["ap-south-1", "us-west-2"]
    assert warnings == ["opt-in region (eu-west-1): not checked for GPU hosts"]
    assert progress.stages == [("finding GPU hosts in 4 regions", 4)]
    assert progress.advanced == 4  # one step per region, the failed one too


def test_a_host_is_looked_for_only_outside_the_regions_analysed_and_a_region_that_fails_is_left_out() -> None:
    fleets = {
        "eu-west-1": Hosts(names=frozenset({"trainer"})),
        "us-east-1": Hosts(names=frozenset({"trainer"})),
        "us-west-2": Hosts(error=PermissionError("denied")),
        "ap-south-1": Hosts(names=frozenset({"trainer"})),
    }

    assert regions_holding(fleets, "trainer", analysed={"us-east-1"}) == ["eu-west-1", "ap-south-1"]
