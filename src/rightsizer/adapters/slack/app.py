"""The Slack app: a Bolt `App` for Lambda behind a Function URL.

Slack wants an answer within 3 seconds, cold start included. So the ack path only verifies the request
(signature and age: Bolt; replay and retry: `RequestGuard`, one conditional DynamoDB write), parses the
command (`commands`), and acknowledges. Everything that reads data, calls Slack or starts a workflow runs in a
lazy listener (a command's `answer`, a button's handler in `buttons`), which the Lambda adapter runs in a
second, asynchronous invocation of this same function. The resize workflow, which only approvals need, comes
from the `workflow_factory` the composition root hands in (bootstrap/slack.py): it is built there, on first use.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from aws_lambda_powertools.logging import Logger
from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.middleware import Middleware
from slack_bolt.request.internals import build_context
from slack_sdk import WebClient

from rightsizer.adapters.slack import buttons, commands
from rightsizer.adapters.slack.deps import Ack, Deps, Respond, SlackStore, utc_now
from rightsizer.adapters.slack.edge import Rejection, Verified, verify
from rightsizer.adapters.slack.messages import MessageBoard
from rightsizer.services.ports import ResizeWorkflow
from rightsizer.settings import Settings

logger = Logger(child=True)

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
# the app: listeners over `Deps`, registered by `register`


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
    bot_token = client.token

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
    register(app, Deps(settings, store, workflow_factory, clock))
    return app


def register(app: App, deps: Deps) -> None:
    """The slash command and every button. Each listener is acknowledged at once; what reads data, calls Slack
    or starts a workflow is lazy (run by the Lambda adapter in a second, asynchronous invocation)."""
    app.use(_ProvideDeps(deps))
    app.command(deps.command_name, matchers=[needs_data])(ack=ack_command, lazy=[answer_command])
    app.command(deps.command_name)(ack_command)  # help and malformed input: answered in the ack, nothing lazy
    for action_id in buttons.BUTTONS:
        app.action(action_id)(ack=ack_button, lazy=[buttons.press])


class _ProvideDeps(Middleware):
    """Puts `deps` in each request's context, where Bolt finds the listeners' `deps` argument."""

    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]) -> BoltResponse:
        req.context["deps"] = self._deps
        return next()


def _parse(deps: Deps, command: dict[str, Any]) -> commands.Command | commands.Reply:
    defaults = commands.Defaults(command=deps.command_name, top_n=deps.settings.slack.top_n)
    return commands.parse(str(command.get("text", "")), defaults)


def ack_command(deps: Deps, ack: Ack, command: dict[str, Any]) -> None:
    parsed = _parse(deps, command)
    if isinstance(parsed, commands.Reply):
        ack(response_type="ephemeral", text=parsed.text)
    else:
        ack()  # the answer follows through response_url, from the lazy listener


def needs_data(deps: Deps, command: dict[str, Any]) -> bool:
    return not isinstance(_parse(deps, command), commands.Reply)


def answer_command(deps: Deps, command: dict[str, Any], respond: Respond, client: WebClient) -> None:
    parsed = _parse(deps, command)
    if isinstance(parsed, commands.Reply):  # answered in the acknowledgement (`needs_data` keeps it from here)
        return
    try:
        asked = commands.Asked(deps, str(command.get("user_id", "")), deps.clock(), MessageBoard(client, deps.store))
        for message in parsed.answer(asked)[:MAX_RESPONSES]:
            respond(**message, response_type="ephemeral")
    except Exception:
        logger.exception("slash command failed", extra={"verb": parsed.verb})
        respond(
            text=":warning: Something went wrong; it has been logged. Try again in a minute.",
            response_type="ephemeral",
        )


def ack_button(ack: Ack) -> None:
    ack()


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


__all__: Sequence[str] = (
    "Deps",
    "LambdaEntry",
    "RequestGuard",
    "SlackStore",
    "build_app",
    "register",
    "request_digest",
)
