"""Deterministic answer grading: normalisation, keyword groups, scores and verdicts, and robustness."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drills.grading import MAX_ANSWER_CHARS, NUMBER, Grade, combine, credit, grade, normalise, stem, verdict_for, words
from drills.questions import ExpectedPoint, Misconception

POINTS = (
    ExpectedPoint(id="mig", point="Partition the GPU with MIG.", keywords=("mig", "multi-instance gpu"),
                  phrases=("hardware partition", "carve gpu slice"),
                  misconceptions=(Misconception(id="k8s-splits", claim="The scheduler splits the GPU itself",
                                                says=(("scheduler split", "kubernetes split"),)),)),
    ExpectedPoint(id="throttle", point="CPU throttling from the CFS quota.", keywords=("throttle", "cfs quota"),
                  phrases=("processor cap",)),
    ExpectedPoint(id="resource", point="GPUs are the nvidia.com/gpu resource.", keywords=("nvidia.com/gpu",)),
    ExpectedPoint(id="shm", point="Mount a big /dev/shm.", keywords=("/dev/shm", "shared memory volume")),
    ExpectedPoint(id="result", point="Quantified the result.", keywords=(f"{NUMBER} percent",)),
)


@pytest.mark.parametrize(("answer", "covered"), [
    ("", set()),
    ("Use MIG to split the A100 so small models share it.", {"mig"}),
    ("NVIDIA's hardware partitioning carves one A100 into isolated pieces for small models.", {"mig"}),
    ("Multi instance GPUs let several small models share one card.", {"mig"}),  # plural and missing hyphen
    ("The pods were being throttled because their limit was too low.", {"throttle"}),
    ("It hit the CFS quota, which froze the process until the next period.", {"throttle"}),
    ("A tight processor cap freezes the container for most of each period.", {"throttle"}),
    ("Request nvidia.com/gpu: 2 in the limits so the scheduler finds a node with two free.", {"resource"}),
    ("Mount /dev/shm as a memory volume because the data loader workers share tensors there.", {"shm"}),
    ("We cut spend by 45% after the change, which paid for the project.", {"result"}),
    ("We cut spend by a lot after the change, which paid for the project.", set()),  # the point needs a number
])
def test_answers_that_assert_a_point_with_a_reason_earn_it(answer: str, covered: set[str]) -> None:
    result = grade(answer, POINTS)
    assert {p.id for p in result.covered} == covered
    assert result.score == round(100 * len(covered) / len(POINTS))


@pytest.mark.parametrize("answer", [
    "MIG, throttling, nvidia.com/gpu, /dev/shm, 30%",
    "mig cfs quota nvidia.com/gpu shared memory volume",
    "I'd use MIG, throttling, nvidia.com/gpu and /dev/shm.",
    "MIG.\nThrottling.\n/dev/shm.",
    "MIG is key. Throttling matters.",
])
def test_a_list_of_the_right_terms_earns_nothing(answer: str) -> None:
    assert grade(answer, POINTS).covered == []


@pytest.mark.parametrize("answer", [
    "I would not use MIG here because the models are large.",
    "Instead of MIG, give every model its own GPU so nothing is shared.",
    "MIG does not matter here; the models need whole GPUs anyway.",
    "Rather than hardware partitioning, we ran every model on its own card.",
    "Throttling is irrelevant to this problem since the CPU graphs are flat.",
    "Don't bother with /dev/shm, the loader works without it in most setups.",
])
def test_naming_a_concept_to_dismiss_it_earns_nothing(answer: str) -> None:
    result = grade(answer, POINTS)
    assert result.covered == []
    assert any(p.dismissed for p in result.points)


@pytest.mark.parametrize("answer", [
    "Use MIG so that small models do not each hold a whole GPU.",  # a goal, not a dismissal
    "If the GPU is not shared, split it with MIG so small models can share it.",
])
def test_a_negated_goal_or_condition_is_not_a_dismissal(answer: str) -> None:
    assert "mig" in {p.id for p in grade(answer, POINTS).covered}


def test_a_wrong_claim_costs_points_and_is_named_with_its_sentence() -> None:
    right = grade("MIG splits the A100 into isolated slices so small models share it.", POINTS)
    wrong = grade("MIG splits the A100 into isolated slices so small models share it. "
                  "The scheduler splits the GPU itself when a pod asks for half.", POINTS)
    assert right.score == 20 and not right.wrong_claims
    assert [w.id for w in wrong.wrong_claims] == ["k8s-splits"]
    assert wrong.wrong_claims[0].evidence == "The scheduler splits the GPU itself when a pod asks for half."
    assert wrong.score == 0 and "mig" not in {p.id for p in wrong.covered}
    assert "mig" in wrong.contradicted()


def test_a_denied_misconception_is_not_a_wrong_claim() -> None:
    result = grade("The scheduler does not split the GPU; MIG is set up on the card so small models share it.",
                   POINTS)
    assert result.wrong_claims == ()


def test_the_grade_names_the_sentence_that_earned_each_point() -> None:
    answer = "First, some context. Multi-Instance GPU carves the card so small models share it. Done."
    result = grade(answer, POINTS)
    point = next(p for p in result.points if p.id == "mig")
    assert point.evidence == "Multi-Instance GPU carves the card so small models share it."
    assert point.matched == ("multi", "instance", "gpu")
    assert point.shown == f"“{point.evidence}”"
    assert all(p.evidence == "" for p in result.missed)


def test_the_question_text_does_not_count_as_reasoning() -> None:
    asked = "How would you share a GPU between small models?"
    assert grade("MIG, share a GPU between small models.", POINTS, asked=asked).covered == []


def test_json_contract() -> None:
    result = grade("MIG splits one A100 so small models share it. The scheduler splits the GPU for pods.", POINTS)
    data = json.loads(result.to_json())
    assert set(data) == {"score", "points", "wrong_claims", "notes"}
    assert data["score"] == result.score
    assert [set(p) for p in data["points"]] == [{"id", "credited", "evidence"}] * len(POINTS)
    assert data["wrong_claims"][0]["claim"] == "The scheduler splits the GPU itself"


def test_the_model_may_not_credit_a_contradicted_point() -> None:
    result = grade("I would not use MIG because the models are large.", POINTS)
    credited = credit(result, {"mig": "use MIG because", "throttle": "the models are large"})
    assert {p.id for p in credited.covered} == {"throttle"}


@pytest.mark.parametrize(("a", "b"), [
    ("throttled", "throttling"), ("throttle", "throttles"), ("caches", "cache"), ("cached", "caching"),
    ("policies", "policy"), ("nodes", "node"), ("running", "run"), ("stopped", "stop"), ("GPUs", "gpu"),
    ("queues", "queueing"), ("scheduled", "scheduling"), ("processes", "process"),
])
def test_inflections_fold_together(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize("word", ["bus", "dns", "k8s", "status", "class", "speed", "need", "ecc", "is"])
def test_short_and_special_words_are_left_alone(word: str) -> None:
    assert stem(word) == word


def test_words_split_on_punctuation_and_symbols() -> None:
    assert words("don't") == ["do", "not"]  # contractions expand, so the negation is a word
    assert words("DCGM_FI_DEV_GPU_UTIL=80%, $5k") == ["dcgm", "fi", "dev", "gpu", "util", "80", "percent",
                                                      "dollar", "5k"]
    full_width = "".join(chr(ord(c) + 0xFEE0) for c in "nvidia-smi")
    assert words(full_width) == ["nvidia", "smi"]  # full-width characters fold to ASCII


@pytest.mark.parametrize(("score", "count", "verdict"), [
    (0, 0, "empty"), (0, 5, "weak"), (39, 5, "weak"), (40, 5, "partial"), (79, 5, "partial"), (80, 5, "strong"),
    (100, 9, "strong"),
])
def test_verdicts(score: int, count: int, verdict: str) -> None:
    assert verdict_for(score, count) == verdict


@pytest.mark.parametrize("answer", ["", "   \n\t ", "?!?!...", "—", "\x00\x01\x02", "🙂🙃"])
def test_empty_and_garbage_answers_are_empty_not_errors(answer: str) -> None:
    result = grade(answer, POINTS)
    assert result.score == 0 and result.verdict == "empty" and len(result.missed) == len(POINTS)


def test_huge_answers_are_truncated_not_slow() -> None:
    tail = " MIG lets small models share one A100 safely."
    result = grade("x " * MAX_ANSWER_CHARS + tail, POINTS)
    assert "mig" not in {p.id for p in result.covered}


def test_no_points_means_zero_not_division_error() -> None:
    assert grade("anything", ()).score == 0


def test_combine_takes_the_union_and_keeps_wrong_claims() -> None:
    first = grade("MIG lets small models share one A100 safely.", POINTS)
    second = grade("The pods were throttled because the limit was far too low.", POINTS)
    merged = combine([first, second])
    assert {p.id for p in merged.covered} == {"mig", "throttle"}
    assert merged.score == 40 and merged.word_count == first.word_count + second.word_count
    third = grade("Then the scheduler splits the GPU for each pod.", POINTS)
    assert combine([first, second, third]).score == 0  # MIG cancelled, 20 for throttling, minus 20
    assert combine([]).score == 0


# --- properties ----------------------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_grading_never_raises(answer: str) -> None:
    result = grade(answer, POINTS)
    assert isinstance(result, Grade)
    assert 0 <= result.score <= 100
    assert len(result.covered) + len(result.missed) == len(POINTS)


# Any group the normaliser turns into at least one word is a valid keyword group.
keyword_text = st.text(min_size=1, max_size=30).filter(lambda s: bool(words(s)) and "<" not in s)


@settings(max_examples=200, deadline=None)
@given(st.lists(keyword_text, min_size=1, max_size=4), st.text(max_size=500))
def test_any_valid_keywords_and_any_answer_never_raise(groups: list[str], answer: str) -> None:
    point = ExpectedPoint(id="p", point="a point", keywords=tuple(groups))
    result = grade(answer, [point, POINTS[0]])
    assert result.score in (0, 30, 50, 100)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_grading_is_deterministic(answer: str) -> None:
    assert grade(answer, POINTS) == grade(answer, POINTS)


# --- claims in clauses (issue 26) ------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    # A list with a few words of its own beyond the bank's terms is still a list: nothing is said about them.
    "MIG partitions, CFS throttling limits, nvidia.com/gpu counts, /dev/shm sizing, 30 percent savings, buy-in",
    "Key terms: hardware partition, processor cap, nvidia.com/gpu, shared memory volume, canary rollout.",
])
def test_a_list_of_terms_with_extra_words_asserts_nothing_and_the_grade_says_why(answer: str) -> None:
    result = grade(answer, POINTS)
    assert result.covered == [] and result.score == 0
    assert any("list of terms asserts nothing" in n for n in result.notes)
    assert json.loads(result.to_json())["notes"] == list(result.notes)


def test_a_list_that_is_the_object_of_a_claim_is_a_claim() -> None:
    result = grade("Isolation for small models comes from the hardware partition, MIG slices, separate pods "
                   "and quotas, which keeps one tenant from starving another.", POINTS)
    assert [p.id for p in result.covered] == ["mig"] and result.notes == ()


@pytest.mark.parametrize("answer", [
    "There is no need for MIG, because the models are small enough to share a card anyway.",
    "MIG should never be used for inference, whatever the size of the models.",
    "We run every model on a whole card. MIG is a bad idea for serving and should be avoided.",
])
def test_a_point_denied_or_dismissed_earns_nothing(answer: str) -> None:
    result = grade(answer, POINTS)
    assert "mig" not in {p.id for p in result.covered}


def test_a_point_denied_as_often_as_asserted_earns_nothing() -> None:
    result = grade("MIG lets small models share a card. But honestly MIG does not matter for us.", POINTS)
    mig = next(p for p in result.points if p.id == "mig")
    assert not mig.covered and mig.dismissed


def test_a_true_negative_sentence_about_a_point_does_not_cancel_it() -> None:
    # "X cannot ..." is a claim about X, not a denial of the point that was asserted elsewhere.
    result = grade("The CFS quota throttles the container each period. A throttled pod cannot keep up with "
                   "its requests.", POINTS)
    assert {p.id for p in result.covered} == {"throttle"}


def test_the_evidence_is_the_clause_that_earned_the_point() -> None:
    answer = ("We looked at the dashboards first, and nothing stood out; the pods were throttled because "
              "their CPU limit was too low, which we raised.")
    point = next(p for p in grade(answer, POINTS).covered if p.id == "throttle")
    assert point.evidence == "the pods were throttled"
    assert point.evidence in answer


def test_a_wrong_claim_names_its_misconception_in_json() -> None:
    data = json.loads(grade("The scheduler splits the GPU itself, so small pods share it.", POINTS).to_json())
    assert data["wrong_claims"] == [{"id": "k8s-splits", "point": "mig", "claim": "The scheduler splits the GPU itself",
                                     "misconception": "The scheduler splits the GPU itself",
                                     "evidence": "The scheduler splits the GPU itself"}]


@pytest.mark.parametrize("answer", [
    "MIG is not overkill here, because small models share one A100 that way.",
    "Never skip MIG on the A100s, because small models share it safely.",
    "Do not ignore MIG: it carves the A100 into slices so small models share it.",
    "MIG is not just a scheduling trick, because it carves the A100 into isolated slices.",
    "Use MIG rather than a processor cap, so each small model gets an isolated slice.",
    "Instead of whole cards, use MIG so small models share one A100.",
])
def test_a_rejected_dismissal_or_a_rather_than_keeps_the_credit(answer: str) -> None:
    """Double negation and contrast read right: "not overkill", "do not ignore", "not just a" assert the point;
    what follows "rather than" or "instead of" is denied, what precedes it is asserted."""
    result = grade(answer, POINTS)
    assert "mig" in {p.id for p in result.covered}
    assert not any(n.startswith("it says the opposite") for n in result.notes)


@pytest.mark.parametrize("answer", [
    "MIG is just a marketing feature that changes nothing for small models.",
    "MIG is harmless to skip, since small models fit anyway.",
    "MIG is deprecated and should not be used for inference.",
    "You can safely ignore MIG, since the scheduler shares the card for you.",
    "Neither MIG nor the CFS quota matter for small models.",
])
def test_a_dismissal_in_the_points_own_terms_earns_nothing(answer: str) -> None:
    result = grade(answer, POINTS)
    assert "mig" not in {p.id for p in result.covered}
    assert next(p for p in result.points if p.id == "mig").dismissed


@pytest.mark.parametrize(("answer", "score", "capped"), [
    # Two points asserted, two dismissed in their own terms: capped.
    ("MIG splits the A100 so small models share it. The pods were throttled because their limit was too low. "
     "/dev/shm is deprecated, nobody mounts it now. Requesting nvidia.com/gpu is optional, the scheduler finds "
     "the cards anyway.", 20, True),
    # The same answer rejecting the wrong idea instead: three points, no cap.
    ("MIG splits the A100 so small models share it. The pods were throttled because their limit was too low. "
     "/dev/shm is not optional, because the loader workers share tensors there.", 60, False),
    # More asserted than dismissed: not capped.
    ("MIG splits the A100 so small models share it. The pods were throttled because their limit was too low. "
     "Mount /dev/shm as a memory volume because the data loader workers share tensors there. Requesting "
     "nvidia.com/gpu is optional, the scheduler finds the cards anyway.", 60, False),
])
def test_an_answer_that_mostly_says_the_opposite_is_capped_and_says_why(answer: str, score: int,
                                                                        capped: bool) -> None:
    result = grade(answer, POINTS)
    assert result.score == score
    notes = [n for n in result.notes if n.startswith("it says the opposite of")]
    assert bool(notes) is capped
    if capped:
        assert "Mount a big /dev/shm." in notes[0] and "GPUs are the nvidia.com/gpu resource." in notes[0]
