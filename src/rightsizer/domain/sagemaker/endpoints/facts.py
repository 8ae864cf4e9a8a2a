"""What one endpoint variant is judged on: its facts, and the shapes of its gates and rules."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.models.money import monthly
from rightsizer.domain.policy import Policy
from rightsizer.domain.sagemaker.advice import (
    Draft,
    hourly_price,
)
from rightsizer.domain.sagemaker.prices import SageMakerPrices
from rightsizer.domain.sagemaker.usage import VariantUsage
from rightsizer.domain.sagemaker_models import EndpointVariant


@dataclass(frozen=True)
class VariantFacts:
    variant: EndpointVariant
    usage: VariantUsage | None
    spec: InstanceTypeSpec | None  # the EC2 hardware of the ml.* type
    catalog: Catalog
    prices: SageMakerPrices | None  # hosting
    policy: Policy
    now: datetime
    # Requests the endpoint's other variants served in the window (0: none, or none had a datapoint).
    sibling_invocations: float = 0.0
    # The variant's share of the endpoint's weights (CurrentWeight over their sum); None: a weight is unknown.
    weight_share: float | None = None

    @property
    def siblings_serve(self) -> bool:
        """Another variant of the same endpoint had requests in the window: this one can go without the endpoint."""
        return self.sibling_invocations > 0

    @property
    def requests_due(self) -> float | None:
        """About how many requests SageMaker's weighted routing sent here, beside what the other variants served
        (0 for a weight-0 variant, which gets only requests that name it; None: a weight is unknown)."""
        share = self.weight_share
        if share is None:
            return None
        if share >= 1:
            return math.inf if self.siblings_serve else 0.0
        return self.sibling_invocations * share / (1 - share)

    @property
    def hourly(self) -> Decimal | None:
        return hourly_price(self.prices, self.variant.instance_type)

    @property
    def cost_now(self) -> Decimal | None:
        hourly = self.hourly
        return None if hourly is None else monthly(hourly * self.variant.instance_count)

    @property
    def age_days(self) -> float:
        return (self.now - self.variant.created).total_seconds() / 86400


VariantGate = Callable[[VariantFacts], Draft | None]
VariantRule = Callable[[VariantFacts, VariantUsage, InstanceTypeSpec], Draft | None]
