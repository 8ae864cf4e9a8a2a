"""Block Kit messages of the Slack app: daily report, command answers, button outcomes.

Built with `slack_sdk.models.blocks` so that Slack's per-element limits (3000-character sections, 75-character
button text, 2000-character values, 10 fields) fail in our tests at `to_dict()` instead of in Slack. The one limit
the models do not check, 50 blocks per message, is enforced here by `paginate`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from rightsizer.domain.actions import ACTIONS
from rightsizer.domain.approval import ApprovalStatus, retryable
from rightsizer.domain.findings import ATTENTION, FINDINGS, NO_METRICS, Finding, advised_action
from rightsizer.domain.models.advice import DecisionKind, Recommendation
from rightsizer.domain.policy import DEFAULT_MANAGED_TAG_KEY
from rightsizer.domain.scope import REPORT_ONLY, ActionScope
from rightsizer.services.approvals import action_risks, hidden_by, needs_capacity_confirmation, split_hidden
from rightsizer.services.formatting import printable, shorten, spark_label, sparkline, usd
from rightsizer.services.ports import Approval, Decision, ScheduleRecord
from rightsizer.services.report import (
    FleetReport,
    Totals,
    actions_off,
    count_sentence,
    fleet_totals,
    money_phrase,
    money_sentences,
    one_click,
    outside,
    scope_sentence,
    untagged_refusal,
)
from rightsizer.services.showback import Filters, Showback, host_words
from rightsizer.services.since import AdviceChange, SinceLastTime

NO_FILTERS = Filters()

MAX_BLOCKS = 50  # Slack rejects longer messages; slack_sdk does not check it
SECTION_TEXT_MAX = 3000
CONTEXT_TEXT_MAX = 2000
MAX_TOP = 25  # `/gpu top N`: two ephemeral messages at most

ACTION_APPROVE = "rightsizer_approve"
# Approving a stop or schedule of a scarce type (p4d, p5, trn...): a button of its own, so the server knows the
# approver saw that restart capacity is not guaranteed (a plain Approve of such advice is refused).
ACTION_APPROVE_SCARCE = "rightsizer_approve_capacity_risk"
ACTION_DISMISS = "rightsizer_dismiss"
ACTION_SNOOZE = "rightsizer_snooze"
ACTION_REMOVE_SCHEDULE = "rightsizer_remove_schedule"
SNOOZE_BUTTON_DAYS = 7

AGENT_POINTER = "install the CloudWatch agent with its NVIDIA GPU plugin (agent/README.md)"
CONFIRM_TEXT_MAX = 300  # Slack's limit for a confirmation dialog's text
CAPACITY_HELD = "Restart capacity is held for it by capacity reservation {reservation}."


@dataclass(frozen=True)
class Message:
    """One Slack message: `text` is the notification / accessibility fallback of `blocks`."""

    text: str
    blocks: tuple[Block, ...]

    def payload(self) -> dict[str, Any]:
        """Keyword arguments for chat.postMessage / respond(); raises SlackObjectFormationError past a limit."""
        if len(self.blocks) > MAX_BLOCKS:
            raise ValueError(f"{len(self.blocks)} blocks: Slack accepts at most {MAX_BLOCKS} per message")
        return {"text": self.text, "blocks": [block.to_dict() for block in self.blocks]}


# ---------------------------------------------------------------------------------------------
# text helpers


def escape(text: str) -> str:
    """Slack mrkdwn control characters; tag values come from EC2 users and must not mention @channel."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clean(text: str) -> str:
    """Text from EC2 users (names, tags, reasons quoting them), safe inside mrkdwn."""
    return escape(printable(text))


def _md(text: str) -> MarkdownTextObject:
    return MarkdownTextObject(text=text)


def _section(text: str, block_id: str | None = None) -> SectionBlock:
    return SectionBlock(text=_md(shorten(text, SECTION_TEXT_MAX)), block_id=block_id)


def _context(*texts: str, block_id: str | None = None) -> ContextBlock:
    return ContextBlock(elements=[_md(shorten(text, CONTEXT_TEXT_MAX)) for text in texts[:10]], block_id=block_id)


def label(rec: Recommendation) -> str:
    name = shorten(printable(rec.instance_name), 60)
    return f"*{escape(name)}* `{rec.instance_id}`" if name else f"`{rec.instance_id}`"


def finding_label(finding: Finding) -> str:
    return FINDINGS[finding].label


def target_text(rec: Recommendation) -> str:
    """What the advice does to the host (its action's words, whether or not one click may carry it out)."""
    action = advised_action(rec.finding, rec.target_type, rec.kind)
    if action is not None:
        return f"`{rec.instance_type}` → {ACTIONS[action].target_text.format(target=rec.target_type)}"
    if rec.consolidation is not None:
        keep = ", ".join(f"`{i}`" for i in rec.consolidation.keep)
        return f"`{rec.instance_type}` → consolidate onto {keep}"
    return f"`{rec.instance_type}`"


