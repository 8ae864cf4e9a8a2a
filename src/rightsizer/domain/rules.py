"""The analyzer's rules, one small function each, in the order they are asked.

- `GATES` look at the host alone (exclusions, data sufficiency) and return a draft or nothing.
- `FINDING_RULES` look at measured usage; the first that returns a draft decides. `optimized` always answers,
  but only once every rule before it had the data to compare.
- `ADJUSTMENTS` then refine whatever was decided: hosts someone else owns (Auto Scaling, Spot), types
  no longer offered, unpriced types.

Adding a finding means one rule here and its entry in domain/findings.py (the `Finding` member and its `FindingSpec`:
label, attention, action), plus its row in docs/how-it-decides.md (a test checks it), then `make schema` (the JSON
schema's enum is generated).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.commitments import CapacityKind, Change, net_savings
from rightsizer.domain.facts import Facts, Measured, regime_change_text, regime_text
from rightsizer.domain.findings import advised_action
from rightsizer.domain.guards import GUARDS, Gap, Source
from rightsizer.domain.mig import SliceFit, fit_text, fits, mig_gpu, unsized
from rightsizer.domain.models import (
    CENT,
    ZERO,
    AcceleratorData,
    AcceleratorKind,
    Alternative,
    Confidence,
    DeviceUsage,
    Finding,
    InstanceTypeSpec,
    OutOfRange,
    RegimeKind,
    monthly,
)
from rightsizer.domain.platforms import LINUX
from rightsizer.domain.schedule import WeeklyPattern
from rightsizer.domain.schedule_plan import (
    BOOT_LEAD_MINUTES,
    STOP_GRACE_MINUTES,
    NoSchedulePair,
    SchedulePlan,
    busy_runs,
    one_pair_fits,
    pair_stopped_hours,
    schedule_plan,
    stopped_hours,
)
from rightsizer.domain.signals import KERNEL_TIME, Signal
from rightsizer.domain.sizing import (
    candidates,
    fewest_units,
    keep_today,
    memory_reserved,
    memory_total,
    neuron_alternatives,
    out_of_memory_risk,
    resize_reasons,
    vcpus_needed,
)
from rightsizer.domain.usage import HOURS_PER_WEEK
from rightsizer.domain.wording import gib, index_ranges, pct, plural, span, usd


@dataclass(frozen=True)
class Draft:
    """A finding being assembled; frozen into a Recommendation at the end."""

    finding: Finding
    reasons: tuple[str, ...]
    target: InstanceTypeSpec | None = None
    cost_after: Decimal | None = None  # None: the host keeps costing what it costs now
    confidence: Confidence = Confidence.HIGH
    actionable: bool = False
    alternatives: tuple[Alternative, ...] = ()
    pattern: WeeklyPattern | None = None
    advice: str | None = None  # what to do, said last; someone who owns the host elsewhere replaces it
    held_back: str | None = None  # why a target is not one click, in a few words for tables
    net_savings: Decimal | None = None  # None: the list-price savings are what the bill saves
    would_be: Finding | None = None  # owned elsewhere: the finding its usage gave before `excluded` replaced it
    risks: tuple[str, ...] = ()  # what carrying the advice out risks besides downtime, briefly (Recommendation.risks)
    plan: SchedulePlan | None = None  # a schedule's pair, as approving it creates it (Evidence.schedule_plan)

    def noting(self, reason: str, *, first: bool = False) -> Draft:
        return replace(self, reasons=(reason, *self.reasons) if first else (*self.reasons, reason))

    def risking(self, reason: str, risk: str) -> Draft:
        """A risk of acting on the advice: explained among the reasons, and said briefly where people approve it."""
        return replace(self.noting(reason), risks=(*self.risks, risk))

    def capped(self, level: Confidence) -> Draft:
        return replace(self, confidence=self.confidence.at_most(level))


Gate = Callable[[Facts], Draft | None]
Rule = Callable[[Measured], Draft | None]
Adjustment = Callable[[Facts, Draft], Draft]


# =============================================================================================
# Gates: hosts that are reported but not analysed, and hosts without enough data.


def opted_out(facts: Facts) -> Draft | None:
    tag = facts.policy.opt_out_tag
    if tag not in facts.instance.tags:
        return None
    value = facts.instance.tags[tag]
    return Draft(Finding.EXCLUDED, (f"opted out by tag {tag}" + (f"={value!r}" if value else ""),))


def reserved_capacity(facts: Facts) -> Draft | None:
    lifecycle = facts.instance.lifecycle
    if lifecycle not in ("capacity-block", "scheduled"):
        return None
    return Draft(Finding.EXCLUDED, (f"{lifecycle} instance: capacity is reserved for this type",))


def not_running(facts: Facts) -> Draft | None:
    if facts.instance.is_running:
        return None
    state = facts.instance.state
    return Draft(Finding.EXCLUDED, (f"{state}: reported, not resized (a stopped host costs no compute)",))


def instance_store_root(facts: Facts) -> Draft | None:
    if facts.instance.root_device_type == "ebs":
        return None
    return Draft(Finding.EXCLUDED, ("instance-store root volume: the host cannot be stopped, so not resized",))


def _insufficient(*reasons: str) -> Draft:
    return Draft(Finding.INSUFFICIENT_DATA, reasons, confidence=Confidence.LOW)


def unknown_type(facts: Facts) -> Draft | None:
    if facts.spec is not None:
        return None
    return _insufficient(f"{facts.instance.instance_type} is not in the instance catalog")


def unmonitored_accelerator(facts: Facts) -> Draft | None:
    spec = facts.spec
    if spec is None or spec.accelerator_kind is not AcceleratorKind.UNMONITORED:
        return None
    name = spec.accelerator_model or "this accelerator"
    return _insufficient(f"{name} publishes no utilisation metrics the bot can read")


def impossible_data(facts: Facts) -> Draft | None:
    """Readings no real host can give: a percentage outside 0-100 %, or more unit series than the type has units (a
    resized host's old series with no InstanceType dimension, another host's under this id). They are data errors:
    judged, they would read as an unused GPU ('peak -1 %') or as three busy GPUs on a host with one."""
    spec, usage = facts.spec, facts.usage
    if spec is None or usage is None:
        return None
    unit = spec.unit_name
    errors = [_out_of_range_text(error, unit) for error in usage.out_of_range]
    seen = [d.index for d in usage.devices if _has_reading(d)]
    if usage.accelerator_data is AcceleratorData.PER_DEVICE and len(seen) > spec.compute_units:
        errors.append(
            f"{len(seen)} {unit} series ({unit}s {index_ranges(seen)}) for a {spec.instance_type}, which has "
            f"{spec.compute_units} {unit}{'s' if spec.compute_units != 1 else ''}"
        )
    if not errors:
        return None
    return _insufficient(
        f"data error: {'; '.join(errors)}. An agent bug, a unit mix-up or another host's series under this "
        "instance's id: nothing is judged on readings no host can give (check the agent's configuration, "
        "agent/README.md)"
    )


_SERIES_NAMES = {"cpu": "the host's CPUUtilization", "host_memory": "the host's mem_used_percent"}


def _out_of_range_text(error: OutOfRange, unit: str) -> str:
    name = _SERIES_NAMES.get(error.series, f"{unit} {error.device} utilisation")
    return f"{name} reads {error.low:g} to {error.high:g} %, outside 0-100 %"


def _has_reading(device: DeviceUsage) -> bool:
    return any(v is not None for v in (device.utilization, device.utilization_peak, device.memory_used_peak_mib))


def no_accelerator_metrics(facts: Facts) -> Draft | None:
    spec, usage = facts.spec, facts.usage
    if spec is None or (usage is not None and usage.accelerator_data is not AcceleratorData.NONE):
        return None
    days = facts.policy.lookback_days
    lead = f"no {spec.unit_name} metrics in the last {days} days"
    if spec.accelerator_kind is AcceleratorKind.NEURON:
        return _insufficient(f"{lead}: install neuron-monitor (NeuronCore utilisation) (agent/README.md)")
    if facts.instance.billing.windows:
        return _insufficient(
            f"{lead}: the CloudWatch agent's nvidia_gpu section runs on Linux only, so on Windows nothing publishes "
            "GPU use by default; publish nvidia-smi's readings under the agent's names (agent/windows/README.md) "
            "before anything is judged"
        )
    return _insufficient(f"{lead}: install the CloudWatch agent's nvidia_gpu section (agent/README.md)")


def utilization_missing(facts: Facts) -> Draft | None:
    """GPUs that publish memory (or are listed) but no utilisation at all: the load cannot be sized, and the
    reason says which metric is missing and why, instead of "0.0 days of metrics"."""
    spec, usage = facts.spec, facts.usage
    if spec is None or usage is None or not usage.devices or spec.accelerator_kind is not AcceleratorKind.NVIDIA:
        return None
    if any(d.utilization is not None or d.utilization_peak is not None for d in usage.devices):
        return None
    published = "GPU memory is published" if any(d.memory_used_peak_mib is not None for d in usage.devices) else ""
    lead = f"{published} but" if published else "the GPUs are listed but"
    return _insufficient(
        f"{lead} nvidia_smi_utilization_gpu has no data in the last {facts.policy.lookback_days} days: nvidia-smi "
        "reports utilization.gpu as [N/A] on GPUs in MIG mode (partitioned into GPU instances), or the agent's "
        "nvidia_gpu section does not list utilization_gpu. Without the load nothing can be sized: memory alone "
        "cannot tell a busy GPU from an idle one (with MIG, read each GPU instance's use with DCGM's profiling "
        "metrics; otherwise add utilization_gpu, see agent/README.md)"
    )


def mig_slices(facts: Facts) -> Draft | None:
    """GPUs in MIG mode (utilization.gpu [N/A]) whose GPU instances each publish DCGM's readings (agent/dcgm): the
    slices' load is the GPUs', and each slice is sized on its own, on its GPU's MIG profiles (domain/mig.py). A GPU
    without per-instance readings leaves the host to `utilization_missing`, which says what to publish."""
    spec, usage, policy = facts.spec, facts.usage, facts.policy
    if spec is None or usage is None or spec.accelerator_kind is not AcceleratorKind.NVIDIA:
        return None
    table = mig_gpu(spec)
    gpus = [d for d in usage.devices if d.slices or _has_reading(d)]
    if table is None or not gpus or any(not d.slices or d.utilization is not None for d in gpus):
        return None
    slices = [(d.index, d.slices) for d in gpus]
    found = fits(slices, table, policy)
    not_sized = unsized(slices, found, spec.accelerator_model, policy)
    if not found:
        return _insufficient(f"no MIG instance can be sized yet: {'; '.join(not_sized)}")
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


def short_history(facts: Facts) -> Draft | None:
    spec, usage, policy = facts.spec, facts.usage, facts.policy
    if spec is None or usage is None or usage.accelerator_days >= policy.min_days:
        return None
    if usage.regime is not None:  # the window is longer, but the work it would judge is this young
        return _insufficient(
            f"{regime_change_text(usage, spec.unit_name)}: only {usage.accelerator_days:.1f} days of it so far; at "
            f"least {policy.min_days:g} are needed to judge it"
        )
    return _insufficient(
        f"only {usage.accelerator_days:.1f} days of {spec.unit_name} metrics; at least {policy.min_days:g} are needed"
    )


def thin_coverage(facts: Facts) -> Draft | None:
    spec, usage, policy = facts.spec, facts.usage, facts.policy
    if spec is None or usage is None or usage.accelerator_coverage >= policy.min_coverage:
        return None
    return _insufficient(
        f"{spec.unit_name} metrics cover only {usage.accelerator_coverage:.0%} of the window "
        f"(at least {policy.min_coverage:.0%} is needed): is the agent running all the time?"
    )


GATES: tuple[Gate, ...] = (
    opted_out,
    reserved_capacity,
    not_running,
    instance_store_root,
    unknown_type,
    unmonitored_accelerator,
    impossible_data,
    no_accelerator_metrics,
    mig_slices,
    utilization_missing,
    short_history,
    thin_coverage,
)


# =============================================================================================
# Findings from measured usage.


def _with_stop_risks(m: Measured, draft: Draft) -> Draft:
    """What stopping this host costs besides downtime, in the reasons and, briefly, in its risks. A type no longer
    offered is `no_longer_offered`'s to say (for every finding); a scarce type's restart is confirmed apart, where no
    capacity reservation holds it (services.approvals.needs_capacity_confirmation)."""
    draft = _instance_store_risk(m.spec, draft)
    if m.scarce:
        draft = draft.noting(
            f"{m.spec.family} capacity is scarce: once stopped, a start can fail with InsufficientInstanceCapacity "
            "(a Capacity Reservation or Capacity Block keeps it available)"
        )
    return draft


def _instance_store_risk(spec: InstanceTypeSpec, draft: Draft) -> Draft:
    if not spec.instance_storage_gb:
        return draft
    return draft.risking(
        f"its {spec.instance_storage_gb:,} GB of instance store (local NVMe) is wiped on every stop: keep data on EBS "
        "or S3",
        f"its {spec.instance_storage_gb:,} GB instance store (local NVMe) is wiped when it stops",
    )


def _may_not_restart(m: Measured) -> bool:
    return m.scarce or m.facts.catalog.is_offered(m.spec.instance_type) is False


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
    draft = _with_stop_risks(m, draft)
    return draft.noting(m.video_unknown_text) if m.video_unknown else draft


def _still_held(m: Measured) -> bool:
    """The memory is still held in the window's last days (a process that let go is an idle host, not a held one)."""
    policy, spec = m.policy, m.spec
    for device in m.view.holding:
        recent = device.memory_recent_peak_mib
        if recent is None or recent / memory_total(device, spec) * 100 >= policy.in_use_memory_pct:
            return True
    return False


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
    return _insufficient(
        f"neuron-monitor has reported no NeuronCore since {since} while the host {still}: a job that ends frees its "
        "memory and its CPU, so neuron-monitor (or its CloudWatch pipe) has probably stopped. Restart it "
        "(neuron-monitor | neuron-monitor-cloudwatch.py); nothing is judged until it reports again"
    )


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
    draft = _with_stop_risks(m, draft)
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
    return _video_unknown(m, draft)


