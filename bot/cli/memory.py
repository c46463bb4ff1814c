"""`triagebot postmortem INCIDENT` and `triagebot digest --since 7d`: incident memory read from the bot's database
(TRIAGEBOT_DATABASE_URL, read only: a SQLite file that does not exist is reported, never created)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from bot.cli.errors import UsageError

if TYPE_CHECKING:  # the command line imports the database layer only when a command needs it
    from sqlalchemy.orm import Session

T = TypeVar("T")


def add_memory_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    pm = sub.add_parser("postmortem", help="a postmortem draft (markdown) of a stored incident: timeline, "
                                           "evidence, verdict, the on-call's label, follow-ups")
    pm.add_argument("incident", metavar="INCIDENT", help="the incident's id or key (the App Home lists them)")
    dg = sub.add_parser("digest", help="the weekly digest: incidents by symptom and verdict, what keeps coming "
                                       "back, accuracy from feedback")
    dg.add_argument("--since", default="7d", help="how far back: hours, days or weeks (12h, 7d, 2w); default 7d")
    dg.add_argument("--channel", help="only the incidents posted in this Slack channel (its id)")


@contextmanager
def _database() -> Iterator[Session]:
    from sqlalchemy.exc import SQLAlchemyError

    from bot.config import ConfigError, load_settings
    from bot.store.db import make_engine, missing_sqlite_file, session_factory

    try:
        url = load_settings().database_url
        if (missing := missing_sqlite_file(url)) is not None:
            raise UsageError(f"no bot database at {missing}; set TRIAGEBOT_DATABASE_URL to the bot's")
        engine = make_engine(url)
    except ConfigError as err:
        raise UsageError(str(err)) from None
    try:
        with session_factory(engine).begin() as db:
            yield db
    except SQLAlchemyError as err:
        raise UsageError(f"cannot read the bot's database (TRIAGEBOT_DATABASE_URL): {str(err).splitlines()[0]}") \
            from None
    finally:
        engine.dispose()


def _read(work: Callable[[Session], T]) -> T:
    with _database() as db:
        return work(db)


def cmd_postmortem(args: argparse.Namespace) -> int:
    from bot.memory.history import NoIncident, find_incident, incident_rows
    from bot.memory.postmortem import build_postmortem
    from bot.render.memory.postmortem import postmortem_markdown

    def work(db: Session) -> str:
        try:
            incident = find_incident(db, args.incident)
        except NoIncident as err:
            raise UsageError(str(err)) from None
        return postmortem_markdown(build_postmortem(incident_rows(db, incident)))

    sys.stdout.write(_read(work))
    return 0


def cmd_digest(args: argparse.Namespace) -> int:
    from bot.cli.evaluate import EvalUsageError, parse_age
    from bot.memory.digest import build_digest
    from bot.memory.weekly import incidents_between, labels_between
    from bot.render.memory.digest import digest_text
    from bot.store.types import utcnow

    try:
        age = parse_age(args.since)
    except EvalUsageError as err:
        raise UsageError(str(err)) from None
    until = utcnow()
    since = until - age

    def work(db: Session) -> str:
        return digest_text(build_digest(incidents_between(db, since, until, args.channel),
                                        labels_between(db, since, until, args.channel), since, until))

    sys.stdout.write(_read(work))
    return 0
