"""`rightsizer completion bash|zsh|fish`: completion scripts generated from the argparse parser itself, so every verb
and option the CLI has is completed, with the choices an option takes (--output json|text|table|yaml, ...).

The verb prints the script of the whole parser, which is built from every verb, this one included: cli/main.py hands
it `build_parser` (`verb(build_parser)`), so no module of verbs/ imports main.py."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TextIO

from rightsizer.cli.errors import EXIT_OK
from rightsizer.cli.options import Verb, add_debug_option


@dataclass(frozen=True)
class Option:
    """One option of a verb, as completion needs it."""

    flags: tuple[str, ...]  # --output (and any alias)
    help: str
    takes_value: bool
    choices: tuple[str, ...] = ()
    file: bool = False  # its value is a path (metavar FILE): the shell completes file names


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    options: tuple[Option, ...]
    positional_choices: tuple[str, ...] = ()  # `completion bash|zsh|fish`


def _choices(action: argparse.Action) -> tuple[str, ...]:
    if action.choices:
        return tuple(str(choice) for choice in action.choices)
    if action.metavar == "REGION":  # botocore's regions: what `known_regions` accepts
        from rightsizer.adapters.aws.session import known_regions

        return tuple(sorted(known_regions()))
    return ()


def _options(parser: argparse.ArgumentParser) -> tuple[Option, ...]:
    return tuple(
        Option(
            tuple(action.option_strings),
            " ".join((action.help or "").replace("%%", "%").split()),
            action.nargs != 0,
            _choices(action),
            action.metavar == "FILE",
        )
        for action in parser._actions
        if action.option_strings and action.help != argparse.SUPPRESS
    )


def commands(parser: argparse.ArgumentParser) -> tuple[tuple[Option, ...], tuple[Command, ...]]:
    """The top level's options and every verb, read from the parser."""
    found: list[Command] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                positional = [a for a in sub._actions if not a.option_strings and a.choices]
                choices = tuple(str(choice) for a in positional for choice in a.choices or ())
                found.append(Command(name, helps.get(name, ""), _options(sub), choices))
    return _options(parser), tuple(found)


def _words(options: tuple[Option, ...]) -> str:
    return " ".join(flag for option in options for flag in option.flags)


# ---------------------------------------------------------------------------------------------
# bash


