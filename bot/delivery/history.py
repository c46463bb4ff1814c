"""Reading a channel's or thread's history for a post an earlier attempt may have made, within the lookup budget
(bot/delivery/lookups.py): each page read spends one lookup."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.delivery.desk import Deferred, Desk
from bot.store.outbox import ClaimedItem

HISTORY_PAGES = 10  # pages of 200 messages searched for a post that may have gone out already
CLOCK_SLACK = timedelta(minutes=2)  # how far the database's clock may be ahead of Slack's


def read_posts(desk: Desk, item: ClaimedItem, thread_ts: str | None,
               oldest: datetime | None) -> tuple[dict[str, dict[str, Any]], bool, float]:
    """This bot's posts in the thread (or the channel since `oldest`), by outbox key, whether the read was
    complete, and, when the lookup budget cut it short, the seconds until the next lookup. Each page spends
    one lookup; with none left before the first page, `Deferred`."""
    found: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    for page_number in range(HISTORY_PAGES):
        wait = desk.lookups.take()
        if wait > 0:
            if page_number == 0:
                desk.metrics.lookup_settled.labels("deferred").inc()
                raise Deferred(wait)
            return found, False, wait
        try:
            page = history_page(desk, item, thread_ts, oldest, cursor)
        except SlackApiError as err:
            if err.response.status_code != 429:
                raise
            retry_after = float(err.response.headers.get("Retry-After") or 1) if err.response.headers else 1.0
            desk.lookups.hold(retry_after)
            desk.metrics.slack_errors.labels("conversations.history", "ratelimited").inc()
            if page_number == 0:
                raise Deferred(retry_after) from err
            return found, False, retry_after
        for message in page.get("messages") or []:
            key = ((message.get("metadata") or {}).get("event_payload") or {}).get("outbox_key")
            if key:
                found.setdefault(str(key), dict(message))
        cursor = ((page.get("response_metadata") or {}).get("next_cursor")) or None
        if not page.get("has_more") or not cursor:
            return found, True, 0.0
    return found, False, 0.0


def history_page(desk: Desk, item: ClaimedItem, thread_ts: str | None, oldest: datetime | None,
                 cursor: str | None) -> Any:
    if thread_ts:
        return desk.client.conversations_replies(channel=item.channel, ts=thread_ts, limit=200,
                                                 include_all_metadata=True, cursor=cursor)
    since = (oldest - CLOCK_SLACK).timestamp() if oldest else 0
    return desk.client.conversations_history(channel=item.channel, oldest=f"{since:.6f}", limit=200,
                                             include_all_metadata=True, cursor=cursor)


def find_message(desk: Desk, item: ClaimedItem, thread_ts: str | None,
                 match: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The first message of the item's thread (or of the channel since the item was queued) that `match`es."""
    cursor: str | None = None
    for _ in range(HISTORY_PAGES):
        wait = desk.lookups.take()
        if wait > 0:
            raise Deferred(wait)
        page = history_page(desk, item, thread_ts, item.created_at, cursor)
        for message in page.get("messages") or []:
            if match(message):
                return dict(message)
        cursor = ((page.get("response_metadata") or {}).get("next_cursor")) or None
        if not page.get("has_more") or not cursor:
            return None
    return None
