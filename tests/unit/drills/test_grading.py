"""Deterministic answer grading: normalisation, keyword groups, scores and verdicts, and robustness."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drills.grading import MAX_ANSWER_CHARS, NUMBER, Grade, combine, grade, normalise, stem, verdict_for, words
from drills.questions import ExpectedPoint

POINTS = (
    ExpectedPoint(id="mig", point="Partition the GPU with MIG.", keywords=("mig", "multi-instance gpu")),
    ExpectedPoint(id="throttle", point="CPU throttling from the CFS quota.", keywords=("throttle", "cfs quota")),
    ExpectedPoint(id="resource", point="GPUs are the nvidia.com/gpu resource.", keywords=("nvidia.com/gpu",)),
    ExpectedPoint(id="shm", point="Mount a big /dev/shm.", keywords=("/dev/shm", "shared memory volume")),
    ExpectedPoint(id="result", point="Quantified the result.", keywords=(f"{NUMBER} percent",)),
)


@pytest.mark.parametrize(("answer", "covered"), [
    ("", set()),
    ("Use MIG to split the A100.", {"mig"}),
    ("Multi-Instance GPU partitions the card.", {"mig"}),
    ("multi instance GPUs", {"mig"}),  # plural and missing hyphen
    ("The pods were being throttled.", {"throttle"}),
    ("Throttling!", {"throttle"}),
    ("it hit the CFS quota", {"throttle"}),
    ("quota for CFS", {"throttle"}),  # order inside a group does not matter
    ("The CFS scheduler", set()),  # half a group is not enough
    ("request NVIDIA.COM/GPU: 2", {"resource"}),
    ("nvidia com gpu", {"resource"}),
    ("mount /dev/shm as memory", {"shm"}),
    ("a shared-memory volume", {"shm"}),
    ("we cut spend by 45%", {"result"}),
    ("we cut spend by 45 percent", {"result"}),
    ("we cut spend by a lot of percent", set()),  # the group needs a number
    ("MIG slices, throttled pods, nvidia.com/gpu and /dev/shm; saved 30%", {"mig", "throttle", "resource", "shm",
                                                                           "result"}),
])
def test_partial_answers_cover_exactly_the_expected_points(answer: str, covered: set[str]) -> None:
    result = grade(answer, POINTS)
    assert {p.id for p in result.covered} == covered
    assert {p.id for p in result.missed} == {p.id for p in POINTS} - covered
    assert result.score == round(100 * len(covered) / len(POINTS))


def test_matched_words_are_reported() -> None:
    result = grade("Multi-Instance GPU, and we saved 12% overall", POINTS)
    matched = {p.id: p.matched for p in result.covered}
    assert matched["mig"] == ("multi", "instance", "gpu")
    assert matched["result"] == ("12", "percent")
    assert all(p.matched == () for p in result.missed)


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
    tail = " mig" * 10
    result = grade("x " * MAX_ANSWER_CHARS + tail, POINTS)
    assert "mig" not in {p.id for p in result.covered}


def test_no_points_means_zero_not_division_error() -> None:
    assert grade("anything", ()).score == 0


def test_combine_takes_the_union() -> None:
    first = grade("MIG", POINTS)
    second = grade("throttling and MIG", POINTS)
    merged = combine([first, second])
    assert {p.id for p in merged.covered} == {"mig", "throttle"}
    assert merged.score == 40 and merged.word_count == first.word_count + second.word_count
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
    assert result.score in (0, 50, 100)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300))
def test_saying_more_never_uncovers_a_point(first: str, more: str) -> None:
    before = {p.id for p in grade(first, POINTS).covered}
    after = {p.id for p in grade(first + " " + more, POINTS).covered}
    assert before <= after


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_grading_is_deterministic(answer: str) -> None:
    assert grade(answer, POINTS) == grade(answer, POINTS)
