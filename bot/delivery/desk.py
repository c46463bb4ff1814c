"""What every sender (bot/delivery/senders/) works with: Slack, the database, the lookup budget and this poster's
lease, and the outcomes a sender can raise instead of returning Slack's answer. Also where a post's thread is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from slack_sdk import WebClient
from sqlalchemy.orm import Session, sessionmaker

from bot.delivery.lookups import PERMALINK_BURST, PERMALINKS_PER_MINUTE, LookupBudget
from bot.delivery.words import rollup_text
from bot.metrics import Metrics
from bot.store import outbox, repo
from bot.store.outbox import ClaimedItem


class NotYet(Exception):
    """The item needs a message that is not in Slack yet (its thread's root): tried again later, not dead."""


class NothingToDo(Exception):
    """The item can never be sent and need not be (the thread it belongs in was never posted): recorded as done."""


class Deferred(Exception):
    """The item needs a history lookup and the lookup budget is spent: handed back untried until `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"history lookups spent for {seconds:.1f} s")
        self.seconds = seconds


class LeaseLost(Exception):
    """Another poster took the item over while this one worked on it: that one records the outcome."""


@dataclass
class Desk:
    factory: sessionmaker[Session]
    client: WebClient
    metrics: Metrics
    lookups: LookupBudget
    worker_id: str
    clock: Callable[[], datetime]
    # chat.getPermalink's own budget (bot/delivery/permalinks.py): Tier 4, apart from the history lookups' Tier 3.
    permalinks: LookupBudget = field(
        default_factory=lambda: LookupBudget(per_minute=PERMALINKS_PER_MINUTE, burst=PERMALINK_BURST))

    def checkpoint(self, item: ClaimedItem, progress: dict[str, Any]) -> None:
        """Record how far a call got (a file's id before its share); LeaseLost when another poster has the item."""
        with self.factory.begin() as session:
            if not outbox.checkpoint(session, item.id, self.worker_id, progress):
                raise LeaseLost(item.idempotency_key)

    def current(self, item: ClaimedItem) -> dict[str, Any]:
        """The item's payload as of sending: a storm's roll-up shows its totals now (`rollup_key`)."""
        payload = dict(item.payload)
        if payload.get("rollup_key"):
            with self.factory() as session:
                payload["text"] = rollup_text(session, str(payload["rollup_key"]))
        return payload

    def thread_ts(self, item: ClaimedItem) -> str | None:
        """The thread a post replies in: its own `thread_ts`, the thread of the message named by `thread_of` (an
        outbox key), or the thread of the item it depends on (`in_thread`); None for a top-level post."""
        payload = item.payload
        if payload.get("thread_ts"):
            return str(payload["thread_ts"])
        if payload.get("thread_of"):
            with self.factory() as session:
                row = outbox.find(session, str(payload["thread_of"]))
                status, result = (row.status, row.result) if row is not None else ("dead", None)
            if status == "dead" or (status == "sent" and not (result or {}).get("ts")):
                raise NothingToDo(f"the message whose thread it belongs in ({payload['thread_of']}) was never posted")
            if status != "sent" or not result:
                raise NotYet(f"waiting for {payload['thread_of']} to be posted")
            return str(result.get("thread_ts") or result["ts"])
        return thread_root(item) if payload.get("in_thread") else None

    def file_thread(self, item: ClaimedItem) -> str | None:
        """Where a file goes: its own thread_ts, else the thread of the post it depends on."""
        return self.thread_ts(item) or thread_root(item)


def record(session: Session, item: ClaimedItem, result: dict[str, Any]) -> None:
    """Remember a posted message (channel, ts) for the incident it belongs to."""
    repo.record_slack_message(session, channel=str(result.get("channel") or item.channel),
                              ts=str(result["ts"]), kind=str(item.payload.get("kind", item.method)),
                              thread_ts=item.payload.get("thread_ts") or thread_root(item),
                              incident_id=item.payload.get("incident_id"))


def known_thread(item: ClaimedItem) -> tuple[str | None] | None:
    """The thread a waiting post goes to, as far as its row and its parent's result tell ((None,) for the
    channel itself); None when only a further query could say (`thread_of`), or its parent is not posted."""
    payload = item.payload
    if payload.get("thread_ts"):
        return (str(payload["thread_ts"]),)
    if payload.get("thread_of"):
        return None
    if payload.get("in_thread"):
        root = thread_root(item)
        return (root,) if root else None
    return (None,)


def parent_ts(item: ClaimedItem) -> str | None:
    return str(item.parent_result["ts"]) if item.parent_result and item.parent_result.get("ts") else None


def thread_root(item: ClaimedItem) -> str | None:
    """The root of the parent's thread: Slack asks that replies name the root, not another reply."""
    result = item.parent_result or {}
    root = result.get("thread_ts") or result.get("ts")
    return str(root) if root else None


def with_line(text: str, blocks: Any, line: str | None) -> tuple[str, Any]:
    """Add a line under a message: to its text, and as a context block when it has blocks."""
    if not line:
        return text, blocks
    text = f"{text}\n{line}" if text else line
    if blocks:
        blocks = [*blocks, {"type": "context", "elements": [{"type": "mrkdwn", "text": line}]}]
    return text, blocks