def money_text(rec: Recommendation) -> str:
    """What the bill drops by (what the report ranks on), with the list-price savings beside it where a reservation
    or plan pays for the host."""
    return money_phrase(rec.monthly_savings, rec.net_savings, _bold)


def spark_text(rec: Recommendation) -> str:
    daily = rec.evidence.daily_trace[-14:]
    if not daily or all(value is None for value in daily):
        return "no GPU utilisation data"
    return f"`{sparkline(daily)}` {spark_label(rec.evidence, len(daily))}"


def why_line(rec: Recommendation) -> str:
    return escape(shorten(printable(rec.reasons[0]), 280)) if rec.reasons else finding_label(rec.finding)


def _execution_name(execution_arn: str) -> str:
    return execution_arn.rsplit(":", 1)[-1] if execution_arn else "(starting)"


# ---------------------------------------------------------------------------------------------
# one recommendation


def section_id(rec: Recommendation) -> str:
    return f"rec:{rec.recommendation_id}"


def actions_id(recommendation_id: str) -> str:
    return f"act:{recommendation_id}"


def recommendation_section(rec: Recommendation) -> SectionBlock:
    text = (
        f"{label(rec)} · {rec.region} · {rec.account_id}\n"
        f"{target_text(rec)} · {money_text(rec)} · {rec.confidence.value} confidence · {finding_label(rec.finding)}\n"
        f"_{why_line(rec)}_\n"
        f"{spark_text(rec)}"
    )
    return _section(text, block_id=section_id(rec))


def capacity_at_risk(rec: Recommendation) -> bool:
    """Stopping (or scheduling) a scarce type whose restart capacity nothing holds: the host is in no On-Demand
    Capacity Reservation or Capacity Block. Such advice takes the button that names the risk."""
    return needs_capacity_confirmation(rec)


def _capacity_held(rec: Recommendation) -> str:
    """Reassurance where a stop's restart capacity is held: said where a risk would otherwise be."""
    if rec.action is None or not ACTIONS[rec.action].stops_host or not rec.capacity_reservation:
        return ""
    return f" {CAPACITY_HELD.format(reservation=rec.capacity_reservation)}"


def change_words(rec: Recommendation) -> str:
    """What approving does, in the action's words; a schedule as the pair it creates (zone, margins) where the
    analysis priced that pair, else the busy hours."""
    if rec.action is None:
        raise ValueError(f"{rec.recommendation_id} offers no one-click action")
    schedule = rec.evidence.schedule_plan or rec.evidence.schedule
    return ACTIONS[rec.action].confirm_text.format(type=rec.instance_type, target=rec.target_type, schedule=schedule)


def risk_words(risks: Sequence[str]) -> str:
    return "".join(f" ⚠ Risk: {risk}." for risk in risks)


def approve_confirm(rec: Recommendation) -> ConfirmObject:
    """The Approve button's confirmation: the change, its money and every risk (services.approvals.action_risks), in
    Slack's 300 characters. The risks are never the part cut: the name goes first, then the change's detail, and past
    that the risks the dialog has no room for are counted and pointed to."""
    if rec.action is None:
        raise ValueError(f"{rec.recommendation_id} offers no one-click action to confirm")
    spec = ACTIONS[rec.action]
    shown = printable(rec.instance_name)
    name = f" ({shorten(shown, 40)})" if shown else ""
    words = money_phrase(rec.monthly_savings, rec.net_savings, detail=False)
    money = f"{words[:1].upper()}{words[1:]}."
    risks = action_risks(rec)
    held = _capacity_held(rec)
    brief = f"{rec.instance_id}: {spec.name}, {rec.instance_type} → {spec.becomes.format(target=rec.target_type)}."
    tries = (
        f"{rec.instance_id}{name}: {change_words(rec)} {money}{held}{risk_words(risks)}",
        f"{rec.instance_id}: {change_words(rec)} {money}{held}{risk_words(risks)}",
        f"{brief} {money}{held}{risk_words(risks)}",
        f"{brief} {money}{risk_words(risks)}",
    )
    text = next((t for t in tries if len(t) <= CONFIRM_TEXT_MAX), None)
    for kept in range(len(risks) - 1, -1, -1):
        if text is not None:
            break
        more = f" ⚠ And {len(risks) - kept} more risk(s): /gpu show {rec.instance_id} lists them."
        text = f"{brief} {money}{risk_words(risks[:kept])}{more}"
        text = text if len(text) <= CONFIRM_TEXT_MAX else None
    return ConfirmObject(
        title=PlainTextObject(text=spec.confirm_title),
        text=PlainTextObject(text=shorten(text or tries[-1], CONFIRM_TEXT_MAX)),
        confirm=PlainTextObject(text=spec.confirm_button),
        deny=PlainTextObject(text="Cancel"),
    )


