"""Grading by meaning (drills.meaning, issue 26 point 2) with the real model, on a fixture question that has the new
schema (claims per point, misconceptions without `says`: tests/unit/drills/meaning_bank/). The answers are written
for these tests; none uses a keyword or phrase of the point it should earn."""

from __future__ import annotations

import json
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from drills.claims import split_sentences
from drills.embedder import Embedder
from drills.grading import Meaning, grade
from drills.meaning import (
    OFF,
    Threshold,
    Thresholds,
    Vectors,
    distinguishing,
    load_thresholds,
    polarity,
    reference_hash,
    units,
)
from drills.questions import Question, load_bank

FIXTURE = Path(__file__).parent / "meaning_bank"


@pytest.fixture(scope="module")
def question() -> Question:
    q = load_bank(FIXTURE).get("mig-meaning-fixture")
    assert q is not None
    return q


# The fixture question is not in the tuning half, so scripts/calibrate_meaning.py fits it no thresholds; these are
# what a fit gives a point with three claims (claims at 0.90, misconceptions at 0.92). The built-in default for an
# unfitted point keeps misconceptions by meaning nearly off (none of the half's honest answers may be called wrong).
FITTED = Threshold(0.9, 0.92)


@pytest.fixture(scope="module")
def meaning(embedder: Embedder, question: Question) -> Meaning:
    default = load_thresholds()
    fitted = {f"{question.id}/{p.id}": (reference_hash(p), FITTED) for p in question.expected_points}
    return Meaning(embed=embedder, thresholds=Thresholds(default.default, fitted), question=question.id)


def test_a_paraphrase_with_no_bank_word_is_credited_with_its_clause(question: Question, meaning: Meaning) -> None:
    answer = "The GPU itself is partitioned into instances at the hardware level, and Kubernetes just uses the slices."
    assert grade(answer, question.expected_points, question.question).covered == []  # the rules see no concept
    result = grade(answer, question.expected_points, question.question, meaning=meaning)
    (point,) = result.covered
    assert point.id == "below-k8s" and point.by == "meaning"
    assert point.evidence == "The GPU itself is partitioned into instances at the hardware level"
    assert result.wrong_claims == () and result.score == 50


def test_a_second_point_by_paraphrase(question: Question, meaning: Meaning) -> None:
    answer = "You choose from a short list of predefined slice shapes that depend on the card model."
    result = grade(answer, question.expected_points, question.question, meaning=meaning)
    assert [(p.id, p.by) for p in result.covered] == [("profiles", "meaning")]


def test_the_negated_paraphrase_is_not_credited(question: Question, meaning: Meaning) -> None:
    answer = "The GPU itself is not partitioned into instances at the hardware level."
    result = grade(answer, question.expected_points, question.question, meaning=meaning)
    assert result.covered == [] and result.score == 0


def test_a_keyword_list_is_not_credited(question: Question, meaning: Meaning) -> None:
    answer = "MIG mode, nvidia-smi, profiles, hardware partition, fixed layouts, MIG manager, slices"
    result = grade(answer, question.expected_points, question.question, meaning=meaning)
    assert result.covered == [] and result.score == 0 and result.wrong_claims == ()


@pytest.mark.parametrize(("answer", "misconception"), [
    ("When a pod requests half a GPU, the scheduler carves the card into pieces on its own.", "scheduler-splits"),
    ("You can cut the card into slices of whatever size you need.", "any-size"),
])
def test_a_misconception_paraphrase_is_a_wrong_claim(question: Question, meaning: Meaning, answer: str,
                                                      misconception: str) -> None:
    result = grade(answer, question.expected_points, question.question, meaning=meaning)
    assert [w.id for w in result.wrong_claims] == [misconception]
    shown = json.loads(result.to_json())["wrong_claims"][0]
    claims = {m.id: m.claim for p in question.expected_points for m in p.misconceptions}
    assert shown["misconception"] == claims[misconception] and shown["evidence"] in answer
    assert result.score == 0


def test_a_misconception_beats_a_claim_of_its_point(question: Question, meaning: Meaning) -> None:
    """Right words, wrong claim: the clause is nearer to the misconception than to any claim, so it is wrong, not
    credited, and the rule credit of another clause is cancelled with it."""
    answer = ("I enable MIG mode with nvidia-smi because the node has to be configured first. "
              "When a pod requests half a GPU, the scheduler carves the card into pieces on its own.")
    result = grade(answer, question.expected_points, question.question, meaning=meaning)
    assert "below-k8s" not in {p.id for p in result.covered}
    assert [w.point for w in result.wrong_claims] == ["below-k8s"]


