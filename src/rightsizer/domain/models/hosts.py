"""A host and what it runs on: the instance as EC2 describes it (`Instance`), its type's figures (`InstanceTypeSpec`,
from DescribeInstanceTypes) and its accelerator's (`AcceleratorSpec`, from the accelerator table)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from rightsizer.domain.owners import Owner, owner_of
from rightsizer.domain.platforms import Billing, billing


class AcceleratorKind(StrEnum):
    NVIDIA = "nvidia"  # monitored through the CloudWatch agent's nvidia_gpu plugin
    NEURON = "neuron"  # Inferentia / Trainium, monitored through neuron-monitor
    UNMONITORED = "unmonitored"  # e.g. AMD Radeon (g4ad): the agent publishes nothing


@dataclass(frozen=True, slots=True)
class AcceleratorSpec:
    """Per-device figures used to compare accelerators (one GPU, or one Neuron chip)."""

    model: str
    vendor: str
    memory_gib: float
    memory_bandwidth_gbps: float
    fp32_tflops: float | None = None
    # Dense FP16/BF16 matrix throughput (tensor cores; NeuronCores for Neuron devices), per device:
    # what deep-learning kernels run on. None for accelerators without tensor cores.
    tensor_tflops: float | None = None
    compute_capability: str | None = None  # NVIDIA CUDA compute capability, e.g. "8.6"
    neuroncores_per_device: int = 0
    # Video engines per device (NVENC / NVDEC on NVIDIA GPUs), apart from the SMs that utilization.gpu measures:
    # a host that transcodes video works on these while its "GPU utilisation" reads ~0 %. A100/H100 have no NVENC.
    video_encoders: int = 0
    video_decoders: int = 0
    # Runs graphics (OpenGL, Vulkan, DirectX) with the drivers AWS offers for it (GRID/RTX Virtual Workstation, gaming):
    # a remote workstation or a renderer needs it. A100, H100 and H200 have no display engine or RT cores.
    graphics: bool = False
    ray_tracing: bool = False  # RT cores, which OptiX, Vulkan ray tracing and DXR renderers use
    # Names of the figures above that are estimates rather than read in a vendor or spec source ("tensor_tflops").
    estimated: tuple[str, ...] = ()

    @property
    def compute_capability_tuple(self) -> tuple[int, ...]:
        if not self.compute_capability:
            return ()
        return tuple(int(part) for part in self.compute_capability.split("."))


@dataclass(frozen=True, slots=True)
class InstanceTypeSpec:
    instance_type: str
    vcpus: int
    memory_mib: int
    accelerator_kind: AcceleratorKind
    accelerator_model: str  # key into the accelerator table, e.g. "A10G"; "" when unknown
    accelerator_count: int  # GPUs, or Neuron devices
    accelerator_memory_mib: int  # per device
    network_gbps: float  # baseline bandwidth, per direction (every network card's together)
    neuron_cores: int = 0  # total NeuronCores on the instance (Neuron only)
    architectures: tuple[str, ...] = ("x86_64",)
    virtualization_types: tuple[str, ...] = ("hvm",)
    ena_support: str = "required"  # required | supported | unsupported
    nvme_support: str = "required"  # required | supported | unsupported
    efa_supported: bool = False
    bare_metal: bool = False
    fractional_gpu: bool = False  # a slice of a GPU (g6f): vGPU drivers, not an in-place target
    instance_storage_gb: int = 0  # local NVMe/SSD instance store: wiped when the host stops
    listed_by_api: bool = True  # False: from the bundled previous-generation table
    # What "up to" promises: the burst a network card reaches on credits for a while (every card's together);
    # 0: not published (the baseline is all that is known).
    network_peak_gbps: float = 0.0
    network_cards: int = 1  # MaximumNetworkCards: a host may attach interfaces to several
    ena_express: bool = False  # ENA Express (SRD) supported
    # EBS-optimized limits (EbsOptimizedInfo): MB/s and IOPS the type sustains (baseline) and bursts to (maximum,
    # about 30 minutes a day on the smaller sizes). None: not published for this type.
    ebs_baseline_mbps: float | None = None
    ebs_maximum_mbps: float | None = None
    ebs_baseline_iops: float | None = None
    ebs_maximum_iops: float | None = None
    cluster_placement: bool = True  # PlacementGroupInfo lists the cluster strategy

    @property
    def family(self) -> str:
        return self.instance_type.split(".", 1)[0]

    @property
    def compute_units(self) -> int:
        """How many independently observed accelerator units this type has (GPUs or NeuronCores)."""
        if self.accelerator_kind is AcceleratorKind.NEURON:
            return self.neuron_cores
        return self.accelerator_count

    @property
    def memory_per_unit_mib(self) -> float:
        """Accelerator memory one compute unit can address (per GPU; per NeuronCore's share of its chip)."""
        if self.accelerator_kind is AcceleratorKind.NEURON and self.neuron_cores:
            return self.accelerator_memory_mib * self.accelerator_count / self.neuron_cores
        return float(self.accelerator_memory_mib)

    @property
    def unit_name(self) -> str:
        return "NeuronCore" if self.accelerator_kind is AcceleratorKind.NEURON else "GPU"


@dataclass(frozen=True, slots=True)
class Instance:
    instance_id: str
    account_id: str
    region: str
    availability_zone: str
    instance_type: str
    state: str  # EC2 state name: running, stopped, ...
    launch_time: datetime
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)
    lifecycle: str = "on-demand"  # on-demand | spot | scheduled | capacity-block
    asg_name: str | None = None
    root_device_type: str = "ebs"
    architecture: str = "x86_64"
    ena_support: bool = True
    uses_efa: bool = False
    platform: str = "Linux/UNIX"  # EC2's PlatformDetails (or, where an answer has no details, its Platform: "windows")
    # The On-Demand Capacity Reservation or Capacity Block the host runs in, as EC2 reports it.
    capacity_reservation_id: str | None = None
    usage_operation: str = ""  # EC2's billing code for the platform, e.g. RunInstances:0002 (Windows)
    tenancy: str = "default"  # default | dedicated | host
    placement_group: str = ""  # the placement group it was launched into ("": none)
    placement_strategy: str = ""  # cluster | spread | partition (DescribePlacementGroups; "": not known)
    ena_express: bool = False  # ENA Express (SRD) enabled on one of its interfaces
    network_cards_used: int = 1  # distinct network cards its interfaces are attached to
    image_id: str = ""
    image: str = ""  # the AMI's name and description (DescribeImages; "": not readable): what it was built to run

    @property
    def name(self) -> str:
        return self.tags.get("Name", "")

    @property
    def owner(self) -> Owner | None:
        """What launches and replaces the host (an Auto Scaling group, a node group, a cluster, a fleet), read from
        its tags; None: nothing does, it is its owner's to change (domain/owners.py)."""
        return owner_of(self.tags, self.asg_name)

    @property
    def billing(self) -> Billing:
        """How EC2 bills the host's hours: its platform's rates, not always Linux's."""
        return billing(self.platform, self.usage_operation, self.tenancy)

    @property
    def is_running(self) -> bool:
        return self.state == "running"
