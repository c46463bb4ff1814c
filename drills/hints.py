"""Graded hints: a direction first, then the evidence to look at, then the answer.

Each level gives away more and costs 5 points (drills/scoring.py); asking again after the answer repeats it.
"""

from __future__ import annotations

from collections.abc import Sequence

from drills.key import AnswerKey, separates, truth_report
from drills.recorded.evidence import IncidentEvidence
from drills.sources import BY_ID, LAYERS, label, source_of_kind

MAX_LEVEL = 3


def hint(level: int, key: AnswerKey, evidence: IncidentEvidence, revealed: Sequence[str]) -> str:
    """The text of hint `level` (1..3) for a trainee who has revealed `revealed`."""
    if level <= 1:
        return _direction(key, evidence)
    if level == 2:
        return _evidence(key, evidence, revealed)
    return _answer(key, evidence)


def _direction(key: AnswerKey, evidence: IncidentEvidence) -> str:
    book = next(p for p in evidence.playbooks if p.spec.id == key.truth.playbook)
    # The ideal path runs from the common sources to the deep ones; the deepest usually decides.
    layer = BY_ID[key.ideal_path[-1]].layer if key.ideal_path else "workload"
    return (f"Direction: this is a \"{book.spec.title}\" problem (the {book.spec.id} playbook). "
            f"The evidence that decides it sits in {LAYERS[layer]}.")


def _evidence(key: AnswerKey, evidence: IncidentEvidence, revealed: Sequence[str]) -> str:
    if separates(evidence, revealed):
        seen = [s for s in revealed if s in key.discriminating] or list(revealed)
        return ("Evidence: you already have enough to decide. Re-read "
                + ", ".join(label(s) for s in seen) + _facts_clause(key, evidence, seen) + ".")
    todo = [s for s in key.ideal_path if s not in revealed]
    if not todo:
        return "Evidence: re-read " + ", ".join(label(s) for s in key.ideal_path) + \
            _facts_clause(key, evidence, key.ideal_path) + "."
    first = todo[0]
    return (f"Evidence: ask for {label(first)} (on call: {BY_ID[first].how})"
            + _facts_clause(key, evidence, [first]) + ".")


def _facts_clause(key: AnswerKey, evidence: IncidentEvidence, sources: Sequence[str]) -> str:
    """Which facts in those sources the ground truth's verdict rests on (names only, not values)."""
    names = _truth_facts(key, evidence, sources)
    return f", and read what it says about {', '.join(names)}" if names else ""


def _truth_facts(key: AnswerKey, evidence: IncidentEvidence, sources: Sequence[str]) -> list[str]:
    report = truth_report(evidence, evidence.available_sources())
    kinds = {a.id: source_of_kind(a.kind) for a in evidence.incident.artifacts}
    names: list[str] = []
    for finding in report.findings:
        if finding.playbook != key.truth.playbook:
            continue
        for h in finding.hypotheses:
            if h.id == key.truth.id:
                names = [e.fact for e in h.evidence if kinds.get(e.artifact) in sources]
    return list(dict.fromkeys(names))


def _answer(key: AnswerKey, evidence: IncidentEvidence) -> str:
    report = truth_report(evidence, evidence.available_sources())
    claim = next((h.claim for f in report.findings if f.playbook == key.truth.playbook
                  for h in f.hypotheses if h.id == key.truth.id), "")
    return f"Answer: {key.truth_key}" + (f": {claim.rstrip('.')}" if claim else "") + "."
