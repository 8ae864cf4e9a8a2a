"""The per-GPU series of demo-output/report.html, read from the local AWS through the product's adapters.

The page itself is the product's (rightsizer.adapters.html.page), rendered from the report document the daily
pipeline posted. That pipeline keeps no per-unit series (the stored ranking has one figure per host and day), so the
demo reads them as the CLI does: CloudWatch through `series.UnitSeriesTap`, for the hosts in the report, as the
analysis saw them (their state and type then, not after the demo's clicks stopped or resized some).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from rightsizer.adapters.html.series import UnitSeries, UnitSeriesTap


def unit_series(
    session: Any, document: Mapping[str, Any], now: datetime, lookback_days: int
) -> dict[str, tuple[UnitSeries, ...]]:
    """Hourly means of every GPU or NeuronCore of the report's EC2 hosts, by instance id."""
    from rightsizer.bootstrap import regions
    from rightsizer.services.collect import lookback_window
    from rightsizer.settings import PriceMode, Settings

    window = lookback_window(now, lookback_days)
    analysed: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for rec in document["recommendations"]:
        if rec.get("kind", "ec2") == "ec2":
            analysed[(rec["account_id"], rec["region"])][rec["instance_id"]] = rec
    kept: dict[str, tuple[UnitSeries, ...]] = {}
    for (account, region), recs in sorted(analysed.items()):
        settings = Settings(regions=(region,), lookback_days=lookback_days, price_mode=PriceMode.SNAPSHOT)
        readers = regions.region_readers(session, account, region, settings)
        instances = [
            replace(i, state=recs[i.instance_id]["state"], instance_type=recs[i.instance_id]["instance_type"])
            for i in readers.fleet.accelerated_instances()
            if i.instance_id in recs
        ]
        specs = {
            **regions.reference().legacy_specs,
            **{s.instance_type: s for s in readers.fleet.accelerated_specs()},
        }
        for _ in UnitSeriesTap(readers.usage, kept).read(instances, specs, window):
            pass  # the tap keeps each host's series as it passes
    return kept
