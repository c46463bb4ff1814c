"""The Slack outbox: every Web API call is a row first, so nothing is lost while Slack is down and nothing is
posted twice when replicas share a database.

Life cycle of a row::

    pending --claim--> sending --mark_sent--> sent
                          |--mark_failed--> failed --(next_attempt_at)--> claimable again
                          |--mark_failed (permanent, or attempts used up)--> dead
                          '--lease expires (worker crashed)--> claimable again (dead once attempts are used up)

Exactly once rests on three things: the idempotency key is UNIQUE, so two replicas enqueueing the same alert make
one row; a claim moves a row to `sending` inside one transaction that no other claimer can interleave with
(row locks with SKIP LOCKED on PostgreSQL, BEGIN IMMEDIATE on SQLite); and `mark_*` only count when the caller
still holds the lease. A poster must therefore finish its Slack call well within the lease (HTTP timeout < lease).
What no database can prevent is a crash between Slack's answer and `mark_sent`: that item is posted again after
its lease expires.

Recovering from that crash: a row whose lease expired while `sending`, or whose call failed without a clear answer
from Slack (a timeout, a 5xx page), is flagged `maybe_sent`; the poster then looks for the message in Slack (by the
metadata every post carries) before posting it again. A file upload takes three calls and carries no metadata: the
poster records the file's id (`checkpoint`) before asking Slack to share it, and looks for that id in the thread.

Pacing: a channel gets at most one post per `pace` (Slack allows about one message per second per channel), and
no new post while one is in flight there, so posts to one channel leave in order. A 429's Retry-After holds the
whole channel back, not just the item that got it. `chat.update` is also paced workspace-wide (Slack's Tier 3,
about 50 a minute), through the `UPDATE_LANE` row, with a burst, and does not count against the channel's
post pacing.

Within a channel, lower `priority` goes first (roots and status changes before reports), then the oldest. Rows with
a `collapse_key` are versions of one message's state: `set_latest` rewrites the queued version instead of queueing
another, so a storm of webhooks becomes one edit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    CursorResult,
    SQLColumnExpression,
    Update,
    and_,
    case,
    exists,
    func,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, aliased, defer, sessionmaker

from bot.store.db import read_session
from bot.store.dialect import insert_ignoring_conflicts
from bot.store.models import OUTBOX_METHODS, ChannelPace, OutboxItem
from bot.store.quarantine import Quarantined, decode_object, quarantine, raw_columns, readable
from bot.store.types import UTCDateTime, utcnow

DEFAULT_LEASE = timedelta(seconds=30)
DEFAULT_PACE = timedelta(seconds=1)
BACKOFF_BASE = 1.0  # seconds before the first retry; doubles each attempt
BACKOFF_CAP = 300.0
# Attempts before an item is dead. With the 5-minute cap, 25 attempts ride out roughly 90 minutes of Slack outage.
DEFAULT_MAX_ATTEMPTS = 25
# Unreadable rows a claim sets aside in one channel before leaving the rest to the next claim.
_QUARANTINE_PER_CLAIM = 5
_SWEEP_ROUNDS = 10  # dependency chains longer than this are finished off by later claims
# chat.update is Tier 3 (50+ a minute per workspace): one every 1.2 s, with a burst of 10 (Slack allows
# "occasional bursts" without saying how many; the Slack stand-in allows the same).
UPDATE_LANE = "~chat.update"
UPDATE_INTERVAL = timedelta(seconds=1.2)
UPDATE_BURST = 10
# Edits that only refresh content wait while fewer than this many edits are left in the burst, so a status change
# (a resolution) finds room at once after a storm of refreshes.
UPDATE_RESERVE = 4
PRIORITY_ROOT = 0  # a root or roll-up post, a status change: what on-call looks at first
PRIORITY_REPORT = 1  # reports, notes, files
PRIORITY_REFRESH = 2  # a root's content while its status is unchanged
# The item another depends on. Built once: an alias costs more CPU to build than its query takes to run, and the
# poster asks on every wake-up, in the process that acks Slack.
_PARENT = aliased(OutboxItem, name="parent")


@dataclass(frozen=True)
class ClaimedItem:
    """What a poster needs for one call. A plain value, usable after the claim's transaction has ended."""

    id: int
    idempotency_key: str
    channel: str
    method: str
    payload: dict[str, Any]
    depends_on: int | None
    attempts: int  # including this one
    locked_until: datetime
    parent_result: dict[str, Any] | None  # the `result` of the item this one depends on, e.g. {"ts": ...}
    maybe_sent: bool = False  # an earlier attempt may have reached Slack: look before posting again
    created_at: datetime | None = None
    progress: dict[str, Any] | None = None  # what an earlier attempt recorded mid-call (`checkpoint`), if anything


