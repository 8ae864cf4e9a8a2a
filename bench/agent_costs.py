"""What the CloudWatch agent's metrics cost in the accounts that run it, for each configuration in agent/: the
custom metrics it publishes (per GPU and per host), its PutMetricData requests, and the collector's daily
GetMetricData reads. docs/costs.md's table is generated from here (`python -m bench.agent_costs docs/costs.md`;
a test checks it is current) and `make bench` prints it.

Prices: Amazon CloudWatch, us-east-1, standard resolution (aws.amazon.com/cloudwatch/pricing, read 2026-12):
custom metrics $0.30 each a month for the first 10,000, $0.10 for the next 240,000, $0.05 for the next 750,000 and
$0.02 beyond; PutMetricData and GetMetricData $0.01 per 1,000 requests and per 1,000 metrics requested. A metric
is one name with one set of dimension values: the agent's nvidia_gpu plugin publishes one per GPU (its `index`).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from rightsizer.settings import MetricNames

ROOT = Path(__file__).resolve().parent.parent
AGENT = ROOT / "agent"
CONFIGS = {
    "shipped": AGENT / "amazon-cloudwatch-agent.json",
    "lean": AGENT / "lean" / "nvenc.json",
    "lean, no NVENC": AGENT / "lean" / "no-nvenc.json",
    "DCGM": AGENT / "dcgm" / "amazon-cloudwatch-agent.json",
}
DCGM_PUBLISHER = AGENT / "dcgm" / "publish-dcgm-metrics.py"
DCGM_ENCODER = MetricNames().gpu_encoder_util  # N/A on a GPU without NVENC (A100, H100): not sent
TIERS: tuple[tuple[int | None, Decimal], ...] = (
    (10_000, Decimal("0.30")),
    (240_000, Decimal("0.10")),
    (750_000, Decimal("0.05")),
    (None, Decimal("0.02")),
)
PER_THOUSAND_REQUESTS = Decimal("0.01")  # PutMetricData requests; GetMetricData metrics requested
HOURS_PER_MONTH = 730
DAYS_PER_MONTH = Decimal("30.4")
DEFAULT_FLUSH_SECONDS = 60  # the agent's metrics.force_flush_interval when the file leaves it out
# The plugin sections whose measurements are one metric per GPU; every other section's are one per host. The statsd
# section lists no measurements: it publishes what agent/dcgm/publish-dcgm-metrics.py sends it, per GPU.
PER_GPU_SECTIONS = frozenset({"nvidia_gpu", "statsd"})


def dcgm_metrics() -> tuple[str, ...]:
    """What the DCGM publisher sends per GPU, read from the script itself (SM occupancy, a fallback sent only where SM
    active is missing, left out)."""
    spec = importlib.util.spec_from_file_location("publish_dcgm_metrics", DCGM_PUBLISHER)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(DCGM_PUBLISHER)
    publisher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(publisher)
    return tuple(name for _, name, _ in publisher.FIELDS if name not in publisher.FALLBACKS)


@dataclass(frozen=True)
class AgentConfig:
    name: str
    per_gpu: tuple[str, ...]  # measurements published once per GPU
    per_host: tuple[str, ...]
    flush_seconds: int
    aggregations: int  # aggregation_dimensions: each adds a copy of every measurement

    @classmethod
    def read(cls, name: str, path: Path) -> AgentConfig:
        document = json.loads(path.read_text())
        metrics: dict[str, Any] = document["metrics"]
        per_gpu: list[str] = []
        per_host: list[str] = []
        for section, body in metrics["metrics_collected"].items():
            names = [m if isinstance(m, str) else m["name"] for m in body.get("measurement", [])]
            if section == "statsd":
                names = list(dcgm_metrics())
            (per_gpu if section in PER_GPU_SECTIONS else per_host).extend(names)
        flush = int(metrics.get("force_flush_interval", DEFAULT_FLUSH_SECONDS))
        return cls(name, tuple(per_gpu), tuple(per_host), flush, len(metrics.get("aggregation_dimensions", [])))

    def without(self, name: str, *measurements: str) -> AgentConfig:
        """The same file on GPUs that publish none of `measurements` (DCGM reads N/A for an engine a GPU lacks, and the
        publisher sends no N/A)."""
        return replace(self, name=name, per_gpu=tuple(m for m in self.per_gpu if m not in measurements))

    def metrics_per_host(self, gpus: int) -> int:
        """Custom metrics one host publishes: each GPU's measurements, the host's, and any aggregations of them."""
        return (gpus * len(self.per_gpu) + len(self.per_host)) * (1 + self.aggregations)

    def put_requests_per_month(self, hosts: int) -> int:
        """One PutMetricData per flush and host: a flush holds at most 1,000 metrics, and these hosts publish far
        fewer (the agent sends earlier only when its buffer reaches that)."""
        return hosts * HOURS_PER_MONTH * 3600 // self.flush_seconds


def custom_metrics_cost(metrics: int) -> Decimal:
    """A month of `metrics` custom metrics at CloudWatch's tiered price."""
    cost, left = Decimal(0), metrics
    for size, price in TIERS:
        taken = left if size is None else min(left, size)
        cost += taken * price
        left -= taken
        if not left:
            break
    return cost


def requests_cost(requests: int) -> Decimal:
    return Decimal(requests) * PER_THOUSAND_REQUESTS / 1000


# The agent's measurement -> the collector's DeviceSeries field group (cloudwatch._GPU_FIELDS) that reads it.
FIELD_OF = {
    "utilization_gpu": "utilization",
    "memory_used": "memory_used",
    "memory_total": "memory_total",
    "encoder_stats_session_count": "encoder_sessions",
    "encoder_stats_average_fps": "encoder_fps",
    **{name: signal.value for name, signal in MetricNames().signal_metrics.items()},
}


