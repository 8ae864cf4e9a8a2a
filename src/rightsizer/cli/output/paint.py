"""Colour: ANSI SGR codes, or none (--color, NO_COLOR, TERM=dumb decide which: document.py's `wants_color`)."""

from __future__ import annotations

from dataclasses import dataclass

ANSI = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


@dataclass(frozen=True)
class Paint:
    """ANSI SGR colour, or none: `paint("green", text)` wraps text (already padded) when on."""

    on: bool = False

    def __call__(self, style: str, text: str) -> str:
        if not self.on or not style or not text.strip():
            return text
        codes = ";".join(ANSI[part] for part in style.split("+"))
        return f"\x1b[{codes}m{text}\x1b[0m"


NO_PAINT = Paint()  # no colour
