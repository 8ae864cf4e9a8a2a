"""Output nobody can forge: a tag (Name, team) cannot put a live formula in the CSV, nor add rows, move columns or
reverse text in what people read (the CLI's table and messages, the demo's HTML page); JSON keeps the original."""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from dataclasses import replace
from decimal import Decimal

import pytest

from rightsizer.cli import main as cli_main
from rightsizer.cli.errors import print_warnings
from rightsizer.cli.output.csv_rows import write_csv
from rightsizer.cli.output.report import write_report
from rightsizer.cli.output.table import render_table
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.formatting import printable, spreadsheet_text
from rightsizer.services.report import FleetReport, build_report, report_json
from tests.slack_double import ACCOUNT, NOW, recommendation

BIDI = [chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
C0_C1 = [chr(code) for code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))]
SEPARATORS = ["\u2028", "\u2029"]
HIDDEN = [*BIDI, *ZERO_WIDTH, *C0_C1, *SEPARATORS]

# A host disguised three ways: a forged second row, a tab, and a right-to-left override that shows "gpu-prod-exe.txt".
FORGED_NAME = "web-1\ni-0000000000000dead  g5.xlarge  optimized\t\u202etxt.exe-dorp-upg"
FORMULAS = ('=HYPERLINK("http://evil","x")', "+1+1", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1", "\n=1+1")


def report_of(*recs: Recommendation) -> FleetReport:
    return build_report(recs, NOW, 14, home_account=ACCOUNT)


# ---------------------------------------------------------------------------------------------
# the sanitiser


@pytest.mark.parametrize("char", HIDDEN, ids=lambda char: f"U+{ord(char):04X}")
def test_printable_shows_every_hidden_character_as_a_visible_ascii_escape(char: str) -> None:
    shown = printable(f"a{char}b")

    assert shown.startswith("a\\") and shown.endswith("b")
    assert shown.isprintable() and shown.isascii()
    assert shown == f"a{repr(char)[1:-1]}b" or char in "\t\n\r"  # Python's own notation
    assert printable(shown) == shown  # idempotent


def test_printable_names_tab_newline_and_carriage_return_and_keeps_everything_else() -> None:
    assert printable("a\tb\nc\rd") == "a\\tb\\nc\\rd"
    assert printable("\u202egpu") == "\\u202egpu"
    assert printable("\U000e0041") == "\\U000e0041"  # a tag character (invisible)
    for kept in ("Müller GPU", "训练-节点", "GPU 🚀", "a\u00a0b", "x\u3000y", "naïve", "plain-host_01"):
        assert printable(kept) == kept
    assert printable("one\ntwo\u202e", newlines=True) == "one\ntwo\\u202e"


def test_printable_leaves_no_character_a_terminal_or_browser_would_hide() -> None:
    every = "".join(chr(code) for code in range(0x3000) if unicodedata.category(chr(code)) != "Cs")
    shown = printable(every)

    assert not [char for char in shown if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")]


# ---------------------------------------------------------------------------------------------
# 1. CSV formula injection


@pytest.mark.parametrize("text", [*FORMULAS, "\uff1dSUM(A1)", "\uff0b1", "\uff0d1", "\uff20A1", "  =1+1", "\u3000=1"])
def test_spreadsheet_text_quotes_what_a_spreadsheet_would_evaluate(text: str) -> None:
    assert spreadsheet_text(text) == "'" + text


@pytest.mark.parametrize("text", ["", "training-1", "g5.xlarge", "team a=b", "1+1", "'quoted", "e-mail@example"])
def test_spreadsheet_text_leaves_other_text_alone(text: str) -> None:
    assert spreadsheet_text(text) == text


def csv_rows(report: FleetReport) -> list[dict[str, str]]:
    out = io.StringIO()
    write_csv(report, out)
    return list(csv.DictReader(io.StringIO(out.getvalue())))


@pytest.mark.parametrize("formula", FORMULAS)
def test_csv_neutralises_formulas_in_the_name_and_team_tags(formula: str) -> None:
    rec = replace(recommendation(1, name=formula), team=formula)

    (row,) = csv_rows(report_of(rec))

    assert row["name"] == "'" + formula
    assert row["team"] == "'" + formula
    assert report_json(report_of(rec))["recommendations"][0]["name"] == formula  # JSON keeps the tag as it is


def test_csv_keeps_numbers_numbers_negative_money_included() -> None:
    upsize = recommendation(1, name="-gpu", cost="590.00", cost_after="793.52", target_type="g6.xlarge")

    (row,) = csv_rows(report_of(upsize))

    assert row["monthly_savings_usd"] == "-203.52"  # a number, not text: no quote
    assert row["monthly_cost_usd"] == "590.00"
    assert row["evidence_accelerator_p95_pct"] == "12.0"
    assert row["name"] == "'-gpu"  # a text cell that starts like a formula is quoted
    assert Decimal(row["monthly_savings_usd"]) == Decimal("-203.52")


def test_no_text_cell_of_the_csv_starts_like_a_formula() -> None:
    evil = "=cmd|' /C calc'!A0"
    rec = replace(recommendation(1, name=evil), team="@team", reasons=(f"{evil} reason",))

    for row in csv_rows(report_of(rec)):
        for key, cell in row.items():
            if key.endswith("_usd") or not cell:
                continue
            assert cell.lstrip()[:1] not in "=+-@\uff1d\uff0b\uff0d\uff20" or cell.startswith("'"), (key, cell)


# ---------------------------------------------------------------------------------------------
# 2. control and direction characters in what people read


def test_a_name_cannot_forge_rows_or_reverse_text_in_the_table() -> None:
    forged = recommendation(1, name=FORGED_NAME)
    honest = recommendation(2)
    table = render_table(report_of(forged, honest), width=400)
    plain = render_table(report_of(replace(forged, instance_name="web-1"), honest), width=400)

    assert len(table.splitlines()) == len(plain.splitlines())  # no forged row
    assert "\t" not in table and "\u202e" not in table
    assert "i-0000000000000dead" not in [line.split()[0] for line in table.splitlines() if line.strip()]
    assert "web-1\\ni-0000000" in table  # the name is shown, escaped (shortened to the column)


@pytest.mark.parametrize("char", HIDDEN, ids=lambda char: f"U+{ord(char):04X}")
def test_no_hidden_character_reaches_the_table(char: str) -> None:
    rec = replace(recommendation(1, name=f"gpu{char}1"), reasons=(f"reason{char}here",))

    table = render_table(report_of(rec), width=300)

    assert char not in table.replace("\n", "") and table.count("\n") == render_table(
        report_of(recommendation(1)), width=300
    ).count("\n")


def test_warnings_and_errors_on_stderr_are_one_line_each() -> None:
    err = io.StringIO()
    print_warnings(err, ["us-east-1: tag 'a\nrightsizer: error: forged\u202e'"])
    cli_main._fail(err, "bad\r\nthing", 2)

    lines = err.getvalue().splitlines()
    assert lines == [
        "rightsizer: warning: us-east-1: tag 'a\\nrightsizer: error: forged\\u202e'",
        "rightsizer: error: bad\\r\\nthing",
    ]


def test_json_keeps_the_name_exactly() -> None:
    out = io.StringIO()
    write_report(report_of(recommendation(1, name=FORGED_NAME)), "json", out)

    assert json.loads(out.getvalue())["recommendations"][0]["name"] == FORGED_NAME


def test_the_html_page_escapes_hidden_characters_in_names_reasons_and_warnings() -> None:
    rec = replace(recommendation(1, name=FORGED_NAME), reasons=("busy\u2066 until\u2069 noon\u200b",))
    document = report_json(
        build_report([rec], NOW, 14, ["eu-west-1: could not be read:\n<b>500</b>\u202e"], home_account=ACCOUNT)
    )
    message = {
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": "*top*\n`gpu\u202e1` saves\u200b"}},
            {"type": "header", "text": {"type": "plain_text", "text": "report\u202e\n"}},
        ]
    }
    from rightsizer.adapters.html import page as html_page

    page = html_page.render(document, slack_messages=[message], now=NOW)

    for char in (*BIDI, *ZERO_WIDTH, "\t", "\r", "\u2028"):
        assert char not in page, f"U+{ord(char):04X}"
    assert "web-1\\ni-0000000000000dead  g5.xlarge  optimized\\t\\u202etxt.exe-dorp-upg" in page
    assert "busy\\u2066 until\\u2069 noon\\u200b" in page
    assert "could not be read:\\n&lt;b&gt;500&lt;/b&gt;\\u202e" in page
    assert "<b>top</b><br><code>gpu\\u202e1</code> saves\\u200b" in page  # the message's own line break stays
    assert "report\\u202e\\n" in page


@pytest.mark.parametrize("name", ["x\r=1+1", 'x\r=HYPERLINK("http://evil")', "x\n=1+1", "x\r\n@SUM(A1)", 'a,b"c'])
def test_a_cr_or_lf_in_a_tag_cannot_start_a_forged_csv_row(name: str) -> None:
    rows = csv_rows(report_of(recommendation(1, name=name), recommendation(2)))

    assert [row["instance_id"] for row in rows] == [f"i-{1:017x}", f"i-{2:017x}"]
    assert rows[0]["name"] == name  # one cell, quoted, as the tag is
