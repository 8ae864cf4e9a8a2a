"""Indexed GetMetricData / ListMetrics for moto's CloudWatch backend (demo code, not product code).

moto 5.2.5 answers GetMetricData by rescanning every stored datum for every period of every query,
and ListMetrics by comparing every datum with every datum already listed: 14 days of 5-minute data
for a demo fleet takes minutes. `install()` swaps in implementations that index the datums by series
and give the same answers (same values, timestamps, labels, order, pagination and moto's quirks):

- GetMetricData (MetricStat queries): with Dimensions, a datum matches when moto's
  `sorted(md.dimensions) == sorted(dimensions)` holds and the name is equal (moto ignores the
  namespace then); without Dimensions, namespace and name must match. Buckets start at StartTime,
  only buckets with data are returned, statistics come from moto's own `Statistics` over the datums
  in moto's order. Requests with Expression queries go to moto's implementation unchanged.
- ListMetrics: the same entries in the same order (moto lists a multi-dimension series once per
  datum), the same dimension filter, 500 per page with moto's NextToken store.

The index lives on the backend object and is updated when `metric_data` grows, rebuilt when it
shrinks or is replaced. Pin: moto==5.2.5 (pyproject's `demo` extra).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from moto.cloudwatch import models as cw
from moto.cloudwatch.exceptions import ValidationError

_INDEX_ATTR = "_fast_cloudwatch_index"


class _State:
    def __init__(self) -> None:
        self.originals: dict[str, Callable[..., Any]] = {}
        self.generation = 0  # bumped by install(): an index built under an earlier install is not trusted
        self.list_once = False
        self.lock = threading.RLock()  # the moto server answers requests on several threads


_state = _State()

Pairs = tuple[tuple[Any, Any], ...]
Entry = tuple[datetime, int, Any]  # (timestamp, position in get_all_metrics(), datum)


class _Postings:
    """The datums of one series, ordered by (timestamp, insertion order); sorted lazily."""

    __slots__ = ("dirty", "entries", "timestamps")

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.timestamps: list[datetime] = []
        self.dirty = False

    def add(self, seq: int, datum: Any) -> None:
        self.entries.append((datum.timestamp, seq, datum))
        self.dirty = True

    def between(self, start: datetime, end: datetime) -> list[Entry]:
        if self.dirty:
            self.entries.sort(key=lambda entry: (entry[0], entry[1]))
            self.timestamps = [entry[0] for entry in self.entries]
            self.dirty = False
        return self.entries[bisect_left(self.timestamps, start) : bisect_left(self.timestamps, end)]


def _pairs(datum: Any) -> Pairs:
    return tuple((d.name, d.value) for d in datum.dimensions)


def _canonical(pairs: Pairs) -> Pairs:
    return tuple(sorted(pairs, key=lambda pair: (str(pair[0]), str(pair[1]))))


def _repeat_key(datum: Any) -> tuple[Any, ...] | None:
    """What moto's ListMetrics de-duplicates on, or None when it never de-duplicates the datum.

    moto's `are_dimensions_same` compares every dimension of one datum with every dimension of the
    other, so only datums whose dimensions are all the same (name, value) pair ever count as one.
    """
    pairs = _pairs(datum)
    if not pairs or len(set(pairs)) != 1:
        return None
    return (datum.namespace, datum.name, len(pairs), pairs[0])


class _Index:
    def __init__(self, source: list[Any]) -> None:
        self.generation = _state.generation
        self.source = source
        self.count = 0
        self.last: Any = None
        self.by_namespace_name: dict[tuple[str, str], _Postings] = defaultdict(_Postings)
        # (name, canonical dimensions) -> dimensions in stored order -> postings
        self.by_dimensions: dict[tuple[str, Pairs], dict[Pairs, _Postings]] = defaultdict(
            lambda: defaultdict(_Postings)
        )
        self.listed: list[Any] = []
        self.listed_by_namespace_name: dict[tuple[str, str], list[Any]] = defaultdict(list)
        self.listed_by_namespace: dict[str, list[Any]] = defaultdict(list)
        self.listed_by_name: dict[str, list[Any]] = defaultdict(list)
        self.repeat_keys: set[tuple[Any, ...]] = set()

    def current_for(self, source: list[Any]) -> bool:
        if self.generation != _state.generation or self.source is not source or len(source) < self.count:
            return False
        return self.count == 0 or source[self.count - 1] is self.last

    def catch_up(self) -> None:
        for seq in range(self.count, len(self.source)):
            self._add(seq, self.source[seq])
        self.count = len(self.source)
        self.last = self.source[-1] if self.source else None

    def _add(self, seq: int, datum: Any) -> None:
        self.by_namespace_name[(datum.namespace, datum.name)].add(seq, datum)
        pairs = _pairs(datum)
        self.by_dimensions[(datum.name, _canonical(pairs))][pairs].add(seq, datum)
        key = _repeat_key(datum)
        if key is not None:
            if key in self.repeat_keys:
                return
            self.repeat_keys.add(key)
        self.listed.append(datum)
        self.listed_by_namespace_name[(datum.namespace, datum.name)].append(datum)
        self.listed_by_namespace[datum.namespace].append(datum)
        self.listed_by_name[datum.name].append(datum)


def _index(backend: Any) -> _Index:
    source: list[Any] = backend.metric_data
    index: _Index | None = backend.__dict__.get(_INDEX_ATTR)
    if index is None or not index.current_for(source):
        index = _Index(source)
        setattr(backend, _INDEX_ATTR, index)
    index.catch_up()
    return index


def _moto_dimensions_equal(pairs: Pairs, query: Sequence[Any]) -> bool:
    # moto compares sorted() lists of its Dimension class, whose __lt__ is unusual: use it as is.
    return sorted(cw.Dimension(name, value) for name, value in pairs) == sorted(query)


def _entries(backend: Any, index: _Index, metric_stat: dict[str, Any], start: datetime, end: datetime) -> list[Entry]:
    metric = metric_stat["Metric"]
    namespace, name = metric["Namespace"], metric["MetricName"]
    dimensions = [cw.Dimension(name=d["Name"], value=d["Value"]) for d in metric.get("Dimensions", [])]
    found: list[Entry] = []
    if dimensions:
        canonical = _canonical(tuple((d.name, d.value) for d in dimensions))
        group = index.by_dimensions.get((name, canonical), {})
        for pairs, postings in group.items():
            if _moto_dimensions_equal(pairs, dimensions):
                found.extend(postings.between(start, end))
    else:
        series = index.by_namespace_name.get((namespace, name))
        if series is not None:
            found.extend(series.between(start, end))
    # Metrics moto computes on the fly (S3 bucket sizes) come after the stored ones, unindexed.
    offset = len(backend.metric_data)
    for position, datum in enumerate(backend.aws_metric_data):
        if not start <= datum.timestamp < end or datum.name != name:
            continue
        if dimensions:
            if sorted(datum.dimensions) != sorted(dimensions):
                continue
        elif datum.namespace != namespace:
            continue
        found.append((datum.timestamp, offset + position, datum))
    return found


def _statistic(stat: str, datums: list[Any]) -> Any:
    """moto's `Statistics` value, with its arithmetic inlined for plain values (the common case)."""
    if all(type(datum) is cw.MetricDatum for datum in datums):
        values = [datum.value for datum in datums]
        # Same operations in the same order as Statistics.calc_sum / calc_sample_count: same floats.
        if stat == "Average":
            return (sum(values) + 0) / (len(values) + 0)
        if stat == "Maximum":
            return max(values)
        if stat == "Minimum":
            return min(values)
        if stat == "Sum":
            return sum(values) + 0
        if stat == "SampleCount":
            return len(values) + 0
    stats = cw.Statistics([stat], datetime.min)
    stats.metric_data = datums
    return stats.get_statistics_for_type(stat)


