"""A region's (or a shard's) SageMaker resources, their shards, and the analysis of all of them.

Pure: no I/O (see the package's docstring for what SageMaker publishes and how it is read).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.policy import Policy
from rightsizer.domain.resources import RESOURCES, ResourceKind
from rightsizer.domain.sagemaker.advice import SageMakerPriceBook
from rightsizer.domain.sagemaker.endpoints.analysis import analyze_variants
from rightsizer.domain.sagemaker.notebooks import analyze_notebooks
from rightsizer.domain.sagemaker.training import analyze_training
from rightsizer.domain.sagemaker.usage import NotebookUsage, TrainingUsage, VariantUsage
from rightsizer.domain.sagemaker_models import EndpointVariant, NotebookInstance, TrainingFamily

# =============================================================================================
# A region's (or a shard's) SageMaker resources


@dataclass(frozen=True)
class SageMakerResources:
    """SageMaker resources of one (account, region), or of one shard of it, with the prices to judge them."""

    variants: tuple[EndpointVariant, ...] = ()
    notebooks: tuple[NotebookInstance, ...] = ()
    training: tuple[TrainingFamily, ...] = ()
    prices: SageMakerPriceBook = field(default_factory=lambda: SageMakerPriceBook(""))

    @property
    def resource_ids(self) -> tuple[str, ...]:
        return (
            *(v.resource_id for v in self.variants),
            *(n.resource_id for n in self.notebooks),
            *(t.resource_id for t in self.training),
        )

    def __len__(self) -> int:
        return len(self.variants) + len(self.notebooks) + len(self.training)


@dataclass(frozen=True)
class SageMakerUsage:
    """The summaries of one shard's SageMaker resources, by resource id."""

    variants: Mapping[str, VariantUsage] = field(default_factory=dict)
    notebooks: Mapping[str, NotebookUsage] = field(default_factory=dict)
    training: Mapping[str, TrainingUsage] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.variants) + len(self.notebooks) + len(self.training)


def shard_resources(resources: SageMakerResources, size: int) -> list[SageMakerResources]:
    """Consecutive runs of at most `size` resources (an endpoint's variants stay together, so that an idle variant
    knows whether its siblings serve), in a stable order: the same inventory gives the same shards."""
    if size < 1:
        raise ValueError(f"a shard holds at least one resource, got {size}")
    units: list[tuple[str, tuple[object, ...]]] = []
    by_endpoint: dict[str, list[EndpointVariant]] = {}
    for variant in sorted(resources.variants, key=lambda v: (v.endpoint_name, v.variant_name)):
        by_endpoint.setdefault(variant.endpoint_name, []).append(variant)
    units.extend(("variants", tuple(group)) for group in by_endpoint.values())
    units.extend(("notebooks", (n,)) for n in sorted(resources.notebooks, key=lambda n: n.name))
    units.extend(("training", (t,)) for t in sorted(resources.training, key=lambda t: t.resource_id))
    shards: list[SageMakerResources] = []
    current: dict[str, list[object]] = {"variants": [], "notebooks": [], "training": []}
    held = 0
    for kind, items in units:
        if held and held + len(items) > size:
            shards.append(_shard(current, resources.prices))
            current, held = {"variants": [], "notebooks": [], "training": []}, 0
        current[kind].extend(items)
        held += len(items)
    if held:
        shards.append(_shard(current, resources.prices))
    return shards


def _shard(parts: Mapping[str, list[object]], prices: SageMakerPriceBook) -> SageMakerResources:
    return SageMakerResources(
        variants=tuple(p for p in parts["variants"] if isinstance(p, EndpointVariant)),
        notebooks=tuple(p for p in parts["notebooks"] if isinstance(p, NotebookInstance)),
        training=tuple(p for p in parts["training"] if isinstance(p, TrainingFamily)),
        prices=prices,
    )


def analyze_sagemaker(
    resources: SageMakerResources, usage: SageMakerUsage, catalog: Catalog, policy: Policy, now: datetime
) -> list[Recommendation]:
    """One recommendation per endpoint variant, notebook instance and training family."""
    return [
        *analyze_variants(resources.variants, usage.variants, catalog, resources.prices, policy, now),
        *analyze_notebooks(resources.notebooks, usage.notebooks, catalog, resources.prices, policy, now),
        *analyze_training(resources.training, usage.training, catalog, resources.prices, policy, now),
    ]


def kind_label(kind: ResourceKind) -> str:
    return RESOURCES[kind].label
