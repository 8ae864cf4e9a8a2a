"""`make bench`: measured, not asserted. Prints the numbers the issues ask for.

1. GetMetricData calls for 1,000 seeded instances against the minimum ceil(queries / 500) (moto, no paging);
2. one shard invocation's collection over a CloudWatch double that pages like the real API, at three region
   sizes: peak RSS, time per host, GetMetricData calls against the physical minimum; the raw timestamp parser;
3. a simulated 100,000-instance fleet planned into shards: limits, transitions, costs, item sizes, `/gpu show`;
4. summarise + analyse time and peak memory for 10,000 synthetic instances x 14 days, against a numpy pass;
3. (when the Slack app exists) cold import time and warm ack time of a signed slash command;
4. deployment package sizes: each function's own code and the shared dependency layer.
"""

from __future__ import annotations

import sys

from bench import analyzer_bench, collect_bench, fleet_bench, metrics_bench, package_bench


def main() -> int:
    package_bench.run()
    print()
    metrics_bench.run()
    print()
    collection = collect_bench.run()
    print()
    fleet_bench.run(collection)
    print()
    analyzer_bench.run()
    try:
        from bench import slack_bench
    except ImportError:
        return 0
    print()
    slack_bench.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
