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

# Each emoji drawn as a small icon (16 x 16, inline SVG): the page needs no emoji font, which many systems (and headless
# browsers) lack and would show as an empty box; its name stays for screen readers. Colours come from the theme, as
# the charts' do (`c-<key>` sets --c; `f` fills with it, `s` strokes with it, `w`/`sw` fill or stroke with the page's
# background): light and dark alike. A test keeps these keys EMOJI's.
_TILE = '<rect class="c-{} f" x="1" y="1" width="14" height="14" rx="3"/>'  # a coloured square an icon is drawn on
ICONS: Mapping[str, str] = {
    "bar_chart": '<rect class="c-muted s" x="1.5" y="1.5" width="13" height="13" rx="2" stroke-width="1"/>'
    '<rect class="c-risk f" x="3.5" y="8" width="2.2" height="5"/><rect class="c-link f" x="6.9" y="4" width="2.2" '
    'height="9"/><rect class="c-ok f" x="10.3" y="6" width="2.2" height="7"/>',
    "calendar": '<rect class="c-muted s" x="1.5" y="2.5" width="13" height="12" rx="1.5"/>'
    '<rect class="c-risk f" x="1.5" y="2.5" width="13" height="3.5"/>',
    "grey_exclamation": '<path class="c-muted s" d="M8 2v8" stroke-width="2.4" stroke-linecap="round"/>'
    '<circle class="c-muted f" cx="8" cy="13.3" r="1.3"/>',
    "heavy_minus_sign": '<path class="c-fg s" d="M3 8h10" stroke-width="2.6" stroke-linecap="round"/>',
    "hourglass_flowing_sand": '<path class="c-waste s" d="M4 1.5h8M4 14.5h8M5 2v2.5L8 8 5 11.5V14M11 2v2.5L8 8l3 '
    '3.5V14" stroke-width="1.3"/><path class="c-waste f" d="M6 13.6 8 11l2 2.6z"/>',
    "information_source": _TILE.format("link")
    + '<circle class="w" cx="8" cy="4.6" r="1.2"/><path class="sw" d="M8 7v5.5" stroke-width="2"/>',
    "label": '<path class="c-waste f" d="M1.5 8 7 2.5h6.5V9L8 14.5z"/><circle class="w" cx="10.6" cy="5.4" r="1.2"/>',
    "leftwards_arrow_with_hook": _TILE.format("link")
    + '<path class="sw" d="M11.5 4.5V7a2.5 2.5 0 0 1-2.5 2.5H4.5M6.5 7.5l-2 2 2 2" stroke-width="1.6"/>',
    "lock": '<rect class="c-waste f" x="3" y="7" width="10" height="7.5" rx="1.5"/>'
    '<path class="c-muted s" d="M5 7V5a3 3 0 0 1 6 0v2" stroke-width="1.6"/>',
    "no_entry_sign": '<circle class="c-risk s" cx="8" cy="8" r="6.2" stroke-width="1.8"/>'
    '<path class="c-risk s" d="M3.6 12.4 12.4 3.6" stroke-width="1.8"/>',
    "rotating_light": '<path class="c-risk f" d="M3.5 13V9a4.5 4.5 0 0 1 9 0v4z"/>'
    '<rect class="c-muted f" x="2" y="13" width="12" height="2"/>'
    '<path class="c-risk s" d="M8 1v2M2.5 3.5l1.4 1.4M13.5 3.5l-1.4 1.4" stroke-width="1.3"/>',
    "thread": '<path class="c-muted f" d="M2 3h12v7H7l-3 3v-3H2z"/><path class="sw" d="M4.5 6.5h7"/>',
    "warning": '<path class="c-waste f" d="M8 1.5 15 14.5H1z"/><path class="sw" d="M8 6v4.2" stroke-width="1.6"/>'
    '<circle class="w" cx="8" cy="12.3" r=".9"/>',
    "wastebasket": '<path class="c-muted s" d="M3 4h10M6 4V2.5h4V4M4 4l.8 10.5h6.4L12 4" stroke-width="1.4"/>',
    "white_check_mark": _TILE.format("ok") + '<path class="sw" d="M4 8.5 6.5 11 12 5.5" stroke-width="2"/>',
    "x": '<path class="c-risk s" d="M3 3l10 10M13 3 3 13" stroke-width="2.6" stroke-linecap="round"/>',
    "zzz": '<path class="c-link s" d="M2 4h4L2 8h4M7 7h3.5L7 11h3.5M11 10h3l-3 4h3" stroke-width="1.3"/>',
}

_TOKEN = re.compile(r"<([^<>|]+)(?:\|([^<>]+))?>")
_SHORT_CODE = re.compile(r":([a-z0-9_+-]+):")


def emoji(name: str) -> Markup:
    """One emoji as its icon, labelled for screen readers by its name (as Slack does)."""
    return Markup(
        '<span class="emoji" role="img" aria-label="{}"><svg viewBox="0 0 16 16" width="16" height="16" '
        'aria-hidden="true">{}</svg></span>'
    ).format(name.replace("_", " "), Markup(ICONS[name]))


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


def block(node: Mapping[str, Any]) -> Markup:
    kind = node.get("type")
    if kind == "header":
        return Markup('<p class="bk-header">{}</p>').format(_text(node.get("text")))
    if kind == "section":
        body = Markup('<div class="bk-text">{}</div>').format(_text(node.get("text"))) if node.get("text") else ""
        fields = Markup("").join(Markup("<div>{}</div>").format(_text(field)) for field in node.get("fields", []))
        accessory = node.get("accessory") or {}
        button = (
            Markup('<span class="bk-actions">In Slack: {}</span>').format(_text(accessory.get("text")))
            if accessory.get("type") == "button"
            else ""
        )
        grid = Markup('<div class="bk-fields">{}</div>').format(fields) if fields else ""
        return Markup('<div class="bk-section">{}{}{}</div>').format(body, grid, button)
    if kind == "context":
        return Markup('<div class="bk-context">{}</div>').format(
            Markup(" ").join(_text(element) for element in node.get("elements", []))
        )
    if kind == "actions":
        # A static page cannot act: the buttons are named, as what Slack offers there, never drawn as buttons to click.
        names = [_text(e.get("text")) for e in node.get("elements", []) if e.get("type") == "button"]
        return Markup('<p class="bk-actions">In Slack: {}</p>').format(Markup(" · ").join(names))
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
