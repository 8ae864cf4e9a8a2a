"""Progress on stderr: rich's bars on a terminal (with the `cli` extra), one line per stage elsewhere, nothing with
--no-progress; every bar finishes.
"""

from __future__ import annotations

from typing import Any, TextIO

from rightsizer.cli.output.document import isatty
from rightsizer.services.formatting import printable
from rightsizer.settings import Terminal


class StageLines:
    """Without a terminal (or without rich): one line per stage, `rightsizer: <stage>...`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def stage(self, label: str, total: int) -> None:
        print(f"rightsizer: {label}...", file=self._stream, flush=True)

    def advance(self, steps: int = 1) -> None:
        return None

    def warn(self, message: str) -> None:
        return None  # warnings travel in the report: stderr at the end, and the JSON's "warnings"

    def close(self) -> None:
        return None


class RichProgress:
    """On a terminal: rich's progress display, one bar per stage. A stage is complete when the next one starts, and
    the last when the run ends: every bar finishes, whatever the number of steps the stage announced."""

    def __init__(self, stream: TextIO, *, color: bool) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=stream, no_color=not color, highlight=False)
        self._progress = Progress(
            TextColumn("{task.description:<36}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._task: Any = None
        self._progress.start()

    def stage(self, label: str, total: int) -> None:
        self._finish()
        self._task = self._progress.add_task(printable(label), total=max(total, 1))

    def advance(self, steps: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, steps)

    def warn(self, message: str) -> None:
        return None

    def _finish(self) -> None:
        if self._task is not None:
            total = self._progress.tasks[-1].total or 1
            self._progress.update(self._task, completed=total)
            self._task = None

    def close(self) -> None:
        self._finish()
        self._progress.stop()


class Silent(StageLines):
    """--no-progress."""

    def stage(self, label: str, total: int) -> None:
        return None


def progress(stream: TextIO, *, enabled: bool, color: bool = True) -> StageLines | RichProgress:
    """The progress display of one run: rich's bars on a terminal (with the `cli` extra), stage lines elsewhere."""
    if not enabled:
        return Silent(stream)
    if isatty(stream):
        try:
            return RichProgress(stream, color=color and not Terminal.from_env().no_color)
        except ImportError:
            pass
    return StageLines(stream)
