"""A repeat notification that changed nothing (Alertmanager's repeat_interval, the other instance of an HA pair)
is answered with one statement on a real database, and nothing is redacted or written again. A notification that
changes its group is one INSERT in the request (the intake, bot/webhook/intake.py), and only its new alert is
redacted. On SQLite, whose intake is a file of its own, the repeat is a read of the main database and a change adds
the INSERT; on PostgreSQL the INSERT skips a repeat itself, so both are that one statement, run outside a
transaction block (no BEGIN and COMMIT round trips)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, event, func, select, update

import bot.webhook.redacted
from bot.store.db import make_engine
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


@dataclass
class Traffic:
    """What the webhook's request threads asked of a database: statements, pool pings, transaction blocks and the
    commits among them. A statement run outside a transaction block commits by itself when it writes."""

    statements: list[str] = field(default_factory=list)
    pings: int = 0
    blocks: int = 0  # BEGIN ... COMMIT/ROLLBACK, each two round trips more on PostgreSQL
    commits: int = 0

    def round_trips(self) -> int:
        """To a PostgreSQL server: each statement, each ping, and a transaction block's BEGIN and its end."""
        return len(self.statements) + self.pings + 2 * self.blocks


WRITES = ("INSERT", "UPDATE", "DELETE")


@contextmanager
def traffic(*engines: Engine | None) -> Iterator[Traffic]:
    seen = Traffic()
    watched = list(dict.fromkeys(e for e in engines if e is not None))

    def on_request_thread() -> bool:
        return threading.current_thread().name.startswith("AnyIO worker thread")

    def autocommit(conn: Any) -> bool:
        return bool(getattr(conn.connection.dbapi_connection, "autocommit", False))

    def executed(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not on_request_thread():
            return
        verb = statement.lstrip().upper().split()[0]
        if verb in ("BEGIN", "PRAGMA", "COMMIT", "ROLLBACK"):  # SQLite's transaction control (db.py's events)
            return
        seen.statements.append(statement)
        if autocommit(conn) and verb in WRITES:
            seen.commits += 1

    def began(conn: Any) -> None:
        if on_request_thread() and not autocommit(conn):
            seen.blocks += 1

    def committed(conn: Any) -> None:
        if on_request_thread() and not autocommit(conn):
            seen.commits += 1

    pings: list[Any] = []
    for engine in watched:
        event.listen(engine, "before_cursor_execute", executed)
        event.listen(engine, "begin", began)
        event.listen(engine, "commit", committed)
        real_ping = engine.dialect.do_ping

        def counted_ping(dbapi_connection: Any, real: Any = real_ping) -> bool:
            if on_request_thread():
                seen.pings += 1
            return bool(real(dbapi_connection))

        engine.dialect.do_ping = counted_ping  # type: ignore[method-assign]
        pings.append(real_ping)
    try:
        yield seen
    finally:
        for engine, real_ping in zip(watched, pings, strict=True):
            event.remove(engine, "before_cursor_execute", executed)
            event.remove(engine, "begin", began)
            event.remove(engine, "commit", committed)
            engine.dialect.do_ping = real_ping  # type: ignore[method-assign]


def grown(body: dict[str, Any], n: int) -> dict[str, Any]:
    """The group's next notification: one alert more, as Alertmanager sends a group that gains one."""
    alert = {**body["alerts"][0], "fingerprint": f"fp-{n}", "labels": {**LABELS, "pod": f"checkout-{n}"}}
    return {**body, "alerts": [*body["alerts"], alert]}


def test_a_changing_webhook_is_one_commit_and_waits_for_no_row_a_writer_holds(db_url: str) -> None:
    """A webhook that changes its group is stored durably by exactly one commit (on PostgreSQL one statement, one
    round trip: every commit there is a WAL flush, every round trip a wake-up of the server and of the request's
    thread), and it is answered while another transaction holds the group's row, as a triage or the ingester
    does, uncommitted. More statements, commits or round trips fail this test."""
    body = webhook_body(LABELS, starts=datetime.now(UTC), fingerprint="fp-checkout")
    postgres = db_url.startswith("postgresql")
    with SlackStandIn(channels=("C0OPS",)) as slack:
        values = bot_values(slack_api_url=slack.api_url, database_url=db_url, triage_workers=0,
                            permissions={"channels": {"C0OPS": ["*"]}})
        with bot_in_thread(settings_from(values)) as running, running.client() as client:
            assert client.post("/alertmanager", json=body, headers=bearer()).status_code == 200
            engines = (running.ctx.engine, running.ctx.intake.engine)
            client.post("/alertmanager", json=body, headers=bearer())  # a repeat: every pool has a connection
            body = grown(body, 1)
            with traffic(*engines) as changing:
                answer = client.post("/alertmanager", json=body, headers=bearer())
            assert answer.json() == {"status": "stored", "alerts": 2}

            # A writer holding the group's row (and, on SQLite, the main database's write lock) until the
            # webhook has answered: a webhook that waited for it would time out here.
            holder = make_engine(db_url)
            try:
                with holder.begin() as held:
                    held.execute(update(AlertGroup).where(AlertGroup.group_key == body["groupKey"])
                                 .values(state_hash=None if postgres else AlertGroup.state_hash))
                    began = time.monotonic()
                    # A plain client: the test client's own wait for the ingester would wait for the writer.
                    blocked = httpx.post(running.url + "/alertmanager", json=grown(body, 2), headers=bearer(),
                                         timeout=10.0)
                    answered_in = time.monotonic() - began
            finally:
                holder.dispose()
            assert running.ctx.ingester.settled()
            with running.ctx.engine.connect() as conn:
                stored = conn.scalar(select(func.count()).select_from(Alert))

    assert blocked.status_code == 200 and blocked.json()["status"] == "stored"
    assert answered_in < 5.0, f"the webhook waited {answered_in:.1f} s for the writer's lock"
    assert stored == 1 + 2 + 3  # every notification's alerts, the held one's applied once the writer let go
    assert changing.commits == 1
    if postgres:
        # INSERT ... SELECT ... WHERE NOT EXISTS, outside a transaction block, on a connection not pinged first.
        assert [s.lstrip().split()[0].upper() for s in changing.statements] == ["INSERT"]
        assert (changing.pings, changing.blocks, changing.round_trips()) == (0, 0, 1)
    else:
        # A read of the main database (is it a repeat?), then the append in the intake file's one transaction.
        assert [s.lstrip().split()[0].upper() for s in changing.statements] == ["SELECT", "INSERT"]
        assert changing.blocks == 2  # the read's and the append's; SQLite's cost no round trip
