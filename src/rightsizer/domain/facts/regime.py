"""What changed inside a host's window (a regime change), and when: the advice is judged on the time since."""

from __future__ import annotations

from rightsizer.domain.models.usage import RegimeKind, UsageSummary
from rightsizer.domain.wording import pct


def regime_text(usage: UsageSummary, unit: str) -> str:
    """What changed inside the window and when: the advice is judged on the time since."""
    days = (usage.window_end - usage.regime.since).total_seconds() / 86400 if usage.regime else 0.0
    return f"{regime_change_text(usage, unit)}: judged on the {days:.1f} days since, not on the whole window"


def regime_change_text(usage: UsageSummary, unit: str) -> str:
    """What changed inside the window, and when."""
    change = usage.regime
    if change is None:
        return ""
    when = f"{change.since:%Y-%m-%d %H:%M} UTC"
    level = f"the busiest {unit}'s mean"
    before, after = pct(change.level_before), pct(change.level_after)
    if change.measure == "cpu":
        way = "down" if change.kind is RegimeKind.STEPPED_DOWN else "up"
        return (
            f"the host's CPU stepped {way} on {when} from {before} to {after} (its mean) and stayed there, while the "
            f"{unit}s' load did not"
        )
    return {
        RegimeKind.WENT_QUIET: f"the work ended: every {unit} quiet since {when}, after {change.days_before:.1f} "
        f"days at {before} ({level})",
        RegimeKind.WENT_BUSY: f"work started {when}, after {change.days_before:.1f} days without any; "
        f"{after} since ({level}), a change, not a weekly pattern",
        RegimeKind.STEPPED_DOWN: f"the load stepped down on {when} from {before} to {after} ({level}) and stayed "
        f"there; if the earlier load returns, this advice no longer holds",
        RegimeKind.STEPPED_UP: f"the load stepped up on {when} from {before} to {after} ({level}) and stayed there",
    }[change.kind]