_VIDEO_HELD_BACK = "video encoders not measured: publish the agent's encoder stats first"


def _video_unknown(m: Measured, draft: Draft) -> Draft:
    """Quiet SMs on GPUs whose video encoders nobody measured: said, and no one click that removes them."""
    if not m.video_unknown:
        return draft
    draft = draft.noting(m.video_unknown_text).capped(Confidence.MEDIUM)
    if not draft.actionable:
        return draft
    advice = "publish the encoder stats; if the GPUs still do no work, " + {
        Finding.IDLE: "stop the host (a stop never terminates and keeps its EBS volumes)",
        Finding.SCHEDULABLE: "stop it outside the busy hours",
    }.get(draft.finding, "approve the change")
    return replace(draft, actionable=False, held_back=_VIDEO_HELD_BACK, advice=advice)


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


def cpu_bound(m: Measured) -> Draft | None:
    """The accelerator waits for a saturated CPU: more vCPUs help, a smaller accelerator would not."""
    cpu, policy, spec, unit = m.cpu_p95, m.policy, m.spec, m.unit
    if cpu is None or cpu < policy.cpu_saturated_pct or m.demand.unit_util_p95 >= policy.gpu_light_pct:
        return None
    # The accelerators in use and the RAM stay; only the vCPUs must grow.
    more_cpu = replace(
        keep_today(m.demand, spec, policy), vcpus=max(vcpus_needed(spec.vcpus, m.usage, policy), spec.vcpus + 1)
    )
    reasons = [
        f"CPU-bound: CPU p95 {pct(cpu)} while the busiest {unit} p95 is only {pct(m.demand.unit_util_p95)}: "
        "more vCPUs (data loading, preprocessing) will raise accelerator use; a smaller accelerator would not",
        m.units_text,
        m.host_text,
        m.observed_text,
        *m.demand_notes,
    ]
    facts = m.facts
    best = next(candidates(m.instance, spec, facts.catalog, facts.prices, more_cpu, same_model_only=True), None)
    # A saturated CPU hides how much more it needs: a type with more vCPUs than today that costs less (it sheds GPUs
    # nobody uses) beats one that meets the 70 % projection of a censored reading at a higher price.
    cost = facts.list_cost
    if best is not None and cost is not None and best.monthly > cost:
        more = replace(more_cpu, vcpus=spec.vcpus + 1)
        cheaper = next(
            candidates(m.instance, spec, facts.catalog, facts.prices, more, same_model_only=True, max_monthly=cost),
            None,
        )
        if cheaper is not None:
            best, more_cpu = cheaper, more
            reasons.append(
                f"{cheaper.spec.instance_type} has more vCPUs than today ({cheaper.spec.vcpus} of the "
                f"{vcpus_needed(spec.vcpus, m.usage, policy)} a 70 % CPU would take) and costs less: the CPU is "
                "saturated, so its real need is unknown; measure again after the move"
            )
    if best is None:
        reasons.append(f"no offered {spec.accelerator_model} type with more vCPUs was found")
        return Draft(Finding.NOT_GPU_BOUND, tuple(reasons), confidence=m.data_confidence)
    reasons.extend(resize_reasons(spec, best, more_cpu, policy))
    draft = Draft(
        Finding.NOT_GPU_BOUND,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM if best.cross_family else Confidence.HIGH),
        actionable=True,
    )
    spinning = _cpu_pinned_whatever_the_load(m)
    if spinning is None or cost is None or best.monthly <= cost:
        return draft
    return replace(
        draft.noting(spinning).capped(Confidence.LOW),
        actionable=False,
        held_back="a CPU pinned whatever the load may be spinning, not short of vCPUs: check before paying more",
    )


