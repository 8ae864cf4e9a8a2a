"""One source of dependencies: pyproject.toml -> uv.lock -> the exported requirement files, which install the
test environment (make test), the demo (make demo) and the Lambda layer (sam build). These must agree."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from bench import package_bench

from tests.unit.test_template import sam

ROOT = Path(__file__).resolve().parents[2]
EXPORTS = (ROOT / "layer" / "requirements.txt", ROOT / "requirements" / "demo.txt", ROOT / "requirements" / "dev.txt")
UV = Path(sys.executable).with_name("uv")


def uv(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "UV_OFFLINE": "1", "UV_NO_PROGRESS": "1"}  # tests never reach the index
    return subprocess.run([str(UV), *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def export_command(path: Path) -> list[str]:
    """The `uv export ...` line each generated file names in its header."""
    match = re.search(r"^#\s+(uv export .+)$", path.read_text(), re.MULTILINE)
    assert match, f"{path} does not say which uv command wrote it"
    return shlex.split(match.group(1))[1:]


def test_uv_lock_matches_pyproject() -> None:
    result = uv("lock", "--check")

    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_requirement_file_is_exactly_what_uv_exports_from_the_lock(path: Path) -> None:
    result = uv(*export_command(path))

    assert result.returncode == 0, result.stderr
    assert result.stdout == path.read_text(), f"{path} is stale: run `make lock`"


def test_the_lambda_layer_pins_exactly_the_versions_installed_here_and_locked() -> None:
    lock = {package["name"]: package["version"] for package in tomllib.loads((ROOT / "uv.lock").read_text())["package"]}
    pins = package_bench.pins()

    assert {"boto3", "botocore", "aws-lambda-powertools", "slack-bolt", "slack-sdk"} <= set(pins)
    for name, version in pins.items():
        assert lock[name] == version, name
        assert metadata.version(name) == version, f"the tests run {name} {metadata.version(name)}, Lambda {version}"


def test_functions_share_one_layer_and_carry_no_libraries_of_their_own() -> None:
    template = sam()
    layers = {name: r for name, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::LayerVersion"}
    (name, layer), *_ = layers.items()
    runtime = template["Globals"]["Function"]["Runtime"]

    assert len(layers) == 1
    assert template["Globals"]["Function"]["Layers"] == [{"Ref": name}]
    assert layer["Metadata"]["BuildMethod"] == runtime
    assert layer["Properties"]["CompatibleRuntimes"] == [runtime]
    assert layer["Properties"]["CompatibleArchitectures"] == template["Globals"]["Function"]["Architectures"]
    assert (ROOT / layer["Properties"]["ContentUri"] / "requirements.txt").is_file()
    code = ROOT / template["Globals"]["Function"]["CodeUri"]
    assert not (code / "requirements.txt").exists()  # sam build would bundle every library into every function
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::Serverless::Function":
            assert "CodeUri" not in resource["Properties"] and "Layers" not in resource["Properties"]


def test_package_sizes_leave_room_under_lambdas_limits() -> None:
    code, layer = package_bench.function_code(), package_bench.layer()

    assert code.unzipped < 2 * 1024 * 1024  # each function's own code (the analyzers of every kind and their data)
    assert code.unzipped + layer.unzipped < package_bench.LAMBDA_UNZIPPED_LIMIT // 2


def test_the_license_is_apache_2_and_pyproject_says_so_in_spdx() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "LICENSE").read_text()

    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_docs_state_the_package_sizes_once_as_the_bench_measures_them() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    code, layer = package_bench.function_code(), package_bench.layer()
    (line,) = re.findall(r"- Package sizes: .*", page)
    stated = [float(x) for x in re.findall(r"([\d.]+) MiB (?:unzipped|zipped)", line)]
    measured = [size / package_bench.MIB for size in (code.unzipped, code.zipped, layer.unzipped, layer.zipped)]

    assert len(stated) == 4
    for doc, now in zip(stated, measured, strict=True):
        assert abs(doc - now) <= 0.1 * now, f"{line}: run `.venv/bin/python -m bench.package_bench`"
    others = [path.name for path in (ROOT / "docs").glob("*.md") if path.name != "benchmarks.md"]
    for name in [*others, "../README.md"]:
        text = (ROOT / "docs" / name).read_text()
        # Lambda's own limit (250 MiB) may be named anywhere; a measured size only in benchmarks.md.
        sizes = re.findall(r"(?<![\d.])(\d+(?:\.\d+)?) ?(?:MiB|MB)\b.{0,40}(?:layer|unzipped|zipped)", text)
        assert set(sizes) <= {"250"}, f"{name} states a package size: say it once, in benchmarks.md"
