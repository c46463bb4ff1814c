"""The outbox worker: the only code that calls Slack's Web API to post, update or upload.

Everything the bot says goes into the outbox first (bot/delivery/queue.py), in the same transaction as what
caused it; this worker claims due items, hands each to the sender of its Slack method (bot/delivery/senders/),
and records Slack's answer. Pacing per channel, Retry-After and backoff live in the outbox (bot/store/outbox.py),
so a Slack outage only delays posts and two replicas never post the same item twice.

Every post carries Slack message metadata naming its outbox key. An item that may already have been posted (its
worker died between Slack's answer and `mark_sent`, or the call timed out) is first looked for by its sender
(`recover`) and only sent if it is not there. Lookups are Slack's scarcest budget (bot/delivery/lookups.py): a
failure that cannot have posted (a refused connection, a 429) asks for none. A message Slack refuses for its size
is sent again as plain, cut text (bot/delivery/fitting.py), with the whole text queued as a file in the thread.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from sqlalchemy.orm import Session, sessionmaker

from bot.delivery.desk import Deferred, Desk, LeaseLost, NothingToDo, NotYet, record
from bot.delivery.fitting import send_fitting
from bot.delivery.lookups import LookupBudget, may_have_reached_slack
from bot.delivery.posts import Upload
from bot.delivery.queue import queue
from bot.delivery.senders import sender_for
from bot.delivery.slack_errors import Failure, exception_failure, slack_failure
from bot.delivery.slack_reach import SlackReach, is_transport_error
from bot.metrics import Metrics
from bot.store import outbox
from bot.store.db import read_session
from bot.store.outage import database_away
from bot.store.outbox import ClaimedItem
from bot.store.quarantine import Quarantined

log = logging.getLogger("triagebot.poster")

# Which errors no retry will fix (the item is dead at once, logged and counted): bot/delivery/slack_errors.py.
# Every command and webhook wakes the poster. In a burst, one look after the first wake-up finds what the others
# queued; without the pause the poster queried the database dozens of times a second in the process that acks.
WAKE_COALESCE = 0.05  # seconds
DEPTH_EVERY = 1.0  # seconds between counts of the outbox for the depth gauge
DB_RETRY = 1.0  # seconds between polls while the database is away (a poll a tick would only fill the log)


def _now() -> datetime:
    return datetime.now(UTC)


class Poster:
    def __init__(self, factory: sessionmaker[Session], client: WebClient, metrics: Metrics | None = None,
                 worker_id: str | None = None, clock: Callable[[], datetime] = _now,
                 lease: timedelta = outbox.DEFAULT_LEASE, reach: SlackReach | None = None,
                 lookups: LookupBudget | None = None) -> None:
        self.factory = factory
        self.reach = reach or SlackReach()  # logs an outage once a minute instead of once per failed call
        self.lease = lease
        self.metrics = metrics or Metrics()
        self.worker_id = worker_id or f"poster-{uuid.uuid4().hex[:8]}"
        self.clock = clock
        self.desk = Desk(factory=factory, client=client, metrics=self.metrics, lookups=lookups or LookupBudget(),
                         worker_id=self.worker_id, clock=clock)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._counted_at: float | None = None
        # Slack failed without an answer (5xx, no connection) since the last success; True at start, as a poster
        # that replaces a dead one inherits its failures.
        self._slack_failing = True

    def run_once(self) -> int:
        """Claim and send what is due now; returns how many items were attempted."""
        items = outbox.claim(self.factory, self.worker_id, self.clock(), lease=self.lease,
                             on_quarantine=self._quarantined)
        for item in items:
            self._send(item)
        self._count()
        return len(items)

    def _quarantined(self, row: Quarantined) -> None:
        """A row the claim set aside as unreadable: said once (it is dead from now on) and counted."""
        self.metrics.outbox_dead.labels("quarantined").inc()
        log.error("outbox item %s (%s, channel %s) quarantined: %s", row.id, row.idempotency_key, row.channel,
                  row.reason)

    def _count(self) -> None:
        """Set the depth gauge, at most once a second."""
        if self._counted_at is not None and time.monotonic() - self._counted_at < DEPTH_EVERY:
            return
        with read_session(self.factory) as session:
            depth = sum(n for status, n in outbox.counts(session).items() if status in ("pending", "failed",
                                                                                        "sending"))
        self.metrics.outbox_depth.set(depth)
        self._counted_at = time.monotonic()

    def _send(self, item: ClaimedItem) -> None:
        full_text: str | None = None
        try:
            sender = sender_for(item.method)
            result = sender.recover(self.desk, item) if item.maybe_sent else None
            if result is None:
                result, full_text = send_fitting(lambda it: sender.send(self.desk, it), item, self.metrics)
        except LeaseLost:
            log.warning("%s was taken over by another poster mid-call", item.idempotency_key)
            return
        except Deferred as why:
            with self.factory.begin() as session:
                outbox.hand_back(session, item.id, self.worker_id, self.clock() + timedelta(seconds=why.seconds))
            return
        except NothingToDo as why:
            log.warning("%s is not sent: %s", item.idempotency_key, why)
            with self.factory.begin() as session:
                outbox.mark_sent(session, item.id, self.worker_id, {"skipped": str(why), "channel": item.channel},
                                 now=self.clock())
            return
        except NotYet as why:
            with self.factory.begin() as session:
                outbox.mark_failed(session, item.id, self.worker_id, str(why), now=self.clock())
            return
        except SlackApiError as err:
            self.reach.answered()
            # A page from a proxy or a 5xx may hide a post Slack did make: the retry looks first.
            self._slack_failing = self._slack_failing or err.response.status_code >= 500
            self._failed(item, slack_failure(err), "")  # a 5xx page may hide a post: uncertain; a 429 is not
            return
        except Exception as err:  # network errors (retried), or a payload no call can be made from (dead)
            self._slack_failing = True
            unreachable = is_transport_error(err)
            failure = replace(exception_failure(err), uncertain=may_have_reached_slack(err))
            self._failed(item, failure, f"{type(err).__name__}: {err}", logged=not unreachable)
            if unreachable:
                self.reach.failed(err, item.id)  # one line a minute while Slack cannot be reached
            return
        self.reach.answered()
        with self.factory.begin() as session:
            if self._slack_failing:
                # Slack is back: what backed off through the outage goes now, roots first, not minutes later.
                self._slack_failing = False
                pulled = outbox.retry_now(session, self.clock())
                if pulled:
                    log.info("slack answers again: %d waiting items retried now", pulled)
            if outbox.mark_sent(session, item.id, self.worker_id, result, now=self.clock()) and result.get("ts"):
                record(session, item, result)
                if full_text is not None and item.method == "chat.postMessage":
                    queue(session, Upload(key=f"{item.idempotency_key}:full", channel=item.channel, kind="full-text",
                                          filename="message.txt", title="The full text of the message above",
                                          content=full_text, incident_id=item.payload.get("incident_id"),
                                          parent=outbox.find(session, item.idempotency_key)))

    def _failed(self, item: ClaimedItem, failure: Failure, detail: str, *, logged: bool = True) -> None:
        """Record a failed call: dead at once if no retry can fix it, else retried within the attempt budget.

        `logged=False` when the outage is reported elsewhere (SlackReach's line a minute), not per call."""
        self.metrics.slack_errors.labels(item.method, failure.error).inc()
        with self.factory.begin() as session:
            status = outbox.mark_failed(session, item.id, self.worker_id, detail or failure.error,
                                        retry_after=failure.retry_after, permanent=failure.permanent,
                                        now=self.clock(), uncertain=failure.uncertain)
        if status == "dead":
            self.metrics.outbox_dead.labels("permanent" if failure.permanent else "exhausted").inc()
        if logged or status == "dead":
            log.warning("slack %s failed for %s: %s (%s)", item.method, item.idempotency_key,
                        detail or failure.error, status)

    def start(self, interval: float = 0.2) -> None:
        def loop() -> None:
            while not self._stop.is_set():
                try:
                    busy = self.run_once()
                except Exception as err:
                    if not database_away(err):
                        log.exception("poster loop failed; retrying")
                    elif self.metrics.db_failed("poster", err):
                        log.error("database unavailable: the poster retries every %.0f s (%s)", DB_RETRY,
                                  type(err).__name__)
                    # A claimed item whose outcome was not recorded stays `sending` until its lease runs out, and
                    # is then looked for in Slack before it is posted again: nothing is lost or posted twice.
                    self._stop.wait(DB_RETRY)
                    continue
                outage = self.metrics.db_ok("poster")
                if outage is not None:
                    log.warning("database committing again after %.1f s: the poster resumes", outage)
                if not busy:
                    if self._wake.wait(interval):
                        self._stop.wait(WAKE_COALESCE)
                    self._wake.clear()

        self._thread = threading.Thread(target=loop, name=self.worker_id, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Something was enqueued: look now instead of at the next tick."""
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

