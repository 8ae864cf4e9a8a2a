"""Low-confidence pointers to another Neuron generation or kind, which needs a recompiled model."""

from __future__ import annotations

from decimal import Decimal

from rightsizer.domain.catalog import Catalog
from rightsizer.domain.limits.demand import Demand
from rightsizer.domain.models.advice import Alternative, Confidence
from rightsizer.domain.models.hosts import AcceleratorKind, Instance, InstanceTypeSpec
from rightsizer.domain.models.money import monthly
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.sizing.targets import per_price_book


def _priced_neuron_types(catalog: Catalog, prices: PriceBook) -> tuple[tuple[Decimal, InstanceTypeSpec], ...]:
    """Neuron resize targets with their hourly price, cheapest first (at equal price in the catalog's order)."""

    def build() -> tuple[tuple[Decimal, InstanceTypeSpec], ...]:
        priced = []
        for target in catalog.resize_targets(AcceleratorKind.NEURON):
            hourly = prices.hourly(target.instance_type)
            if hourly is not None:
                priced.append((hourly, target))
        priced.sort(key=lambda pair: pair[0])  # stable: ties keep the catalog's order
        return tuple(priced)

    return per_price_book(catalog, prices, "priced neuron types", build)


def neuron_alternatives(
    instance: Instance,
    spec: InstanceTypeSpec,
    catalog: Catalog,
    prices: PriceBook,
    demand: Demand,
    below: Decimal,
) -> tuple[Alternative, ...]:
    """Low-confidence pointers to another accelerator generation/kind that would need a recompiled model."""
    if spec.accelerator_kind is AcceleratorKind.NVIDIA and (not demand.memory_measured or demand.units > 1):
        return ()  # only single-GPU work whose memory was measured can be pointed at one Neuron device
    for hourly, target in _priced_neuron_types(catalog, prices):
        if hourly >= below:
            break  # cheapest first: no later type saves anything either
        if target.accelerator_model == spec.accelerator_model or instance.architecture not in target.architectures:
            continue
        # A GPU's working set must fit one Neuron device; a NeuronCore's must fit one NeuronCore's share.
        memory = (
            target.memory_per_unit_mib
            if spec.accelerator_kind is AcceleratorKind.NEURON
            else float(target.accelerator_memory_mib)
        )
        if memory < demand.memory_per_unit_mib:
            continue
        if target.vcpus < demand.vcpus or target.memory_mib < demand.host_memory_mib:
            continue
        if spec.accelerator_kind is AcceleratorKind.NEURON and target.compute_units < demand.units:
            continue
        return (  # the cheapest that fits
            Alternative(
                instance_type=target.instance_type,
                monthly_cost=monthly(hourly),
                confidence=Confidence.LOW,
                note=f"{target.accelerator_model}: the model must be compiled with the AWS Neuron SDK; "
                "test before moving",
            ),
        )
    return ()