def recommendation_actions(rec: Recommendation, scope: ActionScope | None = None) -> ActionsBlock:
    # The value carries only the id: the server reloads the recommendation and never trusts the message.
    # Approve only where the instance workflow can act: it reaches the host, and the host carries the managed tag.
    buttons: list[ButtonElement] = []
    if one_click(rec, scope) and rec.action is not None:
        scarce = capacity_at_risk(rec)
        approve = ACTIONS[rec.action].approve_label
        label = f"{approve} (capacity risk)" if scarce else approve
        buttons.append(
            ButtonElement(
                text=label,
                action_id=ACTION_APPROVE_SCARCE if scarce else ACTION_APPROVE,
                value=rec.recommendation_id,
                style="danger" if scarce else "primary",
                confirm=approve_confirm(rec),
            )
        )
    buttons.append(ButtonElement(text="Dismiss", action_id=ACTION_DISMISS, value=rec.recommendation_id))
    buttons.append(
        ButtonElement(text=f"Snooze {SNOOZE_BUTTON_DAYS} days", action_id=ACTION_SNOOZE, value=rec.recommendation_id)
    )
    return ActionsBlock(elements=buttons, block_id=actions_id(rec.recommendation_id))


def out_of_scope_note(rec: Recommendation, scope: ActionScope | None) -> ContextBlock | None:
    """Why advice with a one-click action has no Approve button: the instance workflow cannot reach the host."""
    if scope is None or rec.action is None:
        return None
    refusal = scope.refusal(rec.instance_id, rec.account_id, rec.region)
    return None if refusal is None else _context(f":information_source: No Approve button: {refusal}.")


def untagged_note(rec: Recommendation, scope: ActionScope | None, managed_tag_key: str) -> ContextBlock | None:
    """Why advice the workflow reaches has no Approve button: the host lacks the managed tag; the command that
    adds it. The Approve handler refuses such a host in the same words."""
    if rec.action is None or outside(rec, scope):
        return None
    refusal = untagged_refusal(rec, managed_tag_key)
    return None if refusal is None else _context(f":label: No Approve button: {escape(refusal)}.")


def recommendation_blocks(
    rec: Recommendation,
    scope: ActionScope | None = None,
    managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY,
    approval: Approval | None = None,
) -> list[Block]:
    """The advice and its buttons. Advice someone already approved shows the approval's state where the buttons
    were (in the block that held them, so later edits find it); they come back only when an approver may try
    again (`/gpu show` follows the same rule)."""
    section = recommendation_section(rec)
    if approval is not None and approval.recommendation_id == rec.recommendation_id:
        state = approval_state(approval)
        if not retryable(approval.status):
            return [section, _context(state, block_id=actions_id(rec.recommendation_id))]
        return [section, _context(state), *recommendation_blocks(rec, scope, managed_tag_key)[1:]]
    blocks: list[Block] = [section, recommendation_actions(rec, scope)]
    note = out_of_scope_note(rec, scope) or untagged_note(rec, scope, managed_tag_key)
    if note is not None:
        blocks.append(note)
    return blocks


# What an approval's state means to someone reading the report, by status.
APPROVAL_STATES: Mapping[ApprovalStatus, str] = {
    ApprovalStatus.PENDING: ":hourglass_flowing_sand: starting",
    ApprovalStatus.START_FAILED: ":warning: not started yet (the workflow could not be started; it is started again)",
    ApprovalStatus.RUNNING: ":hourglass_flowing_sand: running",
    ApprovalStatus.SUCCEEDED: ":white_check_mark: done",
    ApprovalStatus.ROLLED_BACK: ":leftwards_arrow_with_hook: failed and rolled back",
    ApprovalStatus.UNCHANGED: ":x: failed before anything changed",
    ApprovalStatus.REFUSED: ":no_entry_sign: refused by the workflow's checks",
    ApprovalStatus.FAILED: ":rotating_light: failed: a person must look at the host",
}


def approval_state(approval: Approval) -> str:
    """One line: what was approved, by whom, and where it stands."""
    spec = ACTIONS[approval.action]
    again = " · an approver may try again: Approve below" if retryable(approval.status) else ""
    return (
        f"{APPROVAL_STATES[approval.status]}: {spec.name.lower()} approved by <@{approval.approver}> on "
        f"{approval.approved_at:%Y-%m-%d %H:%M} UTC (attempt {approval.attempt}){again}"
    )


