"""The AWS CLI's output habits, for every `rightsizer` verb: `--output json|text|table|yaml`, `--query` (a JMESPath
expression over the JSON document), `--color on|off|auto` beside NO_COLOR (https://no-color.org), and a progress
display on stderr that finishes.

`text` follows the AWS CLI's text output: a scalar on its own line, a list of scalars on one tab-separated line, a
list of objects one line per object (their scalar values, keys sorted), nested lists and objects on lines of their
own led by the key in capitals. `table` is each verb's table for people; after `--query` it is a plain table of
the query's result. Nothing here reads AWS; the CLI's composition is in cli.py and cli_commands.py.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from rightsizer.services.formatting import printable
from rightsizer.settings import Terminal

OUTPUTS = ("json", "text", "table", "yaml")
TABLES = ("table", "wide")  # a report's table, and kubectl's `-o wide`: every column, every value whole
COLORS = ("on", "off", "auto")
CLI_EXTRA = "pip install 'gpu-rightsizer[cli]'"  # pyproject.toml's optional dependency `cli`


class UsageError(Exception):
    """A malformed command line or configuration: reported as one line, exit 2."""


REPORT_DOCUMENT = "a report's: schema/report.schema.json"
REPORT_QUERY = "recommendations[?finding=='idle'].[instance_id, monthly_savings_usd]"


def add_output_options(
    parser: argparse.ArgumentParser,
    outputs: Sequence[str] = OUTPUTS,
    table: str = "",
    document: str = REPORT_DOCUMENT,
    query: str = REPORT_QUERY,
) -> None:
    """--output, --query and --color, as the AWS CLI spells them. `table`: what the verb's table shows; `document`:
    what its JSON is; `query`: an example of --query on it."""
    listed = ", ".join(outputs)
    parser.add_argument(
        "--output",
        choices=outputs,
        default=None,
        help=f"{listed} (default table{': ' + table if table else ''}); json is the document --query reads "
        f"({document}), text its tab-separated lines like the AWS CLI's, yaml the same document in YAML",
    )
    parser.add_argument(
        "--query",
        metavar="JMESPATH",
        help="a JMESPath expression (https://jmespath.org) applied to the JSON document before it is printed, "
        f'e.g. "{query}"',
    )
    parser.add_argument(
        "--color",
        choices=COLORS,
        default="auto",
        help="colour the table: on, off, or auto (default: on a terminal unless NO_COLOR is set or TERM=dumb)",
    )


# ---------------------------------------------------------------------------------------------
# --query


def compile_query(expression: str) -> Any:
    """The parsed JMESPath expression; a UsageError of one line when it does not parse."""
    import jmespath
    from jmespath import exceptions

    try:
        return jmespath.compile(expression)
    except exceptions.LexerError as error:
        where = f" at column {error.lex_position}" if error.lex_position is not None else ""
        raise UsageError(f"bad --query {expression!r}: {_first_line(error.message)}{where}") from None
    except exceptions.ParseError as error:
        raise UsageError(
            f"bad --query {expression!r}: {_first_line(error.msg)} at column {error.lex_position} "
            f"(found {error.token_type} {error.token_value!r})"
        ) from None
    except exceptions.JMESPathError as error:
        raise UsageError(f"bad --query {expression!r}: {_first_line(str(error))}") from None


def search(query: Any, document: Any) -> Any:
    """The query's result over `document`; a type error (e.g. sum() of text) is a UsageError of one line."""
    from jmespath import exceptions

    try:
        return query.search(document)
    except exceptions.JMESPathError as error:
        raise UsageError(f"bad --query {query.expression!r}: {_first_line(str(error))}") from None


def _first_line(text: str) -> str:
    return printable(str(text).strip().splitlines()[0] if str(text).strip() else "invalid expression")


# ---------------------------------------------------------------------------------------------
# the chosen output


@dataclass(frozen=True)
class Output:
    """What one run prints and how: the format, the compiled --query (None: the whole document), colour, and the
    table's width (COLUMNS, else the terminal's; None when stdout is not a terminal: nothing is cut)."""

    format: str
    query: Any = None
    color: bool = False
    width: int | None = None
    columns: tuple[str, ...] = ()  # --columns: the table's columns, in order (empty: the verb's default)

    @classmethod
    def of(cls, args: argparse.Namespace, out: TextIO, *, default: str = "table") -> Output:
        """From --output (or a verb's --format), --query and --color; checked before any AWS call."""
        chosen = getattr(args, "output", None)
        legacy = getattr(args, "format", None)
        if chosen and legacy and chosen != legacy:
            raise UsageError(f"--output {chosen} and --format {legacy} disagree: give one of them")
        fmt = chosen or legacy or default
        expression = getattr(args, "query", None)
        if expression is not None and fmt not in (*OUTPUTS, *TABLES):
            raise UsageError(f"--query applies to --output {', '.join(OUTPUTS)}, not {fmt}")
        columns = tuple(c.strip().lower() for c in (getattr(args, "columns", None) or "").split(",") if c.strip())
        if columns and fmt not in TABLES:
            raise UsageError(f"--columns applies to --output {' or '.join(TABLES)}, not {fmt}")
        if fmt == "yaml":
            yaml_module()
        terminal = Terminal.from_env()
        return cls(
            format=fmt,
            query=compile_query(expression) if expression is not None else None,
            color=wants_color(getattr(args, "color", "auto"), out, terminal),
            width=None if fmt == "wide" else table_width(out, terminal),
            columns=columns,
        )


