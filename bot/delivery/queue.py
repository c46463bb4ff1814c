"""The one door to the outbox: a typed post (bot/delivery/posts.py) in, its row(s) out.

Call `queue` in the transaction that stores what caused the post, so both are committed or neither is. Nothing
outside bot/delivery/ writes the outbox (tests/unit/core/test_delivery_door.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, update
from sqlalchemy.orm import Session

from bot.delivery.posts import PRIORITY_REPORT, Edit, Post, Reply, Report, Root, Upload, View
from bot.store import outbox
from bot.store.models import OutboxItem


def queue(session: Session, post: Post, *, now: datetime | None = None) -> OutboxItem:
    """Queue `post`; the same key again (from this or another replica) returns the first row unchanged. For a
    `Report`, the report's own row; for an `Edit` through the latest-state lane, the row that will carry it.
    `now`: when it was caused (the webhook's clock), else the database's now."""
    common: dict[str, Any] = {"incident_id": post.incident_id}
    match post:
        case Root():
            payload = {"kind": post.kind, **common, "text": post.text, "in_thread": post.under is not None,
                       **_some(blocks=post.blocks, metadata=post.metadata), **post.state}
            return outbox.enqueue(session, post.key, post.channel, "chat.postMessage", payload,
                                  depends_on=post.under, priority=post.priority, now=now)
        case Report():
            return _report(session, post)
        case Reply():
            threaded = post.parent is not None or post.thread_of is not None or post.thread_ts is not None
            payload = {"kind": post.kind, **common, "text": post.text, "in_thread": threaded,
                       **_some(blocks=post.blocks, thread_of=post.thread_of, thread_ts=post.thread_ts), **post.extra}
            return outbox.enqueue(session, post.key, post.channel, "chat.postMessage", payload,
                                  depends_on=post.parent, priority=post.priority)
        case Edit():
            if not post.key:
                return outbox.set_latest(session, post.target, post.fields, priority=post.priority)
            return outbox.enqueue(session, post.key, post.channel or post.target.channel, "chat.update",
                                  {"kind": post.kind, **post.fields}, depends_on=post.target, priority=post.priority)
        case Upload():
            payload = {"kind": post.kind, **common, "in_thread": post.parent is not None, "filename": post.filename,
                       "title": post.title, **_some(content=post.content, content_b64=post.content_b64)}
            return outbox.enqueue(session, post.key, post.channel, "files.upload_v2", payload,
                                  depends_on=post.parent, priority=PRIORITY_REPORT)
        case View():
            return outbox.enqueue(session, post.key, post.channel, "views.publish",
                                  {"kind": "home", "user_id": post.channel, "view": post.view})
    raise TypeError(f"not a post: {type(post).__name__}")  # pragma: no cover - the union is closed


def _report(session: Session, post: Report) -> OutboxItem:
    """The report under its parent (or top-level), then its chart and evidence file in the same thread."""
    common: dict[str, Any] = {"incident_id": post.incident_id, "in_thread": post.parent is not None}
    row = outbox.enqueue(session, f"{post.key}:report", post.channel, "chat.postMessage",
                         {**common, "kind": "report", "text": post.text, "blocks": post.blocks},
                         depends_on=post.parent)
    anchor = post.parent or row
    if post.chart_b64 is not None:
        # The leading hypothesis's declared series (bot/render/chart.py).
        queue(session, Upload(key=f"{post.key}:chart", channel=post.channel, incident_id=post.incident_id,
                              kind="chart", filename="chart.png", title="The series behind the leading hypothesis",
                              content_b64=post.chart_b64, parent=anchor))
    if post.evidence is not None:
        queue(session, Upload(key=f"{post.key}:evidence", channel=post.channel, incident_id=post.incident_id,
                              kind="evidence", filename="evidence.txt", title="Raw evidence (redacted)",
                              content=post.evidence, parent=anchor))
    return row


def _some(**fields: Any) -> dict[str, Any]:
    """The fields that are set: a stored payload carries no empty keys the poster would have to tell apart."""
    return {name: value for name, value in fields.items() if value is not None}


def find(session: Session, key: str) -> OutboxItem | None:
    """The row queued under `key`, if any (its JSON read leniently: bot/store/quarantine.py)."""
    return outbox.find(session, key)


def take_back(session: Session, keys: list[str]) -> int:
    """Withdraw rows never tried and never possibly sent (a note folded into another message instead); returns how
    many were withdrawn."""
    if not keys:
        return 0
    taken = session.execute(delete(OutboxItem).where(
        OutboxItem.idempotency_key.in_(keys), OutboxItem.status == "pending", ~OutboxItem.maybe_sent,
        OutboxItem.attempts == 0).execution_options(synchronize_session=False))
    return int(getattr(taken, "rowcount", 0) or 0)


def thread_under(session: Session, key: str, parent: OutboxItem) -> bool:
    """Move the top-level post queued under `key` into `parent`'s thread, if it is still waiting for its first try
    (one posted, or possibly posted, stays where it is); returns whether it moved."""
    row = outbox.find(session, key)
    if row is None:
        return False
    session.flush()  # a parent queued in this session needs its id
    moved = session.execute(update(OutboxItem).where(
        OutboxItem.idempotency_key == key, OutboxItem.status == "pending", OutboxItem.depends_on.is_(None),
        ~OutboxItem.maybe_sent).values(depends_on=parent.id, payload={**row.payload, "in_thread": True})
        .execution_options(synchronize_session=False))
    return bool(getattr(moved, "rowcount", 0))


def due_now(session: Session, item_ids: set[int]) -> int:
    """Make failed items due at once (Slack can be reached again: bot/delivery/slack_reach.py); returns how many."""
    return outbox.due_now(session, item_ids)
