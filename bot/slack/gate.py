"""Slack request authentication before the body is read, and the signature check before bolt parses it.

Slack signs `v0:<timestamp>:<body>` with the app's signing secret. The timestamp and signature headers are
checked first (present, well formed, within five minutes), so a request that cannot be Slack's is refused
without reading a byte of its body. The body (capped by BodyLimit) is then verified with slack_sdk's own
SignatureVerifier before bolt sees it: bolt logs the whole body of a request that fails its check, and a
malformed timestamp made its check raise (a 500).
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from slack_sdk.signature import Clock, SignatureVerifier

from collectors.http.strict_json import BadJson, loads

MAX_SKEW = 60 * 5  # seconds; Slack's documented replay window
MAX_DEPTH = 64  # Slack payloads nest blocks (rich text, views) deeper than alerts, but never near this
# Fields bolt reads as objects (or lists of objects) while routing: a wrong type there made its middleware raise.
# Interactive payloads (form field `payload`) carry user, team and channel as objects; Events API envelopes
# carry an `event` object whose user and channel are plain ids.
_INTERACTIVE_OBJECTS = ("user", "team", "channel", "container", "message", "view", "enterprise", "state")
_ENVELOPE_OBJECTS = ("event", "enterprise")
_LISTS_OF_OBJECTS = ("actions", "authorizations")
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


class SlackGate:
    EXPECTED = ("a request signed by Slack: X-Slack-Request-Timestamp (Unix seconds, within 5 minutes) and "
                "X-Slack-Signature (v0=<hex HMAC-SHA256>)")

    def __init__(self, signing_secret: str, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.verifier = SignatureVerifier(signing_secret, clock=_Clock(clock)) if signing_secret else None

    def check_headers(self, headers: Mapping[str, str]) -> str | None:
        """Why the headers cannot belong to a Slack request, or None when they may."""
        if self.verifier is None:
            return "no signing secret is configured"
        timestamp = headers.get("x-slack-request-timestamp", "")
        if not _TIMESTAMP.fullmatch(timestamp):
            return "missing or malformed X-Slack-Request-Timestamp"
        if abs(self.clock() - int(timestamp)) > MAX_SKEW:
            return "stale X-Slack-Request-Timestamp"
        if not _SIGNATURE.fullmatch(headers.get("x-slack-signature", "")):
            return "missing or malformed X-Slack-Signature"
        return None

    def signed(self, headers: Mapping[str, str], body: bytes) -> bool:
        if self.verifier is None or self.check_headers(headers) is not None:
            return False
        try:
            text = body.decode("utf-8")  # what slack_sdk signs; it would raise on other bytes
        except UnicodeDecodeError:
            return False
        return self.verifier.is_valid(text, headers["x-slack-request-timestamp"], headers["x-slack-signature"])


def payload_problem(body: bytes, content_type: str) -> str | None:
    """Why a signed body is not a Slack payload bolt can route, or None. Checked before bolt parses it."""
    text = body.decode("utf-8", errors="replace")
    try:
        if content_type.startswith("application/json"):
            return _shape(loads(text, MAX_DEPTH), _ENVELOPE_OBJECTS)
        fields = urllib.parse.parse_qs(text, keep_blank_values=True)
        if "payload" in fields:
            return _shape(loads(fields["payload"][0], MAX_DEPTH), _INTERACTIVE_OBJECTS)
    except BadJson as err:
        return f"payload: {err}"
    return None


def _shape(payload: Any, objects: tuple[str, ...]) -> str | None:
    if not isinstance(payload, dict):
        return "payload: expected a JSON object"
    if not isinstance(payload.get("type", ""), str):
        return "payload.type: expected a string"
    for key in objects:
        if payload.get(key) is not None and not isinstance(payload[key], dict):
            return f"payload.{key}: expected an object"
    for key in _LISTS_OF_OBJECTS:
        value = payload.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, dict) for v in value)):
            return f"payload.{key}: expected a list of objects"
    event = payload.get("event")
    if isinstance(event, dict) and not isinstance(event.get("type", ""), str):
        return "payload.event.type: expected a string"
    return None


class _Clock(Clock):
    """slack_sdk's Clock interface over a plain function (tests pass their own time)."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()
