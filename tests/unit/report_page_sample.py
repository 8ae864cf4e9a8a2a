"""A report with one resource of every kind the page shows, per-GPU series for some hosts, and Slack messages that use
every emoji the bot writes: the page's unit tests read it as HTML, the browser test opens it in Chromium."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from rightsizer.adapters.html import page
from rightsizer.adapters.html.blocks import EMOJI
from rightsizer.adapters.html.series import UnitSeries
from rightsizer.adapters.slack.blocks import daily_report_messages
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence, Evidence, Recommendation
from rightsizer.domain.resources import ResourceKind
from rightsizer.services.report import FleetReport, TargetFailure, build_report
from rightsizer.services.since import AdviceChange, SinceLastTime, TrendPoint

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DAYS = 14
ACCOUNT = "123456789012"
FORGED = "<script>alert(1)</script> & co"  # a Name tag: text on the page, never markup


def recommendation(
    n: int,
    *,
    kind: ResourceKind = ResourceKind.EC2,
    name: str = "",
    instance_type: str = "g5.12xlarge",
    finding: Finding = Finding.OVERPROVISIONED,
    target: str | None = None,
    cost: str = "4000",
    after: str = "1000",
    state: str = "running",
    daily: Sequence[float | None] = (),
    managed: bool = True,
    team: str = "",
    evidence: Evidence | None = None,
) -> Recommendation:
    resource = f"i-{n:017x}" if kind is ResourceKind.EC2 else f"{kind.value}/resource-{n}"
    return Recommendation(
        recommendation_id=f"rec-{n}",
        generated_at=NOW,
        account_id=ACCOUNT,
        region="us-east-1",
        instance_id=resource,
        instance_name=name,
        instance_type=instance_type,
        availability_zone="us-east-1a",
        state=state,
        finding=finding,
        target_type=target,
        monthly_cost=Decimal(cost),
        monthly_cost_after=Decimal(after),
        confidence=Confidence.HIGH,
        actionable=target is not None,
        reasons=(f"reason of {n}: p95 below 20 % & steady",),
        evidence=evidence or Evidence(daily_accelerator_mean=tuple(daily)),
        kind=kind,
        managed=managed,
        team=team,
        tags={"team": team} if team else {},
    )


def wave(unit: int, hours: int, start: datetime, *, gap: range | None = None) -> UnitSeries:
    """Hourly means that rise and fall once a day, each unit at its own level (no values in `gap`'s hours)."""
    first = int(start.timestamp())
    points = tuple(
        (first + h * 3600, round(40 + 10 * unit % 50 + 30 * math.sin(h / 24 * 2 * math.pi + unit), 1))
        for h in range(hours)
        if gap is None or h not in gap
    )
    return UnitSeries(f"GPU {unit}", points)


def since_last_time(new: Recommendation, gone: Recommendation) -> SinceLastTime:
    """A day's changes: one new waste, one advice resolved by an approval, a host that came and one that went, and a
    month of the fleet's trend."""
    trend = tuple(
        TrendPoint(f"2026-11-{day:02d}", Decimal(30000 - 300 * (day % 7) + 200 * day), Decimal(20000 + 150 * day))
        for day in range(1, 31)
    )
    return SinceLastTime(
        previous_run="2026-11-30",
        new_waste=(
            AdviceChange(new.instance_id, new.instance_name, new.finding, Decimal("3000"), new.recommendation_id),
        ),
        new_waste_count=1,
        new_waste_net=Decimal("3000"),
        resolved=(
            AdviceChange(
                gone.instance_id,
                gone.instance_name,
                Finding.IDLE,
                Decimal("1500"),
                "rec-old",
                "excluded",
                "an approval by <@U0LEAD>",
            ),
        ),
        resolved_count=1,
        resolved_net=Decimal("1500"),
        arrived=(new.instance_id,),
        arrived_count=1,
        departed=("i-0000000000000dead",),
        departed_count=1,
        trend=trend,
    )


@dataclass(frozen=True)
class Sample:
    report: FleetReport
    series: dict[str, tuple[UnitSeries, ...]]
    messages: list[dict[str, Any]]

    def html(self, **options: Any) -> str:
        return page.render_report(self.report, series=self.series, slack_messages=self.messages, **options)

    @property
    def by_kind(self) -> Mapping[ResourceKind, Recommendation]:
        return {rec.kind: rec for rec in self.report.recommendations}


def sample() -> Sample:
    four_gpus = recommendation(1, name=FORGED, target="g5.2xlarge")
    neuron = recommendation(2, name="inferentia-low", instance_type="inf2.8xlarge", target="inf2.xlarge")
    no_agent = recommendation(3, name="render-node", finding=Finding.INSUFFICIENT_DATA, cost="700", after="700")
    stopped = recommendation(4, name="stopped-box", finding=Finding.IDLE, cost="0", after="0", state="stopped")
    endpoint = recommendation(
        5,
        kind=ResourceKind.SAGEMAKER_ENDPOINT,
        name="chat-llm",
        instance_type="ml.g5.12xlarge",
        target="ml.g5.2xlarge",
        daily=[12.0, 14.5, None, 11.0, 9.5, 10.0, 13.0],
    )
    notebook = recommendation(
        6, kind=ResourceKind.SAGEMAKER_NOTEBOOK, name="left-open", instance_type="ml.p3.2xlarge", after="0"
    )
    nodegroup = recommendation(7, kind=ResourceKind.EKS_NODEGROUP, name="gpu-inference", cost="9000", after="6000")
    asg = recommendation(8, kind=ResourceKind.AUTO_SCALING_GROUP, name="serving-asg", cost="3000", after="2000")
    unmanaged = recommendation(9, name="wide-untagged-trainer", target="g5.4xlarge", managed=False, team="search")
    # Upsizes: a GPU whose memory rises with the load to its limit (its chart is its memory), a CPU-bound host (its
    # chart is its CPU).
    full = Evidence(memory_peak_mib=15000.0, memory_per_unit_mib=15360.0, daily_busiest_unit=(70.0,) * DAYS)
    memory_bound = recommendation(
        10, name="llm-chat-t4", instance_type="g4dn.xlarge", finding=Finding.UNDERPROVISIONED, target="g6.xlarge",
        cost="383.98", after="587.50", evidence=full, team="ads",
    )  # fmt: skip
    cpu_bound = recommendation(
        11, name="vision-train-dl", instance_type="g5.2xlarge", finding=Finding.NOT_GPU_BOUND, target="g5.4xlarge",
        cost="884.76", after="1185.52", team="ads",
    )  # fmt: skip
    four_gpus = replace(four_gpus, team="search", tags={"team": "search"})
    recs = [
        four_gpus,
        neuron,
        no_agent,
        stopped,
        endpoint,
        notebook,
        nodegroup,
        asg,
        unmanaged,
        memory_bound,
        cpu_bound,
    ]
    report = build_report(
        recs,
        NOW,
        DAYS,
        ["eu-west-1: CloudWatch throttled <b>twice</b> & gave up"],
        home_account=ACCOUNT,
        failures=[TargetFailure("210987654321", "*", "AccessDenied: cannot assume <role>")],
    )
    report = replace(report, since=since_last_time(four_gpus, stopped))
    start = NOW - timedelta(days=DAYS)
    hours = DAYS * 24
    series = {
        four_gpus.instance_id: tuple(
            wave(unit, hours, start, gap=range(100, 110) if unit == 2 else None) for unit in range(4)
        ),
        neuron.instance_id: tuple(
            UnitSeries(f"NeuronCore {core}", wave(core, hours, start).points) for core in range(2)
        ),
        unmanaged.instance_id: tuple(wave(unit, hours, start) for unit in range(12)),  # more lines than colours
        memory_bound.instance_id: (
            wave(0, hours, start),
            UnitSeries(
                "GPU 0 memory", tuple((t, min(98.0, 60 + v / 2)) for t, v in wave(0, hours, start).points), "memory"
            ),
            UnitSeries("CPU", wave(3, hours, start).points, "cpu"),
        ),
        cpu_bound.instance_id: (
            wave(1, hours, start),
            UnitSeries("CPU", tuple((t, min(100.0, 80 + v / 5)) for t, v in wave(2, hours, start).points), "cpu"),
        ),
    }
    messages = [message.payload() for message in daily_report_messages(report, [], top_n=5, now=NOW)]
    every_emoji = " ".join(f":{name}:" for name in sorted(EMOJI))
    messages.append(
        {
            "thread_ts": "1.0",
            "text": "every emoji",
            "blocks": [
                {"type": "context", "elements": [{"type": "mrkdwn", "text": f"Emoji: {every_emoji} 08:00-19:00"}]}
            ],
        }
    )
    return Sample(report, series, messages)
