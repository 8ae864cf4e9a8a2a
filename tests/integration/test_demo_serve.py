"""`make serve` (`python -m demo serve`) as a user runs it: a taken port (5000 is macOS AirPlay's) gives way to a
free one, PORT= and --port are honoured, the export line names the port really served, and SIGTERM or Ctrl-C ends
it cleanly whenever it arrives. Synchronised on what the process prints, never on sleeps."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from demo.serve import DEFAULT_PORT, port_from

from tests.integration.local_aws import ROOT, clean_environment

pytestmark = pytest.mark.integration

PRINTS_WITHIN = 120.0  # seconds until the export line (seeding one day takes a few)
EXITS_WITHIN = 30.0  # seconds from the signal to the exit


# `python -m demo serve` with an exit hook that says when the interpreter's own teardown runs: the teardown that frees
# moto's seeded state object by object, for seconds after "Stopped." (7 s with 14 days seeded).
WITH_TEARDOWN_MARK = (
    "import atexit, runpy, sys; atexit.register(lambda: print('interpreter teardown', flush=True)); "
    "sys.argv = ['demo', *sys.argv[1:]]; runpy.run_module('demo', run_name='__main__', alter_sys=True)"
)


@contextmanager
def demo_serve(*args: str, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-c", WITH_TEARDOWN_MARK, "serve", "--days", "1", *args],
        cwd=ROOT,
        env=clean_environment(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        yield process
    finally:
        if process.poll() is None:  # a failed test: do not leave it running
            process.kill()
            process.communicate(timeout=EXITS_WITHIN)


def read_until(process: subprocess.Popen[bytes], prefix: str, timeout: float = PRINTS_WITHIN) -> list[str]:
    """The lines printed up to the first that starts with `prefix` (that one last). Reads the pipe's descriptor
    directly (no buffered reader keeps bytes back from a later communicate()), waiting in select() until a deadline."""
    assert process.stdout is not None
    fd, deadline, buffer = process.stdout.fileno(), time.monotonic() + timeout, b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            lines = buffer.decode(errors="replace").split("\n")[:-1]  # complete lines only
            for index, line in enumerate(lines):
                if line.startswith(prefix):
                    return lines[: index + 1]
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                raise AssertionError(f"no line starting {prefix!r} within {timeout:.0f} s; printed:\n{buffer.decode()}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"demo serve exited before printing {prefix!r}:\n{buffer.decode()}")
            buffer += chunk


def served_port(lines: Sequence[str]) -> int:
    exports = dict(item.split("=", 1) for item in lines[-1].split()[1:])
    port = urlsplit(exports["AWS_ENDPOINT_URL"]).port
    assert port is not None, lines[-1]
    return port


def stop_with(process: subprocess.Popen[bytes], signum: signal.Signals) -> str:
    """The signal, then what the process printed until it exited: "Stopped." last, since nothing runs after it (no
    interpreter teardown that keeps the terminal waiting on a process that said it stopped)."""
    process.send_signal(signum)
    rest, _ = process.communicate(timeout=EXITS_WITHIN)  # raises TimeoutExpired if the signal is ignored
    assert process.returncode == 0, rest.decode()
    assert rest.decode().rstrip().endswith("Stopped."), rest.decode()
    assert "interpreter teardown" not in rest.decode()
    return rest.decode()


@contextmanager
def taken_port() -> Iterator[int]:
    """A port somebody else listens on (as AirPlay Receiver does on macOS's 5000)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        other.listen(1)
        yield int(other.getsockname()[1])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_taken_port_gives_way_to_a_free_one_and_sigterm_ends_it() -> None:
    with taken_port() as taken, demo_serve("--port", str(taken)) as process:
        printed = read_until(process, "export ")

        port = served_port(printed)
        assert port != taken
        assert f"Port {taken} is in use" in "".join(printed) and f"serving on {port} instead" in "".join(printed)
        assert "Stopped." in stop_with(process, signal.SIGTERM)


def test_the_export_line_points_a_shell_at_the_local_aws_and_at_nothing_that_outlives_it() -> None:
    """The line a newcomer pastes into their shell: endpoint, dummy keys, region. No per-service endpoint (a closed
    Price List API port, say) stays behind to break the real AWS in that shell once the local one stops."""
    with demo_serve("--port", "0") as process:
        printed = read_until(process, "export ")

        exports = dict(item.split("=", 1) for item in printed[-1].split()[1:])
        assert set(exports) == {"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "TZ"}
        assert "Stopped." in stop_with(process, signal.SIGINT)


def test_port_from_the_environment_is_honoured_and_ctrl_c_ends_it() -> None:
    wanted = free_port()
    with demo_serve(PORT=str(wanted)) as process:
        printed = read_until(process, "export ")

        assert served_port(printed) == wanted
        assert not any("in use" in line for line in printed)
        assert "Stopped." in stop_with(process, signal.SIGINT)


def test_a_signal_while_it_is_still_seeding_ends_it_at_once() -> None:
    with demo_serve("--port", "0") as process:
        read_until(process, "Seeding the demo fleet")

        assert "Stopped." in stop_with(process, signal.SIGTERM)


def test_the_port_comes_from_the_argument_then_port_then_5000() -> None:
    assert port_from(8081, {"PORT": "8080"}) == 8081
    assert port_from(None, {"PORT": "8080"}) == 8080
    assert port_from(None, {"PORT": " "}) == port_from(None, {}) == DEFAULT_PORT == 5000
    with pytest.raises(ValueError, match="not a port number"):
        port_from(None, {"PORT": "http"})
