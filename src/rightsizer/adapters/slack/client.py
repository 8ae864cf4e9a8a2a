"""The one way this project makes a slack_sdk WebClient: with retries for rate limits and Slack's own errors.

Slack answers 429 with a Retry-After header when a method's rate limit is hit (chat.postMessage: about one
message per second per channel), and 500/503 on its own trouble. slack_sdk's built-in handlers wait and
retry; without them a long daily report stops half-posted.
"""

from __future__ import annotations

from slack_sdk import WebClient
from slack_sdk.http_retry import RetryHandler
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

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
