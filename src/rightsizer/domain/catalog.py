"""The instance catalog of one region: specs, accelerators, and what the region still offers."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar, cast

from rightsizer.domain.models.hosts import AcceleratorKind, AcceleratorSpec, InstanceTypeSpec

# Families the bot looks after: NVIDIA P and G, AWS Inferentia and Trainium, and the DL families (Habana
# Gaudi dl1, Qualcomm dl2q), which are reported (as unmonitored) so their cost is not invisible.
ACCELERATED_FAMILY_PREFIXES = ("p", "g", "inf", "trn", "dl")
# Filter values for EC2 `instance-type` filters (DescribeInstances, DescribeInstanceTypes).
ACCELERATED_TYPE_PATTERNS = ("p*", "g*", "inf*", "trn*", "dl*")


# Families AWS sells through Capacity Blocks for ML (the SageMaker API's ReservedCapacityInstanceType:
# p4d, p4de, p5, p5e, p5en, p6-b200, p6e-gb200, trn1, trn2; with their n/u/b300 siblings): capacity is
# scarce, so a stopped host may not start again (InsufficientInstanceCapacity).
T = TypeVar("T")

SCARCE_FAMILIES = frozenset(
    {"p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200", "trn1", "trn1n", "trn2", "trn2u"}
)


def is_scarce(instance_type: str) -> bool:
    return instance_type.split(".", 1)[0] in SCARCE_FAMILIES


def is_accelerated_family(instance_type: str) -> bool:
    # Every EC2 family starting with p or g carries GPUs (p3, p4d, g4dn, g5g, gr6, ...).
    return instance_type.split(".", 1)[0].startswith(ACCELERATED_FAMILY_PREFIXES)


@dataclass(frozen=True)
class AcceleratorTable:
    by_model: Mapping[str, AcceleratorSpec]
    # (EC2 name, per-device MiB or None) -> model key; EC2 says "A100" for both 40 and 80 GB parts.
    ec2_names: Mapping[tuple[str, int | None], str] = field(default_factory=dict)

    def model_for(self, ec2_name: str, memory_mib: int | None) -> str:
        exact = self.ec2_names.get((ec2_name, memory_mib))
        if exact:
            return exact
        return self.ec2_names.get((ec2_name, None), "")

    def get(self, model: str) -> AcceleratorSpec | None:
        return self.by_model.get(model)


@dataclass(frozen=True)
class Catalog:
    """Specs for one region. `offered` is None when the region's offerings could not be read."""

    region: str
    specs: Mapping[str, InstanceTypeSpec]
    accelerators: AcceleratorTable
    offered: frozenset[str] | None = None

    def spec(self, instance_type: str) -> InstanceTypeSpec | None:
        return self.specs.get(instance_type)

    def accelerator(self, spec: InstanceTypeSpec) -> AcceleratorSpec | None:
        return self.accelerators.get(spec.accelerator_model)

    def is_offered(self, instance_type: str) -> bool | None:
        if self.offered is None:
            return None
        return instance_type in self.offered

    def resize_targets(self, kind: AcceleratorKind) -> tuple[InstanceTypeSpec, ...]:
        """Types of one accelerator kind a host could move to in place: offered here, virtualised, with a
        known accelerator. Worked out once per catalog: every host asks."""
        return self._targets_by_kind.get(kind, ())

    @cached_property
    def _targets_by_kind(self) -> dict[AcceleratorKind, tuple[InstanceTypeSpec, ...]]:
        grouped: dict[AcceleratorKind, list[InstanceTypeSpec]] = {}
        for spec in self.specs.values():
            if spec.bare_metal or spec.fractional_gpu or self.is_offered(spec.instance_type) is False:
                continue
            if spec.accelerator_kind is AcceleratorKind.UNMONITORED or not spec.accelerator_model:
                continue
            grouped.setdefault(spec.accelerator_kind, []).append(spec)
        return {kind: tuple(specs) for kind, specs in grouped.items()}

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """A value worked out from this catalog alone, built on first use and kept: every host of a region
        asks the same questions (which types a g5.xlarge could move to, how fast each is for its work)."""
        cache = self._derived
        if key not in cache:
            cache[key] = build()
        return cast(T, cache[key])

    @cached_property
    def _derived(self) -> dict[Hashable, object]:
        return {}
