"""Deployment package sizes: each function's own code (CodeUri src/) and the shared dependency layer.

Measured without Docker or a download: the function code is zipped from src/ as `sam build` copies it, and
the layer is the sum of the installed files of every distribution layer/requirements.txt pins (the same
versions this environment runs; the arm64 wheels Lambda gets differ only in their few compiled files).
`sam build` on a machine with Python 3.12 gives the exact figures (docs/deploy.md). docs/benchmarks.md states the
sizes once, as `sizes_line()` writes them (`python -m bench.package_bench docs/benchmarks.md`; a test checks the
page against a fresh measurement, within 10 %).
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src"
LAYER_REQUIREMENTS = ROOT / "layer" / "requirements.txt"
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024  # function code plus all its layers
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)", re.MULTILINE)


@dataclass(frozen=True)
class Size:
    files: int
    unzipped: int
    zipped: int


def pins(requirements: Path = LAYER_REQUIREMENTS) -> dict[str, str]:
    """Distribution name (normalised) -> pinned version."""
    return {_normal(name): version for name, version in _PIN.findall(requirements.read_text())}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _zip_size(files: list[tuple[str, bytes]]) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            archive.writestr(name, data)
    return len(buffer.getvalue())


def function_code() -> Size:
    """What one function's package holds: src/ without caches or build metadata."""
    files = [
        (str(path.relative_to(SOURCE)), path.read_bytes())
        for path in sorted(SOURCE.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and not any(p.endswith(".egg-info") for p in path.parts)
    ]
    return Size(len(files), sum(len(data) for _, data in files), _zip_size(files))


def layer() -> Size:
    """The installed files of every pinned distribution (python/ in the layer)."""
    files: list[tuple[str, bytes]] = []
    for name in sorted(pins()):
        distribution = metadata.distribution(name)
        for entry in distribution.files or ():
            path = Path(str(distribution.locate_file(entry)))
            if path.is_file() and "__pycache__" not in path.parts:
                files.append((f"python/{entry}", path.read_bytes()))
    return Size(len(files), sum(len(data) for _, data in files), _zip_size(files))


MIB = 1024 * 1024
BEGIN, END = "<!-- package-sizes:begin -->", "<!-- package-sizes:end -->"


def sizes_line(code: Size, deps: Size) -> str:
    """The one statement of the package sizes, for docs/benchmarks.md."""
    total = code.unzipped + deps.unzipped
    return (
        f"- Package sizes: each function's own code {code.unzipped / MIB:.2f} MiB unzipped ({code.zipped / MIB:.2f} "
        f"MiB zipped, goal < 2 MiB); the shared dependency layer {deps.unzipped / MIB:.1f} MiB unzipped "
        f"({deps.zipped / MIB:.1f} MiB zipped); together {total / MIB:.1f} MiB of Lambda's "
        f"{LAMBDA_UNZIPPED_LIMIT // MIB} MiB."
    )


def with_sizes(document: str, code: Size, deps: Size) -> str:
    head, begin, rest = document.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"no {BEGIN} ... {END} block")
    return f"{head}{BEGIN}\n{sizes_line(code, deps)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.package_bench [docs/benchmarks.md]`: measure and rewrite the page's sizes."""
    path = Path(argv[0]) if argv else ROOT / "docs" / "benchmarks.md"
    path.write_text(with_sizes(path.read_text(), function_code(), layer()))
    print(f"wrote the package sizes of {path}")
    return 0


def run() -> None:
    mib = MIB
    code, deps = function_code(), layer()
    print("Deployment package sizes (goal: each function's own code < 2 MiB; layer well under Lambda's 250 MB)")
    print(
        f"  function code (src/, same for all functions): {code.files} files, {code.unzipped / mib:.2f} MiB "
        f"unzipped, {code.zipped / mib:.2f} MiB zipped"
    )
    print(
        f"  DependenciesLayer ({len(pins())} pinned distributions): {deps.files} files, "
        f"{deps.unzipped / mib:.1f} MiB unzipped, {deps.zipped / mib:.1f} MiB zipped"
    )
    total = code.unzipped + deps.unzipped
    print(f"  function + layer unzipped: {total / mib:.1f} MiB of Lambda's {LAMBDA_UNZIPPED_LIMIT // mib} MiB")


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
