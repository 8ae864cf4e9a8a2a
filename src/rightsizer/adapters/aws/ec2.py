"""EC2: the accelerated fleet, instance-type specs, regional offerings and Spot prices."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from sys import intern
from typing import Any

from rightsizer.adapters.aws.session import read_source
from rightsizer.domain.catalog import ACCELERATED_TYPE_PATTERNS, AcceleratorTable, is_accelerated_family
from rightsizer.domain.models.hosts import AcceleratorKind, Instance, InstanceTypeSpec

# The window asked for; EC2 adds the price in effect at its start, so a week is plenty.
SPOT_PRICE_WINDOW = timedelta(days=7)
# EC2 keeps 90 days of Spot price history: anything older is not a real current price.
SPOT_HISTORY_KEPT = timedelta(days=90)
_SPOT_LINUX = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")
_FILTER_VALUES = 200  # values one filter of a Describe call takes
# DescribeInstances' page: a page's XML is read whole into a tree of ~70 KB an instance before it is parsed, so pages of
# 1,000 (the most EC2 gives) made the inventory the CLI's peak memory, and its height grew with the region's pages (the
# instances kept pin what the trees leave). 200 cost one call per 200 hosts.
_INSTANCES_PAGE = 200


def parse_instance_type(raw: Mapping[str, Any], accelerators: AcceleratorTable) -> InstanceTypeSpec | None:
    """One DescribeInstanceTypes entry as a spec; None for types without an accelerator."""
    gpu_info = raw.get("GpuInfo") or {}
    neuron_info = raw.get("NeuronInfo") or {}
    network = raw.get("NetworkInfo") or {}
    cards = network.get("NetworkCards") or []
    # Every card's baseline (per direction) together: a host with several cards can use them all.
    network_gbps = sum(float(card.get("BaselineBandwidthInGbps") or 0) for card in cards)
    ebs = (raw.get("EbsInfo") or {}).get("EbsOptimizedInfo") or {}
    strategies = (raw.get("PlacementGroupInfo") or {}).get("SupportedStrategies")
    common: dict[str, Any] = {
        "instance_type": raw["InstanceType"],
        "vcpus": int(raw["VCpuInfo"]["DefaultVCpus"]),
        "memory_mib": int(raw["MemoryInfo"]["SizeInMiB"]),
        "network_gbps": network_gbps,
        "architectures": tuple((raw.get("ProcessorInfo") or {}).get("SupportedArchitectures") or ("x86_64",)),
        "virtualization_types": tuple(raw.get("SupportedVirtualizationTypes") or ("hvm",)),
        "ena_support": str(network.get("EnaSupport") or "unsupported"),
        "nvme_support": str((raw.get("EbsInfo") or {}).get("NvmeSupport") or "unsupported"),
        "efa_supported": bool(network.get("EfaSupported")),
        "bare_metal": bool(raw.get("BareMetal")),
        "instance_storage_gb": int((raw.get("InstanceStorageInfo") or {}).get("TotalSizeInGB") or 0),
        "network_peak_gbps": sum(float(card.get("PeakBandwidthInGbps") or 0) for card in cards),
        "network_cards": int(network.get("MaximumNetworkCards") or max(1, len(cards))),
        "ena_express": bool(network.get("EnaSrdSupported")),
        "ebs_baseline_mbps": _number(ebs.get("BaselineThroughputInMBps")),
        "ebs_maximum_mbps": _number(ebs.get("MaximumThroughputInMBps")),
        "ebs_baseline_iops": _number(ebs.get("BaselineIops")),
        "ebs_maximum_iops": _number(ebs.get("MaximumIops")),
        "cluster_placement": strategies is None or "cluster" in strategies,
    }
    if neuron_info.get("NeuronDevices"):
        device = neuron_info["NeuronDevices"][0]
        count = sum(int(d["Count"]) for d in neuron_info["NeuronDevices"])
        cores_per_device = int((device.get("CoreInfo") or {}).get("Count") or 0)
        return InstanceTypeSpec(
            accelerator_kind=AcceleratorKind.NEURON,
            accelerator_model=accelerators.model_for(device["Name"], None),
            accelerator_count=count,
            accelerator_memory_mib=int((device.get("MemoryInfo") or {}).get("SizeInMiB") or 0),
            neuron_cores=count * cores_per_device,
            **common,
        )
    if gpu_info.get("Gpus"):
        gpu = gpu_info["Gpus"][0]
        memory = int((gpu.get("MemoryInfo") or {}).get("SizeInMiB") or 0)
        kind = AcceleratorKind.NVIDIA if gpu.get("Manufacturer") == "NVIDIA" else AcceleratorKind.UNMONITORED
        return InstanceTypeSpec(
            accelerator_kind=kind,
            accelerator_model=accelerators.model_for(gpu["Name"], memory),
            # Fractional types (g6f) report Count 0 and LogicalGpuCount 1: the host sees one GPU slice.
            accelerator_count=sum(max(int(g["Count"]), int(g.get("LogicalGpuCount") or 0)) for g in gpu_info["Gpus"]),
            accelerator_memory_mib=memory,
            fractional_gpu=float(gpu.get("GpuPartitionSize") or 1) < 1,
            **common,
        )
    return None


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _tags(raw: Sequence[Mapping[str, str]] | None) -> dict[str, str]:
    return {intern(tag["Key"]): intern(tag.get("Value", "")) for tag in raw or ()}


def parse_instance(raw: Mapping[str, Any], account_id: str, region: str) -> Instance:
    """An instance as EC2 describes it. The values hosts share (a zone, a type, a tag) are one copy for all of them
    (`sys.intern`), and the launch time is in UTC (an answer without a zone is read in local time, each with a tzinfo
    object of its own): a region's inventory is held for a whole analysis, the CLI's of every host of it."""
    tags = _tags(raw.get("Tags"))
    interfaces = raw.get("NetworkInterfaces") or []
    attachments = [ni.get("Attachment") or {} for ni in interfaces]
    placement = raw.get("Placement") or {}
    return Instance(
        instance_id=raw["InstanceId"],
        account_id=account_id,
        region=region,
        availability_zone=intern(placement.get("AvailabilityZone", "")),
        instance_type=intern(raw["InstanceType"]),
        state=intern((raw.get("State") or {}).get("Name", "unknown")),
        launch_time=raw["LaunchTime"].astimezone(UTC),
        tags=tags,
        lifecycle=intern(raw.get("InstanceLifecycle") or "on-demand"),
        asg_name=tags.get("aws:autoscaling:groupName"),
        root_device_type=intern(raw.get("RootDeviceType") or "ebs"),
        architecture=intern(raw.get("Architecture") or "x86_64"),
        ena_support=raw.get("EnaSupport") is not False,  # absent: unknown, checked again before a resize
        uses_efa=any(ni.get("InterfaceType") == "efa" for ni in interfaces),
        platform=intern(raw.get("PlatformDetails") or raw.get("Platform") or "Linux/UNIX"),
        capacity_reservation_id=raw.get("CapacityReservationId") or None,
        usage_operation=intern(raw.get("UsageOperation") or ""),
        tenancy=intern(placement.get("Tenancy") or "default"),
        placement_group=intern(placement.get("GroupName") or ""),
        ena_express=any((a.get("EnaSrdSpecification") or {}).get("EnaSrdEnabled") for a in attachments),
        network_cards_used=max(1, len({int(a.get("NetworkCardIndex") or 0) for a in attachments})),
        image_id=intern(raw.get("ImageId") or ""),
    )


class Ec2Fleet:
    """Reads one region of one account. Implements the Inventory, InstanceTypes and SpotPrices ports."""

    def __init__(self, client: Any, account_id: str, region: str, accelerators: AcceleratorTable) -> None:
        self._ec2 = client
        self._account_id = account_id
        self._region = region
        self._accelerators = accelerators

    def accelerated_instances(self) -> list[Instance]:
        instances = [parse_instance(raw, self._account_id, self._region) for raw in self._accelerated_raw()]
        images = self._image_texts(sorted({i.image_id for i in instances if i.image_id}))
        return [replace(i, image=images[i.image_id]) if i.image_id in images else i for i in instances]

    def _image_texts(self, image_ids: Sequence[str]) -> dict[str, str]:
        """Each AMI's name and description (what it was built to run: a DCV workstation, a GRID driver, a game
        server). By filter, not ImageIds: an AMI deregistered since its hosts launched would fail the whole call."""
        texts: dict[str, str] = {}
        paginator = self._ec2.get_paginator("describe_images")
        for start in range(0, len(image_ids), 200):  # the filter takes up to 200 values
            chunk = list(image_ids[start : start + 200])
            for page in paginator.paginate(Filters=[{"Name": "image-id", "Values": chunk}], IncludeDeprecated=True):
                for image in page.get("Images", []):
                    words = (image.get("Name") or "", image.get("Description") or "")
                    texts[image["ImageId"]] = " | ".join(word for word in words if word)
        return texts

    def has_accelerated_instances(self) -> bool:
        """Whether the region runs any GPU / Neuron host (stops reading at the first)."""
        return next(self._accelerated_raw(), None) is not None

    def described(self, instance_ids: Sequence[str]) -> list[Instance]:
        """These instances as EC2 describes them now, those still there (pending to stopped): a terminated one, or
        one EC2 no longer knows, is absent. By the instance-id filter, which, unlike InstanceIds, does not fail the
        whole call for an id EC2 forgot. Raises SourceUnavailable."""
        wanted = sorted(set(instance_ids))

        def read() -> list[Instance]:
            found: list[Instance] = []
            for start in range(0, len(wanted), _FILTER_VALUES):
                chunk = [{"Name": "instance-id", "Values": wanted[start : start + _FILTER_VALUES]}]
                found.extend(parse_instance(raw, self._account_id, self._region) for raw in self._raw(chunk))
            return found

        return read_source("EC2 DescribeInstances", self._region, read)

    def holds(self, query: str) -> bool:
        """Whether an instance of the region (pending to stopped) has this instance id, or this Name tag (a host
        `show` did not find where it looked)."""
        field = "instance-id" if query.lower().startswith("i-") else "tag:Name"
        value = query.lower() if field == "instance-id" else query
        return next(self._raw([{"Name": field, "Values": [value]}]), None) is not None

    def _accelerated_raw(self) -> Iterator[Mapping[str, Any]]:
        # No instance-type filter: wildcard support differs between EC2 and its emulators, and a type
        # neither the API nor the bundled table knows must still be reported.
        return (raw for raw in self._raw([]) if is_accelerated_family(raw["InstanceType"]))

    def _raw(self, filters: list[dict[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """The instances that are there (pending to stopped) and match `filters`, a page at a time."""
        paginator = self._ec2.get_paginator("describe_instances")
        there = {"Name": "instance-state-name", "Values": ["pending", "running", "stopping", "stopped"]}
        for page in paginator.paginate(Filters=[there, *filters], PaginationConfig={"PageSize": _INSTANCES_PAGE}):
            for reservation in page.get("Reservations", []):
                yield from reservation.get("Instances", [])

    def accelerated_specs(self) -> list[InstanceTypeSpec]:
        paginator = self._ec2.get_paginator("describe_instance_types")
        specs: list[InstanceTypeSpec] = []
        filters = [{"Name": "instance-type", "Values": list(ACCELERATED_TYPE_PATTERNS)}]
        for page in paginator.paginate(Filters=filters):
            for raw in page.get("InstanceTypes", []):
                spec = parse_instance_type(raw, self._accelerators)
                if spec is not None:
                    specs.append(spec)
        return specs

    def offered_types(self, instance_types: Sequence[str]) -> frozenset[str]:
        """Which of `instance_types` the region offers. Raises SourceUnavailable."""
        paginator = self._ec2.get_paginator("describe_instance_type_offerings")
        wanted = sorted(set(instance_types))

        def read() -> frozenset[str]:
            offered: set[str] = set()
            for start in range(0, len(wanted), _FILTER_VALUES):
                chunk = [{"Name": "instance-type", "Values": wanted[start : start + _FILTER_VALUES]}]
                for page in paginator.paginate(LocationType="region", Filters=chunk):
                    offered.update(o["InstanceType"] for o in page.get("InstanceTypeOfferings", []))
            return frozenset(offered)

        return read_source("EC2 DescribeInstanceTypeOfferings", self._region, read)

    def latest(self, instance_types: Sequence[str], now: datetime) -> dict[str, Decimal]:
        """Current Linux Spot price per type: each zone's price in effect now, then the highest zone (the safe side).

        For a StartTime..EndTime query EC2 also returns the last change before StartTime (the price in
        effect at the start), so a price may carry an older timestamp and still be current. Records older
        than the 90 days of history EC2 keeps are not trusted (emulators answer with fixed ancient prices).
        """
        if not instance_types:
            return {}
        paginator = self._ec2.get_paginator("describe_spot_price_history")
        in_effect: dict[tuple[str, str], tuple[datetime, Decimal]] = {}
        for page in paginator.paginate(
            InstanceTypes=sorted(set(instance_types)),
            ProductDescriptions=list(_SPOT_LINUX),
            StartTime=now - SPOT_PRICE_WINDOW,
            EndTime=now,
        ):
            for item in page.get("SpotPriceHistory", []):
                stamp = item["Timestamp"]
                if now - stamp > SPOT_HISTORY_KEPT:
                    continue
                try:
                    price = Decimal(item["SpotPrice"])
                except InvalidOperation:
                    continue
                key = (item["InstanceType"], item.get("AvailabilityZone", ""))
                current = in_effect.get(key)
                if current is None or stamp > current[0]:
                    in_effect[key] = (stamp, price)
        highest: dict[str, Decimal] = {}
        for (instance_type, _), (_, price) in in_effect.items():
            highest[instance_type] = max(price, highest.get(instance_type, price))
        return highest
