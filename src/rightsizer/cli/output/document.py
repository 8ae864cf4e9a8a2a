"""The AWS CLI's output habits, for every `rightsizer` verb: `--output json|text|table|yaml`, `--query` (a JMESPath
expression over the JSON document) and `--color on|off|auto` beside NO_COLOR (https://no-color.org). `Output` is what
one run prints and how; `write_document` prints a verb's JSON document as it asks: json, yaml, text (text.py), the
verb's own table, or after `--query` a plain table of the query's result (query_table.py). Nothing here reads AWS.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from rightsizer.cli.errors import UsageError
from rightsizer.cli.output.query_table import data_table
from rightsizer.cli.output.text import text_lines
from rightsizer.services.formatting import printable
from rightsizer.settings import Terminal

OUTPUTS = ("json", "text", "table", "yaml")
TABLES = ("table", "wide")  # a report's table, and kubectl's `-o wide`: every column, every value whole
COLORS = ("on", "off", "auto")
DEFAULT_COLUMNS = 120  # a report's table, where no width is known
JSON_INDENT = 2  # --output json: `json.dump`'s indent (report.py's `write_ranked_json` writes the same bytes)
CLI_EXTRA = "pip install 'gpu-rightsizer[cli]'"  # pyproject.toml's optional dependency `cli`


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
    return isatty(out) and not terminal.no_color and not terminal.dumb


def table_width(out: TextIO, terminal: Terminal | None = None) -> int | None:
    """COLUMNS when set; else the terminal's width; None when stdout is a file or a pipe (no column is dropped and
    nothing is cut: a file has no width)."""
    terminal = terminal or Terminal.from_env()
    if terminal.columns is not None:
        return terminal.columns
    if not isatty(out):
        return None
    try:
        return os.get_terminal_size(out.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return None


def isatty(stream: TextIO) -> bool:
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
        json.dump(data, out, indent=JSON_INDENT)
        out.write("\n")
    elif output.format == "yaml":
        out.write(yaml_module().safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    elif output.format == "text":
        out.writelines(f"{line}\n" for line in text_lines(data))
    elif table is not None and output.query is None:
        out.write(table())
    else:
        out.write(data_table(data, output.width))
