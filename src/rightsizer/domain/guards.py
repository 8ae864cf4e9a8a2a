"""What each one-click guard relies on, and its answer when that cannot be read: it fails closed.

A one click (a resize, a stop, a schedule) is offered only when the checks behind it could be made. Each check
reads a source; when a source cannot be read (denied, throttled past the retries, an endpoint's 5xx), the one clicks
that rely on it (`ActionSpec.guarded_by`, domain/action_spec.py) are held back, with `GUARDS`' reason in the advice, and
whatever evidence remains is still used (the advice itself is given; only the click waits).

- CloudTrail's `LookupEvents` (resizes inside the window): without it, a host whose last start (`LaunchTime`) falls
  inside the window may have been resized then (a resize needs a stop and a start): it is judged on the samples
  since that start only and gets no one click. The agent's series of another `InstanceType` still show a resize.
  A host started before the window was not resized in it, CloudTrail or not.
- EC2's type offerings (`DescribeInstanceTypeOfferings`): a resize's target, or a scheduled host's daily restart,
  may be of a type the region no longer offers.
- The host described again by its shard (`DescribeInstances`): whether it still runs, and its tags (opt-out, its
  owner, the managed tag), are otherwise as of the plan, hours earlier.
- Reserved Instances, capacity reservations and Savings Plans: a reservation may keep billing for the old type after
  a resize, which then costs more than it saves (a stop or a schedule never adds cost: they stay one click, their
  savings at list price).
- The host's series in CloudWatch: a series CloudWatch answered only in part (`InternalError`, `Forbidden`)
  leaves the advice on incomplete data.

Pure data and functions; the analyzer's `unread_sources` adjustment applies them (domain/rules/held_back.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class Source(StrEnum):
    """A source a one-click guard reads."""

    RESIZES = "resizes"  # CloudTrail LookupEvents
    OFFERINGS = "offerings"  # EC2 DescribeInstanceTypeOfferings
    DESCRIBED = "described"  # EC2 DescribeInstances, again at the shard: the host runs, its tags
    COMMITMENTS = "commitments"  # EC2 reservations, Savings Plans
    METRICS = "metrics"  # CloudWatch GetMetricData, per series


@dataclass(frozen=True, slots=True)
class Gap:
    """A source that could not be read, and the error it answered (in a few words, for the reasons)."""

    source: Source
    error: str


@dataclass(frozen=True, slots=True)
class Guard:
    """What a source guards, and what the advice says when it could not be read."""

    source: Source
    read: str  # what was read, for the docs and the operator: "CloudTrail LookupEvents"
    reason: str  # why the one click waits: "{error}" is the source's, "{type}" the host's
    held_back: str  # a few words for tables


GUARDS: Mapping[Source, Guard] = MappingProxyType(
    {
        Source.RESIZES: Guard(
            Source.RESIZES,
            "CloudTrail LookupEvents (the window's instance-type changes)",
            "resizes could not be read ({error}), and the host started inside the window: it may have been resized "
            "then, so only the samples since are judged and nothing is one click until a full window has passed",
            "resizes unreadable, started in the window",
        ),
        Source.OFFERINGS: Guard(
            Source.OFFERINGS,
            "EC2 DescribeInstanceTypeOfferings (the types the region offers)",
            "the types this region offers could not be read ({error}): the target, or {type} for a schedule's daily "
            "restart, may not be offered, so no one click until they can be read",
            "type offerings unreadable",
        ),
        Source.DESCRIBED: Guard(
            Source.DESCRIBED,
            "EC2 DescribeInstances, again before each shard's analysis (the host still runs; its tags)",
            "the host could not be described again before the analysis ({error}): whether it still runs and what "
            "its tags say (opt-out, owner, managed) is as of the plan, so no one click until the next run",
            "host not described again: tags as of the plan",
        ),
        Source.COMMITMENTS: Guard(
            Source.COMMITMENTS,
            "EC2 DescribeReservedInstances and DescribeCapacityReservations, Savings Plans (net savings)",
            "{error}: a reservation or Savings Plan may keep billing for {type} after a resize, which would then cost "
            "more than it saves, so no one-click resize until they can be read",
            "reservations unreadable: net saving unknown",
        ),
        Source.METRICS: Guard(
            Source.METRICS,
            "CloudWatch GetMetricData (the agent's and EC2's series of the host)",
            "CloudWatch answered part of the host's series incompletely ({error}): the advice rests on incomplete "
            "data, so no one click until they are read whole",
            "CloudWatch series incomplete",
        ),
    }
)
