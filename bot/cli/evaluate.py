"""`triagebot eval DIR`: accuracy over a folder of real-world cases."""

from __future__ import annotations

import argparse
from datetime import date
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


def _version() -> str:
    from bot import __version__

    return __version__
