"""`triagebot eval DIR`: accuracy over a folder of real-world cases."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.render.accuracy import accuracy_markdown, render_accuracy
from collectors.models import ArtifactKind
from collectors.paste import artifacts_from_text
from drills.realworld import CaseResult, case_dirs, run_case
from playbooks.pipeline import analyse
from playbooks.report import Report


class EvalUsageError(Exception):
    """A mistake on the command line, reported in one line."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", metavar="DIR", help="a folder of cases (each a folder with case.yaml and evidence.txt)")
    parser.add_argument("--write", metavar="FILE", help="also write the accuracy table as markdown (docs/accuracy.md)")
    parser.add_argument("--quiet", action="store_true", help="only the table, not each failing case")


def analyse_text(text: str, name: str, kind: ArtifactKind | None) -> Report:
    return analyse(artifacts_from_text(text, name, kind=kind))


def evaluate(root: Path) -> list[CaseResult]:
    return [run_case(folder, analyse_text) for folder in case_dirs(root)]


def run_eval(args: argparse.Namespace) -> int:
    root = Path(args.root)
    if not root.is_dir():
        raise EvalUsageError(f"{root} is not a folder; expected a folder of cases such as tests/realworld")
    results = evaluate(root)
    if not results:
        raise EvalUsageError(f"no cases under {root}: a case is a folder with case.yaml and evidence.txt")
    render_accuracy(results, failures=not args.quiet)
    if args.write:
        Path(args.write).write_text(accuracy_markdown(results), encoding="utf-8")
    return 0
