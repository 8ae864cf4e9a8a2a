"""`make serve`: the demo's local AWS with its seeded GPU fleet, kept running so a newcomer can try every
`rightsizer` option by hand. Prints the environment to point the CLI (or any AWS SDK) at it; stops on
Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from types import FrameType

from demo.server import CLOSED_PORT, FAKE_ENV, local_aws

REGIONS = ("us-east-1", "eu-west-1")


def client_environment(endpoint: str) -> dict[str, str]:
    """What a shell needs to talk to the local AWS: the endpoint, dummy credentials, a default region."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": FAKE_ENV["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": FAKE_ENV["AWS_SECRET_ACCESS_KEY"],
        "AWS_REGION": REGIONS[0],
        "AWS_ENDPOINT_URL_PRICING": CLOSED_PORT,  # moto has no Price List API: fall back to the snapshot at once
        "TZ": "UTC",  # moto answers with naive UTC timestamps, which botocore reads as local time
    }


def serve(port: int, days: int) -> int:
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with local_aws(port) as endpoint:
        from demo.seed import seed

        print(f"Seeding the demo fleet with {days} days of metrics...", flush=True)
        seeded = seed(datetime.now(UTC).replace(minute=0, second=0, microsecond=0), days=days)
        exports = " ".join(f"{name}={value}" for name, value in client_environment(endpoint).items())
        print(f"Local AWS (moto) at {endpoint}: {len(seeded)} GPU hosts in {' and '.join(REGIONS)}.")
        print("In another shell:\n")
        print(f"export {exports}")
        print("rightsizer analyze --all-regions            # or .venv/bin/rightsizer; try --help for every option")
        print("\nCtrl-C stops the local AWS.", flush=True)
        stop.wait()
    print("Stopped.", flush=True)
    return 0


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo serve", description=__doc__)
    parser.add_argument("--port", type=int, default=5000, help="loopback port (default 5000; 0 picks a free one)")
    parser.add_argument("--days", type=int, default=14, help="days of seeded metrics (default 14)")
    args = parser.parse_args(argv)
    return serve(args.port, args.days)
