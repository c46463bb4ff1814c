"""The UI-neutral interview exchange: ask, answer, follow-up, hints, model answer, as pure steps."""

from __future__ import annotations

import pytest

from drills import interview
from drills.interview import InterviewSession
from drills.questions import Question, load_bank

BANK = load_bank()
MIG = BANK.questions["mig-configuration"]  # 3 follow-ups, 3 hints, 4 points
GLOB = BANK.questions["shell-glob-expansion"]


def test_start_asks_the_question() -> None:
    session, steps = interview.start(MIG)
    assert session.phase == "answering" and session.question_id == MIG.id
    assert [s.kind for s in steps] == ["question"] and steps[0].text == MIG.question


def test_answer_is_graded_then_a_follow_up_then_the_model_answer() -> None:
    session, _ = interview.start(MIG, max_follow_ups=1)
    session, steps = interview.submit(session, MIG, "Turn on MIG mode with nvidia-smi at the driver level.")
    assert [s.kind for s in steps] == ["feedback", "follow-up"]
    feedback = steps[0].grade
    assert feedback is not None and {p.id for p in feedback.covered} == {"below-k8s"}
    assert steps[1].text == MIG.follow_ups[0] and steps[1].position == (1, 1)
    assert session.phase == "follow-up"

    session, steps = interview.submit(session, MIG, "The GPU Operator's device plugin advertises the slices to "
                                                    "pods, and I pick the profiles so each slice fits its job.")
    assert [s.kind for s in steps] == ["feedback", "model-answer"]
    assert set(steps[0].newly_covered) == {"expose", "profiles"}
    so_far = steps[0].grade
    assert so_far is not None and {p.id for p in so_far.covered} == {"below-k8s", "expose", "profiles"}
    assert session.turns[1].grade.score == 50  # the follow-up answer on its own
    assert session.phase == "done" and steps[1].text == MIG.model_answer
    overall = steps[1].grade
    assert overall is not None and {p.id for p in overall.covered} == {"below-k8s", "expose", "profiles"}
    assert [t.kind for t in session.turns] == ["question", "follow-up"]
    assert session.turns[1].prompt == MIG.follow_ups[0]


def test_follow_up_budget_is_capped_by_the_question() -> None:
    session, _ = interview.start(GLOB, max_follow_ups=10)
    asked = 0
    session, steps = interview.submit(session, GLOB, "The shell expands the glob.")
    while session.phase != "done":
        asked += 1
        session, steps = interview.submit(session, GLOB, "some follow-up answer")
    assert asked == len(GLOB.follow_ups)
    assert steps[-1].kind == "model-answer"


def test_zero_follow_ups_goes_straight_to_the_model_answer() -> None:
    session, _ = interview.start(MIG, max_follow_ups=0)
    session, steps = interview.submit(session, MIG, "MIG profiles")
    assert [s.kind for s in steps] == ["feedback", "model-answer"] and session.phase == "done"


def test_hints_come_in_order_and_run_out() -> None:
    session, _ = interview.start(MIG)
    texts = []
    for _ in range(len(MIG.hints)):
        session, steps = interview.hint(session, MIG)
        assert steps[0].kind == "hint"
        texts.append(steps[0].text)
    assert texts == list(MIG.hints) and session.hints_used == len(MIG.hints)
    session, steps = interview.hint(session, MIG)
    assert steps[0].kind == "notice" and session.hints_used == len(MIG.hints)


def test_skip_moves_past_a_follow_up_and_ends_a_main_question() -> None:
    session, _ = interview.start(MIG, max_follow_ups=2)
    session, _ = interview.submit(session, MIG, "MIG via the GPU operator")
    session, steps = interview.skip(session, MIG)
    assert steps[0].kind == "follow-up" and steps[0].text == MIG.follow_ups[1]
    session, steps = interview.skip(session, MIG)
    assert steps[0].kind == "model-answer" and session.phase == "done"

    fresh, _ = interview.start(MIG)
    fresh, steps = interview.skip(fresh, MIG)
    assert steps[0].kind == "model-answer" and steps[0].grade is None and fresh.phase == "done"


def test_empty_answer_does_not_advance() -> None:
    session, _ = interview.start(MIG)
    after, steps = interview.submit(session, MIG, "  ...  ")
    assert after == session and steps[0].kind == "notice"


def test_finished_session_only_gives_notices() -> None:
    session, _ = interview.start(MIG)
    session, _ = interview.finish(session, MIG)
    for after, steps in (interview.hint(session, MIG), interview.skip(session, MIG),
                         interview.submit(session, MIG, "late answer")):
        assert after == session and [s.kind for s in steps] == ["notice"]


def test_session_is_serialisable_and_immutable() -> None:
    session, _ = interview.start(MIG)
    session, _ = interview.hint(session, MIG)
    session, _ = interview.submit(session, MIG, "MIG profiles via the GPU Operator")
    restored = InterviewSession.model_validate_json(session.model_dump_json())
    assert restored == session
    assert InterviewSession.model_config.get("frozen") is True  # steps return new sessions, never mutate


def test_wrong_question_is_a_programming_error() -> None:
    session, _ = interview.start(MIG)
    other: Question = GLOB
    with pytest.raises(ValueError, match="session is for"):
        interview.submit(session, other, "answer")
