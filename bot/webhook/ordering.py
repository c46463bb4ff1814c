"""Which webhook is news: each alert's newest known state, so stale and duplicate notifications change nothing.

Alertmanager gives no notification timestamp and, in an HA pair, two instances send the same group; retries and
proxies reorder deliveries. Each alert (by fingerprint) carries its own clock instead: an *instance* of an alert
starts at `startsAt` (a re-fire after a resolution has a later `startsAt`), and within one instance `resolved`
comes after `firing` and a later `endsAt` after an earlier one. A notification is applied alert by alert, keeping
whichever state is newer; one that makes nothing newer is absorbed. An alert without `startsAt` is dated by the
time its notification arrived.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.webhook.payload import Alert

_ZERO_YEAR = 1  # Alertmanager's "no time" is 0001-01-01T00:00:00Z


@dataclass(frozen=True)
class AlertState:
    status: str
    starts_at: datetime
    ends_at: datetime | None

    def order(self) -> tuple[datetime, int, datetime]:
        """Sorts older before newer: by instance (start), then resolved after firing, then by end."""
        return (self.starts_at, 1 if self.status == "resolved" else 0, self.ends_at or self.starts_at)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "startsAt": self.starts_at.isoformat(),
                "endsAt": self.ends_at.isoformat() if self.ends_at else None}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> AlertState:
        ends = value.get("endsAt")
        return cls(status=str(value["status"]), starts_at=datetime.fromisoformat(str(value["startsAt"])),
                   ends_at=datetime.fromisoformat(str(ends)) if ends else None)


def fingerprint(alert: Alert) -> str:
    """Alertmanager's fingerprint, or a hash of the labels for a sender that gives none."""
    return alert.fingerprint or hashlib.sha256(repr(sorted(alert.labels.items())).encode()).hexdigest()[:16]


def _real(moment: datetime | None) -> datetime | None:
    return moment if moment is not None and moment.year > _ZERO_YEAR else None


def state_of(alert: Alert, received: datetime) -> AlertState:
    starts = _real(alert.startsAt) or received
    ends = _real(alert.endsAt) if alert.status == "resolved" else None
    return AlertState(alert.status, starts, ends or (received if alert.status == "resolved" else None))


@dataclass(frozen=True)
class Merge:
    """The outcome of one notification: the new per-alert states, what changed, and the group's status."""

    states: dict[str, dict[str, Any]]
    changed: list[str]  # fingerprints whose state this notification made newer
    status: str  # firing if any alert of the notification is firing after the merge, else resolved

    @property
    def absorbed(self) -> bool:
        return not self.changed


def merge(known: Mapping[str, Any], alerts: Iterable[Alert], received: datetime) -> Merge:
    """Apply a notification's alerts to the known states (a JSON mapping fingerprint -> state)."""
    states = dict(known)
    changed: list[str] = []
    statuses: list[str] = []
    for alert in alerts:
        key = fingerprint(alert)
        new = state_of(alert, received)
        old = AlertState.from_json(states[key]) if key in states else None
        if old is None or new.order() > old.order():
            # The name and namespace ride along for a storm's roll-up line, which counts alerts from these states.
            states[key] = {**new.to_json(), "alertname": alert.labels.get("alertname", ""),
                           "namespace": alert.labels.get("namespace", "")}
            changed.append(key)
            statuses.append(new.status)
        else:
            statuses.append(old.status)
    return Merge(states=states, changed=changed, status="firing" if "firing" in statuses else "resolved")
