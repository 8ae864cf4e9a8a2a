"""`make images`: the pictures in docs/images, taken from a fresh `make demo` run's screenshots (demo-output/), with
docs/images/manifest.json saying what they were made from. tests/unit/test_docs.py checks that the pictures are the
ones the manifest lists and that the manifest's inputs (the demo's fleet, the page's and Slack's rendering) are
the repository's now: a change to any of them makes the pictures stale until `make images` runs again.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "demo-output"
IMAGES = ROOT / "docs" / "images"
MANIFEST = IMAGES / "manifest.json"
# docs/images name -> (the demo's screenshot, the height it is cut to: None keeps it whole)
PICTURES: dict[str, tuple[str, int | None]] = {
    "slack-report.png": ("slack-report.png", None),
    "utilisation.png": ("utilisation.png", None),
    "report-page.png": ("report.png", 1800),  # the page's top: summary and the Slack messages
    "report-phone-dark.png": ("report-phone-dark.png", 2400),
    "since-last-time.png": ("since-last-time.png", None),  # what the report opens with: what changed since yesterday
    "by-team.png": ("by-team.png", None),  # showback: each team's spend, waste and net savings
}
# What the pictures show is made from these: the seeded fleet, and how the page and Slack's messages are drawn.
INPUTS = (
    "demo/fleet.py",
    "demo/history.py",
    "demo/sagemaker_fleet.py",
    "src/rightsizer/adapters/html/*.py",
    "src/rightsizer/adapters/html/templates/*",
    "src/rightsizer/adapters/slack/blocks.py",
)


def inputs_digest(root: Path = ROOT) -> str:
    digest = hashlib.sha256()
    for pattern in INPUTS:
        for path in sorted(root.glob(pattern)):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    from PIL import Image

    del argv
    missing = [shot for shot, _ in PICTURES.values() if not (OUTPUT / shot).is_file()]
    if missing:
        print(f"no {', '.join(missing)} in {OUTPUT}: run `make demo` on a machine with Chromium first", file=sys.stderr)
        return 1
    IMAGES.mkdir(parents=True, exist_ok=True)
    listed = {}
    for name, (shot, height) in PICTURES.items():
        with Image.open(OUTPUT / shot) as taken:
            picture = taken.convert("RGB")
        if height is not None and picture.height > height:
            picture = picture.crop((0, 0, picture.width, height))
        picture.save(IMAGES / name, optimize=True)
        listed[name] = file_digest(IMAGES / name)
    MANIFEST.write_text(json.dumps({"inputs": inputs_digest(), "images": listed}, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(listed)} pictures to {IMAGES.relative_to(ROOT)} and {MANIFEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
