"""The webhook's intake: a notification is appended, durably, in one INSERT, and answered; the ingester applies it.

The request does only what must precede the 200: authenticate, validate, redact, append (bot/webhook/endpoint.py).
Everything a notification does to the bot's state (grouping, ordering, storm roll-ups, roots, the triage job) is
`alert_flow.apply_alerts`, run here by one thread, row after row in arrival order, so no webhook waits behind a
triage's write, or behind another webhook's. Beside triage worker processes that thread runs in a process of its
own (bot/webhook/ingester_process.py), so the serving interpreter spends no time applying either.

Where rows live: on SQLite with a file, in a small database file of their own beside the main one
(`triagebot.intake.sqlite`), written only by the webhook, so the append never queues for the main database's
write lock; on PostgreSQL (and an in-memory SQLite) in the main database's `alert_intake` table, where an INSERT
waits for nothing.

Nothing answered 200 is lost, and nothing is applied twice: in the main database a row is deleted in the
transaction that applies it. A row in the separate file cannot share that transaction, so the transaction writes
the row's token to `alert_intake_done` instead, and the row is deleted after it commits; a process killed in
between finds the token at its next start and only deletes the row. A row whose application fails with a bug (not
an absent database) is set aside with the error, and the rows behind it flow.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, Text, cast, delete, exists, func, insert, literal, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from bot.store.db import make_engine, read_session, session_factory
from bot.store.models import AlertGroup, AlertIntake, AlertIntakeDone, Base
from bot.store.outage import database_away
from bot.store.types import utcnow

log = logging.getLogger("triagebot.alerts")

DONE_KEPT = timedelta(days=1)  # a done token only has to outlive the few seconds before its row is deleted
# Rows applied in one transaction of the main database: under load each transaction first waits its turn for the
# write lock (SQLite) or the CPU, so a batch keeps the ingester ahead of a storm.
BATCH = 20
RETRY_FIRST, RETRY_MAX = 0.2, 5.0  # seconds between attempts while the main database is away


def intake_path(database: Path) -> Path:
    """The separate intake file of a SQLite database file: triagebot.sqlite -> triagebot.intake.sqlite."""
    return database.with_name(f"{database.stem}.intake{database.suffix}")


@dataclass
class Row:
    """An intake row as stored; `body` is None when its text is not a JSON object (a truncated or edited row)."""

    id: int
    token: str
    received_at: datetime
    body: dict[str, Any] | None
    digest: str | None


@dataclass
class Intake:
    """Where the webhook appends: `factory` reads and writes the rows; `separate` when they are outside the main
    database; `engine` is what the webhook appends with, disposed with the intake when `owned`."""

    factory: sessionmaker[Session]
    separate: bool
    engine: Engine
    owned: bool = True

    def append(self, body: dict[str, Any], digest: str | None, received: datetime, text: str | None = None) -> bool:
        """One INSERT, committed before the webhook answers; False when it appended nothing because the body is a
        repeat (below). `text`: the body as JSON text, when the caller has it (bot/webhook/redacted.py).

        Where the intake shares the main database (PostgreSQL), the INSERT itself skips a repeat: it appends
        only if the group's last applied notification had another digest (bot/webhook/repeat.py), so a webhook
        is one statement whether it changed its group or not. On PostgreSQL that statement is the webhook's one
        round trip: it runs without BEGIN and COMMIT around it (a statement outside a transaction block commits
        as it ends, as durably as any commit: one WAL flush), and on a connection that is not pinged first
        (`_dead_connection_retried`). It reads `alert_groups` without locking anything, so it never waits for a
        row a triage or the ingester holds. A separate SQLite intake file cannot see the main database's groups:
        there the webhook reads first (`repeat.unchanged`), and SQLite's statements cost no round trip."""
        values = {"token": uuid.uuid4().hex, "received_at": received, "digest": digest,
                  "body": json.dumps(body, separators=(",", ":")) if text is None else text}
        group_key = body.get("groupKey")
        statement: Any = insert(AlertIntake).values(**values)
        if digest is not None and isinstance(group_key, str) and not self.separate:
            columns = AlertIntake.__table__.c
            row = select(*(literal(value, columns[name].type) for name, value in values.items()))
            statement = insert(AlertIntake).from_select(list(values), row.where(~exists().where(
                AlertGroup.group_key == group_key, AlertGroup.state_hash == digest)))
        statement = statement.returning(AlertIntake.id)
        if self.engine.dialect.name == "postgresql":
            return _dead_connection_retried(self.engine, statement)
        with self.factory.begin() as session:
            return session.execute(statement).first() is not None

    def pending(self) -> int:
        with read_session(self.factory) as session:
            return int(session.scalar(select(func.count()).select_from(AlertIntake)
                                      .where(AlertIntake.error.is_(None))) or 0)

    def close(self) -> None:
        if self.owned:
            self.engine.dispose()