def _cpu_pinned_whatever_the_load(m: Measured) -> str | None:
    """A CPU saturated in every hour of the week while the accelerator load rises and falls does not follow the
    work: threads that spin while they wait (busy polling) read 100 % on any number of vCPUs."""
    cpu = [v for v in m.usage.hourly_cpu_mean if v is not None]
    load = [v for v in m.usage.hourly_accelerator_peak if v is not None]
    if len(cpu) < len(m.usage.hourly_cpu_mean) // 2 or not load:
        return None
    low, high = min(load), max(load)
    # The load must really swing (its busiest hours at least twice its quietest): a steady loader-bound job keeps
    # both flat, and there the CPU is the bottleneck.
    if min(cpu) < m.policy.cpu_saturated_pct or high < 2 * low or high - low < m.policy.activity_peak_pct:
        return None
    return (
        f"the CPU is at {pct(min(cpu))} or more in every hour of the week while the {m.unit} load moves between "
        f"{pct(low)} and {pct(high)}: a CPU that does not follow the work is often threads that spin while they "
        "wait (busy polling), which more vCPUs would not relieve; check what burns it (top, perf) before paying more"
    )


def _no_target(m: Measured, finding: Finding, reasons: list[str], fallback: str) -> Draft:
    reasons.append(m.comparison_gap or fallback)
    return Draft(finding, tuple(reasons), confidence=m.data_confidence.at_most(Confidence.MEDIUM))


