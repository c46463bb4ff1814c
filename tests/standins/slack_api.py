"""A loopback stand-in for the Slack Web API.

The Block Kit validator is in ``slack_blocks``, the builders of signed requests Slack sends in ``slack_requests``;
both are re-exported here for the tests that import them from this module.

The real Slack API cannot be reached from the test machines, and mocking ``slack_sdk`` or ``slack_bolt`` would
only test our assumptions about them. So this module runs a small HTTP server on 127.0.0.1 that speaks the Web
API well enough for ``WebClient(base_url=standin.url + "/api/")`` and bolt's ``App(client=...)`` to talk to it
unmodified, and it enforces the limits that bite in production:

* Block Kit: at most 50 blocks per message (100 per view), section/context text at most 3,000 characters,
  header 150, button text 75, action_id/block_id 255, the total blocks payload (``msg_blocks_too_long``, observed
  at about 13.2k characters in slackapi/bolt-js#2509), message ``text`` at most 40,000 (``msg_too_long``).
* Errors use Slack's shapes: HTTP 200 with ``{"ok": false, "error": ...}``; ``invalid_blocks`` and
  ``invalid_arguments`` carry ``errors`` and ``response_metadata.messages`` with ``[ERROR] ... [json-pointer:...]``.
* ``chat.postMessage`` is limited per channel (token bucket: ``post_rate_per_channel`` per second, ``burst``
  deep). Beyond it the answer is HTTP 429 with ``Retry-After`` and ``{"ok": false, "error": "ratelimited"}``.
* Other methods are limited per workspace by their tier (``METHOD_LIMITS``: Tier 3 ``chat.update``,
  ``conversations.history``, ``conversations.replies`` at 50 a minute; Tier 4 ``files.*`` and
  ``chat.getPermalink`` at 100 a minute; each with a small burst), answered the same way when exceeded.
* Message metadata (``metadata={"event_type", "event_payload"}`` on ``chat.postMessage``) is checked like Slack
  checks it (``invalid_metadata_format``, ``invalid_metadata_schema``, ``metadata_too_large``) and returned by
  ``conversations.history``/``conversations.replies`` only with ``include_all_metadata``.
* ``files_upload_v2``'s three steps (getUploadURLExternal, POST to the returned URL, completeUploadExternal).
* ``response_url`` endpoints that accept five posts within 30 minutes.

``SlackFault`` entries override any of this, to drive outages, 5xx, slow answers and auth failures.

Where Slack's exact behaviour is not documented (the blocks-size ceiling, response_url error bodies, messages for
unknown block types), the stand-in errs on the strict side, so code that passes here has a margin against Slack.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import email.parser
import email.policy
import hmac
import itertools
import json
import math
import re
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.standins.slack_blocks import (
    DEFAULT_MAX_BLOCKS_JSON,
    DEFAULT_MAX_TEXT,
    JSON,
    MAX_ID,
    MAX_PRIVATE_METADATA,
    MAX_VIEW_BLOCKS,
    MAX_VIEW_TITLE,
    MESSAGE_BLOCK_TYPES,
    RESPONSE_URL_MAX_USES,
    RESPONSE_URL_TTL,
    BlockChecker,
    blocks_json_size,
    validate_blocks,
)
from tests.standins.slack_requests import (
    APP_ID,
    BOT_ID,
    BOT_USER_ID,
    TEAM_DOMAIN,
    TEAM_ID,
    app_home_opened_event,
    app_mention_event,
    block_action_body,
    channel_name,
    event_body,
    message_event,
    message_shortcut_body,
    sign,
    signed_headers,
    slash_command_body,
    view_submission_body,
)

# Re-exported: tests build requests and check blocks through this module.
__all__ = [
    "APP_ID",
    "BOT_USER_ID",
    "TEAM_DOMAIN",
    "TEAM_ID",
    "Call",
    "Message",
    "SlackFault",
    "SlackStandIn",
    "app_home_opened_event",
    "app_mention_event",
    "block_action_body",
    "event_body",
    "message_event",
    "message_shortcut_body",
    "sign",
    "signed_headers",
    "slash_command_body",
    "view_submission_body",
]

BOT_NAME = "triagebot"
# Per-workspace limits of the tiered methods: (calls per minute, burst). Slack documents the tiers ("Tier 3: 50+
# per minute", "Tier 4: 100+ per minute", "occasional bursts"), not the burst size; a small one errs strict.
TIER_3 = (50.0, 10)
TIER_4 = (100.0, 20)
METHOD_LIMITS: dict[str, tuple[float, int]] = {
    "chat.update": TIER_3, "conversations.history": TIER_3, "conversations.replies": TIER_3,
    "chat.getPermalink": TIER_4, "files.getUploadURLExternal": TIER_4, "files.completeUploadExternal": TIER_4,
}
MAX_METADATA_CHARS = 8000  # the serialised metadata; Slack does not document its ceiling, so stay modest
_EVENT_TYPE = re.compile(r"[A-Za-z0-9_.-]{1,255}")
WORKSPACE_URL = f"https://{TEAM_DOMAIN}.slack.com/"

# --------------------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------------------


@dataclass
class SlackFault:
    """An injected failure for one method.

    ``method`` is a Web API method name (``"chat.postMessage"``), ``"*"`` for every method, ``"upload"`` for the
    upload URL, or ``"response_url"``. ``error="ratelimited"`` answers HTTP 429 with ``Retry-After``
    (``retry_after``, default 1). ``error=None`` with ``status`` 200 only adds ``delay``; with another status it
    answers that status with a non-JSON body, like a load balancer in front of a failing Slack.
    ``times=None`` fires forever. ``delay_after`` holds a successful answer back after the call took effect (the
    message is stored, the caller does not know yet): the window in which a crashing caller posts twice.
    ``applied=True`` lets the call take effect and then answers with the fault, as a proxy does that times out
    (502/503/504) while Slack behind it has already posted.
    """

    method: str
    error: str | None = None
    status: int = 200
    retry_after: int | None = None
    times: int | None = None
    delay: float = 0.0
    delay_after: float = 0.0
    applied: bool = False


@dataclass
class Call:
    """One request the stand-in answered, kept in order in ``SlackStandIn.calls``."""

    method: str
    params: JSON
    response: JSON
    status: int
    time: float


@dataclass
class Message:
    """A message as the stand-in stores it. ``edits`` holds earlier versions, oldest first."""

    channel: str
    ts: str
    text: str
    blocks: list[JSON]
    user: str
    thread_ts: str | None = None
    bot_id: str | None = None
    reply_broadcast: bool = False
    edits: list[JSON] = field(default_factory=list)
    reactions: dict[str, list[str]] = field(default_factory=dict)
    file_ids: list[str] = field(default_factory=list)
    extra: JSON = field(default_factory=dict)

    @property
    def is_reply(self) -> bool:
        return self.thread_ts is not None and self.thread_ts != self.ts

    def to_api(self) -> JSON:
        """The message as Slack returns it in API responses."""
        out: JSON = {"type": "message", "ts": self.ts, "user": self.user, "text": self.text, "team": TEAM_ID}
        if self.bot_id:
            out["bot_id"] = self.bot_id
            out["app_id"] = APP_ID
        if self.blocks:
            out["blocks"] = self.blocks
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if self.edits:
            out["edited"] = {"user": self.user, "ts": self.edits[-1]["edited_ts"]}
        if self.reactions:
            out["reactions"] = [
                {"name": name, "users": list(users), "count": len(users)} for name, users in self.reactions.items()
            ]
        if self.file_ids:
            # Slack lists the shared files' objects on the message (here the fields a caller can match on).
            shown = {str(f.get("id")): f for f in self.extra.get("files") or []}
            out["files"] = [shown.get(file_id, {"id": file_id}) for file_id in self.file_ids]
            out["upload"] = True
        return out

    def to_api_with(self, include_metadata: bool) -> JSON:
        out = self.to_api()
        if include_metadata and self.extra.get("metadata"):
            out["metadata"] = self.extra["metadata"]
        return out


@dataclass
class UploadedFile:
    """A file shared through files_upload_v2. ``bytes`` is what actually reached the upload URL."""

    id: str
    name: str
    title: str
    length: int
    bytes: builtins.bytes = b""
    channel: str | None = None
    thread_ts: str | None = None
    initial_comment: str | None = None
    alt_txt: str | None = None
    snippet_type: str | None = None
    uploaded: bool = False


@dataclass
class _ResponseUrl:
    url: str
    created: float
    max_uses: int
    ttl: float
    channel: str | None
    message_ts: str | None
    user_id: str
    uses: int = 0


@dataclass
class _Reply:
    status: int
    body: JSON | str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Request:
    method: str
    params: JSON
    token: str | None
    warnings: list[str]
    is_json: bool
    files: dict[str, tuple[str, builtins.bytes]] = field(default_factory=dict)
    raw: builtins.bytes = b""


def _ok(**fields: Any) -> _Reply:
    return _Reply(200, {"ok": True, **fields})


def _err(error: str, status: int = 200, *, messages: Iterable[str] = (), **extra: Any) -> _Reply:
    body: JSON = {"ok": False, "error": error, **extra}
    msgs = list(messages)
    if msgs:
        # Slack puts the bare messages in `errors` and the tagged ones in response_metadata.
        body["errors"] = msgs
        body["response_metadata"] = {"messages": [f"[ERROR] {m}" for m in msgs]}
    return _Reply(status, body)


class _Refused(Exception):
    """A method's answer that ends it early (a missing or unknown argument): the method raises it from a shared
    check, and `_web_api` sends its reply, so no method repeats the check-and-return."""

    def __init__(self, reply: _Reply) -> None:
        super().__init__(reply.body)
        self.reply = reply


def _missing(name: str) -> _Reply:
    return _err("invalid_arguments", messages=[f"missing required field: {name}"])


def _decoded(value: Any) -> Any:
    """An object argument as Slack takes it: the value itself, or JSON text in a form post (None if not JSON, so the
    caller refuses it as any other value that is no object)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes"}
    return bool(value)


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text or None


