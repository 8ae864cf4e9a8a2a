"""What the rules look at: one host, its usage and prices, and the views derived from them once.

`Facts` is all a rule about exclusions or data sufficiency needs. `Measured` exists only once those rules
have passed, so rules about usage can rely on a spec, an accelerator table entry (or its absence, said
plainly) and a usage summary with enough history. Derived values are cached: several rules ask for the
same demand or the same cheapest downsize, and each is computed once per host.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from rightsizer.domain.catalog import Catalog, is_scarce
from rightsizer.domain.commitments import HostCover
from rightsizer.domain.graphics import graphics_evidence
from rightsizer.domain.guards import Gap
from rightsizer.domain.limits import Demand
from rightsizer.domain.models import (
    AcceleratorData,
    AcceleratorKind,
    AcceleratorSpec,
    Confidence,
    Instance,
    InstanceTypeSpec,
    RegimeKind,
    UsageSummary,
)
from rightsizer.domain.policy import Policy
from rightsizer.domain.prices import PriceBook
from rightsizer.domain.schedule import WeeklyPattern, weekly_pattern
from rightsizer.domain.signals import KERNEL_TIME, PROJECTED, STANDS_IN, VIDEO_ACTIVE_PCT, Engine, Load
from rightsizer.domain.sizing.demand import demand, host_setup
from rightsizer.domain.sizing.load import busiest, engine_load, video_engines
from rightsizer.domain.sizing.memory import MemoryReading, memory_risk_ended, read_memory
from rightsizer.domain.sizing.reasons import shortfalls_text
from rightsizer.domain.sizing.targets import Candidate, Refusals, candidates, has_comparable_target
from rightsizer.domain.sizing.units import UnitView, memory_total, unit_view
from rightsizer.domain.usage.series import RECENT_MEMORY_SECONDS
from rightsizer.domain.wording import gib, index_ranges, pct, plural, span


@dataclass(frozen=True)
class Facts:
    instance: Instance
    usage: UsageSummary | None
    catalog: Catalog
    prices: PriceBook
    policy: Policy
    cover: HostCover | None = None  # the reservation or plan that pays for the host, if any
    gaps: tuple[Gap, ...] = ()  # sources of its region (or shard) that could not be read (domain/guards.py)

    @property
    def all_gaps(self) -> tuple[Gap, ...]:
        """What could not be read about this host: its region's and shard's sources, and its own series."""
        return (*self.gaps, *(self.usage.gaps if self.usage is not None else ()))

    @cached_property
    def spec(self) -> InstanceTypeSpec | None:
        return self.catalog.spec(self.instance.instance_type)

    @cached_property
    def cost_now(self) -> Decimal | None:
        """What the host really costs per month (its Spot price for Spot, nothing when stopped)."""
        return self.prices.monthly_cost_of(self.instance)

    @property
    def price_note(self) -> str:
        instance = self.instance
        if instance.tenancy == "host":
            # Nothing to look up: EC2 bills the Dedicated Host by the hour, whatever runs on it.
            return (
                f"{instance.instance_type} runs on a Dedicated Host, which EC2 bills per host, not per instance: a "
                "stop or a smaller type saves nothing until the host is released (or takes other instances)"
            )
        return f"no on-demand price for {instance.instance_type} in {instance.region} ({self.prices.source})"

    @cached_property
    def list_cost(self) -> Decimal | None:
        """The type's on-demand monthly price: what targets' on-demand prices are compared with."""
        return self.prices.monthly(self.instance.instance_type)

    @cached_property
    def running_share(self) -> float:
        """Share of the time the host runs: 1 unless it ran less than the policy's part-time share of the recent
        time (it stops itself; see usage.running_share). Rules price on 730 hours; the analyzer then prices the
        advice on this share."""
        share = self.usage.running_share if self.usage is not None else None
        if share is None or share >= self.policy.part_time_share or share <= 0:
            return 1.0
        return share


def regime_text(usage: UsageSummary, unit: str) -> str:
    """What changed inside the window and when: the advice is judged on the time since."""
    days = (usage.window_end - usage.regime.since).total_seconds() / 86400 if usage.regime else 0.0
    return f"{regime_change_text(usage, unit)}: judged on the {days:.1f} days since, not on the whole window"


def regime_change_text(usage: UsageSummary, unit: str) -> str:
    """What changed inside the window, and when."""
    change = usage.regime
    if change is None:
        return ""
    when = f"{change.since:%Y-%m-%d %H:%M} UTC"
    level = f"the busiest {unit}'s mean"
    before, after = pct(change.level_before), pct(change.level_after)
    if change.measure == "cpu":
        way = "down" if change.kind is RegimeKind.STEPPED_DOWN else "up"
        return (
            f"the host's CPU stepped {way} on {when} from {before} to {after} (its mean) and stayed there, while the "
            f"{unit}s' load did not"
        )
    return {
        RegimeKind.WENT_QUIET: f"the work ended: every {unit} quiet since {when}, after {change.days_before:.1f} "
        f"days at {before} ({level})",
        RegimeKind.WENT_BUSY: f"work started {when}, after {change.days_before:.1f} days without any; "
        f"{after} since ({level}), a change, not a weekly pattern",
        RegimeKind.STEPPED_DOWN: f"the load stepped down on {when} from {before} to {after} ({level}) and stayed "
        f"there; if the earlier load returns, this advice no longer holds",
        RegimeKind.STEPPED_UP: f"the load stepped up on {when} from {before} to {after} ({level}) and stayed there",
    }[change.kind]


@dataclass(frozen=True)
class Measured:
    """A running, analysable host: spec known, accelerator metrics with enough history."""

    facts: Facts
    spec: InstanceTypeSpec
    usage: UsageSummary

    # Shortcuts -------------------------------------------------------------------------------

    @property
    def instance(self) -> Instance:
        return self.facts.instance

    @property
    def policy(self) -> Policy:
        return self.facts.policy

    @property
    def cost_now(self) -> Decimal | None:
        return self.facts.cost_now

    @property
    def unit(self) -> str:
        return self.spec.unit_name

    @cached_property
    def accelerator(self) -> AcceleratorSpec | None:
        return self.facts.catalog.accelerator(self.spec)

    # Usage views -----------------------------------------------------------------------------

    @cached_property
    def view(self) -> UnitView:
        return unit_view(self.spec, self.usage, self.policy)

    @cached_property
    def memory(self) -> MemoryReading:
        return read_memory(self.spec, self.view, self.policy)

    @cached_property
    def load(self) -> tuple[float, float, float]:
        """(p95, burst, peak) of the busiest unit(s): where the demand and the evidence both start."""
        return busiest(self.usage.devices)

    @cached_property
    def profiled(self) -> bool:
        """Does any unit publish a DCGM signal? (Most hosts do not: their loads are kernel time, read once.)"""
        return any(device.profile for device in self.usage.devices)

    @cached_property
    def loads(self) -> tuple[Load, ...]:
        """The busiest unit's load of each engine a target's speed is projected on: DCGM's measure where every GPU
        publishes one, else kernel time (signals.READS)."""
        if not self.profiled:  # kernel time for every engine: read once
            kernel = engine_load(self.usage.devices, Engine.COMPUTE, self.load)
            return tuple(Load(engine, kernel.p50, kernel.p95, kernel.burst) for engine in PROJECTED)
        return tuple(engine_load(self.usage.devices, engine, self.load) for engine in PROJECTED)

    @cached_property
    def demand(self) -> Demand:
        profiled = self.profiled
        video = video_engines(self.accelerator, self.usage, self.policy, self.video_loads if profiled else ())
        setup = host_setup(self.instance, self.accelerator, self.graphics)
        loads = self.loads if profiled and any(load.measured for load in self.loads) else ()
        return demand(self.spec, self.usage, self.view, self.memory, self.load, self.policy, video, setup, loads)

    @cached_property
    def graphics(self) -> tuple[str, ...]:
        """Why the host is a graphics host (a remote workstation, a renderer): its AMI, tags, processes. Only read on a
        GPU that runs graphics (elsewhere the work runs on CUDA, see domain/graphics.py)."""
        acc, instance = self.accelerator, self.instance
        if acc is None or not acc.graphics:
            return ()
        return graphics_evidence(instance.image, instance.tags, self.usage.graphics_processes)

    @cached_property
    def video_unknown(self) -> bool:
        """The GPUs have video encoders nobody measured: quiet SMs may still be encoding video."""
        acc = self.accelerator
        return bool(acc and acc.video_encoders) and not self.usage.encoder_measured

    @property
    def video_unknown_text(self) -> str:
        """What to publish before a GPU with quiet SMs is called unused."""
        return (
            f"utilization.gpu measures only the SMs; {self.spec.accelerator_model}'s video encoders (NVENC) are not "
            "measured here, and a host that transcodes video looks just like this: publish "
            "encoder_stats_session_count and encoder_stats_average_fps in the agent's nvidia_gpu section "
            "(agent/amazon-cloudwatch-agent.json does) before anything is stopped or moved off GPUs"
        )

    @cached_property
    def pattern(self) -> WeeklyPattern | None:
        return weekly_pattern(self.usage, self.policy, self.spec.vcpus)

    @cached_property
    def downsize(self) -> Candidate | None:
        """The cheapest type that carries the measured demand and saves at least the minimum share."""
        cost = self.facts.list_cost
        if cost is None or cost <= 0:
            return None
        ceiling = cost * Decimal(str(1 - self.policy.min_savings_pct / 100))
        facts = self.facts
        fitting = candidates(
            self.instance,
            self.spec,
            facts.catalog,
            facts.prices,
            self.demand,
            max_monthly=ceiling,
            refused=self.refused,
        )
        return next(fitting, None)

    @cached_property
    def refused(self) -> Refusals:
        """The cheaper types `downsize` ruled out: all it looked at when no type fits, so "nothing cheaper fits" can say
        why."""
        return Refusals()

    @cached_property
    def shortfalls(self) -> str | None:
        """Why no cheaper type carries the work, limit by limit (None: the scan found one, or nothing to compare)."""
        if self.downsize is not None:  # the scan for a downsize fills `refused`
            return None
        decided = self.refused.decided(self.demand)
        return f"cheaper types fall short of {shortfalls_text(decided, self.demand)}" if decided else None

    @cached_property
    def comparison_gap(self) -> str | None:
        """Why no target can be compared with this host, or None when comparisons can be made."""
        spec, facts = self.spec, self.facts
        if self.accelerator is None:
            name = spec.accelerator_model or f"the accelerator of {spec.instance_type}"
            return f"{name} is not in the accelerator table"
        if facts.list_cost is None:
            return facts.price_note
        if self.downsize is None and not has_comparable_target(spec, facts.catalog, facts.prices):
            # Neuron hosts compare within their chip (other generations need a recompiled model).
            what = (
                f"other {spec.accelerator_model}"
                if spec.accelerator_kind is AcceleratorKind.NEURON
                else spec.accelerator_kind.value
            )
            return f"no priced {what} type in the {facts.catalog.region} catalog to compare with"
        return None

    @property
    def cpu_p95(self) -> float | None:
        return self.usage.cpu.p95 if self.usage.cpu else None

    @property
    def network_p95(self) -> float | None:
        return self.usage.network_p95_gbps

    @cached_property
    def unused_units(self) -> int:
        """Units that never worked: idle ones, and NeuronCores neuron-monitor never reported (it reports only the
        cores an application holds)."""
        silent = (
            self.spec.compute_units - len(self.usage.devices)
            if self.spec.accelerator_kind is AcceleratorKind.NEURON
            else 0
        )
        return len(self.view.idle) + max(0, silent)

    @cached_property
    def accelerators_active(self) -> bool:
        """Any unit did real work at some point in the window (silent GPUs count as working)."""
        # A roll-up is the maximum over all GPUs: when it is quiet, every GPU is, whatever "unseen" assumes.
        unseen_busy = bool(self.view.unseen) and self.usage.accelerator_data is not AcceleratorData.ROLLUP
        return unseen_busy or bool(self.view.busy)

    @cached_property
    def host_busy(self) -> bool:
        """CPU or network shows work of its own (a service, a data pipeline, a nightly job): steadily (p95, as a
        share of the host or as whole vCPUs) or in some hour of the week, as the accelerators' "any real activity"
        rule does."""
        usage, policy = self.usage, self.policy
        cpu, network = self.cpu_p95, self.network_p95
        cpu_active, network_active = policy.cpu_activity_pct, policy.network_active_gbps
        if (cpu is not None and self.cpu_busy(cpu)) or (network is not None and network >= network_active):
            return True  # steadily busy: the hours need not be read
        # List comprehensions, not generators: a quiet host reads all 2 x 168 hours (see weekly_pattern).
        return (
            any([v is not None and v >= cpu_active for v in usage.hourly_cpu_mean])
            or any([v is not None and v >= cpu_active for v in usage.hourly_cpu_peak])
            or any([v is not None and v >= network_active for v in usage.hourly_network_mean_gbps])
        )

    @cached_property
    def recently_quiet(self) -> bool:
        """The accelerators did nothing in the last day (every hour with a reading below the idle threshold, and
        at least some hours read) while they worked earlier: advice that costs more is not for this host now."""
        last_day = [peak for peak in self.usage.accelerator_hour_peaks[-24:] if peak is not None]
        encoding = any(sessions is not None and sessions >= 1 for sessions in self.usage.encoder_hour_sessions[-24:])
        quiet = bool(last_day) and max(last_day) < self.policy.idle_util_pct and not encoding
        return quiet and self.accelerators_active

    @cached_property
    def recent_rise(self) -> str | None:
        """What rose in the last day (the accelerators' or the CPU's daily mean) far above the window's typical day,
        or None: a downsize sized on the whole window would not carry the load of the last hours."""
        for name, days in (("accelerator", self.usage.daily_accelerator_mean), ("CPU", self.usage.daily_cpu_mean)):
            known = [day for day in days if day is not None]
            if len(known) < 3 or days[-1] is None:
                continue
            typical = sorted(known[:-1])[len(known[:-1]) // 2]
            last = days[-1]
            if last >= typical * self.policy.recent_rise and last - typical >= 10:
                return (
                    f"the {name} load of the last day ({pct(last)}) is far above the window's typical day "
                    f"({pct(typical)})"
                )
        return None

    def cpu_busy(self, cpu_pct: float) -> bool:
        """Is this CPU reading work: a share of the host, or at least a whole busy vCPU on a large one?"""
        return cpu_pct >= self.policy.cpu_idle_pct or cpu_pct * self.spec.vcpus / 100 >= self.policy.busy_vcpus

    @property
    def host_memory_held(self) -> float | None:
        """Host RAM in use (peak %) when a process holds a real share of it (a cache, an index): a stop loses it."""
        held = self.usage.host_memory_peak_pct
        return held if held is not None and held >= self.policy.host_memory_held_pct else None

    @property
    def scarce(self) -> bool:
        return is_scarce(self.spec.instance_type)

    # Confidence ------------------------------------------------------------------------------

    @cached_property
    def data_confidence(self) -> Confidence:
        """How much history there is: the ceiling for every finding about this host."""
        usage, policy = self.usage, self.policy
        share = policy.high_confidence_coverage
        if usage.accelerator_days >= policy.lookback_days * share and usage.accelerator_coverage >= share:
            level = Confidence.HIGH
        elif usage.accelerator_days >= policy.medium_confidence_days:
            level = Confidence.MEDIUM
        else:
            level = Confidence.LOW
        if usage.accelerator_data is AcceleratorData.ROLLUP:
            level = level.at_most(Confidence.MEDIUM)
        return level

    @cached_property
    def caveats(self) -> tuple[str, ...]:
        """Parts of the demand that had to be assumed: any advice that rests on them is at most medium."""
        demand, view, usage = self.demand, self.view, self.usage
        found = []
        if not demand.memory_measured:
            found.append("GPU memory not measured")
        if view.unseen and usage.accelerator_data is not AcceleratorData.ROLLUP:
            found.append("units without metrics")
        if usage.cpu is None:
            found.append("CPU not measured")
        if view.holding and view.busy:
            found.append("units that hold memory but do no work")
        if any(load.signal in STANDS_IN for load in self.loads):
            found.append("SM occupancy standing in for SM active")
        return tuple(found)

    # Words -----------------------------------------------------------------------------------

    @property
    def observed_text(self) -> str:
        return f"{self.usage.accelerator_days:.1f} days observed ({self.usage.accelerator_coverage:.0%} coverage)"

    @property
    def host_text(self) -> str:
        text = f"CPU p95 {pct(self.cpu_p95)} of {self.spec.vcpus} vCPUs"
        if self.network_p95 is not None:
            text += f", network p95 {self.network_p95:.2f} Gbps"
        return text

    @cached_property
    def units_text(self) -> str:
        """'GPUs 0-7 busy: p95 96-97%, busiest hours 100%, memory peak up to 30.8 GiB of 40.0 GiB; GPUs 1-3 idle'."""
        spec, view, usage, unit = self.spec, self.view, self.usage, self.unit
        parts = []
        busy = [d for d in view.busy if d.utilization is not None]
        if self.signals_text:
            parts.append(self.signals_text)
        if busy:
            indexes = [d.index for d in busy]
            many = "s" if len(busy) > 1 else ""
            label = f"busiest {unit}" if indexes == ["*"] else f"{unit}{many} {index_ranges(indexes)}"
            text = f"{label}: p95 {span([d.utilization.p95 for d in busy if d.utilization], pct)}"
            _, burst, peak = busiest(busy)
            text += f", busiest hours {pct(burst)}, peak {pct(peak)}"
            memory = [d.memory_used_peak_mib for d in busy if d.memory_used_peak_mib is not None]
            if memory:
                total = max(memory_total(d, spec) for d in busy)
                upto = "up to " if len(memory) > 1 else ""
                text += f", memory peak {upto}{gib(max(memory))} of {gib(total)}"
            parts.append(text)
        if view.holding:
            held = view.holding
            parts.append(
                f"{unit}{'s' if len(held) > 1 else ''} {index_ranges([d.index for d in held])} hold up to "
                f"{gib(max(d.memory_used_peak_mib or 0.0 for d in held))} but did no work in the window"
            )
        encoding = [d for d in usage.devices if (d.encoder_sessions_peak or 0.0) >= 1.0]  # DCGM's: signals_text
        if encoding:
            sessions = max(d.encoder_sessions_peak or 0.0 for d in encoding)
            hours = max(d.encoder_active_hours for d in encoding)
            rates = [d.encoder_fps_mean for d in encoding if d.encoder_fps_mean is not None]
            fps = f" at {max(rates):.0f} fps" if rates else ""
            several = len(encoding) > 1
            parts.append(
                f"{unit}{'s' if several else ''} {index_ranges([d.index for d in encoding])} "
                f"encode{'' if several else 's'} "
                f"video (NVENC): up to {sessions:.0f} session{'s' if sessions != 1 else ''}{fps}, in {hours} hours of "
                "the window"
            )
        blind = [d.index for d in view.busy if d.utilization is None]
        if blind:
            parts.append(f"{unit}{'s' if len(blind) > 1 else ''} {index_ranges(blind)} published no utilisation")
        empty = [d for d in view.idle if d not in view.holding]
        if empty and usage.accelerator_data is AcceleratorData.PER_DEVICE:
            plural_s = "s" if len(empty) > 1 else ""
            parts.append(f"{unit}{plural_s} {index_ranges([d.index for d in empty])} idle")
        quiet = [d for d in usage.devices if d.silent_share > 0]
        if quiet:
            share = max(d.silent_share for d in quiet)
            parts.append(
                f"{unit}{'s' if len(quiet) > 1 else ''} {index_ranges([d.index for d in quiet])} reported nothing "
                f"for up to {share:.0%} of the time the host ran, read as unused (neuron-monitor reports only the "
                "cores an application holds)"
            )
        silent = spec.compute_units - len(usage.devices)
        if spec.accelerator_kind is AcceleratorKind.NEURON and silent > 0:
            parts.append(f"{silent} of {spec.compute_units} NeuronCores not in use (neuron-monitor reports none)")
        return "; ".join(parts)

    @cached_property
    def signals_text(self) -> str | None:
        """What DCGM measured of the busiest unit, beside kernel time: 'SM active p95 18%, tensor active p95 4%, DRAM
        active p95 11% (DCGM, busiest GPU) while utilization.gpu reads p95 97%' (None: nothing)."""
        if not self.profiled:
            return None
        video = [load for load in self.video_loads if load.measured and load.burst >= VIDEO_ACTIVE_PCT]
        loads = [load for load in self.loads if load.measured] + video
        if not loads:
            return None
        measured = ", ".join(f"{load.label} p95 {pct(load.p95)}" for load in loads)
        return f"{measured} (DCGM, busiest {self.unit}) while {KERNEL_TIME} reads p95 {pct(self.load[0])}"

    @cached_property
    def video_loads(self) -> tuple[Load, ...]:
        """The video engines' loads (NVENC, NVDEC), where DCGM measures them on every GPU (none elsewhere)."""
        if not self.profiled:
            return ()
        return tuple(engine_load(self.usage.devices, engine, self.load) for engine in (Engine.ENCODER, Engine.DECODER))

    @cached_property
    def demand_notes(self) -> tuple[str, ...]:
        """What the demand could not measure, and what it assumed instead."""
        spec, view, usage, memory, unit = self.spec, self.view, self.usage, self.memory, self.unit
        notes: list[str] = []
        if view.unseen and usage.accelerator_data is AcceleratorData.ROLLUP:
            notes.append(f"only the per-instance roll-up is published: all {spec.compute_units} {unit}s kept")
        elif view.unseen:
            notes.append(f"{plural(view.unseen, unit)} published no metrics and are counted as busy")
        if memory.reserved:
            notes.append(self.reserved_memory_text)
        elif memory.peak_mib is None:
            notes.append(f"{unit} memory not measured: targets keep {gib(spec.memory_per_unit_mib)} per {unit}")
        if usage.cpu is None:
            notes.append("CPU not measured: targets keep the vCPU count")
        if self.demand.graphics:
            notes.append(self.graphics_text)
        ended = [d for d in view.busy if memory_risk_ended(d, spec, self.policy)]
        if ended:
            last_days = max(d.memory_recent_peak_mib or 0.0 for d in ended)
            notes.append(
                f"{unit} memory rose with the load to {gib(max(d.memory_used_peak_mib or 0.0 for d in ended))} "
                f"(nearly all of it) earlier in the window, but peaks at {gib(last_days)} in its last "
                f"{RECENT_MEMORY_SECONDS // 86400} days: no out-of-memory risk now, and the earlier peak still sets "
                "the floor of any smaller target"
            )
        return tuple(notes)

    @property
    def graphics_text(self) -> str:
        """Why targets keep a graphics GPU: what says the host draws, not computes."""
        rt = " with RT cores" if self.demand.ray_tracing else ""
        return (
            f"a graphics host ({'; '.join(self.demand.graphics)}): targets keep a GPU that runs graphics{rt} (OpenGL, "
            "Vulkan, DirectX with AWS's GRID or gaming drivers); A100, H100 and H200 have no display engine"
        )

    @property
    def reserved_memory_text(self) -> str:
        unit = self.unit
        which = self.memory.reserved
        return (
            f"{unit} memory looks reserved, not used ({unit}{'s' if len(which) > 1 else ''} "
            f"{index_ranges(list(which))}: flat near the top of memory.total "
            "whatever the load, as vLLM, TensorRT-LLM, JAX, TensorFlow and PyTorch's caching allocator hold it): "
            f"the working set is unknown, so targets keep {gib(self.spec.memory_per_unit_mib)} per {unit} and no "
            "out-of-memory risk is claimed; to measure it, cap the reservation (e.g. vLLM --gpu-memory-utilization, "
            "TF_FORCE_GPU_ALLOW_GROWTH=true, XLA_PYTHON_CLIENT_PREALLOCATE=false) or log the framework's peak "
            "allocation (torch.cuda.max_memory_allocated)"
        )

    @property
    def unmeasured_ram_text(self) -> str:
        demand, spec = self.demand, self.spec
        return (
            f"host memory not measured: targets keep at least {gib(demand.host_memory_mib)} of RAM "
            f"({gib(spec.memory_mib)} x {demand.units}/{spec.compute_units} {spec.unit_name}s kept); publish "
            'mem_used_percent with the CloudWatch agent ("mem" section, see agent/README.md) to make this '
            "advice actionable"
        )