def out_of_memory(m: Measured) -> Draft | None:
    """A working set that follows the load up to nearly all of the GPU's memory: a real OOM risk."""
    spec, policy, unit = m.spec, m.policy, m.unit
    at_risk = [d for d in m.view.busy if out_of_memory_risk(d, spec, policy)]
    if not at_risk:
        return None
    worst = max(at_risk, key=lambda d: d.memory_used_peak_mib or 0.0)
    peak = worst.memory_used_peak_mib or 0.0
    total = memory_total(worst, spec)
    need = peak * policy.memory_headroom
    bigger = replace(
        keep_today(m.demand, spec, policy),
        memory_per_unit_mib=need,
        memory_measured=True,
        memory_basis=f"peak x {policy.memory_headroom:g} ({gib(need)})",
    )
    reasons = [
        f"{unit} {index_ranges([d.index for d in at_risk])} memory rises with the load (correlation "
        f"{worst.memory_load_correlation or 0:.2f}) up to {gib(peak)} of {gib(total)} "
        f"({peak / total:.0%} of memory.total): out-of-memory risk",
        m.units_text,
        m.host_text,
        m.observed_text,
        "a paid upgrade for memory alone: confirm out-of-memory errors (e.g. CUDA OOM in the logs) before approving",
    ]
    fitting = candidates(m.instance, spec, m.facts.catalog, m.facts.prices, bigger)
    best = next(iter(fewest_units(c for c in fitting if c.spec.memory_per_unit_mib > spec.memory_per_unit_mib)), None)
    if m.demand.graphics:
        reasons.insert(1, m.graphics_text)
    if best is None:
        return _no_target(m, Finding.UNDERPROVISIONED, reasons, _nothing_larger(m, need))
    reasons.extend(resize_reasons(spec, best, bigger, policy))
    return Draft(
        Finding.UNDERPROVISIONED,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),  # memory alone: never high
        actionable=True,
    )


def _nothing_larger(m: Measured, need: float) -> str:
    """Why no type with more memory fits. A model can be sharded over more GPUs; a renderer's scene cannot: it must fit
    one GPU's memory, so a graphics host is told the most graphics memory on offer and what else fits."""
    if not m.demand.graphics:
        return "no larger offered type fits: consider sharding"
    graphics = [
        target
        for target in m.facts.catalog.resize_targets(m.spec.accelerator_kind)
        if (acc := m.facts.catalog.accelerator(target)) is not None and acc.graphics
    ]
    most = max(graphics, key=lambda target: target.memory_per_unit_mib, default=None)
    largest = (
        f"{gib(most.memory_per_unit_mib)} per GPU ({most.accelerator_model}, e.g. {most.instance_type})" if most else ""
    )
    if most is not None and most.memory_per_unit_mib >= need:
        return (
            f"the graphics GPU with most memory offered here has {largest}, but no such type also carries the rest "
            "of the host's work: a renderer's scene must fit one GPU's memory (it does not shard across GPUs like a "
            "model), so reduce what it loads (texture sizes, instancing, out-of-core rendering) or split the scene"
        )
    have = f"the most any graphics GPU offered here has is {largest}" if most else "no graphics GPU is offered here"
    return (
        f"no graphics-capable type has the {gib(need)} per GPU this scene needs: {have}. A renderer's scene must fit "
        "one GPU's memory (it does not shard across GPUs like a model): reduce what it loads (texture sizes, "
        "instancing, out-of-core rendering) or split the scene; A100 and H100 have more memory but run no graphics"
    )


def _kernel_median(m: Measured) -> float | None:
    """The busiest unit's median kernel time when it reads pinned (None: it does not)."""
    medians = [d.utilization.p50 for d in m.view.busy if d.utilization is not None]
    top = max(medians, default=None)
    return top if top is not None and top >= m.policy.saturated_util_pct else None


def _pinned_median(m: Measured) -> float | None:
    """The busiest unit's median load when it is saturated: on DCGM's SM active where the GPUs publish it (kernel time
    reads 100 % while most SMs idle), else on kernel time."""
    compute = m.loads[0]
    if compute.measured:
        return compute.p50 if compute.p50 >= m.policy.saturated_sm_pct else None
    return _kernel_median(m)


def _pinned_text(m: Measured, median: float) -> str:
    compute = m.loads[0]
    busy = (
        f"{compute.label} median {pct(median)} (DCGM): its SMs are saturated, not only busy"
        if compute.measured
        else f"median utilisation {pct(median)}: busy nearly all the time"
    )
    return (
        f"{m.unit} {busy}. That is good use of the hardware; a faster {m.unit} only pays if the work is too slow "
        "(queueing, missed deadlines)"
    )


def _kernel_time_only(m: Measured) -> str | None:
    """Why pinned kernel time alone does not prove a saturated GPU, and what would (None: DCGM measured the SMs, or the
    accelerator has no DCGM)."""
    if m.loads[0].measured or m.spec.accelerator_kind is not AcceleratorKind.NVIDIA:
        return None
    return (
        f"{KERNEL_TIME} counts a {m.unit} busy while any kernel runs, however few of its SMs work: publish DCGM's SM "
        f"active (agent/dcgm) to tell a saturated {m.unit} from one waiting between small kernels before paying for a "
        "faster one"
    )


def pinned(m: Measured) -> Draft | None:
    """Busy nearly all the time: well used; a faster accelerator is advice, never a one-click upgrade.
    (When idle units make a cheaper type possible, that saving answers first and names this.)"""
    median = _pinned_median(m)
    if median is None or m.downsize is not None:
        return None
    spec, policy, demand = m.spec, m.policy, m.demand
    faster = replace(
        keep_today(demand, spec, policy),
        memory_per_unit_mib=max(demand.memory_per_unit_mib, spec.memory_per_unit_mib),
        memory_basis=f"today's {gib(spec.memory_per_unit_mib)}",
    )
    reasons = [_pinned_text(m, median), m.units_text, m.host_text, m.observed_text]
    if (blind := _kernel_time_only(m)) is not None:
        reasons.append(blind)
    fitting = candidates(m.instance, spec, m.facts.catalog, m.facts.prices, faster)
    best = next(iter(fewest_units(c for c in fitting if c.projected_util < demand.unit_util_p95)), None)
    if best is None:
        fallback = f"no faster offered type fits: consider spreading the work over more {m.unit}s"
        return _no_target(m, Finding.UNDERPROVISIONED, reasons, fallback)
    reasons.extend(resize_reasons(spec, best, faster, policy))
    return Draft(
        Finding.UNDERPROVISIONED,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        held_back="a faster accelerator is advice: approve a resize only if the work is too slow",
    )


@dataclass(frozen=True)
class Pair:
    """The stop/start pair approving a schedule creates (None: no single pair in the team's zone), and the hours a
    week it keeps the host stopped: what the advice prices."""

    plan: SchedulePlan | None
    stopped_hours: float


