"""The interview grader against answers written for calibration: five kinds per question, each in its band.

The answers (answers_*.yaml beside this file) were written in our own words for the question bank, not
generated from the phrase sets, and the grader is not allowed to know them. Graded the way
`triagebot interview grade` grades (drills.interview.submit, no model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli.interview_grade import grade_answer
from drills.grading import words
from drills.questions import load_bank

HERE = Path(__file__).parent
KINDS = ("expert", "partial", "vague", "keywords", "wrong")
BANDS = {"expert": (70, 100), "partial": (25, 75), "vague": (0, 30), "keywords": (0, 30), "wrong": (0, 30)}
BANK = load_bank()


def _load() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for path in sorted(HERE.glob("answers_*.yaml")):
        entries += yaml.safe_load(path.read_text(encoding="utf-8"))["answers"]
    return entries


ENTRIES = _load()
CASES = [(e["question"], kind, e[kind]) for e in ENTRIES for kind in KINDS]


def test_the_set_is_big_and_broad_enough() -> None:
    ids = [e["question"] for e in ENTRIES]
    assert len(set(ids)) == len(ids) >= 30
    assert all(BANK.get(i) is not None for i in ids)
    assert len({BANK.questions[i].topic for i in ids}) >= 10
    assert all(set(KINDS) <= set(e) for e in ENTRIES)


@pytest.mark.parametrize(("question_id", "kind", "answer"), CASES, ids=[f"{q}-{k}" for q, k, _ in CASES])
def test_each_answer_lands_in_its_band(question_id: str, kind: str, answer: str) -> None:
    result = grade_answer(BANK, question_id, answer)
    low, high = BANDS[kind]
    assert low <= result.score <= high, (kind, result.score, [(p.id, p.covered) for p in result.points],
                                         [w.claim for w in result.wrong_claims])


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["question"] for e in ENTRIES])
def test_expert_answers_paraphrase_instead_of_quoting_keywords(entry: dict[str, Any]) -> None:
    """The experts must earn their grade through paraphrase: no keyword of the bank appears in them verbatim,
    except the few listed in `allowed_terms` (Xid codes, command names, plain words with no fair paraphrase)."""
    said = f" {' '.join(words(entry['expert']))} "
    quoted = {k for p in BANK.questions[entry["question"]].expected_points for k in p.keywords
              if f" {' '.join(words(k))} " in said}
    assert quoted <= set(entry.get("allowed_terms", ())), quoted - set(entry.get("allowed_terms", ()))
