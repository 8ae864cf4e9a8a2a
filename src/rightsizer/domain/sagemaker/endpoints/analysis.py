"""One recommendation per endpoint variant: the gates, then the verdicts, then the sizing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models.advice import Evidence, Recommendation
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import ResourceKind
from rightsizer.domain.sagemaker.advice import (
    Draft,
    SageMakerPriceBook,
    build_recommendation,
)
from rightsizer.domain.sagemaker.endpoints.facts import VariantFacts, VariantRule
from rightsizer.domain.sagemaker.endpoints.gates import VARIANT_GATES
from rightsizer.domain.sagemaker.endpoints.sizing import variant_optimized, variant_sized
from rightsizer.domain.sagemaker.endpoints.verdicts import variant_idle, variant_no_gpu_metrics, variant_no_price
from rightsizer.domain.sagemaker.usage import VariantUsage
from rightsizer.domain.sagemaker_models import EndpointVariant, SageMakerDetail, ec2_type

VARIANT_RULES: tuple[VariantRule, ...] = (variant_idle, variant_no_gpu_metrics, variant_no_price, variant_sized)


def decide_variant(facts: VariantFacts) -> Draft:
    draft = next((d for gate in VARIANT_GATES if (d := gate(facts)) is not None), None)
    if draft is not None:
        return draft
    usage, spec = facts.usage, facts.spec
    if usage is None or spec is None:  # the gates answer for both
        raise RuntimeError(f"{facts.variant.resource_id} passed the gates without usage and a spec")
    found = next((d for rule in VARIANT_RULES if (d := rule(facts, usage, spec)) is not None), None)
    return found or variant_optimized(facts, usage, spec)


def _variant_evidence(usage: VariantUsage | None, spec: InstanceTypeSpec | None) -> Evidence:
    if usage is None:
        return Evidence()
    memory_mib = (
        usage.gpu_memory_peak_pct / 100 * spec.memory_per_unit_mib
        if usage.gpu_memory_peak_pct is not None and spec is not None
        else None
    )
    return Evidence(
        observed_days=round(usage.observed_days, 2),
        coverage=round(usage.coverage, 3),
        accelerator_p95=round(usage.gpu.p95, 1) if usage.gpu else None,
        accelerator_peak=round(usage.gpu_peak, 1) if usage.gpu_peak is not None else None,
        accelerator_burst=round(usage.gpu_burst, 1) if usage.gpu_burst is not None else None,
        memory_peak_mib=round(memory_mib) if memory_mib is not None else None,
        memory_per_unit_mib=spec.memory_per_unit_mib if spec is not None else None,
        cpu_p95=round(usage.cpu.p95, 1) if usage.cpu else None,
        host_memory_peak_pct=round(usage.memory_peak_pct, 1) if usage.memory_peak_pct is not None else None,
        daily_accelerator_mean=tuple(None if v is None else round(v, 1) for v in usage.daily_gpu_mean),
    )


def _metrics_text(usage: VariantUsage | None) -> str:
    if usage is None:
        return "no CloudWatch series read"
    parts = [
        "GPUUtilization" if usage.gpu is not None else "no GPUUtilization",
        "GPUMemoryUtilization" if usage.gpu_memory_peak_pct is not None else "no GPUMemoryUtilization",
        "CPUUtilization" if usage.cpu is not None else "no CPUUtilization",
        "Invocations" if usage.invocations is not None else "no Invocations datapoints",
        "ModelLatency" if usage.latency_p95_ms is not None else "no ModelLatency",
    ]
    return ", ".join(parts)


def _weight_share(weight: float | None, endpoint_weights: Sequence[float | None]) -> float | None:
    """The variant's share of its endpoint's weighted routing (None: a weight is unknown, or all are 0)."""
    known = [w for w in endpoint_weights if w is not None]
    if weight is None or len(known) < len(endpoint_weights) or sum(known) <= 0:
        return None
    return weight / sum(known)


def analyze_variants(
    variants: Sequence[EndpointVariant],
    usage: Mapping[str, VariantUsage],
    catalog: Catalog,
    prices: SageMakerPriceBook,
    policy: Policy,
    now: datetime,
) -> list[Recommendation]:
    """One recommendation per endpoint variant (a region's, or one shard's: an endpoint's variants are together)."""
    served: dict[str, float] = {}  # endpoint -> requests its variants served
    weights: dict[str, list[float | None]] = {}
    for v in variants:
        found = usage.get(v.resource_id)
        served[v.endpoint_name] = served.get(v.endpoint_name, 0.0) + ((found.invocations or 0.0) if found else 0.0)
        weights.setdefault(v.endpoint_name, []).append(v.weight)
    recommendations = []
    for variant in variants:
        spec = catalog.spec(ec2_type(variant.instance_type))
        found = usage.get(variant.resource_id)
        siblings = served[variant.endpoint_name] - ((found.invocations or 0.0) if found else 0.0)
        facts = VariantFacts(
            variant,
            found,
            spec,
            catalog,
            prices.hosting,
            policy,
            now,
            sibling_invocations=siblings,
            weight_share=_weight_share(variant.weight, weights[variant.endpoint_name]),
        )
        draft = decide_variant(facts)
        detail = SageMakerDetail(
            endpoint_name=variant.endpoint_name,
            variant_name=variant.variant_name,
            model_name=variant.model_name,
            copy_held_back=variant.copy_held_back,
            endpoint_config_name=variant.endpoint_config_name,
            instance_count=variant.instance_count,
            inference_components=variant.inference_components,
            scaled_by=variant.scaled_by,
            serverless=variant.serverless,
            last_modified=variant.last_modified,
            gpus_per_instance=spec.accelerator_count if spec is not None else 0,
            gpu_summed_p95_pct=round(found.gpu_summed_p95, 1) if found and found.gpu_summed_p95 is not None else None,
            invocations=found.invocations if found else None,
            invocation_hours=found.invocation_hours if found else None,
            peak_invocations_per_instance=found.peak_invocations_per_instance if found else None,
            latency_p95_ms=round(found.latency_p95_ms, 1) if found and found.latency_p95_ms is not None else None,
            latency_mean_ms=round(found.latency_mean_ms, 1) if found and found.latency_mean_ms is not None else None,
            metrics=_metrics_text(found),
        )
        recommendations.append(
            build_recommendation(
                ResourceKind.SAGEMAKER_ENDPOINT,
                account_id=variant.account_id,
                region=variant.region,
                resource=variant.resource_id,
                name=variant.endpoint_name,
                instance_type=variant.instance_type,
                state=variant.endpoint_status,
                draft=draft,
                cost_now=facts.cost_now,
                tags=variant.tags,
                policy=policy,
                now=now,
                detail=detail,
                evidence=_variant_evidence(found, spec),
            )
        )
    return recommendations
