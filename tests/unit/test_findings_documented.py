"""Every finding is something people can read: a label in its registry, a row in docs/how-it-decides.md saying when
and what to do (written from its spec's `decided_when` and `advice` by `make schema`; test_report_schema.py checks the
table is current)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from rightsizer.domain.findings import FINDINGS, Finding

HOW_IT_DECIDES = Path(__file__).resolve().parents[2] / "docs" / "how-it-decides.md"


def _how_it_decides_rows() -> dict[str, str]:
    text = HOW_IT_DECIDES.read_text(encoding="utf-8")
    section = text.split("\n| finding | when | advice |\n", 1)[1].split("\n\n", 1)[0]  # the findings table
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z_]+)` \|.*$", section, re.MULTILINE)}


@pytest.mark.parametrize("finding", list(Finding))
def test_every_finding_has_a_label(finding: Finding) -> None:
    assert FINDINGS[finding].label, f"{finding} has no label"


@pytest.mark.parametrize("finding", list(Finding))
def test_every_finding_says_when_it_is_decided_and_what_it_advises_in_one_table_cell_each(finding: Finding) -> None:
    spec = FINDINGS[finding]
    for text in (spec.decided_when, spec.advice):
        assert text.strip() == text and text, f"{finding}: an empty or padded cell"
        assert "|" not in text and "\n" not in text, f"{finding}: {text!r} would break its row of the table"


@pytest.mark.parametrize("finding", list(Finding))
def test_every_finding_has_a_row_in_how_it_decides(finding: Finding) -> None:
    rows = _how_it_decides_rows()
    assert finding.value in rows, f"docs/how-it-decides.md has no row for `{finding.value}`"
    assert rows[finding.value].count("|") >= 4  # finding | when | advice |


def test_how_it_decides_names_no_finding_that_does_not_exist() -> None:
    assert set(_how_it_decides_rows()) <= {f.value for f in FINDINGS}


def test_every_limit_has_a_row_in_how_it_decides() -> None:
    """The table of every limit a target must carry names exactly the registry's entries (NVENC and NVDEC, graphics
    and RT cores, EFA, ENA and ENA Express share a row)."""
    from rightsizer.domain.limits.table import LIMITS

    text = HOW_IT_DECIDES.read_text()
    start = text.index("| limit | what the work needs")
    table = itertools.takewhile(lambda line: line.startswith("| "), text[start:].splitlines()[2:])
    rows = [line.split("|")[1].strip() for line in table]
    named = {name.strip() for row in rows for name in row.split(",")}
    assert named == {limit.name for limit in LIMITS}
