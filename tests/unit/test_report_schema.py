"""schema/report.schema.json's enums are generated from the registries (`make schema`), in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_schema import build as report_schema
from report_schema.build import SchemaLayoutError, enums, generated

SCHEMA_TEXT = report_schema.SCHEMA_PATH.read_text(encoding="utf-8")


def test_the_shipped_schemas_enums_are_the_registries() -> None:
    assert report_schema.main(["--check"]) == 0
    assert generated(SCHEMA_TEXT) == SCHEMA_TEXT


def test_a_registry_member_missing_from_the_schema_is_written_back_and_nothing_else_moves() -> None:
    stale = SCHEMA_TEXT.replace('"gpu_lost", ', "").replace('"stop_notebook", ', "")
    assert stale != SCHEMA_TEXT

    assert generated(stale) == SCHEMA_TEXT


def test_each_generated_enum_holds_its_registrys_values_in_order() -> None:
    document = json.loads(generated(SCHEMA_TEXT))
    for path, values in enums().items():
        node = document
        for key in path:
            node = node[key]
        assert node["enum"] == values, path
    assert enums()[("$defs", "recommendation", "properties", "action")][-1] is None  # advice without an action


def test_the_check_fails_and_says_how_to_fix_a_stale_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "report.schema.json"
    stale.write_text(SCHEMA_TEXT.replace('"held_unused"', '"held_idle"'), encoding="utf-8")
    monkeypatch.setattr(report_schema, "SCHEMA_PATH", stale)

    assert report_schema.main(["--check"]) == 1
    assert "run `make schema`" in capsys.readouterr().err
    assert report_schema.main(["--write"]) == 0
    assert stale.read_text(encoding="utf-8") == SCHEMA_TEXT


def test_an_enum_the_generator_cannot_find_once_is_an_error_not_a_guess() -> None:
    document = json.loads(SCHEMA_TEXT)
    del document["$defs"]["category"]["enum"]
    with pytest.raises(SchemaLayoutError, match="category has no enum"):
        generated(json.dumps(document))
    # Written twice (e.g. a copy in an example): which one is the registry's is not guessed.
    twice = SCHEMA_TEXT.replace('"$defs": {', '"$defs": {"copy": {"enum": ["high", "medium", "low"]}, ', 1)
    with pytest.raises(SchemaLayoutError, match="written 2 times"):
        generated(twice)
