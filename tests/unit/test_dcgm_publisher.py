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

from rightsizer.settings import MetricNames

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

    assert publisher.parse(row) == ("GPU", "3", [0.512, 0.204, None, 0.101, 12, 0])


def test_a_gpu_instances_row_gives_its_dcgm_entity_id_and_its_columns() -> None:
    row = "GPU-I 7   0.090  0.040  0.000  0.010  N/A    N/A    3172"

    assert publisher.parse(row, columns=7) == ("GPU-I", "7", [0.09, 0.04, 0.0, 0.01, None, None, 3172.0])


@pytest.mark.parametrize(
    "line",
    [
        "#Entity   SMACT  SMOCC  TENSO  DRAMA  ENCUT  DECUT",
        "ID",
        "GPU-CI 3  0.5  0.2  0.0  0.0  N/A  N/A",  # a compute instance: its GPU instance's row carries the slice
        "",
        "GPU 0",
    ],
)
def test_headers_compute_instances_and_short_lines_are_not_rows(line: str) -> None:
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


def publish(argv: list[str], gauges: int) -> tuple[int, list[str]]:
    """Run the script with `argv` against a StatsD listener on a free local port: its exit code and the first `gauges`
    datagrams it sent (one batch: the interval outlasts the fake dcgmi)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(5)
    port = listener.getsockname()[1]
    try:
        code = publisher.main([*argv, "--statsd", f"127.0.0.1:{port}", "--interval", "3600"])
        return code, [listener.recvfrom(1024)[0].decode() for _ in range(gauges)]
    finally:
        listener.close()


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

    # No nvidia-smi: no GPU in MIG mode is found, and dmon is asked as it always was.
    code, received = publish(["--dcgmi", str(fake), "--nvidia-smi", str(tmp_path / "absent")], gauges=10)

    assert code == 1, "dcgmi ended: the script exits for systemd to restart it"
    assert "dcgm_sm_active:20.00|g|#index:0" in received
    assert "dcgm_sm_occupancy:40.00|g|#index:1" in received
    assert len(received) == 10


# `nvidia-smi mig -lgi` on an A100-SXM4-40GB in MIG mode with a 3g.20gb and two 1g.5gb GPU instances, and a second GPU
# with a 7g.40gb (NVIDIA MIG User Guide, "Getting Started with MIG": GPU, name, profile id, instance id, placement).
LGI = """\
+-------------------------------------------------------+
| GPU instances:                                        |
| GPU   Name             Profile  Instance   Placement  |
|                          ID       ID       Start:Size |
|=======================================================|
|   0  MIG 3g.20gb          9        2          4:4     |
+-------------------------------------------------------+
|   0  MIG 1g.5gb          19        9          2:1     |
+-------------------------------------------------------+
|   0  MIG 1g.5gb          19       10          3:1     |
+-------------------------------------------------------+
|   1  MIG 7g.40gb          0        0          0:8     |
+-------------------------------------------------------+
"""

# `dcgmi discovery -c` on the same host (dcgmi/Query.cpp FormatMigHierarchy: "I <GPU>/<instance>" beside each GPU
# instance's DCGM entity id, "CI <GPU>/<instance>/<compute instance>" beside each compute instance's).
HIERARCHY = """\
+-------------------+--------------------------------------------------------------------+
| Instance Hierarchy                                                                     |
+===================+====================================================================+
| GPU 0             | GPU GPU-a810a1fc-9f46-0e6f-5cef-bf34c2248e12 (EntityID: 0)         |
| -> I 0/2          | GPU Instance (EntityID: 0)                                         |
|    -> CI 0/2/0    | Compute Instance (EntityID: 0)                                     |
| -> I 0/9          | GPU Instance (EntityID: 1)                                         |
|    -> CI 0/9/0    | Compute Instance (EntityID: 1)                                     |
| -> I 0/10         | GPU Instance (EntityID: 2)                                         |
|    -> CI 0/10/0   | Compute Instance (EntityID: 2)                                     |
| GPU 1             | GPU GPU-604c7a18-e7d0-02e0-723a-7578be840651 (EntityID: 1)         |
| -> I 1/0          | GPU Instance (EntityID: 8)                                         |
|    -> CI 1/0/0    | Compute Instance (EntityID: 8)                                     |
+-------------------+--------------------------------------------------------------------+
"""

# dmon asked for both GPUs and the four GPU instances, with the instances' framebuffer (252) after the six fields.
MIG_DMON = """\
#Entity   SMACT  SMOCC  TENSO  DRAMA  ENCUT  DECUT  FBUSD
ID                                                  MB
GPU 0     N/A    N/A    N/A    N/A    0      0      9210
GPU-I 0   0.080  0.030  0.010  0.020  N/A    N/A    3100
GPU-I 1   N/A    0.400  0.000  0.100  N/A    N/A    2000
GPU-I 2   0.500  0.250  0.000  0.000  N/A    N/A    N/A
GPU 1     N/A    N/A    N/A    N/A    0      0      30000
GPU-I 8   0.600  0.300  0.200  0.300  N/A    N/A    30000
GPU-CI 0  0.080  0.030  0.010  0.020  N/A    N/A    3100
GPU-I 0   0.100  0.050  0.010  0.020  N/A    N/A    3300
"""


def test_each_gpu_instance_is_known_by_its_dcgm_entity_id_with_its_gpu_instance_id_and_profile() -> None:
    found = publisher.slices(HIERARCHY, LGI)

    assert found == {
        "0": publisher.Slice("0", "2", "3g.20gb"),
        "1": publisher.Slice("0", "9", "1g.5gb"),
        "2": publisher.Slice("0", "10", "1g.5gb"),
        "8": publisher.Slice("1", "0", "7g.40gb"),
    }


def test_an_instance_without_a_profile_listed_is_left_for_the_next_start() -> None:
    lgi = "\n".join(line for line in LGI.splitlines() if " 10 " not in line)

    assert "2" not in publisher.slices(HIERARCHY, lgi)


def test_dmon_is_asked_for_the_gpus_and_their_instances_by_entity_id_with_the_instances_framebuffer() -> None:
    instances = publisher.slices(HIERARCHY, LGI)

    assert publisher.command("dcgmi", ["0", "1"], instances) == [
        "dcgmi", "dmon", "-e", "1002,1003,1004,1005,206,207,252", "-d", "10000",
        "-i", "gpu:0,gpu:1,instance:0,instance:1,instance:2,instance:8",
    ]  # fmt: skip
    assert publisher.command("dcgmi", ["0"], {}) == [
        "dcgmi",
        "dmon",
        "-e",
        "1002,1003,1004,1005,206,207",
        "-d",
        "10000",
    ]


def test_each_instance_publishes_its_sms_load_and_framebuffer_tagged_with_its_gpu_instance_and_profile() -> None:
    instances = publisher.slices(HIERARCHY, LGI)

    lines = list(publisher.gauges(MIG_DMON.splitlines(), interval=60.0, now=lambda: 0.0, instances=instances))

    slice_lines = [line for line in lines if "gpu_instance" in line]
    assert sorted(slice_lines) == sorted(
        [
            "dcgm_mig_fb_used:3200.00|g|#index:0,gpu_instance:2,mig_profile:3g.20gb",
            "dcgm_mig_sm_active:9.00|g|#index:0,gpu_instance:2,mig_profile:3g.20gb",
            "dcgm_mig_sm_active:50.00|g|#index:0,gpu_instance:10,mig_profile:1g.5gb",
            "dcgm_mig_fb_used:2000.00|g|#index:0,gpu_instance:9,mig_profile:1g.5gb",
            "dcgm_mig_sm_occupancy:40.00|g|#index:0,gpu_instance:9,mig_profile:1g.5gb",
            "dcgm_mig_fb_used:30000.00|g|#index:1,gpu_instance:0,mig_profile:7g.40gb",
            "dcgm_mig_sm_active:60.00|g|#index:1,gpu_instance:0,mig_profile:7g.40gb",
        ]
    )
    # The GPUs' own rows publish what they read (here only the video engines: profiling reads N/A on a MIG-mode GPU),
    # never the framebuffer, which the agent's nvidia_gpu memory_used already publishes.
    assert [line for line in lines if "gpu_instance" not in line] == [
        "dcgm_decoder_util:0.00|g|#index:0",
        "dcgm_encoder_util:0.00|g|#index:0",
        "dcgm_decoder_util:0.00|g|#index:1",
        "dcgm_encoder_util:0.00|g|#index:1",
    ]


def test_without_mig_the_layout_is_not_asked_of_dcgmi(tmp_path: Path) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'No MIG-enabled devices found.'\nexit 6\n")
    smi.chmod(0o755)

    assert publisher.discover(str(tmp_path / "no-dcgmi"), str(smi)) == ([], {})


def test_the_script_finds_the_mig_layout_and_sends_each_instances_gauges(tmp_path: Path) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"if sys.argv[1:] == ['mig', '-lgi']: sys.stdout.write({LGI!r})\n"
        "elif sys.argv[1:] == ['--query-gpu=index', '--format=csv,noheader']: print('0'); print('1')\n"
        "else: sys.exit(f'unexpected arguments {sys.argv[1:]}')\n"
    )
    dcgmi = tmp_path / "dcgmi"
    expected = ["dmon", "-e", "1002,1003,1004,1005,206,207,252", "-d", "10000"]
    expected += ["-i", "gpu:0,gpu:1,instance:0,instance:1,instance:2,instance:8"]
    dcgmi.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"if sys.argv[1:] == ['discovery', '-c']: sys.stdout.write({HIERARCHY!r})\n"
        f"elif sys.argv[1:] == {expected!r}: sys.stdout.write({MIG_DMON!r})\n"
        "else: sys.exit(f'unexpected arguments {sys.argv[1:]}')\n"
    )
    for fake in (smi, dcgmi):
        fake.chmod(0o755)

    code, received = publish(["--dcgmi", str(dcgmi), "--nvidia-smi", str(smi)], gauges=11)

    assert code == 1
    assert "dcgm_mig_sm_active:60.00|g|#index:1,gpu_instance:0,mig_profile:7g.40gb" in received
    assert "dcgm_mig_fb_used:3200.00|g|#index:0,gpu_instance:2,mig_profile:3g.20gb" in received


def test_each_instance_publishes_what_the_collector_reads_under_the_dimensions_it_reads() -> None:
    names = MetricNames()

    assert {name for _, name, _ in publisher.INSTANCE_FIELDS} == {
        *names.slice_signal_metrics,
        names.gpu_instance_memory_used,
    }
    assert (
        names.gpu_index_dimension,
        names.gpu_instance_dimension,
        names.mig_profile_dimension,
    ) == (publisher.INDEX_TAG, publisher.INSTANCE_TAG, publisher.PROFILE_TAG)


def test_a_new_mig_layout_ends_the_script_for_systemd_to_start_it_on_the_new_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GPU instance 10 is destroyed while the script runs: the second `nvidia-smi mig -lgi` no longer lists it.
    later = "\n".join(line for line in LGI.splitlines() if "  10  " not in line)
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, sys\n"
        f"seen = pathlib.Path({str(tmp_path / 'seen')!r})\n"
        "if sys.argv[1:] == ['mig', '-lgi']:\n"
        f"    sys.stdout.write({later!r} if seen.exists() else {LGI!r}); seen.touch()\n"
        "elif sys.argv[1:] == ['--query-gpu=index', '--format=csv,noheader']: print('0'); print('1')\n"
        "else: sys.exit(f'unexpected arguments {sys.argv[1:]}')\n"
    )
    dcgmi = tmp_path / "dcgmi"
    dcgmi.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"if sys.argv[1:] == ['discovery', '-c']: sys.stdout.write({HIERARCHY!r})\n"
        f"elif sys.argv[1] == 'dmon': sys.stdout.write({MIG_DMON!r})\n"
    )
    for fake in (smi, dcgmi):
        fake.chmod(0o755)

    code, received = publish(["--dcgmi", str(dcgmi), "--nvidia-smi", str(smi), "--rediscover", "0"], gauges=1)

    assert code == 1 and len(received) == 1
    assert "the MIG layout changed" in capsys.readouterr().err