def recommendation_ids_in(blocks: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The recommendations whose buttons (or their resolved notes) a message holds."""
    prefix = actions_id("")
    return tuple(str(b["block_id"])[len(prefix) :] for b in blocks if str(b.get("block_id") or "").startswith(prefix))


# ---------------------------------------------------------------------------------------------
# pagination


def paginate(groups: Sequence[Sequence[Block]], limit: int = MAX_BLOCKS) -> list[list[Block]]:
    """Pack groups of blocks into pages of at most `limit` blocks, never splitting a group, dropping nothing."""
    pages: list[list[Block]] = []
    page: list[Block] = []
    for group in groups:
        if len(group) > limit:
            raise ValueError(f"a group of {len(group)} blocks cannot fit a {limit}-block message")
        if page and len(page) + len(group) > limit:
            pages.append(page)
            page = []
        page.extend(group)
    if page:
        pages.append(page)
    return pages


def _host_line(rec: Recommendation) -> str:
    shown = printable(rec.instance_name)
    name = f" {escape(shorten(shown, 50))}" if shown else ""
    return f"• `{rec.instance_id}`{name} (`{rec.instance_type}`, {rec.region}, {rec.account_id})"


def insufficient_data_groups(recs: Sequence[Recommendation]) -> list[list[Block]]:
    """The hosts without GPU metrics, as sections that each stay under Slack's 3000 characters."""
    if not recs:
        return []
    intro = f"*{len(recs)} host(s) send no GPU metrics*, so they cannot be sized: {AGENT_POINTER}."
    groups: list[list[Block]] = [[_section(intro)]]
    lines: list[str] = []
    size = 0
    for rec in recs:
        line = _host_line(rec)
        if lines and size + len(line) + 1 > SECTION_TEXT_MAX:
            groups.append([_section("\n".join(lines))])
            lines, size = [], 0
        lines.append(line)
        size += len(line) + 1
    groups.append([_section("\n".join(lines))])
    return groups


# ---------------------------------------------------------------------------------------------
# reports


# The active snoozes and dismissals people made in Slack.
Hiding = Collection[Decision]


@dataclass(frozen=True)
class ReportView:
    """What a report shows once people's decisions are applied."""

    report: FleetReport
    listed: tuple[Recommendation, ...]  # attention findings, visible, by savings
    hidden: tuple[Recommendation, ...]  # snoozed or dismissed
    no_data: tuple[Recommendation, ...]  # insufficient data, visible
    totals: Totals  # of every visible recommendation: the same function the CLI's totals come from
    scope: ActionScope | None = None  # where one click can act

    @classmethod
    def of(
        cls,
        report: FleetReport,
        decisions: Hiding,
        now: datetime | None = None,
        scope: ActionScope | None = None,
        hidden_elsewhere: Iterable[Recommendation] = (),
    ) -> ReportView:
        """`hidden_elsewhere`: for the head of a larger fleet (a ranking), the hidden recommendations that are
        not among its own; the fleet's totals less all hidden ones are the visible totals."""
        at = now or report.generated_at
        visible, hidden = split_hidden(report.recommendations, list(decisions), at)
        relevant = (*ATTENTION, *NO_METRICS)
        if report.fleet is None:
            totals = fleet_totals(visible, scope or report.action_scope)
        else:
            every_hidden = {rec.recommendation_id: rec for rec in (*hidden, *hidden_elsewhere)}
            hidden = list(every_hidden.values())
            totals = (report.fleet - fleet_totals(hidden, scope or report.action_scope, rounded=False)).rounded()
        return cls(
            report=report,
            listed=tuple(r for r in visible if r.finding in ATTENTION),
            hidden=tuple(r for r in hidden if r.finding in relevant),
            no_data=tuple(r for r in visible if r.finding in NO_METRICS),
            totals=totals,
            scope=scope,
        )

    @property
    def listed_count(self) -> int:
        """Visible recommendations that ask for a decision, in the whole fleet."""
        return self._count(ATTENTION)

    @property
    def no_data_count(self) -> int:
        return self._count(NO_METRICS)

    def _count(self, findings: Iterable[Finding]) -> int:
        return sum(self.totals.by_finding.get(finding.value, 0) for finding in findings)


def _bold(text: str) -> str:
    return f"*{text}*"


def summary_text(view: ReportView) -> str:
    totals = view.report.totals
    if not totals.instances:
        return "No GPU, Inferentia or Trainium instances were found."
    lines = []
    if view.listed or view.totals.other_owner_count:
        lines.extend(money_sentences(view.totals, _bold, view.report.managed_tag_key))
    else:
        lines.append("Nothing to act on: every host is right-sized, decided on, or waiting for data.")
    lines.append(f"Fleet: {count_sentence(totals)}, analysed over {view.report.lookback_days} days.")
    scope = scope_sentence(view.scope or view.report.action_scope)
    if scope:
        lines.append(scope)
    if view.hidden:
        lines.append(f"{len(view.hidden)} recommendation(s) hidden because they were snoozed or dismissed.")
    return "\n".join(lines)


def counts_text(report: FleetReport) -> str:
    counts = report.totals.by_finding
    parts = [f"{spec.label}: *{counts.get(f.value, 0)}*" for f, spec in FINDINGS.items() if counts.get(f.value, 0)]
    return "Findings · " + " · ".join(parts) if parts else "Findings · none"


SINCE_NAMED = 3  # changes of each kind the report's "since" section names; the page names more


def _change_names(changes: Sequence[AdviceChange], count: int, words: Callable[[AdviceChange], str]) -> str:
    named = ", ".join(words(change) for change in changes[:SINCE_NAMED])
    more = count - min(len(changes), SINCE_NAMED)
    return named + (f" and {more} more" if more > 0 else "")


def _moved(count: int, ids: Sequence[str], verb: str) -> str:
    """ "2 came (`i-1`, `i-2`)": how many hosts came (or went), the first named."""
    named = ", ".join(f"`{escape(printable(i))}`" for i in ids[:SINCE_NAMED])
    more = count - min(len(ids), SINCE_NAMED)
    return f"{count} {verb}" + (f" ({named}{f' and {more} more' if more > 0 else ''})" if named else "")


def since_text(since: SinceLastTime) -> str | None:
    """What the daily report opens with: what changed since the previous run. None before there was one."""
    if not since.compared:
        return None
    lines = [f"*Since {escape(since.previous_run)}*"]
    if since.quiet:
        lines.append("• no new waste, nothing resolved, no host came or went")
    if since.new_waste_count:
        named = _change_names(
            since.new_waste,
            since.new_waste_count,
            lambda c: f"{_clean(c.name or c.resource_id)} ({finding_label(c.finding)}, {usd(c.net)})",
        )
        lines.append(f"• *{since.new_waste_count}* new waste, *{usd(since.new_waste_net)}/month* net: {named}")
    if since.resolved_count:
        named = _change_names(
            since.resolved,
            since.resolved_count,
            lambda c: (
                f"{_clean(c.name or c.resource_id)} ({finding_label(c.finding)}, now {escape(c.now)})"
                + (f" by {c.by}" if c.by else "")
            ),
        )
        lines.append(f"• *{since.resolved_count}* resolved, {usd(since.resolved_net)}/month: {named}")
    if since.arrived_count or since.departed_count:
        came = _moved(since.arrived_count, since.arrived, "came")
        went = _moved(since.departed_count, since.departed, "went")
        lines.append(f"• hosts: {came}, {went}")
    if len(since.trend) > 1:
        wastes = [float(point.waste) for point in since.trend]
        top = max(wastes) or 1.0
        lines.append(
            f"• waste over the last {len(since.trend)} runs: `{sparkline(wastes, top=top)}` "
            f"{usd(since.trend[0].waste)} → {usd(since.trend[-1].waste)}/month"
        )
    return "\n".join(lines)


SHOWBACK_GROUPS = 6  # groups the report's "by team" section names; the page lists every one


def showback_text(grouped: Showback, limit: int = SHOWBACK_GROUPS) -> str | None:
    """The report's "by team" section: each team's spend, the waste in it and the net savings its advice makes
    available, with the resources behind them; None when the fleet has no teams to tell apart."""
    if not grouped.grouped:
        return None
    lines = [f"*By {escape(grouped.by.name)}* · spend · waste (idle, oversized, idle hours) · net savings available"]
    for group in grouped.groups[:limit]:
        behind = ", ".join(_clean(host_words(host)) for host in group.hosts[:3])
        more = len(group.hosts) - 3
        lines.append(
            f"• *{_clean(shorten(group.key, 60))}*: {usd(group.spend)}/month · waste {usd(group.waste)} · "
            f"*{usd(group.net_savings)}* net"
            + (f" · {behind}" + (f" and {more} more" if more > 0 else "") if behind else "")
        )
    if len(grouped.groups) > limit:
        lines.append(
            f"and {len(grouped.groups) - limit} more (`rightsizer report --group-by {grouped.by.name}` lists all)"
        )
    return "\n".join(lines)


def summary_blocks(view: ReportView) -> list[Block]:
    stale = view.report.stale
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=f"GPU fleet report · {view.report.analysis_day}")),
        *([_section(f":warning: *Not today's analysis*: {escape(stale)}.")] if stale else []),
    ]
    since = since_text(view.report.since) if view.report.since is not None else None
    if since is not None:  # the report opens with what changed
        blocks.append(_section(since, block_id="since"))
    blocks += [_section(summary_text(view)), _context(counts_text(view.report))]
    by_team = showback_text(view.report.showback) if view.report.showback is not None else None
    if by_team is not None:
        blocks.append(_section(by_team, block_id="showback"))
    if actions_off(view.scope or view.report.action_scope):
        blocks.append(_context(f":information_source: No Approve buttons: {REPORT_ONLY}."))
    if view.no_data:
        blocks.append(
            _section(
                f":warning: *{view.no_data_count} host(s) have no GPU metrics*: {AGENT_POINTER}. "
                f"First: {', '.join(f'`{r.instance_id}`' for r in view.no_data[:5])}"
                + (" …" if view.no_data_count > 5 else "")
            )
        )
    if view.report.warnings:
        shown = [escape(shorten(printable(w), 300)) for w in view.report.warnings[:3]]
        more = len(view.report.warnings) - len(shown)
        blocks.append(_context(*[f":grey_exclamation: {w}" for w in shown], *([f"and {more} more"] if more else [])))
    return blocks