# --------------------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Tests open many short connections; the default backlog of 5 drops some under a burst.
    request_queue_size = 64

    def __init__(self, standin: SlackStandIn, port: int = 0) -> None:
        self.standin = standin
        super().__init__(("127.0.0.1", port), _Handler)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so httpx can keep connections alive; every answer carries Content-Length.
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr lines; ``SlackStandIn.calls`` is the record."""

    def do_POST(self) -> None:
        self.server.standin._handle(self)

    def do_GET(self) -> None:
        self.server.standin._handle(self)


class SlackStandIn:
    """A Slack Web API on 127.0.0.1 for one test. Use as a context manager.

    ``url`` is the base; the Web API lives under ``url + "/api/"``. Everything the bot did is observable in
    ``calls``, ``messages`` (per channel, in posting order, replies included), ``ephemerals``, ``files``,
    ``response_urls``, ``home_views`` and ``modals``.
    """

    def __init__(
        self,
        *,
        token: str = "xoxb-test-token",
        channels: Iterable[str] = ("C0ALERTS", "C0OPS"),
        users: Mapping[str, str] | None = None,
        post_rate_per_channel: float = 1.0,
        burst: int = 3,
        faults: Iterable[SlackFault] = (),
        max_text_chars: int = DEFAULT_MAX_TEXT,
        max_blocks_json_chars: int = DEFAULT_MAX_BLOCKS_JSON,
        method_limits: Mapping[str, tuple[float, int]] | None = None,
        port: int = 0,
    ) -> None:
        self.token = token
        self.port = port  # 0: the kernel picks; a fixed port lets a test bring Slack "back" where the bot looks
        self.channels: list[str] = list(channels)
        self.users: dict[str, str] = dict(users if users is not None else {"U0ALICE": "alice"})
        self.post_rate_per_channel = post_rate_per_channel
        self.burst = burst
        self.max_text_chars = max_text_chars
        self.max_blocks_json_chars = max_blocks_json_chars
        self.method_limits = dict(METHOD_LIMITS if method_limits is None else method_limits)

        self.calls: list[Call] = []
        self.answering = 0  # calls that took effect and whose answer is held back (SlackFault.delay_after)
        self.messages: dict[str, list[Message]] = {c: [] for c in self.channels}
        self.ephemerals: list[Message] = []
        self.files: list[UploadedFile] = []
        self.response_urls: dict[str, list[JSON]] = {}
        self.home_views: dict[str, JSON] = {}
        self.slack_files_shown = True  # off: every image block's slack_file is refused, as while Slack processes it
        self.modals: list[JSON] = []

        self._lock = threading.RLock()
        self._faults: list[list[Any]] = []
        self.set_faults(list(faults))
        self._buckets: dict[str, tuple[float, float]] = {}
        self._method_buckets: dict[str, tuple[float, float]] = {}
        self._last_ts_us = 0
        self._ids = itertools.count(1)
        self._pending_files: dict[str, UploadedFile] = {}
        self._upload_keys: dict[str, str] = {}
        self._response_url_state: dict[str, _ResponseUrl] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # -- lifecycle ------------------------------------------------------------------------------------------

    def start(self) -> SlackStandIn:
        if self._server is None:
            self._server = _Server(self, self.port)
            host, port = self._server.server_address[:2]
            self.url = f"http://{host!s}:{port}"
            # A short poll interval keeps shutdown (and so each test's teardown) quick.
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="slack-standin", daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._server = None

    def __enter__(self) -> SlackStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def api_url(self) -> str:
        """What to pass as ``WebClient(base_url=...)``; slack_sdk needs the trailing slash."""
        return f"{self.url}/api/"

    # -- test-facing helpers ----------------------------------------------------------------------------

    def set_faults(self, faults: Iterable[SlackFault]) -> None:
        """Replace the active faults; each keeps its own remaining ``times``."""
        with self._lock:
            self._faults = [[f, f.times] for f in faults]

    def thread(self, channel: str, ts: str) -> list[Message]:
        """The parent message and its replies, oldest first (empty if ``ts`` is unknown)."""
        with self._lock:
            msgs = self.messages.get(channel, [])
            return [m for m in msgs if m.ts == ts or m.thread_ts == ts]

    def top_level(self, channel: str) -> list[Message]:
        """What a person scrolling the channel sees: parents and broadcast replies."""
        with self._lock:
            return [m for m in self.messages.get(channel, []) if not m.is_reply or m.reply_broadcast]

    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def response_url(
        self,
        *,
        channel: str | None = "C0OPS",
        message_ts: str | None = None,
        user_id: str = "U0ALICE",
        max_uses: int = RESPONSE_URL_MAX_USES,
        ttl: float = RESPONSE_URL_TTL,
    ) -> str:
        """A fresh response_url on this server.

        Like Slack's, it accepts ``max_uses`` (5) posts within ``ttl`` (30 min); after that it answers HTTP 404
        ``used_url`` / ``expired_url``. ``message_ts`` binds it to a message, so ``replace_original`` and
        ``delete_original`` act on that message, as they do for block actions.
        """
        if not self.url:
            raise RuntimeError("start the stand-in before asking for a response_url")
        with self._lock:
            n = next(self._ids)
            url = f"{self.url}/commands/{TEAM_ID}/{n}/{secrets.token_hex(12)}"
            self._response_url_state[url] = _ResponseUrl(
                url=url,
                created=time.monotonic(),
                max_uses=max_uses,
                ttl=ttl,
                channel=channel,
                message_ts=message_ts,
                user_id=user_id,
            )
            self.response_urls[url] = []
        return url

    def post_user_message(
        self, channel: str, text: str, *, user: str = "U0ALICE", thread_ts: str | None = None
    ) -> Message:
        """Seed a message written by a person (what a shortcut or a thread reply would point at)."""
        with self._lock:
            msg = Message(channel=channel, ts=self._next_ts(), text=text, blocks=[], user=user, thread_ts=thread_ts)
            self.messages.setdefault(channel, []).append(msg)
            return msg

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0, interval: float = 0.01) -> None:
        """Poll until ``predicate`` holds; bolt runs listeners after the ack, so effects land a little later."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if predicate():
                    return
            if time.monotonic() >= deadline:
                raise AssertionError(f"condition not met within {timeout} s")
            time.sleep(interval)

    # -- request plumbing -------------------------------------------------------------------------------

    def _handle(self, h: _Handler) -> None:
        split = urllib.parse.urlsplit(h.path)
        path = split.path
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length > 0 else b""
        if path.startswith("/api/"):
            name = path[len("/api/") :]
            self._serve(h, name, lambda: self._web_api(name, h, split.query, raw))
        elif path.startswith("/upload/v1/"):
            self._serve(h, "upload", lambda: self._upload(path.rsplit("/", 1)[-1], h, raw))
        elif path.startswith("/commands/"):
            url = f"{self.url}{path}"
            self._serve(h, "response_url", lambda: self._respond_url(url, raw))
        else:
            self._write(h, _Reply(404, "Not Found"))

    def _serve(self, h: _Handler, method: str, run: Callable[[], tuple[_Reply, JSON]]) -> None:
        fault = self._take_fault(method)
        if fault is not None and fault.delay > 0:
            time.sleep(fault.delay)
        params: JSON = {}
        if fault is not None and (fault.error is not None or fault.status != 200):
            if fault.applied:
                _, params = run()  # done behind the proxy; the caller only sees the proxy's page
            reply = self._fault_reply(fault)
        else:
            reply, params = run()
            if fault is not None and fault.delay_after > 0:
                with self._lock:
                    self.answering += 1
                try:
                    time.sleep(fault.delay_after)
                finally:
                    with self._lock:
                        self.answering -= 1
        with self._lock:
            body = reply.body if isinstance(reply.body, dict) else {"body": reply.body}
            self.calls.append(Call(method, params, body, reply.status, time.time()))
        self._write(h, reply)

    def _take_fault(self, method: str) -> SlackFault | None:
        with self._lock:
            for entry in self._faults:
                fault, remaining = entry
                if fault.method not in (method, "*"):
                    continue
                if remaining is not None:
                    if remaining <= 0:
                        continue
                    entry[1] = remaining - 1
                assert isinstance(fault, SlackFault)
                return fault
        return None

    @staticmethod
    def _fault_reply(fault: SlackFault) -> _Reply:
        if fault.error == "ratelimited" or fault.status == 429:
            retry = fault.retry_after if fault.retry_after is not None else 1
            return _Reply(429, {"ok": False, "error": fault.error or "ratelimited"}, {"Retry-After": str(retry)})
        if fault.error is None:
            # An outage in front of Slack answers with an HTML page, not the API's JSON.
            try:
                reason = HTTPStatus(fault.status).phrase
            except ValueError:
                reason = "Error"
            return _Reply(fault.status, f"<html><body><h1>{fault.status} {reason}</h1></body></html>")
        headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
        return _Reply(fault.status, {"ok": False, "error": fault.error}, headers)

    @staticmethod
    def _write(h: _Handler, reply: _Reply) -> None:
        # The caller may have gone away (a test killed it) after the call took effect.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            SlackStandIn._write_reply(h, reply)

    @staticmethod
    def _write_reply(h: _Handler, reply: _Reply) -> None:
        if isinstance(reply.body, dict):
            payload = json.dumps(reply.body).encode()
            content_type = "application/json; charset=utf-8"
        else:
            payload = reply.body.encode()
            content_type = "text/html" if reply.body.startswith("<") else "text/plain; charset=utf-8"
        h.send_response(reply.status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers.items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(payload)

    def _parse(self, h: _Handler, query: str, raw: builtins.bytes) -> _Request | _Reply:
        params: JSON = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        warnings: list[str] = []
        files: dict[str, tuple[str, builtins.bytes]] = {}
        content_type = h.headers.get("Content-Type", "")
        mime = content_type.split(";", 1)[0].strip().lower()
        is_json = False
        if raw:
            if mime == "application/json":
                is_json = True
                if "charset" not in content_type.lower():
                    warnings.append("missing_charset")
                try:
                    body = json.loads(raw)
                except ValueError:
                    return _err("invalid_json")
                if not isinstance(body, dict):
                    return _err("json_not_object")
                params.update(body)
            elif mime == "application/x-www-form-urlencoded":
                try:
                    params.update(
                        urllib.parse.parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
                    )
                except UnicodeDecodeError:
                    return _err("invalid_form_data")
            elif mime == "multipart/form-data":
                fields, files = _parse_multipart(content_type, raw)
                params.update(fields)
            elif not mime:
                return _err("missing_post_type")
            elif mime != "text/plain":
                return _err("invalid_post_type")
        token: str | None = None
        auth = h.headers.get("Authorization", "")
        if auth.lower().startswith("bearer "):
            token = auth[7:].strip()
        elif params.get("token"):
            token = str(params["token"])
        params.pop("token", None)
        return _Request(h.command, params, token, warnings, is_json, files, raw)

    def _web_api(self, name: str, h: _Handler, query: str, raw: builtins.bytes) -> tuple[_Reply, JSON]:
        handler = _METHODS.get(name)
        if handler is None:
            return _Reply(404, {"ok": False, "error": "unknown_method", "req_method": name}), {}
        req = self._parse(h, query, raw)
        if isinstance(req, _Reply):
            return req, {}
        if not req.token:
            return _err("not_authed"), req.params
        if not hmac.compare_digest(req.token, self.token):
            return _err("invalid_auth"), req.params
        with self._lock:
            retry_after = self._take_method_token(name)
            if retry_after is not None:
                return _Reply(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)}), req.params
            try:
                reply = handler(self, req)
            except _Refused as refused:
                reply = refused.reply
        if reply.status == 200 and isinstance(reply.body, dict) and reply.body.get("ok") and req.warnings:
            reply.body["warning"] = ",".join(req.warnings)
            reply.body.setdefault("response_metadata", {})["warnings"] = list(req.warnings)
        return reply, req.params

    # -- shared pieces ----------------------------------------------------------------------------------

    def _next_ts(self) -> str:
        # Slack ts values are unique per channel and sort by time; keep them strictly increasing.
        now_us = int(time.time() * 1_000_000)
        self._last_ts_us = max(now_us, self._last_ts_us + 1)
        return f"{self._last_ts_us // 1_000_000}.{self._last_ts_us % 1_000_000:06d}"

    def _bot_message(self, channel: str, text: str, blocks: list[JSON], thread_ts: str | None, **more: Any) -> Message:
        """A message the bot writes now."""
        return Message(channel=channel, ts=self._next_ts(), text=text, blocks=blocks, user=BOT_USER_ID,
                       thread_ts=thread_ts, bot_id=BOT_ID, **more)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}0{next(self._ids):08d}"

    def _resolve_channel(self, value: Any) -> str | None:
        if not value:
            return None
        name = str(value)
        if name in self.messages:
            return name
        wanted = name.lstrip("#")
        for channel in self.channels:
            if channel_name(channel) == wanted:
                return channel
        return None

    def _channel(self, req: _Request) -> str:
        """The request's `channel` (an id or a #name), or Slack's channel_not_found."""
        channel = self._resolve_channel(req.params.get("channel"))
        if channel is None:
            raise _Refused(_err("channel_not_found"))
        return channel

    def _message(self, req: _Request, channel: str, key: str, *, unnamed: _Reply | None = None,
                 unknown: str = "message_not_found") -> Message:
        """The message the request names by its ts in `key`: `unnamed` (or a missing-field error) when it names none,
        `unknown` when the channel has no such message."""
        ts = req.params.get(key)
        if not ts:
            raise _Refused(unnamed or _missing(key))
        msg = self._find(channel, str(ts))
        if msg is None:
            raise _Refused(_err(unknown))
        return msg

    def _find(self, channel: str, ts: Any) -> Message | None:
        for msg in self.messages.get(channel, []):
            if msg.ts == ts:
                return msg
        return None

    def _content(self, req: _Request, *, need_content: bool = True) -> tuple[str, list[JSON]]:
        """Validate ``text``/``blocks`` the way chat.postMessage and friends do."""
        text = req.params.get("text")
        text = "" if text is None else str(text)
        blocks_raw = req.params.get("blocks")
        blocks: Any = blocks_raw
        if isinstance(blocks_raw, str):
            if not blocks_raw.strip():
                blocks = None
            else:
                try:
                    blocks = json.loads(blocks_raw)
                except ValueError:
                    raise _Refused(_err("invalid_blocks_format")) from None
        if blocks is not None and not isinstance(blocks, list):
            raise _Refused(_err("invalid_blocks_format"))
        if need_content and not text and not blocks and not req.params.get("attachments"):
            raise _Refused(_err("no_text"))
        if len(text) > self.max_text_chars:
            raise _Refused(_err("msg_too_long"))
        blocks = blocks or []
        problems = validate_blocks(blocks) or self._slack_file_problems(blocks)
        if problems:
            raise _Refused(_err("invalid_blocks", messages=problems))
        if blocks and blocks_json_size(blocks) > self.max_blocks_json_chars:
            raise _Refused(_err("msg_blocks_too_long"))
        return text, blocks

    def _slack_file_problems(self, blocks: list[JSON]) -> list[str]:
        """Image blocks' `slack_file` must name a file this workspace finished uploading (files.completeUploadExternal,
        shared or not), by `id` or by its `url`; anything else, or any file while `slack_files_shown` is off (Slack
        answers so while a file it just received is still processing, python-slack-sdk#1562), is Slack's
        ``invalid slack file``."""
        done = {f.id for f in self.files}
        urls = {_file_object(f)["url_private"] for f in self.files}
        problems: list[str] = []
        for i, block in enumerate(blocks):
            for ptr, image in _images(block, f"/blocks/{i}"):
                ref = image.get("slack_file")
                if ref is None:
                    continue
                known = isinstance(ref, dict) and (ref.get("id") in done or ref.get("url") in urls)
                if not (known and self.slack_files_shown):
                    problems.append(f"invalid slack file [json-pointer:{ptr}/slack_file]")
        return problems

    def _take_post_token(self, channel: str) -> int | None:
        """Token bucket per channel; returns the Retry-After seconds when empty."""
        now = time.monotonic()
        tokens, last = self._buckets.get(channel, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.post_rate_per_channel)
        if tokens < 1.0:
            self._buckets[channel] = (tokens, now)
            wait = (1.0 - tokens) / self.post_rate_per_channel if self.post_rate_per_channel > 0 else 60.0
            return max(1, math.ceil(wait))
        self._buckets[channel] = (tokens - 1.0, now)
        return None

    def _take_method_token(self, method: str) -> int | None:
        """The workspace-wide bucket of a tiered method; the Retry-After seconds when it is empty."""
        limit = self.method_limits.get(method)
        if limit is None:
            return None
        per_minute, burst = limit
        rate = per_minute / 60.0
        now = time.monotonic()
        tokens, last = self._method_buckets.get(method, (float(burst), now))
        tokens = min(float(burst), tokens + (now - last) * rate)
        if tokens < 1.0:
            self._method_buckets[method] = (tokens, now)
            return max(1, math.ceil((1.0 - tokens) / rate))
        self._method_buckets[method] = (tokens - 1.0, now)
        return None

    def _metadata(self, req: _Request) -> JSON | None:
        """Message metadata as chat.postMessage takes it (an object, or JSON text in a form post)."""
        raw = req.params.get("metadata")
        if raw is None or raw == "":
            return None
        value = _decoded(raw)
        if not isinstance(value, dict):
            raise _Refused(_err("invalid_metadata_format"))
        event_type, payload = value.get("event_type"), value.get("event_payload")
        if not isinstance(event_type, str) or not _EVENT_TYPE.fullmatch(event_type) or not isinstance(payload, dict):
            raise _Refused(_err("invalid_metadata_schema"))
        if len(json.dumps(value)) > MAX_METADATA_CHARS:
            raise _Refused(_err("metadata_too_large"))
        return {"event_type": event_type, "event_payload": payload}

    def _permalink(self, msg: Message) -> str:
        link = f"{WORKSPACE_URL}archives/{msg.channel}/p{msg.ts.replace('.', '')}"
        if msg.is_reply:
            link += f"?thread_ts={msg.thread_ts}&cid={msg.channel}"
        return link

    # -- Web API methods --------------------------------------------------------------------------------

    def _auth_test(self, req: _Request) -> _Reply:
        return _ok(
            url=WORKSPACE_URL,
            team="Triagebot Test",
            user=BOT_NAME,
            team_id=TEAM_ID,
            user_id=BOT_USER_ID,
            bot_id=BOT_ID,
            is_enterprise_install=False,
        )

    def _chat_post_message(self, req: _Request) -> _Reply:
        channel = self._channel(req)
        text, blocks = self._content(req)
        thread_ts = _str_or_none(req.params.get("thread_ts"))
        if thread_ts is not None:
            parent = self._find(channel, thread_ts)
            if parent is None:
                return _err("thread_not_found")
            # Replying to a reply lands in the parent's thread.
            thread_ts = parent.thread_ts or parent.ts
        metadata = self._metadata(req)
        # Only accepted posts count against the limit, so limit-error tests do not trip it by accident.
        retry_after = self._take_post_token(channel)
        if retry_after is not None:
            return _Reply(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)})
        extra: JSON = {
            k: req.params[k]
            for k in ("unfurl_links", "unfurl_media", "username", "icon_emoji", "icon_url", "mrkdwn")
            if k in req.params
        }
        if metadata is not None:
            extra["metadata"] = metadata
        msg = self._bot_message(
            channel, text, blocks, thread_ts,
            reply_broadcast=thread_ts is not None and _truthy(req.params.get("reply_broadcast")),
            extra=extra,
        )
        self.messages[channel].append(msg)
        return _ok(channel=channel, ts=msg.ts, message=msg.to_api())

    def _chat_update(self, req: _Request) -> _Reply:
        channel = self._channel(req)
        msg = self._message(req, channel, "ts")
        if msg.user != BOT_USER_ID:
            return _err("cant_update_message")
        text, blocks = self._content(req)
        msg.edits.append({"text": msg.text, "blocks": msg.blocks, "edited_ts": self._next_ts()})
        msg.text, msg.blocks = text, blocks
        return _ok(channel=channel, ts=msg.ts, text=text, message=msg.to_api())

    def _chat_post_ephemeral(self, req: _Request) -> _Reply:
        channel = self._channel(req)
        user = req.params.get("user")
        if not user:
            return _missing("user")
        if str(user) not in self.users:
            return _err("user_not_in_channel")
        text, blocks = self._content(req)
        msg = self._bot_message(
            channel, text, blocks, _str_or_none(req.params.get("thread_ts")),
            extra={"to_user": str(user)},
        )
        self.ephemerals.append(msg)
        return _ok(message_ts=msg.ts)

    def _chat_get_permalink(self, req: _Request) -> _Reply:
        channel = self._channel(req)
        msg = self._message(req, channel, "message_ts")
        return _ok(channel=channel, permalink=self._permalink(msg))

    def _conversations_info(self, req: _Request) -> _Reply:
        return _ok(channel=_channel_info(self._channel(req)))

    def _conversations_replies(self, req: _Request) -> _Reply:
        channel = self._channel(req)
        msg = self._message(req, channel, "ts", unknown="thread_not_found")
        root = msg.thread_ts or msg.ts
        thread = [m for m in self.messages[channel] if m.ts == root or m.thread_ts == root]
        try:
            limit = int(req.params.get("limit") or 1000)
        except ValueError:
            return _err("invalid_limit")
        limit = max(1, min(limit, 1000))
        paged = _page(thread, req.params.get("cursor"), limit)
        if paged is None:
            return _err("invalid_cursor")
        page, has_more, next_cursor = paged
        out = []
        with_metadata = _truthy(req.params.get("include_all_metadata"))
        for m in page:
            item = m.to_api_with(with_metadata)
            if m.ts == root:
                replies = [r for r in thread if r.ts != root]
                item["thread_ts"] = root
                item["reply_count"] = len(replies)
                item["reply_users"] = sorted({r.user for r in replies})
                item["reply_users_count"] = len(item["reply_users"])
                if replies:
                    item["latest_reply"] = replies[-1].ts
            out.append(item)
        return _ok(messages=out, has_more=has_more, response_metadata={"next_cursor": next_cursor})

    def _conversations_history(self, req: _Request) -> _Reply:
        """Top-level messages (and broadcast replies), newest first, between ``oldest`` and ``latest``."""
        channel = self._channel(req)
        try:
            limit = int(req.params.get("limit") or 100)
            oldest = float(req.params.get("oldest") or 0)
            latest = float(req.params.get("latest") or "inf")
        except ValueError:
            return _err("invalid_arguments", messages=["must be a number [json-pointer:/limit]"])
        limit = max(1, min(limit, 999))
        inclusive = _truthy(req.params.get("inclusive"))

        def within(ts: float) -> bool:
            low = ts >= oldest if inclusive else ts > oldest
            high = ts <= latest if inclusive else ts < latest
            return low and high

        timeline = [m for m in reversed(self.messages[channel])
                    if (not m.is_reply or m.reply_broadcast) and within(float(m.ts))]
        paged = _page(timeline, req.params.get("cursor"), limit)
        if paged is None:
            return _err("invalid_cursor")
        page, has_more, next_cursor = paged
        with_metadata = _truthy(req.params.get("include_all_metadata"))
        out = []
        for m in page:
            item = m.to_api_with(with_metadata)
            replies = [r for r in self.messages[channel] if r.thread_ts == m.ts and r.ts != m.ts]
            if replies:
                item["thread_ts"] = m.ts
                item["reply_count"] = len(replies)
                item["latest_reply"] = replies[-1].ts
            out.append(item)
        return _ok(messages=out, has_more=has_more, pin_count=0,
                   response_metadata={"next_cursor": next_cursor})

    def _users_info(self, req: _Request) -> _Reply:
        user = req.params.get("user")
        if not user:
            return _missing("user")
        user = str(user)
        if user == BOT_USER_ID:
            name, is_bot = BOT_NAME, True
        elif user in self.users:
            name, is_bot = self.users[user], False
        else:
            return _err("user_not_found")
        return _ok(
            user={
                "id": user,
                "team_id": TEAM_ID,
                "name": name,
                "real_name": name.title(),
                "deleted": False,
                "is_bot": is_bot,
                "tz": "Etc/UTC",
                "profile": {"display_name": name, "real_name": name.title()},
            }
        )

    def _view_from(self, req: _Request, expected_type: str) -> JSON:
        view = req.params.get("view")
        if view is None:
            raise _Refused(_missing("view"))
        view = _decoded(view)
        if not isinstance(view, dict):
            raise _Refused(_err("invalid_arguments", messages=["must provide an object [json-pointer:/view]"]))
        problems: list[str] = []
        if view.get("type") != expected_type:
            problems.append(f"must be one of: {expected_type} [json-pointer:/view/type]")
        checker = BlockChecker(MESSAGE_BLOCK_TYPES)
        checker.blocks(view.get("blocks", []), "/view/blocks", max_blocks=MAX_VIEW_BLOCKS)
        if "blocks" not in view:
            checker.add("missing required field: blocks", "/view")
        if expected_type == "modal":
            checker.text_object(view.get("title"), "/view/title", max_len=MAX_VIEW_TITLE, plain_only=True)
            for key in ("submit", "close"):
                if view.get(key) is not None:
                    checker.text_object(view[key], f"/view/{key}", max_len=MAX_VIEW_TITLE, plain_only=True)
        checker.string(view.get("private_metadata"), "/view/private_metadata", max_len=MAX_PRIVATE_METADATA)
        checker.string(view.get("callback_id"), "/view/callback_id", max_len=MAX_ID)
        checker.string(view.get("external_id"), "/view/external_id", max_len=MAX_ID)
        problems += checker.errors
        if problems:
            # views.* report block problems as invalid_arguments, not invalid_blocks.
            raise _Refused(_err("invalid_arguments", messages=problems))
        return view

    def _stored_view(self, view: JSON, **extra: Any) -> JSON:
        return {
            "id": self._new_id("V"),
            "team_id": TEAM_ID,
            "app_id": APP_ID,
            "bot_id": BOT_ID,
            "type": view["type"],
            "blocks": view.get("blocks", []),
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "external_id": view.get("external_id", ""),
            "title": view.get("title"),
            "hash": secrets.token_hex(8),
            **extra,
        }

    def _views_publish(self, req: _Request) -> _Reply:
        user = req.params.get("user_id")
        if not user:
            return _missing("user_id")
        if str(user) not in self.users:
            return _err("user_not_found")
        view = self._view_from(req, "home")
        current = self.home_views.get(str(user))
        wanted_hash = req.params.get("hash")
        if wanted_hash and current is not None and wanted_hash != current["hash"]:
            return _err("hash_conflict")
        stored = self._stored_view(view, root_view_id=None, previous_view_id=None)
        self.home_views[str(user)] = stored
        return _ok(view=stored)

    def _views_open(self, req: _Request) -> _Reply:
        if not req.params.get("trigger_id") and not req.params.get("interactivity_pointer"):
            return _missing("trigger_id")
        view = self._view_from(req, "modal")
        stored = self._stored_view(view, state={"values": {}})
        self.modals.append(stored)
        return _ok(view=stored)

    def _reactions_add(self, req: _Request) -> _Reply:
        channel = self._channel(req)
        name = req.params.get("name")
        if not name:
            return _missing("name")
        name = str(name)
        if any(ch.isspace() or ch == ":" for ch in name):
            return _err("invalid_name")
        msg = self._message(req, channel, "timestamp", unnamed=_err("no_item_specified"))
        users = msg.reactions.setdefault(name, [])
        if BOT_USER_ID in users:
            return _err("already_reacted")
        users.append(BOT_USER_ID)
        return _ok()

    def _files_get_upload_url_external(self, req: _Request) -> _Reply:
        if req.is_json:
            # The method reads form fields only; a JSON body looks like missing arguments to it.
            return _missing("filename")
        filename = req.params.get("filename")
        if not filename:
            return _missing("filename")
        raw_length = req.params.get("length")
        if raw_length in (None, ""):
            return _missing("length")
        try:
            length = int(str(raw_length))
        except ValueError:
            return _err("invalid_arguments", messages=["must be an integer [json-pointer:/length]"])
        if length <= 0:
            return _err("invalid_arguments", messages=["must be greater than 0 [json-pointer:/length]"])
        alt = _str_or_none(req.params.get("alt_txt"))
        if alt is not None and len(alt) > 1000:
            return _err("alt_txt_too_large")
        file_id = self._new_id("F")
        key = secrets.token_urlsafe(16)
        self._upload_keys[key] = file_id
        self._pending_files[file_id] = UploadedFile(
            id=file_id,
            name=str(filename),
            title=str(filename),
            length=length,
            alt_txt=alt,
            snippet_type=_str_or_none(req.params.get("snippet_type")),
        )
        return _ok(upload_url=f"{self.url}/upload/v1/{key}", file_id=file_id)

    def _upload(self, key: str, h: _Handler, raw: builtins.bytes) -> tuple[_Reply, JSON]:
        with self._lock:
            file_id = self._upload_keys.get(key)
            pending = self._pending_files.get(file_id) if file_id else None
            if pending is None:
                return _Reply(404, "Not Found"), {"key": key}
            content_type = h.headers.get("Content-Type", "")
            data = raw
            if content_type.lower().startswith("multipart/form-data"):
                fields, files = _parse_multipart(content_type, raw)
                if files:
                    data = files.get("file", next(iter(files.values())))[1]
                elif "file" in fields:
                    data = str(fields["file"]).encode()
            pending.bytes = data
            pending.uploaded = True
            # Slack's upload host answers plain text, not API JSON.
            return _Reply(200, f"OK - {len(data)}"), {"file_id": pending.id, "length": len(data)}

    def _files_complete_upload_external(self, req: _Request) -> _Reply:
        files_raw = req.params.get("files")
        if not files_raw:
            return _missing("files")
        entries: Any = files_raw
        if isinstance(files_raw, str):
            try:
                entries = json.loads(files_raw)
            except ValueError:
                return _err("invalid_arguments", messages=["must provide an array [json-pointer:/files]"])
        if not isinstance(entries, list) or not entries:
            return _err("invalid_arguments", messages=["must provide an array [json-pointer:/files]"])
        channels: list[str] = []
        if req.params.get("channel_id"):
            channels.append(str(req.params["channel_id"]))
        if req.params.get("channels"):
            channels += [c.strip() for c in str(req.params["channels"]).split(",") if c.strip()]
        resolved: list[str] = []
        for c in channels:
            r = self._resolve_channel(c)
            if r is None:
                return _err("channel_not_found")
            resolved.append(r)
        thread_ts = _str_or_none(req.params.get("thread_ts"))
        if thread_ts is not None:
            if len(resolved) != 1:
                return _err("invalid_arguments", messages=["thread_ts requires exactly one channel"])
            parent = self._find(resolved[0], thread_ts)
            if parent is None:
                return _err("thread_not_found")
            thread_ts = parent.thread_ts or parent.ts
        done: list[UploadedFile] = []
        for entry in entries:
            file_id = entry.get("id") if isinstance(entry, dict) else None
            pending = self._pending_files.get(str(file_id)) if file_id else None
            if pending is None or not pending.uploaded:
                return _err("file_not_found")
            if isinstance(entry, dict) and entry.get("title"):
                pending.title = str(entry["title"])
            done.append(pending)
        comment = _str_or_none(req.params.get("initial_comment"))
        for f in done:
            del self._pending_files[f.id]
            f.channel = resolved[0] if resolved else None
            f.thread_ts = thread_ts
            f.initial_comment = comment
            self.files.append(f)
        for channel in resolved:
            # Sharing a file into a conversation shows up as a message carrying the files.
            self.messages[channel].append(self._bot_message(
                channel, comment or "", [], thread_ts,
                file_ids=[f.id for f in done], extra={"files": [_file_object(f) for f in done]}))
        return _ok(files=[{"id": f.id, "title": f.title, "name": f.name, "size": len(f.bytes)} for f in done])

    # -- response_url -----------------------------------------------------------------------------------

    def _respond_url(self, url: str, raw: builtins.bytes) -> tuple[_Reply, JSON]:
        with self._lock:
            state = self._response_url_state.get(url)
            if state is None:
                return _Reply(404, {"ok": False, "error": "invalid_url"}), {}
            try:
                payload = json.loads(raw or b"{}")
            except ValueError:
                return _Reply(400, {"ok": False, "error": "invalid_payload"}), {}
            if not isinstance(payload, dict):
                return _Reply(400, {"ok": False, "error": "invalid_payload"}), {}
            if time.monotonic() - state.created > state.ttl:
                return _Reply(404, {"ok": False, "error": "expired_url"}), payload
            if state.uses >= state.max_uses:
                return _Reply(404, {"ok": False, "error": "used_url"}), payload
            delete = _truthy(payload.get("delete_original"))
            text = str(payload.get("text") or "")
            blocks = payload.get("blocks") or []
            if not delete:
                if not text and not blocks:
                    return _Reply(400, {"ok": False, "error": "no_text"}), payload
                if len(text) > self.max_text_chars:
                    return _Reply(400, {"ok": False, "error": "msg_too_long"}), payload
                problems = validate_blocks(blocks)
                if problems:
                    rejected = _err("invalid_blocks", 400, messages=problems)
                    return rejected, payload
                if blocks and blocks_json_size(blocks) > self.max_blocks_json_chars:
                    return _Reply(400, {"ok": False, "error": "msg_blocks_too_long"}), payload
            state.uses += 1
            self.response_urls[url].append(payload)
            self._apply_response(state, payload, text, blocks, delete)
            return _Reply(200, {"ok": True}), payload

    def _apply_response(self, state: _ResponseUrl, payload: JSON, text: str, blocks: list[JSON], delete: bool) -> None:
        original = self._find(state.channel, state.message_ts) if state.channel and state.message_ts else None
        if delete:
            if original is not None:
                self.messages[original.channel].remove(original)
            return
        if _truthy(payload.get("replace_original")) and original is not None:
            original.edits.append({"text": original.text, "blocks": original.blocks, "edited_ts": self._next_ts()})
            original.text, original.blocks = text, blocks
            return
        if state.channel is None:
            return
        msg = Message(
            channel=state.channel,
            ts=self._next_ts(),
            text=text,
            blocks=blocks,
            user=BOT_USER_ID,
            thread_ts=_str_or_none(payload.get("thread_ts")),
            bot_id=BOT_ID,
        )
        if payload.get("response_type") == "in_channel":
            self.messages.setdefault(state.channel, []).append(msg)
        else:
            msg.extra["to_user"] = state.user_id
            self.ephemerals.append(msg)


