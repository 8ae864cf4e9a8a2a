"""Reading reservations and plans (adapters/aws/commitments.py). moto implements none of these APIs
(DescribeReservedInstances raises NotImplementedError, DescribeCapacityReservations and Savings Plans do not
exist), so botocore's Stubber answers with the APIs' documented shapes and checks every request's parameters."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from rightsizer.adapters.aws.commitments import Ec2Commitments
from rightsizer.domain.commitments import CapacityKind
from rightsizer.services.collect import read_commitments
from rightsizer.services.ports import SourceUnavailable

REGION = "us-east-1"
END = datetime(2027, 3, 31, tzinfo=UTC)


@pytest.fixture
def clients() -> Iterator[tuple[Any, Stubber, Any, Stubber]]:
    ec2 = boto3.client("ec2", region_name=REGION)
    plans = boto3.client("savingsplans", region_name=REGION)
    with Stubber(ec2) as ec2_stub, Stubber(plans) as plans_stub:
        yield ec2, ec2_stub, plans, plans_stub
        ec2_stub.assert_no_pending_responses()
        plans_stub.assert_no_pending_responses()


def test_reserved_instances_regional_and_zonal_linux_only(clients: tuple[Any, Stubber, Any, Stubber]) -> None:
    ec2, stub, plans, _ = clients
    base = {"State": "active", "ProductDescription": "Linux/UNIX", "InstanceTenancy": "default", "End": END}
    stub.add_response(
        "describe_reserved_instances",
        {
            "ReservedInstances": [
                {
                    **base,
                    "ReservedInstancesId": "ri-1",
                    "InstanceType": "g5.12xlarge",
                    "InstanceCount": 2,
                    "Scope": "Region",
                },
                {
                    **base,
                    "ReservedInstancesId": "ri-2",
                    "InstanceType": "p3.8xlarge",
                    "InstanceCount": 1,
                    "Scope": "Availability Zone",
                    "AvailabilityZone": "us-east-1b",
                },
                {
                    **base,
                    "ReservedInstancesId": "ri-win",
                    "InstanceType": "g5.xlarge",
                    "InstanceCount": 1,
                    "Scope": "Region",
                    "ProductDescription": "Windows",
                },
            ]
        },
        {"Filters": [{"Name": "state", "Values": ["active"]}]},
    )

    found = Ec2Commitments(ec2, plans, REGION).reserved_instances()

    assert [(r.reservation_id, r.instance_type, r.count, r.availability_zone, r.end) for r in found] == [
        ("ri-1", "g5.12xlarge", 2, None, END),
        ("ri-2", "p3.8xlarge", 1, "us-east-1b", END),
    ]


def test_capacity_reservations_and_blocks(clients: tuple[Any, Stubber, Any, Stubber]) -> None:
    ec2, stub, plans, _ = clients
    stub.add_response(
        "describe_capacity_reservations",
        {
            "CapacityReservations": [
                {
                    "CapacityReservationId": "cr-odcr",
                    "InstanceType": "p4d.24xlarge",
                    "AvailabilityZone": "us-east-1a",
                    "TotalInstanceCount": 2,
                    "AvailableInstanceCount": 1,
                    "InstanceMatchCriteria": "open",
                    "ReservationType": "default",
                    "State": "active",
                },
                {
                    "CapacityReservationId": "cr-block",
                    "InstanceType": "p5.48xlarge",
                    "AvailabilityZone": "us-east-1a",
                    "TotalInstanceCount": 1,
                    "AvailableInstanceCount": 0,
                    "InstanceMatchCriteria": "targeted",
                    "ReservationType": "capacity-block",
                    "EndDate": END,
                    "State": "active",
                },
            ]
        },
        {"Filters": [{"Name": "state", "Values": ["active"]}]},
    )

    odcr, block = Ec2Commitments(ec2, plans, REGION).capacity_reservations()

    assert (odcr.kind, odcr.used, odcr.open_matching) == (CapacityKind.ODCR, 1, True)
    assert (block.kind, block.used, block.open_matching, block.end) == (CapacityKind.CAPACITY_BLOCK, 1, False, END)


def test_savings_plans_with_their_rates_for_this_region(clients: tuple[Any, Stubber, Any, Stubber]) -> None:
    ec2, _, plans, stub = clients
    stub.add_response(
        "describe_savings_plans",
        {
            "savingsPlans": [
                {
                    "savingsPlanId": "sp-compute",
                    "savingsPlanType": "Compute",
                    "commitment": "12.5",
                    "end": "2027-03-31T00:00:00Z",
                },
                {
                    "savingsPlanId": "sp-ec2",
                    "savingsPlanType": "EC2Instance",
                    "commitment": "3",
                    "ec2InstanceFamily": "g5",
                    "region": "us-east-1",
                },
                {
                    "savingsPlanId": "sp-other-region",
                    "savingsPlanType": "EC2Instance",
                    "commitment": "3",
                    "region": "eu-west-1",
                },
                {"savingsPlanId": "sp-sagemaker", "savingsPlanType": "SageMaker", "commitment": "9"},
            ],
        },
        {"states": ["active"]},
    )
    filters = [
        {"name": "region", "values": [REGION]},
        {"name": "productDescription", "values": ["Linux/UNIX"]},
        {"name": "tenancy", "values": ["shared"]},
        {"name": "productType", "values": ["EC2"]},
    ]

    def rate(instance_type: str, value: str, usage: str = "BoxUsage") -> dict[str, Any]:
        return {
            "rate": value,
            "usageType": f"{usage}:{instance_type}",
            "properties": [{"name": "instanceType", "value": instance_type}, {"name": "region", "value": REGION}],
        }

    stub.add_response(
        "describe_savings_plan_rates",
        {"savingsPlanId": "sp-compute", "searchResults": [rate("g5.xlarge", "0.62")], "nextToken": "page-2"},
        {"savingsPlanId": "sp-compute", "filters": filters},
    )
    stub.add_response(
        "describe_savings_plan_rates",
        {
            "savingsPlanId": "sp-compute",
            "searchResults": [rate("p4d.24xlarge", "15.1"), rate("g5.xlarge", "2", "DedicatedUsage")],
        },
        {"savingsPlanId": "sp-compute", "filters": filters, "nextToken": "page-2"},
    )
    stub.add_response(
        "describe_savings_plan_rates",
        {"savingsPlanId": "sp-ec2", "searchResults": [rate("g5.xlarge", "0.55"), rate("m5.large", "0.05")]},
        {"savingsPlanId": "sp-ec2", "filters": filters},
    )

    compute, ec2_plan = Ec2Commitments(ec2, plans, REGION).savings_plans(["g5.xlarge", "p4d.24xlarge"])

    assert (compute.plan_id, compute.hourly_commitment, compute.end) == ("sp-compute", Decimal("12.5"), END)
    assert compute.rates == {"g5.xlarge": Decimal("0.62"), "p4d.24xlarge": Decimal("15.1")}  # shared tenancy only
    assert (ec2_plan.family, ec2_plan.region, ec2_plan.rates) == ("g5", REGION, {"g5.xlarge": Decimal("0.55")})
    assert ec2_plan.applies_to("g5.xlarge", REGION) and not ec2_plan.applies_to("p4d.24xlarge", REGION)


def test_what_cannot_be_read_is_a_warning_and_the_rest_still_counts(clients: tuple[Any, Stubber, Any, Stubber]) -> None:
    ec2, ec2_stub, plans, plans_stub = clients
    ec2_stub.add_response("describe_reserved_instances", {"ReservedInstances": []})
    ec2_stub.add_response("describe_capacity_reservations", {"CapacityReservations": []})
    plans_stub.add_client_error(
        "describe_savings_plans",
        "AccessDeniedException",
        "not authorized to perform: savingsplans:DescribeSavingsPlans",
    )
    source = Ec2Commitments(ec2, plans, REGION)

    commitments, warnings = read_commitments(source, ["g5.xlarge"])

    assert commitments.read and commitments.savings_plans == ()
    (warning,) = warnings
    assert warning.startswith("Savings Plans could not be read (Savings Plans: ")
    assert "savings they cover are shown at list price" in warning
    with pytest.raises(SourceUnavailable):
        Ec2Commitments(ec2, plans, REGION).savings_plans(["g5.xlarge"])  # nothing left stubbed: an error
