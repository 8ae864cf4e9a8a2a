"""NVENC: each GPU's encoder sessions and frame rate, per clock hour and folded into the week."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.signals import VIDEO_ACTIVE_PCT, Signal
from rightsizer.domain.usage.clocks import Bins, WindowGrid
from rightsizer.domain.usage.series import DeviceSeries, Floats
from rightsizer.domain.usage.stats import optional_rows
from rightsizer.domain.usage.week import fold_into_week

_VIDEO = frozenset({Signal.ENCODER, Signal.DECODER})


@dataclass(frozen=True, slots=True)
class EncoderViews:
    """What a host's video encoders did: per GPU (most sessions in an hour or None where not published, hours with
    a session, mean frame rate of those hours), and the most sessions per clock hour of the window (-inf where no
    GPU published a reading) and per hour of the week."""

    units: tuple[tuple[float | None, int, float | None], ...]
    hours: Floats
    week: tuple[float | None, ...]


def encoder_views(devices: Sequence[DeviceSeries], grid: WindowGrid) -> EncoderViews | None:
    """None when no GPU publishes encoder stats or DCGM's video engines (nothing to read, no cost). An hour in which
    DCGM shows a GPU's NVENC or NVDEC at work counts as one session open: the hours read as work by schedules and
    regimes are the same whichever measures the engines."""
    video = [[series for signal, series in device.signals if signal in _VIDEO and series] for device in devices]
    if not any(device.encoder_sessions_max for device in devices) and not any(video):
        return None
    hours = np.full(grid.hours, -np.inf)
    units: list[tuple[float | None, int, float | None]] = []
    for engines in video:
        for series in engines:
            busiest = Bins(series.stamps, grid.first_hour, 3600, grid.hours).reduce(series.array, np.maximum, -np.inf)
            at_work = np.where(busiest >= VIDEO_ACTIVE_PCT, 1.0, np.where(busiest > -np.inf, 0.0, -np.inf))
            np.maximum(hours, at_work, out=hours)
    for device in devices:
        sessions = device.encoder_sessions_max
        if not sessions:
            units.append((None, 0, None))
            continue
        values = sessions.array
        fps = device.encoder_fps_avg.array
        encoding = fps[fps > 0]
        units.append((float(values.max()), int((values >= 1).sum()), float(encoding.mean()) if len(encoding) else None))
        bins = Bins(sessions.stamps, grid.first_hour, 3600, grid.hours)
        np.maximum(hours, bins.reduce(values, np.maximum, -np.inf), out=hours)
    week = fold_into_week(hours[np.newaxis], grid.first_hour, np.maximum, -np.inf)
    return EncoderViews(tuple(units), hours, optional_rows(week, week[0] > -np.inf)[0])


def with_encoders(summary: UsageSummary, views: EncoderViews | None) -> UsageSummary:
    """The summary with what its GPUs' encoders did (unchanged without encoder stats)."""
    if views is None:
        return summary
    devices = tuple(
        replace(device, encoder_sessions_peak=peak, encoder_active_hours=active, encoder_fps_mean=fps)
        for device, (peak, active, fps) in zip(summary.devices, views.units, strict=True)
    )
    return replace(
        summary,
        devices=devices,
        hourly_encoder_sessions=views.week,
        encoder_hour_sessions=optional_rows(views.hours[np.newaxis], views.hours > -np.inf)[0],
    )
