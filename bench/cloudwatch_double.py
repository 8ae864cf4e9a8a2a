"""A CloudWatch double that pages like the real API, on the wire: requests and answers are the JSON of the
protocol botocore speaks to CloudWatch (awsJson1_0), so botocore's real parser - timestamps included - runs
on every datapoint.

It serves a synthetic region of GPU hosts as the CloudWatch agent publishes them (per-GPU series with
InstanceId, index, name and InstanceType dimensions; host memory, and no diskio or procstat series; AWS/EC2 CPU, network
and EBS):
- ListMetrics: 500 metrics per page with NextToken, by metric name across the region or by an InstanceId filter;
- GetMetricData: at most 500 queries per request, at most 100,800 datapoints per response, the rest under
  NextToken (a query's datapoints may continue on the next page, with StatusCode PartialData), fresh values in
  every response; it counts calls and datapoints served.
Installed on one client through botocore's `before-send` event: nothing leaves the process.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders

PAGE_DATAPOINTS = 100_800
MAX_QUERIES = 500
LIST_PAGE = 500
GPU_METRICS = (  # the shipped agent config's, and utilization_memory, which some configs publish and none reads
    "nvidia_smi_utilization_gpu",
    "nvidia_smi_memory_used",
    "nvidia_smi_memory_total",
    "nvidia_smi_encoder_stats_session_count",
    "nvidia_smi_encoder_stats_average_fps",
    "nvidia_smi_utilization_memory",
)


@dataclass(frozen=True)
class Host:
    instance_id: str
    instance_type: str
    gpus: int


def _encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body


# ------------------------------------------------------------------------------------------------ the double


@dataclass
class PagingCloudWatch:
    hosts: Sequence[Host]
    seed: int = 7
    get_metric_data_calls: int = 0
    list_metrics_calls: int = 0
    datapoints: int = 0
    _by_id: dict[str, Host] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_id = {host.instance_id: host for host in self.hosts}
        self._rng = np.random.default_rng(self.seed)

    def install(self, client: Any) -> Any:
        client.meta.events.register("before-send.cloudwatch", self._answer)
        return client

    def _answer(self, request: Any, **_: Any) -> AWSResponse:
        target = request.headers.get("X-Amz-Target", b"")
        operation = (target.decode() if isinstance(target, bytes) else str(target)).rsplit(".", 1)[-1]
        params = json.loads(request.body or b"{}")
        body = self._get_metric_data(params) if operation == "GetMetricData" else self._list_metrics(params)
        headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "bench"}
        return AWSResponse(request.url, 200, HTTPHeaders.from_dict(headers), _Raw(body))

    # ListMetrics ------------------------------------------------------------------------------

    def _metrics_of(self, host: Host, namespace: str) -> list[dict[str, Any]]:
        if namespace != "CWAgent":
            return []
        found = [
            {
                "Namespace": "CWAgent",
                "MetricName": name,
                "Dimensions": [
                    {"Name": "InstanceId", "Value": host.instance_id},
                    {"Name": "index", "Value": str(gpu)},
                    {"Name": "name", "Value": "NVIDIA A10G"},
                    {"Name": "InstanceType", "Value": host.instance_type},
                ],
            }
            for name in GPU_METRICS
            for gpu in range(host.gpus)
        ]
        found.append(
            {
                "Namespace": "CWAgent",
                "MetricName": "mem_used_percent",
                "Dimensions": [{"Name": "InstanceId", "Value": host.instance_id}],
            }
        )
        return found

    def _list_metrics(self, params: dict[str, Any]) -> bytes:
        self.list_metrics_calls += 1
        namespace, name = params.get("Namespace", ""), params.get("MetricName")
        start = int(params.get("NextToken") or 0)
        filters = {d["Name"]: d.get("Value") for d in params.get("Dimensions", [])}
        if "InstanceId" in filters:
            host = self._by_id.get(str(filters["InstanceId"]))
            listed = [
                m for m in (self._metrics_of(host, namespace) if host else []) if not name or m["MetricName"] == name
            ]
        else:
            return self._list_page_from(namespace, str(name), start)
        page = listed[start : start + LIST_PAGE]
        answer: dict[str, Any] = {"Metrics": page}
        if start + LIST_PAGE < len(listed):
            answer["NextToken"] = str(start + LIST_PAGE)
        return _encode(answer)

    def _list_page_from(self, namespace: str, name: str, start: int) -> bytes:
        """One page of a region-wide listing, generated from the host where it starts (bisected)."""
        per_host = (lambda h: h.gpus) if name in GPU_METRICS else (lambda h: 1 if name == "mem_used_percent" else 0)
        counts = np.array([per_host(h) for h in self.hosts]) if namespace == "CWAgent" else np.zeros(0)
        ends = np.cumsum(counts)
        total = int(ends[-1]) if len(ends) else 0
        page: list[dict[str, Any]] = []
        index = int(np.searchsorted(ends, start, side="right"))
        position = int(ends[index - 1]) if index else 0
        while index < len(self.hosts) and len(page) < LIST_PAGE:
            for metric in (m for m in self._metrics_of(self.hosts[index], namespace) if m["MetricName"] == name):
                if position >= start and len(page) < LIST_PAGE:
                    page.append(metric)
                position += 1
            index += 1
        answer: dict[str, Any] = {"Metrics": page}
        if start + len(page) < total:
            answer["NextToken"] = str(start + len(page))
        return _encode(answer)

    # GetMetricData ----------------------------------------------------------------------------

    def _get_metric_data(self, params: dict[str, Any]) -> bytes:
        self.get_metric_data_calls += 1
        queries = params["MetricDataQueries"]
        assert len(queries) <= MAX_QUERIES, "GetMetricData takes at most 500 queries"
        start = _epoch(params["StartTime"])
        end = _epoch(params["EndTime"])
        offset = int(params.get("NextToken") or 0)
        stop = offset + PAGE_DATAPOINTS
        results = []
        position = 0
        for query in queries:
            period = int(query["MetricStat"]["Period"])
            count = (end - start) // period
            first, last = max(offset, position), min(stop, position + count)
            if first < last:
                index = np.arange(first - position, last - position, dtype=np.int64)
                values = self._rng.uniform(0.0, 100.0, len(index))  # fresh values in every response
                results.append(
                    {
                        "Id": str(query["Id"]),
                        "Label": str(query["MetricStat"]["Metric"]["MetricName"]),
                        "Timestamps": (start + index * period).tolist(),
                        "Values": values.round(3).tolist(),
                        "StatusCode": "PartialData" if last < position + count else "Complete",
                    }
                )
                self.datapoints += last - first
            position += count
        answer: dict[str, Any] = {"MetricDataResults": results, "Messages": []}
        if stop < position:
            answer["NextToken"] = str(stop)
        return _encode(answer)


def _epoch(value: Any) -> int:
    return int(value.timestamp()) if isinstance(value, datetime) else int(value)
