"""Alert storms: when many groups start an episode in one channel within a minute, one roll-up message holds them.

The roll-up ("37 alerts in 12 groups; top KubePodCrashLooping x20 in ml") is a top-level post; the roots of the
groups in the storm are replies in its thread, so the channel shows one message instead of dozens, and Slack's
one-post-per-second-per-channel budget goes to what on-call reads. Roots of the storm's first groups that are
still queued when the storm is recognised move under the roll-up too; those already posted stay where they are
and are counted. A storm lasts while groups keep starting within `window` of the last one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bot.keys import alert_root_key
from bot.posts import counted, rollup_summary
from bot.store import outbox
from bot.store.dialect import insert_ignoring_conflicts
from bot.store.models import AlertGroup, ChannelPace, OutboxItem

ROLLUP_EVENT = "triagebot_alert_rollup"


@dataclass(frozen=True)
class StormPolicy:
    """`groups` episodes starting in one channel within `window` make a storm; 0 turns roll-ups off."""

    groups: int = 5
    window: timedelta = timedelta(minutes=1)


def join_storm(session: Session, group: AlertGroup, channel: str, now: datetime,
               policy: StormPolicy) -> OutboxItem | None:
    """The roll-up the group's new root goes under, or None outside a storm. Sets `group.rollup_key`."""
    if policy.groups <= 0:
        return None
    since = now - policy.window

    def recent_groups() -> list[AlertGroup]:
        return list(session.scalars(
            select(AlertGroup).where(AlertGroup.channel == channel, AlertGroup.episode_started_at >= since,
                                     AlertGroup.id != group.id)
            .order_by(AlertGroup.episode_started_at)))

    # Joining a storm, or staying out of one, needs no lock; creating the roll-up does (one per storm), and
    # then looks again in case another webhook created it meanwhile.
    for locked in (False, True):
        recent = recent_groups()
        active = next((g.rollup_key for g in reversed(recent) if g.rollup_key), None)
        if active is not None:
            group.rollup_key = active
            return outbox.find(session, active)
        if len(recent) + 1 < policy.groups:
            return None
        if not locked:
            _lock_channel(session, channel, now)
    key = f"rollup:{channel}:{now.strftime('%Y%m%dT%H%M%S.%f')}"
    members = [*recent, group]
    rollup = outbox.enqueue(session, key, channel, "chat.postMessage", {
        "kind": "rollup", "text": rollup_summary([counted(g.status, g.alert_states) for g in members]),
        "rollup_key": key,
        "metadata": {"event_type": ROLLUP_EVENT, "event_payload": {"channel": channel, "outbox_key": key}},
    }, priority=outbox.PRIORITY_ROOT, now=now)
    session.flush()
    for member in members:
        member.rollup_key = key
        if member is group:
            continue
        # A root still waiting for its turn moves into the roll-up's thread; one posted already stays put.
        session.execute(update(OutboxItem).where(
            OutboxItem.idempotency_key == alert_root_key(member.group_key, member.episode or 1),
            OutboxItem.status == "pending", OutboxItem.depends_on.is_(None), ~OutboxItem.maybe_sent)
            .values(depends_on=rollup.id, payload=_in_thread(session, member))
            .execution_options(synchronize_session=False))
    return rollup


def refresh_rollup(session: Session, key: str) -> None:
    """Have the roll-up show the storm's current totals. The poster counts them when it sends (`rollup_key`), so
    this only makes sure an edit is queued: nothing to do while the roll-up or an edit of it is still waiting."""
    rollup = outbox.find(session, key)
    if rollup is None or (rollup.status in ("pending", "failed") and not rollup.maybe_sent):
        return
    queued = session.scalar(select(OutboxItem.id).where(OutboxItem.collapse_key == f"{key}:state",
                                                        OutboxItem.status.in_(("pending", "failed"))).limit(1))
    if queued is None:
        outbox.set_latest(session, rollup, {"rollup_key": key})


def _in_thread(session: Session, member: AlertGroup) -> dict[str, Any]:
    root = outbox.find(session, alert_root_key(member.group_key, member.episode or 1))
    return {**(root.payload if root is not None else {}), "in_thread": True}


def _lock_channel(session: Session, channel: str, now: datetime) -> None:
    """One storm decision per channel at a time (PostgreSQL; SQLite's write lock already serialises them)."""
    session.execute(insert_ignoring_conflicts(session, ChannelPace, ["channel"]).values(channel=channel, next_at=now))
    session.execute(select(ChannelPace.channel).where(ChannelPace.channel == channel).with_for_update())
