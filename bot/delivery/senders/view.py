"""views.publish: a user's Home tab (a `View`). Publishing again is harmless: nothing to look up after a crash."""

from __future__ import annotations

from typing import Any

from bot.delivery.desk import Desk
from bot.store.outbox import ClaimedItem


def send(desk: Desk, item: ClaimedItem) -> dict[str, Any]:
    desk.client.views_publish(user_id=item.payload["user_id"], view=item.payload["view"])
    return {"user_id": item.payload["user_id"]}


def recover(desk: Desk, item: ClaimedItem) -> dict[str, Any] | None:
    return None
