"""GetMetricData decoded into arrays (adapters/aws/metric_data.py) gives what botocore's own parser gives.

Every body is parsed twice: by `MetricDataParser` and by botocore's `JSONParser` (with the raw timestamps a metric
client keeps, and with botocore's default datetimes), and the answers must agree value for value once botocore's
lists are converted as the collector converts them. Errors, retries and paging go through a real botocore client whose
requests are answered on the wire (a `before-send` handler returning HTTP responses): nothing is stubbed above
botocore's parser.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import botocore.session
import numpy as np
import pytest
from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders
from botocore.exceptions import ClientError, ParamValidationError
from botocore.model import Shape
from botocore.parsers import JSONParser
from botocore.serialize import create_serializer
from hypothesis import given, settings
from hypothesis import strategies as st

from rightsizer.adapters.aws.cloudwatch import CloudWatchUsage
from rightsizer.adapters.aws.metric_data import (
    OUTPUT_SHAPE,
    MetricDataParser,
    MetricDataSerializer,
    as_given,
    epochs,
    floats,
    read_timestamps,
    read_values,
)
from rightsizer.adapters.aws.session import AwsSession, interactive_config
from rightsizer.domain.usage.series import RawUsage
from rightsizer.services.ports import SourceUnavailable, Window
from rightsizer.settings import MetricNames
from tests.botocore_samples import problems
from tests.factories import NOW, api_specs, instance

MODEL = botocore.session.get_session().get_service_model("cloudwatch")
_OUTPUT = MODEL.operation_model("GetMetricData").output_shape
assert _OUTPUT is not None
SHAPE: Shape = _OUTPUT
HEADERS = {"x-amzn-requestid": "req-1", "content-type": "application/x-amz-json-1.0"}
T0 = 1_796_082_600
WINDOW = Window(NOW - timedelta(hours=1), NOW)


def _raw(value: Any) -> Any:
    return value


def ours(body: bytes, status: int = 200) -> dict[str, Any]:
    return dict(MetricDataParser(timestamp_parser=_raw).parse(_response(body, status), SHAPE))


def botocores(body: bytes, status: int = 200, *, datetimes: bool = False) -> dict[str, Any]:
    parser = JSONParser() if datetimes else JSONParser(timestamp_parser=_raw)
    return dict(parser.parse(_response(body, status), SHAPE))


def _response(body: bytes, status: int) -> dict[str, Any]:
    return {"body": body, "headers": dict(HEADERS), "status_code": status, "context": {}}


def outcome(parse: Callable[[bytes], dict[str, Any]], payload: bytes) -> tuple[str, Any]:
    """What a parser makes of a body: its answer, or the kind of exception it raised (botocore raises on some)."""
    try:
        return "parsed", parse(payload)
    except Exception as error:
        return "raised", type(error)


def assert_same(fast: Mapping[str, Any], reference: Mapping[str, Any]) -> None:
    """The fast answer is botocore's, its two lists per result as the collector converts them."""
    assert fast.keys() == reference.keys()
    for key, value in reference.items():
        if key != "MetricDataResults":
            assert fast[key] == value, key
    for mine, theirs in zip(fast.get("MetricDataResults", []), reference.get("MetricDataResults", []), strict=True):
        assert mine.keys() == theirs.keys()
        for key, value in theirs.items():
            if key == "Timestamps":
                _same_array(mine[key], epochs(value) if value else np.zeros(0, np.int64))
            elif key == "Values":
                _same_array(mine[key], floats(value))
            else:
                assert mine[key] == value, key


def _same_array(mine: Any, expected: np.ndarray[Any, Any]) -> None:
    assert isinstance(mine, np.ndarray) and mine.dtype == expected.dtype
    assert np.array_equal(mine, expected, equal_nan=True)
    assert np.array_equal(np.signbit(mine), np.signbit(expected))  # -0.0 stays -0.0


