"""The grader on the tuning half of issue 26's answer set (tuning_half_a.yaml, see README.md): per-kind targets.

The answers were written without sight of the grader; graded the way `triagebot interview grade` grades: by the
rules and by meaning (the embedding model of the session fixture in tests/harness/meaning.py, vectors cached).
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean
from typing import Any

import pytest
import yaml

from bot.cli.interview_grade import grade_answer
from drills.grading import Grade, grade
from drills.questions import load_bank

HERE = Path(__file__).parent
KINDS = ("expert", "partial", "vague", "stuffed", "wrong")
BANK = load_bank()
ENTRIES: list[dict[str, Any]] = yaml.safe_load((HERE / "tuning_half_a.yaml").read_text(encoding="utf-8"))["answers"]


@pytest.fixture(scope="module")
def grades() -> dict[str, list[Grade]]:
    out: dict[str, list[Grade]] = {k: [] for k in KINDS}
    for e in ENTRIES:
        out[e["kind"]].append(grade_answer(BANK, e["question"], e["answer"]))
    return out


def test_the_half_is_whole() -> None:
    questions = {e["question"] for e in ENTRIES}
    assert len(questions) == 32 and all(BANK.get(q) is not None for q in questions)
    assert sorted((e["question"], e["kind"]) for e in ENTRIES) == sorted((q, k) for q in questions for k in KINDS)


def test_per_kind_targets(grades: dict[str, list[Grade]]) -> None:
    _meets_targets({k: mean(g.score for g in gs) for k, gs in grades.items()})


def test_the_spent_held_back_half_still_meets_the_targets() -> None:
    """The held-back half, scored once by the lead (docs/interview.md) and kept so no change quietly undoes it;
    the next grader change is measured on a new held-back set."""
    entries = yaml.safe_load((HERE / "heldback_half_b.yaml").read_text(encoding="utf-8"))["answers"]
    assert len({e["question"] for e in entries} | {e["question"] for e in ENTRIES}) == 64  # no question shared
    scores: dict[str, list[int]] = {k: [] for k in KINDS}
    for e in entries:
        scores[e["kind"]].append(grade_answer(BANK, e["question"], e["answer"]).score)
    _meets_targets({k: mean(v) for k, v in scores.items()})


def test_the_spent_set_e_still_meets_the_targets() -> None:
    """Set E (new blind answers to the held-back questions), scored once by the lead after round 3 of the grader
    (docs/interview.md) and kept as a regression; it is no longer a measure."""
    entries = yaml.safe_load((HERE / "spent_set_e.yaml").read_text(encoding="utf-8"))["answers"]
    half_b = yaml.safe_load((HERE / "heldback_half_b.yaml").read_text(encoding="utf-8"))["answers"]
    held_back = {e["question"] for e in half_b}
    assert {e["question"] for e in entries} == held_back and len(entries) == 5 * len(held_back)
    scores: dict[str, list[int]] = {k: [] for k in KINDS}
    for e in entries:
        scores[e["kind"]].append(grade_answer(BANK, e["question"], e["answer"]).score)
    _meets_targets({k: mean(v) for k, v in scores.items()})


def _meets_targets(means: dict[str, float]) -> None:
    assert means["expert"] >= 70, means
    assert 25 <= means["partial"] <= 75, means
    assert max(means["vague"], means["stuffed"], means["wrong"]) <= 30, means
    assert means["expert"] - max(means["vague"], means["stuffed"], means["wrong"]) >= 50, means


def test_a_list_of_terms_earns_nothing_and_says_why(grades: dict[str, list[Grade]]) -> None:
    stuffed = grades["stuffed"]
    assert all(g.score <= 30 for g in stuffed), [g.score for g in stuffed]
    assert sum(1 for g in stuffed if any("list of terms" in n for n in g.notes)) >= len(stuffed) * 3 // 4


def test_credited_evidence_is_a_clause_not_the_answer(grades: dict[str, list[Grade]]) -> None:
    answers = {(e["question"], e["kind"]): e["answer"] for e in ENTRIES}
    experts = [e for e in ENTRIES if e["kind"] == "expert"]
    for entry, g in zip(experts, grades["expert"], strict=True):
        answer = " ".join(answers[(entry["question"], "expert")].split())
        for p in g.covered:
            assert p.evidence and p.evidence in answer and len(p.evidence) < len(answer), (entry["question"], p.id)


def _rules_alone(entry: dict[str, Any]) -> int:
    q = BANK.questions[entry["question"]]
    return grade(entry["answer"], q.expected_points, asked=f"{q.question}\n{q.question}").score


def test_meaning_finds_wrong_claims_and_adds_to_honest_answers_only(grades: dict[str, list[Grade]]) -> None:
    """Grading by meaning, with thresholds fitted on this half (scripts/calibrate_meaning.py), against the rules
    alone: figures in docs/interview.md."""
    rules = {k: mean(_rules_alone(e) for e in ENTRIES if e["kind"] == k) for k in KINDS}
    both = {k: mean(g.score for g in gs) for k, gs in grades.items()}
    assert both["expert"] > rules["expert"] and both["partial"] > rules["partial"], (rules, both)
    assert both["wrong"] <= rules["wrong"] - 1.5, (rules, both)
    assert all(both[k] <= rules[k] for k in ("vague", "stuffed")), (rules, both)
    by_meaning = [p for kind in ("expert", "partial") for g in grades[kind] for p in g.covered if p.by == "meaning"]
    assert len(by_meaning) >= 3 and all(p.evidence for p in by_meaning)
    # Misconceptions found by meaning alone, on the wrong answers and nowhere else.
    assert sum(len(g.wrong_claims) for g in grades["wrong"]) > sum(
        len(grade(e["answer"], BANK.questions[e["question"]].expected_points).wrong_claims)
        for e in ENTRIES if e["kind"] == "wrong")
    assert all(not g.wrong_claims for kind in ("expert", "partial", "vague") for g in grades[kind])
