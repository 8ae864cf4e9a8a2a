"""What SageMaker charges per hour for an `ml.*` instance, by what the instance is used for.

SageMaker prices its instances separately from EC2 (Price List service `AmazonSageMaker`) and separately for each
use: a real-time endpoint ("hosting"), a training job, a notebook instance. The figures are close but not always
equal: ml.g6e.2xlarge in us-east-1 is $2.8026 an hour to host and $2.80 to train. A price is therefore always
the price of one component, and a component without a known price has none: never another component's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

SageMakerComponent = Literal["hosting", "training", "notebook"]

# The bundled snapshot's keys, in the order the snapshot lists them.
SAGEMAKER_COMPONENTS: tuple[SageMakerComponent, ...] = ("hosting", "training", "notebook")


@dataclass(frozen=True)
class SageMakerPrices:
    """On-demand USD per hour of `ml.*` types in one region, for one component, with where each figure came from."""

    region: str
    component: SageMakerComponent
    hourly: Mapping[str, Decimal]
    source: str  # e.g. "AWS Price List API (AmazonSageMaker)" or "bundled SageMaker price snapshot"
    sources: Mapping[str, str] = field(default_factory=dict)  # instance type -> its own source, when it has one

    def hourly_of(self, instance_type: str) -> Decimal | None:
        return self.hourly.get(instance_type)

    def source_of(self, instance_type: str) -> str | None:
        """Where the price of `instance_type` came from, None when there is no price."""
        if instance_type not in self.hourly:
            return None
        return self.sources.get(instance_type, self.source)