def _pair(m: Measured, pattern: WeeklyPattern) -> Pair:
    """The pair in the zone the approval writes it in (the team's, Policy.time_zones), at the window's end."""
    windows = busy_runs(pattern.busy)
    zone = m.policy.time_zones.of(m.instance.tags.get(m.policy.team_tag, ""))
    try:
        at = m.usage.window_end
        return Pair(schedule_plan(windows, zone, at), pair_stopped_hours(windows, zone, at))
    except NoSchedulePair:
        return Pair(None, stopped_hours(windows))  # the least any zone's pair stops it


# GPUs that partition into MIG instances (Multi-Instance GPU): several small workloads each get a slice.
_MIG = frozenset({"A100", "H100", "H200", "B200", "A30"})


def busy_not_saturated(m: Measured) -> Draft | None:
    """Kernel time reads pinned while DCGM's SM active shows most SMs waiting: the GPU is occupied, not used. A smaller
    GPU that carries what the SMs do answers first (`overprovisioned`, sized on the SMs); without one, the advice is how
    to use the GPU it pays for."""
    compute, kernel = m.loads[0], _kernel_median(m)
    if not compute.measured or kernel is None or compute.p95 >= m.policy.underused_sm_pct or m.downsize is not None:
        return None
    unit = m.unit
    mig = f", or MIG slices of the {m.spec.accelerator_model}" if m.spec.accelerator_model in _MIG else ""
    reasons = (
        f"{unit} {compute.label} p95 {pct(compute.p95)} (DCGM) while {KERNEL_TIME} reads a median of {pct(kernel)}: "
        f"kernels keep the {unit} occupied all the time, but most of its SMs wait (small batches, one request at a "
        "time, kernel launches or the CPU between kernels)",
        *([m.shortfalls] if m.shortfalls else []),
        m.units_text,
        m.host_text,
        m.observed_text,
        *m.demand_notes,
    )
    return Draft(
        Finding.OVERPROVISIONED,
        reasons,
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        advice=f"use the {unit} it pays for before buying more: batch requests (larger or dynamic batches in the model "
        f"server), run several workloads on it (CUDA streams, MPS{mig}), or move the work to a smaller {unit} once one "
        "carries what its SMs really do",
    )


def _schedule_saving(m: Measured, pattern: WeeklyPattern) -> Decimal | None:
    """On the full-time basis the rules price in (see analyzer.part_time): the idle hours are hours the host ran,
    so on a host that runs part of the time they are a larger share of what it costs."""
    if m.cost_now is None:
        return None
    # The stopped hours, not the idle ones: the pair starts early for the boot and stops late for a long run.
    share = min(1.0, _pair(m, pattern).stopped_hours / HOURS_PER_WEEK / m.facts.running_share)
    return (m.cost_now * Decimal(str(share))).quantize(CENT)


def _resize_saving(m: Measured) -> Decimal | None:
    if m.downsize is None or m.facts.list_cost is None:
        return None
    return m.facts.list_cost - m.downsize.monthly


def _pattern_confidence(m: Measured, pattern: WeeklyPattern) -> tuple[Confidence, str | None]:
    """How far a weekly pattern can be trusted, and why not more."""
    if pattern.irregular:
        return Confidence.LOW, (
            "the busy hours differ from week to week: no fixed schedule fits; start the host when the work "
            "needs it (or run the work as a batch job) instead of keeping it up"
        )
    if pattern.repeats:
        return m.data_confidence, None
    if pattern.weeks_observed < 2:
        why = "the pattern was seen in one week only"
    elif pattern.recurring_share is None:
        why = "whether the busy hours repeat every week could not be checked (no hourly history)"
    else:
        why = f"only {pattern.recurring_share:.0%} of the busy hours repeat in both weeks"
    return m.data_confidence.at_most(Confidence.MEDIUM), why


def schedulable(m: Measured) -> Draft | None:
    """Busy only some hours of the week: stop the host outside them (when that beats any resize)."""
    pattern = m.pattern
    if pattern is None:
        return None
    saved = _schedule_saving(m, pattern)
    resize_saving = _resize_saving(m)
    if resize_saving is not None and (saved is None or resize_saving > saved):
        return None  # the resize saves more: `overprovisioned` answers and names the schedule
    policy = m.policy
    pair = _pair(m, pattern)
    reasons = [
        f"busy only {pattern.windows}; idle {pattern.idle_hours} of {HOURS_PER_WEEK} hours a week (every "
        f"{m.unit} below {policy.idle_util_pct:g}%, CPU below {policy.cpu_idle_pct:g}% and network below "
        f"{policy.network_active_gbps:g} Gbps in those hours)",
        _pair_text(pair),
        m.units_text,
        m.host_text,
        m.observed_text,
    ]
    confidence, doubt = _pattern_confidence(m, pattern)
    if doubt:
        reasons.append(doubt)
    risked = _with_stop_risks(m, Draft(Finding.SCHEDULABLE, tuple(reasons)))
    reasons = list(risked.reasons)
    if _may_not_restart(m):
        confidence = confidence.at_most(Confidence.MEDIUM)  # the schedule itself may leave the host down
    one_click = False
    if not pattern.irregular:
        one_click, why_not = _one_click_schedule(pattern)
        if why_not:
            reasons.append(why_not)
    if resize_saving is not None and m.downsize is not None:
        reasons.append(f"also possible: resizing to {m.downsize.spec.instance_type}, saving {usd(resize_saving)}/month")
    draft = Draft(
        Finding.SCHEDULABLE,
        tuple(reasons),
        cost_after=None if m.cost_now is None or saved is None else m.cost_now - saved,
        confidence=confidence,
        pattern=pattern,
        advice=None
        if pattern.irregular
        else "stop the host outside the busy hours (an EventBridge Scheduler stop/start pair), allowing a few "
        "minutes for it to boot",
        actionable=one_click,
        risks=risked.risks,
        plan=pair.plan,
    )
    return _video_unknown(m, draft)


def _pair_text(pair: Pair) -> str:
    hours = f"{pair.stopped_hours:g}"
    if pair.plan is None:
        return (
            f"the saving counts {hours} stopped hours a week: each busy window keeps {BOOT_LEAD_MINUTES} minutes to "
            f"boot, {STOP_GRACE_MINUTES} for work that runs late and, where the team's clock changes, an hour each side"
        )
    return (
        f"the saving counts the {hours} hours a week that the pair an approval creates keeps the host stopped "
        f"({BOOT_LEAD_MINUTES} minutes' lead to boot, {STOP_GRACE_MINUTES} for work that runs late): it "
        f"{pair.plan.description}"
    )