def backoff(attempts: int) -> float:
    """Seconds to wait after the `attempts`-th failed attempt: 1, 2, 4 ... capped at 5 minutes."""
    return float(min(BACKOFF_CAP, BACKOFF_BASE * 2 ** max(0, attempts - 1)))


def enqueue(
    session: Session, key: str, channel: str, method: str, payload: Mapping[str, Any],
    depends_on: int | OutboxItem | None = None, now: datetime | None = None, priority: int = PRIORITY_REPORT,
    collapse_key: str | None = None,
) -> OutboxItem:
    """Queue one call under `key`. The same key again (from this or another replica) returns the first row unchanged.

    Call it in the transaction that stores what caused the post, so both are committed or neither is.
    """
    if method not in OUTBOX_METHODS:
        raise ValueError(f"method: expected one of {', '.join(OUTBOX_METHODS)}, got {method!r}")
    if isinstance(depends_on, OutboxItem):
        session.flush()  # a parent enqueued in this session needs its id
        depends_on = depends_on.id
    now = now or utcnow()
    session.execute(
        insert_ignoring_conflicts(session, OutboxItem, ["idempotency_key"])
        .values(idempotency_key=key, channel=channel, method=method, payload=dict(payload), depends_on=depends_on,
                status="pending", attempts=0, next_attempt_at=now, created_at=now, priority=priority,
                collapse_key=collapse_key, maybe_sent=False)
    )
    # A claim locks this row to serialise claims per channel; it must exist before the first claim.
    session.execute(insert_ignoring_conflicts(session, ChannelPace, ["channel"]).values(channel=channel, next_at=now))
    return session.scalars(select(OutboxItem).where(OutboxItem.idempotency_key == key)).one()


def find(session: Session, key: str) -> OutboxItem | None:
    """The row under `key`. Its JSON columns are read as text: a poisoned one reads as empty (bot/store/
    quarantine.py) instead of failing the webhook that looks the row up, which Alertmanager would retry forever."""
    item = session.scalars(select(OutboxItem).options(defer(OutboxItem.payload), defer(OutboxItem.result))
                           .where(OutboxItem.idempotency_key == key)).first()
    if item is not None:
        readable(session, item)
    return item


def set_latest(
    session: Session, target: OutboxItem, fields: Mapping[str, Any], *, priority: int = PRIORITY_REFRESH,
    now: datetime | None = None,
) -> OutboxItem:
    """Make `target` (a chat.postMessage) show `fields` (text, blocks...), with as few Slack calls as possible.

    Not posted yet: its queued payload is rewritten, so it is posted once, already current. Posted, or possibly
    posted: a chat.update of it is queued, or the queued one is rewritten (one per target at a time: a storm of
    changes collapses to the latest). Versions apply in order: a newer one is queued only behind one in flight.
    """
    now = now or utcnow()
    key = f"{target.idempotency_key}:state"
    rewritten = _rewrite(session, OutboxItem.id == target.id, {**target.payload, **fields},
                         min(priority, target.priority), extra=~OutboxItem.maybe_sent)
    if rewritten:
        session.expire(target)
        return target
    queued = session.scalars(select(OutboxItem).where(OutboxItem.collapse_key == key,
                                                      OutboxItem.status.in_(("pending", "failed")))
                             .order_by(OutboxItem.id.desc()).limit(1)).first()
    update = {"kind": f"{target.payload.get('kind', 'message')}-state", **fields}
    if queued is not None and _rewrite(session, OutboxItem.id == queued.id, {**queued.payload, **update},
                                       min(priority, queued.priority)):
        session.expire(queued)
        return queued
    versions = session.scalar(select(func.count()).select_from(OutboxItem).where(OutboxItem.collapse_key == key))
    return enqueue(session, f"{key}:{int(versions or 0) + 1}", target.channel, "chat.update", update,
                   depends_on=target, now=now, priority=priority, collapse_key=key)