def _result(query: dict[str, Any], entries: list[Entry], start: datetime, scan_by: str) -> dict[str, Any]:
    metric_stat = query["MetricStat"]
    delta = timedelta(seconds=int(metric_stat["Period"]))
    unit = metric_stat.get("Unit")
    stat = metric_stat["Stat"]
    buckets: dict[int, list[tuple[int, Any]]] = defaultdict(list)
    for timestamp, seq, datum in entries:
        if unit and datum.unit != unit:
            continue
        buckets[(timestamp - start) // delta].append((seq, datum))
    values: list[Any] = []
    timestamps: list[datetime] = []
    for bucket in sorted(buckets):
        members = sorted(buckets[bucket], key=lambda member: member[0])  # moto's (insertion) order
        values.append(_statistic(stat, [datum for _, datum in members]))
        timestamps.append(start + bucket * delta)
    if scan_by == "TimestampDescending":
        timestamps.reverse()
        values.reverse()
    label = query.get("Label") or f"{metric_stat['Metric']['MetricName']} {stat}"
    return {
        "id": query["Id"],
        "label": label,
        "values": values,
        "timestamps": timestamps,
        "status_code": "Complete",
    }


def _get_metric_data(
    self: Any,
    queries: list[dict[str, Any]],
    start_time: datetime,
    end_time: datetime,
    scan_by: str = "TimestampAscending",
) -> list[dict[str, Any]]:
    if any("MetricStat" not in query for query in queries):
        moto_results: list[dict[str, Any]] = _state.originals["get_metric_data"](
            self, queries, start_time, end_time, scan_by
        )
        return moto_results
    start_time = start_time.replace(microsecond=0)
    end_time = end_time.replace(microsecond=0)
    if start_time > end_time:
        raise ValidationError("The parameter EndTime must be greater than StartTime.")
    if start_time == end_time:
        raise ValidationError("The parameter StartTime must not equal parameter EndTime.")
    with _state.lock:
        index = _index(self)
        results = []
        for query in queries:
            entries = _entries(self, index, query["MetricStat"], start_time, end_time)
            result = _result(query, entries, start_time, scan_by)
            if query.get("ReturnData", True):
                results.append(result)
        return results


def _list_metrics(
    self: Any, next_token: str | None, namespace: str, metric_name: str, dimensions: list[dict[str, str]]
) -> tuple[str | None, list[Any]]:
    if next_token:
        page: tuple[str | None, list[Any]] = _state.originals["list_metrics"](
            self, next_token, namespace, metric_name, dimensions
        )
        return page
    with _state.lock:
        index = _index(self)
        if namespace and metric_name:
            listed = list(index.listed_by_namespace_name.get((namespace, metric_name), ()))
        elif namespace:
            listed = list(index.listed_by_namespace.get(namespace, ()))
        elif metric_name:
            listed = list(index.listed_by_name.get(metric_name, ()))
        else:
            listed = list(index.listed)
        repeats: set[tuple[Any, ...]] = set()
        for datum in self.aws_metric_data:
            if (namespace and datum.namespace != namespace) or (metric_name and datum.name != metric_name):
                continue
            key = _repeat_key(datum)
            if key is not None:
                if key in index.repeat_keys or key in repeats:
                    continue
                repeats.add(key)
            listed.append(datum)
        if dimensions:
            listed = [datum for datum in listed if datum.filter(None, None, dimensions)]
        if _state.list_once:
            listed = _once(listed)
        paginated: tuple[str | None, list[Any]] = self._get_paginated(listed)
        return paginated


def _once(listed: list[Any]) -> list[Any]:
    """Each series once, in first-seen order, as real CloudWatch lists them."""
    seen: set[tuple[str, str, frozenset[tuple[Any, Any]]]] = set()
    unique = []
    for datum in listed:
        key = (datum.namespace, datum.name, frozenset(_pairs(datum)))
        if key not in seen:
            seen.add(key)
            unique.append(datum)
    return unique


def install(*, list_once: bool = False) -> None:
    """Patch moto's CloudWatch backend with the indexed implementations (idempotent).

    `list_once=True` makes ListMetrics list each series once, as real CloudWatch does, instead of
    once per datum as moto does for series with two or more dimensions (far fewer pages to read).
    """
    with _state.lock:
        _state.list_once = list_once
        if _state.originals:
            return
        _state.generation += 1
        _state.originals["get_metric_data"] = cw.CloudWatchBackend.get_metric_data
        _state.originals["list_metrics"] = cw.CloudWatchBackend.list_metrics
        cw.CloudWatchBackend.get_metric_data = _get_metric_data  # type: ignore[method-assign]
        cw.CloudWatchBackend.list_metrics = _list_metrics  # type: ignore[method-assign]


def uninstall() -> None:
    """Restore moto's own implementations (idempotent)."""
    with _state.lock:
        if not _state.originals:
            return
        cw.CloudWatchBackend.get_metric_data = _state.originals.pop("get_metric_data")  # type: ignore[method-assign]
        cw.CloudWatchBackend.list_metrics = _state.originals.pop("list_metrics")  # type: ignore[method-assign]
        _state.list_once = False


def installed() -> bool:
    return bool(_state.originals)
