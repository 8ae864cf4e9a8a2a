"""Print Block Kit messages readably in a terminal (what a person would see in the channel)."""

from __future__ import annotations

import re
import textwrap
from typing import Any

_LINK = re.compile(r"<([^|>]+)\|([^>]+)>")


def _plain(text: str) -> str:
    text = _LINK.sub(r"\2", text)  # <url|label> -> label
    # Bold markers go, except inside `code`, where Slack shows an asterisk as it is (cron expressions).
    parts = text.split("`")
    text = "`".join(
        part if inside else part.replace("*", "") for inside, part in ((i % 2 == 1, p) for i, p in enumerate(parts))
    )
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _text(node: Any) -> str:
    if isinstance(node, dict):
        return _plain(str(node.get("text", "")))
    return ""


def render_blocks(blocks: list[dict[str, Any]], indent: str = "  ", width: int = 100) -> list[str]:
    lines: list[str] = []

    def wrap(text: str, prefix: str = "") -> None:
        for paragraph in text.splitlines() or [""]:
            lines.extend(
                textwrap.wrap(
                    paragraph, width, initial_indent=indent + prefix, subsequent_indent=indent + " " * len(prefix)
                )
                or [indent]
            )

    for block in blocks:
        kind = block.get("type")
        if kind == "header":
            title = _text(block.get("text"))
            lines.extend([indent + title, indent + "=" * len(title)])
        elif kind == "section":
            if block.get("text"):
                wrap(_text(block["text"]))
            for field in block.get("fields", []):
                wrap(_text(field), "- ")
            accessory = block.get("accessory")
            if accessory and accessory.get("type") == "button":
                lines.append(f"{indent}  [{_text(accessory.get('text'))}]")
        elif kind == "context":
            wrap(" ".join(_text(element) for element in block.get("elements", [])), "· ")
        elif kind == "actions":
            buttons = [f"[{_text(e.get('text'))}]" for e in block.get("elements", []) if e.get("type") == "button"]
            lines.append(indent + "  " + " ".join(buttons))
        elif kind == "divider":
            lines.append(indent + "-" * 40)
    return lines
