"""`rightsizer completion bash|zsh|fish`: scripts generated from the parser, naming every verb and option, that the
shells read without error (where the shell is installed), and docs/cli.md, which documents every verb and option."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rightsizer.cli import main as cli_main
from rightsizer.cli.errors import EXIT_CODES
from rightsizer.cli.output.document import OUTPUTS
from rightsizer.cli.verbs.completion import SHELLS, commands
from tests.unit.test_cli import run

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def every_option() -> dict[str, set[str]]:
    """Each verb's option flags, from the parser."""
    _, verbs = commands(cli_main.build_parser())
    return {verb.name: {flag for option in verb.options for flag in option.flags} for verb in verbs}


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_the_script_completes_every_verb_and_option(shell: str) -> None:
    result = run("completion", shell)

    assert result.code == 0, result.err
    for verb, flags in every_option().items():
        assert re.search(rf"\b{verb}\b", result.out), (shell, verb)
        for flag in flags - {"-h"}:
            shown = flag.removeprefix("--") if shell == "fish" else flag
            assert shown in result.out, (shell, verb, flag)


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_the_script_offers_an_options_choices(shell: str) -> None:
    script = run("completion", shell).out

    assert " ".join(OUTPUTS) in script  # --output json text table yaml
    assert "on off auto" in script  # --color


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_the_shell_reads_the_script(shell: str, tmp_path: Path) -> None:
    binary = shutil.which(shell)
    if binary is None:
        pytest.skip(f"{shell} is not installed: its script is checked for content only")
    script = tmp_path / f"rightsizer.{shell}"
    script.write_text(run("completion", shell).out)

    checked = subprocess.run([binary, "-n", str(script)], capture_output=True, text=True, timeout=60, check=False)

    assert checked.returncode == 0, checked.stderr


def test_bash_completes_the_verbs_and_an_options_values(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    script = tmp_path / "rightsizer.bash"
    script.write_text(run("completion", "bash").out)

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{word}'" for word in words)
        program = (
            f"source {script}; COMP_WORDS=(rightsizer {line}); COMP_CWORD={len(words)}; "
            'complete() { :; }; _rightsizer; printf "%s\\n" "${COMPREPLY[@]}"'
        )
        done = subprocess.run([bash, "-c", program], capture_output=True, text=True, timeout=60, check=True)
        return done.stdout.split()

    assert set(complete("")) >= set(cli_main.verbs())
    assert complete("analyze", "--output", "") == [*OUTPUTS, "wide"]  # a report also has kubectl's wide table
    assert complete("act", "--output", "") == list(OUTPUTS)
    assert "--dry-run" in complete("act", "--d")


def test_an_unknown_shell_is_a_usage_error() -> None:
    result = run("completion", "tcsh")

    assert result.code == 2 and "invalid choice" in result.err


# ---------------------------------------------------------------------------------------------
# docs/cli.md


def test_the_docs_name_every_verb_and_option() -> None:
    text = DOCS.read_text()
    for verb, flags in every_option().items():
        assert f"rightsizer {verb}" in text, verb
        for flag in flags - {"-h", "--help"}:
            assert f"`{flag}" in text, (verb, flag)


def test_the_docs_name_every_output_and_exit_code() -> None:
    text = DOCS.read_text()

    for output in (*OUTPUTS, "csv", "html"):
        assert f"`{output}`" in text, output
    for code in EXIT_CODES:
        assert re.search(rf"^\| `?{code}`? \|", text, re.MULTILINE), code


def test_the_docs_install_lines_for_every_shell() -> None:
    text = DOCS.read_text()

    for shell in SHELLS:
        assert f"rightsizer completion {shell}" in text, shell
