"""Persistence: SQLAlchemy 2 models, Alembic migrations, repository functions and the Slack outbox.

A SQLite file by default (see `db.default_sqlite_path`), PostgreSQL through a URL. Start-up is
`engine = make_engine(url); migrate(engine); Session = session_factory(engine)`.
"""

from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import Base

__all__ = ["Base", "make_engine", "migrate", "session_factory"]
