"""A poisoned outbox row is quarantined, not fatal, on SQLite and PostgreSQL (issue 31, point 3).

The real poster (bot/delivery/poster.py) runs against the Slack stand-in (its errors, 429s and 5xx pages as Slack sends
them) on a real store of each backend. A row that cannot be read is dead with its reason after one claim, counted
once in /metrics and logged once, while every other row is posted. Errors no retry can fix (a `null` payload, a
channel that does not exist, a payload no call can be made from) cost one attempt and no history lookup;
transient ones (429, a 5xx page, a refused connection) are retried.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError
from sqlalchemy import select, text

from bot.delivery.poster import Poster
from bot.delivery.slack_errors import exception_failure, slack_failure
from bot.metrics import Metrics
from bot.store import outbox
from bot.store.models import OutboxItem
from tests.harness.bot_server import listening_socket
from tests.harness.fixtures import MigratedStore
from tests.standins.slack_api import SlackFault, SlackStandIn

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
TRUNCATED = '{"kind": "alert", "text": ":rotating_light: *[FIRING:1] KubePodCrashLooping* on pod che'


class Clock:
    """The poster's clock: each tick is past every channel's pace, so a bounded loop drains the outbox."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float = 2.0) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(burst=100, post_rate_per_channel=100.0) as standin:
        yield standin


def _poster(store: MigratedStore, slack: SlackStandIn, clock: Clock, metrics: Metrics) -> Poster:
    client = WebClient(token=slack.token, base_url=slack.api_url, timeout=5)
    return Poster(store.factory, client, metrics, worker_id="poster-test", clock=clock)


def _drain(poster: Poster, clock: Clock, rounds: int = 12) -> None:
    for _ in range(rounds):
        poster.run_once()
        clock.tick()


def _poison(store: MigratedStore, key: str, stored: str) -> None:
    """Overwrite a row's payload with what a broken writer left behind, as the database holds it.

    SQLite keeps JSON as text and takes truncated JSON as it is. PostgreSQL's jsonb refuses invalid JSON, so the
    poison there is what a double-encoding bug writes: a JSON string holding the truncated text (or JSON null)."""
    with store.factory.begin() as session:
        if store.backend == "sqlite":
            session.execute(text("UPDATE outbox SET payload = :p WHERE idempotency_key = :k"), {"p": stored, "k": key})
        elif stored == "null":
            session.execute(text("UPDATE outbox SET payload = 'null'::jsonb WHERE idempotency_key = :k"), {"k": key})
        else:
            session.execute(text("UPDATE outbox SET payload = to_jsonb(CAST(:p AS text)) WHERE idempotency_key = :k"),
                            {"p": stored, "k": key})


def _rows(store: MigratedStore) -> dict[str, tuple[str, int, str | None]]:
    with store.factory() as session:
        rows = session.execute(select(OutboxItem.idempotency_key, OutboxItem.status, OutboxItem.attempts,
                                      OutboxItem.last_error)).all()
    return {key: (status, attempts, error) for key, status, attempts, error in rows}


def _dead(metrics: Metrics, cause: str) -> float:
    return metrics.registry.get_sample_value("triagebot_outbox_dead_total", {"cause": cause}) or 0.0


def _post(text_: str) -> dict[str, Any]:
    return {"kind": "note", "text": text_}