def body(results: Sequence[Mapping[str, Any]], **top: Any) -> bytes:
    return json.dumps({"MetricDataResults": list(results), **top}).encode()


def result(query_id: str, stamps: Sequence[Any], values: Sequence[Any], status: str = "Complete") -> dict[str, Any]:
    return {"Id": query_id, "Label": f"label {query_id}", "Timestamps": list(stamps), "Values": list(values),
            "StatusCode": status}  # fmt: skip


# 1. The protocol the parser is made for ----------------------------------------------------------------------------


def test_botocore_speaks_json_to_cloudwatch() -> None:
    """The model offers CBOR, JSON and query; botocore picks JSON, the protocol this parser decodes. Should a new
    botocore pick another, GetMetricData would go through botocore's own parser again (correct, slower): this says
    so."""
    assert MODEL.resolved_protocol == "json"
    assert SHAPE.name == OUTPUT_SHAPE


# 2. Bodies, fast path and botocore's, value for value ---------------------------------------------------------------


CASES: dict[str, bytes] = {
    "a complete page": body(
        [result("q0", [T0, T0 + 300, T0 + 600], [12.5, 0.0, 100.0]), result("q1", [T0], [33.56666666666667])],
        Messages=[],
    ),
    "no results at all": body([]),
    "an empty result": body([result("q0", [], [])]),
    "partial data with a token and messages": body(
        [
            {**result("q0", [T0], [1.0], "PartialData"), "Messages": [{"Code": "ArithmeticError", "Value": "x"}]},
            result("q1", [], [], "InternalError"),
            result("q2", [], [], "Forbidden"),
        ],
        NextToken="page-2",
        Messages=[{"Code": "MaxMetricsExceeded", "Value": "too many datapoints"}],
    ),
    "timestamps as AWS's Java services write them": b'{"MetricDataResults":[{"Id":"q0","Timestamps":'
    b'[1.7960826E9,1.7960829E9,1796083200.0,1796083500.25],"Values":[1.0E-4,3.0E10,-0.0,7],'
    b'"StatusCode":"Complete"}]}',
    "awsJson's words for non-finite numbers, and a null": body(
        [result("q0", [T0, T0 + 1, T0 + 2, T0 + 3], ["NaN", "Infinity", "-Infinity", None])]
    ),
    "members botocore does not model, and none of the optional ones": b'{"MetricDataResults":[{"Id":"q0",'
    b'"Timestamps":[1796082600],"Values":[1.5],"Unmodelled":{"a":1}}],"Other":true}',
    "a result without values": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[1796082600],"StatusCode":"Complete"}]}',
    "nulls where lists go": b'{"MetricDataResults":[{"Id":"q0","Timestamps":null,"Values":null}],"Messages":null}',
    "more timestamps than values": body([result("q0", [T0, T0 + 300], [4.0])]),
    "a value beyond a double": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[1796082600],"Values":[1e400]}]}',
    "bare NaN, which orjson refuses": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[1796082600],"Values":[NaN]}]}',
    "an integer beyond 64 bits": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[1796082600],'
    b'"Values":[123456789012345678901234567890]}]}',
    "a null result": b'{"MetricDataResults":[null]}',
    "results that are not a list": b'{"MetricDataResults":{"Id":"q0"}}',
    "an empty body": b"",
    "not JSON": b"<html>oops</html>",
}


# Bodies the fast path leaves to botocore (orjson refuses them, or they are not the shape it decodes): the answer is
# then botocore's own, lists and all.
BOTOCORES = {
    "a value beyond a double",
    "bare NaN, which orjson refuses",
    "a null result",
    "results that are not a list",
    "an empty body",
    "not JSON",
}


def compact(payload: bytes) -> bytes:
    """The body without a space, as AWS writes JSON (and the timestamps' fast path reads it); as it is if not JSON."""
    try:
        return json.dumps(json.loads(payload), separators=(",", ":")).encode()
    except ValueError:
        return payload


