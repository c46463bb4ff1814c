"""Sending the weekly digest: which channels get it, which week is due, and a small clock that queues it.

A channel gets the digest when the `digest_channels` setting names it or someone typed `/triage digest on` there;
`/triage digest off` wins over the setting. Each channel's row keeps the last week sent: the clock queues the
latest complete week (Monday 00:00 UTC to Monday 00:00 UTC) when that row names an older one, in the transaction
that records it, under an outbox key of the channel and week. A restart therefore sends a week it missed and never
one twice, and two replicas queue one post.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bot.delivery import Reply, queue
from bot.memory.digest import build_digest
from bot.memory.weekly import incidents_between, labels_between
from bot.render.memory.digest import chart_alt, chart_at, digest_blocks, digest_chart
from bot.store.dialect import insert_ignoring_conflicts
from bot.store.models import DigestChannel
from bot.store.types import utcnow

log = logging.getLogger("triagebot.digest")

CHECK_EVERY = 600.0  # seconds between looks; a digest lands within ten minutes of Monday 00:00 UTC


def last_complete_week(now: datetime) -> tuple[datetime, datetime, str]:
    """The latest week that has ended: its Monday 00:00 UTC, the next Monday, and its ISO name ("2026-W47")."""
    this_monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    since = this_monday - timedelta(days=7)
    year, week, _ = since.isocalendar()
    return since, this_monday, f"{year}-W{week:02d}"


def set_digest(session: Session, channel: str, on: bool, user: str, now: datetime | None = None) -> None:
    """`/triage digest on|off`. Turning it on does not send the week that ended: the next Monday's is the first."""
    now = now or utcnow()
    row = _row(session, channel, now)
    if on and not row.enabled:
        row.last_week = last_complete_week(now)[2]
    row.enabled, row.changed_by, row.updated_at = on, user, now


def _row(session: Session, channel: str, now: datetime) -> DigestChannel:
    """The channel's row, created if absent (as sent up to last week: opting in is not a request for the past),
    and locked on PostgreSQL until the transaction ends."""
    session.execute(insert_ignoring_conflicts(session, DigestChannel, ["channel"])
                    .values(channel=channel, enabled=False, last_week=last_complete_week(now)[2], updated_at=now))
    return session.scalars(select(DigestChannel).where(DigestChannel.channel == channel).with_for_update()
                           .execution_options(populate_existing=True)).one()


def _is_on(row: DigestChannel | None, channel: str, configured: list[str]) -> bool:
    """A row nobody changed (created by the clock) follows the setting; a word in the channel wins over it."""
    return channel in configured if row is None or row.changed_by is None else row.enabled


def digest_enabled(session: Session, channel: str, configured: list[str]) -> bool:
    return _is_on(session.get(DigestChannel, channel), channel, configured)


def _channels(session: Session, configured: list[str]) -> list[str]:
    rows = {r.channel: r for r in session.scalars(select(DigestChannel))}
    return sorted(c for c in set(rows) | set(configured) if _is_on(rows.get(c), c, configured))


def queue_digest(session: Session, channel: str, since: datetime, until: datetime, week: str) -> None:
    digest = build_digest(incidents_between(session, since, until, channel),
                          labels_between(session, since, until, channel), since, until)
    text, blocks = digest_blocks(digest)
    chart = digest_chart(digest)
    # The chart travels with the message: the poster uploads it and shows it in an image block (in the thread
    # if Slack refuses the block), so the digest stays one message.
    image = {} if chart is None else {"image": {
        "content_b64": base64.b64encode(chart).decode(), "filename": f"digest-{week}.png",
        "title": f"Incidents by symptom, {week}", "alt_text": chart_alt(digest), "at": chart_at(blocks)}}
    queue(session, Reply(key=f"digest:{channel}:{week}", channel=channel, kind="digest", text=text, blocks=blocks,
                         extra=image))


def send_due(factory: sessionmaker[Session], configured: list[str], now: datetime | None = None) -> list[str]:
    """Queue the latest complete week's digest for every opted-in channel not sent it yet; the channels queued."""
    now = now or utcnow()
    since, until, week = last_complete_week(now)
    with factory.begin() as session:
        channels = _channels(session, configured)
    sent: list[str] = []
    for channel in channels:
        with factory.begin() as session:  # one transaction per channel: one broken channel stops no other
            row = _row(session, channel, now - timedelta(days=7))  # configured and new: this week is its first
            if row.last_week is not None and row.last_week >= week:
                continue
            queue_digest(session, channel, since, until, week)
            row.last_week, row.updated_at = week, now
            sent.append(channel)
    return sent


class DigestClock:
    """Looks every CHECK_EVERY seconds whether a week's digest is due, on a thread of its own."""

    def __init__(self, factory: sessionmaker[Session], configured: list[str], wake: Callable[[], None],
                 every: float = CHECK_EVERY) -> None:
        self.factory, self.configured, self.wake, self.every = factory, configured, wake, every
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="digest-clock", daemon=True)

    def start(self) -> DigestClock:
        self._thread.start()
        return self

    def _loop(self) -> None:
        while True:
            try:
                if send_due(self.factory, self.configured):
                    self.wake()
            except Exception:  # the database away for a while: the next look tries again
                log.exception("the weekly digest could not be queued")
            if self._stopping.wait(self.every):
                return

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
