"""The verdicts before sizing: an idle variant, GPUs whose work is not measured, a type without a price."""

from __future__ import annotations

from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.money import ZERO
from rightsizer.domain.sagemaker.advice import (
    Draft,
    history_confidence,
    insufficient_data,
)
from rightsizer.domain.sagemaker.endpoints.facts import VariantFacts
from rightsizer.domain.sagemaker.endpoints.load import (
    cpu_busy,
    cpu_text,
    gpu_quiet,
    per_gpu_text,
    routing_text,
    summed_text,
)
from rightsizer.domain.sagemaker.usage import VariantUsage
from rightsizer.domain.wording import plural


def variant_idle(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    """No requests in the window, and the GPUs and CPUs show no work of their own: the whole cost is waste."""
    if usage.invocations is not None and usage.invocations > 0:
        return None
    policy, variant = facts.policy, facts.variant
    since = max(usage.window_start, variant.created)
    checked = (
        f"no invocations since {since:%Y-%m-%d} ({usage.observed_days:.0f} days): AWS/SageMaker Invocations "
        + ("has no datapoint for the variant" if usage.invocations is None else "sums to 0")
        + " (SageMaker publishes it for periods with requests), while its instance metrics are published "
        f"({usage.coverage:.0%} of the window)"
    )
    if not gpu_quiet(usage, policy) or cpu_busy(usage, policy):
        return insufficient_data(
            f"{checked}, yet it works ({per_gpu_text(usage)}: its busiest GPU up to {summed_text(usage)}; "
            f"{cpu_text(usage)}): requests may arrive some other way (an asynchronous endpoint, a batch job on the "
            "instance); not judged idle"
        )
    not_idle, routing = routing_text(facts)
    if not_idle is not None:
        return insufficient_data(f"{checked}; {not_idle}")
    reasons = [checked, f"{per_gpu_text(usage)}; {cpu_text(usage)}: no work"]
    if routing is not None:
        reasons.append(routing)
    confidence = history_confidence(usage.observed_days, usage.coverage, policy)
    if usage.gpu is None:
        reasons.append(
            f"GPUUtilization is not published for {variant.instance_type}: judged on its requests and its CPU"
        )
        confidence = confidence.at_most(Confidence.MEDIUM)
    if facts.siblings_serve:
        advice = (
            f"remove variant {variant.variant_name} from the endpoint (a new endpoint config without it, then "
            "UpdateEndpoint): the endpoint's other variants serve its requests"
        )
    elif variant.inference_components:
        advice = (
            f"scale its inference components ({', '.join(variant.inference_components[:3])}) to 0 copies and the "
            "variant to 0 instances (ManagedInstanceScaling MinInstanceCount 0), or delete the endpoint"
        )
    else:
        advice = (
            f"delete endpoint {variant.endpoint_name} (its endpoint config {variant.endpoint_config_name} and model "
            "stay: CreateEndpoint brings it back in minutes), or host it on inference components, which scale to zero"
        )
    return Draft(Finding.IDLE, tuple(reasons), cost_after=ZERO, confidence=confidence, advice=advice)


def variant_no_gpu_metrics(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    """Requests arrive and nothing says what the GPUs do with them: no type or count is sized on an assumed 0 %."""
    if usage.gpu is not None or spec.accelerator_count < 1:
        return None
    return insufficient_data(
        f"{usage.invocations or 0:,.0f} invocations in the window, but no GPUUtilization for the variant "
        f"({cpu_text(usage)}): what its {plural(spec.accelerator_count, spec.unit_name)} do is not measured, so no "
        "smaller type or fewer instances is sized on it"
    )


def variant_no_price(facts: VariantFacts, usage: VariantUsage, spec: InstanceTypeSpec) -> Draft | None:
    if facts.hourly is not None:
        return None
    return insufficient_data(
        f"{per_gpu_text(usage)}; no SageMaker hosting price for {facts.variant.instance_type} in "
        f"{facts.variant.region} (neither the Price List API nor the bundled snapshot has one): cost and savings "
        "unknown, so no smaller type is compared"
    )
