"""The benches' measure of a process's peak memory (bench/machine.py's `own_peak_rss_mib`) is the process's own, where
`ru_maxrss` is not: Linux keeps the largest RSS a process had across exec, so a process started by a program holding
much memory reports at least that much, whatever it then holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench.machine import own_peak_rss_mib

ROOT = Path(__file__).resolve().parents[2]
HELD_MIB = 96  # far above what a bare interpreter importing bench.machine holds (~15 MiB)
_CHILD = "from bench.machine import own_peak_rss_mib; print(own_peak_rss_mib())"

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's (/proc)")


def test_a_process_started_by_a_large_one_reports_its_own_peak_where_ru_maxrss_reports_its_parents() -> None:
    page = os.sysconf("SC_PAGE_SIZE")
    held = bytearray(HELD_MIB * 2**20)
    held[::page] = b"\x01" * len(range(0, len(held), page))  # every page written: resident
    assert own_peak_rss_mib() >= HELD_MIB

    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.stdout is not None
    with child.stdout:
        own = float(child.stdout.read())

    assert child.returncode == 0
    assert usage.ru_maxrss / 1024 >= HELD_MIB  # the parent's memory, carried across exec
    assert own < HELD_MIB / 2  # the child's own: a bare interpreter