def _fallback(view: ReportView) -> str:
    if not view.listed:
        return "GPU fleet report: nothing to act on."
    return f"GPU fleet report: {money_sentences(view.totals)[0]}"


def daily_report_messages(
    report: FleetReport,
    decisions: Hiding,
    *,
    top_n: int,
    now: datetime | None = None,
    scope: ActionScope | None = None,
    hidden_elsewhere: Iterable[Recommendation] = (),
    approvals: Mapping[str, Approval] | None = None,
) -> list[Message]:
    """First message: summary and the top `top_n`; every other recommendation and host in thread replies.

    Nothing is dropped: each listed recommendation and each host without metrics appears in exactly one message.
    Of a ranking (the head of a larger fleet), the last reply says how many more there are. Advice with an approval
    (`approvals`, by recommendation id) shows its state instead of an Approve button.
    """
    view = ReportView.of(report, decisions, now, scope, hidden_elsewhere)
    approved = approvals or {}
    groups = [
        recommendation_blocks(rec, scope, report.managed_tag_key, approved.get(rec.recommendation_id))
        for rec in view.listed
    ]
    head = summary_blocks(view)
    top = groups[: max(0, top_n)]
    rest = groups[len(top) :] + insufficient_data_groups(view.no_data) + _beyond_the_ranking(view)
    first = paginate([head, [DividerBlock()], *top])
    if len(first) == 1 and len(first[0]) + sum(len(g) for g in rest) <= MAX_BLOCKS:
        return [Message(_fallback(view), tuple(first[0] + [b for g in rest for b in g]))]
    # A large top_n may itself overflow the first message: it spills into the thread, in order.
    spilled = [list(page) for page in first[1:]]
    first_page = first[0]
    in_first = sum(1 for block in first_page if (block.block_id or "").startswith("rec:"))
    remaining = len(view.listed) - in_first + len(view.no_data)
    pages = spilled + paginate(rest, limit=MAX_BLOCKS - 1)
    if pages and len(first_page) < MAX_BLOCKS:
        first_page = [
            *first_page,
            _context(f":thread: {remaining} more recommendation(s) or host(s) in the thread ({len(pages)} replies)"),
        ]
    messages = [Message(_fallback(view), tuple(first_page))]
    for number, page in enumerate(pages, start=2):
        part = f"GPU fleet report, part {number} of {len(pages) + 1}"
        labelled = [_context(part), *page] if len(page) < MAX_BLOCKS else page
        messages.append(Message(part, tuple(labelled)))
    return messages


