"""An embedded local AWS: moto's server on loopback, with boto3 pointed at it through the environment."""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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


def listen_on_loopback(port: int, *, any_port_if_taken: bool = False) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: a free one), bound here and now, so a port in use raises
    OSError (EADDRINUSE) in the caller; with `any_port_if_taken`, a free port is taken instead."""
    try:
        return _listen(port)
    except OSError as error:
        if not (any_port_if_taken and port and error.errno == errno.EADDRINUSE):
            raise
    return _listen(0)


def _listen(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as werkzeug: no wait for TIME_WAIT
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
    except BaseException:
        listener.close()
        raise
    return listener


class _WhatMotoLacks(logging.Filter):
    """A request for an API moto does not implement (IAM's policy simulator, which `rightsizer doctor` asks): one line
    in the server's output instead of werkzeug's traceback; the client gets moto's HTTP 500 all the same."""

    LACKS = re.compile(r"NotImplementedError: The (\w+) action has not been implemented")

    def filter(self, record: logging.LogRecord) -> bool:
        lacks = self.LACKS.search(str(record.msg))
        if lacks is not None:
            record.msg, record.args = "moto has no %s: answered HTTP 500", (lacks.group(1),)
        return True


# What the local AWS answers a Price List API call with, at once: moto has no backend for it (it would answer 500s,
# which botocore retries for seconds), and the CLI's `--prices auto` then falls back to the bundled snapshot.
NO_PRICE_LIST = {
    "__type": "NotImplemented",
    "message": "the demo's local AWS (moto) has no Price List API",
}
_SIGNED_FOR = re.compile(r"Credential=[^/]+/\d{8}/[a-z0-9-]+/([a-z0-9-]+)/")


def _without_price_list(app: Callable[..., Any]) -> Callable[..., Any]:
    """moto's WSGI app, with requests signed for the Price List API (`pricing`) answered by a client error."""

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        signed = _SIGNED_FOR.search(environ.get("HTTP_AUTHORIZATION", ""))
        if not signed or signed.group(1) != "pricing":
            return app(environ, start_response)
        payload = json.dumps(NO_PRICE_LIST).encode()
        start_response(
            "400 Bad Request",
            [("Content-Type", "application/x-amz-json-1.1"), ("Content-Length", str(len(payload)))],
        )
        return [payload]

    return serve


class _MotoServer:
    """moto's server on a socket bound by the caller. moto's ThreadedMotoServer binds inside its thread; when the
    port is taken, werkzeug prints "Address already in use" and ends that thread, while start() waits forever
    for a server that never started (and the signal handlers of `make serve` never got to end that wait)."""

    def __init__(self, listener: socket.socket) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        host, port = listener.getsockname()[:2]
        app: Any = _without_price_list(DomainDispatcherApplication(create_backend_app))
        # werkzeug serves a duplicate of the listener's descriptor (socket.fromfd)
        self._server = make_server(
            host, port, app, threaded=True, request_handler=MotoRequestHandler, fd=listener.fileno()
        )
        self.endpoint = f"http://{host}:{port}"
        self.port = int(port)
        self._thread = threading.Thread(target=self._server.serve_forever, name="moto-server", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


@contextmanager
def local_aws(port: int = 0, *, any_port_if_taken: bool = False) -> Iterator[str]:
    """Start moto's server on a loopback port (0: a free one); yield its URL with AWS_* env pointing at it.

    A port in use raises OSError at once; with `any_port_if_taken`, a free port is used instead (the URL says which)."""
    from demo import fast_cloudwatch, moto_commitments

    werkzeug = logging.getLogger("werkzeug")
    werkzeug.setLevel(logging.ERROR)  # no per-request access log
    lacks = _WhatMotoLacks()
    werkzeug.addFilter(lacks)
    # moto's Step Functions interpreter logs every JSONPath probe it evaluates (And/Or do not short-circuit).
    logging.getLogger("moto").setLevel(logging.CRITICAL)
    with listen_on_loopback(port, any_port_if_taken=any_port_if_taken) as listener:
        server = _MotoServer(listener)
    saved = {name: os.environ.get(name) for name in [*FAKE_ENV, "AWS_ENDPOINT_URL", "AWS_PROFILE", "MOTO_PORT"]}
    server.start()
    try:
        os.environ.update(FAKE_ENV)
        os.environ["AWS_ENDPOINT_URL"] = server.endpoint
        os.environ["MOTO_PORT"] = str(server.port)  # moto's Step Functions calls its own SDK integrations here
        os.environ.pop("AWS_PROFILE", None)
        time.tzset()
        fast_cloudwatch.install(list_once=True)  # moto lists a series once per datapoint otherwise
        try:
            with moto_commitments.installed():  # moto lacks DescribeReservedInstances, DescribeCapacityReservations
                yield server.endpoint
        finally:
            fast_cloudwatch.uninstall()
    finally:
        server.stop()
        werkzeug.removeFilter(lacks)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
