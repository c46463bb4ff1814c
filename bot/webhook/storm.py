"""Alert storms: when many groups start an episode in one channel within a minute, one roll-up message holds them.

The roll-up ("37 alerts in 12 groups; top KubePodCrashLooping x20 in ml") is a top-level post; the roots of the
groups in the storm are replies in its thread, so the channel shows one message instead of dozens, and Slack's
one-post-per-second-per-channel budget goes to what on-call reads. Roots of the storm's first groups that are
still queued when the storm is recognised move under the roll-up too; those already posted stay where they are
and are counted. A storm lasts while groups keep starting within `window` of the last one. Each channel has one
storm row (`AlertStorm`): the decision to start a storm is taken under its lock, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.alerts.rollup_outcomes import fold_queued_notes
from bot.delivery import Edit, Root, find, queue, thread_under
from bot.delivery.words import counted, rollup_summary
from bot.keys import alert_root_key
from bot.store.dialect import insert_ignoring_conflicts
from bot.store.models import AlertGroup, AlertStorm, OutboxItem

ROLLUP_EVENT = "triagebot_alert_rollup"


@dataclass(frozen=True)
class StormPolicy:
    """`groups` episodes starting in one channel within `window` make a storm; 0 turns roll-ups off."""

    groups: int = 5
    window: timedelta = timedelta(minutes=1)


def join_storm(session: Session, group: AlertGroup, channel: str, now: datetime,
               policy: StormPolicy) -> OutboxItem | None:
    """The roll-up the group's new root goes under, or None outside a storm. Sets `group.rollup_key`.

    Takes the channel's storm row lock first (`AlertStorm`), so the webhooks that start episodes in one channel
    decide one after the other: each counts the others' groups, the storm starts exactly once, at the
    `policy.groups`-th group, and every later group of the storm finds its roll-up. The row is held until the
    webhook's transaction ends."""
    if policy.groups <= 0:
        return None
    since = now - policy.window
    storm = _lock_storm(session, channel, now)
    if storm.rollup_key and storm.last_at is not None and storm.last_at >= since:
        group.rollup_key = storm.rollup_key
        storm.last_at = max(storm.last_at, now)
        return find(session, storm.rollup_key)
    recent = list(session.scalars(
        select(AlertGroup).where(AlertGroup.channel == channel, AlertGroup.episode_started_at >= since,
                                 AlertGroup.id != group.id)
        .order_by(AlertGroup.episode_started_at)
        .execution_options(populate_existing=True)))  # as committed now, not as an earlier query of this session saw
    if len(recent) + 1 < policy.groups:
        return None
    key = f"rollup:{channel}:{now.strftime('%Y%m%dT%H%M%S.%f')}"
    storm.rollup_key, storm.started_at, storm.last_at = key, now, now
    rollup = queue(session, Root(
        key=key, channel=channel, kind="rollup",
        text=rollup_summary([counted(g.status, g.alert_states) for g in [*recent, group]]), state={"rollup_key": key},
        metadata={"event_type": ROLLUP_EVENT, "event_payload": {"channel": channel, "outbox_key": key}}), now=now)
    session.flush()
    group.rollup_key = key
    # A member whose own webhook holds its row right now is skipped rather than waited for: that webhook may be
    # waiting for the storm row this one holds. It joins the storm itself (`adopt_storm`) once this one commits.
    free = set(session.scalars(select(AlertGroup.id).where(AlertGroup.id.in_([g.id for g in recent]))
                               .with_for_update(skip_locked=True)))
    moved = [member for member in recent if member.id in free]
    for member in moved:
        _move_under(session, member, key, rollup)
    # A moved root whose triage already ended (a namespace that is gone answers at once) has its note queued under
    # it: said once in the roll-up's outcomes message rather than as one identical note per group.
    fold_queued_notes(session, rollup, channel, [alert_root_key(m.group_key, m.episode or 1) for m in moved])
    return rollup


def adopt_storm(session: Session, group: AlertGroup, channel: str, policy: StormPolicy) -> None:
    """A group whose episode began in a channel's current storm, but which was not in it yet (its webhook held its
    row while the roll-up was made), joins it, so the roll-up counts it."""
    if policy.groups <= 0 or group.rollup_key or group.episode_started_at is None:
        return
    storm = session.get(AlertStorm, channel)
    if storm is None or not storm.rollup_key or storm.started_at is None or storm.last_at is None:
        return
    if storm.started_at - policy.window <= group.episode_started_at <= storm.last_at:
        group.rollup_key = storm.rollup_key


def _lock_storm(session: Session, channel: str, now: datetime) -> AlertStorm:
    """The channel's storm row, created if absent, locked until the transaction ends (PostgreSQL; SQLite's write
    lock already serialises the webhooks)."""
    session.execute(insert_ignoring_conflicts(session, AlertStorm, ["channel"]).values(channel=channel))
    return session.scalars(select(AlertStorm).where(AlertStorm.channel == channel).with_for_update()
                           .execution_options(populate_existing=True)).one()


def _move_under(session: Session, member: AlertGroup, key: str, rollup: OutboxItem) -> None:
    member.rollup_key = key
    # A root still waiting for its turn moves into the roll-up's thread; one posted already stays put.
    thread_under(session, alert_root_key(member.group_key, member.episode or 1), rollup)


def refresh_rollup(session: Session, key: str) -> None:
    """Have the roll-up show the storm's current totals. The poster counts them when it sends (`rollup_key`), so
    this only makes sure an edit is queued: nothing to do while the roll-up or an edit of it is still waiting."""
    rollup = find(session, key)
    if rollup is None or (rollup.status in ("pending", "failed") and not rollup.maybe_sent):
        return
    queued = session.scalar(select(OutboxItem.id).where(OutboxItem.collapse_key == f"{key}:state",
                                                        OutboxItem.status.in_(("pending", "failed"))).limit(1))
    if queued is None:
        queue(session, Edit(target=rollup, fields={"rollup_key": key}))
