"""Changes of regime inside the look-back window: work that ended, work that started, a load that stepped.

Fourteen days are not always one workload. A training run that ended four days ago still leaves p95 at 94 %,
and a project that started four days ago looks like "busy only Mon-Thu" to a weekly fold. Advice is about the
host as it runs now, so the window is cut where the work changed and the host is judged on the time since.

A change must be sustained and unlike the host's own rhythm, so that nights, weekends, a weekly job or a
holiday weekend are never read as one:

- **went quiet**: every unit (and every video encoder) has been quiet for at least `MIN_HOURS` hours of data
  and for at least `GAP_FACTOR` times the longest quiet gap between active hours before, after at least
  `MIN_ACTIVE_HOURS` hours of work (a weekly job's hour or two is the host's rhythm, not a regime);
- **went busy**: the window opens with such a quiet stretch, and the work since has run `MIN_ACTIVE_HOURS` hours
  with no quiet gap half as long, or has run without a break (`CONTINUOUS_SHARE` of its hours active) for at least
  `MIN_CONTINUOUS_HOURS`: a run that started this morning is young, never a weekly pattern;
- **stepped down / up**: the daily means of at least `MIN_DAYS` days on each side of a day boundary are apart
  by `STEP_RATIO` (every day of the busier side at least that many times the busiest day of the other), the busier
  side at `STEP_MIN_PCT` or more.

An hour is active when the busiest unit's hourly maximum reaches the policy's idle threshold (5 %) or a video
encoder has a session open: the same test the weekly schedule uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from rightsizer.domain.models.usage import RegimeKind
from rightsizer.domain.policy import Policy
from rightsizer.domain.usage.clocks import Timelines
from rightsizer.domain.usage.series import Floats

ACTIVE_PCT = Policy.idle_util_pct
Hours = npt.NDArray[np.intp]  # indexes of clock hours in the window
Flags = npt.NDArray[np.bool_]  # one per clock hour

MIN_HOURS = 72  # three days: longer than any weekend
GAP_FACTOR = 2.0
MIN_ACTIVE_HOURS = 24  # a day's work: a weekly job's hour or two is the host's rhythm, not a regime
CONTINUOUS_SHARE = 0.8  # a start that has kept running: at least this share of the hours since are active
MIN_CONTINUOUS_HOURS = 2
MIN_DAYS = 3
STEP_RATIO = 2.5
STEP_MIN_PCT = 10.0


@dataclass(frozen=True, slots=True)
class Found:
    """Where the current regime starts (epoch second), what kind it is, and how long the earlier one was seen."""

    kind: RegimeKind
    since: int
    days_before: float
    measure: str = "accelerator"  # what changed: the accelerators' work, or the host's CPU (a step of its own)

    @property
    def since_time(self) -> datetime:
        return datetime.fromtimestamp(self.since, UTC)


def find(timelines: Timelines) -> Found | None:
    """The change of regime in these timelines, or None when the window reads as one regime."""
    grid = timelines.grid
    peaks = timelines.hour_peaks
    has_data = peaks > -np.inf
    active = peaks >= ACTIVE_PCT
    if timelines.encoder_hours is not None:
        # An open encoder session is work; an encoder reading without a utilisation reading is not a quiet hour (a
        # GPU whose utilisation reads [N/A] still reports its encoder), so only utilisation says an hour has data.
        active = active | (timelines.encoder_hours >= 1)
    hours = np.flatnonzero(active)
    if not len(hours):
        return None  # quiet throughout: that is one regime (idle), not a change
    data = np.flatnonzero(has_data)
    first_data = int(data[0])
    gaps = np.diff(hours) - 1
    if len(hours) >= MIN_ACTIVE_HOURS:
        quiet = _went_quiet(hours, gaps, has_data)
        if quiet is not None:
            return Found(RegimeKind.WENT_QUIET, grid.first_hour + quiet * 3600, (quiet - first_data) / 24)
    busy = _went_busy(hours, gaps, has_data, first_data, len(peaks))
    if busy is not None:
        return Found(RegimeKind.WENT_BUSY, grid.first_hour + busy * 3600, (busy - first_data) / 24)
    # A step of the accelerators' load, or of the host's CPU (a CPU-bound job that ended leaves the GPUs as they
    # were): the later one starts the regime the host runs in now.
    steps = [_stepped(timelines.day_means, grid.start)]
    if timelines.cpu_day_means is not None:
        found = _stepped(timelines.cpu_day_means, grid.start)
        steps.append(Found(found.kind, found.since, found.days_before, "cpu") if found else None)
    return max((step for step in steps if step is not None), key=lambda step: step.since, default=None)


def _went_quiet(hours: Hours, gaps: Hours, has_data: Flags) -> int | None:
    """The hour the last work ended, when the quiet since is long, has data, and is unlike any gap before."""
    last = int(hours[-1])
    quiet_hours = len(has_data) - 1 - last
    longest = int(gaps.max()) if len(gaps) else 0
    if quiet_hours < max(MIN_HOURS, GAP_FACTOR * longest) or int(has_data[last + 1 :].sum()) < MIN_HOURS:
        return None
    return last + 1


def _went_busy(hours: Hours, gaps: Hours, has_data: Flags, first_data: int, count: int) -> int | None:
    """The hour work began, when the window opens with a long quiet stretch and the work since keeps going."""
    first = int(hours[0])
    lead = first - first_data
    trailing = count - 1 - int(hours[-1])
    longest_after = max(int(gaps.max()) if len(gaps) else 0, trailing)
    if int(has_data[:first].sum()) < MIN_HOURS or lead < GAP_FACTOR * longest_after:
        return None
    since = count - first
    established = since >= MIN_HOURS and len(hours) >= MIN_ACTIVE_HOURS
    unbroken = since >= MIN_CONTINUOUS_HOURS and len(hours) >= CONTINUOUS_SHARE * since
    return first if established or unbroken else None


def _stepped(day_means: Floats, start: int) -> Found | None:
    """The day boundary with the clearest lasting step of the daily means (both sides at least MIN_DAYS days)."""
    days = len(day_means)
    if days < 2 * MIN_DAYS or np.isnan(day_means).all():
        return None
    high = np.where(np.isnan(day_means), np.inf, day_means)
    low = np.where(np.isnan(day_means), -np.inf, day_means)
    # Lowest and highest daily mean before each boundary k (days[:k]) and from it on (days[k:]).
    before_min, before_max = np.minimum.accumulate(high), np.maximum.accumulate(low)
    after_min = np.minimum.accumulate(high[::-1])[::-1]
    after_max = np.maximum.accumulate(low[::-1])[::-1]
    seen = np.cumsum(~np.isnan(day_means))
    best: tuple[float, Found] | None = None
    for k in range(MIN_DAYS, days - MIN_DAYS + 1):
        if seen[k - 1] < MIN_DAYS or seen[-1] - seen[k - 1] < MIN_DAYS:
            continue
        down = _separation(float(before_min[k - 1]), float(after_max[k]))
        up = _separation(float(after_min[k]), float(before_max[k - 1]))
        for kind, apart in ((RegimeKind.STEPPED_DOWN, down), (RegimeKind.STEPPED_UP, up)):
            if apart is not None and (best is None or apart > best[0]):
                best = (apart, Found(kind, start + k * 86400, float(seen[k - 1])))
    return best[1] if best else None


def _separation(busier_low: float, quieter_high: float) -> float | None:
    """How far apart two sides are (ratio of the busier side's lowest day to the quieter side's busiest), when
    that is a step."""
    if busier_low < STEP_MIN_PCT or busier_low < STEP_RATIO * max(quieter_high, 0.0):
        return None
    return busier_low / max(quieter_high, 1e-9)
