"""The workflow's progress in Slack: `ThreadNotifier` (services/notify.py) over a slack_sdk WebClient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError

from rightsizer.adapters.slack.client import refused
from rightsizer.adapters.slack.messages import MessageBoard, MessageStore
from rightsizer.adapters.slack.secrets import SlackNotConfigured
from rightsizer.services.notify import SLACK_POST_TEXT_MAX, SLACK_TEXT_MAX, NotificationFailed, for_slack


class SlackThreadNotifier:
    """`ThreadNotifier` over a slack_sdk WebClient, created on first use (no secret read when there is no
    thread to post to). `client_factory` is injectable so tests can hand in a fake client."""

    def __init__(self, client_factory: Callable[[], Any], messages: MessageStore) -> None:
        self._client_factory = client_factory
        self._client: Any | None = None
        self._messages = messages

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        text = for_slack(text, SLACK_POST_TEXT_MAX)  # what Slack would cut itself, cut here with a pointer
        self._call(channel, lambda client: client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text,
                                                                   unfurl_links=False))  # fmt: skip

    def update_root(self, channel: str, ts: str, recommendation_id: str, text: str) -> None:
        # Retires the Approve button: in a daily report only this recommendation's line changes. A thread opened
        # for the approval alone becomes one section block, whose text Slack refuses past 3,000 characters.
        text = for_slack(text, SLACK_TEXT_MAX)
        self._call(
            channel, lambda client: MessageBoard(client, self._messages).settle(channel, ts, recommendation_id, text)
        )

    def _call(self, channel: str, action: Callable[[Any], object]) -> None:
        try:
            if self._client is None:
                self._client = self._client_factory()
            action(self._client)
        except SlackNotConfigured as error:
            raise NotificationFailed(str(error)) from error  # names the secret, never its value
        except SlackApiError as error:
            explained = refused(error, channel, "the workflow's progress")
            reason = str(explained) if explained is not None else _slack_reason(error)
            raise NotificationFailed(f"Slack refused: {reason}") from error
        except SlackClientError as error:
            raise NotificationFailed(f"Slack refused: {_slack_reason(error)}") from error
        except OSError as error:  # network trouble (URLError, timeouts)
            raise NotificationFailed(f"Slack unreachable: {error}") from error


def _slack_reason(error: Exception) -> str:
    response = getattr(error, "response", None)
    if response is not None:
        try:
            return str(response.get("error") or error)
        except AttributeError:
            return str(error)
    return str(error)
