"""`--output text`, the AWS CLI's rules: a scalar on its own line, a list of scalars on one tab-separated line, a list
of objects one line per object (their scalar values, keys sorted), nested lists and objects on lines of their own
led by the key in capitals.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from rightsizer.services.formatting import printable


def _scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _text(value: Any) -> str:
    # Tabs and newlines of a value would shift columns or forge lines: shown as escapes, like every other output.
    return printable(str(value))


def text_lines(data: Any, identifier: str | None = None, keys: Sequence[str] | None = None) -> Iterator[str]:
    """Lines of the AWS CLI's text output for `data`."""
    if isinstance(data, dict):
        yield from _dict_lines(data, identifier, keys)
    elif isinstance(data, list):
        yield from _list_lines(data, identifier)
    else:
        yield _text(data)


def _list_lines(items: list[Any], identifier: str | None) -> Iterator[str]:
    if not items:
        return
    if any(isinstance(item, dict) for item in items):
        keys = sorted({key for item in items if isinstance(item, dict) for key, v in item.items() if _scalar(v)})
        for item in items:
            yield from text_lines(item, identifier, keys)
        return
    scalars = [item for item in items if _scalar(item)]
    if scalars:
        if identifier is None:
            yield "\t".join(_text(item) for item in scalars)
        else:
            yield from (f"{identifier.upper()}\t{_text(item)}" for item in scalars)
    for item in items:
        if not _scalar(item):
            yield from text_lines(item, identifier)


def _dict_lines(item: Mapping[str, Any], identifier: str | None, keys: Sequence[str] | None) -> Iterator[str]:
    if keys is None:
        scalars = [_text(value) for key, value in sorted(item.items()) if _scalar(value)]
        nested = [(key, value) for key, value in sorted(item.items()) if not _scalar(value)]
    else:
        scalars = [_text(item.get(key)) for key in keys]
        nested = [(key, item[key]) for key in sorted(set(item) - set(keys))]
    if scalars:
        yield "\t".join([identifier.upper(), *scalars] if identifier is not None else scalars)
    for key, value in nested:
        yield from text_lines(value, key)
