"""`rightsizer`'s entry point: the parser, built from every verb's registry entry, and `main`, which runs a verb.

Every verb is one `Verb` in its own module of verbs/: `analyze`, `show`, `report`, `act --dry-run`, `completion` (it
prints the whole parser: it is given `build_parser`) and `doctor`. The parser, the help, the completion scripts and
docs/cli.md's test are generated from `verbs()`. Errors are one line on stderr and a documented exit code
(errors.EXIT_CODES), never a traceback (unless --debug). This module sits above the verbs' modules, which import the
pieces they share from the modules below them and never this one: the CLI's imports have no circle.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from rightsizer import __version__
from rightsizer.cli.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_CODES,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    CommandFailed,
    UsageError,
    aws_failure,
)
from rightsizer.cli.options import Verb
from rightsizer.cli.verbs import act, analyze, completion, doctor, report, show
from rightsizer.services.formatting import printable

__all__ = ["build_parser", "main", "verbs"]

EXAMPLES = """\
examples:
  rightsizer analyze                                   # the region of AWS_REGION / AWS_DEFAULT_REGION / the profile
  rightsizer analyze --profile prod --region us-east-1 --region eu-west-1
  rightsizer analyze --all-regions --output json > fleet.json
  rightsizer analyze --all-regions --account-role-arn arn:aws:iam::111122223333:role/GpuRightsizerCollector
  rightsizer analyze --format csv > fleet.csv          # for spreadsheets
  rightsizer analyze --format html > fleet.html        # the report page, self-contained (or --html fleet.html)
  rightsizer analyze --output text --query "recommendations[?finding=='idle'].[instance_id, monthly_savings_usd]"
  rightsizer show i-0123456789abcdef0                  # one host's evidence and reasons
  rightsizer report --stack gpu-rightsizer             # what the deployed bot decided, from its table
  rightsizer act i-0123456789abcdef0 --dry-run --stack gpu-rightsizer   # the AWS calls an approval would make
  rightsizer doctor --stack gpu-rightsizer             # after a deploy: each line of the checklist ok, or the fix
  AWS_ENDPOINT_URL=http://127.0.0.1:5000 rightsizer analyze   # against `make serve`
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _epilog() -> str:
    codes = "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES.items())
    return f"{EXAMPLES}\nexit codes:\n{codes}\n"


def verbs() -> dict[str, Verb]:
    """Every verb, in the order the help lists them."""
    listed = (analyze.VERB, show.VERB, report.VERB, act.VERB, completion.verb(build_parser), doctor.VERB)
    return {verb.name: verb for verb in listed}


def build_parser() -> argparse.ArgumentParser:
    registry = verbs()
    parser = _Parser(
        prog="rightsizer",
        description="Right-size AWS GPU, Inferentia and Trainium instances.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for verb in registry.values():
        sub = commands.add_parser(
            verb.name,
            help=verb.summary,
            description=verb.description,
            epilog=_epilog(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        verb.options(sub)
        sub.set_defaults(run=verb.run)
    return parser


def _tolerant(stream: TextIO) -> None:
    """Characters the stream cannot encode (a host's Name tag, say) become '?' instead of an exception."""
    reconfigure: Callable[..., None] | None = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")


def _fail(err: TextIO, message: str, code: int) -> int:
    print(f"rightsizer: error: {printable(message)}", file=err)  # one line, whatever the message quotes
    return code


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    _tolerant(out)
    _tolerant(err)
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(words)
    except UsageError as error:
        return _fail(err, f"{error} (see {_help_hint(words)})", EXIT_USAGE)
    if args.command is None:  # bare `rightsizer`: what it can do
        parser.print_help(out)
        return EXIT_OK
    try:
        code: int = args.run(args, out, err)
        return code
    except UsageError as error:
        return _fail(err, str(error), EXIT_USAGE)
    except CommandFailed as failure:
        return _fail(err, str(failure), failure.code)
    except KeyboardInterrupt:
        print("\nrightsizer: interrupted", file=err)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _drop_output(out)
        return EXIT_BROKEN_PIPE
    except Exception as error:
        described = aws_failure(error)
        if described is not None:  # AWS's answer, or none, wherever a verb met it: described, not "unexpected"
            return _fail(err, described, EXIT_FAILURE)
        if getattr(args, "debug", False):
            raise
        return _fail(err, f"unexpected {type(error).__name__}: {error} (run again with --debug)", EXIT_FAILURE)


def _help_hint(words: Sequence[str]) -> str:
    """Where the help of the verb the command line names is: `rightsizer show --help`."""
    verb = next((word for word in words if word in verbs()), "")
    return f"rightsizer {verb} --help" if verb else "rightsizer --help"


def _drop_output(out: TextIO) -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        fileno = out.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