_METHODS: dict[str, Callable[[SlackStandIn, _Request], _Reply]] = {
    "auth.test": SlackStandIn._auth_test,
    "chat.postMessage": SlackStandIn._chat_post_message,
    "chat.update": SlackStandIn._chat_update,
    "chat.postEphemeral": SlackStandIn._chat_post_ephemeral,
    "chat.getPermalink": SlackStandIn._chat_get_permalink,
    "conversations.info": SlackStandIn._conversations_info,
    "conversations.replies": SlackStandIn._conversations_replies,
    "conversations.history": SlackStandIn._conversations_history,
    "users.info": SlackStandIn._users_info,
    "views.publish": SlackStandIn._views_publish,
    "views.open": SlackStandIn._views_open,
    "reactions.add": SlackStandIn._reactions_add,
    "files.getUploadURLExternal": SlackStandIn._files_get_upload_url_external,
    "files.completeUploadExternal": SlackStandIn._files_complete_upload_external,
}




def _images(block: JSON, ptr: str) -> list[tuple[str, JSON]]:
    """A block's image objects with their JSON pointers: the block itself, a section's accessory, context
    elements."""
    found: list[tuple[str, JSON]] = [(ptr, block)] if block.get("type") == "image" else []
    accessory = block.get("accessory")
    if isinstance(accessory, dict) and accessory.get("type") == "image":
        found.append((f"{ptr}/accessory", accessory))
    for j, element in enumerate(block.get("elements") or []):
        if isinstance(element, dict) and element.get("type") == "image":
            found.append((f"{ptr}/elements/{j}", element))
    return found