def _one_click_schedule(pattern: WeeklyPattern) -> tuple[bool, str | None]:
    """Whether approving can create the schedule pair, and why not when it cannot."""
    if not pattern.repeats:
        return False, "no one-click schedule until the busy hours have repeated in two weeks of history"
    if not one_pair_fits(busy_runs(pattern.busy)):
        return False, "the busy hours differ from day to day: one stop/start pair cannot follow them, schedule by hand"
    return True, None


def not_comparable(m: Measured) -> Draft | None:
    """Nothing to compare with (unknown accelerator, no price): say so instead of claiming "optimized"."""
    gap = m.comparison_gap
    if gap is None:
        return None
    context = (m.units_text, m.host_text, m.observed_text)
    if m.unused_units and m.usage.accelerator_data is AcceleratorData.PER_DEVICE:
        needed, total = m.view.needed, m.spec.compute_units
        return Draft(
            Finding.OVERPROVISIONED,
            (
                f"{needed} of {total} {m.unit}s do all the work: a type with {needed} {m.unit}(s) would do, but "
                f"no target can be named: {gap}",
                *context,
            ),
            confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        )
    return Draft(Finding.INSUFFICIENT_DATA, (f"cannot compare: {gap}", *context), confidence=Confidence.LOW)


def overprovisioned(m: Measured) -> Draft | None:
    """A cheaper type carries the measured demand, its bursts and headroom."""
    best, spec, demand = m.downsize, m.spec, m.demand
    if best is None:
        return None
    reasons = [m.units_text, m.host_text, m.observed_text, *m.demand_notes]
    reasons.extend(resize_reasons(spec, best, demand, m.policy))
    confidence = m.data_confidence
    actionable = True
    if best.cross_family or best.cross_hypervisor or m.caveats:
        confidence = confidence.at_most(Confidence.MEDIUM)
    held_back = None
    if not demand.host_memory_measured and best.spec.memory_mib < spec.memory_mib:
        reasons.append(m.unmeasured_ram_text)
        confidence = confidence.at_most(Confidence.MEDIUM)
        actionable = False
        held_back = "host memory not measured: publish mem_used_percent first"
    dropped = [d.index for d in m.view.holding][: max(0, len(m.view.holding) + m.view.needed - best.spec.compute_units)]
    if dropped and actionable:
        # A process holds memory on them: on a type without them it fails at its next start (cuda:1 is gone).
        reasons.append(
            f"{m.unit}s {index_ranges(dropped)} hold memory for processes that would lose their device on "
            f"{best.spec.instance_type}: stop or move what runs there first"
        )
        confidence = confidence.at_most(Confidence.MEDIUM)
        actionable = False
        held_back = f"{m.unit}s {index_ranges(dropped)} hold models: move them first"
    recent = m.recent_rise
    if recent is not None and actionable:
        reasons.append(f"{recent}: too recent to be a change of regime, so this downsize waits until it settles")
        actionable = False
        held_back = "the load rose in the last day: wait until it settles"
    if m.video_unknown and best.spec.compute_units < spec.compute_units and actionable:
        reasons.append(m.video_unknown_text)
        confidence = confidence.at_most(Confidence.MEDIUM)
        actionable = False
        held_back = _VIDEO_HELD_BACK
    median = _pinned_median(m)
    if median is not None:
        reasons.append(_pinned_text(m, median))
    pattern = m.pattern
    saving = _schedule_saving(m, pattern) if pattern is not None else None
    if pattern is not None and saving is not None:
        reasons.append(f"also possible: a stop schedule (busy only {pattern.windows}), saving {usd(saving)}/month")
    return Draft(
        Finding.OVERPROVISIONED,
        tuple(reasons),
        target=best.spec,
        cost_after=best.monthly,
        confidence=confidence,
        actionable=actionable,
        alternatives=neuron_alternatives(m.instance, spec, m.facts.catalog, m.facts.prices, demand, best.hourly),
        held_back=held_back,
    )


def partly_idle(m: Measured) -> Draft | None:
    """Some units never work, yet no cheaper type keeps the others: the waste is named, not hidden."""
    if not m.unused_units or m.usage.accelerator_data is not AcceleratorData.PER_DEVICE:
        return None
    needed, total, unit = m.view.needed, m.spec.compute_units, m.unit
    return Draft(
        Finding.OVERPROVISIONED,
        (
            f"{needed} of {total} {unit}s do all the work, but no cheaper type offered here keeps {needed} "
            f"{unit}(s) with the vCPUs, RAM, network, storage and interconnect this host needs",
            *([m.shortfalls] if m.shortfalls else []),
            m.units_text,
            m.host_text,
            m.observed_text,
            *m.demand_notes,
        ),
        confidence=m.data_confidence.at_most(Confidence.MEDIUM),
        advice=f"consolidate the work onto fewer hosts or give the idle {unit}s work",
    )


def _light_and_video_unknown(m: Measured, draft: Draft) -> Draft:
    """SMs that only tick over (a steady few percent, under the idle threshold at p99) on GPUs whose encoders nobody
    measured: the GPU is kept, but what it does is unknown (a transcoder's scaling kernels look like this)."""
    light = all(d.utilization is None or d.utilization.p99 < m.policy.idle_util_pct for d in m.view.busy)
    if not (m.video_unknown and light):
        return draft
    return draft.noting(m.video_unknown_text).capped(Confidence.LOW)


def optimized(m: Measured) -> Draft:
    """Every comparison was made and no cheaper type fits (with less certainty when part of the demand
    had to be assumed: GPU memory not measured, units that published nothing)."""
    hourly = m.facts.prices.hourly(m.spec.instance_type)
    prices, catalog = m.facts.prices, m.facts.catalog
    alternatives = neuron_alternatives(m.instance, m.spec, catalog, prices, m.demand, hourly) if hourly else ()
    draft = Draft(
        Finding.OPTIMIZED,
        (
            m.units_text,
            m.host_text,
            m.observed_text,
            *m.demand_notes,
            "no cheaper type fits the measured demand, its busiest hours and headroom",
            *([m.shortfalls] if m.shortfalls else []),
        ),
        confidence=m.data_confidence.at_most(Confidence.MEDIUM) if m.caveats else m.data_confidence,
        alternatives=alternatives,
    )
    return _light_and_video_unknown(m, draft)