def _beyond_the_ranking(view: ReportView) -> list[list[Block]]:
    beyond = view.listed_count - len(view.listed)
    if beyond <= 0:
        return []
    return [[_context(f"{beyond} smaller recommendation(s) not listed here: `show <instance-id>` explains any host.")]]


def report_summary_message(
    report: FleetReport,
    decisions: Hiding,
    now: datetime,
    scope: ActionScope | None = None,
    hidden_elsewhere: Iterable[Recommendation] = (),
) -> Message:
    """`/gpu report`: the summary only."""
    view = ReportView.of(report, decisions, now, scope, hidden_elsewhere)
    blocks = summary_blocks(view)
    if view.listed:
        blocks.append(_context("`top [N]` lists the biggest savings with buttons; `show <instance-id>` explains one."))
    return Message(_fallback(view), tuple(blocks))


def top_messages(
    report: FleetReport,
    decisions: Hiding,
    n: int,
    now: datetime,
    scope: ActionScope | None = None,
    hidden_elsewhere: Iterable[Recommendation] = (),
    approvals: Mapping[str, Approval] | None = None,
    filters: Filters = NO_FILTERS,
) -> list[Message]:
    """`/gpu top N`: the N largest savings with buttons (an approval's state where one was approved), split into
    messages of at most 50 blocks; with `filters`, the largest of those they keep (of a ranking: among its head, the
    fleet's largest)."""
    view = ReportView.of(report, decisions, now, scope, hidden_elsewhere)
    count = max(1, min(n, MAX_TOP))
    listed = filters.apply(view.listed) if filters else list(view.listed)
    chosen = listed[:count]
    matching = ""
    if filters:
        among = " among the fleet's largest" if report.fleet is not None else ""
        matching = f" matching {escape(filters.describe())}{among}"
    if not chosen:
        text = f"Nothing{matching} to act on right now." + (
            f" ({len(view.hidden)} hidden: snoozed or dismissed.)" if view.hidden else ""
        )
        return [Message(text, (_section(text),))]
    note = f"Top {len(chosen)} of {len(listed) if filters else view.listed_count} recommendation(s){matching}"
    if n > MAX_TOP:
        note += f" (at most {MAX_TOP} here; the daily report lists more)"
    if view.hidden:
        note += f" · {len(view.hidden)} hidden (snoozed or dismissed)"
    key = report.managed_tag_key
    approved = approvals or {}
    groups = [recommendation_blocks(rec, scope, key, approved.get(rec.recommendation_id)) for rec in chosen]
    pages = paginate([[_context(note)], *groups])
    return [Message(note, tuple(page)) for page in pages]


# ---------------------------------------------------------------------------------------------
# show / why / help


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%"


def _mib(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 1024:.1f} GiB"


