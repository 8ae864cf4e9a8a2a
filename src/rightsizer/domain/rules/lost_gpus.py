"""A GPU that stopped reporting while its siblings report on and the host runs: fallen off the bus or disabled. Said
first, whatever the other GPUs do, and never read as an idle GPU to drop.
"""

from __future__ import annotations

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.money import CENT
from rightsizer.domain.rules.draft import Draft, Rule
from rightsizer.domain.wording import index_ranges, pct, span, usd


def gpu_gone(m: Measured) -> Draft | None:
    """A GPU whose series stopped while its siblings report on and the host runs: the host pays for hardware it cannot
    use. Said first, whatever the other GPUs do, and never read as an idle GPU to drop."""
    gone = m.usage.gone_units
    if not gone:
        return None
    spec, unit = m.spec, m.unit
    lost = [unit.index for unit in gone]
    others = [d.index for d in m.usage.devices if d.index not in lost]
    first = min(unit.since for unit in gone)
    hours = (m.usage.window_end - first).total_seconds() / 3600
    which = f"{unit}{'s' if len(lost) > 1 else ''} {index_ranges(lost)}"
    reasons = [
        f"{which} stopped reporting on {first:%Y-%m-%d %H:%M} UTC while {unit}s {index_ranges(others)} reported on "
        f"and the host kept running ({hours:.0f} hours since): {'they have' if len(lost) > 1 else 'it has'} fallen off "
        "the bus (NVIDIA Xid 79) or been disabled, so nothing on the host can use "
        f"{'them' if len(lost) > 1 else 'it'}",
    ]
    if m.cost_now is not None:
        share = (m.cost_now * len(lost) / spec.compute_units).quantize(CENT)
        reasons.append(
            f"the host pays for {spec.compute_units} {unit}s and can use {spec.compute_units - len(lost)}: "
            f"{usd(share)}/month for hardware it cannot use"
        )
    reasons.extend((_lost_and_left(m, lost), m.host_text, m.observed_text))
    advice = (
        "check the kernel log (dmesg | grep -i xid: Xid 79 is a GPU that fell off the bus) and nvidia-smi; then stop "
        "and start the host (a reboot keeps it on the same hardware; a stop and start moves it to healthy hardware) "
        "when its work allows, and ask AWS Support if the GPU is still missing after that"
    )
    if spec.instance_storage_gb:
        advice += f"; the stop wipes its {spec.instance_storage_gb:,} GB of instance store: copy what it holds first"
    if m.scarce:
        advice += f"; {spec.family} capacity is scarce, so the start can fail with InsufficientInstanceCapacity"
    return Draft(Finding.GPU_LOST, tuple(reasons), confidence=m.data_confidence, advice=advice)


def _lost_and_left(m: Measured, lost: list[str]) -> str:
    """What the lost GPUs did before they went, and what the others do: the lost ones' numbers are not folded into
    their siblings'."""
    unit = m.unit
    parts = []
    for label, devices in (
        ("before it went" if len(lost) == 1 else "before they went", [d for d in m.usage.devices if d.index in lost]),
        ("still reporting", [d for d in m.usage.devices if d.index not in lost]),
    ):
        measured = [d.utilization.p95 for d in devices if d.utilization is not None]
        if measured:
            which = f"{unit}{'s' if len(devices) > 1 else ''} {index_ranges([d.index for d in devices])}"
            parts.append(f"{label}, {which}: p95 {span(measured, pct)}")
    return "; ".join(parts)


# Asked in this order (registry.FINDING_RULES places this module's rules among the others').
RULES: tuple[Rule, ...] = (gpu_gone,)
