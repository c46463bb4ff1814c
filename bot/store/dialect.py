"""The little SQL that differs between PostgreSQL and SQLite."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def dialect_name(session: Session) -> str:
    return session.get_bind().dialect.name


def insert_ignoring_conflicts(session: Session, entity: Any, unique_columns: list[str]) -> Any:
    """INSERT .. ON CONFLICT (cols) DO NOTHING, which both backends speak (SQLite since 3.24).

    Unlike catching IntegrityError, this never aborts the surrounding transaction, and on PostgreSQL a concurrent
    insert of the same key waits for the other transaction and then does nothing: the basis of idempotency here.
    """
    name = dialect_name(session)
    if name == "postgresql":
        return postgresql.insert(entity).on_conflict_do_nothing(index_elements=unique_columns)
    if name == "sqlite":
        return sqlite.insert(entity).on_conflict_do_nothing(index_elements=unique_columns)
    raise NotImplementedError(f"database {name!r} is not supported (use SQLite or PostgreSQL)")
