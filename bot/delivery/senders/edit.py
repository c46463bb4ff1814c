"""chat.update: what a posted message shows now (an `Edit`). Doing one again is harmless, so nothing is looked up
after a crash; a new episode's root keeps its link to the previous episode under every edit."""

from __future__ import annotations

from typing import Any

from bot.delivery.desk import Desk, parent_ts, with_line
from bot.store.outbox import ClaimedItem


def send(desk: Desk, item: ClaimedItem) -> dict[str, Any]:
    payload = desk.current(item)
    ts = payload.get("ts") or parent_ts(item)
    if not ts:
        raise ValueError("chat.update needs the ts of the message it changes")
    link = (item.parent_result or {}).get("episode_link")
    text, blocks = with_line(payload.get("text", ""), payload.get("blocks"), link)
    response = desk.client.chat_update(channel=item.channel, ts=ts, text=text, blocks=blocks)
    return {"ts": response["ts"], "channel": response["channel"]}


def recover(desk: Desk, item: ClaimedItem) -> dict[str, Any] | None:
    return None
