"""Generates statemachine/resize.asl.json from statemachine/resize.py.

    python -m statemachine.build --write   # regenerate the file (`make asl`)
    python -m statemachine.build --check   # exit 1 if the file is not what the fragments generate

tests/unit/test_statemachine_build.py runs the check, so an edit by hand to the JSON fails the tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from statemachine.resize import machine

ASL_PATH = Path(__file__).resolve().parent / "resize.asl.json"


def build() -> dict[str, Any]:
    """The instance workflow's definition."""
    return machine()


def serialise(definition: dict[str, Any]) -> str:
    """The file's text: two-space JSON, ASCII, a newline at the end."""
    return json.dumps(definition, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m statemachine.build", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"write {ASL_PATH.name}")
    mode.add_argument("--check", action="store_true", help=f"fail if {ASL_PATH.name} differs from the fragments")
    args = parser.parse_args(argv)
    text = serialise(build())
    if args.write:
        ASL_PATH.write_text(text)
        print(f"wrote {ASL_PATH} ({len(text.splitlines())} lines, {len(build()['States'])} states)")
        return 0
    if ASL_PATH.read_text() != text:
        print(f"{ASL_PATH} is not what statemachine/resize.py generates: run `make asl`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
