"""Gates that end in "insufficient data": a type the catalog does not know, an accelerator nothing measures, readings
no host can give, missing metrics, too short a history or too thin a coverage. Missing metrics are never idleness.
"""

from __future__ import annotations

from rightsizer.domain.facts.host import Facts
from rightsizer.domain.facts.regime import regime_change_text
from rightsizer.domain.models.hosts import AcceleratorKind
from rightsizer.domain.models.usage import AcceleratorData, OutOfRange
from rightsizer.domain.rules.draft import Draft, has_reading, insufficient
from rightsizer.domain.wording import index_ranges


def unknown_type(facts: Facts) -> Draft | None:
    if facts.spec is not None:
        return None
    return insufficient(f"{facts.instance.instance_type} is not in the instance catalog")


def unmonitored_accelerator(facts: Facts) -> Draft | None:
    spec = facts.spec
    if spec is None or spec.accelerator_kind is not AcceleratorKind.UNMONITORED:
        return None
    name = spec.accelerator_model or "this accelerator"
    return insufficient(f"{name} publishes no utilisation metrics the bot can read")


def impossible_data(facts: Facts) -> Draft | None:
    """Readings no real host can give: a percentage outside 0-100 %, or more unit series than the type has units (a
    resized host's old series with no InstanceType dimension, another host's under this id). They are data errors:
    judged, they would read as an unused GPU ('peak -1 %') or as three busy GPUs on a host with one."""
    spec, usage = facts.spec, facts.usage
    if spec is None or usage is None:
        return None
    unit = spec.unit_name
    errors = [_out_of_range_text(error, unit) for error in usage.out_of_range]
    seen = [d.index for d in usage.devices if has_reading(d)]
    if usage.accelerator_data is AcceleratorData.PER_DEVICE and len(seen) > spec.compute_units:
        errors.append(
            f"{len(seen)} {unit} series ({unit}s {index_ranges(seen)}) for a {spec.instance_type}, which has "
            f"{spec.compute_units} {unit}{'s' if spec.compute_units != 1 else ''}"
        )
    if not errors:
        return None
    return insufficient(
        f"data error: {'; '.join(errors)}. An agent bug, a unit mix-up or another host's series under this "
        "instance's id: nothing is judged on readings no host can give (check the agent's configuration, "
        "agent/README.md)"
    )


_SERIES_NAMES = {"cpu": "the host's CPUUtilization", "host_memory": "the host's mem_used_percent"}


def _out_of_range_text(error: OutOfRange, unit: str) -> str:
    name = _SERIES_NAMES.get(error.series, f"{unit} {error.device} utilisation")
    return f"{name} reads {error.low:g} to {error.high:g} %, outside 0-100 %"


def no_accelerator_metrics(facts: Facts) -> Draft | None:
    spec, usage = facts.spec, facts.usage
    if spec is None or (usage is not None and usage.accelerator_data is not AcceleratorData.NONE):
        return None
    days = facts.policy.lookback_days
    lead = f"no {spec.unit_name} metrics in the last {days} days"
    if spec.accelerator_kind is AcceleratorKind.NEURON:
        return insufficient(f"{lead}: install neuron-monitor (NeuronCore utilisation) (agent/README.md)")
    if facts.instance.billing.windows:
        return insufficient(
            f"{lead}: the CloudWatch agent's nvidia_gpu section runs on Linux only, so on Windows nothing publishes "
            "GPU use by default; publish nvidia-smi's readings under the agent's names (agent/windows/README.md) "
            "before anything is judged"
        )
    return insufficient(f"{lead}: install the CloudWatch agent's nvidia_gpu section (agent/README.md)")


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
    return insufficient(
        f"{lead} nvidia_smi_utilization_gpu has no data in the last {facts.policy.lookback_days} days: nvidia-smi "
        "reports utilization.gpu as [N/A] on GPUs in MIG mode (partitioned into GPU instances), or the agent's "
        "nvidia_gpu section does not list utilization_gpu. Without the load nothing can be sized: memory alone "
        "cannot tell a busy GPU from an idle one (with MIG, read each GPU instance's use with DCGM's profiling "
        "metrics; otherwise add utilization_gpu, see agent/README.md)"
    )


def short_history(facts: Facts) -> Draft | None:
    spec, usage, policy = facts.spec, facts.usage, facts.policy
    if spec is None or usage is None or usage.accelerator_days >= policy.min_days:
        return None
    if usage.regime is not None:  # the window is longer, but the work it would judge is this young
        return insufficient(
            f"{regime_change_text(usage, spec.unit_name)}: only {usage.accelerator_days:.1f} days of it so far; at "
            f"least {policy.min_days:g} are needed to judge it"
        )
    return insufficient(
        f"only {usage.accelerator_days:.1f} days of {spec.unit_name} metrics; at least {policy.min_days:g} are needed"
    )


def thin_coverage(facts: Facts) -> Draft | None:
    spec, usage, policy = facts.spec, facts.usage, facts.policy
    if spec is None or usage is None or usage.accelerator_coverage >= policy.min_coverage:
        return None
    return insufficient(
        f"{spec.unit_name} metrics cover only {usage.accelerator_coverage:.0%} of the window "
        f"(at least {policy.min_coverage:.0%} is needed): is the agent running all the time?"
    )
