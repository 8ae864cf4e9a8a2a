"""The analyzer's thresholds: a small module of its own, so settings (and the Slack app's cold start)
can read them without importing the analyzer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Policy:
    """Thresholds, all overridable from settings. Percentages are 0-100."""

    lookback_days: int = 14
    min_days: float = 3.0  # less accelerator history than this is insufficient data
    min_coverage: float = 0.25  # share of 5-minute periods with accelerator data, below: insufficient
    memory_headroom: float = 1.2  # target memory >= observed peak x headroom
    idle_util_pct: float = 5.0  # a unit whose p99 stays below this is idle
    in_use_memory_pct: float = 5.0  # ...unless it holds more than this share of its memory
    target_max_util_pct: float = 80.0  # projected p95 on a target must stay below this
    saturated_util_pct: float = 95.0  # median at or above this: the accelerator is pinned
    cpu_idle_pct: float = 20.0
    cpu_saturated_pct: float = 85.0  # CPU p95 at or above this: CPU-bound
    gpu_light_pct: float = 40.0  # busiest unit's p95 below this while the CPU is saturated: not GPU-bound
    target_max_cpu_pct: float = 70.0
    min_schedule_idle_hours: int = 40  # idle hours per week that make a stop schedule worth it
    min_schedule_days: float = 7.0  # a weekly pattern needs a full week
    min_savings_pct: float = 10.0  # a resize must save at least this share of the cost
    memory_bound_activity_pct: float = 30.0  # memory-controller busy above this: bandwidth matters
    opt_out_tag: str = "rightsizer:ignore"
