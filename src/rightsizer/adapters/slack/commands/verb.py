"""What a verb of the slash command is: its usage and help line, a parser, and the typed command it parses to.

Parsing is pure and cheap (it runs on the acknowledgement path); a command's `answer` reads data and runs in
the lazy listener. Input that does not parse is `Malformed`, answered at once with what would work.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Protocol

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.deps import Deps
from rightsizer.adapters.slack.messages import MessageBoard
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.resources import ResourceKind, kind_of

INSTANCE_ID = re.compile(r"^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$")
# `<kind prefix><names>`: SageMaker names, node group and NodePool names are letters, digits, `-`, `_` and `.`.
RESOURCE_ID = re.compile(r"^[a-z-]+/[A-Za-z0-9._-]{1,128}(?:/[A-Za-z0-9._-]{1,128}){0,2}$")
EXAMPLE_INSTANCE = "i-0123456789abcdef0"

Payload = dict[str, Any]  # one message: text, and blocks if any


@dataclass(frozen=True)
class Defaults:
    """What parsing depends on: the slash command's name and `top`'s default count."""

    command: str = "/gpu"
    top_n: int = 10


@dataclass(frozen=True)
class Asked:
    """One command's context in the lazy listener: who asked, when, and what the answer may read and edit."""

    deps: Deps
    user: str
    now: datetime
    board: MessageBoard


class Command(Protocol):
    """A parsed command whose answer reads data (given through response_url, after the acknowledgement)."""

    verb: ClassVar[str]

    def answer(self, asked: Asked) -> list[Payload]: ...


@dataclass(frozen=True)
class Help:
    """The help: answered in the acknowledgement (it reads no data)."""


@dataclass(frozen=True)
class Malformed:
    """Input that is no command: answered in the acknowledgement with `error` and the help."""

    error: str


Parsed = Command | Help | Malformed


@dataclass(frozen=True)
class Verb:
    """One verb: `/gpu <usage>` does `summary` (the help line and the manifest's usage hint read these)."""

    name: str
    usage: str
    summary: str
    parse: Callable[[Sequence[str], Defaults], Parsed]
    aliases: tuple[str, ...] = ()


def no_arguments(verb: str, args: Sequence[str], command: Command) -> Command | Malformed:
    return Malformed(f"`{verb}` takes no arguments.") if args else command


def instance_id_of(verb: str, args: Sequence[str], example: str) -> str | Malformed:
    """The instance id the verb's first argument names (lower-cased), or the id of another kind of resource
    (`sagemaker-endpoint/chat/AllTraffic`, `eks-nodegroup/ml/gpu`: kept as written, names are the owner's), or what
    is wrong with it."""
    given = args[0] if args else ""
    if INSTANCE_ID.match(given.lower()):
        return given.lower()
    if RESOURCE_ID.match(given) and kind_of(given) is not ResourceKind.EC2:
        return given
    got = f" (got `{blocks.escape(given[:40])}`)" if args else ""
    return Malformed(
        f"`{verb}` needs an EC2 instance id or a resource id{got}, e.g. `{example}` or "
        f"`{verb} sagemaker-endpoint/<endpoint>/<variant>`."
    )


def one_instance_id(verb: str, args: Sequence[str]) -> str | Malformed:
    """`<verb> <instance-id>` and nothing more."""
    instance_id = instance_id_of(verb, args, f"{verb} {EXAMPLE_INSTANCE}")
    if isinstance(instance_id, str) and len(args) > 1:
        return Malformed(f"`{verb}` takes a single instance id.")
    return instance_id


@dataclass(frozen=True)
class AboutHost:
    """A command about one host's latest advice (`show`, `why`): `<verb> <instance-id>`."""

    instance_id: str
    verb: ClassVar[str]

    def answer(self, asked: Asked) -> list[Payload]:
        rec = asked.deps.store.latest_for_instance(self.instance_id)
        if rec is None:
            return [unknown_instance(self.instance_id, asked.deps.command_name)]
        return [self.about(rec, asked).payload()]

    def about(self, rec: Recommendation, asked: Asked) -> blocks.Message:
        raise NotImplementedError

    @classmethod
    def parse(cls, args: Sequence[str], defaults: Defaults) -> AboutHost | Malformed:
        instance_id = one_instance_id(cls.verb, args)
        return cls(instance_id) if isinstance(instance_id, str) else instance_id


def unknown_instance(instance_id: str, command_name: str) -> Payload:
    return {
        "text": (
            f"No recommendation for `{instance_id}` in the latest analysis. It may not be a GPU instance, or it "
            f"runs in an account or region that is not analysed. `{command_name} top` lists what there is."
        )
    }
