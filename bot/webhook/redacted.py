"""A webhook body redacted without redacting again what an earlier notification already carried.

Alertmanager sends a group's every alert in each notification, so a group that gains an alert a minute re-sends
all the others: redacting each alert once, and remembering the result by the alert's exact content, makes a
notification cost the redaction of what is new in it. Redaction works value by value (`redact_json`: a string is
masked whole only under a key naming a secret, and "alerts" names none), so redacting the alerts one by one
gives exactly what redacting the whole body gives.

The intake stores the redacted body as JSON text, so each alert's text is remembered with it: a notification's
text is its few top-level fields encoded and its alerts' texts joined, not the whole group encoded again.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from bot.webhook.repeat import canonical_alerts
from collectors.redact import redact_json

REMEMBERED = 4096  # alerts; a few MB at most, as the body cap bounds each
_STORED = json.JSONEncoder(separators=(",", ":"))  # ASCII escapes: the text is what the intake stores


@dataclass(frozen=True)
class Redacted:
    """A redacted body (shared between calls: read it, do not change it) and the same as JSON text."""

    body: dict[str, Any]
    text: str


class _Remembered:
    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[bytes, tuple[Any, str]] = OrderedDict()
        self.lock = threading.Lock()

    def redacted(self, value: Any, canonical: str) -> tuple[Any, str]:
        """`value` redacted and its JSON text; `canonical` is its canonical JSON (repeat.canonical_alerts)."""
        key = hashlib.blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
                return found
        result = redact_json(value)
        remembered = (result, _STORED.encode(result))
        with self.lock:
            self.items[key] = remembered
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return remembered


_alerts = _Remembered(REMEMBERED)


def redact_notification(body: dict[str, Any], canonical: list[str] | None = None) -> Redacted:
    """`redact_json(body)` and its JSON text, the alerts taken from those already redacted when they are
    unchanged. `canonical`: `repeat.canonical_alerts(body)`, when the caller has them."""
    alerts = body.get("alerts")
    canonical = canonical_alerts(body) if canonical is None else canonical
    if not isinstance(alerts, list) or canonical is None:
        whole: dict[str, Any] = redact_json(body)
        return Redacted(whole, _STORED.encode(whole))
    rest: dict[str, Any] = redact_json({k: v for k, v in body.items() if k != "alerts"})
    done = [_alerts.redacted(alert, text) for alert, text in zip(alerts, canonical, strict=True)]
    listed = '"alerts":[' + ",".join(text for _, text in done) + "]"
    head = _STORED.encode(rest)
    text = "{" + listed + "}" if head == "{}" else head[:-1] + "," + listed + "}"
    return Redacted({**rest, "alerts": [value for value, _ in done]}, text)


def redact_body(body: dict[str, Any]) -> dict[str, Any]:
    """`redact_json(body)`, the alerts taken from those already redacted when they are unchanged. The result is
    shared between calls: read it, do not change it."""
    return redact_notification(body).body