def _rewrite(session: Session, which: ColumnElement[bool], payload: Mapping[str, Any], priority: int,
             extra: ColumnElement[bool] | None = None) -> bool:
    """Replace a queued row's payload, only while no poster holds it (the WHERE is re-checked under the row lock)."""
    condition = and_(which, OutboxItem.status.in_(("pending", "failed")))
    if extra is not None:
        condition = and_(condition, extra)
    return _changed(session, update(OutboxItem).where(condition)
                    .values(payload=dict(payload), priority=priority)) == 1


def _due(now: datetime) -> ColumnElement[bool]:
    """Waiting and due, or handed out to a worker whose lease has run out."""
    return or_(
        and_(OutboxItem.status.in_(("pending", "failed")), OutboxItem.next_attempt_at <= now),
        and_(OutboxItem.status == "sending", OutboxItem.locked_until <= now),
    )


def _dependency_sent() -> ColumnElement[bool]:
    return or_(OutboxItem.depends_on.is_(None),
               exists().where(_PARENT.id == OutboxItem.depends_on, _PARENT.status == "sent"))


def _sweep_dead(session: Session, now: datetime, max_attempts: int) -> None:
    """Dead-letter what can never be sent: items whose lease expired on their last attempt, and items depending
    on a dead item (a thread reply without its parent has nowhere to go). SKIP LOCKED: a sweep never waits."""
    crashed = select(OutboxItem.id).where(_crashed(now, max_attempts)).with_for_update(skip_locked=True)
    _changed(session, update(OutboxItem).where(OutboxItem.id.in_(crashed))
             .values(status="dead", locked_by=None, locked_until=None,
                     last_error="lease expired on the last attempt (worker crashed or too slow)"))
    for _ in range(_SWEEP_ROUNDS):
        orphans = select(OutboxItem.id).where(_orphaned()).with_for_update(skip_locked=True)
        if not _changed(session, update(OutboxItem).where(OutboxItem.id.in_(orphans))
                        .values(status="dead", last_error="the item it depends on is dead")):
            break


def _crashed(now: datetime, max_attempts: int) -> ColumnElement[bool]:
    """Handed out on its last attempt, and its lease ran out."""
    return and_(OutboxItem.status == "sending", OutboxItem.locked_until <= now, OutboxItem.attempts >= max_attempts)


def _orphaned() -> ColumnElement[bool]:
    """Waiting on an item that is dead."""
    return and_(OutboxItem.status.in_(("pending", "failed")),
                exists().where(_PARENT.id == OutboxItem.depends_on, _PARENT.status == "dead"))


def _channel_open(now: datetime) -> ColumnElement[bool]:
    """A channel (its ChannelPace row) not paced, with a due item and none in flight."""
    in_channel = OutboxItem.channel == ChannelPace.channel
    in_flight = and_(in_channel, OutboxItem.status == "sending", OutboxItem.locked_until > now)
    return and_(ChannelPace.next_at <= now, ChannelPace.channel != UPDATE_LANE,
                exists().where(in_channel, _due(now), _dependency_sent()), ~exists().where(in_flight))


def _claimable(session: Session, now: datetime, max_attempts: int) -> bool:
    """Whether a claim could hand out or dead-letter anything (a superset: the claim itself decides)."""
    anything = or_(exists().where(_channel_open(now)), exists().where(_crashed(now, max_attempts)),
                   exists().where(_orphaned()))
    return bool(session.scalar(select(anything)))


