"""Engines, sessions and migrations: a SQLite file by default, PostgreSQL through a URL."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from bot.state import state_dir
from bot.store.sqlite_writer import WriterLock

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic (with Mako and Pygments, about a tenth of a second) is imported by the functions that migrate, not with the
# store: the repository's readers (the CLI's history commands, the bot's modules) load it only when a start migrates.

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000
READ_ONLY = "triagebot_read_only"  # execution option of read_session's connections
# Any constant will do; it only has to be the same in every replica so their migrations run one at a time.
_MIGRATION_LOCK_ID = 0x7472_6961_6765  # "triage"


def default_sqlite_path() -> Path:
    """triagebot.sqlite in the state directory ($TRIAGEBOT_STATE_DIR, else ~/.local/state/triagebot)."""
    return state_dir() / "triagebot.sqlite"


def normalize_url(url: str | None) -> str:
    """Fill in the default SQLite file, and pick psycopg 3 for bare postgres:// URLs (psycopg2 is not installed)."""
    if not url:
        return f"sqlite:///{default_sqlite_path()}"
    parsed = make_url(url)
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def make_engine(url: str | None = None, **kwargs: Any) -> Engine:
    """An engine for `url` (default: the SQLite state file), set up for several processes sharing one database."""
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, **kwargs)
        database = parsed.database or ""
        _configure_sqlite(engine, WriterLock(Path(database)) if database not in ("", ":memory:") else None)
        return engine
    # Aware datetimes come back in the session time zone; pin it to UTC so logs and psql agree with the bot.
    connect_args = {"options": "-c timezone=UTC", **kwargs.pop("connect_args", {})}
    # A pooled connection is pinged before use (one round trip) unless the caller handles a dead one itself.
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, connect_args=connect_args, **kwargs)


def missing_sqlite_file(url: str | None) -> str | None:
    """The SQLite file a URL names when it does not exist: a reader of the bot's history (the CLI) must say so
    instead of creating an empty database there."""
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:") \
            and not Path(parsed.database).is_file():
        return parsed.database
    return None


def _enable_wal(cursor: Any) -> None:
    """Switch to WAL (readers and the writer stop blocking each other), retrying while another process holds a lock.

    SQLite does not always call the busy handler for a journal-mode change, so a second process starting while
    the first migrates can get "database is locked" at once; the mode is persistent, so usually it is already set.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _configure_sqlite(engine: Engine, writer: WriterLock | None) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the sqlite3 module, which starts transactions late and never
        # for DDL; SQLAlchemy's "begin" event below emits BEGIN itself.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            # busy_timeout first, so the pragmas below wait for a lock held by another process (a migration).
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys=ON")
            _enable_wal(cursor)
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        read_only = bool(connection.get_execution_options().get(READ_ONLY))
        if connection.info.get(READ_ONLY, False) != read_only:  # pooled connections serve both kinds
            connection.exec_driver_sql(f"PRAGMA query_only={int(read_only)}")
            connection.info[READ_ONLY] = read_only
        if read_only:
            # A reader (read_session): WAL lets it read beside the writer, so it takes no write lock at all.
            connection.exec_driver_sql("BEGIN")
            return
        # IMMEDIATE takes the write lock up front (waiting up to busy_timeout). A deferred transaction that reads
        # and then writes fails at once with SQLITE_BUSY when another process wrote in between; the bot writes
        # in nearly every transaction, so serialising them is both simpler and safe (the outbox claim relies on it).
        if writer is not None:
            writer.acquire(connection.info)
        try:
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        except BaseException:
            if writer is not None:
                writer.release(connection.info)
            raise

    if writer is None:
        return

    # Released as the transaction ends: the events fire just before COMMIT/ROLLBACK, and a writer that gets in
    # during those few milliseconds meets SQLite's own busy handling, whose first waits are 1 and 2 ms.
    @event.listens_for(engine, "commit")
    def _on_commit(connection: Any) -> None:
        writer.release(connection.info)

    @event.listens_for(engine, "rollback")
    def _on_rollback(connection: Any) -> None:
        writer.release(connection.info)

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        writer.release(record.info)

    @event.listens_for(engine, "close")
    def _on_close(_dbapi_connection: Any, record: Any) -> None:
        writer.close(record.info)


def read_session(factory: sessionmaker[Session]) -> Session:
    """A session for reads only. On SQLite it neither waits for nor holds the write lock, and a write through it
    fails ("attempt to write a readonly database"); on PostgreSQL it is an ordinary session."""
    engine: Engine = factory.kw["bind"]
    return factory(bind=engine.execution_options(**{READ_ONLY: True}))


def session_factory(engine: Engine) -> sessionmaker[Session]:
    # expire_on_commit=False: objects returned by the repo functions stay readable after their transaction ends.
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(engine: Engine | None = None) -> Config:
    """The Alembic configuration of this package, without an alembic.ini (usable for `command.revision` too)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("path_separator", "os")
    if engine is not None:
        config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision`. Safe to call from every replica at start-up, at the same time."""
    from alembic import command

    config = alembic_config()
    with engine.connect() as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            # Held until commit; a second replica waits here and then finds the schema already at head.
            connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _MIGRATION_LOCK_ID})
        # On SQLite the BEGIN IMMEDIATE above already serialises migrations.
        config.attributes["connection"] = connection
        config.attributes["upgrade_only"] = True
        command.upgrade(config, revision)


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
