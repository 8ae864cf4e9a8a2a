"""`make bench`: measured, not asserted. Prints the numbers the issues ask for.

1. deployment package sizes: each function's own code and the shared dependency layer;
2. GetMetricData calls for 1,000 seeded instances against the minimum ceil(queries / 500) (moto, no paging);
3. one shard invocation's collection over a CloudWatch double that pages like the real API, at three region
   sizes: peak RSS, time per host, GetMetricData calls against the physical minimum; the raw timestamp parser;
4. a simulated 100,000-instance fleet planned into shards: limits, transitions, costs, item sizes, `/gpu show`;
5. the expert fleet (tests/expert_fleet.py): per workload archetype, the finding a GPU expert expects against the
   analyzer's, with target, monthly cost and savings, action and confidence;
6. summarise + analyse of 10,000 hosts x 14 days (bench/synthetic_fleet.py), complete and with 20 % of hosts
   with gaps, against a bare numpy pass over the same samples, with the machine's CPU and numpy's sort path;
7. `rightsizer analyze` end to end at 2,000 and 10,000 hosts: CPU per host and peak memory;
8. the Slack function: cold import time and warm ack time of a signed slash command;
9. what the CloudWatch agent's metrics cost a month for 1,000 hosts, per configuration in agent/ (docs/costs.md).

`BENCH_ONLY=analyzer` (or package, metrics, collect, fleet, expert, cli, slack, costs; comma-separated) runs only
those. Issue 29's three figures: `BENCH_ONLY=analyzer,cli`.
"""

from __future__ import annotations

import os
import sys

from bench import (
    agent_costs,
    analyzer_bench,
    cli_bench,
    collect_bench,
    expert_fleet_bench,
    fleet_bench,
    metrics_bench,
    package_bench,
)


def main() -> int:
    only = {name.strip() for name in os.environ.get("BENCH_ONLY", "").split(",") if name.strip()}

    def wanted(name: str) -> bool:
        return not only or name in only

    if wanted("package"):
        package_bench.run()
        print()
    if wanted("costs"):
        agent_costs.run()
        print()
    if wanted("metrics"):
        metrics_bench.run()
        print()
    if wanted("collect") or wanted("fleet"):
        # The fleet plan is sized from the collection's measured time and memory per host.
        collection = collect_bench.run()
        print()
        if wanted("fleet"):
            fleet_bench.run(collection)
            print()
    if wanted("expert"):
        expert_fleet_bench.run()
        print()
    if wanted("analyzer"):
        analyzer_bench.run()
        print()
    if wanted("cli"):
        cli_bench.run()
    if not wanted("slack"):
        return 0
    try:
        from bench import slack_bench
    except ImportError:
        return 0
    print()
    slack_bench.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
