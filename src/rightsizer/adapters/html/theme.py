"""The page's colours, light and dark (prefers-color-scheme). Every colour that carries information, text or a line
(a GPU's line, a threshold, a bar, a finding's swatch), has at least 4.5:1 contrast against the page's background in
its theme (WCAG 2.2 1.4.3 asks that of text; 1.4.11 asks 3:1 of graphics: the page holds its lines to the text's
standard). Borders and the charts' grid are decoration and lighter. A test computes the ratios.

A chart or a swatch names its colour by key (`s0`..`s7`, `saving`, ...): `colour_class(key)` gives the CSS class
that sets `--c` to that key's colour in the reader's scheme, so one SVG serves both themes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# One key per line of a chart (a GPU's line) or per finding: tab10's order of hues (blue, orange, green, red, purple,
# brown, pink, cyan), darker on the light background and lighter on the dark one.
SERIES = tuple(f"s{n}" for n in range(8))
# Past eight lines (a trn1.32xlarge has 32 NeuronCores) the colours repeat with another dash pattern.
DASHES = ("", "6 3", "2 2", "8 3 2 3")
# Savings bars by where the money goes (services.report.Category).
CATEGORIES = ("saving", "other_owner", "upsize", "none")
# A finding's swatch by what it means (domain.findings.Severity): a risk red, waste amber, right-sized green.
SEVERITIES = ("risk", "waste", "ok", "info")
# The page's own colours an emoji's icon is drawn in, beside the severities' (adapters/html/blocks.ICONS).
ICON_COLOURS = ("link", "muted", "fg")
# What is drawn or written in a colour, and so must stand out from the background.
FOREGROUNDS = ("fg", "muted", "link", "warn", "threshold", *SERIES, *CATEGORIES, *SEVERITIES)

LIGHT: Mapping[str, str] = MappingProxyType(
    {
        "bg": "#ffffff",
        "fg": "#1f2937",
        "muted": "#4b5563",
        "line": "#d1d5db",
        "soft": "#f3f4f6",
        "grid": "#e5e7eb",
        "threshold": "#6b7280",
        "link": "#1d4ed8",
        "warn": "#92400e",
        "mention-bg": "#e8f5fa",
        "mention": "#0b5394",
        "s0": "#1d4ed8",
        "s1": "#c2410c",
        "s2": "#15803d",
        "s3": "#b91c1c",
        "s4": "#7e22ce",
        "s5": "#92400e",
        "s6": "#be185d",
        "s7": "#0e7490",
        "saving": "#15803d",
        "other_owner": "#b45309",
        "upsize": "#b91c1c",
        "none": "#4b5563",
        "risk": "#b91c1c",
        "waste": "#b45309",
        "ok": "#15803d",
        "info": "#4b5563",
    }
)
DARK: Mapping[str, str] = MappingProxyType(
    {
        "bg": "#111827",
        "fg": "#e5e7eb",
        "muted": "#a1a9b6",
        "line": "#374151",
        "soft": "#1f2937",
        "grid": "#273244",
        "threshold": "#9ca3af",
        "link": "#93c5fd",
        "warn": "#fcd34d",
        "mention-bg": "#1e3a5f",
        "mention": "#bfdbfe",
        "s0": "#60a5fa",
        "s1": "#fb923c",
        "s2": "#4ade80",
        "s3": "#f87171",
        "s4": "#c084fc",
        "s5": "#fbbf24",
        "s6": "#f472b6",
        "s7": "#22d3ee",
        "saving": "#4ade80",
        "other_owner": "#fbbf24",
        "upsize": "#f87171",
        "none": "#9ca3af",
        "risk": "#f87171",
        "waste": "#fbbf24",
        "ok": "#4ade80",
        "info": "#9ca3af",
    }
)


def luminance(color: str) -> float:
    """WCAG relative luminance of a #rrggbb colour."""
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two #rrggbb colours, 1 to 21."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def css_variables(theme: Mapping[str, str]) -> str:
    return ";".join(f"--{name}:{value}" for name, value in theme.items())


def colour_class(key: str) -> str:
    """The CSS class that gives an element (a line, a bar, a swatch) the colour `key` as `--c`."""
    return f"c-{key}"


def colour_rules() -> str:
    """`.c-<key>{--c:var(--<key>)}` for every keyed colour."""
    return "".join(
        f".{colour_class(key)}{{--c:var(--{key})}}" for key in (*SERIES, *CATEGORIES, *SEVERITIES, *ICON_COLOURS)
    )


def series_style(n: int) -> tuple[str, str]:
    """The colour key and dash pattern of the n-th line of a chart."""
    return SERIES[n % len(SERIES)], DASHES[(n // len(SERIES)) % len(DASHES)]