def test_the_words_that_tell_a_misconception_apart_are_those_no_claim_uses(question: Question) -> None:
    below, profiles = question.expected_points
    assert distinguishing(below) == (frozenset({"scheduler", "pod", "ask", "fraction"}), frozenset({"siz", "cut"}))
    # "gpu", "slice", "split" are the point's own words; "when", "any", "like" are function words or fillers.
    # The question's other points count too: "sizes" is what the profiles point's claims talk about.
    splits, any_size = distinguishing(below, (below, profiles))
    assert splits == {"scheduler", "pod", "ask", "fraction"} and any_size == {"cut"}


def _stub(question: Question, answer_near: str) -> Meaning:
    """Meaning whose embedding puts every clause of the answer exactly on the claims ("claim") or exactly on the
    misconceptions ("misconception"), so only the word checks decide."""
    wrong = {m.claim for p in question.expected_points for m in p.misconceptions}
    right, off = np.array([1.0, 0.0], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)

    def embed(texts: object, keep: bool) -> Vectors:
        listed = list(texts)  # type: ignore[call-overload]
        if keep:
            return np.stack([off if t in wrong else right for t in listed])
        return np.stack([right if answer_near == "claim" else off for _ in listed])

    fitted = {f"{question.id}/{p.id}": (reference_hash(p), FITTED) for p in question.expected_points}
    return Meaning(embed=embed, thresholds=Thresholds(FITTED, fitted), question=question.id)


def test_meaning_proposes_a_misconception_and_its_distinguishing_words_confirm_it(question: Question) -> None:
    meaning = _stub(question, "misconception")
    about = grade("The driver tools on the node decide how the card is used.",
                  question.expected_points, question.question, meaning=meaning)
    assert about.wrong_claims == ()  # about the same thing, none of the words that make it the misconception
    says = grade("The driver tools on the node let you cut the card into pieces of any size.",
                 question.expected_points, question.question, meaning=meaning)
    assert [w.id for w in says.wrong_claims] == ["any-size"]


def test_a_claim_by_meaning_needs_a_word_of_the_claim_or_the_point(question: Question) -> None:
    meaning = _stub(question, "claim")
    unrelated = grade("Our team writes runbooks for every paging alert we own.",
                      question.expected_points, question.question, meaning=meaning)
    assert unrelated.covered == []
    shared = grade("The hardware gets carved up before anything else happens.",
                   question.expected_points, question.question, meaning=meaning)
    assert [p.id for p in shared.covered] == ["below-k8s"]


def test_the_json_shape_is_unchanged(question: Question, meaning: Meaning) -> None:
    answer = "The GPU itself is partitioned into instances at the hardware level, and Kubernetes just uses the slices."
    shown = json.loads(grade(answer, question.expected_points, question.question, meaning=meaning).to_json())
    assert set(shown) == {"score", "points", "wrong_claims", "notes"}
    assert shown["points"][0] == {"id": "below-k8s", "credited": True,
                                  "evidence": "The GPU itself is partitioned into instances at the hardware level"}


@pytest.mark.parametrize(("text", "negative"), [
    ("Profiles do not matter here", True),
    ("I would never use time-slicing for this", True),
    ("Taints are a bad idea on GPU nodes", True),
    ("Pack jobs tightly so that the GPUs do not sit idle", False),
    ("The scheduler binds the pod to a node with enough free GPUs", False),
    # Dismissals in the point's own terms, and their double negation (issue 26, round 3).
    ("Xid 79 is just a software warning", True),
    ("Xid 79 is not just a software warning", False),
    ("You can safely ignore Xid 79 on a busy node", True),
    ("Do not ignore Xid 79 on a training node", False),
    ("Startup probes are deprecated", True),
    ("Profiles are not optional for this layout", False),
    ("We moved just that into a repo with a review step", False),
    ("Neither MIG nor time-slicing helps here", True),
])
def test_polarity_is_read_by_the_clause_reader_not_the_embedding(text: str, negative: bool) -> None:
    assert polarity(text) is negative


@pytest.mark.parametrize(("text", "denies"), [
    ("Xid 79 is just a software warning", False),  # a dismissal, met by a misconception worded as one
    ("Xid 79 is not just a software warning", True),  # rejects it: meets no misconception that dismisses
    ("ECC errors are harmless", False),
    ("ECC errors are not harmless", True),
])
def test_a_misconception_worded_as_a_dismissal_is_read_by_its_negators_alone(text: str, denies: bool) -> None:
    assert polarity(text, False) is denies


def test_only_asserting_clauses_are_compared() -> None:
    found = units(split_sentences("Would you use MIG here? MIG, MPS, time-slicing, profiles. The card is split "
                                  "at the hardware level."))
    assert [u.text for u in found] == ["The card is split at the hardware level."]


