"""`triagebot eval DIR`: accuracy over a folder of real-world cases."""

from __future__ import annotations

import argparse
import re
from datetime import date, timedelta
from pathlib import Path

from bot.render.accuracy import accuracy_markdown, render_accuracy
from collectors.models import ArtifactKind
from collectors.paste import artifacts_from_text
from drills.first_sight import LEDGER, LedgerError, load_ledger, record, score_of
from drills.realworld import CaseResult, case_dirs, run_case
from playbooks.pipeline import analyse
from playbooks.report import Report


class EvalUsageError(Exception):
    """A mistake on the command line, reported in one line."""


def analyse_text(text: str, name: str, kind: ArtifactKind | None) -> Report:
    return analyse(artifacts_from_text(text, name, kind=kind))


def evaluate(root: Path) -> list[CaseResult]:
    return [run_case(folder, analyse_text) for folder in case_dirs(root)]


def run_eval(args: argparse.Namespace) -> int:
    if args.production:
        if args.root or args.first_sight or args.write:
            raise EvalUsageError("--production reads the bot's database: give no DIR, --first-sight or --write")
        return _production(args.since, args.export)
    if args.export:
        raise EvalUsageError("--export writes labelled incidents from the bot's database: use it with --production")
    if not args.root:
        raise EvalUsageError("usage: triagebot eval DIR [--write FILE] [--first-sight BATCH --collected-by WHO] "
                             "| triagebot eval --production [--since 30d] [--export DIR]")
    root = Path(args.root)
    if not root.is_dir():
        raise EvalUsageError(f"{root} is not a folder; expected a folder of cases such as tests/realworld")
    if args.first_sight and not args.collected_by:
        raise EvalUsageError("--first-sight needs --collected-by: who collected and labelled the batch")
    ledger = Path(args.ledger) if args.ledger else LEDGER
    try:
        earlier = load_ledger(ledger)
    except LedgerError as err:
        raise EvalUsageError(str(err)) from None
    if args.first_sight and any(b.id == args.first_sight for b in earlier):
        raise EvalUsageError(f"batch {args.first_sight} is already in {ledger}: a batch is scored once; "
                             "collect a new one")
    results = evaluate(root)
    if not results:
        raise EvalUsageError(f"no cases under {root}: a case is a folder with case.yaml and evidence.txt")
    render_accuracy(results, failures=not args.quiet)
    if args.first_sight:
        score = score_of(args.first_sight, results, args.collected_by, date.today().isoformat(), _version())
        try:
            record(score, ledger)
        except (LedgerError, OSError) as err:
            raise EvalUsageError(str(err)) from None
        earlier.append(score)
    if args.write:
        Path(args.write).write_text(accuracy_markdown(results, earlier), encoding="utf-8")
    return 0


_AGE = re.compile(r"(\d{1,4})([hdw])")
_UNIT = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def parse_age(text: str) -> timedelta:
    found = _AGE.fullmatch(text.strip())
    if found is None or int(found.group(1)) == 0:
        raise EvalUsageError(f"--since {text!r}: expected a number of hours, days or weeks, e.g. 12h, 30d, 2w")
    return int(found.group(1)) * _UNIT[found.group(2)]


def _production(since_text: str, export: str | None = None) -> int:
    from rich.console import Console
    from sqlalchemy.exc import SQLAlchemyError

    from bot.config import ConfigError, load_settings
    from bot.memory.export import candidate_cases, write_cases
    from bot.memory.labels import labels_since
    from bot.memory.production import accuracy
    from bot.render.memory.production import render_export, render_production
    from bot.store.db import make_engine, missing_sqlite_file, session_factory
    from bot.store.types import utcnow

    age = parse_age(since_text)
    try:
        url = load_settings().database_url
        if (missing := missing_sqlite_file(url)) is not None:
            raise EvalUsageError(f"no bot database at {missing}; set TRIAGEBOT_DATABASE_URL to the bot's")
        engine = make_engine(url)
        with session_factory(engine).begin() as db:
            if export is not None:
                cases, skipped = candidate_cases(db, utcnow() - age)
            else:
                result = accuracy(labels_since(db, utcnow() - age))
    except (ConfigError, SQLAlchemyError) as err:
        raise EvalUsageError(f"cannot read the bot's database (TRIAGEBOT_DATABASE_URL): "
                             f"{str(err).splitlines()[0]}") from None
    if export is not None:
        try:
            written = write_cases(cases, Path(export))
        except OSError as err:
            raise EvalUsageError(f"cannot write the cases under {export}: {err}") from None
        render_export(written, skipped, Path(export), since_text.strip(), Console())
        return 0
    render_production(result, since_text.strip(), Console())
    return 0


def _version() -> str:
    from bot import __version__

    return __version__
