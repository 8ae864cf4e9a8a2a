"""Why a variant is not sized: opted out, not in service, scaled to zero, an unknown type, too young, no metrics."""

from __future__ import annotations

from rightsizer.domain.models import (
    Finding,
)
from rightsizer.domain.sagemaker.advice import (
    Draft,
    insufficient_data,
    opted_out_by_tag,
)
from rightsizer.domain.sagemaker.endpoints.facts import VariantFacts, VariantGate
from rightsizer.domain.sagemaker_models import ec2_type


def variant_opted_out(facts: VariantFacts) -> Draft | None:
    return opted_out_by_tag(facts.variant.tags, facts.policy)


def variant_not_in_service(facts: VariantFacts) -> Draft | None:
    status = facts.variant.endpoint_status
    if facts.variant.in_service:
        return None
    return Draft(Finding.EXCLUDED, (f"the endpoint is {status}: judged once it is InService again",))


def variant_scaled_to_zero(facts: VariantFacts) -> Draft | None:
    if facts.variant.instance_count > 0:
        return None
    return Draft(Finding.OPTIMIZED, ("no instances in service (scaled to zero): it costs nothing now",))


def variant_unknown_type(facts: VariantFacts) -> Draft | None:
    if facts.spec is not None:
        return None
    return insufficient_data(
        f"{facts.variant.instance_type} runs on {ec2_type(facts.variant.instance_type)}, which is not in the "
        "instance catalog: its GPUs are unknown"
    )


def variant_young(facts: VariantFacts) -> Draft | None:
    if facts.age_days >= facts.policy.min_days:
        return None
    return insufficient_data(
        f"the endpoint was created {facts.age_days:.1f} days ago; at least {facts.policy.min_days:g} days of "
        "traffic are needed to judge it"
    )


def variant_no_metrics(facts: VariantFacts) -> Draft | None:
    usage = facts.usage
    if usage is not None and usage.instance_metrics:
        return None
    return insufficient_data(
        f"no /aws/sagemaker/Endpoints metrics (CPUUtilization, GPUUtilization) for the variant in the last "
        f"{facts.policy.lookback_days} days, which SageMaker publishes for every in-service instance: without them "
        "an endpoint without requests cannot be told from one whose metrics are not read (is CloudWatch readable "
        "in this region?)"
    )


def variant_thin(facts: VariantFacts) -> Draft | None:
    usage, policy = facts.usage, facts.policy
    if usage is None:
        return None
    if usage.observed_days < policy.min_days:
        return insufficient_data(
            f"only {usage.observed_days:.1f} days of instance metrics; at least {policy.min_days:g} are needed"
        )
    if usage.coverage < policy.min_coverage:
        return insufficient_data(
            f"instance metrics cover only {usage.coverage:.0%} of the window (at least {policy.min_coverage:.0%})"
        )
    return None


VARIANT_GATES: tuple[VariantGate, ...] = (
    variant_opted_out,
    variant_not_in_service,
    variant_scaled_to_zero,
    variant_unknown_type,
    variant_young,
    variant_no_metrics,
    variant_thin,
)