def claim(
    factory: sessionmaker[Session], worker_id: str, now: datetime, limit: int = 10,
    lease: timedelta = DEFAULT_LEASE, pace: timedelta = DEFAULT_PACE, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    on_quarantine: Callable[[Quarantined], None] | None = None,
) -> list[ClaimedItem]:
    """Hand out up to `limit` due items, at most one per channel, oldest first, in a transaction of its own.

    A channel is skipped while it is paced (`pace` after its previous claim, or a Retry-After), while one of its
    items is in flight, or while another worker is claiming in it. An item waits until the item it depends on is
    sent, and then carries that item's result. A row whose payload cannot be read is marked dead instead
    (bot/store/quarantine.py) and reported to `on_quarantine` once the claim has committed.
    """
    with read_session(factory) as session:
        if not _claimable(session, now, max_attempts):
            return []  # most polls find every channel paced: no need to queue for the write lock to learn that
    claimed: list[ClaimedItem] = []
    poisoned: list[Quarantined] = []
    with factory.begin() as session:
        _sweep_dead(session, now, max_attempts)
        updates_open, refresh_open = _update_lane_open(session, now)
        channels = session.scalars(
            select(ChannelPace.channel)
            .where(_channel_open(now))
            .order_by(ChannelPace.next_at, ChannelPace.channel)
            .limit(limit)
            # The channel row is the claim lock: a second worker skips the channel instead of double-claiming.
            .with_for_update(skip_locked=True)
        ).all()
        for channel in channels:
            lane = [] if updates_open else [OutboxItem.method != "chat.update"]
            if updates_open and not refresh_open:
                lane = [or_(OutboxItem.method != "chat.update", OutboxItem.priority < PRIORITY_REFRESH)]
            found = _next_readable(session, channel, now, lane, poisoned)
            if found is None:
                continue
            item, payload, progress = found
            if item.method == "chat.update":
                _take_update_slot(session, now)
                updates_open = False
            if item.status == "sending":
                item.maybe_sent = True  # its lease ran out: the worker may have died after Slack took the call
            item.status = "sending"
            item.attempts += 1
            item.locked_by = worker_id
            item.locked_until = now + lease
            if item.method != "chat.update":  # an edit is not a post: Slack's per-channel limit is for posts
                session.execute(update(ChannelPace).where(ChannelPace.channel == channel)
                                .values(next_at=now + pace, last_sent_at=now))
            parent_result = None
            if item.depends_on is not None:
                parent_result = decode_object(raw_columns(session, item.depends_on)[1])[0]
            claimed.append(ClaimedItem(
                id=item.id, idempotency_key=item.idempotency_key, channel=item.channel, method=item.method,
                payload=payload, depends_on=item.depends_on, attempts=item.attempts,
                locked_until=item.locked_until, parent_result=parent_result, maybe_sent=item.maybe_sent,
                created_at=item.created_at, progress=progress or None,
            ))
    for row in poisoned:  # after the commit: each is reported once, as the row is dead from now on
        if on_quarantine is not None:
            on_quarantine(row)
    return claimed


def _next_readable(session: Session, channel: str, now: datetime, lane: list[ColumnElement[bool]],
                   poisoned: list[Quarantined]) -> tuple[OutboxItem, dict[str, Any], dict[str, Any] | None] | None:
    """The channel's next due item with its payload and progress decoded; unreadable ones on the way are marked
    dead (appended to `poisoned`). The JSON columns are read as text, so a broken one cannot fail the claim."""
    for _ in range(_QUARANTINE_PER_CLAIM):
        item = session.scalars(
            select(OutboxItem).options(defer(OutboxItem.payload), defer(OutboxItem.result))
            .where(OutboxItem.channel == channel, _due(now), _dependency_sent(), *lane)
            .order_by(OutboxItem.priority, OutboxItem.id).limit(1)
            .with_for_update(skip_locked=True)  # e.g. a slow worker marking its expired item right now
        ).first()
        if item is None:
            return None
        payload_text, result_text = raw_columns(session, item.id)
        payload, why = decode_object(payload_text)
        if payload is None:
            poisoned.append(quarantine(session, item, f"payload {why}"))
            continue
        return item, payload, decode_object(result_text)[0] if result_text is not None else None
    return None


def _update_lane_open(session: Session, now: datetime) -> tuple[bool, bool]:
    """Whether a chat.update may start now, and one that only refreshes content (GCRA: `next_at` is the theoretical
    time of the next edit; it may run `UPDATE_BURST - 1` intervals ahead of now)."""
    session.execute(insert_ignoring_conflicts(session, ChannelPace, ["channel"])
                    .values(channel=UPDATE_LANE, next_at=now))
    next_at = session.scalars(select(ChannelPace.next_at).where(ChannelPace.channel == UPDATE_LANE)
                              .with_for_update(skip_locked=True)).first()
    if next_at is None:
        return False, False
    return (next_at - UPDATE_INTERVAL * (UPDATE_BURST - 1) <= now,
            next_at - UPDATE_INTERVAL * (UPDATE_BURST - 1 - UPDATE_RESERVE) <= now)


