"""`make demo`: the whole job end to end on an embedded local AWS (moto server), no account needed.

1. start moto's server on 127.0.0.1 and point boto3 at it (AWS_ENDPOINT_URL);
2. seed a GPU fleet in two regions with 14 days of 5-minute metrics;
3. run `rightsizer analyze` against it and check every host got the finding its workload deserves.
"""

from __future__ import annotations

import io
import json
import os
import sys
from datetime import UTC, datetime

from demo.server import local_aws


def main() -> int:
    with local_aws() as endpoint:
        from demo.seed import seed
        from rightsizer import cli

        now = datetime.now(UTC)
        print(f"Local AWS (moto) at {endpoint}; seeding the demo fleet with 14 days of metrics...", flush=True)
        seeded = seed(now.replace(minute=0, second=0, microsecond=0), days=14)
        print(f"Seeded {len(seeded)} instances in us-east-1 and eu-west-1.\n", flush=True)

        command = ["analyze", "--region", "us-east-1", "--region", "eu-west-1"]
        print("$ rightsizer " + " ".join(command), flush=True)
        status = cli.main(command)
        if status != 0:
            return status

        buffer = io.StringIO()
        cli.main([*command, "--format", "json", "--no-progress"], stdout=buffer, stderr=io.StringIO())
        by_id = {rec["instance_id"]: rec for rec in json.loads(buffer.getvalue())["recommendations"]}
        print("\nDoes every seeded host get the finding its workload deserves?")
        failures = 0
        for item in seeded:
            got = by_id.get(item.instance_id, {}).get("finding", "missing")
            ok = got == item.host.expected
            failures += not ok
            mark = "ok  " if ok else "FAIL"
            print(
                f"  {mark} {item.host.name:<20} {item.host.instance_type:<14} "
                f"expected {item.host.expected:<18} got {got}"
            )
        print("All findings as expected." if not failures else f"{failures} finding(s) differ.")
        return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
