"""What the work of a group's nodes needs: the type each working node's work needs, and the one type that carries them
all (the largest of their own targets, if it carries every other)."""

from __future__ import annotations

from collections.abc import Sequence

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models import Finding
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.node_groups.nodes import Node


def needed_type(catalog: Catalog, node: Node) -> InstanceTypeSpec | None:
    """The type a working node's work needs: its own downsize (or upsize) target, else its current type."""
    if node.rec.would_be in (Finding.OVERPROVISIONED, Finding.UNDERPROVISIONED) and node.rec.target_type:
        return catalog.spec(node.rec.target_type) or node.spec
    return node.spec


def carries(catalog: Catalog, big: InstanceTypeSpec, small: InstanceTypeSpec) -> bool:
    """`big` carries whatever `small` was chosen to carry (the per-node sizing already checked `small`)."""
    if big.instance_type == small.instance_type:
        return True
    fits = (
        big.accelerator_kind is small.accelerator_kind
        and big.compute_units >= small.compute_units
        and big.memory_per_unit_mib >= small.memory_per_unit_mib
        and big.vcpus >= small.vcpus
        and big.memory_mib >= small.memory_mib
        and big.network_gbps >= small.network_gbps
        and bool(set(big.architectures) & set(small.architectures))
    )
    if not fits or big.accelerator_model == small.accelerator_model:
        return fits
    a, b = catalog.accelerator(big), catalog.accelerator(small)
    if a is None or b is None:
        return False
    return (
        a.memory_bandwidth_gbps >= b.memory_bandwidth_gbps
        and (a.tensor_tflops or 0) >= (b.tensor_tflops or 0)
        and (a.fp32_tflops or 0) >= (b.fp32_tflops or 0)
        and a.compute_capability_tuple >= b.compute_capability_tuple
        and a.video_encoders >= b.video_encoders
    )


def largest_need(catalog: Catalog, working: Sequence[Node]) -> tuple[InstanceTypeSpec | None, Node | None]:
    """The one type every working node's work fits, taken from their own targets: the largest of them, if it
    carries all the others (None: the nodes' needs conflict, or one has no known type)."""
    needs = [(needed_type(catalog, n), n) for n in working]
    if not needs or any(need is None for need, _ in needs):
        return None, None
    known = [(need, n) for need, n in needs if need is not None]
    for need, node in sorted(
        known, key=lambda x: (-x[0].compute_units, -x[0].memory_per_unit_mib, -x[0].vcpus, -x[0].memory_mib)
    ):
        if all(carries(catalog, need, other) for other, _ in known):
            return need, node
    return None, None
