"""GetMetricData's answers decoded straight into numpy arrays, behind botocore's client.

botocore decodes a response by walking the operation's output shape value by value. For 14 days of 5-minute series
that walk was most of the CPU of reading CloudWatch (~0.75 us per datapoint: over 100 million `_parse_shape` calls for
2,000 hosts). botocore speaks CloudWatch's `json` protocol (awsJson1_0, the first of the model's `protocols` it
supports; tests/unit/test_metric_data.py checks it still does), where a result's `Timestamps` are epoch seconds and
its `Values` numbers. This parser decodes a successful GetMetricData body with orjson (numbers several times faster
than the standard library's), takes each result's two long lists out as arrays (epoch seconds as int64, values as
float64, as `epochs` and `floats` convert them), and hands what is left - ids, labels, status codes, messages,
NextToken - to botocore's own walk. Everything else goes to botocore's parser unchanged: errors (throttling and 5xx
reach botocore's retries and error parsing as before), other operations, and any body the fast path does not expect
(botocore then decodes it as it always did, and the collector converts its lists with the same two functions), so the
answer is always botocore's, only faster.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import orjson
from botocore.parsers import JSONParser, ResponseParserFactory

from rightsizer.domain.usage import Floats, Ints

OUTPUT_SHAPE = "GetMetricDataOutput"
_ARRAYS = ("Timestamps", "Values")


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
    """Values as float64 (awsJson's "NaN" and "Infinity" strings, and nulls as NaN, included)."""
    return np.asarray(values, dtype=np.float64)


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
        document = orjson.loads(body)
        if not isinstance(document, dict):
            raise _NotOurs("not a JSON object")
        results = document.get("MetricDataResults") or []
        if not isinstance(results, list):
            raise _NotOurs("MetricDataResults is not a list")
        columns: list[tuple[Ints | None, Floats | None]] = []
        for result in results:
            if not isinstance(result, dict):
                raise _NotOurs("a result is not an object")
            stamps, values = (result.pop(name, None) for name in _ARRAYS)
            if not all(part is None or isinstance(part, list) for part in (stamps, values)):
                raise _NotOurs("Timestamps or Values is not a list")
            columns.append(
                (epochs(stamps) if stamps is not None else None, floats(values) if values is not None else None)
            )
        parsed: dict[str, Any] = self._parse_shape(shape, document)  # type: ignore[attr-defined]  # the rest
        for result, (stamps_array, values_array) in zip(parsed.get("MetricDataResults", []), columns, strict=True):
            if stamps_array is not None:
                result["Timestamps"] = stamps_array
            if values_array is not None:
                result["Values"] = values_array
        return parsed


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
