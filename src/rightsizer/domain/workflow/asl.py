"""A small vocabulary for writing Amazon States Language in Python.

* `state(...)` puts a state's keys in one order, whoever writes it.
* `Path` is a JSONPath and `Fields(SomeDataclass)` hands them out for the fields of the execution input: a name the
  dataclass lacks fails the build, not an execution.
* `fmt(text, ...)` writes States.Format: plain strings are inlined into the text, paths become its `{}` arguments.
* A value that Step Functions evaluates (a `Dyn`: a path or an intrinsic) is written under `"key.$"` by
  `evaluated`, so fragments say `{"reason": fmt(...)}` and never spell the `.$` themselves.
* `jsonata(...)` writes a JSONata expression (`{% ... %}`) for the few states that set `QueryLanguage: JSONata`: what
  JSONPath cannot say (copy an object whole but one field, keep the keys that exist and no others).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Union

State = dict[str, Any]
Rule = dict[str, Any]

# Every state's keys, in the order they are written.
ORDER = (
    "Comment",
    "Type",
    "QueryLanguage",  # "JSONata" on the states that need it; the machine's default is JSONPath
    "Resource",
    "Credentials",
    "TimeoutSeconds",
    "ItemsPath",  # a Map state's items, and what runs for each (ItemProcessor: a machine of its own)
    "ItemProcessor",
    "Parameters",
    "Arguments",  # a JSONata state's request (its Parameters)
    "Output",  # a JSONata state's output (what ResultSelector, ResultPath and OutputPath do in JSONPath)
    "ResultSelector",
    "ResultPath",
    "OutputPath",
    "Retry",
    "Catch",
    "Choices",
    "Default",
    "Error",
    "Cause",
    "CausePath",
    "Next",
    "SecondsPath",
    "Result",
    "End",
)
_UNSET: Any = object()


class Dyn(str):
    """A value Step Functions evaluates (a JSONPath or an intrinsic function): written under `"key.$"`."""

    __slots__ = ()


class Path(Dyn):
    """A JSONPath ("$.instance_id", "$$.Execution.Id")."""

    __slots__ = ()

    def dot(self, *names: str) -> Path:
        return Path(".".join((self, *names)))


class Format(Dyn):
    """States.Format(template, *args): kept apart so that a format can be spliced into another one."""

    template: str
    args: tuple[Path, ...]

    def __new__(cls, template: str, args: Sequence[Path]) -> Format:
        rendered = f"States.Format({', '.join([repr_text(template), *args])})"
        made = super().__new__(cls, rendered)
        made.template, made.args = template, tuple(args)
        return made


def jsonata(expression: str) -> str:
    """A JSONata expression as a JSONata state's field holds it. `$states.input` is the state's input,
    `$states.result` the task's answer, `$states.errorOutput` a caught error."""
    if "%}" in expression:
        raise ValueError(f"'%}}' would end the expression early: {expression!r}")
    return "{% " + " ".join(expression.split()) + " %}"


def repr_text(text: str) -> str:
    """A literal string as States.Format and the other intrinsics read it."""
    if any(c in text for c in "'\\"):
        raise ValueError(f"escape quotes and backslashes before using them in an intrinsic: {text!r}")
    return f"'{text}'"


def fmt(template: str, *values: str | Path | Format) -> Format:
    """States.Format: each `{}` of `template` takes the next value; plain strings are inlined (a literal in the
    text), paths stay arguments, and a Format is spliced in with its own arguments."""
    pieces = template.split("{}")
    if len(pieces) != len(values) + 1:
        raise ValueError(f"{len(pieces) - 1} slots for {len(values)} values in {template!r}")
    text, args = pieces[0], list[Path]()
    for value, piece in zip(values, pieces[1:], strict=True):
        if isinstance(value, Format):
            text, args = text + value.template, [*args, *value.args]
        elif isinstance(value, Path):
            text, args = text + "{}", [*args, value]
        elif isinstance(value, Dyn):
            raise TypeError(f"only paths and formats go into States.Format: {value}")
        else:
            if any(c in value for c in "{}"):
                raise ValueError(f"braces in a literal would be read as slots: {value!r}")
            text += value
        text += piece
    return Format(text, args)


def intrinsic(name: str, *args: Dyn | int) -> Dyn:
    """States.Array($.instance_id), States.ArrayLength($.Reservations), States.MathAdd($.poll.count, 1), ..."""
    return Dyn(f"States.{name}({', '.join(str(arg) for arg in args)})")