def _dead_connection_retried(engine: Engine, statement: Any) -> bool:
    """Run the append outside a transaction block; a pooled connection found dead (the server restarted) is
    dropped with the pool's others and the statement sent once more on a new one. That is what the pool's ping
    would have done, without its round trip on every webhook. If the server went away after committing the first
    attempt, the row is appended twice: the ingester skips the copy as a repeat, as it does Alertmanager's own
    retries (bot/webhook/apply.py)."""
    for attempt in (1, 2):
        try:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                return connection.execute(statement).first() is not None
        except DBAPIError as err:
            if attempt == 2 or not err.connection_invalidated:
                raise
    raise AssertionError("unreachable")


def open_intake(engine: Engine, factory: sessionmaker[Session]) -> Intake:
    """The intake of the main database `engine` (already migrated: its `alert_intake` table exists)."""
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        separate = make_engine(f"sqlite:///{intake_path(Path(str(url.database)))}")
        # The file holds this one table, made from the same model as the main database's (migration 0010).
        Base.metadata.tables[AlertIntake.__tablename__].create(separate, checkfirst=True)
        return Intake(session_factory(separate), separate=True, engine=separate)
    if url.get_backend_name() == "postgresql":
        # The webhook's own pool, unpinged (above); the main engine keeps its ping for everything else.
        return Intake(factory, separate=False, engine=make_engine(url.render_as_string(hide_password=False),
                                                                   pool_pre_ping=False))
    return Intake(factory, separate=False, engine=engine, owned=False)


# What applying a notification means (alert_flow.apply_alerts with the bot's settings), and what follows its
# commit (starting the triage it queued, waking the poster). Both are given by bot.context.
Apply = Callable[[Session, dict[str, Any], datetime, str | None], list[Any]]
Applied = Callable[[list[Any]], None]
Failed = Callable[[BaseException], None]


