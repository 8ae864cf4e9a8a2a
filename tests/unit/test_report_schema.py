"""schema/report.schema.json's enums and docs/how-it-decides.md's table of findings are generated from the registries
(`make schema`), in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_schema import build as report_schema
from report_schema.build import FINDINGS_BEGIN, FINDINGS_END, SchemaLayoutError, enums, generated, with_findings_table

from rightsizer.domain.findings import FINDINGS

SCHEMA_TEXT = report_schema.SCHEMA_PATH.read_text(encoding="utf-8")
HOW_IT_DECIDES_TEXT = report_schema.HOW_IT_DECIDES_PATH.read_text(encoding="utf-8")


def test_the_shipped_schemas_enums_and_findings_table_are_the_registries() -> None:
    assert report_schema.main(["--check"]) == 0
    assert generated(SCHEMA_TEXT) == SCHEMA_TEXT
    assert with_findings_table(HOW_IT_DECIDES_TEXT) == HOW_IT_DECIDES_TEXT


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


def _findings_table(page: str) -> list[str]:
    return page.split(FINDINGS_BEGIN + "\n", 1)[1].split(FINDINGS_END, 1)[0].splitlines()


def test_the_findings_table_is_one_row_per_spec_its_words_and_nothing_else_on_the_page_moves() -> None:
    rows = _findings_table(HOW_IT_DECIDES_TEXT)[2:]
    written = {spec.finding.value: (spec.decided_when, spec.advice) for spec in FINDINGS.values()}
    assert sorted(rows) == sorted(f"| `{value}` | {when} | {advice} |" for value, (when, advice) in written.items())
    assert [row.split("`")[1] for row in rows] == [finding.value for finding in FINDINGS]  # the registry's order
    # A stale row is written back; the hand-written prose around the table is kept as it is.
    stale = HOW_IT_DECIDES_TEXT.replace("| stop (or terminate if nobody claims it);", "| stop it;")
    assert stale != HOW_IT_DECIDES_TEXT
    assert with_findings_table(stale.replace("## The findings", "## Findings")) == HOW_IT_DECIDES_TEXT.replace(
        "## The findings", "## Findings"
    )


def test_the_check_fails_and_says_how_to_fix_a_stale_findings_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "how-it-decides.md"
    row = next(row for row in _findings_table(HOW_IT_DECIDES_TEXT) if row.startswith("| `held_unused` |"))
    stale.write_text(HOW_IT_DECIDES_TEXT.replace(row + "\n", ""), encoding="utf-8")  # a finding without its row
    monkeypatch.setattr(report_schema, "HOW_IT_DECIDES_PATH", stale)

    assert report_schema.main(["--check"]) == 1
    assert f"{stale}'s generated lists are not the registries': run `make schema`" in capsys.readouterr().err
    assert report_schema.main(["--write"]) == 0
    assert stale.read_text(encoding="utf-8") == HOW_IT_DECIDES_TEXT


def test_a_page_without_the_findings_tables_markers_is_an_error_not_a_guess(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unmarked = tmp_path / "how-it-decides.md"
    unmarked.write_text(HOW_IT_DECIDES_TEXT.replace(FINDINGS_END, ""), encoding="utf-8")
    monkeypatch.setattr(report_schema, "HOW_IT_DECIDES_PATH", unmarked)

    with pytest.raises(SchemaLayoutError, match="no <!-- findings:begin"):
        with_findings_table(unmarked.read_text(encoding="utf-8"))
    assert report_schema.main(["--write"]) == 1
    assert "how-it-decides.md: no <!-- findings:begin" in capsys.readouterr().err
    assert FINDINGS_END not in unmarked.read_text(encoding="utf-8")  # nothing written
