"""demo/fast_cloudwatch.py answers exactly as moto's own CloudWatch backend does, only faster."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from demo import fast_cloudwatch

pytestmark = pytest.mark.integration

START = datetime(2026, 11, 29, 0, 7, tzinfo=UTC)  # not on the hour: buckets start at StartTime
END = START + timedelta(days=2)
GPU0 = [{"Name": "InstanceId", "Value": "i-a"}, {"Name": "index", "Value": "0"}]
GPU1 = [{"Name": "InstanceId", "Value": "i-a"}, {"Name": "index", "Value": "1"}]
GPU0_REVERSED = [{"Name": "index", "Value": "0"}, {"Name": "InstanceId", "Value": "i-a"}]
ROLLUP = [{"Name": "InstanceId", "Value": "i-a"}]


@pytest.fixture
def cloudwatch(moto_aws: None) -> Iterator[Any]:
    try:
        yield boto3.client("cloudwatch", region_name="us-east-1")
    finally:
        fast_cloudwatch.uninstall()


def _put(client: Any, namespace: str, data: list[dict[str, Any]]) -> None:
    for start in range(0, len(data), 1000):
        client.put_metric_data(Namespace=namespace, MetricData=data[start : start + 1000])


def _datum(name: str, dims: list[dict[str, str]], at: datetime, value: float, **extra: Any) -> dict[str, Any]:
    return {"MetricName": name, "Dimensions": dims, "Timestamp": at, "Value": value, **extra}


def _seed(client: Any, shift: int = 0) -> None:
    util = "nvidia_smi_utilization_gpu"
    rows = []
    # Inserted out of time order, with sub-period spacing, so buckets hold several datums.
    for step in reversed(range(0, 40)):
        at = START + timedelta(minutes=37 * step + 3 + shift)
        rows.append(_datum(util, GPU0, at, (step * 7.3 + shift) % 100))
        rows.append(_datum(util, GPU1, at, (step * 3.1) % 100, Unit="Percent"))
        rows.append(_datum(util, ROLLUP, at, step % 50))
    rows.append(_datum(util, GPU0_REVERSED, START + timedelta(hours=5, minutes=1), 42.0))
    rows.append(_datum(util, [], START + timedelta(hours=6), 11.0))
    rows.append(_datum(util, GPU0, START - timedelta(hours=1), 99.0))  # before the window
    rows.append(_datum(util, GPU0, END + timedelta(hours=1), 98.0))  # after it
    rows.append(
        {
            "MetricName": util,
            "Dimensions": GPU1,
            "Timestamp": START + timedelta(hours=7),
            "StatisticValues": {"SampleCount": 4, "Sum": 100.0, "Minimum": 5.0, "Maximum": 60.0},
        }
    )
    rows.append(
        {
            "MetricName": util,
            "Dimensions": GPU1,
            "Timestamp": START + timedelta(hours=8),
            "Values": [1.0, 2.0, 3.5],
            "Counts": [1, 2, 1],
        }
    )
    _put(client, "CWAgent", rows)
    # Same name and dimensions in another namespace: moto ignores the namespace when Dimensions are given.
    _put(client, "Other", [_datum(util, GPU0, START + timedelta(hours=2), 55.5)])
    # One single-dimension series repeated: moto's ListMetrics lists it once.
    _put(
        client,
        "AWS/EC2",
        [_datum("NetworkIn", [ROLLUP[0]], START + timedelta(minutes=m), 1e6) for m in (1, 2, 9)],
    )


def _stat(query_id: str, dims: list[dict[str, str]], stat: str, period: int, **extra: Any) -> dict[str, Any]:
    metric = {"Namespace": extra.pop("namespace", "CWAgent"), "MetricName": "nvidia_smi_utilization_gpu"}
    if dims:
        metric["Dimensions"] = dims
    metric_stat: dict[str, Any] = {"Metric": metric, "Period": period, "Stat": stat}
    if "unit" in extra:
        metric_stat["Unit"] = extra.pop("unit")
    return {"Id": query_id, "MetricStat": metric_stat, **extra}


QUERIES = [
    _stat("avg5m", GPU0, "Average", 300),
    _stat("max1h", GPU0, "Maximum", 3600),
    _stat("reversed", GPU0_REVERSED, "Maximum", 3600),
    _stat("gpu1sum", GPU1, "Sum", 3600),
    _stat("gpu1count", GPU1, "SampleCount", 3600),
    _stat("gpu1min", GPU1, "Minimum", 3600),
    _stat("gpu1avg", GPU1, "Average", 3600, Label="GPU 1"),
    _stat("percent", GPU1, "Maximum", 3600, unit="Percent"),
    _stat("nounit", GPU0, "Maximum", 3600, unit="Percent"),
    _stat("rollup", ROLLUP, "Maximum", 1800),
    _stat("anydims", [], "Maximum", 3600),
    _stat("otherns", GPU0, "Average", 3600, namespace="Other"),
    _stat("day", GPU0, "Maximum", 86400),
    _stat("hidden", GPU1, "Average", 3600, ReturnData=False),
    {
        "Id": "net",
        "MetricStat": {
            "Metric": {"Namespace": "AWS/EC2", "MetricName": "NetworkIn", "Dimensions": ROLLUP},
            "Period": 300,
            "Stat": "Sum",
        },
    },
]


def _metric_data(client: Any, scan_by: str = "TimestampAscending") -> list[dict[str, Any]]:
    response = client.get_metric_data(MetricDataQueries=QUERIES, StartTime=START, EndTime=END, ScanBy=scan_by)
    return list(response["MetricDataResults"])


def _list_pages(client: Any, **filters: Any) -> list[list[dict[str, Any]]]:
    pages = []
    request = dict(filters)
    while True:
        response = client.list_metrics(**request)
        pages.append(response["Metrics"])
        if not response.get("NextToken"):
            return pages
        request["NextToken"] = response["NextToken"]


LIST_FILTERS: list[dict[str, Any]] = [
    {},
    {"Namespace": "CWAgent"},
    {"MetricName": "nvidia_smi_utilization_gpu"},
    {"Namespace": "CWAgent", "MetricName": "nvidia_smi_utilization_gpu"},
    {"Namespace": "CWAgent", "Dimensions": [{"Name": "index"}]},
    {"Namespace": "CWAgent", "Dimensions": [{"Name": "index", "Value": "1"}]},
    {"Dimensions": [{"Name": "InstanceId", "Value": "i-a"}, {"Name": "index", "Value": "0"}]},
    {"Namespace": "AWS/EC2"},
    {"Namespace": "Nothing"},
]


def _snapshot(client: Any) -> dict[str, Any]:
    return {
        "ascending": _metric_data(client),
        "descending": _metric_data(client, "TimestampDescending"),
        "lists": [_list_pages(client, **filters) for filters in LIST_FILTERS],
    }


def test_patch_answers_like_moto_and_keeps_up_with_new_data(cloudwatch: Any) -> None:
    _seed(cloudwatch)
    original = _snapshot(cloudwatch)

    fast_cloudwatch.install()
    assert fast_cloudwatch.installed()
    assert _snapshot(cloudwatch) == original

    # Datums put after the index was built: the index catches up instead of going stale.
    _seed(cloudwatch, shift=11)
    patched = _snapshot(cloudwatch)
    fast_cloudwatch.uninstall()
    assert not fast_cloudwatch.installed()
    assert patched == _snapshot(cloudwatch)
    assert patched != original

    # The seeded data exercise what they should: data in every query but one.
    empty = {result["Id"] for result in original["ascending"] if not result["Values"]}
    assert empty == {"nounit"}
    assert "hidden" not in {result["Id"] for result in original["ascending"]}


def test_list_metrics_pages_match_moto(cloudwatch: Any) -> None:
    # moto lists a two-dimension series once per datum: 600 datums make two pages of one series.
    memory = [_datum("nvidia_smi_memory_used", GPU1, START + timedelta(minutes=m), m) for m in range(600)]
    _put(cloudwatch, "CWAgent", memory)
    _put(cloudwatch, "CWAgent", [_datum("nvidia_smi_memory_used", [ROLLUP[0]] * 2, START, 1.0)] * 3)
    filters: list[dict[str, Any]] = [
        {"Namespace": "CWAgent", "MetricName": "nvidia_smi_memory_used"},
        {"Dimensions": [{"Name": "index", "Value": "1"}]},
        {},
    ]
    original = [_list_pages(cloudwatch, **f) for f in filters]
    fast_cloudwatch.install()
    assert [_list_pages(cloudwatch, **f) for f in filters] == original
    assert [len(page) for page in original[0]] == [500, 101]


def test_patch_sees_datums_appended_straight_to_the_store(cloudwatch: Any) -> None:
    from moto.cloudwatch.models import MetricDatum, cloudwatch_backends
    from moto.core.models import DEFAULT_ACCOUNT_ID

    fast_cloudwatch.install()
    _seed(cloudwatch)
    before = _snapshot(cloudwatch)
    backend = cloudwatch_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    naive = (START + timedelta(hours=3)).replace(tzinfo=None)
    backend.metric_data.append(MetricDatum("CWAgent", "nvidia_smi_utilization_gpu", 97.0, GPU0, naive, None))
    after = _snapshot(cloudwatch)
    assert after != before
    fast_cloudwatch.uninstall()
    assert _snapshot(cloudwatch) == after


def test_expression_queries_and_bad_windows_behave_as_in_moto(cloudwatch: Any) -> None:
    _seed(cloudwatch)
    queries = [QUERIES[1], {"Id": "doubled", "Expression": "max1h * 2"}]

    def ask() -> Any:
        return cloudwatch.get_metric_data(MetricDataQueries=queries, StartTime=START, EndTime=END)["MetricDataResults"]

    def refused() -> str:
        with pytest.raises(ClientError) as error:
            cloudwatch.get_metric_data(MetricDataQueries=QUERIES[:1], StartTime=END, EndTime=START)
        return str(error.value)

    original, original_error = ask(), refused()
    fast_cloudwatch.install()
    assert ask() == original
    assert refused() == original_error


def test_list_once_lists_each_series_once(cloudwatch: Any) -> None:
    _seed(cloudwatch)
    fast_cloudwatch.install(list_once=True)
    listed = [m for page in _list_pages(cloudwatch, Namespace="CWAgent") for m in page]
    keys = [frozenset((d["Name"], d["Value"]) for d in m["Dimensions"]) for m in listed]
    assert len(keys) == len(set(keys))
    # GPU0 in both orders is one series; GPU1, the roll-up and the dimensionless datum make four.
    assert len(keys) == 4


def test_install_and_uninstall_swap_the_backend_methods() -> None:
    from moto.cloudwatch.models import CloudWatchBackend

    original = CloudWatchBackend.get_metric_data, CloudWatchBackend.list_metrics
    try:
        fast_cloudwatch.install()
        fast_cloudwatch.install()  # idempotent
        assert (CloudWatchBackend.get_metric_data, CloudWatchBackend.list_metrics) != original
    finally:
        fast_cloudwatch.uninstall()
        fast_cloudwatch.uninstall()
    assert (CloudWatchBackend.get_metric_data, CloudWatchBackend.list_metrics) == original
