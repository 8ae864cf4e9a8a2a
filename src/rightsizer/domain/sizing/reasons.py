"""The reasons a resize gives: what the target keeps of every limit, what ruled out the cheaper types, what changes."""

from __future__ import annotations

from collections.abc import Iterable

from rightsizer.domain.limits.demand import Demand
from rightsizer.domain.limits.limit import Offer
from rightsizer.domain.limits.table import LIMITS, sentence
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.policy import Policy
from rightsizer.domain.sizing.targets import Candidate


def resize_reasons(current: InstanceTypeSpec, candidate: Candidate, demand: Demand, policy: Policy) -> list[str]:
    """What the target keeps of every limit that matters here, what ruled out the cheaper types, and what changes."""
    target, offer = candidate.spec, candidate.offer
    if offer is None:  # every candidate comes from `candidates`, which names its offer
        raise ValueError(f"{target.instance_type}: a candidate without its offer")
    refused = candidate.refusals.decided(demand) if candidate.refusals is not None else ()
    reasons = [sentence(offer, demand, candidate.offers, frozenset(position for position, _ in refused))]
    if refused:
        reasons.append(f"cheaper types fall short of {shortfalls_text(refused, demand)}")
    if candidate.cross_family:
        reasons.append(
            f"changes family {current.family} -> {target.family} ({current.accelerator_model} -> "
            f"{target.accelerator_model}): check driver and CUDA compatibility"
        )
    if candidate.cross_hypervisor:
        reasons.append("moves from a Xen to a Nitro host: the AMI needs ENA and NVMe drivers")
    return reasons


def shortfalls_text(refused: Iterable[tuple[int, Offer]], demand: Demand) -> str:
    """'EBS throughput (g5.8xlarge: EBS baseline 2,000 MB/s, needs ...); GPU count (...)', in LIMITS' order."""
    return "; ".join(
        f"{LIMITS[position].name} ({offer.spec.instance_type}: {LIMITS[position].short(offer, demand)})"
        for position, offer in sorted(refused, key=lambda item: item[0])
    )
