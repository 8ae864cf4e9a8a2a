"""The Slack app's front door: every Function URL request is judged here, on its raw bytes, before Bolt.

Bolt parses a body before it checks its signature, and its parser trusts what it reads (undecodable bytes,
invalid base64, a `payload=` that is not a JSON object or any form that merely contains the text "payload"
make it raise or misroute). So this module answers first:

  * 401 to anything whose v0 signature cannot be verified over the exact bytes Slack sent (missing, stale or
    malformed headers, undecodable base64, a wrong signature): nothing about it is trusted, not even its shape;
  * 400 to a signed request that is not a slash command or a button click of this app;
  * and hands Bolt, for the rest, a body parsed from its real form fields and reduced to the fields this app
    reads, each of the type Slack documents.

Nothing here raises for any input; every rejection is one structured log line, never a traceback.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

MAX_AGE_SECONDS = 300  # Slack's window: older (or future) timestamps are replays or clock trouble
MAX_FIELDS = 64
FORM = "application/x-www-form-urlencoded"
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")

# The slash-command fields Slack sends (api.slack.com/interactivity/slash-commands); all strings.
COMMAND_FIELDS = (
    "token",
    "team_id",
    "team_domain",
    "enterprise_id",
    "enterprise_name",
    "channel_id",
    "channel_name",
    "user_id",
    "user_name",
    "command",
    "text",
    "api_app_id",
    "is_enterprise_install",
    "response_url",
    "trigger_id",
)


@dataclass(frozen=True)
class Rejection:
    status: int  # 400 (signed but malformed), 401 (unverifiable) or 405 (not a POST)
    reason: str  # for the log line only: callers learn nothing from the body

    def response(self) -> dict[str, Any]:
        return {"statusCode": self.status, "headers": {"content-type": "text/plain"}, "body": ""}


@dataclass(frozen=True)
class Verified:
    """A request signed by Slack with the app's secret, within the time window, and well-formed."""

    raw_body: str  # exactly what was signed, as text
    body: dict[str, Any]  # a slash command's fields, or a button click's payload object, normalised
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "command" if "command" in self.body else str(self.body.get("type", "ssl_check"))


class Malformed(ValueError):
    """A signed body this app does not understand; the message says what is wrong, for the log."""


def verify(event: Mapping[str, Any], signing_secret: str, now: float) -> Verified | Rejection:
    """Judge one Function URL (payload format 2.0) event. Never raises."""
    context = event.get("requestContext")
    http = context.get("http") if isinstance(context, Mapping) else None
    if not isinstance(http, Mapping) or http.get("method") != "POST":
        return Rejection(405, "not a POST request")
    headers = _headers(event.get("headers"))
    raw = _raw_body(event)
    if raw is None:
        return Rejection(401, "body is not valid base64 (or not text)")
    problem = _signature_problem(headers, raw, signing_secret, now)
    if problem:
        return Rejection(401, problem)
    try:
        text = raw.decode("utf-8")
        return Verified(raw_body=text, body=_routed_body(text, headers.get("content-type", "")), headers=headers)
    except UnicodeDecodeError:
        return Rejection(400, "signed body is not UTF-8")
    except Malformed as error:
        return Rejection(400, str(error))


def _headers(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(name).lower(): value for name, value in raw.items() if isinstance(value, str)}


def _raw_body(event: Mapping[str, Any]) -> bytes | None:
    body = event.get("body") or ""
    if not isinstance(body, str):
        return None
    try:
        if event.get("isBase64Encoded") is True:
            return base64.b64decode(body, validate=True)
        return body.encode("utf-8")
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None