# Bodies whose timestamp lists are found in the bytes and either read there or left to orjson, and bodies the
# JSON grammar refuses inside such a list (numpy would read them: they must fail as botocore fails).
RAW_CASES: dict[str, bytes] = {
    "a compact page": compact(CASES["a complete page"]),
    "an empty list and a null": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[],"Values":[]},'
    b'{"Id":"q1","Timestamps":null,"Values":null},{"Id":"q2","Timestamps":[1796082600],"Values":[2]}]}',
    "one list of floats among integers": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[1796082600,1796082900],'
    b'"Values":[1,2]},{"Id":"q1","Timestamps":[1.7960826E9],"Values":[3]},{"Id":"q2","Timestamps":[1796082600],'
    b'"Values":[4]}]}',
    "spaces inside a list": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[ 1796082600 , 1796082900 ],'
    b'"Values":[1,2]}]}',
    "an integer beyond int64": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[99999999999999999999],"Values":[1]}]}',
    "seconds of nine and eleven digits": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[999999999,10000000000],'
    b'"Values":[1,2]}]}',
    "a space where a digit would be": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[ 179608260,1796082600],'
    b'"Values":[1,2]}]}',
    "a sign where a digit would be (not JSON)": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[+179608260,'
    b'1796082600],"Values":[1,2]}]}',
    "a negative and a zero": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[0,-300],"Values":[1,2]}]}',
    "a timestamps list inside another member": b'{"MetricDataResults":[{"Id":"q0","Other":{"Timestamps":[5]},'
    b'"Timestamps":[1796082600],"Values":[1]}]}',
    "only one inside another member": b'{"MetricDataResults":[{"Id":"q0","Other":{"Timestamps":[5]},'
    b'"Values":[1]},{"Id":"q1","Timestamps":[1796082900],"Values":[2]}]}',
    "a key that ends like one": b'{"MetricDataResults":[{"Id":"q0","x\\"Timestamps":[7],'
    b'"Timestamps":[1796082600],"Values":[1]}]}',
    "a label that names one": b'{"MetricDataResults":[{"Id":"q0","Label":"\\"Timestamps\\":[1,2]",'
    b'"Timestamps":[1796082600],"Values":[1]}]}',
    "a key given twice": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[1],"Timestamps":[1796082600],"Values":[1]}]}',
    "leading zeros (not JSON)": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[007],"Values":[1]}]}',
    "a plus sign (not JSON)": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[+5],"Values":[1]}]}',
    "a trailing comma (not JSON)": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[5,],"Values":[1]}]}',
    "an empty element (not JSON)": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[5,,6],"Values":[1,2]}]}',
    "an unclosed list (not JSON)": b'{"MetricDataResults":[{"Id":"q0","Timestamps":[5,6',
}
RAW_BOTOCORES = {name for name in RAW_CASES if "not JSON" in name}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("spacing", [lambda payload: payload, compact], ids=["as written", "compact"])
def test_every_body_reads_as_botocore_reads_it(name: str, spacing: Callable[[bytes], bytes]) -> None:
    payload = spacing(CASES[name])
    if name in BOTOCORES:
        assert outcome(ours, payload) == outcome(botocores, payload)
    else:
        assert_same(ours(payload), botocores(payload))


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")  # epochs() of 1e20, as before
@pytest.mark.parametrize("name", RAW_CASES)
def test_timestamps_read_from_the_bytes_are_botocores(name: str) -> None:
    payload = RAW_CASES[name]
    if name in RAW_BOTOCORES:
        assert outcome(ours, payload) == outcome(botocores, payload)
    else:
        assert_same(ours(payload), botocores(payload))


