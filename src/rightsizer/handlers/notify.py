"""NotifierFunction: resize progress events (EventBridge) -> approval status, audit, Slack thread."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from aws_lambda_powertools import Logger

from rightsizer.services.notify import (
    ApprovalRecords,
    MalformedProgress,
    NotificationFailed,
    ResizeProgress,
    ThreadNotifier,
    handle_progress,
)

logger = Logger()


@dataclass(frozen=True)
class Dependencies:
    store: ApprovalRecords
    notifier: ThreadNotifier


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    return process(event, dependencies(), datetime.now(UTC))


def process(event: Mapping[str, Any], deps: Dependencies, now: datetime) -> dict[str, str]:
    try:
        progress = progress_from_event(event)
    except MalformedProgress as error:
        # Retries cannot fix a malformed event: log it and let EventBridge's delivery end here.
        logger.error("malformed resize progress event", extra={"reason": str(error), "event_id": event.get("id")})
        return {"outcome": "malformed", "detail": str(error)}
    result = handle_progress(progress, deps.store, deps.notifier, now)
    answer = {"outcome": result.outcome.value, "status": result.status, "detail": result.detail}
    logger.info(
        "resize progress",
        extra={"recommendation_id": progress.recommendation_id, "step": progress.step, **answer},
    )
    return answer


def progress_from_event(event: Mapping[str, Any]) -> ResizeProgress:
    detail = event.get("detail")
    if not isinstance(detail, Mapping):
        raise MalformedProgress("event has no detail object")
    # Step Functions' putEvents integration lists the state machine and execution ARNs in `resources`.
    resources = event.get("resources") or []
    execution = next((str(r) for r in resources if ":execution:" in str(r)), "")
    return ResizeProgress.from_detail(detail, execution_arn=execution)


@cache  # built on the first invocation, reused while the function is warm
def dependencies() -> Dependencies:
    import boto3

    from rightsizer.adapters.aws.store import DynamoStore
    from rightsizer.settings import Settings

    settings = Settings.from_env()
    store = DynamoStore.from_name(boto3.Session(), settings.table_name, settings.home_region)
    secret_name, api_url = settings.slack.secret_name, settings.slack.api_url
    return Dependencies(store, SlackThreadNotifier(lambda: slack_client(secret_name, api_url)))


def slack_client(secret_name: str, api_url: str = "https://slack.com/api/") -> Any:
    from slack_sdk import WebClient

    from rightsizer.adapters.slack.secrets import slack_credentials

    return WebClient(token=slack_credentials(secret_name).bot_token, base_url=api_url)


class SlackThreadNotifier:
    """`ThreadNotifier` over a slack_sdk WebClient, created on first use (no secret read when there is no
    thread to post to). `client_factory` is injectable so tests can hand in a fake client."""

    def __init__(self, client_factory: Callable[[], Any]) -> None:
        self._client_factory = client_factory
        self._client: Any | None = None

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._call("chat_postMessage", channel=channel, thread_ts=thread_ts, text=text, unfurl_links=False)

    def update_root(self, channel: str, ts: str, text: str) -> None:
        # Replacing the blocks retires the root's Approve button once the resize is over.
        block = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
        self._call("chat_update", channel=channel, ts=ts, text=text, blocks=[block])

    def _call(self, method: str, **kwargs: Any) -> None:
        from slack_sdk.errors import SlackClientError

        from rightsizer.adapters.slack.secrets import SlackNotConfigured

        try:
            if self._client is None:
                self._client = self._client_factory()
            getattr(self._client, method)(**kwargs)
        except SlackNotConfigured as error:
            raise NotificationFailed(str(error)) from error  # names the secret, never its value
        except SlackClientError as error:
            raise NotificationFailed(f"{method} failed: {_slack_reason(error)}") from error
        except OSError as error:  # network trouble (URLError, timeouts)
            raise NotificationFailed(f"{method} failed: {type(error).__name__}: {error}") from error


def _slack_reason(error: Exception) -> str:
    response = getattr(error, "response", None)
    if response is not None:
        try:
            return str(response.get("error") or error)
        except AttributeError:
            return str(error)
    return str(error)