FINDING_RULES: tuple[Rule, ...] = (
    gpu_gone,
    neuron_monitor_silent,
    held_unused,
    idle,
    unused_accelerator,
    cpu_bound,
    out_of_memory,
    pinned,
    busy_not_saturated,
    schedulable,
    not_comparable,
    overprovisioned,
    partly_idle,
    optimized,
)


# =============================================================================================
# Adjustments: refine whatever was decided.


def changed_regime(facts: Facts, draft: Draft) -> Draft:
    """Advice judged on the time since the work changed says what changed and when (and, for a host gone idle,
    what it has cost since); the earlier regime may come back, so never high confidence."""
    usage = facts.usage
    if usage is None or usage.regime is None or draft.finding in (Finding.EXCLUDED, Finding.INSUFFICIENT_DATA):
        return draft  # not analysed, or the gate already said what changed
    draft = draft.noting(regime_text(usage, facts.spec.unit_name if facts.spec else "GPU"), first=True)
    hourly = facts.prices.hourly(facts.instance.instance_type)
    if draft.finding is Finding.IDLE and hourly is not None:
        hours = (usage.window_end - usage.regime.since).total_seconds() / 3600
        spent = (hourly * Decimal(str(hours)) * Decimal(str(facts.running_share))).quantize(CENT)
        draft = draft.noting(f"it has cost {usd(spent)} since then, doing nothing")
    return draft.capped(Confidence.MEDIUM)


def changed_regime_resize(facts: Facts, draft: Draft) -> Draft:
    """A downsize sized on a load that stepped down would not carry the earlier one should it return: a person
    confirms it will not (a stop of a host gone quiet stays one click: a start undoes it)."""
    usage = facts.usage
    if usage is None or usage.regime is None or usage.regime.kind is not RegimeKind.STEPPED_DOWN:
        return draft
    if draft.target is None or not draft.actionable:
        return draft
    since = f"{usage.regime.since:%Y-%m-%d}"
    return replace(draft, actionable=False, held_back=f"the load stepped down on {since}: confirm it stays down")


def resized_in_window(facts: Facts, draft: Draft) -> Draft:
    """A host resized inside the window is judged on the samples of its current type only, with less certainty,
    and never gets one click from them: the change needs a full window of its own."""
    usage = facts.usage
    if usage is None or usage.type_change is None or draft.finding is Finding.EXCLUDED:
        return draft
    change = usage.type_change
    days = (usage.window_end - change.since).total_seconds() / 86400
    if change.assumed:  # only possible: CloudTrail could not be read and the host started inside the window
        gap = next((g for g in facts.all_gaps if g.source is Source.RESIZES), Gap(Source.RESIZES, "not read"))
        guard = GUARDS[Source.RESIZES]
        started = f"it started on {change.since:%Y-%m-%d %H:%M} UTC ({change.source}); "
        draft = draft.noting(started + guard.reason.format(error=gap.error), first=True).capped(Confidence.MEDIUM)
        return replace(draft, actionable=False, held_back=guard.held_back) if draft.actionable else draft
    earlier = f" from {', '.join(change.previous_types)}" if change.previous_types else ""
    draft = draft.noting(
        f"resized{earlier} to {facts.instance.instance_type} by {change.since:%Y-%m-%d %H:%M} UTC ({change.source}): "
        f"only the {days:.1f} days since are judged; load measured on the old type is not used",
        first=True,
    ).capped(Confidence.MEDIUM)
    if not draft.actionable:
        return draft
    return replace(draft, actionable=False, held_back=f"resized {change.since:%Y-%m-%d}: wait for a full window")


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


def unread_sources(facts: Facts, draft: Draft) -> Draft:
    """A one click whose guard could not read its source is held back, with the reason (domain/guards.py): the
    advice stands on the evidence that remains. CloudTrail's gap is judged per host, by `resized_in_window`."""
    action = advised_action(draft.finding, draft.target.instance_type if draft.target else None)
    if not draft.actionable or action is None:
        return draft
    relied_on = ACTIONS[action].guarded_by - {Source.RESIZES}
    gap = next((gap for gap in facts.all_gaps if gap.source in relied_on), None)
    if gap is None:
        return draft
    guard = GUARDS[gap.source]
    reason = guard.reason.format(error=gap.error, type=facts.instance.instance_type)
    return replace(draft.noting(reason), actionable=False, held_back=guard.held_back)


def agent_went_silent(facts: Facts, draft: Draft) -> Draft:
    """Accelerator series that stopped while the host ran on (the agent stopped publishing): the advice rests on the
    time before, what the accelerators did since is unknown, so it is at most medium and not one click until the
    agent reports again. Missing metrics are never read as idleness."""
    usage, spec = facts.usage, facts.spec
    if usage is None or spec is None or usage.accelerator_silent_since is None or draft.finding is Finding.EXCLUDED:
        return draft
    since, unit = usage.accelerator_silent_since, spec.unit_name
    hours = (usage.window_end - since).total_seconds() / 3600
    draft = draft.noting(
        f"the {unit} metrics stopped on {since:%Y-%m-%d %H:%M} UTC while the host kept running ({hours:.0f} hours "
        f"since): the CloudWatch agent or its nvidia_gpu section stopped publishing, so what the {unit}s did since is "
        "unknown and this advice rests on the time before; restart the agent (amazon-cloudwatch-agent-ctl -a status)",
        first=True,
    ).capped(Confidence.MEDIUM)
    if not draft.actionable:
        return draft
    return replace(draft, actionable=False, held_back=f"{unit} metrics stopped {since:%Y-%m-%d}: restart the agent")


def no_longer_offered(facts: Facts, draft: Draft) -> Draft:
    instance = facts.instance
    if facts.spec is None or facts.catalog.is_offered(instance.instance_type) is not False:
        return draft
    where = f"{instance.instance_type} is no longer offered in {instance.region}"
    gone = f"{where}: once stopped, this host may not get its type back"
    if draft.finding is Finding.IDLE:
        # Nobody uses it: stopping it is still the advice, with the risk in plain sight (and in the confirmation).
        return draft.risking(
            f"{gone}; nothing uses it, so stopping it is still the advice",
            f"{instance.instance_type} is no longer offered in {instance.region}: once stopped, it may not start again",
        )
    draft = draft.noting(f"{gone}, so no one-click resize or schedule is offered (migrate in a maintenance window)")
    if not draft.actionable and draft.target is None:
        return draft
    held_back = f"{instance.instance_type} is no longer offered here: migrate in a maintenance window"
    capped = draft.capped(Confidence.MEDIUM) if draft.target is not None else draft
    return replace(capped, actionable=False, held_back=held_back)


