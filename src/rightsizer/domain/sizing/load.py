"""The busiest unit's load: kernel time, or each engine's best DCGM signal; and the video engines a target keeps."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from rightsizer.domain.models.hosts import AcceleratorSpec
from rightsizer.domain.models.usage import DeviceUsage, SeriesStats, UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.signals import READS, VIDEO_ACTIVE_PCT, Engine, Load, Signal


def busiest(devices: Iterable[DeviceUsage]) -> tuple[float, float, float]:
    """(p95, burst, peak) of the busiest unit(s).

    The burst a target must carry is the larger of the p99 of the hourly maxima (what the busiest hours
    reach again and again) and the highest 5-minute average (any load sustained for five minutes, such
    as a weekly job): a spike of a minute or two, such as a model load, counts in neither.
    A unit without 5-minute averages but with hourly maxima counts at its peak: its steady load is
    unknown, and assuming the maximum is the safe side for sizing.
    """
    p95 = burst = peak = 0.0
    for device in devices:
        if device.utilization is not None:
            p95 = max(p95, device.utilization.p95)
            burst = max(burst, device.utilization.p99, device.utilization.peak)
        elif device.utilization_peak is not None:
            p95 = max(p95, device.utilization_peak)
        if device.utilization_burst is not None:
            burst = max(burst, device.utilization_burst)
        if device.utilization_peak is not None:
            peak = max(peak, device.utilization_peak)
            if device.utilization is None:
                burst = max(burst, device.utilization_peak)
    return p95, burst, peak


def engine_load(devices: Sequence[DeviceUsage], engine: Engine, kernel: tuple[float, float, float]) -> Load:
    """The busiest unit's load of `engine`: from each unit's best DCGM signal for it (signals.READS), when every unit
    that published a reading has one (DCGM's profiling counters are per GPU: a GPU without them, or a roll-up, leaves
    the engine to kernel time); else kernel time (`kernel`: busiest()'s p95, burst and peak). A DCGM signal's busiest
    hours are its highest 5-minute average (the collector reads those alone)."""
    read = [d for d in devices if d.utilization is not None or d.utilization_peak is not None or d.profile]
    chosen: list[tuple[Signal, SeriesStats]] = []
    for device in read if any(d.profile for d in read) else ():
        found = device.best_signal(engine)
        if found is None:
            chosen = []
            break
        chosen.append(found)
    if chosen:
        order = READS[engine]
        weakest = max((signal for signal, _ in chosen), key=order.index)
        return Load(
            engine,
            p50=max(stats.p50 for _, stats in chosen),
            p95=max(stats.p95 for _, stats in chosen),
            burst=max(stats.peak for _, stats in chosen),
            signal=weakest,
        )
    p95, burst, _ = kernel
    p50 = max((d.utilization.p50 for d in devices if d.utilization is not None), default=p95)
    return Load(engine, p50, p95, burst)


def video_engines(
    accelerator: AcceleratorSpec | None,
    usage: UsageSummary,
    policy: Policy | None = None,
    loads: Sequence[Load] = (),  # the NVENC and NVDEC loads (Measured.video_loads)
) -> tuple[int, int]:
    """(encoders, decoders) per GPU a target must keep (see Demand). Where DCGM measures an engine's utilisation, its
    load is projected in percent of the engines: the busiest GPU's p95 within the policy's ceiling and its busiest
    hours within 100 % of the target's engines (one of three L40S NVENCs' worth of work fits an L4's two). Elsewhere,
    today's engines where the encoder works, none where it was measured idle, one of each where nobody measured it."""
    if accelerator is None or not (accelerator.video_encoders or accelerator.video_decoders):
        return 0, 0
    measured = {load.engine: load for load in loads if load.measured}

    def keep(engine: Engine, engines: int) -> int:
        load = measured.get(engine)
        if load is not None and policy is not None:
            return _engines_for(engines, load, policy)
        if usage.encodes:
            return engines
        return 0 if usage.encoder_measured else min(1, engines)

    return keep(Engine.ENCODER, accelerator.video_encoders), keep(Engine.DECODER, accelerator.video_decoders)


def _engines_for(engines: int, load: Load, policy: Policy) -> int:
    """The engines that carry `load` (percent of `engines` engines) within the policy's ceilings; none if idle."""
    if load.burst < VIDEO_ACTIVE_PCT:
        return 0
    share = max(load.p95 / policy.target_max_util_pct, load.burst / policy.burst_max_util_pct)
    return max(1, math.ceil(engines * share - 1e-9))
