"""`make serve`: the demo's world, kept running so a newcomer can try every `rightsizer` verb and option by hand: the
local AWS with the seeded GPU fleet and SageMaker resources, the deployed stack (gpu-rightsizer) with its daily report
and the demo's approvals done, and the local Slack API double its functions talk to. Prints the environment to point
the CLI (or any AWS SDK) at it; stops on Ctrl-C or SIGTERM.

The port is `--port`, else the environment's PORT, else 5000; when that one is taken (on macOS, AirPlay Receiver
listens on 5000), a free port is used instead, and the printed line says which."""

from __future__ import annotations

import argparse
import io
import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from contextlib import ExitStack, redirect_stdout
from datetime import UTC, datetime
from types import FrameType
from urllib.parse import urlsplit

from demo.server import FAKE_ENV, local_aws
from demo.world import REGIONS

DEFAULT_PORT = 5000
DEMO_DAYS = 14  # the window `make demo` seeds and approves on


def client_environment(endpoint: str) -> dict[str, str]:
    """What a shell needs to talk to the local AWS: the endpoint, dummy credentials, a default region."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": FAKE_ENV["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": FAKE_ENV["AWS_SECRET_ACCESS_KEY"],
        "AWS_REGION": REGIONS[0],
        # No AWS_ENDPOINT_URL_PRICING: the local AWS answers the Price List API itself (it has none, and says so at
        # once), and a shell that kept a dead endpoint would lose the real Price List API once this one stops.
        "TZ": "UTC",  # moto answers with naive UTC timestamps, which botocore reads as local time
    }


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived: unwind from wherever the main thread is (seeding, waiting), closing the server."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    # A second Ctrl-C or SIGTERM while shutting down gets the default behaviour (end the process now).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise Stopped(signum)


def serve(port: int, days: int) -> int:
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        for signum in previous:
            signal.signal(signum, _on_signal)
        with ExitStack() as stack:
            try:
                endpoint = stack.enter_context(local_aws(port, any_port_if_taken=True))
            except OSError as error:  # not a taken port (that one gives way to a free port): e.g. no permission
                print(f"Cannot listen on 127.0.0.1:{port}: {error.strerror or error}", file=sys.stderr, flush=True)
                return 1
            _seed_and_wait(endpoint, port, days)
    except Stopped:
        pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    print("Stopped.", flush=True)
    return 0


def _seed_and_wait(endpoint: str, port: int, days: int) -> None:
    bound = urlsplit(endpoint).port
    if port and bound != port:
        whose = " (on macOS, AirPlay Receiver listens on it)" if port == DEFAULT_PORT else ""
        print(f"Port {port} is in use{whose}: serving on {bound} instead.", flush=True)
    print(f"Seeding the demo fleet with {days} days of metrics...", flush=True)
    from demo.clicks import one_click_each
    from demo.serverless import STACK_NAME, deployed_stack
    from demo.world import daily_run, seed_world

    now = datetime.now(UTC)
    world = seed_world(now, days)
    print(f"Deploying the {STACK_NAME} stack, running its daily pipeline and the demo's approvals...", flush=True)
    with deployed_stack() as stack:
        report = daily_run(now)
        if days >= DEMO_DAYS:
            told = io.StringIO()  # what `make demo` prints of each click
            with redirect_stdout(told):
                failed = one_click_each(stack, report, world)
            if failed:
                print(f"Not every approval of the demo succeeded:\n{told.getvalue()}", flush=True)
        else:
            print(f"The demo's approvals need its {DEMO_DAYS} days of metrics (a schedule, whole weeks): not made.")
        exports = " ".join(f"{name}={value}" for name, value in client_environment(endpoint).items())
        print(f"Local AWS (moto) at {endpoint}: {world.summary}; the {STACK_NAME} stack in {REGIONS[0]}.")
        print("In another shell:\n")
        print(f"export {exports}")
        for command, what in TRY:
            print(f"rightsizer {command.format(stack=STACK_NAME):<40} # {what}")
        print("\nCtrl-C stops the local AWS.", flush=True)
        threading.Event().wait()  # until a signal raises Stopped


# What the banner suggests (or .venv/bin/rightsizer): every verb works against the served world, docs/cli.md says more.
TRY = (
    ("analyze --all-regions", "the fleet, analysed live; try --help for every option"),
    ("report --stack {stack}", "what the deployed bot ranked; show HOST --stack: one host, its approval"),
    ("doctor --stack {stack}", "the deployment's checklist"),
)


def port_from(argument: int | None, environ: Mapping[str, str]) -> int:
    """`--port`, else PORT (as in `make serve PORT=8080`), else 5000."""
    if argument is not None:
        return argument
    value = environ.get("PORT", "").strip()
    if not value:
        return DEFAULT_PORT
    if not value.isdigit() or int(value) > 65535:
        raise ValueError(f"PORT={value!r} is not a port number (0-65535)")
    return int(value)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo serve", description=__doc__)
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"loopback port (default: PORT, else {DEFAULT_PORT}; a taken one gives way to a free one; 0: any)",
    )
    parser.add_argument(
        "--days",
        type=int,
        default=DEMO_DAYS,
        help=f"days of seeded metrics (default {DEMO_DAYS}, the demo's; with fewer, the demo's approvals are not made)",
    )
    args = parser.parse_args(argv)
    try:
        port = port_from(args.port, os.environ)
    except ValueError as error:
        parser.error(str(error))
    if not 0 <= port <= 65535:
        parser.error(f"--port {port} is not a port number (0-65535)")
    return serve(port, args.days)