def test_a_compact_pages_timestamps_are_read_from_its_bytes() -> None:
    """Each list of whole seconds is read by numpy and emptied for orjson; one numpy cannot read exactly stays."""
    emptied, read = read_timestamps(RAW_CASES["one list of floats among integers"])
    assert emptied.count(b'"Timestamps":[]') == 2 and b"1.7960826E9" in emptied
    assert [None if stamps is None else stamps.tolist() for stamps in read] == [
        [1796082600, 1796082900],
        None,
        [1796082600],
    ]


def test_a_pages_values_are_read_from_its_bytes_by_simdjson_unless_they_are_not_all_numbers() -> None:
    """Each list of numbers becomes float64 without a Python float per value; one with awsJson's "NaN" strings, a null
    or a number beyond 64 bits stays for orjson, which reads it as botocore does."""
    lists = [b"[1.5,2,-0.0,1e-7]", b'["NaN",1.0]', b"[null]", b"[123456789012345678901234567890]", b"[0.1]"]
    results = [b'{"Id":"q%d","Values":%s}' % (n, listed) for n, listed in enumerate(lists)]
    emptied, read = read_values(b'{"MetricDataResults":[' + b",".join(results) + b"]}")
    assert emptied.count(b'"Values":[]') == 2 and b'"NaN",1.0' in emptied and b"[null]" in emptied
    assert [None if values is None else values.tolist() for values in read] == [
        [1.5, 2.0, -0.0, 1e-7],
        None,
        None,
        None,
        [0.1],
    ]


def test_results_with_the_same_timestamps_share_one_read_only_array() -> None:
    """A page's series mostly share their timestamps: the bytes equal to the list read before it are not read again."""
    same, other = b"[1796082600,1796082900]", b"[1796082600,1796083200]"
    results = [
        b'{"Id":"q%d","Timestamps":%s,"Values":[1.0,2.0]}' % (n, stamps)
        for n, stamps in enumerate([same, same, other, other])
    ]
    _, read = read_timestamps(b'{"MetricDataResults":[' + b",".join(results) + b"]}")
    first, again, third, fourth = read
    assert first is again and third is fourth and first is not third
    assert first is not None and third is not None
    assert first.tolist() == [1796082600, 1796082900] and third.tolist() == [1796082600, 1796083200]
    assert not first.flags.writeable and not third.flags.writeable  # one series cannot change another's clock


def test_the_fast_path_hands_over_arrays() -> None:
    parsed = ours(CASES["a complete page"])
    first = parsed["MetricDataResults"][0]
    assert first["Timestamps"].dtype == np.int64 and first["Values"].dtype == np.float64
    assert list(first["Timestamps"]) == [T0, T0 + 300, T0 + 600]
    assert parsed["ResponseMetadata"]["RequestId"] == "req-1"
    assert parsed["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_timestamps_agree_with_botocores_datetimes() -> None:
    payload = CASES["timestamps as AWS's Java services write them"]
    (fast,) = ours(payload)["MetricDataResults"]
    (slow,) = botocores(payload, datetimes=True)["MetricDataResults"]
    assert list(fast["Timestamps"]) == list(epochs(slow["Timestamps"]))


def test_other_outputs_and_errors_are_botocores() -> None:
    list_metrics = MODEL.operation_model("ListMetrics").output_shape
    assert list_metrics is not None
    listed = b'{"Metrics":[{"Namespace":"CWAgent","MetricName":"m"}],"NextToken":"n"}'
    parser = MetricDataParser(timestamp_parser=_raw)
    reference = JSONParser(timestamp_parser=_raw)
    assert parser.parse(_response(listed, 200), list_metrics) == reference.parse(_response(listed, 200), list_metrics)
    error = b'{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate exceeded"}'
    assert ours(error, 400) == botocores(error, 400)
    assert ours(b"<html><body>Service Unavailable</body></html>", 503)["Error"]["Code"] == "503"


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
stamps = st.one_of(st.integers(0, 2**40), st.floats(0, 2.0**40, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(stamps, max_size=20), st.lists(finite, max_size=20)), max_size=6))
def test_any_numbers_read_as_botocore_reads_them(pages: list[tuple[list[Any], list[float]]]) -> None:
    payload = body([result(f"q{n}", s, v) for n, (s, v) in enumerate(pages)])
    assert_same(ours(payload), botocores(payload))
    assert_same(ours(compact(payload)), botocores(compact(payload)))


