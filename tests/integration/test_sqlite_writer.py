"""SQLite's writers take turns on a file lock (bot/store/sqlite_writer.py), readers take no lock at all, and a
writer killed with -9 lets the next one in. Real SQLite files and real processes; every wait is bounded."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from bot.store import repo
from bot.store.db import make_engine, migrate, read_session, session_factory
from bot.store.models import AuditEntry

WAIT = 20.0  # seconds; only a broken lock ever waits this long

HOLDER = """
import sys, time
from sqlalchemy import select, text
from bot.store.db import make_engine
engine = make_engine(sys.argv[1])
with engine.begin() as connection:
    connection.execute(text("INSERT INTO audit_log (at, actor, action, outcome, detail) "
                            "VALUES ('2030-01-01 00:00:00', 'holder', 'hold', 'ok', '{}')"))
    print("holding", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'state.sqlite'}"
    migrate(make_engine(url))
    return url


def _audit(factory: sessionmaker[Session], actor: str) -> None:
    with factory.begin() as session:
        repo.audit(session, actor=actor, action="test")


def _actors(url: str) -> list[str]:
    with session_factory(make_engine(url))() as session:
        return [row.actor for row in session.scalars(select(AuditEntry).order_by(AuditEntry.id))]


def test_a_second_writer_waits_for_the_first_to_commit(db: str) -> None:
    factory = session_factory(make_engine(db))
    holding, release = threading.Event(), threading.Event()
    second_done = threading.Event()

    def first() -> None:
        with factory.begin() as session:
            repo.audit(session, actor="first", action="test")
            holding.set()
            release.wait(WAIT)

    def second() -> None:
        _audit(factory, "second")
        second_done.set()

    one = threading.Thread(target=first)
    one.start()
    assert holding.wait(WAIT)
    two = threading.Thread(target=second)
    two.start()
    # The second writer is still queued while the first holds its transaction open.
    assert not second_done.wait(0.5)
    release.set()
    assert second_done.wait(WAIT)
    one.join(WAIT)
    two.join(WAIT)
    assert _actors(db) == ["first", "second"]


def test_a_reader_neither_waits_for_a_writer_nor_may_write(db: str) -> None:
    factory = session_factory(make_engine(db))
    _audit(factory, "before")
    holding, release = threading.Event(), threading.Event()

    def writer() -> None:
        with factory.begin() as session:
            repo.audit(session, actor="during", action="test")
            holding.set()
            release.wait(WAIT)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert holding.wait(WAIT)
        with read_session(factory) as session:
            # The writer has not committed: the reader sees the committed state, at once.
            assert [row.actor for row in session.scalars(select(AuditEntry))] == ["before"]
            assert not release.is_set()
            with pytest.raises(OperationalError, match="readonly"):
                session.execute(text("DELETE FROM audit_log"))
    finally:
        release.set()
        thread.join(WAIT)
    # The same pooled connection writes again once it is handed to a writer.
    _audit(factory, "after")
    assert _actors(db) == ["before", "during", "after"]


def test_a_writer_killed_with_minus_nine_lets_the_next_one_in(db: str) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, db], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        done = threading.Event()
        factory = session_factory(make_engine(db))
        thread = threading.Thread(target=lambda: (_audit(factory, "next"), done.set()))
        thread.start()
        assert not done.wait(0.5)  # queued behind the live holder
        holder.kill()
        holder.wait(WAIT)
        assert done.wait(WAIT)
        thread.join(WAIT)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(WAIT)
    assert _actors(db) == ["next"]  # the killed holder's insert was never committed


BACKGROUND = """
import sys
from bot.store import repo
from bot.store.db import make_engine, session_factory
from bot.store.sqlite_writer import yield_writes
yield_writes()
factory = session_factory(make_engine(sys.argv[1]))
print("ready", flush=True)
with factory.begin() as session:
    repo.audit(session, actor="background", action="test")
print("written", flush=True)
"""


def test_background_writers_queue_at_the_gate_and_serving_writers_pass_it(db: str, tmp_path: Path) -> None:
    # Holding the gate stands for a background writer already waiting for the write lock.
    gate = os.open(tmp_path / "state.sqlite.writer-gate", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(gate, fcntl.LOCK_EX)
    background = subprocess.Popen([sys.executable, "-c", BACKGROUND, db], stdout=subprocess.PIPE, text=True)
    try:
        assert background.stdout is not None and background.stdout.readline().strip() == "ready"
        factory = session_factory(make_engine(db))
        _audit(factory, "serving")  # not behind the gate: it returns while the gate is held
        with pytest.raises(subprocess.TimeoutExpired):
            background.wait(1.0)  # the background writer is still at the gate
        fcntl.flock(gate, fcntl.LOCK_UN)
        assert background.stdout.readline().strip() == "written"
        assert background.wait(WAIT) == 0
    finally:
        os.close(gate)
        if background.poll() is None:
            background.kill()
            background.wait(WAIT)
    assert _actors(db) == ["serving", "background"]
