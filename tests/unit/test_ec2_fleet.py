"""Ec2Fleet and parse_instance_type: the accelerated fleet, type specs, offerings and Spot prices.

Against moto's EC2 in-process (its DescribeInstanceTypes data is a copy of the real API's), and
botocore's Stubber where moto cannot show a behaviour (fresh Spot prices: moto only has 2006 ones).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from rightsizer.adapters.aws.ec2 import (
    SPOT_HISTORY_KEPT,
    SPOT_PRICE_WINDOW,
    Ec2Fleet,
    parse_instance,
    parse_instance_type,
)
from rightsizer.adapters.bundled import accelerator_table
from rightsizer.domain.catalog import is_accelerated_family
from rightsizer.domain.models.hosts import AcceleratorKind, Instance
from rightsizer.domain.platforms import Platform
from tests.factories import ACCOUNT

REGION = "us-east-1"
LINUX_AMI = "ami-760aaa0f"  # amzn-ami-hvm, one of the images moto ships in every region
LINUX_DESCRIPTIONS = ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"]


def moto_type(name: str) -> dict[str, Any]:
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    raw: dict[str, Any] = INSTANCE_TYPES[name]
    return raw


def moto_type_names() -> list[str]:
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    return sorted(INSTANCE_TYPES)


# 1. parse_instance_type on moto's copy of the DescribeInstanceTypes data ---------------------------


def test_g5_12xlarge_is_four_a10g_with_their_memory_and_host_size() -> None:
    spec = parse_instance_type(moto_type("g5.12xlarge"), accelerator_table())

    assert spec is not None
    assert spec.accelerator_kind is AcceleratorKind.NVIDIA
    assert spec.accelerator_model == "A10G"
    assert spec.accelerator_count == 4
    assert spec.compute_units == 4
    assert spec.accelerator_memory_mib == 22888
    assert spec.memory_per_unit_mib == 22888.0
    assert spec.vcpus == 48
    assert spec.memory_mib == 196608
    assert spec.network_gbps == 40.0
    assert spec.architectures == ("x86_64",)
    assert spec.fractional_gpu is False
    assert spec.listed_by_api is True
    assert spec.neuron_cores == 0


def test_inf1_6xlarge_is_four_inferentia_devices_with_sixteen_neuron_cores() -> None:
    spec = parse_instance_type(moto_type("inf1.6xlarge"), accelerator_table())

    assert spec is not None
    assert spec.accelerator_kind is AcceleratorKind.NEURON
    assert spec.accelerator_model == "Inferentia"
    assert spec.accelerator_count == 4
    assert spec.neuron_cores == 16
    assert spec.compute_units == 16  # NeuronCores are the unit neuron-monitor reports
    assert spec.accelerator_memory_mib == 8192
    assert spec.memory_per_unit_mib == 8192 * 4 / 16
    assert spec.vcpus == 24
    assert spec.unit_name == "NeuronCore"


def test_trn1_2xlarge_is_one_trainium_device_with_two_cores() -> None:
    spec = parse_instance_type(moto_type("trn1.2xlarge"), accelerator_table())

    assert spec is not None
    assert spec.accelerator_kind is AcceleratorKind.NEURON
    assert spec.accelerator_model == "Trainium"
    assert (spec.accelerator_count, spec.neuron_cores) == (1, 2)


@pytest.mark.parametrize(
    ("instance_type", "model"),
    [
        ("p4d.24xlarge", "A100-SXM4-40GB"),  # EC2 says "A100" for both: the memory picks the key
        ("p4de.24xlarge", "A100-SXM4-80GB"),
        ("p3dn.24xlarge", "V100-SXM2-32GB"),
        ("g4dn.xlarge", "T4"),  # no memory-specific entry: the name alone
    ],
)
def test_model_key_comes_from_name_and_per_gpu_memory(instance_type: str, model: str) -> None:
    spec = parse_instance_type(moto_type(instance_type), accelerator_table())

    assert spec is not None
    assert spec.accelerator_model == model
    assert accelerator_table().get(model) is not None


def test_p4d_is_eight_a100_40gb_with_efa() -> None:
    spec = parse_instance_type(moto_type("p4d.24xlarge"), accelerator_table())

    assert spec is not None
    assert (spec.accelerator_count, spec.accelerator_memory_mib, spec.vcpus) == (8, 40960, 96)
    assert spec.efa_supported is True


@pytest.mark.parametrize("instance_type", ["g6f.large", "g6f.xlarge", "g6f.2xlarge", "g6f.4xlarge"])
def test_g6f_slices_are_flagged_fractional(instance_type: str) -> None:
    spec = parse_instance_type(moto_type(instance_type), accelerator_table())

    assert spec is not None
    assert spec.fractional_gpu is True
    assert spec.accelerator_model == "L4"


def test_whole_gpu_types_are_not_fractional() -> None:
    spec = parse_instance_type(moto_type("g6.xlarge"), accelerator_table())

    assert spec is not None
    assert spec.fractional_gpu is False


def _non_nvidia_gpu_entries() -> list[str]:
    return [
        name
        for name in moto_type_names()
        if any(gpu.get("Manufacturer") != "NVIDIA" for gpu in (moto_type(name).get("GpuInfo") or {}).get("Gpus", []))
    ]


def test_amd_gpu_is_unmonitored() -> None:
    # moto 5.2.5 has no g4ad (AMD Radeon Pro V520) entry: derive one from a real entry when absent.
    amd = _non_nvidia_gpu_entries()
    if amd:
        raw = moto_type(amd[0])
    else:
        raw = copy.deepcopy(moto_type("g5.xlarge"))
        raw["InstanceType"] = "g4ad.xlarge"
        raw["GpuInfo"]["Gpus"][0].update(
            {"Name": "Radeon Pro V520", "Manufacturer": "AMD", "MemoryInfo": {"SizeInMiB": 8192}}
        )

    spec = parse_instance_type(raw, accelerator_table())

    assert spec is not None
    assert spec.accelerator_kind is AcceleratorKind.UNMONITORED
    if not amd:
        assert spec.accelerator_model == "Radeon-Pro-V520"


@pytest.mark.parametrize("instance_type", ["m5.large", "c5.xlarge", "t3.micro", "trn2u.48xlarge"])
def test_types_without_accelerator_info_are_not_specs(instance_type: str) -> None:
    # trn2u.48xlarge is in an accelerated family, but moto's entry has neither GpuInfo nor NeuronInfo.
    assert parse_instance_type(moto_type(instance_type), accelerator_table()) is None


def test_every_moto_type_parses_exactly_when_it_lists_an_accelerator() -> None:
    table = accelerator_table()
    for name in moto_type_names():
        raw = moto_type(name)
        has_accelerator = bool((raw.get("GpuInfo") or {}).get("Gpus")) or bool(
            (raw.get("NeuronInfo") or {}).get("NeuronDevices")
        )
        spec = parse_instance_type(raw, table)
        assert (spec is not None) == has_accelerator, name
        if spec is not None:
            assert spec.instance_type == name
            assert spec.vcpus > 0 and spec.memory_mib > 0, name
            assert is_accelerated_family(name), name


# 2. Ec2Fleet against moto's EC2 ---------------------------------------------------------------------


@pytest.fixture
def ec2(moto_aws: None) -> Any:
    return boto3.client("ec2", region_name=REGION)


def fleet(client: Any) -> Ec2Fleet:
    return Ec2Fleet(client, ACCOUNT, REGION, accelerator_table())


def launch(
    client: Any,
    instance_type: str,
    *,
    name: str | None = None,
    zone: str = "us-east-1a",
    count: int = 1,
    tags: dict[str, str] | None = None,
    **extra: Any,
) -> list[str]:
    all_tags = {**({"Name": name} if name else {}), **(tags or {})}
    kwargs: dict[str, Any] = {
        "ImageId": LINUX_AMI,
        "InstanceType": instance_type,
        "MinCount": count,
        "MaxCount": count,
        "Placement": {"AvailabilityZone": zone},
        **extra,
    }
    if all_tags:
        kwargs["TagSpecifications"] = [
            {"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in all_tags.items()]}
        ]
    response = client.run_instances(**kwargs)
    return [str(i["InstanceId"]) for i in response["Instances"]]


def by_id(instances: list[Instance]) -> dict[str, Instance]:
    return {i.instance_id: i for i in instances}


def test_accelerated_instances_lists_only_p_g_inf_trn_families(ec2: Any) -> None:
    accelerated = {
        t: launch(ec2, t)[0]
        for t in ("g5.xlarge", "p3.8xlarge", "p4d.24xlarge", "g4dn.xlarge", "inf1.6xlarge", "trn1.2xlarge")
    }
    for other in ("m5.large", "c5.xlarge", "t3.micro", "r5.large"):
        launch(ec2, other)

    found = fleet(ec2).accelerated_instances()

    assert sorted(i.instance_id for i in found) == sorted(accelerated.values())
    assert {i.instance_id: i.instance_type for i in found} == {iid: t for t, iid in accelerated.items()}


def test_instance_fields_are_read_from_describe_instances(ec2: Any) -> None:
    before = datetime.now(UTC) - timedelta(seconds=5)
    (iid,) = launch(ec2, "g5.12xlarge", name="embeddings-api", zone="us-east-1b", tags={"team": "search"})

    (host,) = fleet(ec2).accelerated_instances()

    assert host.instance_id == iid
    assert host.account_id == ACCOUNT
    assert host.region == REGION
    assert host.availability_zone == "us-east-1b"
    assert host.instance_type == "g5.12xlarge"
    assert host.state == "running"
    assert host.name == "embeddings-api"
    assert host.tags == {"Name": "embeddings-api", "team": "search"}
    assert host.lifecycle == "on-demand"
    assert host.asg_name is None
    assert host.root_device_type == "ebs"
    assert host.architecture == "x86_64"
    assert host.uses_efa is False
    # moto's LaunchTime is the creation time; it comes back timezone-aware.
    assert host.launch_time.tzinfo is not None
    assert before <= host.launch_time <= datetime.now(UTC) + timedelta(seconds=5)


def test_spot_instances_carry_the_spot_lifecycle(ec2: Any) -> None:
    (spot,) = launch(ec2, "g5.2xlarge", InstanceMarketOptions={"MarketType": "spot"})
    (on_demand,) = launch(ec2, "g5.2xlarge")

    found = by_id(fleet(ec2).accelerated_instances())

    assert found[spot].lifecycle == "spot"
    assert found[on_demand].lifecycle == "on-demand"


def test_auto_scaling_group_membership_comes_from_the_group_tag(ec2: Any) -> None:
    ec2.create_launch_template(
        LaunchTemplateName="serving-template",
        LaunchTemplateData={"ImageId": LINUX_AMI, "InstanceType": "g5.12xlarge"},
    )
    autoscaling = boto3.client("autoscaling", region_name=REGION)
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="serving-asg",
        LaunchTemplate={"LaunchTemplateName": "serving-template"},
        MinSize=2,
        MaxSize=2,
        DesiredCapacity=2,
        AvailabilityZones=["us-east-1a"],
        Tags=[{"Key": "Name", "Value": "serving-node", "PropagateAtLaunch": True}],
    )
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["serving-asg"])["AutoScalingGroups"][0]
    members = {i["InstanceId"] for i in group["Instances"]}
    (standalone,) = launch(ec2, "g5.12xlarge", name="standalone")

    found = by_id(fleet(ec2).accelerated_instances())

    assert set(found) == {*members, standalone}
    assert len(members) == 2
    for iid in members:
        assert found[iid].asg_name == "serving-asg"
        assert found[iid].tags["aws:autoscaling:groupName"] == "serving-asg"
        assert found[iid].name == "serving-node"
    assert found[standalone].asg_name is None


def test_stopped_hosts_are_listed_and_terminated_ones_are_not(ec2: Any) -> None:
    running, stopped, terminated = launch(ec2, "g4dn.2xlarge", count=3)
    ec2.stop_instances(InstanceIds=[stopped])
    ec2.terminate_instances(InstanceIds=[terminated])

    found = by_id(fleet(ec2).accelerated_instances())

    assert set(found) == {running, stopped}
    assert found[stopped].state == "stopped"
    assert found[running].state == "running"


@dataclass
class Sent:
    """DescribeInstances requests as botocore built them."""

    max_results_asked: list[int] = field(default_factory=list)
    requests: int = 0


def test_all_pages_of_describe_instances_are_read(ec2: Any) -> None:
    accelerated: list[str] = []
    for n in range(12):  # 12 reservations of 2 accelerated instances, plus 6 m5.large
        accelerated += launch(ec2, "g5.xlarge" if n % 2 else "p3.2xlarge", count=2)
        if n % 2:
            launch(ec2, "m5.large")
    sent = Sent()

    def small_pages(params: dict[str, Any], **_: Any) -> None:
        sent.max_results_asked.append(params.get("MaxResults", 0))
        sent.requests += 1
        params["MaxResults"] = 5  # 18 reservations -> 4 pages of at most 5

    ec2.meta.events.register("before-parameter-build.ec2.DescribeInstances", small_pages)

    found = fleet(ec2).accelerated_instances()

    assert sent.max_results_asked[0] == 200  # pages of 200: a page's XML tree is the inventory's peak memory
    assert sent.requests == math.ceil(18 / 5)
    assert sorted(i.instance_id for i in found) == sorted(accelerated)
    assert len(found) == len({i.instance_id for i in found}) == 24


def test_accelerated_specs_are_the_gpu_and_neuron_types_only(ec2: Any) -> None:
    specs = {spec.instance_type: spec for spec in fleet(ec2).accelerated_specs()}

    expected = {
        name
        for name in moto_type_names()
        if (moto_type(name).get("GpuInfo") or {}).get("Gpus")
        or (moto_type(name).get("NeuronInfo") or {}).get("NeuronDevices")
    }
    assert set(specs) == expected
    assert {"g5.12xlarge", "inf1.6xlarge", "trn1.2xlarge", "p4d.24xlarge", "g6f.large"} <= set(specs)
    assert not {"m5.large", "trn2u.48xlarge", "c5.xlarge"} & set(specs)
    assert specs["g5.12xlarge"] == parse_instance_type(moto_type("g5.12xlarge"), accelerator_table())
    kinds = {spec.accelerator_kind for spec in specs.values()}
    assert kinds == {AcceleratorKind.NVIDIA, AcceleratorKind.NEURON}


def test_offered_types_drops_what_the_region_no_longer_offers(ec2: Any) -> None:
    offered = fleet(ec2).offered_types(["p3.8xlarge", "g5.xlarge", "g4dn.xlarge", "g5.xlarge", "no.such"])

    assert offered == frozenset({"g5.xlarge", "g4dn.xlarge"})


def test_offered_types_asks_at_most_200_types_per_request(ec2: Any) -> None:
    region_offerings = {
        o["InstanceType"]
        for page in ec2.get_paginator("describe_instance_type_offerings").paginate(LocationType="region")
        for o in page["InstanceTypeOfferings"]
    }
    names = moto_type_names()[:450]
    chunks: list[list[str]] = []

    def on_params(params: dict[str, Any], **_: Any) -> None:
        (type_filter,) = [f for f in params.get("Filters", []) if f["Name"] == "instance-type"]
        chunks.append(list(type_filter["Values"]))

    ec2.meta.events.register("before-parameter-build.ec2.DescribeInstanceTypeOfferings", on_params)

    offered = fleet(ec2).offered_types([*names, *names[:10]])  # duplicates are asked once

    assert [len(chunk) for chunk in chunks] == [200, 200, 50]
    assert sorted(t for chunk in chunks for t in chunk) == sorted(names)
    assert offered == frozenset(names) & region_offerings
    assert offered  # the intersection is not trivially empty


def test_offered_types_of_nothing_is_empty_without_a_request(ec2: Any) -> None:
    with Stubber(ec2):  # any request would fail: nothing is queued
        assert fleet(ec2).offered_types([]) == frozenset()


def test_moto_spot_history_is_from_2006_and_ignored_as_stale(ec2: Any) -> None:
    history = ec2.describe_spot_price_history(InstanceTypes=["g5.xlarge"])["SpotPriceHistory"]
    assert history and all(item["Timestamp"].year == 2006 for item in history)

    assert fleet(ec2).latest(["g5.xlarge", "g5.2xlarge"], datetime.now(UTC)) == {}


# 3. Spot prices with botocore's Stubber ---------------------------------------------------------------

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("ec2", region_name=REGION)
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def price(instance_type: str, zone: str, age: timedelta, usd: str, description: str = "Linux/UNIX") -> dict[str, Any]:
    return {
        "InstanceType": instance_type,
        "AvailabilityZone": zone,
        "ProductDescription": description,
        "SpotPrice": usd,
        "Timestamp": NOW - age,
    }


def expected_request(types: list[str], token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "InstanceTypes": types,
        "ProductDescriptions": LINUX_DESCRIPTIONS,
        "StartTime": NOW - SPOT_PRICE_WINDOW,
        "EndTime": NOW,
    }
    if token:
        params["NextToken"] = token
    return params


def test_latest_spot_price_is_each_zones_newest_then_the_highest_zone(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    hour, minutes = timedelta(hours=1), timedelta(minutes=10)
    stubber.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                price("g5.xlarge", "us-east-1a", hour * 2, "0.9000"),  # zone a: superseded an hour later
                price("g5.xlarge", "us-east-1a", hour, "0.3900"),
                price("g5.xlarge", "us-east-1b", minutes, "0.4100"),
                price("g5.2xlarge", "us-east-1a", minutes, "0.5000", "Linux/UNIX (Amazon VPC)"),
            ],
            "NextToken": "page-2",
        },
        expected_request(["g5.2xlarge", "g5.xlarge"]),
    )
    stubber.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                price("g5.xlarge", "us-east-1c", minutes, "0.4300"),  # same time, higher: the safe side
                price("g5.xlarge", "us-east-1d", minutes, "0.4200"),
            ],
            "NextToken": "",
        },
        expected_request(["g5.2xlarge", "g5.xlarge"], token="page-2"),
    )

    latest = Ec2Fleet(client, ACCOUNT, REGION, accelerator_table()).latest(
        ["g5.xlarge", "g5.2xlarge", "g5.xlarge"], NOW
    )

    assert latest == {"g5.xlarge": Decimal("0.4300"), "g5.2xlarge": Decimal("0.5000")}
    assert all(isinstance(value, Decimal) for value in latest.values())


def test_latest_skips_stale_and_unparsable_prices(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                price("g5.xlarge", "us-east-1a", SPOT_HISTORY_KEPT + timedelta(hours=1), "0.2000"),
                price("g4dn.xlarge", "us-east-1a", timedelta(hours=2), "not-a-number"),
                price("g4dn.xlarge", "us-east-1b", timedelta(hours=3), "0.1600"),
            ]
        },
        expected_request(["g4dn.xlarge", "g5.xlarge"]),
    )

    latest = Ec2Fleet(client, ACCOUNT, REGION, accelerator_table()).latest(["g5.xlarge", "g4dn.xlarge"], NOW)

    assert latest == {"g4dn.xlarge": Decimal("0.1600")}


def test_latest_of_no_types_sends_no_request(stubbed: tuple[Any, Stubber]) -> None:
    client, _ = stubbed  # nothing queued: a request would raise

    assert Ec2Fleet(client, ACCOUNT, REGION, accelerator_table()).latest([], NOW) == {}


def test_a_price_unchanged_for_longer_than_the_window_is_still_the_current_price(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    stubber.add_response(
        "describe_spot_price_history",
        {"SpotPriceHistory": [price("g5.xlarge", "us-east-1a", timedelta(days=10), "0.4000")]},
        expected_request(["g5.xlarge"]),
    )

    latest = Ec2Fleet(client, ACCOUNT, REGION, accelerator_table()).latest(["g5.xlarge"], NOW)

    assert latest == {"g5.xlarge": Decimal("0.4000")}


def test_highest_current_price_across_zones_wins_when_zones_were_repriced_at_different_times(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    stubber.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                price("g5.xlarge", "us-east-1a", timedelta(hours=2), "0.9000"),
                price("g5.xlarge", "us-east-1b", timedelta(hours=1), "0.4000"),
            ]
        },
        expected_request(["g5.xlarge"]),
    )

    latest = Ec2Fleet(client, ACCOUNT, REGION, accelerator_table()).latest(["g5.xlarge"], NOW)

    assert latest == {"g5.xlarge": Decimal("0.9000")}


def test_a_fractional_gpu_type_has_one_gpu_unit() -> None:
    spec = parse_instance_type(moto_type("g6f.large"), accelerator_table())

    assert spec is not None
    assert spec.compute_units == 1


# Platforms: how EC2 bills the host ------------------------------------------------------------------------


def _described(**fields: object) -> dict[str, object]:
    return {"InstanceId": "i-0abc", "InstanceType": "g4dn.xlarge", "LaunchTime": datetime(2026, 11, 1), **fields}


@pytest.mark.parametrize(
    ("fields", "platform", "label"),
    [
        ({}, Platform.LINUX, "Linux/UNIX"),
        ({"PlatformDetails": "Linux/UNIX", "UsageOperation": "RunInstances"}, Platform.LINUX, "Linux/UNIX"),
        ({"Platform": "windows"}, Platform.WINDOWS, "Windows"),  # what moto answers
        ({"PlatformDetails": "Windows", "UsageOperation": "RunInstances:0002"}, Platform.WINDOWS, "Windows"),
        (
            {"PlatformDetails": "Red Hat Enterprise Linux", "UsageOperation": "RunInstances:0010"},
            Platform.RHEL,
            "Red Hat Enterprise Linux",
        ),
        (
            {"PlatformDetails": "Windows with SQL Server Standard", "UsageOperation": "RunInstances:0006"},
            Platform.WINDOWS_SQL_STANDARD,
            "Windows with SQL Server Standard",
        ),
        ({"UsageOperation": "RunInstances:0g00"}, Platform.UBUNTU_PRO, "Ubuntu Pro"),
        ({"PlatformDetails": "Windows BYOL", "UsageOperation": "RunInstances:0800"}, None, "Windows BYOL"),
    ],
)
def test_the_billing_platform_comes_from_usage_operation_then_platform_details(
    fields: dict[str, object], platform: Platform | None, label: str
) -> None:
    host = parse_instance(_described(**fields), "123456789012", "us-east-1")

    assert host.billing.platform is platform
    assert host.billing.label == label


def test_dedicated_tenancy_and_dedicated_hosts_are_billed_apart() -> None:
    dedicated = parse_instance(_described(Placement={"Tenancy": "dedicated"}), "123456789012", "us-east-1")
    on_host = parse_instance(_described(Placement={"Tenancy": "host"}), "123456789012", "us-east-1")

    assert dedicated.billing.key == "linux@dedicated"
    assert on_host.billing.key is None  # billed per Dedicated Host: no instance-hour price


# Issue 28: the limits a target must carry, read from DescribeInstanceTypes and DescribeInstances --------------------


def test_ebs_and_network_limits_are_read_at_baseline_and_burst() -> None:
    small = parse_instance_type(moto_type("g5.xlarge"), accelerator_table())
    large = parse_instance_type(moto_type("g6e.24xlarge"), accelerator_table())

    assert small is not None and large is not None
    # EbsOptimizedInfo: the smaller sizes burst above their baseline, the larger ones do not.
    assert (small.ebs_baseline_mbps, small.ebs_maximum_mbps) == (87.5, 437.5)
    assert (small.ebs_baseline_iops, small.ebs_maximum_iops) == (3000.0, 15000.0)
    assert large.ebs_baseline_mbps == large.ebs_maximum_mbps == 3750.0
    # "Up to 10 Gigabit" is 2.5 at baseline; a two-card type adds its cards.
    assert (small.network_gbps, small.network_peak_gbps, small.network_cards) == (2.5, 10.0, 1)
    assert (large.network_gbps, large.network_cards, large.ena_express) == (400.0, 2, True)
    assert small.ena_express is False and small.cluster_placement is True


def test_placement_ena_express_and_network_cards_are_read_from_the_instance() -> None:
    raw = {
        "InstanceId": "i-0000000000000000a",
        "InstanceType": "g6e.24xlarge",
        "LaunchTime": datetime(2026, 11, 1, tzinfo=UTC),
        "ImageId": "ami-0123456789abcdef0",
        "Placement": {"AvailabilityZone": "us-east-1a", "GroupName": "llm-train"},
        "NetworkInterfaces": [
            {"Attachment": {"NetworkCardIndex": 0, "EnaSrdSpecification": {"EnaSrdEnabled": True}}},
            {"Attachment": {"NetworkCardIndex": 1}, "InterfaceType": "efa"},
        ],
    }

    host = parse_instance(raw, ACCOUNT, REGION)

    assert (host.placement_group, host.ena_express, host.network_cards_used) == ("llm-train", True, 2)
    assert (host.uses_efa, host.image_id) == (True, "ami-0123456789abcdef0")


def test_each_hosts_ami_name_and_description_are_read_once(ec2: Any) -> None:
    image = ec2.register_image(Name="DCV-AmazonLinux2-NVIDIA-535", Description="Amazon DCV with the NVIDIA GRID driver")
    (dcv,) = launch(ec2, "g5.4xlarge", ImageId=image["ImageId"])
    (plain,) = launch(ec2, "g5.xlarge")
    calls: list[dict[str, Any]] = []
    ec2.meta.events.register("before-parameter-build.ec2.DescribeImages", lambda params, **_: calls.append(params))

    hosts = by_id(fleet(ec2).accelerated_instances())

    assert hosts[dcv].image == "DCV-AmazonLinux2-NVIDIA-535 | Amazon DCV with the NVIDIA GRID driver"
    assert hosts[plain].image.startswith("amzn-ami-hvm")
    assert len(calls) == 1 and sorted(calls[0]["Filters"][0]["Values"]) == sorted({image["ImageId"], LINUX_AMI})


def test_a_deregistered_ami_leaves_the_host_without_an_image_text(ec2: Any) -> None:
    image = ec2.register_image(Name="gone-soon", Description="")
    (iid,) = launch(ec2, "g5.xlarge", ImageId=image["ImageId"])
    ec2.deregister_image(ImageId=image["ImageId"])

    (host,) = fleet(ec2).accelerated_instances()

    assert host.instance_id == iid and host.image == ""