# 3. Through a real client: retries, errors and paging stay botocore's -----------------------------------------------


Answer = tuple[int, bytes]


class Wire:
    """Answers a client's requests in order, as HTTP responses: botocore's whole receive path runs. With `listings`,
    ListMetrics is answered from those (then with no metric, however many listings the collector reads) and only the
    other requests from `answers`."""

    def __init__(self, answers: Sequence[Answer], listings: Sequence[bytes] | None = None) -> None:
        self.answers = list(answers)
        self.listings = None if listings is None else list(listings)
        self.requests: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []  # as sent

    def __call__(self, request: Any, event_name: str = "", **_: Any) -> AWSResponse:
        self.bodies.append(bytes(request.body or b""))
        self.requests.append(json.loads(request.body or b"{}"))
        if self.listings is not None and event_name.endswith(".ListMetrics"):
            status, payload = 200, self.listings.pop(0) if self.listings else b'{"Metrics":[]}'
        else:
            status, payload = self.answers.pop(0)
        headers = HTTPHeaders.from_dict({"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "r"})
        if status == 400:
            headers["x-amzn-query-error"] = "Throttling;Sender"
        return AWSResponse("https://monitoring.us-east-1.amazonaws.com/", status, headers, _Body(payload))


class _Body:
    def __init__(self, payload: bytes) -> None:
        self._payload = payload

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._payload


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """botocore's retry delays, recorded instead of slept."""
    delays: list[float] = []
    monkeypatch.setattr("botocore.endpoint.time.sleep", delays.append)
    return delays


def metric_client(wire: Callable[..., Any]) -> Any:
    session = boto3.Session(aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1")
    client = AwsSession(session, config=interactive_config()).client("cloudwatch", "us-east-1", metric_arrays=True)
    client.meta.events.register("before-send.cloudwatch", wire)
    return client


THROTTLED = (400, b'{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate exceeded"}')
UNAVAILABLE = (503, b"<html><body>Service Unavailable</body></html>")
PAGE = (200, CASES["a complete page"])


def _ask(client: Any) -> Any:
    metric = {"Namespace": "N", "MetricName": "m"}
    query = {"Id": "q0", "MetricStat": {"Metric": metric, "Period": 300, "Stat": "Average"}}
    return client.get_metric_data(MetricDataQueries=[query], StartTime=WINDOW.start, EndTime=WINDOW.end)


def test_throttling_and_5xx_are_retried_by_botocore_then_parsed_fast(no_backoff: list[float]) -> None:
    wire = Wire([THROTTLED, UNAVAILABLE, PAGE])
    answer = _ask(metric_client(wire))
    assert len(wire.requests) == 3 and len(no_backoff) == 2
    assert answer["ResponseMetadata"]["RetryAttempts"] == 2
    assert isinstance(answer["MetricDataResults"][0]["Values"], np.ndarray)


def test_errors_that_outlast_the_retries_are_botocores(no_backoff: list[float]) -> None:
    with pytest.raises(ClientError) as raised:
        _ask(metric_client(Wire([THROTTLED] * 3)))
    assert raised.value.response["Error"]["Code"] == "Throttling"  # awsQueryCompatible's code, as botocore reads it
    metadata: Mapping[str, Any] = raised.value.response["ResponseMetadata"]
    assert metadata["MaxAttemptsReached"] is True


IID = "i-0000000000000000a"


def paged_answers() -> tuple[bytes, list[Answer]]:
    """One GPU metric listed for host IID, and its GetMetricData answers on two pages (with a message)."""
    iid = IID
    listed = json.dumps(
        {"Metrics": [{"Namespace": "CWAgent", "MetricName": "nvidia_smi_utilization_gpu",
                      "Dimensions": [{"Name": "InstanceId", "Value": iid}, {"Name": "index", "Value": "0"}]}]}
    ).encode()  # fmt: skip
    start = int(WINDOW.start.timestamp())
    first = body(
        [result("q0", [start, start + 300], [11.0, 12.0], "PartialData"), result("q2", [start], [3.0])],
        NextToken="2",
        Messages=[{"Code": "MaxMetricsExceeded", "Value": "too many datapoints"}],
    )
    second = body([result("q0", [start + 900, start + 600, start + 300], [14.0, 13.0, 15.0])])
    return listed, [(200, first), (200, second)]


def test_the_collector_pages_through_the_fast_parser_as_through_botocores() -> None:
    """CloudWatchUsage over a metric client and over a plain one, against the same paged answers: the same series."""
    iid = IID
    listed, answers = paged_answers()

    def read(client: Any) -> tuple[Any, list[str]]:
        usage = CloudWatchUsage(client, MetricNames())
        raw = usage.fetch([instance(instance_id=iid)], api_specs(), WINDOW)[iid]
        return raw, usage.warnings

    fast_raw, fast_warnings = read(metric_client(Wire(answers, [listed])))
    plain: Any = boto3.client("cloudwatch", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    plain.meta.events.register("before-send.cloudwatch", Wire(answers, [listed]))
    slow_raw, slow_warnings = read(plain)
    assert _series(fast_raw) == _series(slow_raw) and fast_warnings == slow_warnings
    assert list(fast_raw.devices[0].utilization_avg.values) == [11.0, 15.0, 13.0, 14.0]
    assert fast_warnings == ["CloudWatch GetMetricData message: MaxMetricsExceeded: too many datapoints"]


def test_the_collectors_requests_are_ones_botocores_model_accepts() -> None:
    """The metric client skips botocore's client-side validation (a third of the CLI's CPU): this test is what holds
    every request the collector makes through it (discovery and each page of GetMetricData) to botocore's model."""
    listed, answers = paged_answers()
    client = metric_client(Wire(answers, [listed]))
    sent: list[tuple[str, dict[str, Any], Any]] = []

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        sent.append((model.name, dict(params), model.input_shape))

    client.meta.events.register("before-parameter-build.cloudwatch", record)
    CloudWatchUsage(client, MetricNames()).fetch([instance(instance_id=IID)], api_specs(), WINDOW)
    assert {name for name, _, _ in sent} == {"ListMetrics", "GetMetricData"}
    assert sum(name == "GetMetricData" for name, _, _ in sent) == 2  # both pages, the second with its NextToken
    assert [problems(params, shape) for _, params, shape in sent] == [""] * len(sent)
    assert "Period" in problems({"MetricDataQueries": [{"Id": "q", "MetricStat": {"Period": "300"}}]}, sent[-1][2])


def test_the_metric_client_leaves_validation_to_the_test_above() -> None:
    """An empty Namespace (the model's minimum length is 1) reaches the wire: botocore's walk is not on this client,
    while a plain client refuses it before sending."""
    wire = Wire([], listings=[])
    metric_client(wire).list_metrics(Namespace="")
    assert wire.requests == [{"Namespace": ""}]
    plain: Any = boto3.client("cloudwatch", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    with pytest.raises(ParamValidationError, match="Namespace"):
        plain.list_metrics(Namespace="")


# Requests written without botocore's walk: the same bytes -----------------------------------------------------------

GET_METRIC_DATA = MODEL.operation_model("GetMetricData")


def botocores_body(params: Mapping[str, Any], operation: str = "GetMetricData") -> bytes:
    """What botocore's own JSON serializer writes for `params` (without validation, as the metric client)."""
    model = MODEL.operation_model(operation)
    return bytes(create_serializer("json", include_validation=False).serialize_to_request(params, model)["body"])


def ours_serializer() -> MetricDataSerializer:
    return MetricDataSerializer(create_serializer("json", include_validation=False))


def test_the_queries_shape_is_json_as_given() -> None:
    """The fast path applies to GetMetricData's queries as botocore models them (should a new model rename a member or
    add a timestamp or float to them, the whole request would be botocore's again: this says so), not to shapes
    botocore converts."""
    inputs = GET_METRIC_DATA.input_shape
    assert inputs is not None and as_given(inputs.members["MetricDataQueries"])
    put = MODEL.operation_model("PutMetricData").input_shape
    assert put is not None and not as_given(put.members["MetricData"])  # Timestamp, Value (a double)


def test_the_collectors_requests_are_the_bytes_botocore_writes() -> None:
    """Every request the collector sends through the metric client, each page of GetMetricData with its reused queries
    included, is byte for byte what botocore's own serializer writes for the same parameters."""
    listed, answers = paged_answers()
    wire = Wire(answers, [listed])
    client = metric_client(wire)
    sent: list[tuple[str, dict[str, Any]]] = []

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        sent.append((model.name, copy.deepcopy(params)))

    client.meta.events.register("before-parameter-build.cloudwatch", record)
    CloudWatchUsage(client, MetricNames()).fetch([instance(instance_id=IID)], api_specs(), WINDOW)
    assert [name for name, _ in sent].count("GetMetricData") == 2 and "NextToken" in sent[-1][1]
    assert [botocores_body(params, name) for name, params in sent] == wire.bodies


def test_the_queries_are_dumped_once_per_request_and_its_continuations() -> None:
    """botocore's serializer writes what surrounds the queries; the queries' text is reused for a continuation of the
    same list, and written afresh for another list or a request that starts again."""
    seen: list[dict[str, Any]] = []
    inner = create_serializer("json", include_validation=False)

    class Spy:
        def serialize_to_request(self, params: dict[str, Any], model: Any) -> Any:
            seen.append(params)
            return inner.serialize_to_request(params, model)

    serializer = MetricDataSerializer(Spy())
    first = [_query("q0", "i-1"), _query("q1", "i-2")]
    window = {"StartTime": WINDOW.start, "EndTime": WINDOW.end}
    start = {"MetricDataQueries": first, **window, "ScanBy": "TimestampAscending"}
    bodies = [
        serializer.serialize_to_request(params, GET_METRIC_DATA)["body"]
        for params in (start, {**start, "NextToken": "2"}, {**start, "MetricDataQueries": [_query("q0", "i-3")]})
    ]
    assert bodies == [botocores_body(start), botocores_body({**start, "NextToken": "2"}),
                      botocores_body({**start, "MetricDataQueries": [_query("q0", "i-3")]})]  # fmt: skip
    assert all("MetricDataQueries" not in params for params in seen)  # botocore never walked them
    first.append(_query("q2", "i-4"))  # changed, and sent again as a new request (no NextToken): written afresh
    assert serializer.serialize_to_request(start, GET_METRIC_DATA)["body"] == botocores_body(start)


def test_requests_the_fast_path_does_not_take_are_botocores() -> None:
    """Queries not first, another operation, and a request without queries: botocore's serializer, whole."""
    serializer = ours_serializer()
    late = {"StartTime": WINDOW.start, "EndTime": WINDOW.end, "MetricDataQueries": [_query("q0", "i-1")]}
    assert serializer.serialize_to_request(late, GET_METRIC_DATA)["body"] == botocores_body(late)
    listing = MODEL.operation_model("ListMetrics")
    params = {"Namespace": "CWAgent", "Dimensions": [{"Name": "InstanceId", "Value": "i-1"}]}
    plain = create_serializer("json", include_validation=False).serialize_to_request(params, listing)
    assert serializer.serialize_to_request(params, listing) == plain
    empty: dict[str, Any] = {"MetricDataQueries": []}
    assert serializer.serialize_to_request(empty, GET_METRIC_DATA)["body"] == botocores_body(empty)


def _query(query_id: str, iid: str, **more: Any) -> dict[str, Any]:
    metric = {"Namespace": "CWAgent", "MetricName": "m", "Dimensions": [{"Name": "InstanceId", "Value": iid}]}
    return {"Id": query_id, "MetricStat": {"Metric": metric, "Period": 300, "Stat": "Average"}, **more}


text = st.text(max_size=12)
dimension = st.fixed_dictionaries({"Name": text, "Value": text})
metric_stat = st.fixed_dictionaries(
    {"Metric": st.fixed_dictionaries({"Namespace": text, "MetricName": text, "Dimensions": st.lists(dimension)}),
     "Period": st.integers(-(2**40), 2**40), "Stat": text},
    optional={"Unit": text},
)  # fmt: skip
query = st.fixed_dictionaries(
    {"Id": text},
    optional={"MetricStat": metric_stat, "Expression": text, "Label": text, "ReturnData": st.booleans(),
              "Period": st.integers(0, 2**31), "AccountId": text},
)  # fmt: skip
moments = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))


@settings(max_examples=200, deadline=None)
@given(st.lists(query, max_size=5), moments, moments, st.one_of(st.none(), text))
def test_any_queries_are_written_as_botocore_writes_them(
    queries: list[dict[str, Any]], start: datetime, end: datetime, token: str | None
) -> None:
    params: dict[str, Any] = {"MetricDataQueries": queries, "StartTime": start, "EndTime": end}
    serializer = ours_serializer()
    assert serializer.serialize_to_request(params, GET_METRIC_DATA)["body"] == botocores_body(params)
    if token is not None:
        continued = {**params, "NextToken": token}
        assert serializer.serialize_to_request(continued, GET_METRIC_DATA)["body"] == botocores_body(continued)


def _series(raw: RawUsage) -> list[tuple[str, list[int], list[float]]]:
    """Every series of a host as plain lists (Series hold arrays, which do not compare with ==)."""
    named = [("cpu", raw.cpu_avg), ("in", raw.network_in_sum), ("out", raw.network_out_sum)]
    named.append(("mem", raw.host_memory_max))
    for device in raw.devices:
        named += [(f"{device.index} {name}", getattr(device, name)) for name in ("utilization_avg", "utilization_max")]
    return [(name, one.stamps.tolist(), one.array.tolist()) for name, one in named]


def test_a_failed_page_is_a_source_unavailable(no_backoff: list[float]) -> None:
    usage = CloudWatchUsage(metric_client(Wire([UNAVAILABLE] * 3, listings=[])), MetricNames())
    with pytest.raises(SourceUnavailable, match="get_metric_data"):
        usage.fetch([instance()], api_specs(), WINDOW)


# 4. What moto's server answers ------------------------------------------------------------------------------------


def test_motos_answers_read_as_botocore_reads_them(moto_aws: None) -> None:
    session = boto3.Session(region_name="us-east-1")
    fast = AwsSession(session).client("cloudwatch", "us-east-1", metric_arrays=True)
    plain = session.client("cloudwatch", region_name="us-east-1")
    for step in range(6):
        datum = {"MetricName": "m", "Value": step / 3, "Timestamp": WINDOW.start + timedelta(minutes=10 * step)}
        fast.put_metric_data(Namespace="N", MetricData=[datum])
    moto_fast, moto_plain = _ask(fast), _ask(plain)
    (mine,), (theirs,) = moto_fast["MetricDataResults"], moto_plain["MetricDataResults"]
    assert list(mine["Timestamps"]) == list(epochs(theirs["Timestamps"]))
    assert list(mine["Values"]) == theirs["Values"] and not math.isnan(float(mine["Values"][0]))
    assert mine["Id"] == theirs["Id"] and mine["StatusCode"] == theirs["StatusCode"]
