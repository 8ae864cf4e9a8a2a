"""Writes the closed lists of schema/report.schema.json from the registries they list.

    python -m report_schema.build --write   # rewrite the enums (`make schema`)
    python -m report_schema.build --check   # exit 1 if an enum is not the registry's

The schema's prose stays hand-written; its enums (findings, confidences, resource kinds, categories, the actions advice
offers) are the registries' (domain/findings.py, domain/actions.py, domain/resources.py, ...), so a new finding or
action reaches the schema by `make schema`, never by an edit. Only the enum arrays are rewritten, in place, so the
file keeps its layout. tests/unit/test_report_schema.py runs the check.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.findings import FINDINGS
from rightsizer.domain.models import Confidence
from rightsizer.domain.resources import ResourceKind
from rightsizer.services.report import Category

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "report.schema.json"

EnumPath = tuple[str, ...]  # the keys from the document's root to the object holding the enum


def enums() -> Mapping[EnumPath, list[str | None]]:
    """Each generated enum's place in the schema and its values, in the registries' order."""
    return {
        ("$defs", "finding"): [finding.value for finding in FINDINGS],
        ("$defs", "confidence"): [confidence.value for confidence in Confidence],
        ("$defs", "kind"): [kind.value for kind in ResourceKind],
        ("$defs", "category"): [category.value for category in Category],
        # null: advice without a one-click action
        ("$defs", "recommendation", "properties", "action"): [
            *(kind.value for kind, spec in ACTIONS.items() if spec.offered),
            None,
        ],
    }


class SchemaLayoutError(ValueError):
    """The schema's text no longer holds an enum where (or as) this generator expects it."""


def generated(text: str) -> str:
    """`text` (the schema) with every generated enum set to its registry's values."""
    document = json.loads(text)
    for path, values in enums().items():
        text = _replace_enum(text, _enum_at(document, path), values, path)
    return text


def _enum_at(document: Mapping[str, Any], path: EnumPath) -> Sequence[str | None]:
    node: Any = document
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            raise SchemaLayoutError(f"schema/report.schema.json has no {'/'.join(path)}")
        node = node[key]
    if not isinstance(node, Mapping) or not isinstance(node.get("enum"), list):
        raise SchemaLayoutError(f"schema/report.schema.json's {'/'.join(path)} has no enum")
    return list(node["enum"])


def _replace_enum(text: str, current: Sequence[str | None], values: Sequence[str | None], path: EnumPath) -> str:
    # Enums are written on one line, as json.dumps writes a list: one exact match, or the layout changed.
    written = re.escape(f'"enum": {json.dumps(list(current))}')
    matches = re.findall(written, text)
    if len(matches) != 1:
        raise SchemaLayoutError(
            f"{'/'.join(path)}'s enum is written {len(matches)} times in schema/report.schema.json, not once on a line"
        )
    return re.sub(written, lambda _: f'"enum": {json.dumps(list(values))}', text, count=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m report_schema.build", description=(__doc__ or "").splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"rewrite {SCHEMA_PATH.name}'s enums")
    mode.add_argument("--check", action="store_true", help="fail if an enum is not its registry's")
    args = parser.parse_args(argv)
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    try:
        wanted = generated(text)
    except SchemaLayoutError as error:
        print(error, file=sys.stderr)
        return 1
    if args.write:
        if wanted != text:
            SCHEMA_PATH.write_text(wanted, encoding="utf-8")
        print(f"{SCHEMA_PATH}: {len(enums())} enums from the registries")
        return 0
    if wanted != text:
        print(f"{SCHEMA_PATH}'s enums are not the registries': run `make schema`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
