"""`/gpu help` (also `?`, `-h`, `--help`, and no text at all): what the commands are, answered at once."""

from __future__ import annotations

from collections.abc import Sequence

from rightsizer.adapters.slack.commands.verb import Defaults, Help, Verb


def parse(args: Sequence[str], defaults: Defaults) -> Help:
    return Help()


VERB = Verb("help", "help", "this message", parse, aliases=("?", "-h", "--help"))
