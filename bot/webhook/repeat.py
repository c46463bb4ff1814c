"""Repeats that changed nothing: Alertmanager re-sends every group each repeat_interval, and an HA pair sends each
notification twice. The webhook answers such a repeat with one statement: on SQLite a read (`unchanged`), before
anything is redacted or validated, that never waits for the write lock a triage may hold; on PostgreSQL the
intake's INSERT itself, which appends nothing when the digest matches (bot/webhook/intake.py, `Intake.append`).

A notification is a repeat when its digest matches the one stored with its group by the last notification
applied (`alert_flow.apply_alerts`); the ingester (bot/webhook/apply.py) skips such a repeat too when it was
appended before its first copy was applied. Applying the same notification twice changes nothing
(bot.webhook.ordering keeps each alert's newest state, and the same state is not newer), so skipping it is safe, as
long as every
alert carries its own times: an alert without `startsAt` (or a resolved one without `endsAt`) is dated by its
arrival, which makes every copy newer, so such notifications get no digest and always take the full path.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bot.store.db import read_session
from bot.store.models import AlertGroup

# Differs between the two instances of an HA pair for the same notification; says nothing about the alerts.
_IGNORED = frozenset({"externalURL"})
_NO_TIME = "0001-"  # Alertmanager's zero time


def _dated(alert: Any) -> bool:
    if not isinstance(alert, dict):
        return False
    starts, ends = alert.get("startsAt"), alert.get("endsAt")
    if not isinstance(starts, str) or not starts or starts.startswith(_NO_TIME):
        return False
    return alert.get("status") != "resolved" or (isinstance(ends, str) and bool(ends) and
                                                 not ends.startswith(_NO_TIME))


# json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False), with its encoder made once.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_alerts(body: dict[str, Any]) -> list[str] | None:
    """Each alert of a parsed body as canonical JSON text, encoded once per webhook: the digest below is made of
    them, and the redaction remembers alerts by them (bot/webhook/redacted.py). None without a list of alerts."""
    alerts = body.get("alerts")
    if not isinstance(alerts, list):
        return None
    try:
        return [_CANONICAL.encode(alert) for alert in alerts]
    except (TypeError, ValueError):
        return None


def state_digest(body: dict[str, Any], alerts: list[str] | None = None) -> str | None:
    """The digest of a parsed (not yet redacted) webhook body, or None when a repeat of it may not be a no-op.
    `alerts`: `canonical_alerts(body)`, when the caller has them. The text hashed is exactly the body's canonical
    JSON without `_IGNORED`, so digests stored before the alerts were encoded one by one still match."""
    listed = body.get("alerts")
    if not isinstance(body.get("groupKey"), str) or not isinstance(listed, list) or not listed:
        return None
    if not all(_dated(a) for a in listed):
        return None
    alerts = canonical_alerts(body) if alerts is None else alerts
    if alerts is None:
        return None
    rest = {k: v for k, v in body.items() if k not in _IGNORED}
    parts = [_CANONICAL.encode(key) + ":" + ("[" + ",".join(alerts) + "]" if key == "alerts" else
                                             _CANONICAL.encode(rest[key])) for key in sorted(rest)]
    canonical = "{" + ",".join(parts) + "}"
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def unchanged(factory: sessionmaker[Session], group_key: str, digest: str) -> bool:
    """Whether the group's last applied notification had this digest: one read, no write lock."""
    with read_session(factory) as session:
        return repeated(session, group_key, digest)


def repeated(session: Session, group_key: str, digest: str) -> bool:
    """Whether the group's last applied notification had this digest, read in `session`."""
    return session.scalar(select(AlertGroup.id).where(AlertGroup.group_key == group_key,
                                                      AlertGroup.state_hash == digest)) is not None
