"""Slack Block Kit messages as HTML, for the page's "In Slack" section: mrkdwn (links, mentions, *bold*, _italic_,
`code`, ~strike~) and the bot's emoji short codes shown as Slack shows them (the emoji, never `:warning:` as text).
Everything from the report is escaped; control, bidi and zero-width characters show as visible escapes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from rightsizer.services.formatting import printable

# Every short code the bot writes (a test scans the source for them), as the emoji Slack shows; VS16 (U+FE0F)
# asks for the emoji presentation where the code point also has a text one.
EMOJI: Mapping[str, str] = {
    "bar_chart": "\U0001f4ca",
    "calendar": "\U0001f4c6",
    "grey_exclamation": "\u2755",
    "heavy_minus_sign": "\u2796",
    "hourglass_flowing_sand": "\u23f3",
    "information_source": "\u2139\ufe0f",
    "label": "\U0001f3f7\ufe0f",
    "leftwards_arrow_with_hook": "\u21a9\ufe0f",
    "lock": "\U0001f512",
    "no_entry_sign": "\U0001f6ab",
    "rotating_light": "\U0001f6a8",
    "thread": "\U0001f9f5",
    "warning": "\u26a0\ufe0f",
    "wastebasket": "\U0001f5d1\ufe0f",
    "white_check_mark": "\u2705",
    "x": "\u274c",
    "zzz": "\U0001f4a4",
}

_TOKEN = re.compile(r"<([^<>|]+)(?:\|([^<>]+))?>")
_SHORT_CODE = re.compile(r":([a-z0-9_+-]+):")


def emoji(name: str) -> Markup:
    """One emoji, labelled for screen readers by its name (as Slack does)."""
    return Markup('<span class="emoji" role="img" aria-label="{}">{}</span>').format(
        name.replace("_", " "), EMOJI[name]
    )


def _styled(safe: str) -> str:
    """Bold, italic, strike and emoji in already escaped text outside code."""
    safe = re.sub(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])", r"<b>\1</b>", safe)
    safe = re.sub(r"(?<![\w_])_([^_\n]+)_(?![\w_])", r"<i>\1</i>", safe)
    safe = re.sub(r"(?<![\w~])~([^~\n]+)~(?![\w~])", r"<s>\1</s>", safe)
    # Only names Slack knows become emoji: "08:00-19:00" stays as it is.
    return _SHORT_CODE.sub(lambda m: str(emoji(m.group(1))) if m.group(1) in EMOJI else m.group(0), safe)


def _inline(text: str) -> Markup:
    # Slack escapes &, < and > in mrkdwn; undo that, then escape for HTML once. Inside `code` nothing is styled.
    safe = str(escape(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")))
    parts = re.split(r"`([^`]+)`", safe)
    return Markup("".join(f"<code>{part}</code>" if n % 2 else _styled(part) for n, part in enumerate(parts)))


def mrkdwn(text: str) -> Markup:
    """Slack's mrkdwn as safe HTML. Line breaks are the message's own."""
    text = printable(text, newlines=True)
    parts: list[Markup] = []
    last = 0
    for match in _TOKEN.finditer(text):
        parts.append(_inline(text[last : match.start()]))
        target, label = match.group(1), match.group(2)
        if target.startswith(("@", "#", "!")):
            parts.append(Markup('<span class="mention">{}</span>').format(label or target))
        elif target.startswith(("https://", "http://", "mailto:")):
            parts.append(Markup('<a href="{}">{}</a>').format(target, label or target))
        else:  # not a link Slack would follow: its label as text
            parts.append(escape(label or target))
        last = match.end()
    parts.append(_inline(text[last:]))
    return Markup("").join(parts).replace("\n", Markup("<br>"))


def _text(node: Mapping[str, Any] | None) -> Markup:
    if not node:
        return Markup("")
    raw = str(node.get("text", ""))
    return mrkdwn(raw) if node.get("type") == "mrkdwn" else escape(printable(raw))


def _button(element: Mapping[str, Any]) -> Markup:
    style = str(element.get("style", ""))
    css = f"bk-button {style}" if style in ("primary", "danger") else "bk-button"
    return Markup('<span class="{}">{}</span>').format(css, _text(element.get("text")))


def block(node: Mapping[str, Any]) -> Markup:
    kind = node.get("type")
    if kind == "header":
        return Markup('<p class="bk-header">{}</p>').format(_text(node.get("text")))
    if kind == "section":
        body = Markup('<div class="bk-text">{}</div>').format(_text(node.get("text"))) if node.get("text") else ""
        fields = Markup("").join(Markup("<div>{}</div>").format(_text(field)) for field in node.get("fields", []))
        accessory = node.get("accessory") or {}
        button = _button(accessory) if accessory.get("type") == "button" else ""
        grid = Markup('<div class="bk-fields">{}</div>').format(fields) if fields else ""
        return Markup('<div class="bk-section">{}{}{}</div>').format(body, grid, button)
    if kind == "context":
        return Markup('<div class="bk-context">{}</div>').format(
            Markup(" ").join(_text(element) for element in node.get("elements", []))
        )
    if kind == "actions":
        buttons = Markup("").join(_button(e) for e in node.get("elements", []) if e.get("type") == "button")
        return Markup('<div class="bk-actions">{}</div>').format(buttons)
    if kind == "divider":
        return Markup("<hr>")
    return Markup("")


def message(node: Mapping[str, Any], *, reply: bool | None = None) -> Markup:
    """One posted message (chat.postMessage's arguments: `blocks`; a reply in a thread has `thread_ts`, unless
    `reply` says otherwise)."""
    in_thread = bool(node.get("thread_ts")) if reply is None else reply
    blocks: Sequence[Mapping[str, Any]] = node.get("blocks") or []
    return Markup(
        '<article class="bk-message{}"><p class="bk-author">GPU Rightsizer <span class="app">APP</span></p>{}</article>'
    ).format(" reply" if in_thread else "", Markup("").join(block(b) for b in blocks))