def _file_object(f: UploadedFile) -> JSON:
    """A shared file as Slack lists it on a message (the subset of Slack's file object callers read)."""
    return {"id": f.id, "name": f.name, "title": f.title, "size": len(f.bytes), "mode": "hosted",
            "is_external": False, "user": BOT_USER_ID, "filetype": f.name.rsplit(".", 1)[-1] if "." in f.name else "",
            "url_private": f"https://files.slack.com/files-pri/{TEAM_ID}-{f.id}/{f.name}"}


def _channel_info(channel_id: str) -> JSON:
    return {
        "id": channel_id,
        "name": channel_name(channel_id),
        "is_channel": True,
        "is_group": False,
        "is_im": False,
        "is_private": False,
        "is_archived": False,
        "is_general": False,
        "is_member": True,
        "created": 1_700_000_000,
        "creator": "U0ALICE",
        "context_team_id": TEAM_ID,
        "topic": {"value": "", "creator": "", "last_set": 0},
        "purpose": {"value": "", "creator": "", "last_set": 0},
    }


def _parse_multipart(content_type: str, raw: builtins.bytes) -> tuple[JSON, dict[str, tuple[str, builtins.bytes]]]:
    """Split a multipart/form-data body into text fields and (filename, bytes) files."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    fields: JSON = {}
    files: dict[str, tuple[str, builtins.bytes]] = {}
    if not message.is_multipart():
        return fields, files
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        decoded = part.get_payload(decode=True)
        payload = decoded if isinstance(decoded, builtins.bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            files[str(name)] = (str(filename), payload)
        else:
            fields[str(name)] = payload.decode(part.get_content_charset() or "utf-8")
    return fields, files


# --------------------------------------------------------------------------------------------------------------


def _page(items: list[Message], cursor: object, limit: int) -> tuple[list[Message], bool, str] | None:
    """One page of a conversations.* answer from Slack's opaque cursor (here the next message's ts, encoded);
    None for a cursor that does not decode."""
    start = 0
    if cursor:
        try:
            after = base64.b64decode(str(cursor)).decode().removeprefix("next_ts:")
        except (ValueError, UnicodeDecodeError):
            return None
        start = next((i for i, m in enumerate(items) if m.ts == after), len(items))
    has_more = start + limit < len(items)
    next_cursor = base64.b64encode(f"next_ts:{items[start + limit].ts}".encode()).decode() if has_more else ""
    return items[start : start + limit], has_more, next_cursor
