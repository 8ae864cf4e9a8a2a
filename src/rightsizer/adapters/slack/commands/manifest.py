"""Rewrites the usage hint of the Slack app manifest from `COMMANDS`:

    python -m rightsizer.adapters.slack.commands.manifest [slack/manifest.yaml]

Only the `usage_hint:` line changes (the file's comments and layout stay); tests check the file is current.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from rightsizer.adapters.slack.commands import usage_hint

MANIFEST = Path("slack/manifest.yaml")
_HINT = re.compile(r"^(?P<indent>\s*)usage_hint: .*$", re.MULTILINE)


def regenerated(text: str) -> str:
    """The manifest `text` with the usage hint `COMMANDS` generates (a JSON string is a YAML string)."""
    if len(_HINT.findall(text)) != 1:
        raise ValueError("the manifest must have exactly one usage_hint line")
    return _HINT.sub(lambda m: f"{m['indent']}usage_hint: {json.dumps(usage_hint())}", text)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else MANIFEST
    text = path.read_text(encoding="utf-8")
    new = regenerated(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
        print(f"{path}: usage_hint rewritten")
    else:
        print(f"{path}: up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
