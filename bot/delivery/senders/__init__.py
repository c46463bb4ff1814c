"""One sender per Slack method the outbox stores, each in its own module (as Alertmanager keeps one notifier per
file): `send` makes the call and returns what to record; `recover` says what an earlier attempt that may have
reached Slack already did (None: nothing, or nothing that doing it again would harm).

Stored rows name their method, not their post type, so rows queued by an older bot are sent by the same code.
Roots, reports and replies are all chat.postMessage (message.py).
"""

from __future__ import annotations

from typing import Any, Protocol

from bot.delivery.desk import Desk
from bot.delivery.senders import edit, message, upload, view
from bot.store.outbox import ClaimedItem


class Sender(Protocol):
    def send(self, desk: Desk, item: ClaimedItem) -> dict[str, Any]: ...

    def recover(self, desk: Desk, item: ClaimedItem) -> dict[str, Any] | None: ...


SENDERS: dict[str, Sender] = {"chat.postMessage": message, "chat.update": edit, "files.upload_v2": upload,
                              "views.publish": view}


def sender_for(method: str) -> Sender:
    try:
        return SENDERS[method]
    except KeyError:
        raise ValueError(f"unknown outbox method {method}") from None
