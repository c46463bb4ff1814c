"""The ingester of a running bot: what applying an intake row means with its settings, and what follows the commit.

Applying is `alert_flow.apply_alerts` with the bot's routes, permissions, storm policy and links; after the commit
the triages it queued are started and the poster is woken (before the intake, the webhook did both itself)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from bot.alerts.alert_message import alert_links
from bot.config import Settings
from bot.delivery.poster import Poster
from bot.metrics import Metrics
from bot.runner.jobs import TriageJobs, TriageRequest
from bot.store.outage import database_away
from bot.webhook.alert_flow import apply_alerts
from bot.webhook.intake import Apply, Failed, Ingester, Intake
from bot.webhook.payload import AlertmanagerPayload
from bot.webhook.repeat import repeated
from bot.webhook.storm import StormPolicy
from collectors.validate import duration

log = logging.getLogger("triagebot.alerts")
WHERE = "alert-intake"  # the ingester's name in /healthz and triagebot_db_errors_total


def alert_ingester(settings: Settings, factory: sessionmaker[Session], intake: Intake, metrics: Metrics,
                   jobs: TriageJobs, poster: Poster | None, instance: str) -> Ingester:
    """An ingester thread (not started) applying `intake` to the main database of `factory`: with
    `triage_workers: 0` and in one-process tests; `serve` with worker processes runs it in a process of its own
    (bot/webhook/ingester_process.py)."""

    def applied(requests: list[Any]) -> None:
        # Committed, the triage jobs with it (apply_alerts queues them): only now start them.
        for triage in requests:
            assert isinstance(triage, TriageRequest)
            try:
                jobs.start_queued(triage)
            except Exception as err:
                if not database_away(err):
                    raise
                # The job is committed with the alert: a worker claims it once the database is back.
                metrics.db_failed(WHERE, err)
        if poster is not None:
            poster.wake()

    failed, ok = reporters(metrics)
    return Ingester(intake, factory, applier(settings, instance), applied, failed, ok)


def applier(settings: Settings, instance: str) -> Apply:
    """What applying one notification means with the bot's settings, in the caller's transaction."""

    def apply(session: Session, body: dict[str, Any], received: datetime, digest: str | None) -> list[Any]:
        # Validated before it was appended; again here, as the row is read back from the database.
        payload = AlertmanagerPayload.model_validate(body)
        if digest is not None and repeated(session, payload.groupKey, digest):
            # The same notification as the last one applied (the HA twin, a retry, a repeat that arrived before
            # its first copy was applied): what the webhook answers with one read, it skips here too.
            return []
        # Read from the settings at each notification, as the webhook did when it applied them itself.
        storm = StormPolicy(groups=settings.storm_groups, window=timedelta(seconds=settings.storm_window))
        return apply_alerts(session, payload, body, routes=settings.routes, default_channel=settings.default_channel,
                            receiver_instance=instance, since=duration(settings.default_since),
                            permissions=settings.permissions, capture_alerts=settings.capture_alerts,
                            links=alert_links(settings), storm=storm, now=received, digest=digest)

    return apply


def reporters(metrics: Metrics) -> tuple[Failed, Callable[[], None]]:
    """What the ingester's database errors and successes do to /healthz and /metrics (the serving process's)."""

    def failed(err: BaseException) -> None:
        if metrics.db_failed(WHERE, err):
            log.error("database unavailable: accepted alerts wait in the intake until it commits again (%s)",
                      type(err).__name__)

    def ok() -> None:
        outage = metrics.db_ok(WHERE)
        if outage is not None:
            log.warning("database committing again after %.1f s (%s)", outage, WHERE)

    return failed, ok
