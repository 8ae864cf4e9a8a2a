"""Headless Chromium through Playwright, using the OS package's browser (`apt-get install chromium`):
`playwright install` downloads its own build, which this project cannot rely on. One definition of the
launch, shared by `make demo` (the report's screenshots) and the browser test."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
# Headless, as root in a container, with nothing that phones home: the closed network refuses those
# connections, many at a time, and a start would wait on them.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
)
WHY_MISSING = "no Chromium: install the OS package `chromium` (Debian/Ubuntu: apt-get install -y chromium)"


def chromium_path() -> str | None:
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).is_file():
            return candidate
    return shutil.which("chromium")


@contextmanager
def chromium_page(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A fresh page in the system Chromium. Raises RuntimeError (WHY_MISSING) when there is none."""
    executable = chromium_path()
    if executable is None:
        raise RuntimeError(WHY_MISSING)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            yield page
        finally:
            browser.close()


def screenshot(html: Path, full_page: Path, slack_part: Path | None = None) -> None:
    """PNGs of the report page (whole) and, optionally, of its Slack section alone."""
    with chromium_page() as page:
        page.goto(html.resolve().as_uri())
        page.screenshot(path=str(full_page), full_page=True)
        if slack_part is not None:
            page.locator("#slack").screenshot(path=str(slack_part))
