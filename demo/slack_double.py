"""A local stand-in for the Slack Web API and response_url, plus signed-request builders.

`SlackDouble` is a stdlib HTTP server on 127.0.0.1 (random port) that records every call a real
`slack_sdk.WebClient` makes (base_url=double.api_url) and every POST to a response_url it hands out.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # the example secret of Slack's docs
BOT_TOKEN = "xoxb-000000000000-test-token"
TEAM = "T0RIGHTSIZE"
TEAM_NAME = "rightsize-demo"
BOT_USER, BOT_NAME = "UBOT", "gpu-rightsizer"


@dataclass(frozen=True)
class Channel:
    """A channel as conversations.info describes it to the bot: its name, and whether the bot is a member."""

    name: str
    is_member: bool = True
    is_private: bool = False


@dataclass
class Call:
    method: str  # Web API method, or "response_url"
    params: dict[str, Any]
    token: str = ""
    path: str = ""
    answer: dict[str, Any] = field(default_factory=dict)  # what the double replied (e.g. the message ts)


@dataclass
class SlackDouble:
    """Records calls; answers like Slack (`ok: true`, increasing message timestamps)."""

    usergroup_members: dict[str, list[str]] = field(default_factory=dict)
    channels: dict[str, Channel] = field(default_factory=dict)  # channel id -> what conversations.info answers
    failures: dict[str, str] = field(default_factory=dict)  # method -> Slack error code to answer with
    # method -> [calls to let through, then how many to answer with an HTTP status: 429 Too Many Requests
    # (Retry-After: 1), or 503 Service Unavailable]
    rate_limits: dict[str, list[int]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    # file id -> the bytes posted to its upload URL (step 2 of Slack's external upload)
    uploads: dict[str, bytes] = field(default_factory=dict)
    pending_uploads: dict[str, int] = field(default_factory=dict)  # file id -> the length step 1 announced
    _ts: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _file_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _server: ThreadingHTTPServer | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> SlackDouble:
        double = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                double._handle(self, dict(parse_qsl(urlsplit(self.path).query)))

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if urlsplit(self.path).path.startswith(UPLOAD_PATH):
                    double._receive_upload(self, data)
                    return
                raw = data.decode()
                if "json" in (self.headers.get("Content-Type") or ""):
                    params = json.loads(raw or "{}")
                else:
                    params = dict(parse_qsl(raw))
                    for key in ("blocks", "attachments", "metadata", "files"):
                        if isinstance(params.get(key), str):
                            params[key] = json.loads(params[key])
                double._handle(self, params)

            def log_message(self, format: str, *args: Any) -> None:
                return None  # keep pytest output clean

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll interval keeps stop() (shutdown waits for one poll) from adding half a second per test.
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="slack-double", daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base(self) -> str:
        assert self._server is not None, "start() first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"

    def response_url(self, key: str = "r1") -> str:
        return f"{self.base}/response/{key}"

    # -- queries -------------------------------------------------------------------------------

    def of(self, method: str) -> list[Call]:
        with self._changed:
            return [call for call in self.calls if call.method == method]

    def wait_for(self, predicate: Callable[[list[Call]], bool], timeout: float = 5.0) -> list[Call]:
        """Block until `predicate(calls)` holds (a condition variable, not a sleep); fail after `timeout`."""
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(list(self.calls)), timeout=timeout):
                raise AssertionError(f"Slack double: condition not met; calls so far: {[c.method for c in self.calls]}")
            return list(self.calls)

    def texts(self, method: str | None = None) -> str:
        """Everything a person would read in the recorded calls (text, blocks), as one string."""
        chosen = self.calls if method is None else self.of(method)
        return "\n".join(json.dumps(call.params, ensure_ascii=False) for call in chosen)

    def clear(self) -> None:
        with self._changed:
            self.calls.clear()

    # -- serving -------------------------------------------------------------------------------

    def _handle(self, request: BaseHTTPRequestHandler, params: dict[str, Any]) -> None:
        path = urlsplit(request.path).path
        token = (request.headers.get("Authorization") or "").removeprefix("Bearer ")
        if path.startswith("/response/"):
            call = Call("response_url", params, token, path)
            body, content_type = b"ok", "text/plain"
        else:
            method = path.removeprefix("/api/")
            refused = self._refused(method)
            if refused:
                request.send_response(refused)
                if refused == 429:
                    request.send_header("Retry-After", "1")
                request.send_header("Content-Length", "0")
                request.end_headers()
                return  # not recorded: Slack did not take it
            answer = self._answer(method, params)
            call = Call(method, params, token, path, answer)
            body, content_type = json.dumps(answer).encode(), "application/json; charset=utf-8"
        with self._changed:
            self.calls.append(call)
            self._changed.notify_all()
        request.send_response(200)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def _receive_upload(self, request: BaseHTTPRequestHandler, data: bytes) -> None:
        """Step 2 of the external upload: the file's bytes POSTed to the URL step 1 gave (Slack answers 200 "OK")."""
        file_id = urlsplit(request.path).path.removeprefix(UPLOAD_PATH)
        with self._changed:
            known = file_id in self.pending_uploads
            if known:
                self.uploads[file_id] = data
            self.calls.append(Call("upload", {"file_id": file_id, "length": len(data)}, "", request.path))
            self._changed.notify_all()
        body = b"OK - " + str(len(data)).encode() if known else b"unknown upload url"
        request.send_response(200 if known else 404)
        request.send_header("Content-Type", "text/plain")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def rate_limit(self, method: str, *, after: int, times: int) -> None:
        """Let `after` calls of `method` through, then answer the next `times` ones with 429."""
        with self._changed:
            self.rate_limits[method] = [after, times, 429]

    def unavailable(self, method: str, *, after: int, times: int) -> None:
        """Let `after` calls of `method` through, then answer the next `times` ones with 503 (Slack's own trouble)."""
        with self._changed:
            self.rate_limits[method] = [after, times, 503]

    def _refused(self, method: str) -> int:
        """The HTTP status to refuse this call of `method` with; 0: answer it."""
        with self._changed:
            plan = self.rate_limits.get(method)
            if plan is None:
                return 0
            if plan[0] > 0:
                plan[0] -= 1
                return 0
            if plan[1] > 0:
                plan[1] -= 1
                return plan[2]
            return 0

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in self.failures:
            return {"ok": False, "error": self.failures[method]}
        if method == "auth.test":
            return {
                "ok": True,
                "url": f"https://{TEAM_NAME}.slack.com/",
                "team": TEAM_NAME,
                "team_id": TEAM,
                "user": BOT_NAME,
                "user_id": BOT_USER,
                "bot_id": "BBOT",
            }
        if method == "conversations.info":
            return self._channel(str(params.get("channel", "")))
        if method == "chat.postMessage":
            ts = f"1764590400.{next(self._ts):06d}"
            return {"ok": True, "channel": params.get("channel"), "ts": ts, "message": {"ts": ts, **params}}
        if method == "chat.update":
            return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"1764590400.{next(self._ts):06d}"}
        if method in ("files.getUploadURLExternal", "files.completeUploadExternal"):
            return self._external_upload(method, params)
        if method == "files.upload":  # retired by Slack (2025): the external upload replaces it
            return {"ok": False, "error": "method_deprecated"}
        if method == "usergroups.users.list":
            group = str(params.get("usergroup", ""))
            if group not in self.usergroup_members:
                return {"ok": False, "error": "no_such_subteam"}
            return {"ok": True, "users": self.usergroup_members[group]}
        return {"ok": True}

    def _channel(self, channel_id: str) -> dict[str, Any]:
        """conversations.info as Slack answers a bot: a private channel it is not in does not exist for it."""
        channel = self.channels.get(channel_id)
        if channel is None or (channel.is_private and not channel.is_member):
            return {"ok": False, "error": "channel_not_found"}
        described = {"id": channel_id, "name": channel.name, "is_channel": not channel.is_private}
        return {"ok": True, "channel": {**described, "is_private": channel.is_private, "is_member": channel.is_member}}

    def _external_upload(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """files.getUploadURLExternal (step 1: a URL for `length` bytes) and files.completeUploadExternal (step 3:
        share the uploaded files in a channel or thread), checked as Slack checks them."""
        if method == "files.getUploadURLExternal":
            length = str(params.get("length", ""))
            if not params.get("filename") or not length.isdigit() or int(length) <= 0:
                return {"ok": False, "error": "invalid_arguments"}
            file_id = f"F{next(self._file_ids):08d}"
            self.pending_uploads[file_id] = int(length)
            return {"ok": True, "upload_url": f"{self.base}{UPLOAD_PATH}{file_id}", "file_id": file_id}
        files = params.get("files")
        if not isinstance(files, list) or not files:
            return {"ok": False, "error": "invalid_arguments"}
        for item in files:
            file_id = str(item.get("id", ""))
            if file_id not in self.uploads or len(self.uploads[file_id]) != self.pending_uploads.get(file_id):
                return {"ok": False, "error": "file_not_found"}
        shared = [{"id": item["id"], "title": item.get("title") or ""} for item in files]
        return {"ok": True, "files": shared}


UPLOAD_PATH = "/upload/v1/"  # files.slack.com/upload/v1/... in Slack; here on the double's own port


# ---------------------------------------------------------------------------------------------
# signed requests in the Function URL (payload format 2.0) event shape


def sign(body: str, timestamp: int, secret: str = SIGNING_SECRET) -> str:
    """Slack's v0 scheme: HMAC-SHA256 over "v0:{timestamp}:{body}", hex, prefixed "v0="."""
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return f"v0={digest}"


def function_url_event(
    template: dict[str, Any],
    body: str,
    *,
    timestamp: int | None = None,
    secret: str = SIGNING_SECRET,
    base64_body: bool | None = None,
    extra_headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A copy of a sample event (events/*.json) carrying `body`, signed now (or at `timestamp`)."""
    event = copy.deepcopy(template)
    stamp = int(time.time()) if timestamp is None else timestamp
    encode = event.get("isBase64Encoded", False) if base64_body is None else base64_body
    event["body"] = base64.b64encode(body.encode()).decode() if encode else body
    event["isBase64Encoded"] = encode
    headers = {k.lower(): v for k, v in event["headers"].items()}
    headers["x-slack-request-timestamp"] = str(stamp)
    headers["x-slack-signature"] = sign(body, stamp, secret)
    headers["content-length"] = str(len(body.encode()))
    headers.update({k.lower(): v for k, v in (extra_headers or {}).items()})
    event["headers"] = headers
    event["requestContext"]["timeEpoch"] = stamp * 1000
    return event


def command_body(text: str, *, user: str = "U0ALICE", command: str = "/gpu", response_url: str = "") -> str:
    return urlencode(
        {
            "token": "deprecated-verification-token",
            "team_id": TEAM,
            "team_domain": "example",
            "channel_id": "C0GPUREPORT",
            "channel_name": "gpu-fleet",
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": "A0RIGHTSIZE",
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": "13345224609.738474920.8088930838d88f008e0",
        }
    )


def click_body(
    action_id: str,
    recommendation_id: str,
    *,
    user: str = "U0ALICE",
    channel: str = "C0GPUREPORT",
    message: dict[str, Any] | None = None,
    ephemeral: bool = False,
    response_url: str = "",
) -> str:
    """A block_actions payload for a button in `message` (as chat.postMessage sent it)."""
    ts = str((message or {}).get("ts", "1764590400.000001"))
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": "A0RIGHTSIZE",
        "team": {"id": TEAM, "domain": "example"},
        "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": ephemeral},
        "trigger_id": "13345224609.738474920.8088930838d88f008e0",
        "channel": {"id": channel, "name": "gpu-fleet"},
        "response_url": response_url,
        "actions": [
            {
                "action_id": action_id,
                "block_id": f"act:{recommendation_id}",
                "value": recommendation_id,
                "type": "button",
                "action_ts": "1764590460.000100",
            }
        ],
    }
    if not ephemeral:
        payload["message"] = {"type": "message", "ts": ts, "text": "GPU fleet report", **(message or {})}
    return urlencode({"payload": json.dumps(payload)})
