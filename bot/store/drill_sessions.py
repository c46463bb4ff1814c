"""Drill and interview sessions in a SQL database through SQLAlchemy 2: SQLite for the terminal, PostgreSQL for the
bot.

One row per session: the whole session as a JSON payload (the source of truth, so the session model can grow
without a migration), plus the columns the queries filter and sort on. The schema lives in the module-level
`metadata`; bot/store/migrations creates it (0002, 0003), and `create_all` makes it for a terminal's own file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Engine,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from bot.store.db import make_engine
from drills.session import DrillSession
from drills.store import LeaderboardRow, leaderboard_rows

# Named constraints and indexes (the convention bot/store uses), so a later Alembic migration can alter them,
# SQLite batch mode included.
metadata = MetaData(naming_convention={
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
})


def _session_table(name: str, subject: Column[str], person: Column[str]) -> Table:
    """A sessions table: the id, what it is about, who, and the columns both kinds filter and sort on."""
    return Table(
        name,
        metadata,
        Column("id", String(64), primary_key=True),
        subject,
        person,
        Column("channel", String(200), nullable=False),
        Column("finished", Boolean, nullable=False, default=False),
        Column("score", Integer, nullable=True),
        Column("started_at", DateTime(timezone=True), nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
        Column("payload", JSON, nullable=False),
    )


drill_sessions = _session_table("drill_sessions", Column("incident_id", String(200), nullable=False, index=True),
                                Column("trainee", String(200), nullable=False, index=True))
# The leaderboard reads the finished sessions of one channel.
Index("ix_drill_sessions_channel_finished", drill_sessions.c.channel, drill_sessions.c.finished)

# Interviews in Slack: one row per interview, the record as a JSON payload (bot/store/interviews.py).
interview_sessions = _session_table("interview_sessions", Column("question_id", String(200), nullable=False),
                                    Column("user_id", String(200), nullable=False, index=True))
# Open interviews of a channel, most recent first.
Index("ix_interview_sessions_channel_finished", interview_sessions.c.channel, interview_sessions.c.finished)


class SqlSessionStore:
    """A SessionStore over any SQLAlchemy URL; `from_path` opens (and creates) a SQLite file."""

    def __init__(self, url_or_engine: str | Engine) -> None:
        self.engine = make_engine(url_or_engine) if isinstance(url_or_engine, str) else url_or_engine
        # In one transaction: on SQLite make_engine's BEGIN IMMEDIATE serialises it, so two commands opening a new
        # file at once (`triagebot drill list` beside `triagebot drill NAME`) do not both try to create the tables
        # ("table ... already exists"); the second finds them made.
        with self.engine.begin() as connection:
            metadata.create_all(connection)

    @classmethod
    def from_path(cls, path: Path) -> SqlSessionStore:
        path.parent.mkdir(parents=True, exist_ok=True)
        return cls(f"sqlite:///{path}")

    def save(self, session: DrillSession) -> None:
        row = _row(session)
        with self.engine.begin() as conn:
            if conn.execute(update(drill_sessions).where(drill_sessions.c.id == session.id).values(row)).rowcount:
                return
            try:
                with conn.begin_nested():
                    conn.execute(insert(drill_sessions).values(id=session.id, **row))
            except IntegrityError:
                # Another writer inserted the same id between our update and insert: the last write wins.
                conn.execute(update(drill_sessions).where(drill_sessions.c.id == session.id).values(row))

    def load(self, session_id: str) -> DrillSession | None:
        payload = payload_of(self.engine, drill_sessions, session_id)
        return DrillSession.model_validate(payload) if payload is not None else None

    def list_by_trainee(self, trainee: str, limit: int = 50) -> list[DrillSession]:
        query = (select(drill_sessions.c.payload).where(drill_sessions.c.trainee == trainee)
                 .order_by(drill_sessions.c.started_at.desc(), drill_sessions.c.id.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [DrillSession.model_validate(p) for p in conn.execute(query).scalars()]

    def leaderboard(self, channel: str, limit: int = 10) -> list[LeaderboardRow]:
        query = select(drill_sessions.c.payload).where(drill_sessions.c.channel == channel,
                                                       drill_sessions.c.finished.is_(True))
        with self.engine.connect() as conn:
            sessions = [DrillSession.model_validate(p) for p in conn.execute(query).scalars()]
        return leaderboard_rows(sessions, limit)

    def close(self) -> None:
        self.engine.dispose()


def payload_of(engine: Engine, table: Table, row_id: str) -> Any:
    """The stored payload of one row, or None when there is no such row."""
    with engine.connect() as conn:
        return conn.execute(select(table.c.payload).where(table.c.id == row_id)).scalar_one_or_none()


def _row(session: DrillSession) -> dict[str, Any]:
    return {
        "incident_id": session.incident_id,
        "trainee": session.trainee,
        "channel": session.channel,
        "finished": session.finished,
        "score": session.score.total if session.score else None,
        # SQLite keeps no time zone, so the sort columns are UTC; the payload keeps the original values.
        "started_at": utc(session.started_at),
        "updated_at": utc(session.updated_at),
        "payload": session.model_dump(mode="json"),
    }


def utc(value: datetime) -> datetime:
    """UTC, as the sort columns keep it (SQLite keeps no time zone)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
