"""`triagebot playbooks lint|list|show|schema`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from playbooks.layers import layer_problems
from playbooks.loader import PLAYBOOK_DIR, Problem, check_file, load_playbooks, playbook_files
from playbooks.model import Hypothesis, Playbook
from playbooks.precision import generic_problems, load_situations
from playbooks.query_files import query_problems


def _lint(paths: list[str]) -> int:
    files: list[Path] = []
    query_dirs: list[Path] = []  # the query files beside the playbooks (playbooks/queries/), checked as one catalog
    for name in paths or [str(PLAYBOOK_DIR)]:
        path = Path(name)
        if path.is_dir() and path.name == "queries":
            query_dirs.append(path)
        elif path.is_dir():
            files += playbook_files(path)
            query_dirs += [path / "queries"] if (path / "queries").is_dir() else []
        elif path.exists() and path.parent.name == "queries":
            query_dirs.append(path.parent)
        elif path.exists():
            files.append(path)
        else:
            sys.stderr.write(f"triagebot: error: no such file or folder: {name}\n")
            return 2
    problems: list[Problem] = []
    compiled = []
    for path in files:
        playbook, found = check_file(path)
        problems += found
        compiled += [playbook] if playbook is not None else []
    # Generic evidence is judged by the playbooks that compiled; one that did not has its errors above already.
    problems += generic_problems(compiled, load_situations())
    problems += layer_problems(compiled)  # every hypothesis in one layer of the narrowing question
    for folder in dict.fromkeys(query_dirs):
        problems += query_problems(folder)
    for problem in problems:
        sys.stdout.write(f"{problem}\n")
    errors = sum(1 for p in problems if p.severity == "error")
    sys.stdout.write(f"{len(files)} playbook(s), {errors} error(s)\n")
    return 1 if errors else 0


def _tree(h: Hypothesis, depth: int) -> list[str]:
    preds = ", ".join(k for k in ("confirm", "likely", "rule_out") if getattr(h, k))
    lines = [f"{'  ' * depth}- {h.id}: {h.claim}  [{preds}]"]
    for child in h.children:
        lines += _tree(child, depth + 1)
    return lines


def run(args: argparse.Namespace) -> int:
    if args.action == "lint":
        return _lint(args.paths)
    if args.action == "schema":
        sys.stdout.write(json.dumps(Playbook.model_json_schema(), indent=2) + "\n")
        return 0
    books = load_playbooks()
    if args.action == "list":
        for pb in books:
            ids = ", ".join(h.id for h, _ in pb.spec.walk())
            sys.stdout.write(f"{pb.spec.id:12} {pb.spec.title}\n{'':12} {ids}\n")
        return 0
    match = [pb for pb in books if pb.spec.id == args.id]
    if not match:
        sys.stderr.write(f"triagebot: error: no playbook {args.id!r}; known: "
                         f"{', '.join(pb.spec.id for pb in books)}\n")
        return 2
    spec = match[0].spec
    # The trigger derived from the hypotheses' discriminating facts (playbooks/loader.py derived_trigger).
    derived = [f"  or {' '.join(p.source.split())}" for p in match[0].derived]
    out = [f"{spec.id}: {spec.title}", spec.summary, f"trigger: {' '.join(spec.trigger.split())}", *derived,
           "hypotheses:"]
    for h in spec.hypotheses:
        out += _tree(h, 1)
    sys.stdout.write("\n".join(line for line in out if line) + "\n")
    return 0
