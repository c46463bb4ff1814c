"""pytest fixtures for the store: a session-wide PostgreSQL, a fresh database per test, SQLite files, and `db_url`
parametrised over both backends. tests/conftest.py registers them once for every folder; a test module must not
import them itself (its copy of the session-scoped `postgres_server` would start a PostgreSQL of its own)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import Base
from tests.harness.postgres import PgServer, start_postgres

__all__ = ["MigratedStore", "db_url", "postgres_server", "postgres_store_engine", "postgres_url", "sqlite_url", "store"]

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgServer]:
    """One real PostgreSQL for the whole session (starting one costs ~1.5 s); skipped/failed if absent."""
    with start_postgres(tmp_path_factory.mktemp("postgres")) as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PgServer) -> Iterator[str]:
    """An empty database of its own for each test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = postgres_server.create_database(name)
    yield url
    postgres_server.drop_database(name)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'triagebot.sqlite'}"


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest) -> str:
    """An empty database, once on a SQLite file and once on PostgreSQL. PostgreSQL is only started when needed."""
    fixture = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    url: str = request.getfixturevalue(fixture)
    return url


@dataclass(frozen=True)
class MigratedStore:
    url: str
    engine: Engine
    factory: sessionmaker[Session]

    @property
    def backend(self) -> str:
        return self.engine.dialect.name


def report_led_by(lead: str | None) -> dict[str, Any]:
    """A stored report whose lead is `lead` ("playbook/hypothesis", likely), or that has none."""
    if lead is None:
        return {"findings": [], "lead": None}
    playbook, hypothesis = lead.split("/")
    return {"findings": [], "lead": {"playbook": playbook, "hypothesis": hypothesis, "status": "likely",
                                     "supporting": []}}


@pytest.fixture(scope="session")
def postgres_store_engine(postgres_server: PgServer) -> Iterator[Engine]:
    """The server's main database, migrated once per session; `store` empties it before each test."""
    engine = make_engine(postgres_server.url)
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MigratedStore]:
    """An empty store with the schema at head, an engine and a session factory, on both backends.

    PostgreSQL reuses one migrated database and empties it (TRUNCATE takes milliseconds, CREATE DATABASE plus
    migrations ~0.6 s); tests that need a truly empty database use `db_url` instead.
    """
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'triagebot.sqlite'}"
        engine = make_engine(url)
        migrate(engine)
        yield MigratedStore(url, engine, session_factory(engine))
        engine.dispose()
        return
    engine = request.getfixturevalue("postgres_store_engine")
    tables = ", ".join(t.name for t in Base.metadata.sorted_tables)
    with engine.begin() as connection:
        connection.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    yield MigratedStore(engine.url.render_as_string(hide_password=False), engine, session_factory(engine))
