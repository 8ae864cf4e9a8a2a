"""Demand: the floor every limit of a target must meet (limits.table.LIMITS: units, memory per unit, speed, vCPUs, RAM,
network, EBS, local NVMe, interconnect, graphics, video engines, architecture), from the host's measured work and
its set-up."""

from __future__ import annotations

import math
from dataclasses import replace

from rightsizer.domain.limits.demand import NO_SETUP, NO_STORAGE_NEED, Demand, Setup, StorageNeed
from rightsizer.domain.models.hosts import AcceleratorSpec, Instance, InstanceTypeSpec
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.domain.policy import Policy
from rightsizer.domain.signals import Load
from rightsizer.domain.sizing.memory import MemoryReading
from rightsizer.domain.sizing.units import UnitView
from rightsizer.domain.wording import gbps, gib


def vcpus_needed(vcpus: int, usage: UsageSummary, policy: Policy) -> int:
    """vCPUs that keep CPU p95 at the target level and the busiest 5-minute periods (p99) within 100 %."""
    if usage.cpu is None:
        return vcpus
    steady = vcpus * usage.cpu.p95 / policy.target_max_cpu_pct
    bursts = vcpus * usage.cpu.p99 / policy.burst_max_cpu_pct
    return max(1, math.ceil(max(steady, bursts)))


def keep_today(demand: Demand, spec: InstanceTypeSpec, policy: Policy) -> Demand:
    """The demand for a paid change (more memory, vCPUs or speed): nothing may shrink, and a target as busy
    as today is acceptable, since the change is about something else."""
    return replace(
        demand,
        vcpus=max(demand.vcpus, spec.vcpus),
        host_memory_mib=max(demand.host_memory_mib, float(spec.memory_mib)),
        util_ceiling=max(policy.target_max_util_pct, demand.unit_util_p95),
        burst_ceiling=max(policy.burst_max_util_pct, demand.unit_util_burst),
    )


def host_setup(instance: Instance, accelerator: AcceleratorSpec | None, graphics: tuple[str, ...]) -> Setup:
    """The host's set-up: its architecture, interfaces and placement, and why it needs graphics (the evidence its
    Measured view found: only on a GPU that runs graphics)."""
    return Setup(
        architecture=instance.architecture,
        efa=instance.uses_efa,
        without_ena=not instance.ena_support,
        ena_express=instance.ena_express,
        network_cards=instance.network_cards_used,
        placement_group=instance.placement_group,
        graphics=graphics,
        ray_tracing=bool(graphics) and accelerator is not None and accelerator.ray_tracing,
    )


def network_need(spec: InstanceTypeSpec, usage: UsageSummary, policy: Policy) -> tuple[float, float, str]:
    """(sustained Gbps per direction at the target's baseline, 5-minute peak for its burst, how it was read).

    EC2's bandwidth applies to each direction on its own (AWS: "up to 10 Gbps for inbound traffic and, simultaneously,
    up to 10 Gbps for outbound"), and "up to" is a burst on credits: a flow held for hours gets the baseline. Without
    per-direction readings, the two peaks added (an over-statement, the safe side); unmeasured, today's baseline."""
    headroom = policy.host_headroom
    inbound, outbound = usage.network_in, usage.network_out
    if inbound is not None and outbound is not None:
        way, busier = ("out", outbound) if outbound.sustained > inbound.sustained else ("in", inbound)
        sustained = busier.sustained * headroom
        basis = f"{way}bound busiest hours {gbps(busier.sustained)} x {headroom:g}"
        return sustained, max(inbound.peak, outbound.peak) * headroom, basis
    if usage.network_peak_gbps is not None:
        return usage.network_peak_gbps * headroom, 0.0, f"peak in + out {gbps(usage.network_peak_gbps)} x {headroom:g}"
    return spec.network_gbps, 0.0, ""


