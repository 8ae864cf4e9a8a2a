"""Headless Chromium for the report page: `make demo`'s screenshots and the browser test
(tests/integration/test_report_page.py), with one definition of where the browser is and how it starts.

The demo needs no Playwright: `chromium --headless --screenshot` draws the page, and Pillow (a runtime dependency)
trims the empty canvas below it. The browser test drives the same browser through Playwright (a test dependency),
to measure the page at a desktop's and a phone's width.

Which browser: $CHROMIUM if set, else the OS package (Debian: `apt-get install -y chromium`), Google Chrome (Ubuntu's
`chromium-browser` is a snap wrapper that a confined snap cannot serve: install Google Chrome's .deb instead; macOS:
Google Chrome or Chromium in /Applications).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = (
    "/usr/bin/chromium",
    "/usr/bin/google-chrome-stable",
    "/usr/bin/google-chrome",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)
ON_PATH = ("chromium", "google-chrome-stable", "google-chrome", "chromium-browser")
# As root in a container, with nothing that phones home: the closed network refuses those connections, many at a
# time, and a start would wait on them. (Playwright adds --headless.)
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
WHY_MISSING = (
    "no Chromium: install the OS package `chromium` (Debian: apt-get install -y chromium), Google Chrome (Ubuntu: "
    "its .deb from google.com/chrome, as Ubuntu's chromium is a snap; macOS: the app in /Applications), or set "
    "CHROMIUM to the browser's path"
)
# The widths the page is checked and pictured at: a desktop and a phone (iPhone 12 to 15: 390 CSS px).
DESKTOP, PHONE = 1280, 390
CANVAS_HEIGHT = 16_384  # taller than most pages (Chromium draws up to 16,384 px): trimmed to what was drawn


def _snap(path: str) -> bool:
    """Ubuntu's chromium-browser and /snap/bin/chromium: a snap, which cannot read the repository's files from its
    confinement (nor be driven over a pipe)."""
    resolved = os.path.realpath(path)
    if resolved.startswith("/snap/"):
        return True
    try:
        head = Path(resolved).read_bytes()[:4096]
    except OSError:
        return False
    return head.startswith(b"#!") and b"snap" in head


def chromium_path() -> str | None:
    chosen = os.environ.get("CHROMIUM", "").strip()
    if chosen:
        return chosen if Path(chosen).is_file() else None
    found = [c for c in CHROMIUM_CANDIDATES if Path(c).is_file()]
    found += [p for name in ON_PATH if (p := shutil.which(name))]
    return next((path for path in found if not _snap(path)), None)


@contextmanager
def chromium() -> Iterator[Any]:
    """The browser, launched headless through Playwright (a Playwright Browser: tests only). Raises RuntimeError
    (WHY_MISSING) when there is none."""
    executable = chromium_path()
    if executable is None:
        raise RuntimeError(WHY_MISSING)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Any, width: int, *, dark: bool = False, height: int = 900) -> Any:
    """A page `width` CSS pixels wide, in the light or dark colour scheme (prefers-color-scheme)."""
    return browser.new_page(viewport={"width": width, "height": height}, color_scheme="dark" if dark else "light")


def headless_command(executable: str, page: str, png: Path, width: int, *, dark: bool = False) -> list[str]:
    """`chromium --headless --screenshot`: the page drawn on a `width` x CANVAS_HEIGHT canvas."""
    scheme = ["--force-dark-mode", "--blink-settings=preferredColorScheme=0"] if dark else []
    return [
        executable,
        "--headless",
        *CHROMIUM_ARGS,
        "--hide-scrollbars",
        *scheme,
        f"--window-size={width},{CANVAS_HEIGHT}",
        f"--screenshot={png}",
        page,
    ]


def trim(png: Path, margin: int = 16) -> None:
    """Cut the canvas below the page: rows the colour of the bottom-left pixel, up to `margin` of them kept."""
    from PIL import Image, ImageChops

    with Image.open(png) as drawn:
        image = drawn.convert("RGB")
    background = Image.new("RGB", image.size, image.getpixel((0, image.height - 1)))
    box = ImageChops.difference(image, background).getbbox()
    if box is not None:
        image.crop((0, 0, image.width, min(image.height, box[3] + margin))).save(png, optimize=True)


def screenshot(executable: str, page: str, png: Path, width: int, *, dark: bool = False) -> Path:
    with tempfile.TemporaryDirectory(prefix="rightsizer-chromium-") as profile:
        command = [*headless_command(executable, page, png, width, dark=dark), f"--user-data-dir={profile}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or not png.is_file():
        raise RuntimeError(f"{Path(executable).name} drew no screenshot: {done.stderr.strip()[-300:]}")
    trim(png)
    return png


SHOTS: Sequence[tuple[str, int, bool]] = (
    ("report.png", DESKTOP, False),
    ("report-phone.png", PHONE, False),
    ("report-phone-dark.png", PHONE, True),
)


def section_only(page_html: str, marker: str) -> str:
    """The report page with only the <section> whose opening tag holds `marker` (the Slack messages, one host's
    card), for a picture of its own."""
    at = page_html.find(marker)
    if at < 0:
        raise ValueError(f"the page has no section with {marker!r}")
    start = page_html.rindex("<section", 0, at + len("<section"))  # the marker may open the section itself
    end = page_html.index("</section>", at) + len("</section>")
    head = page_html.split("<body>", 1)[0]
    return f"{head}<body>\n<main>\n{page_html[start:end]}\n</main>\n</body>\n</html>\n"


def screenshots(html: Path, out: Path, parts: Mapping[str, Path] | None = None) -> list[Path]:
    """PNGs of the report page on a desktop, on a phone, and on a phone in the dark scheme, and of each of `parts`
    (picture name -> a page of one section) on a desktop. Returns the files written; RuntimeError when there is no
    browser."""
    executable = chromium_path()
    if executable is None:
        raise RuntimeError(WHY_MISSING)
    written = [screenshot(executable, html.resolve().as_uri(), out / name, w, dark=d) for name, w, d in SHOTS]
    for name, part in (parts or {}).items():
        written.append(screenshot(executable, part.resolve().as_uri(), out / name, DESKTOP))
    return written
