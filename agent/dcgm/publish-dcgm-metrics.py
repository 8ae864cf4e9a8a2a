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
Definitions: NVIDIA DCGM, dcgmlib/dcgm_fields.h. MIG instances (dmon rows "GPU-I n") are not published: per GPU only.

Runs until dcgmi ends (nv-hostengine restarted, the driver reloaded), then exits non-zero for systemd to restart it
(gpu-rightsizer-dcgm.service). Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator

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


def parse(line: str) -> tuple[str, list[float | None]] | None:
    """A GPU's row of `dcgmi dmon` ("GPU 0  0.512  0.204 ..."): its index and each field's value (None: N/A).
    Headers ("#Entity ...", "ID"), MIG instances ("GPU-I 1 ...") and anything else: None."""
    parts = line.split()
    if len(parts) < 2 + len(FIELDS) or parts[0] != "GPU" or not parts[1].isdigit():
        return None
    values: list[float | None] = []
    for token in parts[2 : 2 + len(FIELDS)]:
        try:
            values.append(float(token))
        except ValueError:
            values.append(None)  # N/A: the field is not supported, or not sampled yet
    return parts[1], values


class Minute:
    """Each GPU's samples of the current minute, averaged on `flush`."""

    def __init__(self) -> None:
        self.sums: dict[tuple[str, str], float] = {}
        self.counts: dict[tuple[str, str], int] = {}

    def add(self, gpu: str, values: Iterable[float | None]) -> None:
        for (_, name, scale), value in zip(FIELDS, values, strict=True):
            if value is None:
                continue
            key = (gpu, name)
            self.sums[key] = self.sums.get(key, 0.0) + value * scale
            self.counts[key] = self.counts.get(key, 0) + 1

    def flush(self) -> list[str]:
        """The minute's StatsD gauges ("dcgm_sm_active:18.20|g|#index:0"), and a fresh start."""
        lines = []
        for (gpu, name), total in sorted(self.sums.items()):
            primary = FALLBACKS.get(name)
            if primary is not None and (gpu, primary) in self.sums:
                continue
            lines.append(f"{name}:{total / self.counts[(gpu, name)]:.2f}|g|#{INDEX_TAG}:{gpu}")
        self.sums.clear()
        self.counts.clear()
        return lines


def gauges(rows: Iterable[str], interval: float, now: Callable[[], float] = time.monotonic) -> Iterator[str]:
    """The StatsD lines of `rows` (dcgmi's output), one batch per `interval` seconds and what is left at the end."""
    minute = Minute()
    deadline = now() + interval
    for row in rows:
        found = parse(row)
        if found is not None:
            minute.add(*found)
        if now() >= deadline:
            yield from minute.flush()
            deadline += interval
    yield from minute.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dcgmi", default="dcgmi", help="the dcgmi command (default: dcgmi on PATH)")
    parser.add_argument("--statsd", default="127.0.0.1:8125", help="the agent's StatsD listener (host:port)")
    parser.add_argument("--interval", type=float, default=60.0, help="seconds averaged into each gauge")
    args = parser.parse_args(argv)
    host, _, port = args.statsd.rpartition(":")
    fields = ",".join(str(field) for field, _, _ in FIELDS)
    command = [args.dcgmi, "dmon", "-e", fields, "-d", str(SAMPLE_MS)]
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, bufsize=1) as dmon:
        assert dmon.stdout is not None
        for line in gauges(dmon.stdout, args.interval):
            sink.sendto(line.encode(), (host, int(port)))
    code = dmon.returncode
    print(f"dcgmi dmon ended (exit {code}): restart to publish again", file=sys.stderr)
    return code or 1


if __name__ == "__main__":
    sys.exit(main())