def test_a_stale_threshold_falls_back_to_the_default(question: Question) -> None:
    point = question.expected_points[0]
    fitted = Threshold(0.5, 0.5)
    default = Threshold(0.9, 0.9)
    fresh = Thresholds(default, {"q/p": (reference_hash(point), fitted)})
    stale = Thresholds(default, {"q/p": ("0" * 16, fitted)})
    unclaimed = point.model_copy(update={"claims": ()})
    assert fresh.of("q/p", point) == fitted and stale.of("q/p", point) == default
    # Without claims and without a current fit, a point is not compared by meaning at all.
    assert stale.of("q/p", unclaimed) == OFF and fresh.of("q/p", unclaimed) == OFF


def test_every_fitted_threshold_names_a_point_of_the_bank_and_is_current() -> None:
    bank = load_bank()
    thresholds = load_thresholds()
    points = {f"{q.id}/{p.id}": p for q in bank.questions.values() for p in q.expected_points}
    assert len(thresholds.points) >= 100 and set(thresholds.points) <= set(points)
    stale = [k for k, (h, _) in thresholds.points.items() if h != reference_hash(points[k])]
    # New claims in the bank make entries stale (they fall back to the default): rerun scripts/calibrate_meaning.py.
    assert not stale, f"{len(stale)} stale thresholds: python scripts/calibrate_meaning.py"
    assert all(0.8 <= t.claim <= 1.0 and 0.8 <= t.misconception <= 1.0 for _, t in thresholds.points.values())


def test_an_unreadable_vector_cache_is_ignored(tmp_path: Path, embedder: Embedder) -> None:
    broken = tmp_path / "vectors.npz"
    broken.write_bytes(b"not a zip")
    fresh = Embedder(embedder._model, broken, "test-model")
    vectors = fresh(["the card is split at the hardware level"], True)
    assert vectors.shape == (1, 384) and abs(float(np.linalg.norm(vectors[0])) - 1.0) < 1e-3
    again = Embedder(Unusable(), broken, "test-model")
    assert np.allclose(again(["the card is split at the hardware level"], True), vectors)  # read back from disk


class Unusable:
    """A model that must not be called: the vectors have to come from the disk cache."""

    def encode(self, texts: list[str], is_query: bool = False) -> None:
        raise AssertionError(f"embedded again: {texts}")


def test_reference_vectors_are_kept_on_disk_and_answer_vectors_are_not(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "state" / "interview-meaning.npz"
    first = Embedder(embedder._model, path, "test-model")
    first(["a clause of some answer"], False)
    assert not path.exists()
    first(["MIG partitions are created on the GPU itself, below Kubernetes."], True)
    assert path.exists()
    later = Embedder(Unusable(), path, "test-model")  # a new process: the bank is not embedded again
    assert later(["MIG partitions are created on the GPU itself, below Kubernetes."], True).shape == (1, 384)
    with pytest.raises(AssertionError, match="embedded again"):
        later(["a clause of some answer"], False)
    other_model = Embedder(Unusable(), path, "another-model")  # vectors are keyed by model as well as text
    with pytest.raises(AssertionError, match="embedded again"):
        other_model(["MIG partitions are created on the GPU itself, below Kubernetes."], True)


# Every point of the bank has at least 3 reference claims and 2 misconceptions (issue 26 point 2).
MAX_LACKING_CLAIMS = 0
MAX_LACKING_MISCONCEPTIONS = 0


def test_the_bank_reports_points_lacking_claims_or_misconceptions(question: Question) -> None:
    lacking_claims, lacking_misconceptions = load_bank().meaning_gaps()
    print(f"points with fewer than 3 claims: {len(lacking_claims)}; "
          f"with fewer than 2 misconceptions: {len(lacking_misconceptions)}")
    assert len(lacking_claims) <= MAX_LACKING_CLAIMS and len(lacking_misconceptions) <= MAX_LACKING_MISCONCEPTIONS
    fixture = load_bank(FIXTURE)
    assert fixture.meaning_gaps() == ([], [])  # the fixture has the full schema: the count sees it


def _calibration_script() -> ModuleType:
    spec = spec_from_file_location("calibrate_meaning", Path(__file__).parents[3] / "scripts" / "calibrate_meaning.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fit_skips_answers_to_held_back_questions_and_refuses_other_files() -> None:
    script = _calibration_script()
    held = script.held_back_questions()
    assert len(held) == 32
    tuning = next(q for q in load_bank().questions if q not in held)
    answers = [{"question": next(iter(sorted(held))), "kind": "wrong", "answer": "x"},
               {"question": tuning, "kind": "wrong", "answer": "y"}]
    assert script.tuning_only(answers) == answers[1:]
    fitted_on = script.tuning_answers()
    assert fitted_on and not {e["question"] for e in fitted_on} & held
    assert {e["question"] for e in fitted_on} <= set(load_bank().questions)
    with pytest.raises(SystemExit, match="only the tuning data"):
        script.tuning_answers((script.HELD_BACK,))