def resize_stops_the_host(facts: Facts, draft: Draft) -> Draft:
    """A resize stops the host to change its type: whatever its instance store holds is gone after it."""
    if draft.target is None or facts.spec is None:
        return draft
    return _instance_store_risk(facts.spec, draft)


def billed_platform(facts: Facts, draft: Draft) -> Draft:
    """A host that is not billed as Linux is priced at its own platform's rates, targets too: said once."""
    billing = facts.instance.billing
    if billing.key == LINUX.key or facts.list_cost is None:
        return draft
    return draft.noting(f"priced as {billing.description}, host and targets alike ({facts.prices.source})")


def unpriced(facts: Facts, draft: Draft) -> Draft:
    if facts.list_cost is not None or facts.spec is None:
        return draft
    note = facts.price_note
    if any(note in reason for reason in draft.reasons):  # `not_comparable` already said it
        return draft
    return draft.noting(note, first=True)


def paid_upgrade(facts: Facts, draft: Draft) -> Draft:
    """Advice that costs more than today is never high confidence, whatever the evidence; and never one click when
    the work that called for it has been quiet for the last day (it may have ended)."""
    cost = facts.cost_now
    if cost is None or draft.cost_after is None or draft.cost_after <= cost:
        return draft
    draft = draft.capped(Confidence.MEDIUM)
    if not (draft.actionable and _recently_quiet(facts)):
        return draft
    return replace(
        draft.noting(
            "the accelerators have been quiet for the last day: confirm the work still runs before paying more"
        ),
        actionable=False,
        held_back="quiet for the last day: confirm the work still runs",
    )


def _recently_quiet(facts: Facts) -> bool:
    if facts.spec is None or facts.usage is None or facts.usage.accelerator_data is AcceleratorData.NONE:
        return False
    return Measured(facts, facts.spec, facts.usage).recently_quiet


def placement_group_member(facts: Facts, draft: Draft) -> Draft:
    """A host in a placement group works with the group's other hosts (a training job's nodes): one member is never
    resized alone, so its resize is advice at the group's level (domain/placement.py says what the group could do)."""
    group = facts.instance.placement_group
    if not group or draft.target is None:
        return draft
    draft = draft.noting(
        f"in placement group '{group}', whose hosts run together (a training job's nodes, NCCL over the network "
        "between them): a member is never resized alone; resize the group's hosts together, in one window"
    )
    if not draft.actionable:
        return draft
    return replace(draft, actionable=False, held_back=f"in placement group '{group}': resize the group together")


def _owned_elsewhere(draft: Draft, who: str, change: str) -> Draft:
    """Advice for a host that something else creates: the finding is kept in words, never acted on."""
    if draft.finding in (Finding.EXCLUDED, Finding.INSUFFICIENT_DATA):
        return draft.noting(f"{who}: never resized in place", first=True)
    to = f" to {draft.target.instance_type}" if draft.target else ""
    lead = f"would be {draft.finding.value}{to}, but this is {who}; never resized in place"
    owned = replace(draft.noting(lead, first=True), finding=Finding.EXCLUDED, actionable=False, would_be=draft.finding)
    return replace(owned, advice=f"{change}{to}", held_back=change)


def launched_by_owner(facts: Facts, draft: Draft) -> Draft:
    """A host that an Auto Scaling group, a node group or autoscaler, a cluster or a fleet launches (its tags say
    which, domain/owners.py) is replaced or recycled by that owner when changed in place: the advice goes to the owner,
    never one click."""
    owner = facts.instance.owner
    if owner is None:
        return draft
    launcher = owner.launcher
    change = {Finding.IDLE: launcher.idle, Finding.SCHEDULABLE: launcher.schedulable}.get(
        draft.finding, launcher.resize
    )
    return _owned_elsewhere(draft, owner.membership, owner.named(change))


def spot_host(facts: Facts, draft: Draft) -> Draft:
    instance, prices = facts.instance, facts.prices
    if instance.lifecycle != "spot":
        return draft
    known = instance.instance_type in prices.spot
    rate = "its Spot price" if known else "the on-demand rate (no recent Spot price)"
    if draft.finding is Finding.EXCLUDED and instance.owner is not None:
        return draft.noting(f"a Spot instance (cost at {rate})")  # the owner's lead already says it all
    draft = _owned_elsewhere(draft, f"a Spot instance (cost at {rate})", "change the request or fleet that launches it")
    if not known:
        return replace(draft, cost_after=None)  # no Spot price: no saving is claimed at on-demand rates
    if draft.target is None:
        return draft
    # A resize's saving is only known at the target's Spot price; on-demand figures would mislead, and a
    # target that costs more at Spot prices is no saving at all.
    target_spot = prices.spot.get(draft.target.instance_type)
    target_cost = monthly(target_spot) if target_spot is not None else None
    if target_cost is not None and facts.cost_now is not None and target_cost >= facts.cost_now:
        return replace(draft, target=None, cost_after=None).noting(
            f"{draft.target.instance_type} costs as much or more at its Spot price: no saving"
        )
    return replace(draft, cost_after=target_cost)


def reservations(facts: Facts, draft: Draft) -> Draft:
    """Savings that match the bill: a host a capacity reservation, Capacity Block, Reserved Instance or Savings Plan
    pays for saves what the bill drops by, not its list price (domain/commitments.py has the arithmetic)."""
    cover, cost_now, instance = facts.cover, facts.cost_now, facts.instance
    if cover is None or not cover.covered or cost_now is None or instance.lifecycle == "spot":
        return draft
    cost_after = draft.cost_after if draft.cost_after is not None else cost_now
    in_block = cover.capacity is not None and cover.capacity.kind is CapacityKind.CAPACITY_BLOCK
    if cost_after == cost_now and not in_block:
        return draft  # no change, nothing to price
    schedule = draft.finding is Finding.SCHEDULABLE and cost_now > 0
    change = Change(
        cost_now=cost_now,
        cost_after=cost_after,
        target_type=draft.target.instance_type if draft.target else None,
        running_share=float(cost_after / cost_now) if schedule else 0.0,
    )
    net = net_savings(instance, cover, change)
    if net is None:
        return draft
    return replace(draft.noting(net.reason), net_savings=net.amount)


ADJUSTMENTS: tuple[Adjustment, ...] = (
    slices_beside,
    changed_regime,
    changed_regime_resize,
    resized_in_window,
    unread_sources,
    agent_went_silent,
    resize_stops_the_host,
    no_longer_offered,
    billed_platform,
    unpriced,
    paid_upgrade,
    placement_group_member,
    launched_by_owner,
    spot_host,
    reservations,
)
