"""`playbooks lint` for the query files (playbooks/queries/<id>.yaml): each problem the catalog's checks find
(collectors/catalogs/queries.py), at its file and line; plus the files that name no playbook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from collectors.catalogs.queries import QUERY_DIR, query_files, read_catalog
from collectors.yaml_safe import yaml_error
from playbooks.model import SYMPTOMS
from playbooks.problems import Problem
from playbooks.yaml_lines import LineMap, load_with_lines


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def query_problems(directory: Path = QUERY_DIR) -> list[Problem]:
    """Every problem of the query files in a folder, as file:line."""
    problems: list[Problem] = []
    loaded: list[tuple[str, Any]] = []
    lines: dict[str, tuple[str, LineMap]] = {}
    for path in query_files(directory):
        shown = _shown(path)
        try:
            data, where = load_with_lines(path.read_text(encoding="utf-8"))
        except yaml_error() as err:
            mark = getattr(err, "problem_mark", None)
            problems.append(Problem(shown, mark.line + 1 if mark else 1, f"not YAML: {err}"))
            continue
        if path.stem not in SYMPTOMS:
            problems.append(Problem(shown, 1, f"{path.name} names no playbook; expected one of {', '.join(SYMPTOMS)}"))
        loaded.append((path.name, data))
        lines[path.name] = (shown, where)
    _, found = read_catalog(loaded)
    for p in found:
        shown, where = lines[p.file]
        problems.append(Problem(shown, where.line(p.path), p.message))
    return problems