def _take_update_slot(session: Session, now: datetime) -> None:
    lane = session.get(ChannelPace, UPDATE_LANE, populate_existing=True)
    if lane is not None:
        lane.next_at = max(lane.next_at, now) + UPDATE_INTERVAL
        lane.last_sent_at = now


def mark_sent(
    session: Session, item_id: int, worker_id: str, result: Mapping[str, Any], now: datetime | None = None
) -> bool:
    """Record Slack's answer (keep at least `ts` and `channel`: dependants receive it). False when this worker's
    lease was taken over by another worker, which then owns the item."""
    return _changed(session, update(OutboxItem)
                    .where(OutboxItem.id == item_id, OutboxItem.status == "sending", OutboxItem.locked_by == worker_id)
                    .values(status="sent", result=dict(result), sent_at=now or utcnow(), locked_by=None,
                            locked_until=None, last_error=None)) == 1


def checkpoint(session: Session, item_id: int, worker_id: str, progress: Mapping[str, Any]) -> bool:
    """Record how far a call of several steps got (a file upload's file id, before Slack is asked to share it), so
    the attempt after a crash can find what Slack already did. Kept in `result` until `mark_sent` replaces it;
    False when this worker's lease was taken over."""
    return _changed(session, update(OutboxItem)
                    .where(OutboxItem.id == item_id, OutboxItem.status == "sending", OutboxItem.locked_by == worker_id)
                    .values(result=dict(progress))) == 1


def mark_failed(
    session: Session, item_id: int, worker_id: str, error: str, retry_after: float | None = None,
    permanent: bool = False, now: datetime | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    uncertain: bool = False,
) -> str | None:
    """Record a failed call. Retry after `retry_after` seconds when Slack said so (429), else back off
    exponentially; `permanent` (e.g. channel_not_found) or a used-up attempt budget makes the item dead.
    `uncertain`: the call may have reached Slack (a timeout, a 5xx page), so the retry looks before it posts.

    Returns the new status ("failed" or "dead"), or None when this worker no longer holds the item.
    """
    now = now or utcnow()
    item = session.get(OutboxItem, item_id, populate_existing=True)
    if item is None or item.status != "sending" or item.locked_by != worker_id:
        return None
    if retry_after is not None:
        # Slack's rate limit for posts is per channel, so hold every post to it back, not only this one; for
        # chat.update it is per workspace (the update lane, where `next_at` runs a burst ahead).
        hold = now + timedelta(seconds=max(0.0, retry_after))
        if item.method == "chat.update":
            lane, hold = UPDATE_LANE, hold + UPDATE_INTERVAL * (UPDATE_BURST - 1)
        else:
            lane = item.channel
        _changed(session, update(ChannelPace).where(ChannelPace.channel == lane)
                 .values(next_at=_later(ChannelPace.next_at, hold)))
    dead = permanent or item.attempts >= max_attempts
    delay = retry_after if retry_after is not None else backoff(item.attempts)
    values: dict[str, Any] = {"status": "dead" if dead else "failed", "last_error": error[:4000],
                              "locked_by": None, "locked_until": None}
    if uncertain:
        values["maybe_sent"] = True
    if not dead:
        values["next_attempt_at"] = now + timedelta(seconds=max(0.0, delay))
    done = _changed(session, update(OutboxItem)
                    .where(OutboxItem.id == item_id, OutboxItem.status == "sending", OutboxItem.locked_by == worker_id)
                    .values(**values))
    session.expire(item)
    return str(values["status"]) if done else None


def maybe_sent_posts(session: Session, channel: str, *, exclude: int) -> list[ClaimedItem]:
    """The channel's waiting posts that an earlier attempt may have made (`maybe_sent`), with their parents'
    results: one history page read for one of them can settle the others too."""
    rows = session.scalars(select(OutboxItem).where(
        OutboxItem.channel == channel, OutboxItem.method == "chat.postMessage", OutboxItem.maybe_sent,
        OutboxItem.status.in_(("pending", "failed")), OutboxItem.id != exclude).order_by(OutboxItem.id)).all()
    parents = {i for i in (r.depends_on for r in rows) if i is not None}
    results: dict[int, Any] = dict(session.execute(select(OutboxItem.id, OutboxItem.result).where(
        OutboxItem.id.in_(parents), OutboxItem.status == "sent")).all()) if parents else {}
    return [ClaimedItem(id=r.id, idempotency_key=r.idempotency_key, channel=r.channel, method=r.method,
                        payload=r.payload, depends_on=r.depends_on, attempts=r.attempts,
                        locked_until=r.next_attempt_at,
                        parent_result=results.get(r.depends_on) if r.depends_on else None,
                        maybe_sent=True, created_at=r.created_at) for r in rows]