class Ingester:
    """One thread applying the intake's rows in arrival order; `wake()` after an append."""

    def __init__(self, intake: Intake, factory: sessionmaker[Session], apply: Apply, applied: Applied,
                 failed: Failed, ok: Callable[[], None]) -> None:
        self.intake, self.factory = intake, factory
        self._apply, self._applied, self._failed, self._ok = apply, applied, failed, ok
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Ingester:
        self._wake.set()  # rows left by a previous process are applied first
        self._thread = threading.Thread(target=self._run, name="alert-ingester", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        self._idle.clear()
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(10)

    def settled(self, timeout: float = 30.0) -> bool:
        """Wait until every row appended before this call is applied (or set aside); for tests and shutdown."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._idle.wait(max(0.0, deadline - time.monotonic())) and not self._wake.is_set():
                return True
        return False

    def _run(self) -> None:
        pause = RETRY_FIRST
        while not self._stop.is_set():
            self._wake.wait(1.0)
            self._wake.clear()
            try:
                self.drain()
            except Exception as err:
                if database_away(err):
                    self._failed(err)
                else:
                    log.exception("the alert ingester failed; retrying")
                self._stop.wait(pause)
                pause = min(pause * 2, RETRY_MAX)
                self._wake.set()
                continue
            pause = RETRY_FIRST
            if not self._wake.is_set():
                self._idle.set()

    def drain(self) -> int:
        """Apply every pending row, oldest first; the number taken (applied or set aside). A database that is
        away raises, leaving the rows it was applying for the next attempt."""
        count = 0
        while not self._stop.is_set():
            taken = self._next_separate() if self.intake.separate else self._next_in_main()
            if not taken:
                return count
            count += len(taken)
            self._ok()
            for result in taken:
                self._applied(result)
        return count

    def _next_in_main(self) -> list[list[Any]]:
        """Lock, apply and delete the oldest pending rows, in one transaction; what each applied row returned."""
        with self.factory.begin() as session:
            rows = [_row(found) for found in
                    session.execute(_row_query().with_for_update(skip_locked=True, of=AlertIntake))]
            results, aside = self._apply_rows(session, rows, set())
            for row, err in aside:
                _set_aside(session, row, err)
            failed = {row.id for row, _ in aside}
            session.execute(delete(AlertIntake).where(AlertIntake.id.in_([r.id for r in rows if r.id not in failed])))
        return results

    def _next_separate(self) -> list[list[Any]]:
        with read_session(self.intake.factory) as reading:
            rows = [_row(found) for found in reading.execute(_row_query())]
        if not rows:
            return []
        with self.factory.begin() as session:
            done = set(session.scalars(select(AlertIntakeDone.token)
                                       .where(AlertIntakeDone.token.in_([r.token for r in rows]))))
            # `done`: applied by a process killed before it deleted their rows; taken without applying again.
            results, aside = self._apply_rows(session, rows, done)
            now = utcnow()
            failed = {row.id for row, _ in aside}
            session.add_all([AlertIntakeDone(token=row.token, applied_at=now) for row in rows
                             if row.id not in failed and row.token not in done])
            session.execute(delete(AlertIntakeDone).where(AlertIntakeDone.applied_at < now - DONE_KEPT))
        with self.intake.factory.begin() as session:
            for row, err in aside:
                _set_aside(session, row, err)
            session.execute(delete(AlertIntake).where(AlertIntake.id.in_([r.id for r in rows if r.id not in failed])))
        return results

    def _apply_rows(self, session: Session, rows: list[Row], done: set[str]
                    ) -> tuple[list[list[Any]], list[tuple[Row, BaseException]]]:
        """Apply `rows` in order in `session`, each in a savepoint so a row that fails with a bug is set aside
        without undoing the others; a database that is away raises and undoes them all."""
        results: list[list[Any]] = []
        aside: list[tuple[Row, BaseException]] = []
        for row in rows:
            if row.token in done:
                results.append([])
                continue
            try:
                with session.begin_nested():
                    results.append(self._apply_row(session, row))
            except Exception as err:
                if database_away(err):
                    raise
                aside.append((row, err))
                results.append([])
        return results, aside

    def _apply_row(self, session: Session, row: Row) -> list[Any]:
        if row.body is None:
            raise ValueError("the stored body is not a JSON object")
        return self._apply(session, row.body, row.received_at, row.digest)


def _row_query() -> Any:
    # The body as text: a row SQLite stored truncated must not fail the query that would set it aside.
    return (select(AlertIntake.id, AlertIntake.token, AlertIntake.received_at, AlertIntake.digest,
                   cast(AlertIntake.body, Text))
            .where(AlertIntake.error.is_(None)).order_by(AlertIntake.id).limit(BATCH))


def _row(found: Any) -> Row:
    try:
        body = json.loads(found[4])
    except (TypeError, ValueError):
        body = None
    return Row(id=found[0], token=found[1], received_at=found[2], digest=found[3],
               body=body if isinstance(body, dict) else None)


def _set_aside(session: Session, row: Row, err: BaseException) -> None:
    log.error("alert notification %s set aside: %s: %s", row.token, type(err).__name__, str(err)[:200],
              exc_info=err)
    session.execute(update(AlertIntake).where(AlertIntake.id == row.id)
                    .values(error=f"{type(err).__name__}: {str(err)[:500]}"))
