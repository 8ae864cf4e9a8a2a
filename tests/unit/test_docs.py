"""README and docs stay true to the repository: the README is a front page that links every docs page, the
architecture diagram names what template.yaml deploys, its layout every module of the package in the order of the
import layers, and every relative link (and its anchor) points at a file and a heading that exist."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from tests.unit.test_template import sam

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
DOCS = [README, *PAGES, *sorted((ROOT / "agent").rglob("README.md"))]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "src" / "rightsizer"
DIAGRAMMED = ("AWS::Serverless::Function", "AWS::Serverless::StateMachine", "AWS::Serverless::LayerVersion")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def mermaid() -> str:
    (diagram,) = re.findall(r"```mermaid\n(.*?)```", ARCHITECTURE.read_text(), re.DOTALL)
    return str(diagram)


def links(document: Path) -> list[str]:
    """The link targets of `document`, code blocks left out."""
    return re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", document.read_text(encoding="utf-8")))


def anchors(document: Path) -> set[str]:
    """The anchors GitHub gives `document`'s headings: lower case, punctuation dropped, spaces as hyphens, a repeated
    heading numbered (-1, -2, ...)."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *#* *$", FENCE.sub("", document.read_text(encoding="utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


def test_the_readme_is_a_front_page_under_12_kib_with_the_two_commands_at_the_top() -> None:
    data = README.read_bytes()
    assert len(data) < 12 * 1024, f"README.md is {len(data):,} bytes: move detail to a docs/ page"
    first_block = FENCE.search(data.decode("utf-8"))
    assert first_block and data.decode("utf-8").index(first_block.group(0)) < 40, "the commands come first"
    assert "make demo" in first_block.group(0) and "make test" in first_block.group(0)


def test_the_readme_links_every_docs_page() -> None:
    linked = {(ROOT / target.split("#", 1)[0]).resolve() for target in links(README) if "://" not in target}
    missing = [page.relative_to(ROOT).as_posix() for page in PAGES if page.resolve() not in linked]
    assert not missing, f"README.md does not link {missing}"


def test_the_architecture_diagram_names_every_function_and_state_machine() -> None:
    nodes = set(re.findall(r"\b[A-Z][A-Za-z]+\b", mermaid()))
    resources = sam()["Resources"]

    deployed = {name for name, resource in resources.items() if resource["Type"] in DIAGRAMMED}
    assert deployed <= nodes, f"missing from the diagram in docs/architecture.md: {sorted(deployed - nodes)}"
    named = set(re.findall(r"\b[A-Z][a-z]+[A-Za-z]*?(?:Function|StateMachine|Layer)\b", mermaid()))
    stale = named - set(resources)
    assert not stale, f"the diagram in docs/architecture.md names what template.yaml no longer has: {sorted(stale)}"


def layout() -> list[str]:
    """The entries under src/rightsizer/ in docs/architecture.md's layout, in order (`cli/verbs/`, `adapters/aws/`)."""
    (block,) = re.findall(r"^## Layout\n.*?```\n(.*?)```", ARCHITECTURE.read_text(), re.DOTALL | re.MULTILINE)
    return [line.split()[0] for line in block.splitlines() if line.startswith("  ")]


def entries(folder: Path, prefix: str = "") -> set[str]:
    return {
        prefix + path.name + ("/" if path.is_dir() else "")
        for path in folder.iterdir()
        if not path.name.startswith(("_", ".")) and (path.is_dir() or path.suffix == ".py")
    }


def test_the_layout_names_every_module_of_the_package_in_the_order_of_the_import_layers() -> None:
    named = layout()
    nested = ("adapters", "bootstrap", "cli")
    present = entries(PACKAGE) - {f"{folder}/" for folder in nested}
    present |= {entry for folder in nested for entry in entries(PACKAGE / folder, f"{folder}/")}
    assert sorted(named) == sorted(present), "docs/architecture.md's layout and src/rightsizer differ"

    depths = [layer_depths("layers")[entry.split("/")[0].removesuffix(".py")] for entry in named]
    assert depths == sorted(depths), "the layout lists the package outermost layer first, as the layers contract"
    inside = [
        layer_depths("cli")[entry.split("/")[1].removesuffix(".py")] for entry in named if entry.startswith("cli/")
    ]
    assert inside == sorted(inside), "the layout lists the CLI's modules outermost layer first, as the cli contract"


def layer_depths(contract_id: str) -> dict[str, int]:
    """Each module of a layers contract in pyproject.toml and its depth (0: the outermost layer)."""
    (layers,) = (
        contract["layers"]
        for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
        if contract["id"] == contract_id
    )
    return {name.strip(): depth for depth, layer in enumerate(layers) for name in re.split(r"[:|]", layer)}


@pytest.mark.parametrize("document", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_relative_links_point_at_files_and_headings_in_the_repository(document: Path) -> None:
    for target in links(document):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        path = (document.parent / file).resolve() if file else document
        assert path.exists(), f"{document.name} links to {target}, which does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{document.name} links to {target}: {path.name} has no such heading"


def test_anchors_are_the_ones_github_makes() -> None:
    assert "2d-sagemaker-an-endpoint-variants-update-a-notebook-instances-stop" in anchors(
        ROOT / "docs" / "resize-workflow.md"
    )
    assert "4-roll-the-cloudwatch-agent-out-with-ssm-state-manager" in anchors(ROOT / "docs" / "multi-account.md")


def test_readme_links_the_json_schema_and_says_which_browser_works_where() -> None:
    text = README.read_text()

    assert "](schema/report.schema.json)" in text
    assert "apt-get install -y chromium" in text, "Debian"
    assert "Ubuntu's `chromium` is a snap" in text and "Google Chrome's .deb" in text, "Ubuntu"
    assert "macOS: Google Chrome" in text and "CHROMIUM=" in text


def test_the_pictures_in_docs_are_the_demos_and_current() -> None:
    from demo import images

    manifest = json.loads(images.MANIFEST.read_text())
    stale = "stale: run `make images` (the demo's fleet, the report page or the Slack messages changed)"
    assert manifest["inputs"] == images.inputs_digest(), stale
    present = {path.name for path in images.IMAGES.glob("*.png")}
    assert present == set(manifest["images"]) == set(images.PICTURES), "only pictures `make images` writes"
    for name, digest in manifest["images"].items():
        assert images.file_digest(images.IMAGES / name) == digest, f"{name} was changed by hand: run `make images`"
    linked = {name for document in DOCS for name in re.findall(r"images/([\w.-]+\.png)\)", document.read_text())}
    assert linked == present, "every picture is shown somewhere, and only these"


def test_the_inputs_digest_follows_what_the_pictures_show(tmp_path: Path) -> None:
    from demo import images

    for pattern in images.INPUTS:
        for path in ROOT.glob(pattern):
            copy = tmp_path / path.relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(path.read_bytes())
    before = images.inputs_digest(tmp_path)
    fleet = tmp_path / "demo" / "fleet.py"
    fleet.write_text(fleet.read_text() + "\n# one more host\n")

    assert before == images.inputs_digest(ROOT) and images.inputs_digest(tmp_path) != before


def test_the_docs_count_the_demos_fleet_as_it_is() -> None:
    from demo.fleet import fleet
    from demo.sagemaker_fleet import ENDPOINTS, NOTEBOOKS

    hosts, sagemaker = len(fleet()), len(ENDPOINTS) + len(NOTEBOOKS)
    readme, demo = README.read_text(), (ROOT / "docs" / "demo.md").read_text()

    assert f"{hosts} seeded hosts, {sagemaker} SageMaker resources" in readme
    assert f"seeds\n{hosts} instances" in demo and f"and {sagemaker} SageMaker resources:" in demo
