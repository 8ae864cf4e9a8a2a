"""The Slack app: a Bolt `App` for Lambda behind a Function URL.

Slack wants an answer within 3 seconds, cold start included. So the ack path only verifies the request
(signature and age: Bolt; replay and retry: `RequestGuard`, one conditional DynamoDB write), parses the
command, and acknowledges. Everything that reads data, calls Slack or starts a workflow runs in a lazy
listener, which the Lambda adapter runs in a second, asynchronous invocation of this same function.
The Step Functions adapter and its client, which only approvals need, are imported there.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from aws_lambda_powertools.logging import Logger
from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.middleware import Middleware
from slack_bolt.request.internals import build_context
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rightsizer.adapters.slack import blocks
from rightsizer.adapters.slack.edge import Rejection, Verified, verify
from rightsizer.adapters.slack.messages import MessageBoard, MessageStore
from rightsizer.domain.models import Recommendation
from rightsizer.services import approvals
from rightsizer.services.approvals import ActionResult, DurationError, Outcome
from rightsizer.services.ports import Approval, Decision, ResizeWorkflow, ScheduleRecord
from rightsizer.services.ranking import Ranking, ranked_report
from rightsizer.settings import Settings

logger = Logger(child=True)

INSTANCE_ID = re.compile(r"^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$")
TOP_COUNT = re.compile(r"[0-9]{1,4}")  # ASCII digits only: str.isdigit() also accepts "¹" and "①", int() does not
# Bolt configures the logger named after the app on every request (level and all). Named like the Powertools
# service logger ("gpu-rightsizer"), the app would reset the project's log level; so it has a name of its own.
BOLT_APP_NAME = "gpu-rightsizer-slack-bolt"
RETRY_HEADER = "x-slack-retry-num"
# Bolt's LambdaLazyListenerRunner re-invokes the function with these headers and a top-level "method": "NONE"
# in the payload. A Function URL request can carry any header but never a top-level "method" key: that is
# how a genuine self-invocation is told apart from an HTTP request that merely claims to be one.
LAZY_ONLY_HEADER = "x-slack-bolt-lazy-only"
SELF_INVOKE_MARKER = ("method", "NONE")
MAX_RESPONSES = 5  # Slack accepts five posts per response_url


class SlackStore(approvals.ApprovalStore, MessageStore, Protocol):
    """What the Slack app reads and writes (DynamoStore in AWS): by key, never the whole fleet."""

    def ranking(self) -> Ranking | None: ...

    def active_decisions(self, now: datetime) -> list[Decision]: ...

    def claim_request(self, digest: str, now: datetime, keep: timedelta = ...) -> bool: ...

    def schedules(self) -> list[ScheduleRecord]: ...


def utc_now() -> datetime:
    return datetime.now(UTC)


# ---------------------------------------------------------------------------------------------
# slash command parsing (pure, and cheap enough for the ack path)


@dataclass(frozen=True)
class Command:
    name: str  # help | report | top | show | why | snooze | schedules
    instance_id: str = ""
    count: int = 0
    duration: timedelta | None = None
    error: str = ""  # set: the input was malformed; answered at once with this and the help

    @property
    def needs_data(self) -> bool:
        return not self.error and self.name != "help"


def parse_command(text: str, default_top: int = 10) -> Command:
    """Never raises: malformed input becomes a Command with an `error` that says what would work."""
    tokens = (text or "").split()
    if not tokens:
        return Command("help")
    verb, args = tokens[0].lower(), tokens[1:]
    shown = blocks.escape(tokens[0][:30])
    if verb in ("help", "?", "-h", "--help"):
        return Command("help")
    if verb in ("report", "schedules"):
        return Command(verb, error=f"`{verb}` takes no arguments.") if args else Command(verb)
    if verb == "top":
        if not args:
            return Command("top", count=default_top)
        if len(args) == 1 and TOP_COUNT.fullmatch(args[0]) and int(args[0]) > 0:
            return Command("top", count=int(args[0]))
        return Command("top", error="`top` takes one optional positive number, e.g. `top 5`.")
    if verb in ("show", "why", "snooze"):
        instance_id = args[0].lower() if args else ""
        if not INSTANCE_ID.match(instance_id):
            example = "snooze i-0123456789abcdef0 3d" if verb == "snooze" else f"{verb} i-0123456789abcdef0"
            got = f" (got `{blocks.escape(args[0][:40])}`)" if args else ""
            return Command(verb, error=f"`{verb}` needs an EC2 instance id{got}, e.g. `{example}`.")
        if verb != "snooze":
            if len(args) > 1:
                return Command(verb, error=f"`{verb}` takes a single instance id.")
            return Command(verb, instance_id=instance_id)
        if len(args) < 2:
            return Command("snooze", error="`snooze` needs a duration after the instance id, e.g. 12h, 3d or 2w.")
        try:
            duration = approvals.parse_duration(" ".join(args[1:]))
        except DurationError as error:
            return Command("snooze", error=f"{blocks.escape(str(error))}.")
        return Command("snooze", instance_id=instance_id, duration=duration)
    return Command(verb[:30], error=f"I don't know `{shown}`.")


# ---------------------------------------------------------------------------------------------
# request guard: replays and Slack retries never reach a listener


class RequestGuard(Middleware):
    """Runs after Bolt's signature and timestamp check, before any listener.

    * Slack retry (`X-Slack-Retry-Num`): the first delivery is being or was handled (a Function URL keeps
      running after Slack gives up), so acknowledge with 200 and `X-Slack-No-Retry` and run nothing.
    * Replay: the v0 signature and timestamp of every request are claimed once in DynamoDB (conditional
      put, kept past Bolt's 5-minute window); a second delivery of the same signed request gets 401.
    * Lazy re-invocation (`x-slack-bolt-lazy-only`): allowed only with the self-invocation marker, which an
      HTTP caller cannot set; it was claimed when it first arrived, so it is not claimed again.
    """

    def __init__(self, store: SlackStore, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]) -> BoltResponse:
        if req.lazy_only:
            event = req.context.get("lambda_request") or {}
            key, value = SELF_INVOKE_MARKER
            if event.get(key) != value:
                logger.warning("lazy-only header on an HTTP request: rejected")
                return BoltResponse(status=401, body="")
            return next()
        if _header(req, RETRY_HEADER):
            logger.info("Slack retry acknowledged without re-running", extra={"retry": _header(req, RETRY_HEADER)})
            return BoltResponse(status=200, body="", headers={"x-slack-no-retry": "1"})
        if not self._store.claim_request(request_digest(req), self._clock()):
            logger.warning("replayed Slack request rejected")
            return BoltResponse(status=401, body="")
        return next()


def _header(req: BoltRequest, name: str) -> str:
    values = req.headers.get(name) or [""]
    return str(values[0] or "")


def request_digest(req: BoltRequest) -> str:
    """Identifies one signed delivery: Slack signs each with its timestamp, so equal digests mean a replay."""
    material = f"{_header(req, 'x-slack-request-timestamp')}:{_header(req, 'x-slack-signature')}"
    return hashlib.sha256(material.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# button clicks


@dataclass(frozen=True)
class Click:
    user: str
    recommendation_id: str
    channel: str
    message_ts: str
    ephemeral: bool
    message_blocks: tuple[dict[str, Any], ...]
    message_text: str

    @classmethod
    def of(cls, body: dict[str, Any]) -> Click:
        container = body.get("container") or {}
        message = body.get("message") or {}
        action = (body.get("actions") or [{}])[0]
        return cls(
            user=str((body.get("user") or {}).get("id", "")),
            recommendation_id=str(action.get("value", ""))[:200],
            channel=str(container.get("channel_id") or (body.get("channel") or {}).get("id", "")),
            message_ts=str(container.get("message_ts") or message.get("ts", "")),
            ephemeral=bool(container.get("is_ephemeral")) or not message,
            message_blocks=tuple(message.get("blocks") or ()),
            message_text=str(message.get("text") or "GPU recommendation"),
        )


SUPERSEDED = (
    "This recommendation has been superseded by a newer analysis (or has expired). "
    "`{command} show <instance-id>` shows the current advice."
)


class _Conversation:
    """Answers to one click: private notes to the clicker, and in-place updates of the messages."""

    def __init__(self, click: Click, client: WebClient, respond: Any, board: MessageBoard) -> None:
        self.click = click
        self._client = client
        self._respond = respond
        self._board = board

    def tell(self, text: str) -> None:
        if not self.click.ephemeral and self.click.channel:
            try:
                self._client.chat_postEphemeral(channel=self.click.channel, user=self.click.user, text=text)
                return
            except SlackApiError as error:  # e.g. a channel the bot left: the response_url still works
                logger.warning("chat.postEphemeral failed", extra={"error": str(error.response.get("error"))})
        self._respond(text=text, response_type="ephemeral", replace_original=False)

    def mark(self, rec: Recommendation, note: str) -> None:
        """Replace the recommendation's buttons with `note`: in the clicked message, and in every saved
        report message that shows them too (a decision hides the advice everywhere). Saved messages are edited
        from their latest saved copy, not from the click's (which predates any edit made since it was shown)."""
        clicked = (self.click.channel, self.click.message_ts)
        if self.click.ephemeral:
            # Ephemeral messages cannot be read back or chat.update'd: replace through response_url.
            self._respond(text=note, blocks=blocks.resolved_blocks(rec, note), replace_original=True)
        else:
            self._board.retire(
                *clicked, rec.recommendation_id, note, text=self.click.message_text, blocks=self.click.message_blocks
            )
        self._board.resolve(rec.recommendation_id, note, except_in=None if self.click.ephemeral else clicked)


# ---------------------------------------------------------------------------------------------
# approvals: what the Slack report promises, the Approve handler keeps


# ---------------------------------------------------------------------------------------------
# the app


def build_app(
    settings: Settings,
    *,
    client: WebClient,
    store: SlackStore,
    workflow_factory: Callable[[], ResizeWorkflow],
    signing_secret: str,
    clock: Callable[[], datetime] = utc_now,
) -> App:
    """The Bolt app. `client` carries the bot token; nothing here calls Slack or AWS until a request arrives."""
    slack = settings.slack
    command_name = slack.command if slack.command.startswith("/") else f"/{slack.command}"
    bot_token = client.token
    scope = settings.report_scope

    def authorize(enterprise_id: str | None, team_id: str | None, user_id: str | None) -> AuthorizeResult:
        # A single-workspace app: the token is known. Bolt's default would call auth.test on the first
        # request, a Slack round trip on the cold-start ack path.
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, user_id=user_id, bot_token=bot_token)

    app = App(
        name=BOLT_APP_NAME,
        # Bolt gives each request a copy of this client with the token from `authorize`.
        client=WebClient(base_url=client.base_url, timeout=client.timeout, retry_handlers=client.retry_handlers),
        signing_secret=signing_secret,
        authorize=authorize,
        before_authorize=RequestGuard(store, clock),
        process_before_response=True,  # on Lambda nothing may run after the response is returned
        url_verification_enabled=False,  # no Events API subscription
    )

    def is_approver_via(web: WebClient) -> Callable[[str], bool]:
        def is_approver(user: str) -> bool:
            if user in slack.approvers:
                return True
            if not slack.approver_group:
                return False
            try:
                members = web.usergroups_users_list(usergroup=slack.approver_group).get("users") or []
            except SlackApiError as error:  # fail closed: no proof of membership, no approval
                logger.warning("usergroups.users.list failed", extra={"error": str(error.response.get("error"))})
                return False
            return user in members

        return is_approver

    def refusal() -> str:
        who = [f"<@{user}>" for user in slack.approvers]
        if slack.approver_group:
            who.append(f"members of <!subteam^{slack.approver_group}>")
        names = ", ".join(who) or "nobody (no approvers are configured: see docs/connect-slack.md)"
        return f":lock: Only approvers can approve actions: {names}. Your attempt was recorded in the audit log."

    # -- slash command -------------------------------------------------------------------------

    def ack_command(ack: Any, command: dict[str, Any]) -> None:
        parsed = parse_command(str(command.get("text", "")), slack.top_n)
        if parsed.error:
            ack(response_type="ephemeral", text=f"{parsed.error}\n\n{blocks.help_text(command_name)}")
        elif parsed.name == "help":
            ack(response_type="ephemeral", text=blocks.help_text(command_name))
        else:
            ack()  # the answer follows through response_url, from the lazy listener

    def needs_data(command: dict[str, Any]) -> bool:
        return parse_command(str(command.get("text", "")), slack.top_n).needs_data

    def run_gpu_command(command: dict[str, Any], respond: Any, client: WebClient) -> None:
        parsed = parse_command(str(command.get("text", "")), slack.top_n)
        try:
            answers = _answer(parsed, str(command.get("user_id", "")), MessageBoard(client, store))
            for message in answers[:MAX_RESPONSES]:
                respond(**message, response_type="ephemeral")
        except Exception:
            logger.exception("slash command failed", extra={"verb": parsed.name})
            respond(
                text=":warning: Something went wrong; it has been logged. Try again in a minute.",
                response_type="ephemeral",
            )

    def _answer(parsed: Command, user: str, board: MessageBoard) -> list[dict[str, Any]]:
        now = clock()
        if parsed.name == "schedules":
            return [blocks.schedules_message(store.schedules()).payload()]
        if parsed.name in ("report", "top"):
            ranked = ranked_report(store, now, settings.lookback_days, scope, settings.managed_tag_key)
            report, decisions, elsewhere = ranked.report, ranked.decisions, ranked.hidden_elsewhere
            if parsed.name == "report":
                return [blocks.report_summary_message(report, decisions, now, scope, elsewhere).payload()]
            return [m.payload() for m in blocks.top_messages(report, decisions, parsed.count, now, scope, elsewhere)]
        if parsed.name == "snooze" and parsed.duration is not None:
            result = approvals.snooze_instance(store, parsed.instance_id, user, now=now, duration=parsed.duration)
            if result.outcome is Outcome.SNOOZED and result.until is not None and result.recommendation is not None:
                # The report already in the channel must not keep offering buttons for the snoozed host.
                board.resolve(result.recommendation.recommendation_id, blocks.snoozed_note(user, result.until))
                note = (
                    f"`{parsed.instance_id}` is snoozed until {result.until:%Y-%m-%d %H:%M} UTC: reports leave it out."
                )
                return [{"text": note}]
            return [{"text": _unknown_instance(parsed.instance_id)}]
        rec = store.latest_for_instance(parsed.instance_id)
        if rec is None:
            return [{"text": _unknown_instance(parsed.instance_id)}]
        if parsed.name == "why":
            return [blocks.why_message(rec).payload()]
        message = blocks.detail_message(
            rec,
            decisions=store.decisions_about(rec, now),
            approval=store.approval(rec.recommendation_id),
            now=now,
            scope=scope,
            managed_tag_key=settings.managed_tag_key,
        )
        return [message.payload()]

    def _unknown_instance(instance_id: str) -> str:
        return (
            f"No recommendation for `{instance_id}` in the latest analysis. It may not be a GPU instance, or it "
            f"runs in an account or region that is not analysed. `{command_name} top` lists what there is."
        )

    app.command(command_name, matchers=[needs_data])(ack=ack_command, lazy=[run_gpu_command])
    app.command(command_name)(ack_command)  # help and malformed input: answered in the ack, nothing lazy

    # -- buttons -------------------------------------------------------------------------------

    def ack_button(ack: Any) -> None:
        ack()

    def guarded(handler: Callable[[_Conversation, WebClient], None]) -> Callable[..., None]:
        def run(body: dict[str, Any], client: WebClient, respond: Any) -> None:
            talk = _Conversation(Click.of(body), client, respond, MessageBoard(client, store))
            try:
                handler(talk, client)
            except Exception:
                logger.exception("button handler failed", extra={"recommendation_id": talk.click.recommendation_id})
                talk.tell(":warning: Something went wrong; it has been logged. Please try again.")

        run.__name__ = f"lazy_{handler.__name__}"  # Bolt finds the lazy function by name on re-invocation
        return run

    def open_thread_in(web: WebClient) -> Callable[[Approval], tuple[str, str] | None]:
        def open_thread(approval: Approval) -> tuple[str, str] | None:
            # Approved from an ephemeral answer (`top`, `show`, `schedules`), which has no thread: open one in the
            # report channel, before the workflow starts, so the notifier finds it for the very first event.
            if not slack.channel:
                return None
            rec = store.recommendation(approval.recommendation_id)
            head = [blocks.recommendation_section(rec).to_dict()] if rec is not None else []
            try:
                root = web.chat_postMessage(
                    channel=slack.channel,
                    text=blocks.approved_note(approval),
                    blocks=[*head, blocks.note_block(approval)],
                    unfurl_links=False,
                )
            except SlackApiError as error:  # e.g. not_in_channel: approve anyway, without a thread
                logger.warning("could not open a thread", extra={"error": str(error.response.get("error"))})
                return None
            return slack.channel, str(root["ts"])

        return open_thread

    def approve_with(capacity_risk_confirmed: bool) -> Callable[[_Conversation, WebClient], None]:
        def approve_action(talk: _Conversation, web: WebClient) -> None:
            click = talk.click
            result = approvals.approve(
                store,
                workflow_factory,
                click.recommendation_id,
                click.user,
                is_approver=is_approver_via(web),
                now=clock(),
                scope=scope,
                time_zone=lambda rec: settings.time_zone_of(rec.team),
                capacity_risk_confirmed=capacity_risk_confirmed,
                slack_channel="" if click.ephemeral else click.channel,
                slack_ts="" if click.ephemeral else click.message_ts,
                open_thread=open_thread_in(web),
                managed_tag_key=settings.managed_tag_key,
            )
            if result.outcome is Outcome.STARTED and result.approval is not None and result.recommendation is not None:
                _started(talk, web, result.recommendation, result.approval)
                return
            if result.cause:  # for operators; the clicker gets a sentence without exception names
                logger.error(
                    "action not started", extra={"cause": result.cause, "recommendation": click.recommendation_id}
                )
            talk.tell(_approve_answer(result))

        approve_action.__name__ = "approve_with_capacity_risk" if capacity_risk_confirmed else "approve_action"
        return approve_action

    def remove_schedule(talk: _Conversation, web: WebClient) -> None:
        click = talk.click
        result = approvals.remove_schedule(
            store,
            workflow_factory,
            click.recommendation_id,  # the button's value: the schedule's key
            click.user,
            is_approver=is_approver_via(web),
            now=clock(),
            open_thread=open_thread_in(web),
        )
        if result.outcome is Outcome.STARTED and result.approval is not None:
            approval = result.approval
            where = f" Progress in <#{approval.slack_channel}>." if approval.slack_channel else ""
            talk.tell(f":wastebasket: Removing the stop/start schedule of `{approval.instance_id}`.{where}")
            return
        if result.cause:
            logger.error(
                "schedule removal not started", extra={"cause": result.cause, "schedule": click.recommendation_id}
            )
        if result.outcome is Outcome.NOT_FOUND:
            talk.tell(f"There is no schedule for that host any more (`{command_name} schedules` lists them).")
            return
        talk.tell(_approve_answer(result))

    def _started(talk: _Conversation, web: WebClient, rec: Recommendation, approval: Approval) -> None:
        note = blocks.started_note(approval)
        talk.mark(rec, note)
        thread = (approval.slack_channel, approval.slack_ts)
        if talk.click.ephemeral and all(thread):
            web.chat_update(
                channel=thread[0],
                ts=thread[1],
                text=note,
                blocks=[blocks.recommendation_section(rec).to_dict(), blocks.note_block(approval)],
            )

    def _approve_answer(result: ActionResult) -> str:
        if result.outcome is Outcome.NOT_APPROVER:
            return refusal()
        if result.outcome in (Outcome.STALE, Outcome.NOT_FOUND):
            return SUPERSEDED.format(command=command_name)
        if result.outcome is Outcome.ALREADY_APPROVED:
            existing = result.approval
            if existing is None:
                return "This has already been approved."
            execution = f", execution `{existing.execution_arn.rsplit(':', 1)[-1]}`" if existing.execution_arn else ""
            return (
                f"Already approved by <@{existing.approver}> (status {existing.status}{execution}). "
                "Nothing was started twice."
            )
        if result.outcome is Outcome.NOT_ACTIONABLE:
            return "There is no one-click action to approve for this recommendation (see `show` for the advice)."
        if result.outcome is Outcome.OUT_OF_SCOPE:
            return f":no_entry_sign: Not approved: {blocks.escape(result.detail)}."
        if result.outcome is Outcome.NEEDS_CONFIRMATION:
            return (
                f":warning: Not approved: {blocks.escape(result.detail)}. Use the button that names the capacity risk "
                f"(`{command_name} show <instance-id>` shows it) if the host may stay stopped."
            )
        if result.outcome is Outcome.NO_SCHEDULE:
            return f":calendar: Not approved: {blocks.escape(result.detail)}."
        if result.outcome is Outcome.HIDDEN and result.decision is not None:
            return _hidden_answer(result.decision)
        return f":x: Not started: {blocks.escape(result.detail)}. Approve again in a minute to retry."

    def _hidden_answer(decision: Decision) -> str:
        if decision.kind == "snooze" and decision.until is not None:
            why = f"<@{decision.actor}> snoozed this host until {decision.until:%Y-%m-%d %H:%M} UTC"
        else:
            why = f"<@{decision.actor}> dismissed this recommendation"
        return (
            f":zzz: Not approved: {why}, so it is no longer offered. "
            f"`{command_name} show <instance-id>` shows the advice and who decided."
        )

    def dismiss(talk: _Conversation, web: WebClient) -> None:
        result = approvals.dismiss(store, talk.click.recommendation_id, talk.click.user, now=clock())
        if result.outcome is Outcome.DISMISSED and result.recommendation is not None:
            talk.mark(result.recommendation, blocks.dismissed_note(talk.click.user))
        else:
            talk.tell(SUPERSEDED.format(command=command_name))

    def snooze(talk: _Conversation, web: WebClient) -> None:
        result = approvals.snooze(store, talk.click.recommendation_id, talk.click.user, now=clock())
        if result.outcome is Outcome.SNOOZED and result.recommendation is not None and result.until is not None:
            talk.mark(result.recommendation, blocks.snoozed_note(talk.click.user, result.until))
        else:
            talk.tell(SUPERSEDED.format(command=command_name))

    app.action(blocks.ACTION_APPROVE)(ack=ack_button, lazy=[guarded(approve_with(capacity_risk_confirmed=False))])
    app.action(blocks.ACTION_APPROVE_SCARCE)(ack=ack_button, lazy=[guarded(approve_with(capacity_risk_confirmed=True))])
    app.action(blocks.ACTION_REMOVE_SCHEDULE)(ack=ack_button, lazy=[guarded(remove_schedule)])
    app.action(blocks.ACTION_DISMISS)(ack=ack_button, lazy=[guarded(dismiss)])
    app.action(blocks.ACTION_SNOOZE)(ack=ack_button, lazy=[guarded(snooze)])
    return app


