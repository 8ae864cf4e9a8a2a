"""`make bench`: measured, not asserted. Prints the numbers the issues ask for.

1. GetMetricData calls for 1,000 seeded instances against the minimum ceil(queries / 500);
2. summarise + analyse time and peak memory for 10,000 synthetic instances x 14 days, on one core;
3. (when the Slack app exists) cold import time and warm ack time of a signed slash command;
4. deployment package sizes: each function's own code and the shared dependency layer.
"""

from __future__ import annotations

import sys

from bench import analyzer_bench, metrics_bench, package_bench


def main() -> int:
    package_bench.run()
    print()
    metrics_bench.run()
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
