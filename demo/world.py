"""The demo's world, made by one code path for `make demo` and `make serve`: the GPU fleet and the SageMaker resources
with their metric history (seed_world), the stack as `sam deploy` would create it (serverless.deployed_stack), and
its daily pipeline's run (daily_run). `make demo` then checks, clicks and draws; `make serve` clicks the same and
keeps the world running.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from demo.sagemaker_fleet import SeededSageMaker, seed_sagemaker
from demo.seed import Seeded, seed

REGIONS = ("us-east-1", "eu-west-1")


@dataclass(frozen=True)
class World:
    hosts: list[Seeded]
    sagemaker: list[SeededSageMaker]
    end: datetime  # the metric history's end, an hour past the clock's when it was seeded

    def host(self, instance_id: str) -> Seeded:
        return next(item for item in self.hosts if item.instance_id == instance_id)

    @property
    def summary(self) -> str:
        return (
            f"{len(self.hosts)} instances in {' and '.join(REGIONS)} and {len(self.sagemaker)} SageMaker resources "
            "(endpoints and a notebook instance)"
        )


def seed_world(now: datetime, days: int = 14) -> World:
    """The fleet and the SageMaker resources in moto's default account, with metrics from a day before the `days`-day
    window to an hour past `now`: each step reads the window that ends at its own clock's hour, and an hour boundary
    may pass while the demo runs (a window short of its last or first hour changes advice that depends on whole
    weeks, such as a schedule's one click)."""
    from moto.core.models import DEFAULT_ACCOUNT_ID

    end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    return World(seed(end, days=days + 1), seed_sagemaker(end, days + 1, DEFAULT_ACCOUNT_ID), end)


def daily_run(now: datetime) -> dict[str, Any]:
    """The deployed stack's daily pipeline for `now`'s date over the world's regions, posted to Slack: the report
    the Slack report function returned (with every recommendation)."""
    from moto.core.models import DEFAULT_ACCOUNT_ID

    from demo.serverless import run_pipeline

    return run_pipeline(now.date().isoformat(), DEFAULT_ACCOUNT_ID, REGIONS)
