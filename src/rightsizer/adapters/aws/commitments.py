"""Reserved Instances, capacity reservations (ODCRs and Capacity Blocks) and Savings Plans of one account, in one
region: the `CommitmentSource` port. The analyzer prices savings with them (domain/commitments.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from rightsizer.adapters.aws.session import read_source
from rightsizer.domain.commitments import CapacityKind, CapacityReservation, ReservedInstances, SavingsPlan

T = TypeVar("T")

# Size flexibility and Savings Plans rates concern Linux on shared tenancy, as the price list the analyzer uses.
_LINUX = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")
_EC2_PLANS = ("Compute", "EC2Instance")  # SageMaker plans do not cover EC2 instances


def _money(text: Any) -> Decimal | None:
    try:
        return Decimal(str(text))
    except (InvalidOperation, ValueError):
        return None


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


class Ec2Commitments:
    """`ec2` is the region's EC2 client; `savingsplans` the Savings Plans client (a global service)."""

    def __init__(self, ec2: Any, savingsplans: Any, region: str) -> None:
        self._ec2 = ec2
        self._savingsplans = savingsplans
        self._region = region

    def reserved_instances(self) -> tuple[ReservedInstances, ...]:
        def read() -> tuple[ReservedInstances, ...]:
            answer = self._ec2.describe_reserved_instances(Filters=[{"Name": "state", "Values": ["active"]}])
            return tuple(
                ReservedInstances(
                    reservation_id=str(raw["ReservedInstancesId"]),
                    instance_type=str(raw["InstanceType"]),
                    count=int(raw.get("InstanceCount") or 0),
                    availability_zone=str(raw["AvailabilityZone"]) if raw.get("Scope") != "Region" else None,
                    end=_time(raw.get("End")),
                )
                for raw in answer.get("ReservedInstances", [])
                if raw.get("ProductDescription", "Linux/UNIX") in _LINUX
                and raw.get("InstanceTenancy", "default") == "default"
            )

        return read_source("Reserved Instances", self._region, read)

    def capacity_reservations(self) -> tuple[CapacityReservation, ...]:
        def read() -> tuple[CapacityReservation, ...]:
            found: list[CapacityReservation] = []
            paginator = self._ec2.get_paginator("describe_capacity_reservations")
            for page in paginator.paginate(Filters=[{"Name": "state", "Values": ["active"]}]):
                for raw in page.get("CapacityReservations", []):
                    block = raw.get("ReservationType") == "capacity-block"
                    found.append(
                        CapacityReservation(
                            reservation_id=str(raw["CapacityReservationId"]),
                            instance_type=str(raw["InstanceType"]),
                            availability_zone=str(raw.get("AvailabilityZone", "")),
                            total=int(raw.get("TotalInstanceCount") or 0),
                            available=int(raw.get("AvailableInstanceCount") or 0),
                            kind=CapacityKind.CAPACITY_BLOCK if block else CapacityKind.ODCR,
                            end=_time(raw.get("EndDate")),
                            open_matching=raw.get("InstanceMatchCriteria", "open") == "open",
                        )
                    )
            return tuple(found)

        return read_source("capacity reservations", self._region, read)

    def savings_plans(self, instance_types: Sequence[str]) -> tuple[SavingsPlan, ...]:
        wanted = set(instance_types)

        def read() -> tuple[SavingsPlan, ...]:
            plans = []
            for raw in self._pages(self._savingsplans.describe_savings_plans, "savingsPlans", states=["active"]):
                if raw.get("savingsPlanType") not in _EC2_PLANS:
                    continue
                plan_region = raw.get("region") or None
                if plan_region not in (None, self._region):
                    continue  # an EC2 Instance Savings Plan of another region
                commitment = _money(raw.get("commitment"))
                if commitment is None:
                    continue
                plans.append(
                    SavingsPlan(
                        plan_id=str(raw["savingsPlanId"]),
                        plan_type=str(raw["savingsPlanType"]),
                        hourly_commitment=commitment,
                        rates=self._rates(str(raw["savingsPlanId"]), wanted),
                        family=raw.get("ec2InstanceFamily") or None,
                        region=plan_region,
                        end=_time(raw.get("end")),
                    )
                )
            return tuple(plans)

        return read_source("Savings Plans", self._region, read)

    def _rates(self, plan_id: str, wanted: set[str]) -> Mapping[str, Decimal]:
        filters = [
            {"name": "region", "values": [self._region]},
            {"name": "productDescription", "values": ["Linux/UNIX"]},
            {"name": "tenancy", "values": ["shared"]},
            {"name": "productType", "values": ["EC2"]},
        ]
        rates: dict[str, Decimal] = {}
        for result in self._pages(
            self._savingsplans.describe_savings_plan_rates, "searchResults", savingsPlanId=plan_id, filters=filters
        ):
            properties = {str(p.get("name")): str(p.get("value")) for p in result.get("properties", [])}
            instance_type = properties.get("instanceType", "")
            rate = _money(result.get("rate"))
            # BoxUsage: on-demand shared-tenancy hours (not dedicated hosts, not reservations).
            if instance_type in wanted and rate is not None and "BoxUsage" in str(result.get("usageType", "")):
                rates[instance_type] = rate
        return rates

    @staticmethod
    def _pages(call: Callable[..., Any], key: str, **kwargs: Any) -> Iterator[Mapping[str, Any]]:
        """The Savings Plans API pages with nextToken and has no boto3 paginator."""
        token: str | None = None
        while True:
            answer = call(**kwargs, **({"nextToken": token} if token else {}))
            yield from answer.get(key, [])
            token = answer.get("nextToken")
            if not token:
                return
