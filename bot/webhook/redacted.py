"""A webhook body redacted without redacting again what an earlier notification already carried.

Alertmanager sends a group's every alert in each notification, so a group that gains an alert a minute re-sends
all the others: redacting each alert once, and remembering the result by the alert's exact content, makes a
notification cost the redaction of what is new in it. Redaction works value by value (`redact_json`: a string is
masked whole only under a key naming a secret, and "alerts" names none), so redacting the alerts one by one
gives exactly what redacting the whole body gives.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

from collectors.redact import redact_json

REMEMBERED = 4096  # alerts; a few MB at most, as the body cap bounds each


class _Remembered:
    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[bytes, Any] = OrderedDict()
        self.lock = threading.Lock()

    def redacted(self, value: Any) -> Any:
        try:
            key = hashlib.blake2b(json.dumps(value, sort_keys=True, ensure_ascii=False).encode(
                "utf-8", "surrogatepass"), digest_size=16).digest()
        except (TypeError, ValueError):
            return redact_json(value)
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
                return found
        result = redact_json(value)
        with self.lock:
            self.items[key] = result
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return result


_alerts = _Remembered(REMEMBERED)


def redact_body(body: dict[str, Any]) -> dict[str, Any]:
    """`redact_json(body)`, the alerts taken from those already redacted when they are unchanged. The results are
    shared between calls: read them, do not change them."""
    alerts = body.get("alerts")
    if not isinstance(alerts, list):
        redacted: dict[str, Any] = redact_json(body)
        return redacted
    rest: dict[str, Any] = redact_json({k: v for k, v in body.items() if k != "alerts"})
    return {**rest, "alerts": [_alerts.redacted(a) for a in alerts]}