def evidence_text(rec: Recommendation) -> str:
    ev = rec.evidence
    lines = [
        f"Observed {ev.observed_days:.1f} days, {ev.coverage:.0%} of periods with GPU data; "
        f"{ev.busy_units} of {ev.total_units} accelerator(s) busy",
        f"Busiest accelerator: p95 {_pct(ev.accelerator_p95)}, busiest hours {_pct(ev.accelerator_burst)}, "
        f"peak {_pct(ev.accelerator_peak)}; memory peak {_mib(ev.memory_peak_mib)} of {_mib(ev.memory_per_unit_mib)}"
        + (" (reserved by the framework, not a working set)" if ev.memory_reserved else ""),
        f"CPU p95 {_pct(ev.cpu_p95)} · host memory peak {_pct(ev.host_memory_peak_pct)} · network peak "
        + ("n/a" if ev.network_peak_gbps is None else f"{ev.network_peak_gbps:.2f} Gbps"),
    ]
    if ev.idle_hours_per_week is not None:
        lines.append(f"Idle {ev.idle_hours_per_week} h a week" + (f" ({_clean(ev.schedule)})" if ev.schedule else ""))
    lines.append(spark_text(rec))
    return "\n".join(lines)


def _fields(rec: Recommendation) -> list[MarkdownTextObject]:
    values = [
        ("Advice", f"{finding_label(rec.finding)}: {target_text(rec)}"),
        ("Money", money_text(rec)),
        ("Cost now", f"{usd(rec.monthly_cost)}/month"),
        ("Cost after", f"{usd(rec.monthly_cost_after)}/month"),
        ("Confidence", rec.confidence.value),
        ("Where", f"{rec.account_id} · {rec.availability_zone}"),
        ("Capacity", _capacity_field(rec)),
        ("State", rec.state),
        ("Generated", rec.generated_at.strftime("%Y-%m-%d %H:%M UTC")),
    ]
    return [_md(shorten(f"*{name}*\n{value}", 2000)) for name, value in values]


def _capacity_field(rec: Recommendation) -> str:
    """Whether a stop can strand the host: it runs in a capacity reservation, or restarting depends on the type."""
    if rec.capacity_reservation:
        return f"reserved: {escape(printable(rec.capacity_reservation))} holds its restart capacity"
    if capacity_at_risk(rec):
        return f"not reserved: {rec.instance_type} is scarce, a restart may find no capacity"
    return "no reservation"


def reasons_text(rec: Recommendation, limit: int = SECTION_TEXT_MAX) -> str:
    lines = ["*Why*"] + [f"• {escape(shorten(printable(reason), 600))}" for reason in rec.reasons]
    text = "\n".join(lines)
    return shorten(text, limit)


def status_text(rec: Recommendation, decision: Decision | None, approval: Approval | None) -> str | None:
    if approval is not None and approval.recommendation_id == rec.recommendation_id:
        again = " · an approver may try again: Approve below" if retryable(approval.status) else ""
        return f"Approved by <@{approval.approver}> · status {approval.status} (attempt {approval.attempt}){again}"
    if decision is None:
        return None
    if decision.kind is DecisionKind.SNOOZE and decision.until is not None:
        return f"Snoozed by <@{decision.actor}> until {decision.until:%Y-%m-%d %H:%M} UTC"
    return f"Dismissed by <@{decision.actor}>"


def detail_message(
    rec: Recommendation,
    *,
    decisions: Iterable[Decision] = (),
    approval: Approval | None = None,
    now: datetime,
    scope: ActionScope | None = None,
    managed_tag_key: str = DEFAULT_MANAGED_TAG_KEY,
) -> Message:
    """`/gpu show <instance-id>`."""
    name = printable(rec.instance_name)
    title = f"{shorten(name, 120)} ({rec.instance_id})" if name else rec.instance_id
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=shorten(title, 150))),
        SectionBlock(text=_md(f"`{rec.instance_type}` in {rec.region}"), fields=_fields(rec)),
        _section(evidence_text(rec)),
        _section(reasons_text(rec)),
    ]
    if rec.alternatives:
        alternatives = [
            f"`{alt.instance_type}` {usd(alt.monthly_cost)}/month ({alt.confidence.value}): "
            + escape(shorten(printable(alt.note), 200))
            for alt in rec.alternatives[:5]
        ]
        blocks.append(_context("*Alternatives* · " + " · ".join(alternatives)))
    decision = hidden_by(rec, decisions, now)
    status = status_text(rec, decision, approval)
    if status:
        blocks.append(_context(status))
    # An attempt that ended without success may be retried (approvals._start): its buttons come back.
    retry = decision is None and approval is not None and retryable(approval.status)
    if (not status or retry) and FINDINGS[rec.finding].attention:
        blocks.extend(recommendation_blocks(rec, scope, managed_tag_key)[1:])
    return Message(f"{rec.instance_id}: {finding_label(rec.finding)}", tuple(blocks))


def why_message(rec: Recommendation) -> Message:
    head = f"{label(rec)}: {finding_label(rec.finding)}, {target_text(rec)} · {money_text(rec)}"
    blocks: tuple[Block, ...] = (_section(head), _section(reasons_text(rec)), _context(spark_text(rec)))
    return Message(f"Why {rec.instance_id}: {finding_label(rec.finding)}", blocks)


