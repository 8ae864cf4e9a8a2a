"""The CloudWatch agent's configurations: valid for the agent, publishing what the advice reads, and priced honestly
in docs/costs.md (generated from bench/agent_costs.py, which reads the files themselves)."""

from __future__ import annotations

import importlib.util
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bench import agent_costs

from rightsizer.settings import MetricNames

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "cloudwatch_agent" / "schema.json").read_text())
AGENT_FILES = sorted((ROOT / "agent").rglob("*.json"))
COSTS = ROOT / "docs" / "costs.md"
PREFIX = "nvidia_smi_"  # the agent's nvidia_gpu plugin publishes measurement m as nvidia_smi_m


@pytest.mark.parametrize("path", AGENT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_agent_configuration_is_valid_for_the_agent(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text()), SCHEMA)


def test_the_schema_rejects_what_the_agent_rejects() -> None:
    broken = json.loads((ROOT / "agent" / "lean" / "nvenc.json").read_text())
    broken["metrics"]["force_flush_interval"] = "five minutes"

    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)


@pytest.mark.parametrize("name", list(agent_costs.CONFIGS))
def test_each_configuration_publishes_every_metric_the_advice_decides_on(name: str) -> None:
    config = agent_costs.configs()[name]
    names = MetricNames()
    # The nvidia_gpu section's measurements are published with its prefix, the DCGM publisher's by their own names.
    published = {PREFIX + m for m in config.per_gpu} | set(config.per_gpu)
    needed = {names.gpu_utilization, names.gpu_memory_used, names.gpu_memory_total}
    if name == "DCGM":
        needed |= set(names.signal_metrics) - {names.gpu_sm_occupancy}  # occupancy: a fallback, sent where needed
    elif name != "lean, no NVENC":
        needed.add(names.gpu_encoder_sessions)  # video work on the SMs' quiet GPUs
    assert needed <= published
    assert names.host_memory_used_pct in config.per_host
    dimensions = json.loads(agent_costs.CONFIGS[name].read_text())["metrics"]["append_dimensions"]
    assert {names.instance_dimension, names.instance_type_dimension} <= set(dimensions), "found, and not mixed up"


def test_the_lean_files_leave_out_only_what_decides_nothing_and_flush_less_often() -> None:
    known = agent_costs.configs()
    shipped, lean, bare = known["shipped"], known["lean"], known["lean, no NVENC"]

    assert set(shipped.per_gpu) - set(lean.per_gpu) == {"encoder_stats_average_fps"}, "evidence only"
    assert set(lean.per_gpu) - set(bare.per_gpu) == {"encoder_stats_session_count"}
    assert shipped.per_host == lean.per_host == bare.per_host
    assert lean.flush_seconds == bare.flush_seconds == 300 and shipped.flush_seconds == 60
    assert lean.aggregations == bare.aggregations == shipped.aggregations == 0


def test_the_dcgm_file_is_the_lean_one_with_the_agents_statsd_listener_and_dcgms_encoder_signal() -> None:
    lean = json.loads((ROOT / "agent" / "lean" / "nvenc.json").read_text())
    dcgm = json.loads(agent_costs.CONFIGS["DCGM"].read_text())
    statsd = dcgm["metrics"]["metrics_collected"].pop("statsd")
    lean_gpu = lean["metrics"]["metrics_collected"]["nvidia_gpu"]["measurement"]
    dcgm_gpu = dcgm["metrics"]["metrics_collected"]["nvidia_gpu"]["measurement"]

    assert statsd["service_address"] == "127.0.0.1:8125", "the publisher's address, and no other host's"
    # dcgm_encoder_util measures the encoders in percent: the session count (a count, not a load) is left out.
    assert [m for m in lean_gpu if m != {"name": "encoder_stats_session_count", "unit": "Count"}] == dcgm_gpu
    dcgm["metrics"]["metrics_collected"]["nvidia_gpu"]["measurement"] = lean_gpu
    assert dcgm == lean


def test_the_dcgm_publisher_sends_what_the_collector_reads() -> None:
    published = {name for _, name, _ in agent_costs_publisher().FIELDS}

    assert published == set(MetricNames().signal_metrics)
    assert set(agent_costs.dcgm_metrics()) == published - {MetricNames().gpu_sm_occupancy}


def agent_costs_publisher() -> Any:
    spec = importlib.util.spec_from_file_location("publisher", agent_costs.DCGM_PUBLISHER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lean_files_are_offered_for_exactly_the_gpus_with_and_without_video_encoders() -> None:
    page = COSTS.read_text()
    table = json.loads((ROOT / "src" / "rightsizer" / "domain" / "data" / "accelerators.json").read_text())
    nvidia = {key.split("-")[0]: spec["video_encoders"] for key, spec in table.items() if key != "_meta"
              and spec["vendor"] == "NVIDIA"}  # fmt: skip

    def listed(lead: str) -> set[str]:
        (names,) = re.findall(re.escape(lead) + r"\s*\(([^)]*)", page.replace("\n", " "))
        return {name.strip() for name in names.split(":")[0].split(",")}

    assert listed("for GPUs with video\nencoders".replace("\n", " ")) == {m for m, n in nvidia.items() if n > 0}
    assert listed("for those without") == {m for m, n in nvidia.items() if n == 0}


@pytest.mark.parametrize(
    ("metrics", "usd"),
    [(0, "0"), (10_000, "3000"), (13_000, "3300"), (250_000, "27000"), (1_000_000, "64500"), (1_000_100, "64502")],
)
def test_custom_metrics_are_priced_by_cloudwatchs_tiers(metrics: int, usd: str) -> None:
    # 13,000: the issue's ~3 per GPU + 1 per host for 1,000 four-GPU hosts.
    assert agent_costs.custom_metrics_cost(metrics) == Decimal(usd)


def test_a_host_publishes_each_gpus_measurements_and_its_own() -> None:
    shipped = agent_costs.configs()["shipped"]

    assert shipped.metrics_per_host(4) == 4 * 5 + 1
    assert shipped.put_requests_per_month(1000) == 1000 * 730 * 60
    aggregated = agent_costs.AgentConfig("x", ("a",), ("b",), 60, aggregations=2)
    assert aggregated.metrics_per_host(2) == 3 * 3, "each aggregation repeats every measurement"


def test_docs_costs_table_is_generated_from_the_configurations() -> None:
    page = COSTS.read_text()

    assert agent_costs.with_table(page) == page, "stale: run .venv/bin/python -m bench.agent_costs docs/costs.md"
