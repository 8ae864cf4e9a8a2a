"""The analyzer's rules in the order they are asked (domain/analyzer.py's `decide`):

- `GATES` look at the host alone (exclusions, data sufficiency) and return a draft or nothing.
- `FINDING_RULES` look at measured usage; the first that returns a draft decides. `optimized` always answers,
  but only once every rule before it had the data to compare. Each module of findings lists its own rules in order
  (`RULES`); this places the modules.
- `ADJUSTMENTS` then refine whatever was decided: hosts someone else owns (Auto Scaling, Spot), types
  no longer offered, unpriced types. Their order interleaves concerns (it decides which reason is said first), so
  they are listed one by one.
"""

from __future__ import annotations

from rightsizer.domain.rules import (
    cpu_bound,
    downsizing,
    lost_gpus,
    out_of_memory,
    quiet_accelerators,
    saturation,
    schedule,
)
from rightsizer.domain.rules.changes import agent_went_silent, changed_regime, changed_regime_resize, resized_in_window
from rightsizer.domain.rules.draft import Adjustment, Gate, Rule
from rightsizer.domain.rules.exclusions import instance_store_root, not_running, opted_out, reserved_capacity
from rightsizer.domain.rules.held_back import (
    no_longer_offered,
    paid_upgrade,
    placement_group_member,
    resize_stops_the_host,
    unread_sources,
)
from rightsizer.domain.rules.insufficient_data import (
    impossible_data,
    no_accelerator_metrics,
    short_history,
    thin_coverage,
    unknown_type,
    unmonitored_accelerator,
    utilization_missing,
)
from rightsizer.domain.rules.mig_slices import mig_slices, slices_beside
from rightsizer.domain.rules.ownership import launched_by_owner, spot_host
from rightsizer.domain.rules.pricing import billed_platform, reservations, unpriced

GATES: tuple[Gate, ...] = (
    opted_out,
    reserved_capacity,
    not_running,
    instance_store_root,
    unknown_type,
    unmonitored_accelerator,
    impossible_data,
    no_accelerator_metrics,
    mig_slices,
    utilization_missing,
    short_history,
    thin_coverage,
)

FINDING_RULES: tuple[Rule, ...] = (
    *lost_gpus.RULES,
    *quiet_accelerators.RULES,
    *cpu_bound.RULES,
    *out_of_memory.RULES,
    *saturation.RULES,
    *schedule.RULES,
    *downsizing.RULES,
)

ADJUSTMENTS: tuple[Adjustment, ...] = (
    slices_beside,
    changed_regime,
    changed_regime_resize,
    resized_in_window,
    unread_sources,
    agent_went_silent,
    resize_stops_the_host,
    no_longer_offered,
    billed_platform,
    unpriced,
    paid_upgrade,
    placement_group_member,
    launched_by_owner,
    spot_host,
    reservations,
)
