"""The analyzer's thresholds: a small module of its own, so settings (and the Slack app's cold start)
can read them without importing the analyzer. docs/how-it-decides.md explains each one."""

from __future__ import annotations

from dataclasses import dataclass

# The tag (value "true") without which the instance workflow, and its IAM role, touch no host (MANAGED_TAG_KEY).
DEFAULT_MANAGED_TAG_KEY = "rightsizer:managed"


@dataclass(frozen=True)
class TimeZones:
    """The time zones stop/start schedules are written in: a team's (its team tag's value), else the default. The
    analyzer prices a schedule in the zone its approval creates it in (settings: ScheduleTimezone, TeamTimeZones)."""

    default: str = "UTC"
    teams: tuple[tuple[str, str], ...] = ()  # (team tag value, IANA zone)

    def of(self, team: str) -> str:
        return dict(self.teams).get(team, self.default)


@dataclass(frozen=True)
class Policy:
    """Thresholds, all overridable from settings. Percentages are 0-100."""

    lookback_days: int = 14
    min_days: float = 3.0  # less accelerator history than this is insufficient data
    min_coverage: float = 0.25  # share of 5-minute periods with accelerator data, below: insufficient
    memory_headroom: float = 1.2  # a downsizing target's GPU memory >= observed peak x headroom
    host_headroom: float = 1.2  # ...and its RAM and network >= observed peak x this
    idle_util_pct: float = 5.0  # a unit whose p99 stays below this does no steady work...
    # ...unless its median is at or above this: an idle GPU reads 0 %; a steady few percent is a live service.
    steady_util_pct: float = 1.0
    activity_peak_pct: float = 10.0  # any hourly maximum at or above this is real activity: not idle
    in_use_memory_pct: float = 5.0  # a unit holding at least this share of its memory has a model loaded
    # GPU memory in use at or above this (MiB) on a GPU with quiet SMs: a process has it open (a CUDA context takes
    # ~300 MiB; an unused GPU reads 0), decoding video on NVDEC, perhaps, which no Linux metric shows.
    gpu_context_mib: float = 200.0
    target_max_util_pct: float = 80.0  # projected p95 on a target must stay at or below this
    burst_max_util_pct: float = 100.0  # projected p99 of the hourly maxima must fit in the target
    saturated_util_pct: float = 95.0  # median at or above this: the accelerator is pinned
    # DCGM's SM active (domain/signals.py), where a GPU publishes it, decides instead of kernel time. NVIDIA's DCGM
    # guide (Profiling Metrics): 0.8 or more "is necessary, but not sufficient, for effective use of the GPU", below
    # 0.5 "likely indicates ineffective GPU usage". A median at or above the first: the SMs are saturated...
    saturated_sm_pct: float = 80.0
    # ...a p95 below the second while kernel time reads pinned: kernels keep the GPU occupied, most SMs wait.
    underused_sm_pct: float = 50.0
    # Reserved GPU memory: a line that sits at >= this share of memory.total and moves less than the
    # band below is a framework's reservation (vLLM 90 %, TensorRT-LLM 90 %, JAX 75 %, TensorFlow all),
    # not a working set.
    reserved_memory_min_pct: float = 70.0
    flat_memory_band_pct: float = 5.0  # p5..peak of the loaded hours within this share of memory.total
    oom_memory_pct: float = 95.0  # peak at or above this share of nvidia-smi's memory.total...
    memory_follows_load: float = 0.5  # ...on a line correlated with load at least this much: OOM risk
    cpu_idle_pct: float = 10.0  # CPU p95 (or an hour's mean, for schedules) below this: the host is quiet
    # ...and fewer busy vCPUs than this (p95 x vCPUs): 9 % of a 192-vCPU host is 17 vCPUs of a real service, where
    # an idle host's agents and an idle inference server's event loop keep one or two busy.
    busy_vcpus: float = 4.0
    # Any hour-of-week CPU mean, or the busiest 5 minutes of an hour that recurs every week (a nightly cron), at or
    # above this: the host does work of its own.
    cpu_activity_pct: float = 20.0
    # Network p95 (in + out, hourly means) at or above this: the host serves traffic. An idle host sends well under
    # 1 Mbit/s (agents, time sync); 10 Mbit/s held is ~100 GB a day.
    network_active_gbps: float = 0.01
    # Host RAM in use at or above this share: a process holds state (a cache, an index) that a stop would lose.
    host_memory_held_pct: float = 50.0
    # NeuronCores that all went silent while the host still uses this share of its RAM: the job did not end (it
    # would have freed it), neuron-monitor stopped.
    host_memory_in_use_pct: float = 20.0
    # EBS or instance-store traffic whose busiest hours stay below these sets no floor on a target: a root disk's logs
    # and package caches, which every EBS-optimized GPU type carries many times over (the least baseline is ~85 MB/s).
    storage_active_mbps: float = 5.0
    storage_active_iops: float = 200.0
    # The last day's mean (accelerators or CPU) at this many times the window's typical day, and 10 points above
    # it: the load has just risen, too recently to be a regime; a downsize waits.
    recent_rise: float = 1.5
    cpu_saturated_pct: float = 85.0  # CPU p95 at or above this: CPU-bound
    gpu_light_pct: float = 40.0  # busiest unit's p95 below this while the CPU is saturated: not GPU-bound
    target_max_cpu_pct: float = 70.0  # projected CPU p95 on a target
    burst_max_cpu_pct: float = 100.0  # projected CPU p99 (the busiest 5-minute periods) on a target
    high_confidence_coverage: float = 0.9  # share of the window (days and periods) covered for high confidence
    medium_confidence_days: float = 7.0  # days of history for medium confidence
    min_schedule_idle_hours: int = 40  # idle hours per week that make a stop schedule worth it
    min_schedule_days: float = 7.0  # a weekly pattern needs a full week
    min_savings_pct: float = 10.0  # a resize must save at least this share of the cost
    # A host that ran less than this share of the time since its first EC2 metric (it stops itself) is priced on the
    # hours it runs, not on 730 a month.
    part_time_share: float = 0.9
    opt_out_tag: str = "rightsizer:ignore"
    # Hosts with the same value of this tag in one availability zone belong to one team: their part-used
    # hosts may be consolidated, and their schedules use the team's time zone (settings).
    team_tag: str = "team"
    # Hosts tagged `<managed_tag_key>=true` are the ones one click may act on (the workflow refuses the others).
    managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY
    # Where a team's stop/start schedule runs (settings' ScheduleTimezone and TeamTimeZones, copied here).
    time_zones: TimeZones = TimeZones()
