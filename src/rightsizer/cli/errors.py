"""What goes wrong, said once for every verb: the exit codes (`EXIT_CODES`: the help and docs/cli.md list them),
`UsageError` (exit 2) and `CommandFailed` (a verb could not do its job: one line and its code), a failed AWS call in
one line, and the warnings printed on stderr at the end of a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from rightsizer.services.formatting import printable

EXIT_OK = 0
EXIT_FAILURE = 1  # AWS could not be read at all, or holds no answer: credentials, network, no report, no such host
EXIT_USAGE = 2  # the command line or the AWS configuration cannot work: option, region, profile, stack, role ARN
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_BROKEN_PIPE = 141  # whoever read stdout stopped (`| head`): quietly, as 128 + SIGPIPE in a shell
EXIT_CODES = {
    EXIT_OK: "the output was printed (warnings, such as a region that could not be read, go to stderr)",
    EXIT_FAILURE: "AWS could not be read (credentials, permissions, network, throttling, an answer that is not AWS's), "
    "the stack has no report yet, no recommendation for that host, a dry run the approval would refuse, or a doctor "
    "check that needs fixing",
    EXIT_USAGE: "bad option or --query, unknown region, profile or stack (or one that is no GPU Rightsizer stack), "
    "no region configured, a malformed AWS config or credentials file, malformed role ARN, a missing `cli` extra",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "the reader of stdout went away (e.g. `| head`): the rest is dropped quietly",
}


class CommandFailed(Exception):
    """A verb could not do its job (AWS unreadable, nothing found): one line on stderr and its exit code."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


def aws_failure(error: Exception) -> str | None:
    """One line for a failed AWS call (see EXIT_FAILURE); None for any other error."""
    from rightsizer.adapters.aws.session import AWS_FAILURES, describe_aws_error

    return describe_aws_error(error) if isinstance(error, AWS_FAILURES) else None


def print_warnings(err: TextIO, warnings: Sequence[str]) -> None:
    for warning in dict.fromkeys(warnings):
        print(f"rightsizer: warning: {printable(warning)}", file=err)


class UsageError(Exception):
    """A malformed command line or configuration: reported as one line, exit 2."""
