"""What a variant's metrics say of its work, in words and in the tests the verdicts share."""

from __future__ import annotations

import math

from rightsizer.domain.policy import Policy
from rightsizer.domain.sagemaker.endpoints.facts import VariantFacts
from rightsizer.domain.sagemaker.usage import VariantUsage
from rightsizer.domain.wording import pct, plural


def per_gpu_text(usage: VariantUsage) -> str:
    if usage.gpu is None:
        return "no GPUUtilization"
    summed = f"{usage.gpu_summed_p95:.0f}%" if usage.gpu_summed_p95 is not None else "n/a"
    text = (
        f"GPU p95 {usage.gpu.p95:.0f}% per GPU (GPUUtilization {summed} summed over {plural(usage.gpus, 'GPU')}), "
        f"busiest hours {pct(usage.gpu_burst)} per GPU"
    )
    busiest = usage.gpu_busiest
    if busiest is not None:
        text += (
            f"; the busiest GPU alone p95 {busiest.p95:.0f}%, busiest hours {pct(usage.gpu_busiest_burst)} (enhanced "
            "metrics, per AcceleratorId)"
        )
    return text


def summed_text(usage: VariantUsage) -> str:
    """The busiest 5-minute GPU reading summed over the GPUs: no single GPU worked more than this."""
    if usage.gpu is None:
        return "n/a"
    return f"{usage.gpu.p99 * max(usage.gpus, 1):.0f}% (GPUUtilization p99, summed)"


def gpu_quiet(usage: VariantUsage, policy: Policy) -> bool:
    """No GPU shows steady work or a burst that looks like work. Judged on the figures summed over the GPUs, which
    bound the busiest one: one GPU of eight at 30 % reads 30 summed but 3.75 per GPU, under the idle line."""
    if usage.gpu is None:
        return True  # CPUUtilization is published, GPUUtilization not: no GPU work shows (said in the reasons)
    gpus = max(usage.gpus, 1)
    return usage.gpu.p99 * gpus < policy.idle_util_pct and (usage.gpu_peak or 0.0) * gpus < policy.activity_peak_pct


def cpu_busy(usage: VariantUsage, policy: Policy) -> bool:
    """CPUUtilization shows work of its own, as for an EC2 host: a share of the instance or whole vCPUs steadily
    (p95), or a recurring job's level in its busiest periods (p99)."""
    cpu = usage.cpu
    if cpu is None:
        return False
    return (
        cpu.p95 >= policy.cpu_idle_pct
        or cpu.p95 * usage.vcpus / 100 >= policy.busy_vcpus
        or cpu.p99 >= policy.cpu_activity_pct
    )


def cpu_text(usage: VariantUsage) -> str:
    if usage.cpu is None:
        return "no CPUUtilization"
    return f"CPU p95 {usage.cpu.p95:.0f}% per vCPU ({usage.cpu.p95 * usage.vcpus / 100:.1f} of {usage.vcpus} vCPUs)"


def routing_text(facts: VariantFacts) -> tuple[str | None, str | None]:
    """(why no request here does not make the variant idle, or None; what its weight says when it is idle)."""
    if not facts.siblings_serve:
        return None, None
    served = f"the endpoint's other variants served {facts.sibling_invocations:,.0f} requests"
    due, weight = facts.requests_due, facts.variant.weight
    if due is None:
        return (
            f"{served} and this variant's weight is not known: whether SageMaker routed requests to it is unknown, "
            "so it is not judged idle"
        ), None
    if due >= 1:
        routed = "all of the endpoint's weight" if math.isinf(due) else f"about {due:,.0f} requests"
        return (
            f"{served}, and its weight {weight:g} ({facts.weight_share or 0:.0%} of the endpoint's) routes {routed} "
            "here: no Invocations for it says its metric is not read (or every request to it failed), not that "
            "nothing reached it; not judged idle"
        ), None
    if not weight:
        return None, f"{served}; its weight is 0: it gets only requests that name it (TargetVariant), none came"
    return None, f"{served}; its weight {weight:g} routes fewer than one of them here"