def retry_now(session: Session, now: datetime) -> int:
    """Slack answers again after failures: every failed item waiting out its backoff may go at once (the claim's
    order still puts roots first, and a channel held back by a Retry-After stays held). Without this, posts that
    failed through an outage wait up to their last backoff, minutes, after Slack is back."""
    return _changed(session, update(OutboxItem).where(OutboxItem.status == "failed", OutboxItem.next_attempt_at > now)
                    .values(next_attempt_at=now))


def settle_found(session: Session, item_id: int, result: Mapping[str, Any], now: datetime | None = None) -> bool:
    """A waiting post found in Slack by another item's history lookup: sent, without a call. False when a poster
    holds it now (that poster finds it itself)."""
    return _changed(session, update(OutboxItem).where(
        OutboxItem.id == item_id, OutboxItem.status.in_(("pending", "failed")), OutboxItem.maybe_sent)
        .values(status="sent", result=dict(result), sent_at=now or utcnow(), last_error=None)) == 1


def settle_absent(session: Session, seen: Mapping[int, int]) -> int:
    """Waiting posts (id -> attempts when they were read) that a complete read of their channel or thread did not
    find: no earlier attempt made them, so the next one posts without looking again. A post tried again since it
    was read (its attempts moved on) keeps its flag: that attempt may have come after the read."""
    return sum(_changed(session, update(OutboxItem).where(
        OutboxItem.id == item_id, OutboxItem.attempts == attempts, OutboxItem.status.in_(("pending", "failed")))
        .values(maybe_sent=False)) for item_id, attempts in seen.items())


def hand_back(session: Session, item_id: int, worker_id: str, until: datetime) -> bool:
    """Hand a claimed item back untried (the lookup it needs has no budget now): its attempt is not counted."""
    return _changed(session, update(OutboxItem)
                    .where(OutboxItem.id == item_id, OutboxItem.status == "sending", OutboxItem.locked_by == worker_id)
                    .values(status="failed", attempts=OutboxItem.attempts - 1, next_attempt_at=until,
                            locked_by=None, locked_until=None)) == 1


def _changed(session: Session, statement: Update) -> int:
    """Run a bulk UPDATE (no ORM state to synchronise: callers re-read) and return how many rows it changed."""
    result = session.execute(statement.execution_options(synchronize_session=False))
    return cast(CursorResult[Any], result).rowcount


def _later(column: SQLColumnExpression[datetime], moment: datetime) -> ColumnElement[datetime]:
    """The later of a time column and a moment, in SQL (GREATEST and MAX differ between the two backends)."""
    return case((column > moment, column), else_=literal(moment, UTCDateTime()))


def retry_dead(session: Session, item_id: int, now: datetime | None = None) -> bool:
    """Give a dead item a fresh attempt budget (an operator's action, e.g. after fixing a channel id)."""
    return _changed(session, update(OutboxItem).where(OutboxItem.id == item_id, OutboxItem.status == "dead")
                    .values(status="pending", attempts=0, next_attempt_at=now or utcnow(), last_error=None)) == 1


def due_now(session: Session, item_ids: set[int], now: datetime | None = None) -> int:
    """Make failed items due at once (Slack can be reached again: bot/delivery/slack_reach.py); returns how many."""
    if not item_ids:
        return 0
    return _changed(session, update(OutboxItem).where(OutboxItem.id.in_(item_ids), OutboxItem.status == "failed")
                    .values(next_attempt_at=now or utcnow()))


def counts(session: Session) -> dict[str, int]:
    """Items per status, for health checks and metrics."""
    rows = session.execute(select(OutboxItem.status, func.count()).group_by(OutboxItem.status)).all()
    return {status: int(n) for status, n in rows}
