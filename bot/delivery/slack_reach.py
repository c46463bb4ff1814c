"""Whether Slack's Web API can be reached, as the poster and a probe see it.

When Slack cannot be reached (a network outage, a proxy down, DNS), the bot keeps serving: the webhook stores
alerts, the outbox queues their posts, and this object says so in ONE log line a minute (not one per failed call),
and in /healthz. While Slack is down a probe (auth.test) asks every
`retry_interval` seconds; at the first answer the posts that failed for want of a connection are made due at once,
instead of waiting out their backoff (up to five minutes), and the poster is woken.

A transport failure is an OSError (urllib's URLError, refused or reset connections, timeouts). An answer from
Slack, even an error, means Slack was reached.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.config import ConfigError

log = logging.getLogger("triagebot.slack_reach")

LOG_EVERY = 60.0  # seconds between "still unreachable" lines
# Answers to auth.test that no waiting will fix: the token itself is refused.
REFUSED_TOKEN = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"})


class _NoTransportErrors(logging.Filter):
    """slack_sdk logs an error for every request that cannot be sent; SlackReach says it once a minute instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to send a request to Slack API server")


def quiet_transport_errors() -> None:
    """Drop slack_sdk's own line per failed request (idempotent)."""
    sdk = logging.getLogger("slack_sdk.web.base_client")
    if not any(isinstance(f, _NoTransportErrors) for f in sdk.filters):
        sdk.addFilter(_NoTransportErrors())


def is_transport_error(err: BaseException) -> bool:
    """A failure to reach Slack at all, as opposed to an answer from it."""
    return isinstance(err, OSError)


def _one_line(err: BaseException) -> str:
    text = str(getattr(err, "reason", None) or err).splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")


class SlackReach:
    def __init__(self, *, retry_interval: float = 10.0, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        quiet_transport_errors()
        self.retry_interval = retry_interval
        self._clock = clock
        self._wall = wall
        self._lock = threading.Lock()
        self.down_since: datetime | None = None
        self.failures = 0  # failed calls since Slack was last reached
        self.last_error = ""
        self._logged_at: float | None = None
        self._waiting: set[int] = set()  # outbox items that failed for want of a connection
        self._on_back: list[Callable[[set[int]], None]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def up(self) -> bool:
        return self.down_since is None

    def failed(self, err: BaseException, item_id: int | None = None) -> None:
        """A call could not reach Slack. Logs the first failure, then at most one line a minute."""
        with self._lock:
            now = self._clock()
            first = self.down_since is None
            if first:
                self.down_since = self._wall()
            self.failures += 1
            self.last_error = _one_line(err)
            if item_id is not None:
                self._waiting.add(item_id)
            # At most one line a minute, across outages too: a call in flight when Slack came back may still fail
            # and open a "new" outage seconds later; that must not double the lines.
            due = self._logged_at is None or now - self._logged_at >= LOG_EVERY
            if due:
                self._logged_at = now
            failures, since, error = self.failures, self.down_since, self.last_error
        if not due:
            return
        if first:
            log.warning("Slack API unreachable (%s): alerts are still stored and their posts queued; checking "
                        "again every %gs", error, self.retry_interval)
        else:
            log.warning("Slack API still unreachable since %s (%d failed calls; last: %s)",
                        f"{since:%Y-%m-%dT%H:%M:%SZ}", failures, error)

    def answered(self) -> None:
        """Slack answered a call (even with an error): it can be reached."""
        with self._lock:
            if self.down_since is None:
                return
            down_for = self._wall() - self.down_since
            waiting, self._waiting = self._waiting, set()
            self.down_since, self.failures = None, 0
            callbacks = list(self._on_back)
        log.info("Slack API reachable again after %ds; posting resumes (%d queued posts retried now)",
                 int(down_for.total_seconds()), len(waiting))
        for callback in callbacks:
            try:
                callback(waiting)
            except Exception:
                log.exception("resuming after the Slack outage failed; the posts keep their backoff")

    def when_back(self, callback: Callable[[set[int]], None]) -> None:
        """Run `callback(item ids that failed for want of a connection)` each time Slack can be reached again."""
        self._on_back.append(callback)

    def status(self) -> str:
        """For /healthz: "ok", or since when and why Slack cannot be reached."""
        with self._lock:
            if self.down_since is None:
                return "ok"
            return (f"unreachable since {self.down_since:%Y-%m-%dT%H:%M:%SZ} ({self.failures} failed calls; "
                    f"last: {self.last_error})")

    def check(self, client: WebClient) -> None:
        """Ask Slack once (auth.test). A refused token is a ConfigError (no retry will fix it); an unreachable Slack
        is recorded, not raised: the bot starts and posts once Slack answers."""
        try:
            client.auth_test()
        except SlackApiError as err:
            self.answered()
            error = str(err.response.get("error") or "")
            if error in REFUSED_TOKEN:
                raise ConfigError(f"setting SLACK_BOT_TOKEN was refused by Slack: {error}") from None
        except Exception as err:
            if not is_transport_error(err):
                raise
            self.failed(err)
        else:
            self.answered()

    def start(self, client: WebClient) -> SlackReach:
        """Probe an unreachable Slack every `retry_interval` seconds until it answers (and again after the next
        outage): the poster's own retries back off to minutes, the probe does not."""
        def loop() -> None:
            while not self._stop.wait(self.retry_interval):
                if not self.up:
                    try:
                        self.check(client)
                    except ConfigError as err:
                        log.error("%s", err)
                    except Exception:
                        log.exception("checking whether Slack can be reached failed")

        self._thread = threading.Thread(target=loop, name="slack-reach", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
