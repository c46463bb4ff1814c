"""A repeat notification that changed nothing (Alertmanager's repeat_interval, the other instance of an HA pair)
is answered with one statement on a real database, and nothing is redacted or written again. A notification that
changes its group is one INSERT in the request (the intake, bot/webhook/intake.py), and only its new alert is
redacted. On SQLite, whose intake is a file of its own, the repeat is a read of the main database and a change adds
the INSERT; on PostgreSQL the INSERT skips a repeat itself, so both are that one statement, run outside a
transaction block (no BEGIN and COMMIT round trips)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, event, func, select

import bot.webhook.redacted
from bot.store.models import Alert, AlertGroup
from tests.harness.bot_server import bearer, bot_in_thread, bot_values, settings_from
from tests.harness.webhooks import webhook_body
from tests.standins.slack_api import SlackStandIn

LABELS = {"alertname": "CheckoutDown", "namespace": "shop", "severity": "warning"}


@contextmanager
def webhook_statements(*engines: Engine | None, autocommit: list[bool] | None = None) -> Iterator[list[str]]:
    """The SQL statements the webhook's request threads run on these engines (not the poster's, not the
    ingester's, not the triage pool's), without the transaction control SQLite's BEGIN/PRAGMA events add; and in
    `autocommit`, for each, whether the driver ran it outside a transaction block (psycopg's `autocommit`)."""
    seen: list[str] = []
    watched = [e for e in engines if e is not None]

    def record(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if threading.current_thread().name.startswith("AnyIO worker thread") and \
                not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA", "COMMIT", "ROLLBACK")):
            seen.append(statement)
            if autocommit is not None:
                autocommit.append(bool(getattr(conn.connection.dbapi_connection, "autocommit", False)))

    for engine in watched:
        event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for engine in watched:
            event.remove(engine, "before_cursor_execute", record)


def test_an_unchanged_repeat_is_one_read(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    redacted: list[str] = []  # the fingerprint of every alert redacted
    real_redact = bot.webhook.redacted.redact_json

    def counted(value: Any) -> Any:
        if isinstance(value, dict) and "labels" in value:
            redacted.append(str(value.get("fingerprint")))
        return real_redact(value)

    monkeypatch.setattr(bot.webhook.redacted, "redact_json", counted)
    body = webhook_body(LABELS, starts=datetime.now(UTC), fingerprint="fp-checkout")
    with SlackStandIn(channels=("C0OPS",)) as slack:
        values = bot_values(slack_api_url=slack.api_url, database_url=db_url, triage_workers=0,
                            permissions={"channels": {"C0OPS": ["*"]}})
        with bot_in_thread(settings_from(values)) as running, running.client() as client:
            first = client.post("/alertmanager", json=body, headers=bearer())
            engines = (running.ctx.engine, running.ctx.intake.engine)
            outside: list[bool] = []
            with webhook_statements(*engines, autocommit=outside) as statements:
                # The HA twin differs only in its externalURL.
                again = client.post("/alertmanager", json={**body, "externalURL": "http://am-1:9093"},
                                    headers=bearer())
            repeat_statements = list(statements)
            changed = {**body, "alerts": [*body["alerts"], {**body["alerts"][0], "fingerprint": "fp-second",
                                                             "labels": {**LABELS, "pod": "checkout-1"}}]}
            with webhook_statements(*engines, autocommit=outside) as statements:
                grown = client.post("/alertmanager", json=changed, headers=bearer())
            changed_statements = list(statements)
            exposed = client.get("/metrics").text
            with running.ctx.engine.connect() as conn:
                rows = conn.scalar(select(func.count()).select_from(Alert))
                digest = conn.scalar(select(AlertGroup.state_hash))

    assert [first.status_code, again.status_code, grown.status_code] == [200, 200, 200]
    assert again.json() == {"status": "unchanged", "alerts": 1}
    kinds = [[s.lstrip().upper().split()[0] for s in statements] for statements in (repeat_statements,
                                                                                     changed_statements)]
    if db_url.startswith("postgresql"):
        # One INSERT that appends only when the digest differs from the group's, each outside a transaction block.
        assert kinds == [["INSERT"], ["INSERT"]] and outside == [True, True]
        assert "NOT (EXISTS" in repeat_statements[0].upper()
    else:
        # A read of the main database, then (a change) one INSERT into the intake file.
        assert kinds == [["SELECT"], ["SELECT", "INSERT"]]
    # The ingester applies the change after the answer.
    assert changed_statements[-1].lstrip().upper().startswith("INSERT INTO ALERT_INTAKE")
    assert redacted == ["fp-checkout", "fp-second"]  # each alert once: never the repeat, never an alert seen before
    assert rows == 1 + 2 and digest is not None and len(digest) == 64
    assert "triagebot_webhook_unchanged_total 1.0" in exposed


def test_a_body_without_its_own_times_is_never_taken_for_a_repeat(sqlite_url: str) -> None:
    """An alert without startsAt is dated by its arrival: each copy is newer, so each is applied."""
    body = webhook_body(LABELS, starts=datetime.now(UTC), fingerprint="fp-checkout")
    body["alerts"][0].pop("startsAt")
    with SlackStandIn(channels=("C0OPS",)) as slack:
        values = bot_values(slack_api_url=slack.api_url, database_url=sqlite_url, triage_workers=0,
                            permissions={"channels": {"C0OPS": ["*"]}})
        with bot_in_thread(settings_from(values)) as running, running.client() as client:
            answers = [client.post("/alertmanager", json=body, headers=bearer()).json() for _ in range(2)]
            with running.ctx.engine.connect() as conn:
                rows = conn.scalar(select(func.count()).select_from(Alert))
                digest = conn.scalar(select(AlertGroup.state_hash))
    assert [a["status"] for a in answers] == ["stored", "stored"]
    assert rows == 2 and digest is None
