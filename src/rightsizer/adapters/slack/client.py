"""The one way this project makes a slack_sdk WebClient: with retries for rate limits and Slack's own errors.

Slack answers 429 with a Retry-After header when a method's rate limit is hit (chat.postMessage: about one
message per second per channel), and 500/503 on its own trouble. slack_sdk's built-in handlers wait and
retry; without them a long daily report stops half-posted.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import RetryHandler
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from rightsizer.adapters.slack.secrets import slack_credentials

DEFAULT_API_URL = "https://slack.com/api/"
RATE_LIMIT_RETRIES = 3  # each waits Retry-After (+ up to 1 s of jitter)
SERVER_ERROR_RETRIES = 2  # exponential backoff with jitter
CONNECTION_RETRIES = 1  # slack_sdk's default


def retry_handlers() -> list[RetryHandler]:
    return [
        ConnectionErrorRetryHandler(max_retry_count=CONNECTION_RETRIES),
        RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ServerErrorRetryHandler(max_retry_count=SERVER_ERROR_RETRIES),
    ]


def web_client(token: str | None = None, base_url: str = DEFAULT_API_URL) -> WebClient:
    return WebClient(token=token, base_url=base_url, retry_handlers=retry_handlers())


def bot_client(secret_name: str, api_url: str = DEFAULT_API_URL) -> WebClient:
    """A WebClient with the bot token from `secret_name` (adapters/slack/secrets.py, cached by Powertools): what the
    daily report and the notifier post with."""
    return web_client(slack_credentials(secret_name).bot_token, api_url)


# Slack's answers no retry can change, and what a person does about each ({channel}: the channel as configured). Their
# codes alone name neither the channel nor the fix (docs/connect-slack.md, Troubleshooting).
_TOKEN = (
    "the bot token in the Slack secret is not valid ({code}): reinstall the app and put its Bot User OAuth Token "
    "(xoxb-...) in the secret (docs/connect-slack.md, steps 3 and 4)"
)
_ARCHIVED = "{channel} is archived: unarchive it, or set the SlackChannel parameter to a channel in use"
WHAT_TO_DO: Mapping[str, str] = MappingProxyType(
    {
        "channel_not_found": (
            "Slack knows no channel {channel} that the app can see: set the SlackChannel parameter to the channel's "
            "id (in Slack: the channel's name -> About; the C... id is at the bottom), and for a private channel "
            "invite the app first (docs/connect-slack.md, steps 5 and 6)"
        ),
        "not_in_channel": (
            "the app is not a member of {channel}: send `/invite @GPU Rightsizer` in that channel "
            "(docs/connect-slack.md, step 6)"
        ),
        "is_archived": _ARCHIVED,
        "channel_is_archived": _ARCHIVED,
        "restricted_action": (
            "the workspace's settings do not let the app post in {channel}: ask a Slack admin to allow it, or set "
            "the SlackChannel parameter to another channel"
        ),
        "restricted_action_read_only_channel": (
            "{channel} is read-only for the app (an announcement channel): let it post there, or set the "
            "SlackChannel parameter to another channel"
        ),
        "restricted_action_thread_only_channel": (
            "{channel} accepts replies in threads only: let the app post there, or set the SlackChannel parameter to "
            "another channel"
        ),
        "missing_scope": (
            "the app lacks an OAuth scope it needs (chat:write; files:write for the chart): add it under OAuth & "
            "Permissions, reinstall the app and put the new bot token in the secret"
        ),
        "invalid_auth": _TOKEN,
        "not_authed": _TOKEN,
        "token_revoked": _TOKEN,
        "token_expired": _TOKEN,
        "account_inactive": _TOKEN,
    }
)


class SlackRefused(Exception):
    """Slack refused a call for a reason only a person can fix (the channel, the app's membership or scopes, the
    token): its message names the channel and what to do; `code` is Slack's error code."""

    def __init__(self, advice: str, code: str) -> None:
        super().__init__(advice)
        self.code = code


def refused(error: SlackApiError, channel: str, what: str) -> SlackRefused | None:
    """`error` in words a person can act on when Slack's code is one of WHAT_TO_DO (`what`: what was refused, e.g.
    "the daily report"); None for the others (rate limits and Slack's own trouble are retried, not explained)."""
    code = str(error.response.get("error", "")) if error.response is not None else ""
    fix = WHAT_TO_DO.get(code)
    if fix is None:
        return None
    return SlackRefused(
        f"Slack refused {what} in channel {channel} ({code}): {fix.format(channel=channel, code=code)}", code
    )
