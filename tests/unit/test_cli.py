"""`rightsizer` in-process: every output of a report (table, json, text, yaml, csv, html), --query, --color beside
NO_COLOR and TERM=dumb, the table at 100 columns and in a file, the progress display, bare `rightsizer`, and `show`
against a live analysis. The analysis itself is replaced by a report built here (`live_report` is the seam; the
integration tests run it against moto)."""

from __future__ import annotations

import argparse
import builtins
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

import pytest
import yaml

from rightsizer.cli import analysis
from rightsizer.cli import main as cli_main
from rightsizer.cli.analysis import LiveReport, _settings, time_zones
from rightsizer.cli.errors import UsageError
from rightsizer.cli.output.document import CLI_EXTRA, Output
from rightsizer.cli.output.progress import RichProgress, progress
from rightsizer.cli.output.report import write_report
from rightsizer.cli.output.table import render_table
from rightsizer.domain.models import Finding
from rightsizer.services.report import FleetReport, build_report, report_json
from tests.slack_double import ACCOUNT, NOW, idle, recommendation, schedulable

LONG_NAME = "inference-cluster-blue-green-node-0042"  # longer than a terminal's NAME column (20)
LONG_REASON = "busiest GPU p95 12% " + "and a very long explanation of what the evidence says " * 4 + "END"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


def run(*args: str, stdout: io.StringIO | None = None, stderr: io.StringIO | None = None) -> Run:
    out, err = stdout or io.StringIO(), stderr or io.StringIO()
    code = cli_main.main(list(args), stdout=out, stderr=err)
    return Run(code, out.getvalue(), err.getvalue())


def assert_one_error(result: Run, code: int, *fragments: str) -> str:
    assert result.code == code, result
    assert result.out == ""
    assert "Traceback" not in result.err
    (line,) = result.err.splitlines()
    assert line.startswith("rightsizer: error: ")
    for fragment in fragments:
        assert fragment in line, line
    return line


