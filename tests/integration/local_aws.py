"""Real processes for CLI tests: `make serve`'s local AWS in a child process, the `rightsizer` console script
run as a user runs it, and loopback servers that misbehave like a bad network (hang, or drop one region)."""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
RIGHTSIZER = Path(sys.executable).with_name("rightsizer")  # the installed console script
# What a child process keeps from ours: nothing that points at a real AWS account or a profile.
KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR", "VIRTUAL_ENV")
_CREDENTIAL_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([a-z0-9-]+)/")


def clean_environment(**extra: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in KEPT if name in os.environ}
    env.update({"PYTHONUNBUFFERED": "1", "AWS_EC2_METADATA_DISABLED": "true", "TZ": "UTC"})
    env.update(extra)
    return env


@dataclass(frozen=True)
class Served:
    """A running `python -m demo serve`: its endpoint and the environment it printed for a shell."""

    endpoint: str
    environment: Mapping[str, str]


@contextmanager
def served_fleet(days: int) -> Iterator[Served]:
    """`make serve` in a child process, on a free port; stopped with SIGTERM as Ctrl-C would."""
    process = subprocess.Popen(
        [sys.executable, "-m", "demo", "serve", "--port", "0", "--days", str(days)],
        cwd=ROOT,
        env=clean_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    try:
        printed: list[str] = []
        for line in process.stdout:  # ends if the server dies, so this cannot wait forever
            printed.append(line)
            if line.startswith("export "):
                pairs = dict(item.split("=", 1) for item in line.split()[1:])
                yield Served(pairs["AWS_ENDPOINT_URL"], pairs)
                break
        else:
            raise AssertionError("demo serve stopped before printing AWS_ENDPOINT_URL:\n" + "".join(printed))
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stdout.close()


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def rightsizer(*args: str, env: Mapping[str, str], timeout: float = 180) -> Result:
    completed = subprocess.run(
        [str(RIGHTSIZER), *args], cwd=ROOT, env=dict(env), capture_output=True, text=True, timeout=timeout, check=False
    )
    return Result(completed.returncode, completed.stdout, completed.stderr)


@dataclass
class HungEndpoint:
    """Accepts connections and never answers: what a black-holed proxy or a stuck endpoint looks like."""

    url: str = ""
    accepted: int = 0
    _server: socket.socket = field(default_factory=socket.socket)
    _held: list[socket.socket] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _serve(self) -> None:
        self._server.settimeout(0.1)
        while not self._stop.is_set():
            try:
                connection, _ = self._server.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            self._held.append(connection)


@contextmanager
def hung_endpoint() -> Iterator[HungEndpoint]:
    endpoint = HungEndpoint()
    endpoint._server.bind(("127.0.0.1", 0))
    endpoint._server.listen(16)
    endpoint.url = f"http://127.0.0.1:{endpoint._server.getsockname()[1]}"
    thread = threading.Thread(target=endpoint._serve, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        endpoint._stop.set()
        thread.join(timeout=5)
        for connection in endpoint._held:
            connection.close()
        endpoint._server.close()


@contextmanager
def region_dropping_proxy(upstream: str, dropped_region: str) -> Iterator[str]:
    """Forwards to `upstream`, but closes every connection whose request is signed for `dropped_region`
    (the region in SigV4's credential scope): one region unreachable, the others fine."""
    target = urlsplit(upstream)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            scope = _CREDENTIAL_SCOPE.search(self.headers.get("Authorization", ""))
            if scope and scope.group(1) == dropped_region:
                self.close_connection = True  # no answer at all: the connection just closes
                return
            assert target.hostname is not None
            upstream_connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
            upstream_connection.request(self.command, self.path, body=body, headers=headers)
            response = upstream_connection.getresponse()
            payload = response.read()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            upstream_connection.close()

        do_GET = do_POST = _forward

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
