"""The optional model grader only adds points, and only ones it can quote from the answer."""

from __future__ import annotations

import argparse
import json

import pytest
from rich.console import Console

from bot.assist.grade import model_grader, parse_credits, review
from bot.assist.llm import NO_MODEL
from bot.cli.interview import run_interview
from drills import interview
from drills.grading import grade
from drills.questions import Question, load_bank
from tests.harness.fake_models import fake_assistant

ANSWER = ("Our deploys kept breaking, so I suggested we run a small experiment with a single squad first. "
          "People liked it and the other squads followed after a quarter.")


@pytest.fixture(scope="module")
def question() -> Question:
    found = load_bank().get("advocating-practices")
    assert found is not None
    return found


def reply(*credits: tuple[str, str]) -> str:
    return json.dumps({"covered": [{"id": i, "quote": q} for i, q in credits]})


@pytest.mark.parametrize(("model_says", "credited"), [
    (reply(("pilot", "run a small experiment with a single squad")), {"pilot"}),
    # Case and spacing do not matter; the words and their order do.
    (reply(("pilot", "RUN a small   experiment")), {"pilot"}),
    ("Sure! Here you go: " + reply(("pilot", "with a single squad first")) + " Hope it helps.", {"pilot"}),
    # A quote the candidate never said, or too short to show anything.
    (reply(("pilot", "we piloted it with one team")), set()),
    (reply(("pilot", "squad")), set()),
    # A point that was not asked about, or does not exist.
    (reply(("made-up", "run a small experiment")), set()),
    ("not json at all", set()),
    ('{"covered": "everything"}', set()),
    ("", set()),
])
def test_review_credits_only_quoted_missed_points(question: Question, model_says: str, credited: set[str]) -> None:
    keywords = grade(ANSWER, question.expected_points)
    assert "pilot" not in {p.id for p in keywords.covered}
    assistant, _ = fake_assistant(model_says)
    result = review(ANSWER, question, keywords, assistant)
    by_model = {p.id for p in result.points if p.by == "model"}
    assert by_model == credited
    assert {p.id for p in result.covered} == {p.id for p in keywords.covered} | credited
    if credited:
        assert result.score > keywords.score
        point = next(p for p in result.points if p.by == "model")
        assert "credited by the model" in point.shown and point.quote


def test_points_the_keywords_found_are_never_sent_or_changed(question: Question) -> None:
    answer = ANSWER + " We measured 30 percent fewer incidents and everyone adopted it."
    keywords = grade(answer, question.expected_points)
    assert "buy-in-result" in {p.id for p in keywords.covered}
    assistant, model = fake_assistant(reply(("buy-in-result", "everyone adopted it and more")))
    result = review(answer, question, keywords, assistant)
    assert result == keywords
    sent = json.loads(str(model.seen[0][1].content))
    assert "buy-in-result" not in {p["id"] for p in sent["points"]}


def test_failing_model_or_grading_off_keeps_the_keyword_grade(question: Question) -> None:
    keywords = grade(ANSWER, question.expected_points)
    slow, _ = fake_assistant(reply(("pilot", "run a small experiment")), delay=2.0, timeout=0.1)
    assert review(ANSWER, question, keywords, slow) == keywords
    off, model = fake_assistant(reply(("pilot", "run a small experiment")), grading=False)
    assert review(ANSWER, question, keywords, off) == keywords and model.seen == []
    assert model_grader(off) is None and model_grader(NO_MODEL) is None


def test_answer_is_redacted_before_the_model_sees_it(question: Question) -> None:
    secret = ANSWER + " Our token was ghp_abcdefghijklmnopqrstuvwxyz0123456789 and password=hunter2."
    assistant, model = fake_assistant(reply())
    review(secret, question, grade(secret, question.expected_points), assistant)
    assert "hunter2" not in model.prompts() and "ghp_abcdefghijklmnopqrstuvwxyz" not in model.prompts()


def test_parse_credits_never_raises_on_odd_json() -> None:
    for text in ("{", "{}", '{"covered": [1, 2]}', '{"covered": [{"id": 1}]}', "{" * 1000, '{"a": }'):
        assert parse_credits(text, ANSWER, {"pilot"}) == {}


def test_submit_uses_the_grader_and_keeps_its_grade(question: Question) -> None:
    assistant, _ = fake_assistant(reply(("pilot", "a single squad first")))
    session, _ = interview.start(question, max_follow_ups=0)
    session, steps = interview.submit(session, question, ANSWER, grader=model_grader(assistant))
    feedback = steps[0]
    assert feedback.kind == "feedback" and feedback.grade is not None
    assert "pilot" in {p.id for p in feedback.grade.covered}
    overall = session.overall()
    assert overall is not None and "pilot" in {p.id for p in overall.covered}


def test_terminal_interview_shows_the_model_credit(question: Question, monkeypatch: pytest.MonkeyPatch) -> None:
    # The point the model credits must be one the deterministic grade missed: with meaning on, the bank's claims
    # already credit this paraphrase, so the rules alone stand in for "missed".
    monkeypatch.setattr("drills.embedder._default", [None])  # as TRIAGEBOT_INTERVIEW_MEANING=off at start-up
    assistant, _ = fake_assistant(reply(("pilot", "a single squad first")))
    console = Console(width=200, record=True, color_system=None)
    answers = iter([ANSWER, "", "quit", ""])
    args = argparse.Namespace(question_id=question.id, follow_ups=0, topic=None, difficulty=None, seed=None,
                              list=False)
    assert run_interview(args, console, lambda _prompt: next(answers), grader=model_grader(assistant)) == 0
    text = console.export_text()
    assert "“a single squad first” (credited by the model)" in text
