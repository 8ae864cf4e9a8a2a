"""How a measured host's usage reads in the rules' reasons: the days observed, the host's CPU and network, each unit's
work and memory, what DCGM measured, what the demand assumed, and what to publish where nothing was measured."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from rightsizer.domain.facts.views import MeasuredViews
from rightsizer.domain.models.hosts import AcceleratorKind
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.signals import KERNEL_TIME, VIDEO_ACTIVE_PCT
from rightsizer.domain.sizing.load import busiest
from rightsizer.domain.sizing.memory import memory_risk_ended
from rightsizer.domain.sizing.units import memory_total
from rightsizer.domain.usage.series import RECENT_MEMORY_SECONDS
from rightsizer.domain.wording import gib, index_ranges, pct, plural, span


@dataclass(frozen=True)
class MeasuredWords(MeasuredViews):
    """A measured host's usage in words, for the rules' reasons (each text built once per host)."""

    @property
    def video_unknown_text(self) -> str:
        """What to publish before a GPU with quiet SMs is called unused."""
        return (
            f"utilization.gpu measures only the SMs; {self.spec.accelerator_model}'s video encoders (NVENC) are not "
            "measured here, and a host that transcodes video looks just like this: publish "
            "encoder_stats_session_count and encoder_stats_average_fps in the agent's nvidia_gpu section "
            "(agent/amazon-cloudwatch-agent.json does) before anything is stopped or moved off GPUs"
        )

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
