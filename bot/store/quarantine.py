"""Outbox rows that can never be read: set aside (dead, with the reason) instead of failing every claim.

A row's payload is JSON the bot wrote itself, yet a row can still be poisoned: a disk or a hand edit truncates it
on SQLite (which stores JSON as text and checks nothing), a bug stores `null` or a JSON string instead of an
object (possible on PostgreSQL's jsonb too). Loading such a row through the ORM raises inside the claim's
transaction, which then fails for every claim of its channel, forever. So the claim reads the payload as text,
decodes it here, and a row that is not a JSON object is marked dead in the same transaction, once: it is never
claimed again, and the rows behind it flow.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, cast, inspect, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from bot.store.models import OutboxItem


@dataclass(frozen=True)
class Quarantined:
    """A row set aside, for the caller to log and count once its transaction has committed."""

    id: int
    idempotency_key: str
    channel: str
    reason: str


def raw_columns(session: Session, item_id: int) -> tuple[str | None, str | None]:
    """The row's payload and result as stored, as text: nothing is decoded, so nothing can raise."""
    row = session.execute(select(cast(OutboxItem.payload, Text), cast(OutboxItem.result, Text))
                          .where(OutboxItem.id == item_id)).one()
    return row[0], row[1]


def decode_object(text: str | None) -> tuple[dict[str, Any] | None, str]:
    """A stored JSON column as a dict, or None and why it is not one."""
    if text is None:
        return None, "is NULL"
    try:
        value = json.loads(text)
    except ValueError as err:  # truncated or otherwise broken JSON (json.JSONDecodeError is a ValueError)
        return None, f"is not valid JSON ({err.msg} at character {err.pos})" if isinstance(err, json.JSONDecodeError) \
            else "is not valid JSON"
    except RecursionError:
        return None, "is nested too deeply to read"
    if not isinstance(value, dict):
        return None, f"is JSON {type(value).__name__ if value is not None else 'null'}, not an object"
    return value, ""


def quarantine(session: Session, item: OutboxItem, reason: str) -> Quarantined:
    """Mark the row dead with its reason (counted as one attempt), in the caller's transaction."""
    session.execute(update(OutboxItem).where(OutboxItem.id == item.id)
                    .values(status="dead", attempts=OutboxItem.attempts + 1, locked_by=None, locked_until=None,
                            last_error=f"quarantined: {reason}"[:4000])
                    .execution_options(synchronize_session=False))
    return Quarantined(item.id, item.idempotency_key, item.channel, reason)


def readable(session: Session, item: OutboxItem) -> None:
    """Load a row's deferred JSON columns without the ORM's decoder: an unreadable payload reads as {} and an
    unreadable result as None, set as the committed value, so nothing is written back unless the caller changes
    it (a webhook that rewrites a queued root then heals it with the current state)."""
    unloaded = inspect(item).unloaded
    if "payload" not in unloaded and "result" not in unloaded:
        return
    payload_text, result_text = raw_columns(session, item.id)
    if "payload" in unloaded:
        set_committed_value(item, "payload", decode_object(payload_text)[0] or {})
    if "result" in unloaded:
        set_committed_value(item, "result", decode_object(result_text)[0] if result_text is not None else None)
