"""JSON-safe dicts to and from the frozen domain dataclasses, for storage and Lambda payloads.

One reflective codec instead of a hand-written pair per class: every field is typed, so the type
hints say how to rebuild it. Money stays Decimal (written as a string), times are ISO 8601 in UTC.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections import abc
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from enum import Enum
from functools import cache
from typing import Any, TypeVar, Union, get_args, get_origin

T = TypeVar("T")


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        items = sorted(value) if isinstance(value, frozenset | set) else value
        return [to_jsonable(v) for v in items]
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_jsonable(cls: type[T], data: Any) -> T:
    return typing.cast(T, _build(cls, data))


def _build(hint: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [arg for arg in get_args(hint) if arg is not type(None)]
        return _build(options[0], data) if len(options) == 1 else data
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        hints = _hints(hint)
        known = {f.name for f in dataclasses.fields(hint) if f.init}
        return hint(**{name: _build(hints[name], value) for name, value in data.items() if name in known})
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(data)
    if hint is Decimal:
        return Decimal(str(data))
    if hint is datetime:
        return datetime.fromisoformat(data)
    if hint is float:
        return float(data)
    if hint is int:
        return int(data)
    if origin is tuple:
        args = get_args(hint)
        item = args[0] if args else Any
        return tuple(_build(item, v) for v in data)
    if origin is frozenset:
        return frozenset(_build(get_args(hint)[0], v) for v in data)
    if origin in (list, abc.Sequence):
        return [_build(get_args(hint)[0], v) for v in data]
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        args = get_args(hint)
        value_hint = args[1] if len(args) == 2 else Any
        return {k: _build(value_hint, v) for k, v in data.items()}
    return data
