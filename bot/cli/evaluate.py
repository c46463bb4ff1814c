"""`triagebot eval DIR`: accuracy over a folder of real-world cases."""

from __future__ import annotations

import argparse
from datetime import date
from importlib.metadata import PackageNotFoundError, version
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", metavar="DIR", help="a folder of cases (each a folder with case.yaml and evidence.txt)")
    parser.add_argument("--write", metavar="FILE", help="also write the accuracy table as markdown (docs/accuracy.md)")
    parser.add_argument("--quiet", action="store_true", help="only the table, not each failing case")
    parser.add_argument("--first-sight", metavar="BATCH",
                        help="score DIR as a new batch of unseen cases, once, and append it to the first-sight ledger")
    parser.add_argument("--collected-by", metavar="WHO", help="with --first-sight: who collected and labelled it")
    parser.add_argument("--ledger", metavar="FILE", default=str(LEDGER),
                        help=f"the first-sight ledger (default {LEDGER})")


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
    ledger = Path(args.ledger)
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
    try:
        return version("triagebot")
    except PackageNotFoundError:
        return "source"
