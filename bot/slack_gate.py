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
from collections.abc import Callable, Mapping

from slack_sdk.signature import Clock, SignatureVerifier

MAX_SKEW = 60 * 5  # seconds; Slack's documented replay window
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
        return self.verifier.is_valid(body, headers["x-slack-request-timestamp"], headers["x-slack-signature"])


class _Clock(Clock):
    """slack_sdk's Clock interface over a plain function (tests pass their own time)."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()
