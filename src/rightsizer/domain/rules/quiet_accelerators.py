"""Accelerators that do no work: an idle host (stop it), GPUs that hold memory and run no kernel, NeuronCores gone
silent while the host holds on (neuron-monitor stopped, not the work), and a host that works without its
accelerators (the work belongs on a non-GPU type).
"""

from __future__ import annotations

from dataclasses import replace

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.hosts import AcceleratorKind
from rightsizer.domain.models.money import ZERO
from rightsizer.domain.models.usage import AcceleratorData, RegimeKind
from rightsizer.domain.rules.draft import Draft, Rule, insufficient
from rightsizer.domain.rules.stopping import with_stop_risks
from rightsizer.domain.rules.video import video_unknown
from rightsizer.domain.sizing.memory import memory_reserved
from rightsizer.domain.sizing.units import memory_total
from rightsizer.domain.wording import gib, index_ranges, pct, usd


def neuron_monitor_silent(m: Measured) -> Draft | None:
    """Every NeuronCore went silent at once while the host holds on to its RAM or keeps working: a job that ends
    frees both, so neuron-monitor (or its pipe to CloudWatch) stopped. Reading that silence as idleness would stop a
    working host."""
    regime, usage, policy = m.usage.regime, m.usage, m.policy
    if m.spec.accelerator_kind is not AcceleratorKind.NEURON or regime is None:
        return None
    if regime.kind is not RegimeKind.WENT_QUIET or not usage.devices:
        return None
    if any(d.silent_share < 1.0 for d in usage.devices):
        return None  # a core still reports: neuron-monitor runs
    ram = usage.host_memory_peak_pct
    holds = ram is not None and ram >= policy.host_memory_in_use_pct
    if not (holds or m.host_busy):
        return None  # the host let go too: the job ended
    since = f"{regime.since:%Y-%m-%d %H:%M} UTC"
    still = f"still uses {ram:.0f}% of its RAM" if holds and ram is not None else f"keeps working ({m.host_text})"
    return insufficient(
        f"neuron-monitor has reported no NeuronCore since {since} while the host {still}: a job that ends frees its "
        "memory and its CPU, so neuron-monitor (or its CloudWatch pipe) has probably stopped. Restart it "
        "(neuron-monitor | neuron-monitor-cloudwatch.py); nothing is judged until it reports again"
    )


def held_unused(m: Measured) -> Draft | None:
    """GPUs that hold memory and ran no kernel in the window, on a host whose GPUs report one by one: idle in all but
    memory. The process holding them (a server nobody calls, a notebook that keeps its tensors) may still be wanted:
    the money is said, and what to check, but nothing is stopped on one click, and the work is not sent to a non-GPU
    type (there is none to size)."""
    view = m.view
    if not view.holding or m.accelerators_active or m.usage.accelerator_data is not AcceleratorData.PER_DEVICE:
        return None
    if m.spec.accelerator_kind is not AcceleratorKind.NVIDIA or not _still_held(m):
        return None
    unit, count = m.unit, m.spec.compute_units
    held = view.holding
    most = max(d.memory_used_peak_mib or 0.0 for d in held)
    one = len(held) == 1
    if len(held) == count:
        which = f"the {unit}" if one else f"all {count} {unit}s"
    else:
        which = f"{unit}{'' if one else 's'} {index_ranges([d.index for d in held])}"
    reasons = [
        f"{which} hold{'s' if one else ''} up to {gib(most)} of memory and ran no kernel in "
        f"{m.usage.accelerator_days:.1f} days: idle in all but memory (a model loaded that nobody calls, a notebook "
        "kernel that keeps its tensors)",
        m.host_text,
        m.observed_text,
    ]
    if any(memory_reserved(d, m.spec, m.policy) for d in held):
        reasons.append(
            "the memory is flat near the top of memory.total: held whole, as frameworks reserve it at start (vLLM, "
            "TensorRT-LLM, JAX, TensorFlow, PyTorch's caching allocator)"
        )
    acc = m.accelerator
    if m.host_busy and acc is not None and acc.video_decoders:
        reasons.append(
            f"the host works ({m.host_text}) while its {unit}s run no kernel: the process holding them may decode "
            "video on NVDEC, which no Linux metric shows"
        )
    if m.cost_now is not None:
        reasons.append(
            f"holding {'it' if one else 'them'} costs {usd(m.cost_now)}/month: what stopping the host saves if nothing "
            "needs it"
        )
    draft = Draft(
        Finding.HELD_UNUSED,
        tuple(reasons),
        cost_after=ZERO if m.cost_now is not None else None,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        advice="check what holds the memory (nvidia-smi lists each process and its memory) and whether anything still "
        "calls it (the service's request logs, its load balancer or endpoint, the notebook's last cell run); if "
        "nothing does, shut the process down and stop the host (a stop keeps its EBS volumes)",
    )
    draft = with_stop_risks(m, draft)
    return draft.noting(m.video_unknown_text) if m.video_unknown else draft


def _still_held(m: Measured) -> bool:
    """The memory is still held in the window's last days (a process that let go is an idle host, not a held one)."""
    policy, spec = m.policy, m.spec
    for device in m.view.holding:
        recent = device.memory_recent_peak_mib
        if recent is None or recent / memory_total(device, spec) * 100 >= policy.in_use_memory_pct:
            return True
    return False