def wants_color(choice: str, out: TextIO, terminal: Terminal | None = None) -> bool:
    """--color on / off; auto: a terminal, NO_COLOR unset (or empty) and TERM not dumb. The option overrides
    NO_COLOR, as no-color.org asks of per-invocation arguments."""
    if choice in ("on", "off"):
        return choice == "on"
    terminal = terminal or Terminal.from_env()
    return _isatty(out) and not terminal.no_color and not terminal.dumb


def table_width(out: TextIO, terminal: Terminal | None = None) -> int | None:
    """COLUMNS when set; else the terminal's width; None when stdout is a file or a pipe (no column is dropped and
    nothing is cut: a file has no width)."""
    terminal = terminal or Terminal.from_env()
    if terminal.columns is not None:
        return terminal.columns
    if not _isatty(out):
        return None
    try:
        return os.get_terminal_size(out.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return None


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (ValueError, AttributeError):
        return False


def yaml_module() -> Any:
    try:
        import yaml
    except ImportError:
        raise UsageError(f"--output yaml needs PyYAML: {CLI_EXTRA}") from None
    return yaml


def write_document(document: Any, output: Output, out: TextIO, table: Callable[[], str] | None = None) -> None:
    """`document` (the verb's JSON) as the output asks; `table` renders the verb's own table (without --query)."""
    data = search(output.query, document) if output.query is not None else document
    if output.format == "json":
        json.dump(data, out, indent=2)
        out.write("\n")
    elif output.format == "yaml":
        out.write(yaml_module().safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    elif output.format == "text":
        out.writelines(f"{line}\n" for line in text_lines(data))
    elif table is not None and output.query is None:
        out.write(table())
    else:
        out.write(data_table(data, output.width))


# ---------------------------------------------------------------------------------------------
# text: the AWS CLI's rules


def _scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _text(value: Any) -> str:
    # Tabs and newlines of a value would shift columns or forge lines: shown as escapes, like every other output.
    return printable(str(value))


def text_lines(data: Any, identifier: str | None = None, keys: Sequence[str] | None = None) -> Iterator[str]:
    """Lines of the AWS CLI's text output for `data`."""
    if isinstance(data, dict):
        yield from _dict_lines(data, identifier, keys)
    elif isinstance(data, list):
        yield from _list_lines(data, identifier)
    else:
        yield _text(data)


def _list_lines(items: list[Any], identifier: str | None) -> Iterator[str]:
    if not items:
        return
    if any(isinstance(item, dict) for item in items):
        keys = sorted({key for item in items if isinstance(item, dict) for key, v in item.items() if _scalar(v)})
        for item in items:
            yield from text_lines(item, identifier, keys)
        return
    scalars = [item for item in items if _scalar(item)]
    if scalars:
        if identifier is None:
            yield "\t".join(_text(item) for item in scalars)
        else:
            yield from (f"{identifier.upper()}\t{_text(item)}" for item in scalars)
    for item in items:
        if not _scalar(item):
            yield from text_lines(item, identifier)


def _dict_lines(item: Mapping[str, Any], identifier: str | None, keys: Sequence[str] | None) -> Iterator[str]:
    if keys is None:
        scalars = [_text(value) for key, value in sorted(item.items()) if _scalar(value)]
        nested = [(key, value) for key, value in sorted(item.items()) if not _scalar(value)]
    else:
        scalars = [_text(item.get(key)) for key in keys]
        nested = [(key, item[key]) for key in sorted(set(item) - set(keys))]
    if scalars:
        yield "\t".join([identifier.upper(), *scalars] if identifier is not None else scalars)
    for key, value in nested:
        yield from text_lines(value, key)


# ---------------------------------------------------------------------------------------------
# table after --query: rows and columns of whatever the query returned


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict | list):
        return printable(json.dumps(value, separators=(",", ":")))
    if isinstance(value, bool):
        return "true" if value else "false"
    return printable(str(value))


def data_table(data: Any, width: int | None = None) -> str:
    """A plain table of a query's result: objects are rows (their keys the header), lists of lists rows without a
    header, an object alone a KEY/VALUE list, a scalar itself. Cut to `width` only on a terminal."""
    header: list[str] | None
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        header = list(dict.fromkeys(key for item in data for key in item))
        rows = [[_cell(item.get(key)) for key in header] for item in data]
    elif isinstance(data, list):
        header = None
        rows = [[_cell(v) for v in item] if isinstance(item, list) else [_cell(item)] for item in data]
    elif isinstance(data, dict):
        header = ["KEY", "VALUE"]
        rows = [[printable(str(key)), _cell(value)] for key, value in data.items()]
    else:
        return f"{_cell(data)}\n"
    if not rows:
        return ""
    columns = max(len(row) for row in [*rows, *([header] if header else [])])
    grid = [row + [""] * (columns - len(row)) for row in ([header] if header else []) + rows]
    widths = [max(len(row[i]) for row in grid) for i in range(columns)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in grid]
    if header:
        lines.insert(1, "  ".join("-" * w for w in widths))
    if width is not None:
        lines = [line if len(line) <= width else line[: max(0, width - 1)] + "…" for line in lines]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# colour


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


# ---------------------------------------------------------------------------------------------
# progress on stderr


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
    if _isatty(stream):
        try:
            return RichProgress(stream, color=color and not Terminal.from_env().no_color)
        except ImportError:
            pass
    return StageLines(stream)
