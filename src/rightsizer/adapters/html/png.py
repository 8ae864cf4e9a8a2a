"""The savings chart as a PNG for the daily Slack report (Slack shows images, not SVG), drawn with Pillow from the
same rows as the page's SVG chart, and the alt text that says what it shows. Pillow's wheels carry FreeType and a
font (`ImageFont.load_default(size)`): nothing to install on Lambda. That font draws ASCII and little else, so text
is reduced to the characters it draws (`drawable`): never a missing-glyph box."""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from rightsizer.adapters.html import svg
from rightsizer.adapters.html.theme import LIGHT
from rightsizer.services.formatting import printable

WIDTH = 1200
ROW = 64
TOP = 96
MARGIN = 32
ROWS = 10  # bars in the picture; the page has the rest
LEGEND = 80  # room under the bars for what their colours mean
BACKGROUND, TEXT = LIGHT["bg"], LIGHT["fg"]
REPLACEMENTS = {"→": "->", "…": "...", "–": "-", "—": "-", "·": "-", "‘": "'", "’": "'", "“": '"', "”": '"'}


@cache
def _font(size: int) -> Any:
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


@cache
def has_glyph(char: str) -> bool:
    """Whether the bundled font draws `char` (a missing one is drawn as the font's .notdef box)."""
    if char == " ":
        return True
    font = _font(24)
    notdef = font.getmask("\U0010fffd")
    mask = font.getmask(char)
    return mask.size != notdef.size or bytes(mask) != bytes(notdef)


def drawable(text: str) -> str:
    """`text` in the characters the bundled font draws: typographic marks as their ASCII forms, accented letters
    without their accents (é -> e), anything else "?" (a host's Name tag may be in any script)."""
    return "".join(_drawable_char(char) for char in text)


def _drawable_char(char: str) -> str:
    shown = REPLACEMENTS.get(char, char)
    if len(shown) == 1 and not has_glyph(shown):
        base = "".join(c for c in unicodedata.normalize("NFKD", shown) if not unicodedata.combining(c))
        shown = base if base and all(has_glyph(c) for c in base) else "?"
    return shown if shown.isprintable() else "?"


def savings_png(recommendations: Sequence[Mapping[str, Any]], limit: int = ROWS) -> bytes | None:
    """The first `limit` hosts whose advice changes the bill, as horizontal bars (net of reservations, coloured by
    where the money goes, as on the page); None when there are none."""
    from PIL import Image, ImageDraw

    rows = svg.savings_rows(recommendations)[:limit]
    if not rows:
        return None
    title_font, label_font = _font(34), _font(24)
    height = TOP + ROW * len(rows) + LEGEND + MARGIN
    image = Image.new("RGB", (WIDTH, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, 24), "Savings by host, per month (net of reservations)", fill=TEXT, font=title_font)
    widest = max(abs(svg.net(r) or 0.0) for r in rows) or 1.0
    bar_max = WIDTH - 2 * MARGIN - 220
    for n, rec in enumerate(rows):
        y = TOP + n * ROW
        amount = svg.net(rec) or 0.0
        length = max(3, round(bar_max * abs(amount) / widest))
        category = str(rec.get("category"))
        colour = LIGHT[category] if category in ("saving", "other_owner", "upsize") else LIGHT["none"]
        draw.text((MARGIN, y), drawable(svg.shorten(svg.host_label(rec), 80)), fill=TEXT, font=label_font)
        draw.rounded_rectangle((MARGIN, y + 30, MARGIN + length, y + 52), radius=4, fill=colour)
        said = f"{svg.money(amount)}/mo" if amount >= 0 else f"costs {svg.money(-amount)}/mo more"
        draw.text((MARGIN + length + 10, y + 27), said, fill=TEXT, font=label_font)
    # What the colours mean, as on the page: where the money goes in the totals.
    x, y = MARGIN, TOP + ROW * len(rows) + 8
    for key, meaning in svg.CATEGORY_LEGEND:
        draw.rounded_rectangle((x, y + 4, x + 22, y + 26), radius=4, fill=LIGHT[key])
        words = drawable(meaning)
        draw.text((x + 30, y), words, fill=TEXT, font=label_font)
        x += 30 + int(draw.textlength(words, font=label_font)) + 36
        if x > WIDTH - 300:  # the next one on a line of its own
            x, y = MARGIN, y + 36
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def alt_text(document: Mapping[str, Any], limit: int = 3) -> str:
    """What the picture shows, for people who cannot see it: the top savings by name, and the totals. At most
    1000 characters (Slack's limit for a file's alt text)."""
    rows = svg.savings_rows(document["recommendations"])
    totals = document["totals"]
    if not rows:
        return "No host's advice changes the bill: no savings chart."
    top = "; ".join(f"{svg.host_label(rec)} {svg.money(svg.net(rec))}" for rec in rows[:limit])
    text = (
        f"Bar chart of monthly savings by host, net of reservations: the first {min(len(rows), ROWS)} of "
        f"{len(rows)} host(s) whose advice changes the bill. Largest: {top}. In all "
        f"{svg.money(totals.get('monthly_savings_net_usd', totals['monthly_savings_usd']))}/month can be saved net "
        f"({svg.money(totals['monthly_savings_usd'])} at list price)."
    )
    text = printable(text)
    return text if len(text) <= 1000 else text[:999] + "…"