def _signature_problem(headers: Mapping[str, str], raw: bytes, secret: str, now: float) -> str:
    timestamp = headers.get("x-slack-request-timestamp", "")
    signature = headers.get("x-slack-signature", "")
    if not _TIMESTAMP.fullmatch(timestamp):
        return "missing or non-numeric X-Slack-Request-Timestamp"
    if abs(now - int(timestamp)) > MAX_AGE_SECONDS:
        return "X-Slack-Request-Timestamp outside the five-minute window"
    if not _SIGNATURE.fullmatch(signature):
        return "missing or malformed X-Slack-Signature"
    expected = "v0=" + hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        return "signature does not match"
    return ""


def _routed_body(text: str, content_type: str) -> dict[str, Any]:
    if content_type.split(";", 1)[0].strip().lower() != FORM:
        raise Malformed(f"content type {content_type[:60]!r} is not {FORM}")
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True, errors="strict", max_num_fields=MAX_FIELDS)
    except ValueError as error:  # also UnicodeDecodeError from a percent-escape that is not UTF-8
        raise Malformed(f"body is not a form: {type(error).__name__}") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise Malformed("a form field appears twice")
    if "payload" in fields:
        return _interaction(fields["payload"])
    if "command" in fields:
        return _command(fields)
    if fields.get("ssl_check") == "1":
        return {"ssl_check": "1", "token": fields.get("token", "")}  # Bolt answers Slack's SSL check itself
    raise Malformed("form is neither a slash command nor an interaction")


def _command(fields: Mapping[str, str]) -> dict[str, Any]:
    if not (fields["command"].startswith("/") and fields.get("user_id")):
        raise Malformed("slash command without a command name or a user")
    return {name: fields[name] for name in COMMAND_FIELDS if name in fields}


def _interaction(raw: str) -> dict[str, Any]:
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):
        raise Malformed("payload is not JSON") from None
    if not isinstance(payload, dict):
        raise Malformed("payload is not a JSON object")
    if payload.get("type") != "block_actions":
        raise Malformed(f"interaction type {str(payload.get('type'))[:40]!r} is not used by this app")
    return _block_actions(payload)


def _block_actions(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The click, reduced to the fields this app reads, each checked for its documented type."""
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions:
        raise Malformed("block_actions without actions")
    user = _object(payload, "user", required=True)
    if not _text(user.get("id")):
        raise Malformed("block_actions without a user id")
    clean: dict[str, Any] = {
        "type": "block_actions",
        "user": _strings(user, "id", "username", "name", "team_id"),
        "actions": [_action(action) for action in actions[:25]],
        **_strings(payload, "api_app_id", "trigger_id", "response_url"),
    }
    for name, keys in (
        ("team", ("id", "domain", "enterprise_id")),
        ("channel", ("id", "name")),
        ("enterprise", ("id", "name")),
    ):
        if payload.get(name) is not None:
            clean[name] = _strings(_object(payload, name), *keys)
    container = _object(payload, "container")
    if container:
        clean["container"] = {
            **_strings(container, "type", "message_ts", "channel_id"),
            "is_ephemeral": container.get("is_ephemeral") is True,
        }
    message = _object(payload, "message")
    if message:
        blocks = message.get("blocks", [])
        if not isinstance(blocks, list) or not all(isinstance(block, dict) for block in blocks):
            raise Malformed("message blocks are not a list of objects")
        clean["message"] = {**_strings(message, "type", "ts", "text", "thread_ts"), "blocks": blocks[:50]}
    return clean


def _action(action: Any) -> dict[str, str]:
    if not isinstance(action, dict) or not _text(action.get("action_id")):
        raise Malformed("an action without an action_id")
    return _strings(action, "action_id", "block_id", "value", "type", "action_ts")


def _object(payload: Mapping[str, Any], name: str, *, required: bool = False) -> dict[str, Any]:
    value = payload.get(name)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise Malformed(f"{name} is not an object")
    return value


def _strings(source: Mapping[str, Any], *names: str) -> dict[str, str]:
    """The named fields that are present; each must be a string."""
    picked = {}
    for name in names:
        value = source.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise Malformed(f"{name} is not a string")
        picked[name] = value
    return picked


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)