def bash(parser: argparse.ArgumentParser) -> str:
    top, verbs = commands(parser)
    lines = [
        "# bash completion for rightsizer: `source <(rightsizer completion bash)`, or save it as",
        "# ~/.local/share/bash-completion/completions/rightsizer",
        "_rightsizer() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        "    if [[ $COMP_CWORD -eq 1 ]]; then",
        f'        COMPREPLY=($(compgen -W "{" ".join(v.name for v in verbs)} {_words(top)}" -- "$cur"))',
        "        return",
        "    fi",
        '    case "${COMP_WORDS[1]}" in',
    ]
    for verb in verbs:
        lines.append(f"        {verb.name})")
        values = [option for option in verb.options if option.choices]
        if values:
            lines.append('            case "$prev" in')
            for option in values:
                words = " ".join(option.choices)
                lines.append(
                    f'                {"|".join(option.flags)}) COMPREPLY=($(compgen -W "{words}" -- "$cur")); return;;'
                )
            lines.append("            esac")
        takes = [flag for option in verb.options if option.takes_value and not option.choices for flag in option.flags]
        if takes:
            lines.append(f'            case "$prev" in {"|".join(takes)}) COMPREPLY=(); return;; esac')
        words = f"{_words(verb.options)} {' '.join(verb.positional_choices)}".strip()
        lines.append(f'            COMPREPLY=($(compgen -W "{words}" -- "$cur"));;')
    lines += ["    esac", "}", "complete -o default -F _rightsizer rightsizer", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# zsh


def _zsh_text(text: str) -> str:
    """Text inside a single-quoted _arguments spec: ' closed and reopened; [ ] : escaped."""
    for char in "\\[]:":
        text = text.replace(char, "\\" + char)
    return text.replace("'", "'\\''")


def _zsh_spec(option: Option) -> Iterator[str]:
    for flag in option.flags:
        value = ""
        if option.takes_value:
            action = f"({' '.join(option.choices)})" if option.choices else ("_files" if option.file else "")
            value = f":{flag.lstrip('-')}:{action}"
        yield f"'{flag}[{_zsh_text(option.help)}]{value}'"


def zsh(parser: argparse.ArgumentParser) -> str:
    top, verbs = commands(parser)
    lines = [
        "#compdef rightsizer",
        "# zsh completion for rightsizer: save as _rightsizer in a folder of $fpath (then `compinit`), or",
        "# `source <(rightsizer completion zsh)` after compinit",
        "_rightsizer() {",
        "    local -a verbs",
        "    verbs=(",
        *(f"        '{verb.name}:{_zsh_text(verb.help)}'" for verb in verbs),
        "    )",
        "    if (( CURRENT == 2 )); then",
        "        _describe 'command' verbs",
        f"        _arguments {' '.join(spec for option in top for spec in _zsh_spec(option))}",
        "        return",
        "    fi",
        "    local verb=$words[2]",
        "    shift words; (( CURRENT-- ))",
        "    case $verb in",
    ]
    for verb in verbs:
        specs = [spec for option in verb.options for spec in _zsh_spec(option)]
        if verb.positional_choices:
            specs.append(f"'1:{verb.name}:({' '.join(verb.positional_choices)})'")
        lines.append(f"        {verb.name}) _arguments {' '.join(specs)};;")
    lines += [
        "    esac",
        "}",
        # Autoloaded from $fpath the file is the function's body: run it; sourced, register it.
        "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then",
        '    _rightsizer "$@"',
        "else",
        "    compdef _rightsizer rightsizer",
        "fi",
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# fish


def fish(parser: argparse.ArgumentParser) -> str:
    top, verbs = commands(parser)
    command = "complete -c rightsizer"
    lines = [
        "# fish completion for rightsizer: `rightsizer completion fish > ~/.config/fish/completions/rightsizer.fish`",
        f"{command} -f",
        *(f"{command} -n __fish_use_subcommand -a {verb.name} -d {shlex.quote(verb.help)}" for verb in verbs),
        *(_fish_option(f"{command} -n __fish_use_subcommand", option) for option in top),
    ]
    for verb in verbs:
        condition = f"{command} -n '__fish_seen_subcommand_from {verb.name}'"
        lines.extend(_fish_option(condition, option) for option in verb.options)
        if verb.positional_choices:
            lines.append(f"{condition} -a {shlex.quote(' '.join(verb.positional_choices))}")
    return "\n".join(lines) + "\n"


def _fish_option(prefix: str, option: Option) -> str:
    parts = [prefix]
    for flag in option.flags:
        parts.append(f"-l {flag.removeprefix('--')}" if flag.startswith("--") else f"-s {flag.removeprefix('-')}")
    if option.choices:
        parts.append(f"-x -a {shlex.quote(' '.join(option.choices))}")
    elif option.file:
        parts.append("-r -F")
    elif option.takes_value:
        parts.append("-x")
    parts.append(f"-d {shlex.quote(option.help[:80])}")
    return " ".join(parts)


SHELLS: dict[str, Callable[[argparse.ArgumentParser], str]] = {"bash": bash, "zsh": zsh, "fish": fish}


# ---------------------------------------------------------------------------------------------
# the verb: the script of a shell for the whole parser


def _completion_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=sorted(SHELLS), help="the shell whose completion script to print")
    add_debug_option(parser)


def verb(build_parser: Callable[[], argparse.ArgumentParser]) -> Verb:
    """`completion`, printing the script of the parser `build_parser` makes (cli/main.py's, of every verb)."""

    def _completion(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        out.write(SHELLS[args.shell](build_parser()))
        return EXIT_OK

    return Verb(
        "completion",
        "print a shell completion script (bash, zsh, fish)",
        "Print the completion script of a shell for every verb and option (see docs/cli.md to install it).",
        _completion_options,
        _completion,
    )
