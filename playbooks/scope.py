"""How far does the failure reach? The layer-narrowing questions, answered from the facts.

Seed 000:126-131 asks on-call to narrow an incident before chasing a cause: is it specific to some requests,
some pods, one node, one pool, or global? The questions and the facts that answer them are data
(playbooks/data/scope.yaml); this module only evaluates them, with the same CEL rules as the playbooks: a predicate
over absent facts answers nothing, so missing evidence leaves a question `unknown`, never `no`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from collectors.factset import FactSet
from collectors.yaml_safe import load_file
from playbooks.cel_expr import Predicate, activation, compile_predicate
from playbooks.report import Level, Scope, ScopeAnswer

SCOPE_FILE = Path(__file__).resolve().parent / "data" / "scope.yaml"  # beside the playbooks, not one of them
ORDER: tuple[Level, ...] = ("request", "pod", "node", "pool", "cluster")
# Facts a question counts with but never quotes: every pod name would drown the answer.
_NOT_QUOTED = frozenset({"pods.names"})


@dataclass(frozen=True)
class Question:
    level: Level
    text: str
    yes: Predicate
    no: Predicate
    cite: tuple[str, ...]
    source: tuple[str, ...]


def load_questions(path: Path = SCOPE_FILE) -> list[Question]:
    """The questions, narrowest layer first; raises ValueError on a malformed file (a packaging error)."""
    data = load_file(path)
    levels = data.get("levels") if isinstance(data, dict) else None
    if not isinstance(levels, list):
        raise ValueError(f"{path}: expected a mapping with a `levels` list")
    out: list[Question] = []
    for entry in levels:
        level = entry.get("level")
        if level not in ORDER:
            raise ValueError(f"{path}: unknown level {level!r}")
        out.append(Question(level=level, text=str(entry["question"]), yes=compile_predicate(str(entry["yes_if"])),
                            no=compile_predicate(str(entry["no_if"])), cite=tuple(entry.get("cite", [])),
                            source=tuple(entry.get("source", []))))
    if [q.level for q in out] != list(ORDER):
        raise ValueError(f"{path}: levels must be {', '.join(ORDER)}, in that order")
    return out


@cache
def questions() -> list[Question]:
    """The bundled questions, compiled once per process."""
    return load_questions()


def narrow(facts: FactSet, context: Any = None) -> Scope:
    """Answer every question; the scope is the narrowest layer answered yes."""
    context = context if context is not None else activation(facts.cel_context())
    answers: list[ScopeAnswer] = []
    for q in questions():
        verdict = q.yes.evaluate(context)
        answer = "yes" if verdict is True else "no" if q.no.evaluate(context) is True else "unknown"
        deciding = q.yes if answer == "yes" else q.no if answer == "no" else None
        # A yes cites what decided it and the level's other evidence; a no only what its own predicate read.
        names = list(deciding.facts) if deciding else []
        names += [n for n in q.cite if n not in names] if answer == "yes" else []
        because = [merged.cite() for n in names
                   if n not in _NOT_QUOTED and (merged := facts.get(n)) is not None and merged.value not in ([], "")]
        needs = sorted({n for p in (q.yes, q.no) for n in p.facts if n not in facts}) if answer == "unknown" else []
        answers.append(ScopeAnswer(level=q.level, question=q.text, answer=answer, because=because, needs=needs))
    level = next((a.level for a in answers if a.answer == "yes"), None)
    return Scope(level=level, answers=answers)
