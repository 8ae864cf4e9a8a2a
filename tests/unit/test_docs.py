"""README and docs stay true to the repository: the architecture diagram names what template.yaml deploys,
and every relative link points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.test_template import sam

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "agent" / "README.md"]
DIAGRAMMED = ("AWS::Serverless::Function", "AWS::Serverless::StateMachine", "AWS::Serverless::LayerVersion")


def mermaid() -> str:
    (diagram,) = re.findall(r"```mermaid\n(.*?)```", README.read_text(), re.DOTALL)
    return str(diagram)


def test_the_architecture_diagram_names_every_function_and_state_machine() -> None:
    nodes = set(re.findall(r"\b[A-Z][A-Za-z]+\b", mermaid()))
    resources = sam()["Resources"]

    deployed = {name for name, resource in resources.items() if resource["Type"] in DIAGRAMMED}
    assert deployed <= nodes, f"missing from the README diagram: {sorted(deployed - nodes)}"
    named = set(re.findall(r"\b[A-Z][a-z]+[A-Za-z]*?(?:Function|StateMachine|Layer)\b", mermaid()))
    stale = named - set(resources)
    assert not stale, f"the README diagram names what template.yaml no longer has: {sorted(stale)}"


@pytest.mark.parametrize("document", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_relative_links_point_at_files_in_the_repository(document: Path) -> None:
    for target in re.findall(r"\]\(([^)\s]+)\)", document.read_text()):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        path = (document.parent / target.split("#", 1)[0]).resolve()
        assert path.exists(), f"{document.name} links to {target}, which does not exist"


def test_readme_links_the_json_schema_and_names_the_browser_package() -> None:
    text = README.read_text()

    assert "](schema/report.schema.json)" in text
    assert "apt-get install -y chromium" in text
