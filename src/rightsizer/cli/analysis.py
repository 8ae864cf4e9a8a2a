"""The analysis the CLI runs itself (`analyze`, and `show` and `act --dry-run` without --stack): collect and analyse
the regions and accounts the command line names, as the deployed pipeline would, with progress on stderr.
`live_report` is the seam the unit tests replace.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

from rightsizer.cli.errors import CommandFailed, UsageError
from rightsizer.cli.output.progress import progress as progress_display
from rightsizer.cli.session import NO_REGION, aws_session, checked_regions, checked_role_arn, default_region
from rightsizer.domain.policy import Policy
from rightsizer.services.report import FleetReport, build_report
from rightsizer.settings import ConfigError, PriceMode, Settings

if TYPE_CHECKING:
    from rightsizer.adapters.html.series import UnitSeries
    from rightsizer.adapters.spill import SpilledAdvice


@dataclass(frozen=True)
class LiveReport:
    """An analysis the CLI ran itself: the report, the warnings for stderr, each host's per-GPU series (kept only
    for the page)."""

    report: FleetReport
    warnings: tuple[str, ...] = ()
    series: Mapping[str, Sequence[UnitSeries]] = field(default_factory=dict)
    # The other enabled regions where an instance has this id or Name tag (None: every region was analysed, or none
    # can be asked): where `show` points for a host it did not find.
    elsewhere: Callable[[str], list[str]] | None = None
    # `stream`: the recommendations, in an unnamed temporary file (the report holds none of them): gone when closed, or
    # with the process however it ends.
    advice: SpilledAdvice | None = None


def live_report(
    args: argparse.Namespace, err: TextIO, *, color: bool = True, keep_series: bool = False, stream: bool = False
) -> LiveReport:
    """Collect and analyse as `analyze` does (--region / --all-regions, --account-role-arn, ...). A UsageError or
    CommandFailed when nothing can be analysed. `stream`: the advice is kept in a temporary file, not in memory (the
    report is the head of `advice.ranked()`: services/report.py's `ranked_head`)."""
    try:
        Settings(lookback_days=args.lookback_days)  # checks the range before any AWS call
        time_zones(args.time_zone or ())
        from rightsizer.services.pipeline import role_account

        roles = tuple(dict.fromkeys(checked_role_arn(arn) for arn in args.account_role_arn or ()))
        for arn in roles:
            role_account(arn)
    except ConfigError as error:
        raise UsageError(str(error)) from None

    # Imported here so `rightsizer --help` stays fast.
    from rightsizer.adapters.aws.session import known_regions
    from rightsizer.adapters.html.series import UnitSeriesTap
    from rightsizer.adapters.spill import SpilledAdvice
    from rightsizer.cli import wiring
    from rightsizer.services.live_analysis import RegionFailure
    from rightsizer.services.ports import UsageSource

    session = aws_session(args)
    home = default_region(session)
    progress = progress_display(err, enabled=not args.no_progress, color=color)
    reporter = None if args.no_progress else progress
    kept: dict[str, tuple[UnitSeries, ...]] = {}  # every region's tap keeps into it

    def tap(inner: UsageSource) -> UsageSource:
        return UnitSeriesTap(inner, kept)

    now = datetime.now(UTC)
    advice = SpilledAdvice() if stream else None
    try:
        if args.all_regions:
            regions, discovery_warnings = wiring.regions_with_accelerated_hosts(session, home or "us-east-1", reporter)
        else:
            regions, discovery_warnings = list(dict.fromkeys(args.region or [home or ""])), []
            if not all(regions):
                raise UsageError(NO_REGION)
        if args.all_regions and not regions:
            report = build_report([], now, args.lookback_days, ["no GPU, Inferentia or Trainium host in any region"])
        else:
            report = wiring.analyze(
                session,
                checked_regions(regions, known_regions()),
                _settings(args, regions, roles),
                now,
                reporter,
                usage_tap=tap if keep_series else None,
                store=advice,
            )
    except RegionFailure as failure:
        raise CommandFailed(wiring.describe_failure(failure.error, failure.region)) from None
    finally:
        progress.close()
    analysed = frozenset(regions)

    def elsewhere(query: str) -> list[str]:
        return wiring.regions_holding(session, home or regions[0], query, analysed)

    warnings = (*discovery_warnings, *report.warnings)
    return LiveReport(report, warnings, kept, None if args.all_regions else elsewhere, advice)


def _settings(args: argparse.Namespace, regions: Sequence[str], roles: tuple[str, ...]) -> Settings:
    default, teams = time_zones(args.time_zone or ())
    return Settings(
        regions=tuple(regions),
        lookback_days=args.lookback_days,
        price_mode=PriceMode(args.prices),
        policy=Policy(lookback_days=args.lookback_days),
        account_role_arns=roles,
        role_session_name="gpu-rightsizer-cli",
        schedule_time_zone=default,
        team_time_zones=teams,
    )


def time_zones(given: Sequence[str]) -> tuple[str, dict[str, str]]:
    """--time-zone ZONE and TEAM=ZONE: the default zone and the teams'; a UsageError for a zone IANA does not know."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    default, teams = "UTC", {}
    for item in given:
        team, _, zone = item.rpartition("=")
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"--time-zone {item}: {zone!r} is not an IANA time zone (e.g. Europe/Berlin)") from None
        if team:
            teams[team] = zone
        else:
            default = zone
    return default, teams