def collector_queries_per_host(config: AgentConfig, gpus: int) -> int:
    """The GetMetricData queries the collector makes a day for one (Nitro) host publishing `config`: each published GPU
    metric's statistics, the host memory's and the EC2 metrics' (CPU, network, EBS), from the collector's own query
    map."""
    from rightsizer.adapters.aws.cloudwatch import _EBS_FIELDS, _EC2_FIELDS, _GPU_FIELDS

    per_gpu = sum(len(_GPU_FIELDS[FIELD_OF[name]]) for name in config.per_gpu if name in FIELD_OF)
    host_memory = 1 if "mem_used_percent" in config.per_host else 0
    return gpus * per_gpu + host_memory + len(_EC2_FIELDS) + len(_EBS_FIELDS)


@dataclass(frozen=True)
class Fleet:
    label: str
    hosts: int
    gpus: int
    nvenc: bool  # its GPUs have video encoders (the accelerator table's video_encoders > 0)


FLEETS = (
    Fleet("1,000 g5.12xlarge (4 A10G)", 1000, 4, True),
    Fleet("1,000 g5.xlarge (1 A10G)", 1000, 1, True),
    Fleet("1,000 p4d.24xlarge (8 A100)", 1000, 8, False),
)


@dataclass(frozen=True)
class Row:
    fleet: Fleet
    config: AgentConfig
    metrics: int
    metrics_usd: Decimal
    put_usd: Decimal
    get_usd: Decimal

    @property
    def total_usd(self) -> Decimal:
        return self.metrics_usd + self.put_usd + self.get_usd


def configs() -> dict[str, AgentConfig]:
    return {name: AgentConfig.read(name, path) for name, path in CONFIGS.items()}


def rows(fleets: Sequence[Fleet] = FLEETS) -> list[Row]:
    """Each fleet with the shipped configuration, the lean one that fits its GPUs and the one with DCGM's signals."""
    known = configs()
    found = []
    for fleet in fleets:
        dcgm = known["DCGM"] if fleet.nvenc else known["DCGM"].without("DCGM, no NVENC", DCGM_ENCODER)
        for config in (known["shipped"], known["lean" if fleet.nvenc else "lean, no NVENC"], dcgm):
            metrics = fleet.hosts * config.metrics_per_host(fleet.gpus)
            reads = fleet.hosts * collector_queries_per_host(config, fleet.gpus) * DAYS_PER_MONTH
            found.append(
                Row(
                    fleet,
                    config,
                    metrics,
                    custom_metrics_cost(metrics),
                    requests_cost(config.put_requests_per_month(fleet.hosts)),
                    (Decimal(reads) * PER_THOUSAND_REQUESTS / 1000).quantize(Decimal("0.01")),
                )
            )
    return found


def _usd(amount: Decimal) -> str:
    return f"${amount:,.0f}"


def markdown() -> str:
    """docs/costs.md's table."""
    lines = [
        "| fleet | agent configuration | custom metrics | metrics $/month | PutMetricData $/month | "
        "collector's GetMetricData $/month | total $/month |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows():
        config = row.config
        shape = f"{len(config.per_gpu)}/GPU + {len(config.per_host)}/host, flush {config.flush_seconds} s"
        described = f"{config.name} ({shape})"
        lines.append(
            f"| {row.fleet.label} | {described} | {row.metrics:,} | {_usd(row.metrics_usd)} | {_usd(row.put_usd)} | "
            f"{_usd(row.get_usd)} | **{_usd(row.total_usd)}** |"
        )
    lines += [
        "",
        "Per GPU, a month, at the first tier's price (an account's first 10,000 custom metrics):",
        "",
        "| agent configuration | custom metrics per GPU | $ per GPU a month |",
        "| --- | ---: | ---: |",
    ]
    for config in per_gpu_configs():
        lines.append(f"| {config.name} | {len(config.per_gpu)} | ${per_gpu_usd(config):.2f} |")
    return "\n".join(lines) + "\n"


def per_gpu_configs() -> list[AgentConfig]:
    """Every configuration, and DCGM's on a GPU without NVENC."""
    known = configs()
    return [*known.values(), known["DCGM"].without("DCGM, no NVENC", DCGM_ENCODER)]


def per_gpu_usd(config: AgentConfig) -> Decimal:
    """What one GPU's metrics cost a month at the first tier."""
    return len(config.per_gpu) * TIERS[0][1]


BEGIN, END = "<!-- costs:begin -->", "<!-- costs:end -->"


def with_table(document: str) -> str:
    head, begin, rest = document.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"no {BEGIN} ... {END} block")
    return f"{head}{BEGIN}\n{markdown()}{END}{tail}"


def run() -> None:
    print("CloudWatch agent metrics, a month (us-east-1 prices; docs/costs.md):")
    for row in rows():
        print(
            f"  {row.fleet.label:<30} {row.config.name:<15} {row.metrics:>7,} metrics  {_usd(row.metrics_usd):>7} "
            f"+ PutMetricData {_usd(row.put_usd):>5} + GetMetricData {_usd(row.get_usd):>5} = {_usd(row.total_usd)}"
        )
    print(
        "  per GPU a month (first tier): "
        + ", ".join(
            f"{config.name} {len(config.per_gpu)} metrics ${per_gpu_usd(config):.2f}" for config in per_gpu_configs()
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench.agent_costs [docs/costs.md]`: rewrite the page's table."""
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0] if argv else ROOT / "docs" / "costs.md")
    path.write_text(with_table(path.read_text()))
    print(f"wrote the cost table of {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
