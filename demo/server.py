"""An embedded local AWS: moto's server on loopback, with boto3 pointed at it through the environment."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

# moto has no Price List API: point that one service at a closed loopback port so `--prices auto`
# fails fast and falls back to the bundled snapshot, exactly as it would on an unreachable network.
CLOSED_PORT = "http://127.0.0.1:9"

FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "demo",
    "AWS_SECRET_ACCESS_KEY": "demo",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_ENDPOINT_URL_PRICING": CLOSED_PORT,
    # moto answers with naive timestamps, which botocore reads as local time: keep local time UTC.
    "TZ": "UTC",
}


@contextmanager
def local_aws(port: int = 0) -> Iterator[str]:
    """Start moto's server on a loopback port (0: a free one); yield its URL with AWS_* env pointing at it."""
    from moto.server import ThreadedMotoServer

    from demo import fast_cloudwatch, moto_commitments

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no per-request access log
    # moto's Step Functions interpreter logs every JSONPath probe it evaluates (And/Or do not short-circuit).
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    saved = {name: os.environ.get(name) for name in [*FAKE_ENV, "AWS_ENDPOINT_URL", "AWS_PROFILE", "MOTO_PORT"]}
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    os.environ.update(FAKE_ENV)
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    os.environ["MOTO_PORT"] = str(port)  # moto's Step Functions calls its own SDK integrations here
    os.environ.pop("AWS_PROFILE", None)
    time.tzset()
    fast_cloudwatch.install(list_once=True)  # moto lists a series once per datapoint otherwise
    try:
        with moto_commitments.installed():  # moto lacks DescribeReservedInstances, DescribeCapacityReservations
            yield endpoint
    finally:
        fast_cloudwatch.uninstall()
        server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
