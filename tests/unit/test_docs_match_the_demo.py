"""The numbers README.md and docs/demo.md give about the demo are the demo's: how many hosts and SageMaker resources it
seeds, what the reserved p4d.24xlarge costs at list price, how many Approve clicks it makes, and the hosts of its day
of changes. Each is computed from the demo's own code and data, so a change to the demo that the docs do not follow
fails here."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

from demo import history
from demo.fleet import fleet
from demo.sagemaker_fleet import ENDPOINTS, NOTEBOOKS

from rightsizer.adapters.bundled import snapshot_prices
from rightsizer.domain.models.money import HOURS_PER_MONTH

ROOT = Path(__file__).resolve().parents[2]
# The pages' text with their line breaks as spaces: a phrase may wrap.
README = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
DEMO = " ".join((ROOT / "docs" / "demo.md").read_text(encoding="utf-8").split())
NUMBERS = {5: "five", 6: "six", 7: "seven"}


def clicks() -> int:
    """The Approve clicks of today's report: one `approve(stack, ...)` call each in demo/clicks.py."""
    return len(re.findall(r"\bapprove\(stack, ", (ROOT / "demo" / "clicks.py").read_text()))


def test_the_host_and_resource_counts_are_the_demos() -> None:
    hosts, sagemaker = len(fleet()), len(ENDPOINTS) + len(NOTEBOOKS)

    assert f"{hosts} seeded hosts, {sagemaker} SageMaker resources" in README
    assert f"{hosts} instances in `us-east-1` and `eu-west-1`" in DEMO
    assert f"and {sagemaker} SageMaker resources:" in DEMO


def test_the_reserved_p4d_costs_what_the_bundled_prices_say() -> None:
    book = snapshot_prices("us-east-1")
    assert book is not None
    monthly = book.on_demand["p4d.24xlarge"] * HOURS_PER_MONTH

    assert f"${monthly.quantize(Decimal(1)):,}/month at list price, **$0 net**" in DEMO


def test_the_clicks_are_the_demos() -> None:
    words = NUMBERS[clicks()]

    assert f"clicks Approve {words} times" in README
    assert f"Then {words} signed Slack clicks" in DEMO


def test_the_day_of_changes_names_the_demos_hosts() -> None:
    for host in (history.SPARE, history.SCRATCH, history.CANARY):
        assert f"`{host.name}`" in DEMO, host.name
    assert f"1 new waste (`{history.CANARY.name}`, {history.CANARY.expected})" in DEMO
    assert f"1 resolved (`{history.SPARE.name}`, by the lead's approval)" in DEMO
    # The seeded month, yesterday's run and today's: the trend the report draws.
    assert f"the waste trend over the last {history.EARLIER_RUNS + 2} runs" in DEMO
