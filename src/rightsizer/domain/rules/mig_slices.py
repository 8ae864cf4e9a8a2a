"""GPUs in MIG mode (nvidia-smi reads utilization.gpu as [N/A]): a host whose GPUs all run in MIG mode is sized slice
by slice on DCGM's per-instance readings (a gate), and MIG GPUs beside GPUs that report have their slices' fit said
(an adjustment). The MIG profiles and the fitting are domain/mig.py's.
"""

from __future__ import annotations

from rightsizer.domain.facts.host import Facts
from rightsizer.domain.mig import SliceFit, fit_text, fits, mig_gpu, unsized
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.hosts import AcceleratorKind
from rightsizer.domain.rules.draft import Draft, has_reading, insufficient
from rightsizer.domain.signals import Signal
from rightsizer.domain.wording import index_ranges, plural


def mig_slices(facts: Facts) -> Draft | None:
    """GPUs in MIG mode (utilization.gpu [N/A]) whose GPU instances each publish DCGM's readings (agent/dcgm): the
    slices' load is the GPUs', and each slice is sized on its own, on its GPU's MIG profiles (domain/mig.py). A GPU
    without per-instance readings leaves the host to `utilization_missing`, which says what to publish."""
    spec, usage, policy = facts.spec, facts.usage, facts.policy
    if spec is None or usage is None or spec.accelerator_kind is not AcceleratorKind.NVIDIA:
        return None
    table = mig_gpu(spec)
    gpus = [d for d in usage.devices if d.slices or has_reading(d)]
    if table is None or not gpus or any(not d.slices or d.utilization is not None for d in gpus):
        return None
    slices = [(d.index, d.slices) for d in gpus]
    found = fits(slices, table, policy)
    not_sized = unsized(slices, found, spec.accelerator_model, policy)
    if not found:
        return insufficient(f"no MIG instance can be sized yet: {'; '.join(not_sized)}")
    reasons = (
        f"{spec.unit_name}s {index_ranges([d.index for d in gpus])} run in MIG mode (nvidia-smi reads utilization.gpu "
        "as [N/A]): their load is their GPU instances', as DCGM measures each, sized on the "
        f"{spec.accelerator_model}'s MIG profiles",
        *(fit_text(one) for one in found),
        *((f"not sized: {'; '.join(not_sized)}",) if not_sized else ()),
    )
    confident = not not_sized and all(
        f.usage.signal is Signal.SM_ACTIVE and f.usage.memory_used_peak_mib is not None for f in found
    )
    confidence = Confidence.HIGH if confident else Confidence.MEDIUM
    return _mig_draft(found, reasons, confidence)


def _mig_draft(found: list[SliceFit], reasons: tuple[str, ...], confidence: Confidence) -> Draft:
    """Slices their profile does not carry first (they are at risk), then slices a smaller profile carries (the GPU's
    compute slices they free can take more work), else the partition fits."""
    short = [one for one in found if one.saturated]
    if short:
        wanted = ", ".join(
            f"{one.usage.profile} on GPU {one.gpu} -> {one.smallest.name if one.smallest else 'a whole GPU'}"
            for one in short
        )
        return Draft(
            Finding.UNDERPROVISIONED,
            reasons,
            confidence=confidence,
            advice=f"give the MIG instances their load outgrows a larger profile ({wanted}): repartition the GPU "
            "(nvidia-smi mig -dci/-dgi, then -cgi/-cci) when its workloads can stop",
        )
    smaller = [one for one in found if one.smaller]
    if smaller:
        moves = ", ".join(
            f"{one.usage.profile} on GPU {one.gpu} -> {one.smallest.name}" for one in smaller if one.smallest
        )
        freed = sum(
            one.current.compute_slices - (one.smallest.compute_slices if one.smallest else 0) for one in smaller
        )
        return Draft(
            Finding.OVERPROVISIONED,
            reasons,
            confidence=confidence,
            advice=f"repartition the MIG instances to the smallest profile that carries each ({moves}): that frees "
            f"{plural(freed, 'compute slice')} for more workloads on these GPUs (or fewer GPUs)",
        )
    return Draft(Finding.OPTIMIZED, reasons, confidence=confidence)


def slices_beside(facts: Facts, draft: Draft) -> Draft:
    """GPUs in MIG mode beside GPUs that report utilization.gpu (MIG mode is set per GPU): the host is judged on the
    others, the MIG GPUs counted busy as any GPU without a reading is, and each of their slices' fit is said besides
    (`mig_slices` sizes a host whose GPUs all run in MIG mode)."""
    spec, usage = facts.spec, facts.usage
    if spec is None or usage is None or draft.finding in (Finding.EXCLUDED, Finding.INSUFFICIENT_DATA):
        return draft
    table = mig_gpu(spec)
    sliced = [d for d in usage.devices if d.slices and d.utilization is None]
    if table is None or not sliced or all(d.utilization is None for d in usage.devices):
        return draft
    found = fits([(d.index, d.slices) for d in sliced], table, facts.policy)
    for text in (fit_text(one) for one in found):
        draft = draft.noting(text)
    return draft