# ---------------------------------------------------------------------------------------------
# Lambda wiring


class LambdaEntry:
    """The Function URL handler around an app: `edge.verify` judges the raw request first, Bolt handles what
    passes. `lambda_client` runs lazy listeners (tests and the demo pass an in-process one)."""

    def __init__(
        self,
        app: App,
        *,
        signing_secret: str,
        lambda_client: Any | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        from slack_bolt.adapter.aws_lambda.lazy_listener_runner import LambdaLazyListenerRunner

        self._app = app
        self._signing_secret = signing_secret
        self._clock = clock
        # A client made at init time keeps its creation (~50 ms) off the first acknowledgement; without
        # one, Bolt's runner creates a boto3 Lambda client on the first lazy listener.
        app.listener_runner.lazy_listener_runner = LambdaLazyListenerRunner(app.logger, lambda_client=lambda_client)

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        checked = verify(event, self._signing_secret, self._clock())
        if isinstance(checked, Rejection):
            logger.warning("Slack request rejected", extra={"status": checked.status, "reason": checked.reason})
            return checked.response()
        request = _VerifiedRequest(checked, event, context)
        response = self._app.dispatch(request)
        return {"statusCode": response.status, "body": response.body, "headers": response.first_headers()}


class _VerifiedRequest(BoltRequest):
    """A BoltRequest whose body is the edge's parse of the verified form, not Bolt's own parse of the raw
    body (which routes any form containing the text "payload" as an interaction). Bolt still checks the
    signature over `raw_body`, the exact text Slack signed."""

    def __init__(self, verified: Verified, event: dict[str, Any], context: Any) -> None:
        query = event.get("queryStringParameters")
        strings = {k: v for k, v in query.items() if isinstance(v, str)} if isinstance(query, dict) else {}
        super().__init__(body="", query=strings, headers=dict(verified.headers))
        self.raw_body = verified.raw_body
        self.body = verified.body
        self.context = build_context(self.context, verified.body)
        # What Bolt's AWS Lambda adapter puts in the context: the lazy listener runner re-invokes with it.
        self.context["aws_lambda_function_name"] = getattr(context, "function_name", "")
        self.context["aws_lambda_invoked_function_arn"] = getattr(context, "invoked_function_arn", "")
        self.context["lambda_request"] = event
        self._verified = verified
        self._event = event
        self._lambda_context = context

    def to_copyable(self) -> BoltRequest:
        copied = _VerifiedRequest(self._verified, self._event, self._lambda_context)
        copied.context = self.context.to_copyable()
        return copied


def step_functions_workflow(
    settings: Settings,
    store: approvals.ApprovalStore,
    session: Any | None = None,
    lambda_context: Callable[[], Any] | None = None,
) -> Callable[[], ResizeWorkflow]:
    """The production ResizeWorkflow, built on first use: the adapter and its client stay off the ack path."""

    def expected_state(recommendation_id: str) -> str | None:
        # The workflow refuses a host that left the state the recommendation saw (e.g. stopped meanwhile).
        rec = store.recommendation(recommendation_id)
        return rec.state if rec is not None else None

    def factory() -> ResizeWorkflow:
        from rightsizer.adapters.aws.workflow import StepFunctionsResizeWorkflow

        if not settings.resize_state_machine_arn:
            raise RuntimeError("RESIZE_STATE_MACHINE_ARN is not set")
        if session is None:
            import boto3

            make: Callable[..., Any] = boto3.client
        else:
            make = session.client

        def client_for(region: str) -> Any:  # the instance workflow of another action region
            return make("stepfunctions", region_name=region)

        # Two guards: the approval's conditional write elects a single starter, and Powertools idempotency
        # (records in our table) plus the deterministic execution name make a retried start a no-op.
        workflow = StepFunctionsResizeWorkflow.from_settings(
            settings, client_for(settings.home_region), expected_state_of=expected_state, client_for=client_for
        )
        if lambda_context is not None:
            # Lets Powertools expire an in-progress idempotency record if this invocation times out.
            workflow.register_lambda_context(lambda_context())
        return workflow

    return factory


__all__: Sequence[str] = (
    "Command",
    "LambdaEntry",
    "RequestGuard",
    "SlackStore",
    "build_app",
    "parse_command",
    "request_digest",
    "step_functions_workflow",
)