def the_report() -> FleetReport:
    optimized = recommendation(4, finding=Finding.OPTIMIZED, target_type=None, cost_after="4140.00")
    # Reserved capacity: the list price drops by $2,000, the bill does not (NET $0).
    reserved = replace(recommendation(5, cost="3000.00", cost_after="1000.00"), monthly_savings_net=Decimal("0.00"))
    recs = [
        recommendation(1, name=LONG_NAME),
        idle(2),
        schedulable(3),
        replace(optimized, reasons=(LONG_REASON,)),
        reserved,
    ]
    return build_report(recs, NOW, 14, ["eu-west-1: Savings Plans could not be read"], home_account=ACCOUNT)


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[argparse.Namespace]]:
    """`live_report` answers with the_report(); the arguments it was called with are kept."""
    calls: list[argparse.Namespace] = []

    def live_report(args: argparse.Namespace, err: TextIO, **options: Any) -> LiveReport:
        calls.append(args)
        report = the_report()
        return LiveReport(report, report.warnings)

    monkeypatch.setattr(analysis, "live_report", live_report)
    for name in ("COLUMNS", "NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    yield calls


# ---------------------------------------------------------------------------------------------
# outputs


def test_json_is_the_report_document(analysed: list[argparse.Namespace]) -> None:
    result = run("analyze", "--output", "json")

    assert result.code == 0, result.err
    assert json.loads(result.out) == json.loads(json.dumps(report_json(the_report())))
    assert result.err == "rightsizer: warning: eu-west-1: Savings Plans could not be read\n"


def test_format_json_is_the_same_document_and_disagreeing_options_are_a_usage_error(
    analysed: list[argparse.Namespace],
) -> None:
    assert run("analyze", "--format", "json").out == run("analyze", "--output", "json").out

    assert_one_error(
        run("analyze", "--format", "csv", "--output", "json"), 2, "--output json and --format csv disagree"
    )


def test_yaml_is_the_same_document(analysed: list[argparse.Namespace]) -> None:
    result = run("analyze", "--output", "yaml")

    assert result.code == 0, result.err
    assert yaml.safe_load(result.out) == json.loads(run("analyze", "--output", "json").out)


def test_yaml_without_pyyaml_names_the_extra_before_any_aws_call(
    analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def without_yaml(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "yaml":
            raise ImportError("No module named 'yaml'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_yaml)

    result = run("analyze", "--output", "yaml")

    assert_one_error(result, 2, "PyYAML", CLI_EXTRA)
    assert analysed == []


def test_text_is_the_aws_clis_tab_separated_lines(analysed: list[argparse.Namespace]) -> None:
    result = run("analyze", "--output", "text")

    assert result.code == 0, result.err
    rows = [line.split("\t") for line in result.lines if line.startswith("RECOMMENDATIONS\t")]
    assert len(rows) == 5
    assert any("i-00000000000000002" in row and "idle" in row for row in rows)
    assert any(line.startswith("TOTALS\t") for line in result.lines)


def test_csv_has_a_row_per_host(analysed: list[argparse.Namespace]) -> None:
    result = run("analyze", "--format", "csv")

    assert result.code == 0, result.err
    assert result.out.startswith("recommendation_id,")
    assert len(result.out.strip().split("\r\n")) == 1 + 5


def test_html_is_the_self_contained_report_page(analysed: list[argparse.Namespace]) -> None:
    result = run("analyze", "--format", "html")

    assert result.code == 0, result.err
    assert result.out.lstrip().lower().startswith("<!doctype html>")
    assert "i-00000000000000002" in result.out
    assert "<script" not in result.out and "http://" not in result.out.replace("http://www.w3.org", "")


def test_html_file_beside_the_table(analysed: list[argparse.Namespace], tmp_path: Path) -> None:
    page = tmp_path / "fleet.html"

    result = run("analyze", "--html", str(page))

    assert result.code == 0, result.err
    assert result.lines[0].startswith("INSTANCE")
    assert page.read_text().lower().startswith("<!doctype html>")


def test_html_into_a_missing_folder_is_a_usage_error_before_any_aws_call(
    analysed: list[argparse.Namespace], tmp_path: Path
) -> None:
    result = run("analyze", "--html", str(tmp_path / "no" / "fleet.html"))

    assert_one_error(result, 2, "does not exist")
    assert analysed == []


# ---------------------------------------------------------------------------------------------
# --query


def test_a_query_selects_from_the_json_document(analysed: list[argparse.Namespace]) -> None:
    query = "recommendations[?finding=='idle'].[instance_id, monthly_savings_usd]"

    as_json = run("analyze", "--output", "json", "--query", query)
    as_text = run("analyze", "--output", "text", "--query", query)
    as_table = run("analyze", "--output", "table", "--query", "recommendations[].{id: instance_id, f: finding}")

    assert json.loads(as_json.out) == [["i-00000000000000002", 8935.2]]
    assert as_text.out == "i-00000000000000002\t8935.2\n"
    assert as_table.lines[0].split() == ["id", "f"] and len(as_table.lines) == 2 + 5


def test_a_scalar_query(analysed: list[argparse.Namespace]) -> None:
    assert run("analyze", "--output", "text", "--query", "totals.instances").out == "5\n"
    assert run("analyze", "--output", "yaml", "--query", "length(recommendations)").out.strip() in ("5", "5\n...")


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("recommendations[?finding=='idle'", "bad --query"),
        ("recommendations[].[", "bad --query"),
        ("@@", "bad --query"),
        ("sum(recommendations[].name)", "bad --query"),  # parses, fails on the data: still one line
    ],
)
def test_a_malformed_query_is_one_line_and_exit_2(analysed: list[argparse.Namespace], query: str, words: str) -> None:
    assert_one_error(run("analyze", "--output", "json", "--query", query), 2, words)


def test_a_query_that_does_not_parse_is_refused_before_any_aws_call(analysed: list[argparse.Namespace]) -> None:
    run("analyze", "--query", "[[")

    assert analysed == []


def test_a_query_does_not_apply_to_csv_or_html(analysed: list[argparse.Namespace]) -> None:
    assert_one_error(run("analyze", "--format", "csv", "--query", "totals"), 2, "--query applies to")


# ---------------------------------------------------------------------------------------------
# the table


def test_the_table_has_net_beside_saves(analysed: list[argparse.Namespace]) -> None:
    result = run("analyze")
    header = result.lines[0].split()
    reserved = next(line for line in result.lines if line.startswith("i-00000000000000005"))

    assert header.index("SAVES/MO") == header.index("NET/MO") + 1  # net first, the list-price savings beside it
    assert re.search(r"\$0\.00\s+\$2,000\.00\s", reserved)


def cell(table: list[str], header: str, row: str) -> str:
    """The cell of column `header` in `row`, by the extent of the column's dashes under the header."""
    start, end = next(m.span() for m in re.finditer(r"-+", table[1]) if table[0][m.start() : m.end()].strip() == header)
    return row[start:end].strip()


def test_net_is_the_json_net_saving(analysed: list[argparse.Namespace]) -> None:
    document = json.loads(run("analyze", "--output", "json").out)
    table = run("analyze").lines
    rows = {line.split()[0]: line for line in table if line.startswith("i-")}

    for rec in document["recommendations"]:
        net = rec["monthly_savings_net_usd"]
        assert cell(table, "NET/MO", rows[rec["instance_id"]]) == ("n/a" if net is None else f"${net:,.2f}")
    assert cell(table, "SAVES/MO", rows["i-00000000000000005"]) == "$2,000.00"
    assert cell(table, "NET/MO", rows["i-00000000000000005"]) == "$0.00"


def test_at_100_columns_the_table_keeps_what_matters_and_says_what_it_hid(
    analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")

    result = run("analyze")

    header = result.lines[0].split()
    assert {"INSTANCE", "NAME", "REGION", "FINDING", "TARGET", "NET/MO", "ACT"} <= set(header)
    assert not {"DAYS", "CONF", "SAVES/MO", "NOW/MO"} & set(header)  # the sparkline and the secondary figures go first
    assert max(len(line) for line in result.lines) <= 100
    said = " ".join(result.out.split("\n\n")[1].split())
    assert said == (
        "To fit 100 columns: columns DAYS, CONF, SAVES/MO, NOW/MO, TYPE hidden. --output wide shows every column "
        "whole; --columns picks them."
    )


def test_at_any_width_name_finding_target_and_net_stay_and_rows_follow_net(
    analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host is named (by its id where it has no Name tag), with its finding, target and net saving: the figure the
    rows are sorted by is never the one hidden."""
    for columns in (50, 60, 70):
        monkeypatch.setenv("COLUMNS", str(columns))

        lines = run("analyze", "--color", "off").lines

        assert {"NAME", "FINDING", "TARGET", "NET/MO"} <= set(lines[0].split()), columns
        assert columns > 50 or lines[0].split() == ["NAME", "FINDING", "TARGET", "NET/MO"]
        assert max(len(line) for line in lines) <= columns
        rows = [line for line in lines[2:] if line and not line.startswith(" ") and "$" in line]
        nets = [Decimal(row.split("$")[-1].replace(",", "").rstrip("…")) for row in rows[:3]]
        assert nets == sorted(nets, reverse=True)


def test_long_resource_ids_are_shortened_in_the_middle_before_columns_go() -> None:
    rec = replace(recommendation(9, name="chat"), instance_id="sagemaker-endpoint/chat-summarizer/AllTraffic")
    report = build_report([rec], NOW, 14)

    lines = render_table(report, width=118).splitlines()

    assert lines[2].startswith("sagemaker…llTraffic  chat")
    assert "long ids shortened" in " ".join(lines)
    assert "sagemaker-endpoint/chat-summarizer/AllTraffic" in render_table(report, width=None)


def test_output_wide_shows_every_column_whole(
    analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")

    result = run("analyze", "--output", "wide")

    header = result.lines[0].split()
    assert header == [
        "ACCOUNT", "INSTANCE", "NAME", "REGION", "TEAM", "TYPE", "FINDING", "TARGET", "NOW/MO", "NET/MO", "SAVES/MO",
        "CONF", "ACT", "14", "DAYS",
    ]  # fmt: skip
    assert LONG_NAME in result.out and "…" not in result.out and "To fit" not in result.out


def test_columns_picks_the_columns_in_order(
    analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")

    result = run("analyze", "--columns", "net,name,target")

    assert result.lines[0].split() == ["NET/MO", "NAME", "TARGET"]
    assert result.lines[2].split()[:2] == ["$8,935.20", "training-2"]
    assert_one_error(run("analyze", "--columns", "name,price"), 2, "--columns: no column price", "instance, name")
    assert_one_error(run("analyze", "--output", "json", "--columns", "name"), 2, "--columns applies to")


@pytest.mark.parametrize("columns", [60, 80, 100, 132, 250])
def test_the_table_fits_the_terminal(monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    out = Terminal()

    write_report(the_report(), Output("table", width=columns), out)

    assert max(len(line) for line in out.getvalue().splitlines()) <= columns
    assert {"NAME", "FINDING", "TARGET", "NET/MO"} <= set(out.getvalue().splitlines()[0].split())


def test_a_file_gets_every_value_whole(analysed: list[argparse.Namespace]) -> None:
    result = run("analyze")  # stdout is no terminal and COLUMNS is unset

    assert "…" not in result.out and "..." not in result.out
    assert LONG_NAME in result.out and LONG_REASON in result.out
    assert "14 DAYS" in result.lines[0]
    assert not ANSI.search(result.out)


def test_a_terminal_gets_names_cut_to_the_column(
    analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")

    result = run("analyze", "--color", "off")

    assert LONG_NAME not in result.out and LONG_NAME[:19] + "…" in result.out


# ---------------------------------------------------------------------------------------------
# colour


def colours(*args: str, terminal: bool = True) -> bool:
    out = Terminal() if terminal else io.StringIO()
    result = run("analyze", *args, stdout=out)
    assert result.code == 0, result.err
    return bool(ANSI.search(result.out))


def test_colour_on_a_terminal_by_default(analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")

    assert colours() is True
    assert colours(terminal=False) is False
    assert colours("--color", "off") is False
    assert colours("--color", "on", terminal=False) is True


@pytest.mark.parametrize(("variable", "value"), [("NO_COLOR", "1"), ("TERM", "dumb")])
def test_no_color_and_a_dumb_terminal_turn_auto_off_and_on_still_wins(
    analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv(variable, value)

    assert colours() is False
    assert colours("--color", "auto") is False
    assert colours("--color", "on") is True


def test_an_empty_no_color_is_unset(analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "")

    assert colours() is True


def test_colour_never_changes_the_json(analysed: list[argparse.Namespace]) -> None:
    out = Terminal()
    assert not ANSI.search(run("analyze", "--output", "json", "--color", "on", stdout=out).out)


# ---------------------------------------------------------------------------------------------
# progress


def test_progress_on_a_terminal_is_richs_and_every_bar_finishes() -> None:
    err = Terminal()
    shown = progress(err, enabled=True, color=False)

    shown.stage("reading EC2", 3)
    shown.advance()
    shown.stage("reading CloudWatch", 4)
    shown.advance(2)
    shown.close()

    text = ANSI.sub("", err.getvalue())
    assert isinstance(shown, RichProgress)
    assert "reading EC2" in text and "3/3" in text
    assert "reading CloudWatch" in text and "4/4" in text


def test_progress_elsewhere_is_one_line_per_stage_and_nothing_with_no_progress() -> None:
    err = io.StringIO()
    lines = progress(err, enabled=True)
    lines.stage("connecting to AWS in us-east-1", 1)
    lines.advance()
    lines.close()
    quiet = io.StringIO()
    progress(quiet, enabled=False).stage("connecting", 1)

    assert err.getvalue() == "rightsizer: connecting to AWS in us-east-1...\n"
    assert quiet.getvalue() == ""


def test_progress_without_rich_falls_back_to_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def without_rich(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("rich"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_rich)
    err = Terminal()

    progress(err, enabled=True).stage("reading", 2)

    assert err.getvalue() == "rightsizer: reading...\n"


# ---------------------------------------------------------------------------------------------
# the command line


def test_bare_rightsizer_prints_the_help_and_exits_0() -> None:
    result = run()

    assert result.code == 0 and result.err == ""
    assert result.out.startswith("usage: rightsizer")
    for verb in cli_main.verbs():
        assert re.search(rf"^\s+{verb}\b", result.out, re.MULTILINE), verb


def test_every_verb_has_help_with_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli_main.build_parser()
    for name in cli_main.verbs():
        with pytest.raises(SystemExit) as done:
            parser.parse_args([name, "--help"])
        assert done.value.code == 0
        assert f"usage: rightsizer {name}" in capsys.readouterr().out


def test_an_unknown_verb_is_one_line_and_exit_2() -> None:
    assert_one_error(run("analyse"), 2, "invalid choice", "rightsizer --help")


def test_a_bad_option_names_the_verbs_help() -> None:
    assert_one_error(run("show", "--nope", "i-1"), 2, "rightsizer show --help")


def test_an_unexpected_error_is_one_line_unless_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(args: argparse.Namespace, err: TextIO, **options: Any) -> LiveReport:
        raise RuntimeError("boom")

    monkeypatch.setattr(analysis, "live_report", broken)

    assert_one_error(run("analyze"), 1, "unexpected RuntimeError: boom", "--debug")
    with pytest.raises(RuntimeError):
        run("analyze", "--debug")


# ---------------------------------------------------------------------------------------------
# show, against a live analysis


@pytest.mark.parametrize("host", ["i-00000000000000002", "I-00000000000000002", "training-2"])
def test_show_finds_a_host_by_id_or_name(analysed: list[argparse.Namespace], host: str) -> None:
    result = run("show", host)

    assert result.code == 0, result.err
    assert result.lines[0] == "training-2 (i-00000000000000002)"
    assert "FINDING  idle" in result.out and "Why:" in result.out and "Evidence (14 days):" in result.out
    assert "all 4 GPUs are unused" in result.out


def test_show_as_json_is_the_recommendations_document(analysed: list[argparse.Namespace]) -> None:
    document = json.loads(run("show", "training-2", "--output", "json").out)
    listed = next(r for r in report_json(the_report())["recommendations"] if r["instance_id"] == "i-00000000000000002")

    assert {key: value for key, value in document.items() if key in listed} == json.loads(json.dumps(listed))
    assert document["decisions"] == [] and document["approval"] is None


def test_show_with_a_query(analysed: list[argparse.Namespace]) -> None:
    result = run("show", "training-2", "--output", "text", "--query", "[finding, evidence.busy_units]")

    assert result.out == "idle\t1\n"


def test_show_of_an_unknown_host_lists_close_names(analysed: list[argparse.Namespace]) -> None:
    line = assert_one_error(run("show", "trainng-2"), 1, "no recommendation for 'trainng-2'")

    assert "did you mean" in line and "training-2" in line


def test_show_of_nothing_like_a_host_says_why_it_may_be_missing(analysed: list[argparse.Namespace]) -> None:
    assert_one_error(run("show", "zzz"), 1, "no recommendation for 'zzz'", "may not be a GPU host")


def test_a_name_two_hosts_share_asks_for_an_id(monkeypatch: pytest.MonkeyPatch) -> None:
    twins = build_report([recommendation(1, name="gpu"), recommendation(2, name="gpu")], NOW, 14)
    monkeypatch.setattr(analysis, "live_report", lambda args, err, **options: LiveReport(twins))

    assert_one_error(run("show", "gpu"), 1, "2 hosts are named 'gpu'", "i-00000000000000001", "instance id")


# ---------------------------------------------------------------------------------------------
# act --dry-run against a live analysis: this checkout's definition


def test_act_dry_run_after_a_live_analysis_reads_the_checkouts_definition(analysed: list[argparse.Namespace]) -> None:
    result = run("act", "training-2", "--dry-run", "--region", "us-east-1", "--output", "json")

    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["definition"].endswith("statemachine/resize.asl.json")
    assert [call["api"] for call in document["calls"] if call["effect"] == "changes"] == ["ec2:StopInstances"]
    assert document["execution_input"]["action_role_arn"] == f"arn:aws:iam::{ACCOUNT}:role/GpuRightsizerAction"


def test_act_without_dry_run_refuses_before_any_aws_call(analysed: list[argparse.Namespace]) -> None:
    assert_one_error(run("act", "training-2"), 2, "the CLI does not act")
    assert analysed == []


def test_a_missing_definition_file_is_a_usage_error_before_any_aws_call(
    analysed: list[argparse.Namespace], tmp_path: Path
) -> None:
    result = run("act", "training-2", "--dry-run", "--definition", str(tmp_path / "none.json"))

    assert_one_error(result, 2, "no state machine definition", "--stack")
    assert analysed == []


def test_removing_a_schedule_needs_the_stack() -> None:
    assert_one_error(run("act", "training-2", "--dry-run", "--remove-schedule"), 2, "--stack")


def test_time_zones_say_where_schedules_run_as_a_deployments_settings_do() -> None:
    """--time-zone ZONE is ScheduleTimezone, TEAM=ZONE TeamTimeZones: the analysis prices schedules there."""
    args = cli_main.build_parser().parse_args(
        ["analyze", "--region", "us-east-1", "--time-zone", "Asia/Tokyo", "--time-zone", "notebooks=Europe/Berlin"]
    )

    settings = _settings(args, ["us-east-1"], ())

    assert settings.policy.time_zones.of("notebooks") == "Europe/Berlin"
    assert settings.policy.time_zones.of("") == settings.policy.time_zones.of("ads") == "Asia/Tokyo"
    with pytest.raises(UsageError, match="--time-zone research=Mars/Olympus: 'Mars/Olympus' is not an IANA"):
        time_zones(["research=Mars/Olympus"])


# ---------------------------------------------------------------------------------------------
# showback and filters (services.showback, as the daily report and /gpu top)


def test_group_by_prints_each_groups_money_and_the_hosts_behind_it(
    analysed: list[argparse.Namespace], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")

    result = run("analyze", "--group-by", "region", "--color", "off")
    document = json.loads(run("analyze", "--group-by", "region", "--output", "json").out)

    assert result.lines[0].split() == ["REGION", "RESOURCES", "SPEND/MO", "WASTE/MO", "NET", "SAVINGS/MO"]
    assert result.lines[2].split() == ["us-east-1", "5", "$20,949.58", "$14,835.16", "$12,835.16"]
    assert result.lines[3].strip().startswith("behind it: training-2 $8,935.20, ")
    assert "training-5 $0.00 net ($2,000.00 wasted at list price)" in result.lines[3]
    assert document["showback"]["group_by"] == "region"
    assert [group["key"] for group in document["showback"]["groups"]] == ["us-east-1"]
    assert len(document["recommendations"]) == 5  # the JSON keeps every recommendation beside the groups


def test_filters_narrow_the_report_and_its_totals_and_say_so(analysed: list[argparse.Namespace]) -> None:
    document = json.loads(
        run("analyze", "--finding", "overprovisioned", "--min-savings", "1000", "--output", "json").out
    )
    table = run("analyze", "--finding", "overprovisioned", "--min-savings", "1000")

    assert [rec["instance_id"] for rec in document["recommendations"]] == ["i-00000000000000001"]
    assert document["totals"]["savings_recommendations"] == 1
    assert document["filters"] == "finding overprovisioned; net savings of at least $1,000.00/month"
    assert (
        "Only finding overprovisioned; net savings of at least $1,000.00/month: the totals are those of what is "
        in (" ".join(table.lines))
    )
    assert_one_error(run("analyze", "--finding", "busy"), 2, "no finding 'busy'")
    assert_one_error(run("analyze", "--group-by", "colour"), 2, "cannot group by 'colour'")
    assert_one_error(run("analyze", "--tag", "env"), 2, "tag 'env' is not KEY=VALUE")
