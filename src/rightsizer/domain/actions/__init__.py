"""The one-click actions: one module per action, named after its kind, holding its `SPEC` (`ActionSpec`: its words and
rights, domain/action_spec.py) beside its `WORKFLOW` (`Fragment`: its request checks, where it leaves the shared
instance workflow and its own states, domain/workflow/plugs.py), as cloud-custodian's registered actions declare
their schema and permissions beside their behaviour.

This package is the registry: every module in it is an action, found here (pkgutil) and by `make asl`, which
generates `ActionKind` (domain/action_kinds.py), the state machine (its allow-list and routes from every fragment)
and, with `make schema`, the report schema's enum. Adding an action is one module here, then `make asl` and
`make schema` (tests/integration/test_new_member_footprint.py adds one and counts the files it touches). One that
needs input no other action has also extends what adapters/aws/workflow.py puts in the execution input, and one that
needs a right no action has the ActionRole of both templates (CloudFormation stays literal; test_registries.py checks
them against `ACTIONS`).

Pure: the Slack app's cold start imports it (the fragments hold functions; their states are built by `make asl`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType, ModuleType
from typing import TypeVar

from rightsizer.domain.action_kinds import ActionKind
from rightsizer.domain.action_spec import ActionSpec, action_modules
from rightsizer.domain.workflow.plugs import Fragment

T = TypeVar("T")


def _load() -> dict[ActionKind, ModuleType]:
    names = action_modules(__path__)
    missing = [kind.value for kind in ActionKind if kind.value not in names]
    newer = [name for name in names if name not in {kind.value for kind in ActionKind}]
    if missing or newer:
        raise LookupError(
            f"domain/action_kinds.py is stale (modules without a member: {newer}; members without a module: "
            f"{missing}): run `make asl`"
        )
    return {kind: importlib.import_module(f"{__name__}.{kind.value}") for kind in ActionKind}


def _declared(module: ModuleType, name: str, kind: type[T]) -> T:
    value = getattr(module, name, None)
    if not isinstance(value, kind):
        raise TypeError(f"{module.__name__} must define {name} (a {kind.__name__})")
    return value


_MODULES = _load()
# In ActionKind's order: the order its generator keeps (members stay where they are, a new one is added last).
ACTIONS: Mapping[ActionKind, ActionSpec] = MappingProxyType(
    {kind: _declared(module, "SPEC", ActionSpec) for kind, module in _MODULES.items()}
)
WORKFLOWS: Mapping[ActionKind, Fragment] = MappingProxyType(
    {kind: _declared(module, "WORKFLOW", Fragment) for kind, module in _MODULES.items()}
)