def evaluated(node: Any) -> Any:
    """`node` as ASL JSON: a key whose value Step Functions evaluates becomes `key.$`."""
    if isinstance(node, Mapping):
        return {(f"{k}.$" if isinstance(v, Dyn) else k): evaluated(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [evaluated(item) for item in node]
    return str(node) if isinstance(node, Dyn) else node


def state(kind: str, **fields: Any) -> State:
    """One state, its keys in ORDER (a field left None is left out; ResultPath=None is written as null)."""
    unknown = set(fields) - set(ORDER)
    if unknown:
        raise ValueError(f"not a state field: {sorted(unknown)}")
    fields["Type"] = kind
    written: State = {}
    for name in ORDER:
        value = fields.get(name, _UNSET)
        if value is _UNSET or (value is None and name != "ResultPath"):
            continue
        written[name] = evaluated(value) if name in ("Parameters", "ResultSelector", "Credentials") else value
    return written


# -- Choice rules -------------------------------------------------------------------------------------------------


def equals(path: Path, value: str | bool | int | Path) -> Rule:
    """StringEquals / BooleanEquals / NumericEquals by the value's type; StringEqualsPath for a path."""
    if isinstance(value, Path):
        return {"Variable": path, "StringEqualsPath": value}
    if isinstance(value, bool):
        return {"Variable": path, "BooleanEquals": value}
    if isinstance(value, int):
        return {"Variable": path, "NumericEquals": value}
    return {"Variable": path, "StringEquals": str(value)}


def compare(path: Path, operator: str, value: int | Path) -> Rule:
    """Numeric<operator> (GreaterThan, GreaterThanEquals, LessThanEquals, ...), or Numeric<operator>Path."""
    suffix = "Path" if isinstance(value, Path) else ""
    return {"Variable": path, f"Numeric{operator}{suffix}": value}


def present(path: Path, yes: bool = True) -> Rule:
    return {"Variable": path, "IsPresent": yes}


def is_type(path: Path, kind: str) -> Rule:
    """IsString, IsNumeric, ..."""
    return {"Variable": path, f"Is{kind}": True}


def not_(rule: Rule) -> Rule:
    return {"Not": rule}


def all_of(*rules: Rule) -> Rule:
    return {"And": list(rules)}


def any_of(*rules: Rule) -> Rule:
    return {"Or": list(rules)}


def goto(rule: Rule, next_state: str) -> Rule:
    return {**rule, "Next": next_state}


def one_of(path: Path, *values: str) -> Rule:
    return any_of(*(equals(path, value) for value in values))


# -- Retry and Catch ----------------------------------------------------------------------------------------------


def retry(
    errors: Sequence[str], *, interval: int, attempts: int, backoff: int = 2, max_delay: int | None = None
) -> dict[str, Any]:
    """A Retry policy: exponential backoff from `interval` seconds; with `max_delay`, each wait is drawn with FULL
    jitter and capped at `max_delay` seconds."""
    policy: dict[str, Any] = {
        "ErrorEquals": list(errors),
        "IntervalSeconds": interval,
        "MaxAttempts": attempts,
        "BackoffRate": backoff,
    }
    if max_delay is not None:
        policy.update({"MaxDelaySeconds": max_delay, "JitterStrategy": "FULL"})
    return policy


def never(errors: Sequence[str]) -> dict[str, Any]:
    """No retry for these (listed ahead of a broader retrier that would catch them)."""
    return {"ErrorEquals": list(errors), "MaxAttempts": 0}


def catch(next_state: str, result_path: Path, errors: Sequence[str] = ("States.ALL",)) -> dict[str, Any]:
    return {"ErrorEquals": list(errors), "ResultPath": result_path, "Next": next_state}


# -- the execution input's fields as paths ------------------------------------------------------------------------


class Fields:
    """The fields of a dataclass as JSONPaths under `root`: `Fields(WorkflowInput).instance_id == "$.instance_id"`;
    a field that is a dataclass itself gives its own Fields. A name the dataclass lacks raises AttributeError."""

    def __init__(self, cls: type, root: str = "$") -> None:
        self._root = Path(root)
        self._hints = typing.get_type_hints(cls)
        self._names = {f.name for f in dataclasses.fields(cls)}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._names:
            raise AttributeError(f"the execution input has no field {name!r} (under {self._root})")
        path = self._root.dot(name)
        nested = _dataclass_in(self._hints[name])
        return Fields(nested, path) if nested is not None else path

    def dot(self, *names: str) -> Path:
        """A path below this one that the input does not declare (a state writes it)."""
        return self._root.dot(*names)


def _dataclass_in(hint: Any) -> type | None:
    """The dataclass a type hint names (also as `X | None`), else None."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
    for option in options:
        if isinstance(option, type) and dataclasses.is_dataclass(option):
            return option
    return None
