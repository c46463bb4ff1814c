"""`--recall`: what a report printed on the command line shares with the incidents in the bot's database."""

from __future__ import annotations

from datetime import timedelta

from bot.cli.errors import OutputError
from bot.memory.recurrence import Recurrence
from playbooks.report import Report


def recall_for_report(report: Report) -> Recurrence:
    """Read only: a SQLite file that does not exist is reported, never created."""
    from sqlalchemy.exc import SQLAlchemyError

    from bot.config import ConfigError, load_settings
    from bot.memory.recent import recall_for
    from bot.store.db import make_engine, missing_sqlite_file, session_factory
    from bot.store.types import utcnow

    try:
        settings = load_settings()
        if (missing := missing_sqlite_file(settings.database_url)) is not None:
            raise OutputError(f"--recall: no bot database at {missing}; set TRIAGEBOT_DATABASE_URL to the bot's")
        engine = make_engine(settings.database_url)
        try:
            with session_factory(engine)() as db:
                return recall_for(db, incident_id=None, report=report.model_dump(mode="json"), at=utcnow(),
                                  window=timedelta(days=max(1, settings.recurrence_days)))
        finally:
            engine.dispose()
    except (ConfigError, SQLAlchemyError) as err:
        raise OutputError(f"--recall: cannot read the bot's database (TRIAGEBOT_DATABASE_URL): "
                          f"{str(err).splitlines()[0]}") from None
