"""A CloudWatch double that pages like the real API, on the wire: requests and answers are the JSON of the
protocol botocore speaks to CloudWatch (awsJson1_0), so the client's real parser runs on every datapoint.

It serves a synthetic region of GPU hosts (bench/synthetic_fleet.py: each host's own series, gaps where the host has
one) as the CloudWatch agent publishes them (per-GPU series with InstanceId, index, name and InstanceType dimensions,
DCGM's too on the hosts that publish them; host memory, and no diskio or procstat series; AWS/EC2 CPU, network and
EBS):
- ListMetrics: 500 metrics per page with NextToken, by metric name across the region or by an InstanceId filter;
- GetMetricData: at most 500 queries per request, at most 100,800 datapoints per response, the rest under
  NextToken (a query's datapoints may continue on the next page, with StatusCode PartialData), values made afresh
  for every response; it counts calls and datapoints served.
Installed on one client through botocore's `before-send` event (nothing leaves the process), or served over HTTP on
127.0.0.1 (`serve`), for a whole program such as the CLI (AWS_ENDPOINT_URL_CLOUDWATCH).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders

from bench.synthetic_fleet import Host, present, series

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
# What agent/dcgm/publish-dcgm-metrics.py publishes per GPU on the hosts that run it (SM occupancy only where SM active
# is missing, which it never is here).
DCGM_METRICS = ("dcgm_sm_active", "dcgm_tensor_active", "dcgm_dram_active", "dcgm_encoder_util", "dcgm_decoder_util")
# (metric, statistic) -> the synthetic series it reads (bench/synthetic_fleet.py)
_SERIES = {
    ("nvidia_smi_utilization_gpu", "Average"): "utilization_avg",
    ("nvidia_smi_utilization_gpu", "Maximum"): "utilization_max",
    ("nvidia_smi_memory_used", "Maximum"): "memory_used_max",
    ("nvidia_smi_memory_total", "Maximum"): "memory_total_max",
    ("nvidia_smi_encoder_stats_session_count", "Maximum"): "encoder_sessions_max",
    ("nvidia_smi_encoder_stats_average_fps", "Average"): "encoder_fps_avg",
    ("nvidia_smi_utilization_memory", "Average"): "utilization_avg",
    ("mem_used_percent", "Maximum"): "host_memory_max",
    ("CPUUtilization", "Average"): "cpu_avg",
    ("NetworkIn", "Sum"): "network_in_sum",
    ("NetworkOut", "Sum"): "network_out_sum",
    # DCGM's activity ratios (percent) follow the GPU's kernel time in this fleet: the bench counts their cost
    **{(name, "Average"): "utilization_avg" for name in DCGM_METRICS},
}
CONTENT_TYPE = "application/x-amz-json-1.0"


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
    get_metric_data_calls: int = 0
    list_metrics_calls: int = 0
    datapoints: int = 0
    _by_id: dict[str, Host] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._by_id = {host.instance_id: host for host in self.hosts}

    def install(self, client: Any) -> Any:
        client.meta.events.register("before-send.cloudwatch", self._answer)
        return client

    def _answer(self, request: Any, **_: Any) -> AWSResponse:
        target = request.headers.get("X-Amz-Target", b"")
        operation = (target.decode() if isinstance(target, bytes) else str(target)).rsplit(".", 1)[-1]
        body = self.answer(operation, request.body or b"{}")
        headers = {"Content-Type": CONTENT_TYPE, "x-amzn-RequestId": "bench"}
        return AWSResponse(request.url, 200, HTTPHeaders.from_dict(headers), _Raw(body))

    def answer(self, operation: str, body: bytes) -> bytes:
        """The JSON answer to one request (GetMetricData, or ListMetrics)."""
        params = json.loads(body or b"{}")
        return self._get_metric_data(params) if operation == "GetMetricData" else self._list_metrics(params)

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
            for name in GPU_METRICS + (DCGM_METRICS if host.dcgm else ())
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
        with self._lock:
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
        counts = np.array([_listed(h, name) for h in self.hosts]) if namespace == "CWAgent" else np.zeros(0)
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
        queries = params["MetricDataQueries"]
        assert len(queries) <= MAX_QUERIES, "GetMetricData takes at most 500 queries"
        start = _epoch(params["StartTime"])
        end = _epoch(params["EndTime"])
        offset = int(params.get("NextToken") or 0)
        stop = offset + PAGE_DATAPOINTS
        results = []
        position = served = 0
        for query in queries:
            stat = query["MetricStat"]
            period = int(stat["Period"])
            metric = stat["Metric"]
            dimensions = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
            host = self._by_id.get(str(dimensions.get("InstanceId")))
            gpu = int(dimensions["index"]) if "index" in dimensions else None
            name = _SERIES.get((str(metric["MetricName"]), str(stat["Stat"])))
            periods = (end - start) // period
            index = present(host, gpu, period, periods) if host and name else np.zeros(0, np.int64)
            count = len(index)
            first, last = max(offset, position), min(stop, position + count)
            if first < last:
                assert host is not None and name is not None
                kept = index[first - position : last - position]
                results.append(
                    {
                        "Id": str(query["Id"]),
                        "Label": str(metric["MetricName"]),
                        "Timestamps": (start + kept * period).tolist(),
                        "Values": series(host, name, gpu, period, periods, kept).tolist(),
                        "StatusCode": "PartialData" if last < position + count else "Complete",
                    }
                )
                served += last - first
            position += count
        answer: dict[str, Any] = {"MetricDataResults": results, "Messages": []}
        if stop < position:
            answer["NextToken"] = str(stop)
        with self._lock:
            self.get_metric_data_calls += 1
            self.datapoints += served
        return _encode(answer)


def _listed(host: Host, name: str) -> int:
    """How many series of metric `name` the host publishes in CWAgent."""
    if name in GPU_METRICS or (host.dcgm and name in DCGM_METRICS):
        return host.gpus
    return 1 if name == "mem_used_percent" else 0


def _epoch(value: Any) -> int:
    return int(value.timestamp()) if isinstance(value, datetime) else int(value)


# ------------------------------------------------------------------------------------------------ over HTTP


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as botocore's connection pool expects
    double: PagingCloudWatch

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        operation = str(self.headers.get("X-Amz-Target", "")).rsplit(".", 1)[-1]
        answer = self.double.answer(operation, body)
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("x-amzn-RequestId", "bench")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def serve(double: PagingCloudWatch) -> Iterator[str]:
    """The double on a free port of 127.0.0.1, for as long as the block runs; yields its endpoint URL."""
    handler = type("Handler", (_Handler,), {"double": double})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="cloudwatch-double", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
