"""GetMetricData's answers decoded straight into numpy arrays, and its requests encoded without botocore's walk of
them, behind botocore's client.

botocore decodes a response by walking the operation's output shape value by value. For 14 days of 5-minute series
that walk was most of the CPU of reading CloudWatch (~0.75 us per datapoint: over 100 million `_parse_shape` calls for
2,000 hosts). botocore speaks CloudWatch's `json` protocol (awsJson1_0, the first of the model's `protocols` it
supports; tests/unit/test_metric_data.py checks it still does), where a result's `Timestamps` are epoch seconds and
its `Values` numbers. This parser takes each result's two long lists out of the body's bytes as arrays (epoch seconds
as int64, values as float64, as `epochs` and `floats` convert them), decodes what is left with orjson, and hands it -
ids, labels, status codes, messages, NextToken - to botocore's own walk. The timestamps, whole epoch seconds of ten
digits on CloudWatch's wire, are read by numpy's own text reader (`np.fromstring`, ~4x faster than orjson's Python
integers and their conversion), once for each run of results whose lists are the same bytes (most of a page: one
shared read-only array). The values are read by simdjson straight into a float64 buffer (`as_buffer`: no Python float
for each datapoint, ~3x faster than orjson's floats and `np.fromiter`; correctly rounded, as `float()` reads them).
Any list either cannot read exactly (fractional or `1.7E9` timestamps as AWS's Java services write numbers, awsJson's
"NaN" strings, a null) is left in the body for orjson. Everything else goes to botocore's parser unchanged: errors
(throttling and 5xx reach botocore's retries and error parsing as before), other operations, and any body the fast
path does not expect (botocore then decodes it as it always did, and the collector converts its lists with the same
two functions), so the answer is always botocore's, only faster.

A request is the other half: botocore builds each GetMetricData body by walking the operation's input shape member by
member, then `json.dumps` the copy it built; for a page of 500 queries that walk cost as much CPU as decoding the
answer, and every continuation page (NextToken) sends the same 500 queries again. `MetricDataSerializer` wraps the
client's serializer: where the model says the queries' members are JSON as they are (strings, integers and booleans,
in structures and lists, none renamed: checked once on the model), the queries are `json.dumps`-ed as given, once per
request and its continuations, and botocore's own serializer encodes the rest (the timestamps, the token) and the
request around them. The bytes are botocore's (tests/unit/test_metric_data.py holds them equal).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
import orjson
import simdjson
from botocore.parsers import JSONParser, ResponseParserFactory

from rightsizer.domain.usage.series import Floats, Ints

OPERATION = "GetMetricData"
OUTPUT_SHAPE = "GetMetricDataOutput"
_ARRAYS = ("Timestamps", "Values")
_STAMPS_KEY = b'"Timestamps":['  # how a result's timestamps start on the wire (no space: JSON as AWS writes it)
_VALUES_KEY = b'"Values":['
_Array = TypeVar("_Array", bound=np.ndarray[Any, Any])  # Ints or Floats


def epochs(timestamps: Sequence[Any] | Ints) -> Ints:
    """Epoch seconds from what a client's parser gives: an array (this parser), numbers (a client that keeps
    timestamps raw), datetimes (botocore's default), or ISO strings (raw, from a text protocol)."""
    if isinstance(timestamps, np.ndarray):
        return timestamps.astype(np.int64, copy=False)
    if not timestamps:
        return np.zeros(0, dtype=np.int64)
    first = timestamps[0]
    if isinstance(first, int | float):
        try:  # whole seconds straight to int64 (twice as fast as through float64), fractions cut as astype cuts them
            return np.fromiter(timestamps, dtype=np.int64, count=len(timestamps))
        except (TypeError, ValueError, OverflowError):  # NaN, infinity, beyond int64: as the float path has them
            return np.asarray(timestamps, dtype=np.float64).astype(np.int64)
    if isinstance(first, datetime):
        return np.fromiter((int(t.timestamp()) for t in timestamps), dtype=np.int64, count=len(timestamps))
    return np.fromiter(
        (int(datetime.fromisoformat(str(t).replace("Z", "+00:00")).timestamp()) for t in timestamps),
        dtype=np.int64,
        count=len(timestamps),
    )


def floats(values: Sequence[Any] | Floats) -> Floats:
    """Values as float64 (awsJson's "NaN" and "Infinity" strings, and nulls as NaN, included), as `np.asarray` converts
    them; from a list by `np.fromiter`, which does not look at every item first for the array's shape (20 % faster)."""
    if isinstance(values, np.ndarray):
        return values.astype(np.float64, copy=False)
    return np.fromiter(values, dtype=np.float64, count=len(values))


class _NotOurs(Exception):
    """A body the fast path does not decode: botocore's parser does."""


class MetricDataParser(JSONParser):
    """botocore's `json` protocol parser, with GetMetricData's successful bodies decoded into arrays."""

    # botocore-stubs leave out the parsers' private methods (_do_parse, _parse_shape, _inject_response_metadata):
    # they are botocore's documented way to write a parser, and these overrides keep their contract.
    def _do_parse(self, response: dict[str, Any], shape: Any) -> dict[str, Any]:
        if shape is None or shape.name != OUTPUT_SHAPE:
            return dict(super()._do_parse(response, shape))  # type: ignore[misc]
        try:
            parsed = self._metric_data(response["body"], shape)
        except Exception:  # whatever the fast path cannot read, botocore's parser reads as it always has
            return dict(super()._do_parse(response, shape))  # type: ignore[misc]
        self._inject_response_metadata(parsed, response["headers"])  # type: ignore[attr-defined]
        return parsed

    def _metric_data(self, body: bytes, shape: Any) -> dict[str, Any]:
        emptied, stamps = read_timestamps(body)
        emptied, values = read_values(emptied)
        if stamps or values:
            try:
                return self._decoded(emptied, {"Timestamps": stamps, "Values": values}, shape)
            except _Misplaced:  # a list somewhere else than at a result's top: orjson reads them all
                pass
        return self._decoded(body, {}, shape)

    def _decoded(self, body: bytes, read: Mapping[str, Sequence[Any]], shape: Any) -> dict[str, Any]:
        """`body` decoded, the lists `read_timestamps` and `read_values` read already (`read`, by name, in the order
        of the results that have such a list) put in the place of the lists they emptied."""
        document = orjson.loads(body)
        if not isinstance(document, dict):
            raise _NotOurs("not a JSON object")
        results = document.get("MetricDataResults") or []
        if not isinstance(results, list):
            raise _NotOurs("MetricDataResults is not a list")
        early = {name: iter(read[name]) if read.get(name) else None for name in _ARRAYS}  # None: none was read
        columns: list[tuple[Ints | None, Floats | None]] = []
        for result in results:
            if not isinstance(result, dict):
                raise _NotOurs("a result is not an object")
            stamps, values = (result.pop(name, None) for name in _ARRAYS)
            if not all(part is None or isinstance(part, list) for part in (stamps, values)):
                raise _NotOurs("Timestamps or Values is not a list")
            columns.append(
                (
                    None if stamps is None else _placed(stamps, early["Timestamps"], epochs),
                    None if values is None else _placed(values, early["Values"], floats),
                )
            )
        for name, rest in early.items():
            if rest is not None and next(rest, _END) is not _END:
                raise _Misplaced(f"more {name} lists in the bytes than results with them")
        parsed: dict[str, Any] = self._parse_shape(shape, document)  # type: ignore[attr-defined]  # the rest
        for result, (stamps_array, values_array) in zip(parsed.get("MetricDataResults", []), columns, strict=True):
            if stamps_array is not None:
                result["Timestamps"] = stamps_array
            if values_array is not None:
                result["Values"] = values_array
        return parsed


_END = object()


class _Misplaced(Exception):
    """The lists found in the bytes are not the results' own, one each: the body is decoded as it is."""


def _placed(listed: list[Any], early: Iterator[_Array | None] | None, convert: Callable[[list[Any]], _Array]) -> _Array:
    """A result's list as an array: the one read from the bytes where the list was emptied, else the list converted
    (`early` is None where no list of its name was read from the bytes)."""
    if early is None:
        return convert(listed)
    try:
        found = next(early)
    except StopIteration:
        raise _Misplaced("a result's list was not seen in the bytes") from None
    if found is None:
        return convert(listed)
    if listed:  # an emptied list decodes as []: a non-empty one here is another list than the one read
        raise _Misplaced("a result's list is not the one read in its place")
    return found


def read_timestamps(body: bytes) -> tuple[bytes, list[Ints | None]]:
    """`body` with every `"Timestamps":[...]` list that `_whole_seconds` reads emptied, and what it read of each, in
    the order they come (None: left in the body for orjson)."""
    last: tuple[bytes, Ints] = (b"", _NONE)  # the list read last, as text and as read

    def read(text: bytes) -> Ints | None:
        nonlocal last
        # The series of a page mostly share their timestamps (every period of the window, where the hosts reported
        # without a gap): the bytes compare many times faster than they parse. The array is shared, so read-only.
        if text == last[0]:
            return last[1]
        stamps = _whole_seconds(text)
        if stamps is not None:
            stamps.flags.writeable = False
            last = (text, stamps)
        return stamps

    return _read_lists(body, _STAMPS_KEY, read)


def read_values(body: bytes) -> tuple[bytes, list[Floats | None]]:
    """`body` with every `"Values":[...]` list of numbers emptied, and each read by simdjson straight into float64 (as
    Python's float() reads them, correctly rounded), in the order they come. A list simdjson does not read as numbers
    (awsJson's "NaN" strings, a null, a number beyond float64 or uint64) is None, left in the body for orjson."""
    parser = simdjson.Parser()  # one per body: a parser is not for two threads at once, and is reused for each list

    def read(bracketed: bytes) -> Floats | None:
        try:
            listed = parser.parse(bracketed)
            if not isinstance(listed, simdjson.Array):
                return None
            buffer = listed.as_buffer(of_type="d")
        # simdjson's NUMBER_ERROR (beyond a double), INCORRECT_TYPE (a string, a null), BIGINT_ERROR (RuntimeError)
        except (ValueError, TypeError, RuntimeError):
            return None
        return np.frombuffer(buffer, dtype=np.float64)

    return _read_lists(body, _VALUES_KEY, read, brackets=True)  # simdjson reads a JSON document: the whole list


def _read_lists(
    body: bytes, key: bytes, read: Callable[[bytes], _Array | None], *, brackets: bool = False
) -> tuple[bytes, list[_Array | None]]:
    """`body` with every list after `key` (which ends with the list's `[`) that `read` reads emptied, and what it read
    of each, in the order they come (None: left in the body). `read` is handed the list's inside, or with `brackets`
    the list itself: one slice of the body either way, with no second copy built around it."""
    pieces: list[bytes] = []
    found: list[_Array | None] = []
    kept = 0  # the body up to here is in `pieces`
    start = body.find(key)
    while start >= 0:
        first = start + len(key)
        end = body.find(b"]", first)
        if end < 0:
            break  # not JSON: orjson says so
        array = read(body[first - 1 : end + 1] if brackets else body[first:end])
        found.append(array)
        if array is not None:
            pieces.append(body[kept:first])
            kept = end
        start = body.find(key, end)
    if not pieces:
        return body, found
    pieces.append(body[kept:])
    return b"".join(pieces), found


_NONE: Ints = np.zeros(0, dtype=np.int64)  # no list read yet
_NONE.flags.writeable = False
_TEN_DIGITS = (10**9, 10**10)  # epoch seconds from 2001-09-09 to 2286-11-20 are written with ten digits


def _whole_seconds(text: bytes) -> Ints | None:
    """The numbers of a JSON list's inside as int64, when they are epoch seconds of ten digits each, as CloudWatch
    writes its timestamps: each number from 10**9 to 10**10 - 1 and the text exactly 11 bytes a number, less one.
    A number that large takes ten characters or more, so the length leaves room for no other character: no sign, space,
    leading zero or trailing comma, which `np.fromstring` would take and JSON does not. None for anything else, which
    orjson reads."""
    try:
        stamps = np.fromstring(text, dtype=np.int64, sep=",")
    except ValueError:  # an empty number (",,", a leading comma)
        return None
    count = len(stamps)
    if not count:
        return stamps if not text else None
    low, high = _TEN_DIGITS
    if len(text) != 11 * count - 1 or int(stamps.min()) < low or int(stamps.max()) >= high:
        return None
    return stamps


class MetricDataParsers(ResponseParserFactory):
    """botocore's response parser factory, whose `json` protocol parser is `MetricDataParser`. A botocore session's
    `response_parser_factory` component: every client of that session gets it."""

    def __init__(self) -> None:
        super().__init__()
        self._options: dict[str, Any] = {}

    def set_parser_defaults(self, **kwargs: Any) -> None:
        super().set_parser_defaults(**kwargs)
        self._options.update(kwargs)

    def create_parser(self, protocol_name: str) -> Any:
        if protocol_name == "json":
            return MetricDataParser(**self._options)
        return super().create_parser(protocol_name)


# ---------------------------------------------------------------------------------------------
# Requests

_QUERIES = "MetricDataQueries"
_AS_GIVEN = frozenset({"string", "integer", "long", "boolean"})  # shapes botocore's JSON walk copies as they are


def as_given(shape: Any, seen: frozenset[str] = frozenset()) -> bool:
    """True when botocore's JSON serializer writes any value of `shape` as `json.dumps` writes it: structures (not
    documents), lists, strings, integers and booleans, no member renamed. Timestamps, blobs and floats it converts."""
    if shape.name in seen:
        return True  # a recursive shape is as plain as the rest of it
    inside = seen | {shape.name}
    if shape.type_name == "list":
        return as_given(shape.member, inside)
    if shape.type_name == "structure":
        return not shape.is_document_type and all(
            "name" not in member.serialization and as_given(member, inside) for member in shape.members.values()
        )
    return shape.type_name in _AS_GIVEN


class MetricDataSerializer:
    """The client's serializer, with GetMetricData's queries written by `json.dumps` rather than botocore's walk.

    botocore's JSON serializer rebuilds the request member by member and `json.dumps` the copy; where the model says
    every member of the queries is JSON as it is (`as_given`), dumping the caller's queries gives the same text. The
    queries must come first in the request (the collector's order; anything else is botocore's), and their text is
    kept for the request's continuations: a request with a NextToken carrying the very list the last one sent reuses
    it (CloudWatch continues a request only with the queries it started with). Everything else - the timestamps, the
    token, headers, other operations - is the wrapped serializer's."""

    def __init__(self, wrapped: Any) -> None:
        self._wrapped = wrapped
        self._plain: dict[str, bool] = {}  # operation -> its queries' shape is `as_given`
        self._last: tuple[Any, bytes] | None = None  # the queries last sent, and their JSON

    def serialize_to_request(self, parameters: Mapping[str, Any], operation_model: Any) -> dict[str, Any]:
        queries = parameters.get(_QUERIES)
        first = next(iter(parameters), None)
        if operation_model.name != OPERATION or first != _QUERIES or not self._queries_as_given(operation_model):
            return dict(self._wrapped.serialize_to_request(parameters, operation_model))
        rest = {name: value for name, value in parameters.items() if name != _QUERIES}
        request = dict(self._wrapped.serialize_to_request(rest, operation_model))
        around: bytes = request["body"]  # b"{...}": the other members, as botocore writes them
        written = self._queries_json(queries, continued="NextToken" in parameters)
        head = b'{"' + _QUERIES.encode() + b'": ' + written
        request["body"] = head + (b"}" if around == b"{}" else b", " + around[1:])
        return request

    def _queries_as_given(self, operation_model: Any) -> bool:
        if operation_model.name not in self._plain:
            shape = operation_model.input_shape
            member = shape.members.get(_QUERIES) if shape is not None else None
            self._plain[operation_model.name] = member is not None and as_given(member)
        return self._plain[operation_model.name]

    def _queries_json(self, queries: Any, *, continued: bool) -> bytes:
        last = self._last
        if continued and last is not None and last[0] is queries:
            return last[1]
        written = json.dumps(queries).encode()  # botocore's encoder, and its defaults
        self._last = (queries, written)
        return written