def test_a_truncated_row_is_quarantined_and_the_others_flow(store: MigratedStore, slack: SlackStandIn,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    with store.factory.begin() as session:
        # The poisoned row is first in its channel (a root's priority, the oldest id): it used to block it.
        outbox.enqueue(session, "poison", "C0ALERTS", "chat.postMessage", _post("poisoned"), now=T0,
                       priority=outbox.PRIORITY_ROOT)
        outbox.enqueue(session, "good-1", "C0ALERTS", "chat.postMessage", _post("first good"), now=T0)
        outbox.enqueue(session, "good-2", "C0ALERTS", "chat.postMessage", _post("second good"), now=T0)
        outbox.enqueue(session, "other", "C0OPS", "chat.postMessage", _post("another channel"), now=T0)
        # A reply to the poisoned row has nowhere to go: it follows it into the dead letters.
        poison = outbox.find(session, "poison")
        outbox.enqueue(session, "poison:reply", "C0ALERTS", "chat.postMessage",
                       {**_post("reply"), "in_thread": True}, depends_on=poison, now=T0)
    _poison(store, "poison", TRUNCATED)
    clock, metrics = Clock(), Metrics()
    with caplog.at_level(logging.WARNING, logger="triagebot.poster"):
        _drain(_poster(store, slack, clock, metrics), clock)
        # A new alert's post, queued after the quarantine, goes out too.
        with store.factory.begin() as session:
            outbox.enqueue(session, "new-alert", "C0ALERTS", "chat.postMessage", _post("new alert"), now=clock.now)
        _drain(_poster(store, slack, clock, metrics), clock, rounds=3)

    rows = _rows(store)
    assert {k: v[0] for k, v in rows.items()} == {"poison": "dead", "poison:reply": "dead", "good-1": "sent",
                                                 "good-2": "sent", "other": "sent", "new-alert": "sent"}
    _, attempts, error = rows["poison"]
    assert attempts == 1
    assert error is not None and error.startswith("quarantined: payload is ")
    assert ("not valid JSON" in error) if store.backend == "sqlite" else ("JSON str, not an object" in error)
    assert rows["poison:reply"][2] == "the item it depends on is dead"
    assert [m.text for m in slack.top_level("C0ALERTS")] == ["first good", "second good", "new alert"]
    assert [m.text for m in slack.top_level("C0OPS")] == ["another channel"]
    assert _dead(metrics, "quarantined") == 1.0
    said = [r for r in caplog.records if "quarantined" in r.getMessage()]
    assert len(said) == 1 and "poison" in said[0].getMessage() and said[0].levelno == logging.ERROR
    assert b'triagebot_outbox_dead_total{cause="quarantined"} 1.0' in metrics.exposition()


def test_a_null_payload_costs_one_attempt_and_no_history_lookup(store: MigratedStore, slack: SlackStandIn) -> None:
    with store.factory.begin() as session:
        outbox.enqueue(session, "null", "C0ALERTS", "chat.postMessage", _post("x"), now=T0,
                       priority=outbox.PRIORITY_ROOT)
        outbox.enqueue(session, "after", "C0ALERTS", "chat.postMessage", _post("after the null"), now=T0)
        # As if an earlier attempt timed out: a retry would look in the channel's history first.
        session.execute(text("UPDATE outbox SET maybe_sent = :t WHERE idempotency_key = 'null'"), {"t": True})
    _poison(store, "null", "null")
    clock, metrics = Clock(), Metrics()
    _drain(_poster(store, slack, clock, metrics), clock)
    status, attempts, error = _rows(store)["null"]
    assert (status, attempts) == ("dead", 1)
    assert error == "quarantined: payload is JSON null, not an object"
    assert slack.calls_to("conversations.history") == [] and slack.calls_to("conversations.replies") == []
    assert [m.text for m in slack.top_level("C0ALERTS")] == ["after the null"]
    assert _dead(metrics, "quarantined") == 1.0


def test_permanent_errors_are_dead_after_one_attempt(store: MigratedStore, slack: SlackStandIn) -> None:
    with store.factory.begin() as session:
        outbox.enqueue(session, "gone", "C0GONE", "chat.postMessage", _post("to a channel that is gone"), now=T0)
        # A payload no call can be made from: an edit that names no message.
        outbox.enqueue(session, "no-ts", "C0OPS", "chat.update", _post("edit of nothing"), now=T0)
        outbox.enqueue(session, "fine", "C0OPS", "chat.postMessage", _post("fine"), now=T0)
        session.execute(text("UPDATE outbox SET maybe_sent = :t WHERE idempotency_key = 'gone'"), {"t": False})
    clock, metrics = Clock(), Metrics()
    _drain(_poster(store, slack, clock, metrics), clock)
    rows = _rows(store)
    assert rows["gone"] == ("dead", 1, "channel_not_found")
    assert rows["no-ts"][:2] == ("dead", 1) and (rows["no-ts"][2] or "").startswith("ValueError: chat.update needs")
    assert rows["fine"][0] == "sent"
    assert len([c for c in slack.calls_to("chat.postMessage") if c.params.get("channel") == "C0GONE"]) == 1
    assert slack.calls_to("chat.update") == []  # nothing reached Slack for the broken edit
    assert slack.calls_to("conversations.history") == []
    assert _dead(metrics, "permanent") == 2.0


def test_transient_errors_are_retried(store: MigratedStore, slack: SlackStandIn) -> None:
    slack.set_faults([SlackFault("chat.postMessage", error="ratelimited", retry_after=3, times=1),
                      SlackFault("chat.postMessage", status=503, times=1)])
    with store.factory.begin() as session:
        outbox.enqueue(session, "busy", "C0ALERTS", "chat.postMessage", _post("after a 429 and a 503"), now=T0)
    clock, metrics = Clock(), Metrics()
    poster = _poster(store, slack, clock, metrics)
    poster.run_once()
    assert _rows(store)["busy"] == ("failed", 1, "ratelimited")
    _drain(poster, clock)
    assert _rows(store)["busy"][:2] == ("sent", 3)
    # The 503 page may hide a post Slack made: the retry after it looked first, once.
    assert len(slack.calls_to("conversations.history")) == 1
    assert [m.text for m in slack.top_level("C0ALERTS")] == ["after a 429 and a 503"]
    assert _dead(metrics, "permanent") == _dead(metrics, "quarantined") == 0.0


def test_a_refused_connection_is_retried_not_dead(store: MigratedStore) -> None:
    sock = listening_socket()
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now: connections are refused
    with store.factory.begin() as session:
        outbox.enqueue(session, "down", "C0ALERTS", "chat.postMessage", _post("Slack is down"), now=T0)
    clock, metrics = Clock(), Metrics()
    client = WebClient(token="xoxb-test", base_url=f"http://127.0.0.1:{port}/api/", timeout=2)
    Poster(store.factory, client, metrics, worker_id="poster-test", clock=clock).run_once()
    with store.factory() as session:
        row = session.scalars(select(OutboxItem).where(OutboxItem.idempotency_key == "down")).one()
        # A refused connection never reached Slack: retried, and without a history lookup first (issue 31, point 4).
        assert (row.status, row.attempts, row.maybe_sent) == ("failed", 1, False)
        assert (row.last_error or "").startswith("URLError")


# --- the classifier, on the errors the stand-in answers as Slack does -----------------------------------------

def _error_of(slack: SlackStandIn, channel: str = "C0ALERTS") -> SlackApiError:
    client = WebClient(token=slack.token, base_url=slack.api_url, timeout=5)
    with pytest.raises(SlackApiError) as caught:
        client.chat_postMessage(channel=channel, text="x")
    return caught.value


def test_the_classifier_on_slack_answers(slack: SlackStandIn) -> None:
    gone = slack_failure(_error_of(slack, "C0GONE"))
    assert (gone.error, gone.permanent, gone.uncertain) == ("channel_not_found", True, False)
    slack.set_faults([SlackFault("chat.postMessage", error="ratelimited", retry_after=7, times=1)])
    limited = slack_failure(_error_of(slack))
    assert (limited.permanent, limited.retry_after) == (False, 7.0)
    slack.set_faults([SlackFault("chat.postMessage", status=503, times=1)])
    page = slack_failure(_error_of(slack))
    assert (page.error, page.permanent, page.uncertain) == ("http_503", False, True)
    for code, permanent in (("not_in_channel", True), ("is_archived", True), ("invalid_blocks", True),
                            ("msg_too_long", True), ("internal_error", False), ("some_new_error", False)):
        slack.set_faults([SlackFault("chat.postMessage", error=code, times=1)])
        failure = slack_failure(_error_of(slack))
        assert (failure.error, failure.permanent) == (code, permanent)
        assert failure.uncertain == (code == "internal_error")


def test_the_classifier_on_our_own_errors() -> None:
    assert exception_failure(ConnectionRefusedError()).permanent is False
    assert exception_failure(TimeoutError()).uncertain is True
    for err in (KeyError("filename"), TypeError("'NoneType' object is not iterable"), ValueError("no ts")):
        failure = exception_failure(err)
        assert failure.permanent and not failure.uncertain
    # slack_sdk says "Failed to upload a file (status: 503 ...)" with this class: not permanent.
    assert exception_failure(SlackRequestError("Failed to upload a file (status: 503)")).permanent is False
