"""The fleet the performance benches measure (issue 29): every host with series of its own, as a real fleet has.

- 1/4/8-GPU hosts (half g5.xlarge, 30 % g5.12xlarge, 20 % g5.48xlarge), 14 days, every series the shipped agent
  config publishes (per GPU: 5-minute utilisation, hourly utilisation maximum, memory used, encoder sessions and
  frame rate, daily memory total; per host: memory, and AWS/EC2 CPU and network in and out every 5 minutes);
- dense: each series is generated for its own host and unit (no pool reused between hosts), shaped by a workload
  (idle, light, steady, office hours, training bursts, video) with noise, as CloudWatch would return it (averages at
  full precision, maxima of integer readings, byte sums in whole bytes);
- 20 % of hosts with a gap: one GPU of the host has no data for a few hours (an agent restart, a driver reset);
- the four-GPU hosts publish DCGM's profiling metrics too (agent/dcgm), so the collector's extra queries are counted;
- tags: a Name, a team (so consolidation finds groups: one team's hosts of one type in one zone) and, for 15 % of
  hosts, an EKS managed node group of 8 nodes (so node groups get their one recommendation).

Values come from `series(...)`, the same for a host whichever bench asks (seeded by the host's
number and the series): the analyzer bench builds RawUsage from them, the CloudWatch double serves them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

DAYS = 14
END = datetime(2026, 12, 1, tzinfo=UTC)
START = END - timedelta(days=DAYS)
MIX = (("g5.xlarge", 1),) * 5 + (("g5.12xlarge", 4),) * 3 + (("g5.48xlarge", 8),) * 2
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
TEAMS = 40
GAP_SHARE = 0.2
NODE_GROUP_SHARE = 0.15
NODE_GROUP_SIZE = 8
A10G_MEMORY_MIB = 23028.0
GPU_FIELDS = (  # DeviceSeries field, period: what the collector asks per GPU
    ("utilization_avg", 300),
    ("utilization_max", 3600),
    ("memory_used_max", 3600),
    ("memory_total_max", 86400),
    ("encoder_sessions_max", 3600),
    ("encoder_fps_avg", 3600),
)
HOST_FIELDS = (("cpu_avg", 300), ("network_in_sum", 300), ("network_out_sum", 300), ("host_memory_max", 3600))
WORKLOADS = ("idle", "light", "steady", "office", "training", "video")
_WORKLOAD_WEIGHTS = (0.2, 0.25, 0.25, 0.1, 0.15, 0.05)
_FIELD_CODES = {name: code for code, (name, _) in enumerate((*GPU_FIELDS, *HOST_FIELDS))}


@dataclass(frozen=True)
class Host:
    number: int
    instance_id: str  # f"i-{number:017x}", or the id EC2 (moto) gave the host
    instance_type: str
    gpus: int
    zone: str
    workload: str
    tags: dict[str, str] = field(hash=False)
    gap_gpu: int | None  # the GPU whose series miss `gap_hours` from `gap_start_hour` (None: complete data)
    gap_start_hour: int = 0
    gap_hours: int = 0
    dcgm: bool = False  # publishes DCGM's profiling metrics too (agent/dcgm)


def fleet(count: int, seed: int = 29, gap_share: float = GAP_SHARE) -> list[Host]:
    """`count` hosts, the same ones for the same arguments (`gap_share` 0: the same hosts, all with complete data)."""
    rng = np.random.default_rng(seed)
    workloads = rng.choice(len(WORKLOADS), size=count, p=_WORKLOAD_WEIGHTS)
    gaps = rng.random(count) < gap_share
    in_group = rng.random(count) < NODE_GROUP_SHARE
    hosts = []
    for n in range(count):
        instance_type, gpus = MIX[n % len(MIX)]
        zone = ZONES[(n // len(MIX)) % len(ZONES)]
        tags = {"Name": f"gpu-{n:05d}", "team": f"team-{n % TEAMS:02d}"}
        if in_group[n]:
            # Nodes of one group are consecutive hosts of one type: a group of 8 per (type, run of hosts).
            tags["eks:cluster-name"] = "ml"
            tags["eks:nodegroup-name"] = f"ng-{instance_type}-{n // (len(MIX) * NODE_GROUP_SIZE)}"
        gap_gpu = int(rng.integers(gpus)) if gaps[n] else None
        hosts.append(
            Host(
                n,
                f"i-{n:017x}",
                instance_type,
                gpus,
                zone,
                WORKLOADS[int(workloads[n])],
                tags,
                gap_gpu,
                gap_start_hour=int(rng.integers(24, DAYS * 24 - 24)) if gap_gpu is not None else 0,
                gap_hours=int(rng.integers(1, 7)) if gap_gpu is not None else 0,
                dcgm=gpus == 4,
            )
        )
    return hosts


def present(host: Host, gpu: int | None, period: int, count: int) -> np.ndarray:
    """Indexes of the window's `count` periods that have a datapoint (all but the gap's, on the gap's GPU)."""
    index = np.arange(count, dtype=np.int64)
    if gpu is None or gpu != host.gap_gpu or period >= 86400:
        return index
    start, stop = host.gap_start_hour * 3600 // period, (host.gap_start_hour + host.gap_hours) * 3600 // period
    return index[(index < start) | (index >= max(stop, start + 1))]


