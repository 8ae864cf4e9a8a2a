"""Every finding is something people can read: a label in its registry, a README row saying when and what to do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rightsizer.domain.findings import FINDINGS, Finding

README = Path(__file__).resolve().parents[2] / "README.md"


def _how_it_decides_rows() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## How it decides", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z_]+)` \|.*$", section, re.MULTILINE)}


@pytest.mark.parametrize("finding", list(Finding))
def test_every_finding_has_a_label(finding: Finding) -> None:
    assert FINDINGS[finding].label, f"{finding} has no label"


@pytest.mark.parametrize("finding", list(Finding))
def test_every_finding_has_a_readme_row(finding: Finding) -> None:
    rows = _how_it_decides_rows()
    assert finding.value in rows, f"README 'How it decides' has no row for `{finding.value}`"
    assert rows[finding.value].count("|") >= 4  # finding | when | advice |


def test_the_readme_names_no_finding_that_does_not_exist() -> None:
    assert set(_how_it_decides_rows()) <= {f.value for f in FINDINGS}
