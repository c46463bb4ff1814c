"""In an alert storm, why triages ended without a verdict is said once in the roll-up's thread, grouped by reason.

The groups of a storm reply under one roll-up (bot/webhook/storm.py). Six groups in a namespace that is gone would
otherwise leave six identical ":mag: namespace "ml" not found" notes there, none naming its group. Instead one
message (`<rollup key>:outcomes`) lists each reason with the groups it ended, and is edited as more end. Each
group's own root still says its reason (bot.delivery.roots.queue_outcome).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.delivery import Edit, Reply, find, queue, take_back
from bot.delivery.roots import latest_shown
from bot.keys import alert_root_key
from bot.render.rollup import group_name, outcomes_text
from bot.store.models import AlertGroup, AlertStorm, OutboxItem


def note_in_rollup(session: Session, parent: OutboxItem, incident_id: int | None, reason: str) -> bool:
    """Fold the reason a storm member's triage ended into its roll-up's outcomes message. False (nothing done)
    when the parent root is in no storm: the caller then posts its own note."""
    if incident_id is None:
        return False
    group = session.scalars(select(AlertGroup).where(AlertGroup.incident_id == incident_id)).first()
    if group is None or not group.rollup_key or not group.channel:
        return False
    rollup = find(session, group.rollup_key)
    if rollup is None:
        return False
    # The channel's storm row, as the webhooks take it: two triages ending at once edit the message one by one,
    # each counting the other's reason.
    session.scalars(select(AlertStorm).where(AlertStorm.channel == group.channel).with_for_update()).first()
    _show(session, rollup, group.channel, _reasons(session, group.rollup_key, {group.id: reason}))
    return True


def triage_note_key(root_key: str) -> str:
    """The outbox key of the note an alert triage leaves under its root (bot.webhook.alert_flow names the triage
    `<root>:triage`, bot.runner.jobs its note `<triage>:note`)."""
    return f"{root_key}:triage:note"


def fold_queued_notes(session: Session, rollup: OutboxItem, channel: str, root_keys: list[str]) -> None:
    """Roots moved under a roll-up whose triage already ended: their notes, still queued, would land in the roll-up's
    thread one by one. Those never sent are taken back and their reasons join the outcomes message instead (the
    caller holds the channel's storm row)."""
    if not root_keys or not rollup.payload.get("rollup_key"):
        return
    if take_back(session, [triage_note_key(k) for k in root_keys]):
        _show(session, rollup, channel, _reasons(session, str(rollup.payload["rollup_key"]), {}))


def _show(session: Session, rollup: OutboxItem, channel: str, by_reason: dict[str, list[str]]) -> None:
    """Post the outcomes message in the roll-up's thread, or have it show `by_reason` now."""
    if not by_reason:
        return
    text = outcomes_text(by_reason)
    key = f"{rollup.idempotency_key}:outcomes"
    shown = find(session, key)
    if shown is None:
        queue(session, Reply(key=key, channel=channel, kind="rollup-outcomes", text=text, parent=rollup))
    else:
        queue(session, Edit(target=shown, fields={"text": text}))


def _reasons(session: Session, rollup_key: str, now: dict[int, str]) -> dict[str, list[str]]:
    """Reason -> the names of the storm's groups whose triage ended for it (`now`: reasons not stored yet)."""
    by_reason: dict[str, list[str]] = {}
    members = session.scalars(select(AlertGroup).where(AlertGroup.rollup_key == rollup_key)
                              .order_by(AlertGroup.id)).all()
    for member in members:
        root = find(session, alert_root_key(member.group_key, member.episode or 1))
        shown: dict[str, Any] = latest_shown(session, root).get("root") or {} if root is not None else {}
        reason = now.get(member.id) or str(shown.get("outcome") or "")
        if reason:
            labels = (member.last_payload or {}).get("groupLabels") or {}
            names = shown.get("alertnames") or [str(member.common_labels.get("alertname", ""))]
            by_reason.setdefault(reason, []).append(group_name([str(n) for n in names if n], labels))
    return by_reason
