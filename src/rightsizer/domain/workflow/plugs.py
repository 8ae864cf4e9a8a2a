"""Where an action plugs into the shared workflow: its `Fragment` (its request checks, the points where its path leaves
the shared one, its own states) and how the shared Choices are composed from every action's.

The shared workflow (domain/workflow/entry.py, host.py, sagemaker.py, ending.py) never names an action: each routing
Choice at an `Entry` takes the routes the actions declare there, in the registry's order (domain/actions/), so a new
action is its module and nothing in the shared sections.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from rightsizer.domain.workflow.asl import Rule, State, all_of, equals, goto, not_, one_of
from rightsizer.domain.workflow.fragments import IN

T = TypeVar("T")
HOST_DONE = "Done"  # where an action on an EC2 host ends on success (domain/workflow/ending.py)


class Entry(StrEnum):
    """A point where an action's path may leave the shared workflow: the value is the Choice state that routes there.
    Each Choice's Default is the shared path, or the one action that takes the rest (`Route.rest`)."""

    ROLE_CHECKED = "ActionRoleAccount"  # the action role is proven; before the lock (default: take the lock)
    LOCKED = "ResourceRoute"  # the lock is taken; a resource that is not an EC2 host is read (default: the host checks)
    HOST_CHECKED = "TypeChecksNeeded"  # the host passed the checks every host action shares (default: validated)
    VALIDATED = "ActionRoute"  # the host is validated (default: the guarded stop)
    STOPPED = "StopOnly"  # the guarded stop stopped the host, or found it stopped (WasRunning): no shared default
    SAGEMAKER_VALIDATED = "SageMakerRoute"  # a SageMaker resource is validated: no shared default


@dataclass(frozen=True, slots=True)
class Route:
    """Where an action goes at an `Entry`; `rest`: it takes every action the other routes there do not (the Choice's
    Default), for the points the shared workflow has no path of its own after."""

    state: str
    rest: bool = False


@dataclass(frozen=True, slots=True)
class Fragment:
    """One action's part of the instance workflow."""

    states: Callable[[], Mapping[str, State]]  # its own states (built only by `make asl`)
    routes: Mapping[Entry, Route]  # where its path leaves the shared one
    # What CheckScheduleRequest requires of its input besides the fields every action has: every path its states
    # read (States.Runtime cannot be caught). Actions with equal requests share one Choice.
    request: Sequence[Rule] = ()
    # CheckInstance (an EC2 host action): when its request is refused outright (RefuseBadRequest), and its own checks
    # after the shared ones: (refused when, the refusal state).
    bad_request: Rule | None = None
    host_checks: Sequence[tuple[Rule, str]] = ()
    done: str = HOST_DONE  # the End state of its success (Finish routes there)


Actions = Mapping[str, Fragment]  # an action's kind (ActionKind's value) -> its fragment, in the registry's order


def is_action(kinds: Sequence[str]) -> Rule:
    """`$.action` is this one action (StringEquals), or one of these (an Or)."""
    return equals(IN.action, kinds[0]) if len(kinds) == 1 else one_of(IN.action, *kinds)


def grouped(pairs: Iterable[tuple[str, T]]) -> list[tuple[T, list[str]]]:
    """(value, the kinds that have it), the values in the order of their first kind (equal values are grouped)."""
    groups: list[tuple[T, list[str]]] = []
    for kind, value in pairs:
        for known, kinds in groups:
            if known == value:
                kinds.append(kind)
                break
        else:
            groups.append((value, [kind]))
    return groups


def routes(actions: Actions, entry: Entry, *, also: Rule | None = None) -> list[Rule]:
    """The Choices of `entry`: one per state the actions go to (their kinds grouped), in the registry's order; `also`
    joins each (And) when the Choice tests something else too."""
    going = (
        (kind, f.routes[entry].state) for kind, f in actions.items() if entry in f.routes and not f.routes[entry].rest
    )
    return [goto(_with(also, is_action(kinds)), state) for state, kinds in grouped(going)]


def rest(actions: Actions, entry: Entry) -> str:
    """The one action's state that takes every action `entry`'s Choices do not route."""
    taking = [f.routes[entry].state for f in actions.values() if entry in f.routes and f.routes[entry].rest]
    if len(taking) != 1:
        raise ValueError(f"{entry} ({entry.value}) needs exactly one action that takes the rest, not {taking}")
    return taking[0]


def requests(actions: Actions, refused: str) -> list[Rule]:
    """CheckScheduleRequest's per-action Choices: an action whose input lacks what its path reads is refused."""
    asked = ((kind, tuple(f.request)) for kind, f in actions.items() if f.request)
    return [goto(all_of(is_action(kinds), not_(all_of(*rules))), refused) for rules, kinds in grouped(asked)]


def done_routes(actions: Actions, succeeded: Rule, default: str) -> list[Rule]:
    """Finish's Choices for a success: each action to its Done state; the actions that end in `default` last."""
    ends = ((kind, f.done) for kind, f in actions.items() if f.done != default)
    return [
        *(goto(all_of(succeeded, is_action(kinds)), state) for state, kinds in grouped(ends)),
        goto(succeeded, default),
    ]


def check_routed(actions: Actions) -> None:
    """An action that leaves the shared workflow nowhere would run another action's path (it falls through every
    Default): refuse to build."""
    lost = [kind for kind, fragment in actions.items() if not fragment.routes]
    if lost:
        raise ValueError(f"actions whose fragment routes nowhere (they would run another action's path): {lost}")


def _with(also: Rule | None, rule: Rule) -> Rule:
    return rule if also is None else all_of(also, rule)
