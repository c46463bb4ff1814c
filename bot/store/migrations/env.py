"""Alembic environment of bot.store, driven by bot.store.db.migrate() (there is no alembic.ini)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, MetaData

from bot.store.drill_sessions import metadata as sessions_metadata
from bot.store.models import Base


def _target_metadata() -> list[MetaData]:
    """Every schema the revisions must create: the bot's tables and the drill and interview sessions."""
    return [Base.metadata, sessions_metadata]


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=_target_metadata(),
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER most things in place
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    # Called from the alembic API without a connection (e.g. `command.revision(..., autogenerate=True)`).
    from bot.store.db import make_engine

    engine = make_engine(context.config.get_main_option("sqlalchemy.url"))
    with engine.connect() as connection:
        _run(connection)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("bot.store migrations run online only: call bot.store.db.migrate(engine)")
_run_online()