def idle(m: Measured) -> Draft | None:
    """No unit ever worked and the host itself is quiet: the whole cost is waste."""
    if m.accelerators_active or m.host_busy:
        return None
    loaded = _loaded_text(m)
    draft = Draft(
        Finding.IDLE,
        (f"{_quiet_units_text(m)}; {m.host_text}", m.observed_text, *([loaded] if loaded else [])),
        cost_after=ZERO if m.cost_now is not None else None,
        confidence=m.data_confidence,
        actionable=True,
        advice="stop the host (one click: a guarded stop that never terminates and keeps its EBS volumes), or "
        "terminate it by hand if nobody claims it (snapshot its volumes first)",
    )
    draft = with_stop_risks(m, draft)
    held = m.host_memory_held
    if held is not None:
        ram = m.spec.memory_mib * held / 100
        draft = draft.risking(
            f"host RAM is {held:.0f}% used ({gib(ram)} of {gib(m.spec.memory_mib)}): a process holds state (a cache, "
            "an index, a loaded model) that a stop loses: check that nothing calls it",
            f"host RAM is {held:.0f}% used: what a process holds in it is lost when it stops",
        )
    if m.cpu_p95 is None or loaded or held is not None:
        draft = draft.capped(Confidence.MEDIUM)
    if m.cpu_p95 is None:
        # Quiet GPUs on a host whose own work nobody measured: a CPU service would look just like this.
        draft = replace(
            draft.noting(
                "the host's CPU was not measured (no AWS/EC2 CPUUtilization in the window): whether it serves "
                "anything of its own is unknown"
            ),
            actionable=False,
            held_back="host CPU not measured: check what runs on it first",
            advice="check what runs on the host (its CPU was not measured), then stop it if nothing does",
        )
    return video_unknown(m, draft)


def unused_accelerator(m: Measured) -> Draft | None:
    """The accelerators do nothing while the host works: the work belongs on a non-GPU instance."""
    if m.accelerators_active or not m.host_busy:
        return None
    reasons = (
        f"{_quiet_units_text(m)} while the host works ({m.host_text}): the work here does not use the accelerator",
        m.observed_text,
    )
    advice = (
        "move the work to a non-GPU instance type sized for its CPU, memory and network, then stop this host "
        "(savings depend on the type chosen)"
    )
    if m.video_unknown:
        # A transcoder (NVENC) reads ~0 % utilization.gpu while its CPU and network work: the same picture.
        return Draft(
            Finding.NOT_GPU_BOUND,
            (*reasons, m.video_unknown_text),
            confidence=Confidence.LOW,
            advice=f"if it encodes no video, {advice}; if it does, keep it on a GPU with NVENC",
        )
    acc = m.accelerator
    opened = _context_open(m)
    if opened is not None and not m.view.holding:
        # A process has the GPU open but runs no kernels: NVDEC decoding (no Linux metric shows it) or CUDA set up
        # for nothing. Moving off GPUs is likely right, but not certain.
        return Draft(
            Finding.NOT_GPU_BOUND,
            (*reasons, opened),
            confidence=m.data_confidence.at_most(Confidence.MEDIUM),
            advice=f"if nothing on the GPU is used, {advice}",
        )
    if m.view.holding and acc is not None and acc.video_decoders:
        # A process holds GPU memory while the SMs are quiet: video decoding (NVDEC, which no Linux metric shows)
        # or a model nobody calls. Either way the GPU may be needed.
        which = index_ranges([d.index for d in m.view.holding])
        return Draft(
            Finding.NOT_GPU_BOUND,
            (
                *reasons,
                f"{m.unit}s {which} hold memory for a process while their SMs are quiet: it may decode video on NVDEC "
                "(no metric on Linux shows it) or hold a model nobody calls; check what runs on them before moving",
            ),
            confidence=Confidence.LOW,
            advice=f"if nothing on the GPU is used, {advice}",
        )
    return Draft(Finding.NOT_GPU_BOUND, reasons, confidence=m.data_confidence, advice=advice)


def _quiet_units_text(m: Measured) -> str:
    policy = m.policy
    peak = max((d.utilization_peak or 0.0) for d in m.usage.devices)
    count = m.spec.compute_units
    which = f"the {m.unit} is" if count == 1 else f"all {count} {m.unit}s are"
    return (
        f"{which} unused: p99 below {policy.idle_util_pct:g}% and no hour above "
        f"{policy.activity_peak_pct:g}% (peak {pct(peak)})"
    )


def _loaded_text(m: Measured) -> str | None:
    """Why an idle host may still be someone's: a model loaded in GPU memory, or NeuronCores reporting
    (neuron-monitor reports only cores an application holds)."""
    if m.view.holding:
        most = max(d.memory_used_peak_mib or 0.0 for d in m.view.holding)
        which = index_ranges([d.index for d in m.view.holding])
        return (
            f"{m.unit}s {which} hold up to {gib(most)} (a model is loaded but gets no work): "
            "check that nothing calls it"
        )
    held = [d.index for d in m.usage.devices if d.silent_share < 1.0]  # reported, so an application holds them
    if m.spec.accelerator_kind is AcceleratorKind.NEURON and held:
        return (
            f"NeuronCores {index_ranges(held)} are held by an application that gets no work: check that nothing "
            "calls it"
        )
    return None


def _context_open(m: Measured) -> str | None:
    """What a process that opened the GPUs without running kernels may be doing, when one did (None: none did)."""
    peak = max((d.memory_used_peak_mib or 0.0 for d in m.usage.devices), default=0.0)
    if peak < m.policy.gpu_context_mib:
        return None
    acc = m.accelerator
    decoders = acc is not None and acc.video_decoders > 0
    return (
        f"a process holds up to {gib(peak)} of {m.unit} memory while the SMs are quiet: the GPU is open"
        + (", perhaps to decode video on NVDEC (no metric on Linux shows it)" if decoders else "")
        + "; check what it is (nvidia-smi lists it) before moving off GPUs"
    )


# Asked in this order (registry.FINDING_RULES places this module's rules among the others').
RULES: tuple[Rule, ...] = (
    neuron_monitor_silent,
    held_unused,
    idle,
    unused_accelerator,
)
