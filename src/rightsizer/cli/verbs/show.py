"""`rightsizer show HOST`: one host's advice, evidence and reasons (like `/gpu show`), from a live analysis or, with
--stack, from what the deployed bot stored, with what people decided in Slack.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from rightsizer.cli import analysis
from rightsizer.cli.deployment import aws_errors, open_deployment
from rightsizer.cli.errors import EXIT_OK, print_warnings
from rightsizer.cli.hosts import analysed, find_host, stored_host
from rightsizer.cli.options import Verb, add_connection_options, add_where_options
from rightsizer.cli.output.document import Output, add_output_options, write_document
from rightsizer.domain.findings import FINDINGS
from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.scope import ActionScope
from rightsizer.services.formatting import printable, spark_label, sparkline, usd
from rightsizer.services.report import money_phrase, recommendation_json

if TYPE_CHECKING:
    from rightsizer.services.ports import Approval, Decision


@dataclass(frozen=True)
class HostView:
    """One host's advice as `show` prints it, and what people decided about it (a deployment only)."""

    rec: Recommendation
    scope: ActionScope | None
    managed_tag_key: str
    decisions: tuple[Decision, ...] = ()
    approval: Approval | None = None

    def json(self) -> dict[str, Any]:
        from rightsizer.adapters.codec import to_jsonable

        document = recommendation_json(self.rec, self.scope, self.managed_tag_key)
        document["decisions"] = [to_jsonable(decision) for decision in self.decisions]
        document["approval"] = None if self.approval is None else to_jsonable(self.approval)
        return document


def _show_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", metavar="INSTANCE_OR_NAME", help="an instance id, a resource id or a Name tag")
    add_where_options(parser, stack=True)
    add_output_options(parser, table="the advice, its evidence and reasons")
    add_connection_options(parser)


def _show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    output = Output.of(args, out)
    if args.stack:
        deployment = open_deployment(args)
        rec = stored_host(deployment, args.host)
        settings = deployment.settings
        now = datetime.now(UTC)
        with aws_errors(deployment.stack.region):
            decisions = tuple(deployment.store.decisions_about(rec, now))
            approval = deployment.store.approval(rec.recommendation_id)
        view = HostView(rec, settings.report_scope, settings.managed_tag_key, decisions, approval)
        warnings: Sequence[str] = ()
    else:
        live = analysis.live_report(args, err, color=output.color)
        rec = find_host(live.report.recommendations, args.host, analysed(args), live.elsewhere)
        view = HostView(rec, live.report.action_scope, live.report.managed_tag_key)
        warnings = live.warnings
    write_document(view.json(), output, out, table=lambda: host_text(view, output.width))
    out.flush()
    print_warnings(err, warnings)
    return EXIT_OK


def host_text(view: HostView, width: int | None = None) -> str:
    """`show` for people: what the host is, the advice, why, the evidence, and what people decided."""
    rec, document = view.rec, view.json()
    name = printable(rec.instance_name)
    target = f" → {rec.target_type}" if rec.target_type else ""
    act = document["not_actionable_reason"]
    lines = [
        f"{name} ({rec.instance_id})" if name else rec.instance_id,
        f"{rec.instance_type} in {rec.region}, account {rec.account_id} ({rec.state})",
        "",
        f"FINDING  {FINDINGS[rec.finding].label}{target} (confidence {rec.confidence.value})",
        f"COST     {usd(rec.monthly_cost)}/month now, {usd(rec.monthly_cost_after)}/month after",
        f"MONEY    {money_phrase(rec.monthly_savings, rec.net_savings)}",
        f"ACT      {'yes: ' + str(document['action']) + ' with one click in Slack' if act is None else 'no'}",
    ]
    if act is not None:
        lines.extend(_wrapped(printable(act), width, "         "))
    lines += ["", "Why:"]
    for reason in rec.reasons:
        lines.extend(_wrapped(printable(reason), width, "  - ", "    "))
    daily = rec.evidence.daily_trace
    if daily:
        lines.append(
            f"{spark_label(rec.evidence, len(daily)).capitalize()}, oldest first (0-100 %): {sparkline(daily)}"
        )
    lines += ["", f"Evidence ({rec.lookback_days} days):"]
    evidence = {key: value for key, value in document["evidence"].items() if value not in (None, [], "")}
    lines.extend(f"  {key:<28} {_value(value)}" for key, value in evidence.items())
    if rec.alternatives:
        lines += ["", "Alternatives:"]
        for alt in rec.alternatives:
            note = f"{alt.instance_type} {usd(alt.monthly_cost)}/month ({alt.confidence.value}): {printable(alt.note)}"
            lines.extend(_wrapped(note, width, "  - ", "    "))
    lines.extend(_decision_lines(view))
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    return printable(json.dumps(value) if isinstance(value, list | dict) else str(value))


def _wrapped(text: str, width: int | None, first: str, rest: str | None = None) -> list[str]:
    """`text` after `first`, wrapped to a terminal's width only (a file gets it whole)."""
    if width is None:
        return [first + text]
    return textwrap.wrap(text, max(20, width), initial_indent=first, subsequent_indent=rest or first) or [first]


def _decision_lines(view: HostView) -> list[str]:
    lines = [
        f"{decision.kind.value} by {decision.actor} at {decision.at:%Y-%m-%d %H:%M} UTC"
        + (f" until {decision.until:%Y-%m-%d %H:%M} UTC" if decision.until else "")
        for decision in view.decisions
    ]
    if view.approval is not None:
        approval = view.approval
        lines.append(
            f"{approval.action.value} approved by {approval.approver} at {approval.approved_at:%Y-%m-%d %H:%M} UTC: "
            f"{approval.status.value}" + (f" ({printable(approval.detail)})" if approval.detail else "")
        )
    return ["", "In Slack:", *(f"  {line}" for line in lines)] if lines else []


VERB = Verb(
    "show",
    "one host's advice, evidence and reasons (like /gpu show)",
    "One host's advice, its evidence and reasons: from a live analysis (as analyze), or with --stack the "
    "latest recommendation the deployed bot stored, with what people decided in Slack. The host is an "
    "instance id, a resource id (sagemaker-endpoint/<name>/<variant>) or a Name tag.",
    _show_options,
    _show,
)
