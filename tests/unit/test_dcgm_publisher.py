"""agent/dcgm/publish-dcgm-metrics.py: DCGM's profiling fields, as `dcgmi dmon` prints them, become one StatsD gauge per
GPU and field a minute, in percent, sent to the CloudWatch agent's listener (here a UDP socket on 127.0.0.1)."""

from __future__ import annotations

import importlib.util
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "agent" / "dcgm" / "publish-dcgm-metrics.py"

# What `dcgmi dmon -e 1002,1003,1004,1005,206,207 -d 10000` prints on a two-GPU host (DCGM 3.x layout): a header, a
# line of entity ids, then one row per GPU and sample; a MIG instance's row, and N/A where a field has no value.
DMON = """\
#Entity   SMACT  SMOCC  TENSO  DRAMA  ENCUT  DECUT
ID
GPU 0     0.180  0.090  0.020  0.110  0      0
GPU 1     N/A    0.300  0.000  0.050  35     60
GPU-I 1   0.500  0.250  0.000  0.000  N/A    N/A
GPU 0     0.220  0.110  0.040  0.130  0      0
GPU 1     N/A    0.500  0.000  0.070  45     80
"""


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("publish_dcgm_metrics", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


publisher = load()


def test_a_gpu_row_gives_its_index_and_each_field_in_dcgmis_column_order() -> None:
    row = "GPU 3     0.512  0.204  N/A    0.101  12     0"

    assert publisher.parse(row) == ("3", [0.512, 0.204, None, 0.101, 12, 0])


@pytest.mark.parametrize(
    "line",
    ["#Entity   SMACT  SMOCC  TENSO  DRAMA  ENCUT  DECUT", "ID", "GPU-I 1   0.5  0.2  0.0  0.0  N/A  N/A", "", "GPU 0"],
)
def test_headers_mig_instances_and_short_lines_are_not_gpu_rows(line: str) -> None:
    assert publisher.parse(line) is None


def test_each_gpus_minute_is_averaged_in_percent_and_occupancy_stands_in_only_where_sm_active_is_missing() -> None:
    lines = list(publisher.gauges(DMON.splitlines(), interval=60.0, now=lambda: 0.0))

    assert lines == [
        "dcgm_decoder_util:0.00|g|#index:0",
        "dcgm_dram_active:12.00|g|#index:0",
        "dcgm_encoder_util:0.00|g|#index:0",
        "dcgm_sm_active:20.00|g|#index:0",
        "dcgm_tensor_active:3.00|g|#index:0",
        "dcgm_decoder_util:70.00|g|#index:1",
        "dcgm_dram_active:6.00|g|#index:1",
        "dcgm_encoder_util:40.00|g|#index:1",
        "dcgm_sm_occupancy:40.00|g|#index:1",
        "dcgm_tensor_active:0.00|g|#index:1",
    ]


def test_a_batch_goes_out_each_interval_and_starts_afresh() -> None:
    ticks: Iterator[float] = iter([0.0, 10.0, 70.0, 80.0, 90.0])
    rows = ["GPU 0  0.10  0.1  0.0  0.0  0  0", "GPU 0  0.30  0.1  0.0  0.0  0  0", "GPU 0  0.90  0.1  0.0  0.0  0  0"]

    lines = [line for line in publisher.gauges(rows, interval=60.0, now=lambda: next(ticks)) if "sm_active" in line]

    assert lines == ["dcgm_sm_active:20.00|g|#index:0", "dcgm_sm_active:90.00|g|#index:0"]


def test_the_script_reads_dcgmi_and_sends_its_gauges_to_the_agents_statsd_listener(tmp_path: Path) -> None:
    fake = tmp_path / "dcgmi"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "if sys.argv[1:] != ['dmon', '-e', '1002,1003,1004,1005,206,207', '-d', '10000']:\n"
        "    sys.exit(f'unexpected arguments {sys.argv[1:]}')\n"
        f"sys.stdout.write({DMON!r})\n"
    )
    fake.chmod(0o755)
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(5)
    port = listener.getsockname()[1]
    try:
        code = publisher.main(["--dcgmi", str(fake), "--statsd", f"127.0.0.1:{port}", "--interval", "3600"])
        received = [listener.recvfrom(1024)[0].decode() for _ in range(10)]
    finally:
        listener.close()

    assert code == 1, "dcgmi ended: the script exits for systemd to restart it"
    assert "dcgm_sm_active:20.00|g|#index:0" in received
    assert "dcgm_sm_occupancy:40.00|g|#index:1" in received
    assert len(received) == 10