def series(host: Host, name: str, gpu: int | None, period: int, count: int, index: np.ndarray) -> np.ndarray:
    """The values of one series of `count` periods, at the periods `index` (the host's own: seeded by the host and
    the series)."""
    rng = np.random.default_rng((29, host.number, _FIELD_CODES[name], 0 if gpu is None else gpu + 1))
    hours = (np.arange(count) * period // 3600) % 24
    weekday = ((np.arange(count) * period // 86400) + START.weekday()) % 7 < 5
    level = _level(host, gpu, rng)
    values: np.ndarray[Any, Any]
    if name in ("utilization_avg", "utilization_max", "cpu_avg"):
        if host.workload == "office":
            shape = np.where(weekday & (hours >= 8) & (hours < 18), level, level * 0.05)
        elif host.workload == "training":
            shape = np.where((np.arange(count) * period // (6 * 3600)) % 3 == 0, level, level * 0.2)
        else:
            shape = np.full(count, level)
        spread = min(4.0, 0.2 + level * 0.1)  # an idle unit hardly moves
        noisy = shape + rng.normal(0.0, spread, count)
        if name == "utilization_max":
            noisy = noisy + np.abs(rng.normal(0.0, 2 * spread, count))
        values = np.clip(noisy, 0.0, 100.0)
        if name == "cpu_avg":
            values = np.clip(values * 0.4 + 2.0, 0.0, 100.0)
        if name == "utilization_max":  # nvidia-smi reads whole percents
            values = np.round(values)
    elif name == "memory_used_max":
        values = np.round(np.clip(A10G_MEMORY_MIB * level / 100 + rng.normal(0.0, 200.0, count), 0.0, A10G_MEMORY_MIB))
    elif name == "memory_total_max":
        values = np.full(count, A10G_MEMORY_MIB)
    elif name == "encoder_sessions_max":
        values = np.round(rng.uniform(1, 4, count)) if host.workload == "video" else np.zeros(count)
    elif name == "encoder_fps_avg":
        values = rng.uniform(25.0, 60.0, count) if host.workload == "video" else np.zeros(count)
    elif name in ("network_in_sum", "network_out_sum"):
        values = np.round(np.abs(rng.normal(level * 1e7, 1e6, count)))
    else:  # host memory, percent
        values = np.clip(20.0 + level * 0.5 + rng.normal(0.0, 2.0, count), 0.0, 100.0)
    return np.asarray(values[index], dtype=np.float64)


def _level(host: Host, gpu: int | None, rng: np.random.Generator) -> float:
    """The mean load of one unit (or of the host): by workload, different for each unit and host."""
    base = {"idle": 0.5, "light": 12.0, "steady": 60.0, "office": 70.0, "training": 85.0, "video": 25.0}
    spread = float(rng.uniform(0.6, 1.3))
    if host.workload == "light" and gpu not in (None, 0):
        spread *= 0.2  # light work sits on the first GPU
    return min(95.0, base[host.workload] * spread)
