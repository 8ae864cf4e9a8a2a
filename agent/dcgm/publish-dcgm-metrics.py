#!/usr/bin/env python3
"""Publish NVIDIA DCGM's profiling metrics per GPU through the CloudWatch agent's StatsD listener.

utilization.gpu (what the agent's nvidia_gpu section publishes) is the share of time any kernel ran: it reads 100 %
while most SMs sit idle and 0 % while the video engines work. DCGM measures what the hardware does. This script runs
`dcgmi dmon` (NVIDIA DCGM's command line; nv-hostengine must run), averages each GPU's samples over a minute and sends
one StatsD gauge per GPU and field to the agent (amazon-cloudwatch-agent.json beside this file has the `statsd`
section), which publishes them in namespace CWAgent with its append_dimensions (InstanceId, InstanceType) and the
`index` tag as a dimension, in the same flush as its other metrics: no request of its own, no credentials.

Published, in percent (DCGM's profiling fields are ratios 0-1), per GPU:
  dcgm_sm_active      DCGM_FI_PROF_SM_ACTIVE (1002): the ratio of cycles an SM has at least 1 warp assigned
  dcgm_sm_occupancy   DCGM_FI_PROF_SM_OCCUPANCY (1003): warps resident on an SM, as a ratio of the theoretical maximum;
                      sent only for a GPU whose SM active reads N/A that minute (a fallback, not a second bill)
  dcgm_tensor_active  DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (1004): the ratio of cycles any tensor pipe is active
  dcgm_dram_active    DCGM_FI_PROF_DRAM_ACTIVE (1005): the ratio of cycles the device memory interface is active
  dcgm_encoder_util   DCGM_FI_DEV_ENC_UTIL (206): the video encoders' (NVENC) utilisation, 0-100
  dcgm_decoder_util   DCGM_FI_DEV_DEC_UTIL (207): the video decoders' (NVDEC) utilisation, 0-100
Definitions: NVIDIA DCGM, dcgmlib/dcgm_fields.h.

On a GPU in MIG mode nvidia-smi reads utilization.gpu as [N/A], and DCGM's profiling fields are measured per GPU
instance (a slice: its own SMs and memory). Where `nvidia-smi mig -lgi` lists GPU instances, each one's readings are
published too, with the `index` of its GPU, its `gpu_instance` id and its `mig_profile` ("3g.20gb") as tags:
  dcgm_mig_sm_active     DCGM_FI_PROF_SM_ACTIVE (1002), of the instance's own SMs
  dcgm_mig_sm_occupancy  DCGM_FI_PROF_SM_OCCUPANCY (1003), only where the instance's SM active reads N/A
  dcgm_mig_fb_used       DCGM_FI_DEV_FB_USED (252): the instance's framebuffer in use, MiB (N/A on some drivers: then
                         nothing is sent, and the advice keeps the instance's memory)
dcgmi dmon prints an instance's row as "GPU-I <DCGM entity id>"; `dcgmi discovery -c` maps each entity id to its GPU
and GPU instance ("I 0/1 ... GPU Instance (EntityID: 7)"), `nvidia-smi mig -lgi` each GPU instance to its profile.
The layout is read when the script starts and checked every --rediscover seconds (GPU instances are created and
destroyed while the GPU runs): when it changed, the script exits for systemd to start it on the new layout.

Runs until dcgmi ends (nv-hostengine restarted, the driver reloaded), then exits non-zero for systemd to restart it
(gpu-rightsizer-dcgm.service). Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

# (DCGM field id, metric name, scale to percent), in the order dcgmi dmon prints its columns.
FIELDS: tuple[tuple[int, str, float], ...] = (
    (1002, "dcgm_sm_active", 100.0),
    (1003, "dcgm_sm_occupancy", 100.0),
    (1004, "dcgm_tensor_active", 100.0),
    (1005, "dcgm_dram_active", 100.0),
    (206, "dcgm_encoder_util", 1.0),
    (207, "dcgm_decoder_util", 1.0),
)
# Sent only for a GPU without a reading of the first (SM occupancy is the compute signal where SM active is N/A).
FALLBACKS = {"dcgm_sm_occupancy": "dcgm_sm_active"}
SAMPLE_MS = 10_000  # dcgmi's sampling period: six samples make each minute's average
INDEX_TAG = "index"  # the same dimension name as the agent's nvidia_gpu section uses for the GPU
# Per GPU instance (MIG slice): (DCGM field id, metric name, scale), in dmon's column order after FIELDS. Only what the
# per-slice sizing reads, so a slice costs two custom metrics: its SMs' load (occupancy where SM active reads N/A) and
# its memory in use (MiB; the GPU's own memory is the agent's nvidia_gpu memory_used, not sent again).
INSTANCE_FIELDS: tuple[tuple[int, str, float], ...] = (
    (1002, "dcgm_mig_sm_active", 100.0),
    (1003, "dcgm_mig_sm_occupancy", 100.0),
    (252, "dcgm_mig_fb_used", 1.0),
)
INSTANCE_FALLBACKS = {"dcgm_mig_sm_occupancy": "dcgm_mig_sm_active"}
INSTANCE_TAG = "gpu_instance"  # the GPU instance id within its GPU (nvidia-smi's "GI ID")
PROFILE_TAG = "mig_profile"  # its profile, as nvidia-smi names it without "MIG " ("3g.20gb")
# A row of `nvidia-smi mig -lgi`: "|   0  MIG 3g.20gb       9        1          4:4     |" (GPU, name, profile id,
# instance id, placement).
_LGI_ROW = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+\d+\s+(\d+)\s+\d+:\d+\s*\|")
# A GPU instance in `dcgmi discovery -c`'s tree: "I <GPU index>/<instance id>" and its DCGM entity id.
_HIERARCHY_ROW = re.compile(r"\bI (\d+)/(\d+)\b.*?GPU Instance \(EntityID: (\d+)\)")


class Slice(NamedTuple):
    """A GPU instance (MIG slice) as DCGM knows it: its GPU's index, its instance id there, and its profile. (A tuple,
    not a dataclass: the script is also loaded by path, outside sys.modules, by the tests and bench/agent_costs.py.)"""

    gpu: str
    instance: str
    profile: str

    @property
    def tags(self) -> str:
        return f"{INDEX_TAG}:{self.gpu},{INSTANCE_TAG}:{self.instance},{PROFILE_TAG}:{self.profile}"


def profiles(lgi: str) -> dict[tuple[str, str], str]:
    """(GPU index, GPU instance id) -> profile name, from `nvidia-smi mig -lgi`."""
    found = (_LGI_ROW.match(line.strip()) for line in lgi.splitlines())
    return {(row[1], row[3]): row[2] for row in found if row}


def slices(hierarchy: str, lgi: str) -> dict[str, Slice]:
    """DCGM entity id -> its GPU instance, from `dcgmi discovery -c` and `nvidia-smi mig -lgi`. An instance without a
    profile listed (created between the two commands) is left out: it is found at the next start."""
    named = profiles(lgi)
    found: dict[str, Slice] = {}
    for row in (_HIERARCHY_ROW.search(line) for line in hierarchy.splitlines()):
        if row and (row[1], row[2]) in named:
            found[row[3]] = Slice(row[1], row[2], named[(row[1], row[2])])
    return found


def parse(line: str, columns: int = len(FIELDS)) -> tuple[str, str, list[float | None]] | None:
    """A row of `dcgmi dmon` ("GPU 0  0.512  0.204 ...", "GPU-I 7  0.180 ..."): the entity's kind ("GPU", "GPU-I"), its
    id and each of `columns` fields' value (None: N/A). Headers ("#Entity ...", "ID"), compute instances and anything
    else: None."""
    parts = line.split()
    if len(parts) < 2 + columns or parts[0] not in ("GPU", "GPU-I") or not parts[1].isdigit():
        return None
    values: list[float | None] = []
    for token in parts[2 : 2 + columns]:
        try:
            values.append(float(token))
        except ValueError:
            values.append(None)  # N/A: the field is not supported, or not sampled yet
    return parts[0], parts[1], values


class Minute:
    """Each GPU's and GPU instance's samples of the current minute, averaged on `flush`. Keys are the StatsD tags of
    the unit ("index:0", or a slice's three) and the metric name."""

    def __init__(self) -> None:
        self.sums: dict[tuple[str, str], float] = {}
        self.counts: dict[tuple[str, str], int] = {}

    def add(self, tags: str, values: Iterable[float | None], fields: Sequence[tuple[int, str, float]] = FIELDS) -> None:
        for (_, name, scale), value in zip(fields, values, strict=True):
            if value is None:
                continue
            key = (tags, name)
            self.sums[key] = self.sums.get(key, 0.0) + value * scale
            self.counts[key] = self.counts.get(key, 0) + 1

    def flush(self) -> list[str]:
        """The minute's StatsD gauges ("dcgm_sm_active:18.20|g|#index:0"), and a fresh start."""
        lines = []
        for (tags, name), total in sorted(self.sums.items()):
            primary = FALLBACKS.get(name) or INSTANCE_FALLBACKS.get(name)
            if primary is not None and (tags, primary) in self.sums:
                continue
            lines.append(f"{name}:{total / self.counts[(tags, name)]:.2f}|g|#{tags}")
        self.sums.clear()
        self.counts.clear()
        return lines


def gauges(
    rows: Iterable[str],
    interval: float,
    now: Callable[[], float] = time.monotonic,
    instances: Mapping[str, Slice] | None = None,
) -> Iterator[str]:
    """The StatsD lines of `rows` (dcgmi's output), one batch per `interval` seconds and what is left at the end.
    `instances`: the GPU instances dmon was asked for (its columns are then FIELDS and INSTANCE_FIELDS' own)."""
    minute = Minute()
    columns = len(FIELDS) + (len(_instance_only()) if instances else 0)
    deadline = now() + interval
    for row in rows:
        found = parse(row, columns)
        if found is not None:
            kind, entity, values = found
            if kind == "GPU":
                minute.add(f"{INDEX_TAG}:{entity}", values[: len(FIELDS)])
            elif instances and entity in instances:
                minute.add(instances[entity].tags, _instance_values(values), INSTANCE_FIELDS)
        if now() >= deadline:
            yield from minute.flush()
            deadline += interval
    yield from minute.flush()


def _instance_only() -> tuple[int, ...]:
    """The fields only instances are asked for, beyond FIELDS (their columns follow FIELDS' in dmon's order)."""
    shared = {field for field, _, _ in FIELDS}
    return tuple(field for field, _, _ in INSTANCE_FIELDS if field not in shared)


def _instance_values(values: Sequence[float | None]) -> list[float | None]:
    """An instance row's values in INSTANCE_FIELDS' order, picked from dmon's columns."""
    columns = [field for field, _, _ in FIELDS] + list(_instance_only())
    return [values[columns.index(field)] for field, _, _ in INSTANCE_FIELDS]


def command(dcgmi: str, gpus: Sequence[str], instances: Mapping[str, Slice]) -> list[str]:
    """The dmon command: every GPU's fields; where MIG instances exist, those GPUs and instances by entity id, with
    the instances' own fields (dmon's default group holds GPUs only)."""
    fields = [field for field, _, _ in FIELDS]
    command = [dcgmi, "dmon", "-e", "", "-d", str(SAMPLE_MS)]
    if instances:
        fields += _instance_only()
        entities = [f"gpu:{gpu}" for gpu in gpus] + [f"instance:{entity}" for entity in sorted(instances, key=int)]
        command += ["-i", ",".join(entities)]
    command[3] = ",".join(str(field) for field in fields)
    return command


def _output(argv: Sequence[str]) -> str:
    """What a discovery command prints ("" where it fails: no MIG-capable GPU, MIG off, no nvidia-smi)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def discover(dcgmi: str, nvidia_smi: str) -> tuple[list[str], dict[str, Slice]]:
    """The GPUs' indexes and the GPU instances DCGM sees (none where no GPU is in MIG mode)."""
    lgi = _output([nvidia_smi, "mig", "-lgi"])
    if not profiles(lgi):
        return [], {}
    gpus = _output([nvidia_smi, "--query-gpu=index", "--format=csv,noheader"]).split()
    return [gpu for gpu in gpus if gpu.isdigit()], slices(_output([dcgmi, "discovery", "-c"]), lgi)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dcgmi", default="dcgmi", help="the dcgmi command (default: dcgmi on PATH)")
    parser.add_argument("--statsd", default="127.0.0.1:8125", help="the agent's StatsD listener (host:port)")
    parser.add_argument("--interval", type=float, default=60.0, help="seconds averaged into each gauge")
    parser.add_argument("--nvidia-smi", default="nvidia-smi", help="the nvidia-smi command (MIG layout)")
    parser.add_argument(
        "--rediscover", type=float, default=600.0, help="seconds between checks of the MIG layout (default: 600)"
    )
    args = parser.parse_args(argv)
    host, _, port = args.statsd.rpartition(":")
    layout = discover(args.dcgmi, args.nvidia_smi)
    gpus, instances = layout
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    changed = False
    with subprocess.Popen(command(args.dcgmi, gpus, instances), stdout=subprocess.PIPE, text=True, bufsize=1) as dmon:
        assert dmon.stdout is not None
        check = time.monotonic() + args.rediscover
        for line in gauges(dmon.stdout, args.interval, instances=instances):
            sink.sendto(line.encode(), (host, int(port)))
            if time.monotonic() >= check:
                # GPU instances are created and destroyed while the GPU runs (nvidia-smi mig -cgi/-dgi): dmon was asked
                # for the instances by entity id, so a new layout needs a new dmon (systemd restarts the script).
                check = time.monotonic() + args.rediscover
                changed = discover(args.dcgmi, args.nvidia_smi) != layout
                if changed:
                    dmon.terminate()
                    break
    if changed:
        print("the MIG layout changed: restart to publish the new GPU instances", file=sys.stderr)
        return 1
    code = dmon.returncode
    print(f"dcgmi dmon ended (exit {code}): restart to publish again", file=sys.stderr)
    return code or 1


if __name__ == "__main__":
    sys.exit(main())
