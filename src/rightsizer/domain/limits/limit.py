"""One limit of a target (`Limit`): what a type offers of it, what the work needs of it, and its words; and the type as
the limits read it (`Offer`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeAlias

from rightsizer.domain.models.hosts import AcceleratorSpec, InstanceTypeSpec

if TYPE_CHECKING:  # a Demand reads its floors from LIMITS (demand.py); the limits read a Demand only when called
    from rightsizer.domain.limits.demand import Demand


@dataclass(frozen=True, slots=True)
class Offer:
    """A type a host's work could move to, as the limits read it: built once per catalog, source type and CPU
    architecture (hosts of one type share them)."""

    spec: InstanceTypeSpec
    accelerator: AcceleratorSpec
    source: InstanceTypeSpec
    architecture: str  # the hosts' (their AMI's)
    ratio: float  # the source's work on this type: > 1 slower, < 1 faster (the largest of `ratios`)
    basis: str = ""  # how the projection was made, for the reasons
    # The same for each projected engine (signals.PROJECTED's order: FP32, tensor, memory bandwidth); 0 where a figure
    # is missing on either side (nothing to project: `ratio` speaks for the accelerator). Empty: `ratio` for each.
    ratios: tuple[float, ...] = ()

    def ratio_of(self, position: int) -> float:
        """The ratio of the projected engine at `position`."""
        return self.ratios[position] if self.ratios else self.ratio

    @property
    def leaves_p_family(self) -> bool:
        return self.source.family.startswith("p") and not self.spec.family.startswith("p")


class Speaks(StrEnum):
    """When a limit has its say in a target's reason."""

    ALWAYS = "always"  # the figures every resize reason names
    NEEDED = "needed"  # whenever the host needs it (EFA, graphics, ...)
    NEAR = "near"  # when it decided the target or the work needs at least half of what the target offers
    DECIDED = "decided"  # only when it ruled out a cheaper type
    NEVER = "never"  # a type that falls short of it is no alternative worth naming (another CPU architecture)


Says: TypeAlias = "Callable[[Offer, Demand], str]"
Short: TypeAlias = "Callable[[Offer, Demand], str]"


@dataclass(frozen=True, slots=True)
class Limit:
    name: str
    offers: Callable[[Offer], float]
    needs: Callable[[Demand], float]  # (a bool counts as 1 or 0)
    says: Says
    short: Short
    speaks: Speaks = Speaks.NEAR
    source: str = ""  # where the type's figure and the work's come from (docs/how-it-decides.md says the same)
