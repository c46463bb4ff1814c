"""triagebot's own metrics, served on /metrics."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


@dataclass
class Metrics:
    """One registry per server, so tests and two apps in one process do not collide."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.triages = Counter("triagebot_triages", "Triages run, by trigger and outcome.",
                               ["trigger", "outcome"], registry=r)
        self.triage_seconds = Histogram("triagebot_triage_duration_seconds", "Wall time of one triage.",
                                        ["trigger"], registry=r,
                                        buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40))
        self.missing_sources = Counter("triagebot_missing_sources", "Sources a triage could not read.",
                                       ["source"], registry=r)
        self.alerts = Counter("triagebot_alerts_received", "Alerts received on the webhook, by status.",
                              ["status"], registry=r)
        self.webhook_rejected = Counter("triagebot_webhook_rejected", "Webhook requests refused, by reason.",
                                        ["reason"], registry=r)
        self.webhook_unchanged = Counter("triagebot_webhook_unchanged", "Webhooks that repeated the last "
                                         "notification of their group (answered with one read).", registry=r)
        self.slack_errors = Counter("triagebot_slack_errors", "Slack Web API errors, by method and error.",
                                    ["method", "error"], registry=r)
        # Dead items by cause: quarantined (a row that cannot be read), permanent (an error no retry can fix),
        # exhausted (the attempt budget ran out on transient errors).
        self.outbox_dead = Counter("triagebot_outbox_dead", "Outbox items given up on, by cause.", ["cause"],
                                   registry=r)
        self.lookup_settled = Counter("triagebot_slack_lookup_settled",
                                      "Waiting posts settled by another post's history lookup (found: already in "
                                      "Slack; absent: posts without a lookup), and lookups deferred for budget.",
                                      ["outcome"], registry=r)
        self.outbox_depth = Gauge("triagebot_outbox_depth", "Slack posts waiting in the outbox.", registry=r)
        self.db_up = Gauge("triagebot_db_up", "1 while the database commits, 0 since a store operation failed.",
                           registry=r)
        self.db_up.set(1)
        self.db_errors = Counter("triagebot_db_errors", "Store operations that failed for the database (it was "
                                 "unreachable, restarting, or full), by where.", ["where"], registry=r)
        self._db_lock = threading.Lock()
        self._db: dict[str, Any] = {"up": True, "failing": [], "errors": 0, "last_error": None,
                                    "down_since": None, "last_outage_seconds": None}
        self.commands = Counter("triagebot_commands", "Slack commands and actions handled.", ["command"],
                                registry=r)

    def db_failed(self, where: str, err: BaseException) -> bool:
        """Record a store operation the database refused at `where` (the webhook, the poster); True when this
        starts an outage (log it once)."""
        self.db_errors.labels(where).inc()
        self.db_up.set(0)
        with self._db_lock:
            started = bool(self._db["up"])
            self._db["errors"] += 1
            # The first line only: SQLAlchemy puts the statement and its parameters on the lines after it.
            first = (str(err).splitlines() or [""])[0][:200]
            self._db["last_error"] = f"{where}: {type(err).__name__}: {first}"
            if where not in self._db["failing"]:
                self._db["failing"] = sorted([*self._db["failing"], where])
            if started:
                self._db.update(up=False, down_since=time.time())
        return started

    def db_ok(self, where: str) -> float | None:
        """A store operation at `where` went through. The database is up again once every place that failed has
        gone through since (a full disk still takes some writes, and reads): then the seconds it was away."""
        with self._db_lock:
            if self._db["up"] or where not in self._db["failing"]:
                return None
            self._db["failing"] = [w for w in self._db["failing"] if w != where]
            if self._db["failing"]:
                return None
            outage = time.time() - float(self._db["down_since"])
            self._db.update(up=True, down_since=None, last_outage_seconds=round(outage, 3))
        self.db_up.set(1)
        return outage

    def db_state(self) -> dict[str, Any]:
        """What /healthz says about the database: up or since when not and where it fails, errors so far, the
        last one, how long the last outage lasted."""
        with self._db_lock:
            return dict(self._db)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