# ---------------------------------------------------------------------------------------------
# button outcomes


def started_note(approval: Approval) -> str:
    return (
        f":white_check_mark: {ACTIONS[approval.action].name} started by <@{approval.approver}>: "
        f"`{approval.from_type}` → `{approval.to_type}` · execution `{_execution_name(approval.execution_arn)}`. "
        "Progress follows in this thread."
    )


def approved_note(approval: Approval) -> str:
    return (
        f":hourglass_flowing_sand: {ACTIONS[approval.action].name} approved by <@{approval.approver}>: "
        f"`{approval.instance_id}` `{approval.from_type}` → `{approval.to_type}`; starting the workflow…"
    )


def note_block(approval: Approval) -> dict[str, Any]:
    """The status line under a recommendation, in the block that held its buttons."""
    note = started_note(approval) if approval.execution_arn else approved_note(approval)
    return _context(note, block_id=actions_id(approval.recommendation_id)).to_dict()


def dismissed_note(actor: str) -> str:
    return f":no_entry_sign: Dismissed by <@{actor}>."


def snoozed_note(actor: str, until: datetime) -> str:
    return f":zzz: Snoozed by <@{actor}> until {until:%Y-%m-%d %H:%M} UTC."


def resolve_in_message(blocks: Sequence[Mapping[str, Any]], recommendation_id: str, note: str) -> list[dict[str, Any]]:
    """The original message's blocks with this recommendation's buttons replaced by `note`."""
    target = actions_id(recommendation_id)
    replacement = _context(note, block_id=target).to_dict()
    updated = [replacement if block.get("block_id") == target else dict(block) for block in blocks]
    if all(block.get("block_id") != target for block in blocks) and len(updated) < MAX_BLOCKS:
        updated.append(replacement)  # the block is gone (the message was edited): keep the news visible
    return updated


def resolved_blocks(rec: Recommendation, note: str) -> list[dict[str, Any]]:
    """For ephemeral messages, which cannot be read back: the recommendation and the note."""
    return [recommendation_section(rec).to_dict(), _context(note, block_id=actions_id(rec.recommendation_id)).to_dict()]


# ---------------------------------------------------------------------------------------------
# /gpu schedules


def schedules_message(records: Sequence[ScheduleRecord], actions_enabled: bool = True) -> Message:
    """The stop/start pairs approved here, newest first, each with a Remove button (its value: the pair's key); in a
    report-only deployment without the buttons, saying why."""
    if not records:
        text = "No stop/start schedules. Approve a `schedulable` recommendation to create one."
        return Message(text, (_section(text),))
    ordered = sorted(records, key=lambda r: (r.created_at, r.key), reverse=True)
    blocks: list[Block] = [_context(f"{len(ordered)} stop/start schedule(s), created through Slack approvals")]
    if not actions_enabled:
        blocks.append(_context(f":information_source: No Remove button: {REPORT_ONLY}."))
    shown = ordered[: (MAX_BLOCKS - 2) // 2]
    for record in shown:
        shown_name = printable(record.instance_name)
        name = f" {escape(shorten(shown_name, 50))}" if shown_name else ""
        text = (
            f"`{record.instance_id}`{name} (`{record.instance_type}`, {record.region}, {record.account_id})\n"
            f"{escape(record.plan.description)} · `{record.plan.stop_cron}` / `{record.plan.start_cron}`\n"
            + _missing_halves(record)
            + f"_approved by <@{record.created_by}> on {record.created_at:%Y-%m-%d}_"
        )
        if not actions_enabled:
            blocks.append(_section(text))
            continue
        blocks.append(
            SectionBlock(
                text=_md(shorten(text, SECTION_TEXT_MAX)),
                accessory=ButtonElement(
                    text="Remove",
                    action_id=ACTION_REMOVE_SCHEDULE,
                    value=record.key,
                    style="danger",
                    confirm=ConfirmObject(
                        title=PlainTextObject(text="Remove this schedule?"),
                        text=PlainTextObject(
                            text=shorten(f"{record.instance_id} will no longer stop and start on its own.", 300)
                        ),
                        confirm=PlainTextObject(text="Remove"),
                        deny=PlainTextObject(text="Cancel"),
                    ),
                ),
            )
        )
    if len(ordered) > len(shown):
        blocks.append(_context(f"and {len(ordered) - len(shown)} more"))
    return Message(f"{len(ordered)} stop/start schedule(s)", tuple(blocks))


def _missing_halves(record: ScheduleRecord) -> str:
    """The halves EventBridge Scheduler no longer has (the daily check): the pair does not work as listed."""
    if not record.missing:
        return ""
    halves = " and ".join(f"`{name}`" for name in record.missing)
    return f":warning: EventBridge Scheduler no longer has {halves}: Remove deletes what is left\n"


def removal_note(record: ScheduleRecord, actor: str) -> str:
    return (
        f":hourglass_flowing_sand: Removal of the stop/start schedule of `{record.instance_id}` "
        f"({escape(record.plan.description)}) approved by <@{actor}>; starting the workflow…"
    )
