"""What a benchmark ran on: the CPU, and the SIMD paths numpy takes on it (the numpy floor's speed depends on them);
and what a process's own peak memory was.

`np.show_runtime()` prints the same SIMD lists; this keeps them as data for the bench's output and the docs.
"""

from __future__ import annotations

import importlib
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    """The CPU's model name as the OS reports it, with its family and model numbers where the name is vague (a VM's
    "AMD EPYC"), and the CPUs this process may use."""
    fields: dict[str, str] = {}
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name") or platform.processor() or platform.machine()
    detail = f" (family {fields['cpu family']}, model {fields['model']})" if "cpu family" in fields else ""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{name}{detail}, {cpus} CPUs"


def own_peak_rss_mib() -> float:
    """This process's own peak RSS in MiB: the high-water mark of its address space since its last exec (VmHWM).

    Not `ru_maxrss`: Linux carries a process's largest RSS across exec, so a process the bench starts reports at
    least what the bench itself held when it forked (moto's seeded fleet, the CloudWatch double's series), whatever
    the program it then runs held. tests/unit/test_bench_machine.py shows both. Where /proc is missing (macOS),
    `ru_maxrss` is all there is (bytes there, KiB on Linux)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def numpy_simd() -> dict[str, list[str]]:
    """numpy's SIMD extensions: compiled in as the baseline, found on this CPU, and dispatchable but missing."""
    core = _core()
    features = core.__cpu_features__
    return {
        "baseline": list(core.__cpu_baseline__),
        "found": [name for name in core.__cpu_dispatch__ if features.get(name)],
        "not_found": [name for name in core.__cpu_dispatch__ if not features.get(name)],
    }


def _core() -> Any:
    """numpy's compiled core, where it keeps its CPU feature tables (no stubs: read as data)."""
    return importlib.import_module("numpy._core._multiarray_umath")


def sort_path() -> str:
    """The kernel np.sort runs for float64 here. numpy 2.4's build dispatches it to Intel's x86-simd-sort on x86
    (X86_V4 = AVX-512, else X86_V3 = AVX2; older numpy names them AVX512_SKX and AVX2) and to Google Highway's VQSort
    on Arm; without either, a scalar introsort."""
    features = _core().__cpu_features__

    def has(*names: str) -> str | None:
        return next((name for name in names if features.get(name)), None)

    if platform.machine().lower() in ("x86_64", "amd64"):
        wide, narrow = has("X86_V4", "AVX512_SKX"), has("X86_V3", "AVX2")
        if wide:
            return f"x86-simd-sort, {wide} (AVX-512)"
        if narrow:
            return f"x86-simd-sort, {narrow} (AVX2)"
    elif has("ASIMD"):
        return "Highway VQSort, ASIMD"
    return "scalar introsort (no SIMD sort kernel for this CPU)"


_PROBE = """
import time, numpy as np
rows = np.random.default_rng(0).uniform(0, 100, (500, 4032))
np.sort(rows[0])
started = time.process_time()
for row in rows:
    np.sort(row)
print((time.process_time() - started) / rows.size * 1e9)
"""


_LEVELS = {  # what to tell numpy to skip (NPY_DISABLE_CPU_FEATURES) for np.sort to run one SIMD level lower
    "X86_V4": ("on X86_V3 (AVX2, numpy told to skip X86_V4)", "X86_V4 AVX512_ICL AVX512_SPR"),
    "X86_V3": ("scalar (numpy told to skip X86_V3)", "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"),
}


def sort_speeds() -> dict[str, float]:
    """ns per element of np.sort over 14 days of 5-minute samples (4,032 float64), in a fresh interpreter per SIMD
    level numpy can be told to skip (NPY_DISABLE_CPU_FEATURES): on some CPUs a lower level sorts faster (AMD Zen 4
    runs AVX-512's compress-store in microcode), and the numpy floor is only as fast as the level numpy picks."""
    features = _core().__cpu_features__
    levels = {"as numpy dispatches": ""}
    for feature, (label, disabled) in _LEVELS.items():
        if features.get(feature):
            levels[label] = disabled
    speeds = {}
    for label, disabled in levels.items():
        env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": disabled} if disabled else dict(os.environ)
        answer = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, check=True)
        speeds[label] = float(answer.stdout.strip())
    return speeds


def faster_sort(speeds: dict[str, float]) -> tuple[str, str] | None:
    """(label, NPY_DISABLE_CPU_FEATURES value) of a lower SIMD level that sorts at least 20 % faster here than the
    level numpy dispatches to, if there is one."""
    default = speeds["as numpy dispatches"]
    best = min(((ns, label) for label, ns in speeds.items() if label != "as numpy dispatches"), default=None)
    if best is None or best[0] * 1.2 > default:
        return None
    disabled = next(value for label, value in _LEVELS.values() if label == best[1])
    return best[1], disabled


def describe(speeds: dict[str, float]) -> list[str]:
    import numpy as np

    simd = numpy_simd()
    return [
        f"machine: {cpu_model()}; Python {platform.python_version()}, numpy {np.__version__}",
        f"numpy SIMD (np.show_runtime): baseline {', '.join(simd['baseline']) or '-'}; found "
        f"{', '.join(simd['found']) or '-'}; not found {', '.join(simd['not_found']) or '-'}",
        f"np.sort of float64: {sort_path()}; a 4,032-sample series sorts at "
        + ", ".join(f"{ns:.1f} ns per sample {label}" for label, ns in speeds.items()),
    ]


if __name__ == "__main__":
    print("\n".join(describe(sort_speeds())))
