"""Requests that set every member botocore's service model documents, for tests that must notice a field dropped.

`every_member(shape)` builds a value of `shape` with each member of each structure set (recursively), valid for the
model's own constraints (enums, lengths, ranges): botocore's ParamValidator accepts it. Values are placeholders; a
test overrides the ones the emulator or the scenario cares about.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import botocore.session
from botocore.model import Shape

_SESSION = botocore.session.get_session()


def input_shape(service: str, operation: str) -> Shape:
    shape = _SESSION.get_service_model(service).operation_model(operation).input_shape
    assert shape is not None, f"{service}:{operation} takes no input"
    return shape


def every_member(shape: Shape, name: str = "x", depth: int = 0) -> Any:
    """A value of `shape` that sets every member of every structure (a union: its first member)."""
    kind = shape.type_name
    meta: Mapping[str, Any] = shape.metadata
    if kind == "structure":
        members = list(shape.members.items())  # type: ignore[attr-defined]
        if shape.metadata.get("union"):
            members = members[:1]
        return {key: every_member(member, key, depth + 1) for key, member in members}
    if kind == "list":
        return [every_member(shape.member, name, depth + 1)]  # type: ignore[attr-defined]
    if kind == "map":
        return {"key": every_member(shape.value, name, depth + 1)}  # type: ignore[attr-defined]
    if kind == "string":
        if shape.enum:  # type: ignore[attr-defined]
            return shape.enum[0]  # type: ignore[attr-defined]
        text = f"{name.lower()}-1"
        low, high = int(meta.get("min", 0)), int(meta.get("max", 1024))
        return (text * (low // len(text) + 1))[: max(low, min(len(text), high))]
    if kind in ("integer", "long"):
        value = max(int(meta.get("min", 1)), 1)
        return min(value, int(meta["max"])) if "max" in meta else value
    if kind in ("float", "double"):
        return float(meta.get("min", 1.0)) or 1.0
    if kind == "boolean":
        return True
    if kind == "timestamp":
        return "2026-12-01T00:00:00Z"
    if kind == "blob":
        return b"x"
    raise TypeError(f"no sample for a {kind} shape ({shape.name})")


def problems(params: Mapping[str, Any], shape: Shape) -> str:
    """What botocore's own validation says of `params` for `shape` ("" when it accepts them)."""
    from botocore.validate import ParamValidator

    report = ParamValidator().validate(dict(params), shape)
    return str(report.generate_report()) if report.has_errors() else ""