def storage_need(spec: InstanceTypeSpec, usage: UsageSummary, policy: Policy) -> StorageNeed:
    """EBS at the target's baseline (the busiest hours x headroom; AWS: a type bursts to its maximum for 30 minutes a
    day at most) and within its maximum (the busiest hour), and the instance store a host that works it keeps (its
    size: what it holds is not measured). A trickle (a root volume's logs) sets no floor."""
    headroom = policy.host_headroom
    ebs, iops, local = usage.ebs_mbps, usage.ebs_iops, usage.local_disk_mbps
    busy_ebs = ebs is not None and ebs.sustained >= policy.storage_active_mbps
    busy_local = local is not None and local.sustained >= policy.storage_active_mbps and spec.instance_storage_gb > 0
    busy_iops = iops is not None and iops.sustained >= policy.storage_active_iops
    return StorageNeed(
        ebs_mbps=ebs.sustained * headroom if ebs is not None and busy_ebs else 0.0,
        ebs_burst_mbps=ebs.peak if ebs is not None and busy_ebs else 0.0,
        ebs_iops=iops.sustained * headroom if iops is not None and busy_iops else 0.0,
        ebs_basis=f"busiest hours {ebs.sustained:,.0f} MB/s read + write x {headroom:g}" if ebs is not None else "",
        local_storage_gb=float(spec.instance_storage_gb) if busy_local else 0.0,
        local_basis=(
            f"the work reads and writes it, busiest hours {local.sustained:,.0f} MB/s beyond EBS: today's size kept, "
            "what it holds is not measured"
            if local is not None and busy_local
            else ""
        ),
    )


def demand(
    spec: InstanceTypeSpec,
    usage: UsageSummary,
    view: UnitView,
    memory: MemoryReading,
    load: tuple[float, float, float],  # busiest(usage.devices)
    policy: Policy,
    video: tuple[int, int] = (0, 0),  # video_engines(...)
    setup: Setup = NO_SETUP,
    loads: tuple[Load, ...] = (),  # engine_load(...) of each signals.PROJECTED engine; empty: kernel time
) -> Demand:
    p95, burst, _ = load
    units = view.needed
    if memory.peak_mib is not None:
        memory_per_unit, memory_measured = memory.peak_mib * policy.memory_headroom, True
        basis = f"peak x {policy.memory_headroom:g} ({gib(memory_per_unit)})"
    else:
        memory_per_unit, memory_measured = spec.memory_per_unit_mib, False
        basis = f"today's {gib(memory_per_unit)}, memory not measured"
    vcpus = vcpus_needed(spec.vcpus, usage, policy) if usage.cpu is not None else spec.vcpus
    if usage.host_memory_peak_pct is not None:
        host_memory = spec.memory_mib * usage.host_memory_peak_pct / 100 * policy.host_headroom
        host_memory_measured = True
    else:
        # Unmeasured RAM follows the accelerators kept: hosts are built with RAM in proportion to them.
        host_memory = spec.memory_mib * min(units, spec.compute_units) / max(1, spec.compute_units)
        host_memory_measured = False
    network, network_burst, network_basis = network_need(spec, usage, policy)
    storage = storage_need(spec, usage, policy) if usage.ebs_mbps or usage.local_disk_mbps else NO_STORAGE_NEED
    return Demand(
        units=units,
        memory_per_unit_mib=memory_per_unit,
        memory_measured=memory_measured,
        vcpus=vcpus,
        host_memory_mib=host_memory,
        host_memory_measured=host_memory_measured,
        network_gbps=network,
        unit_util_p95=p95,
        unit_util_burst=burst,
        util_ceiling=policy.target_max_util_pct,
        burst_ceiling=policy.burst_max_util_pct,
        load_known=not view.unseen and all(d.utilization is not None for d in view.busy),
        memory_basis=basis,
        video_encoders=video[0],
        video_decoders=video[1],
        network_burst_gbps=network_burst,
        network_basis=network_basis,
        storage=storage,
        setup=setup,
        loads=loads,
    )
