"""What the rules conclude about a measured host: the cheapest type that carries its demand (or why none does), its
activity beyond the accelerators, and the confidence its history allows."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from rightsizer.domain.catalog import is_scarce
from rightsizer.domain.facts.words import MeasuredWords
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.models.hosts import AcceleratorKind
from rightsizer.domain.models.usage import AcceleratorData
from rightsizer.domain.signals import STANDS_IN
from rightsizer.domain.sizing.reasons import shortfalls_text
from rightsizer.domain.sizing.targets import Candidate, Refusals, candidates, has_comparable_target
from rightsizer.domain.wording import pct


@dataclass(frozen=True)
class Measured(MeasuredWords):
    """A running, analysable host: spec known, accelerator metrics with enough history."""

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
