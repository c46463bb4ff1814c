"""One mock-interview exchange as a value: ask, answer, follow up, hint, model answer.

The session holds only ids and what was said, so a chat surface can store it between thread replies and
the terminal can keep it in a loop. Every step is a pure function `(session, question, ...) -> (session,
steps)`; the caller renders the steps. Nothing here reads input or prints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from drills import exact
from drills.grading import Grade, combine, grade
from drills.questions import Question

Phase = Literal["answering", "exact", "follow-up", "done"]
Grader = Callable[[str, Question, Grade], Grade]
StepKind = Literal["question", "feedback", "exact", "exact-result", "follow-up", "hint", "model-answer", "notice"]
EXACT_SHARE = 0.25  # of the final score, when exact follow-ups were asked: the free answer stays the larger part


class Turn(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["question", "follow-up"]
    prompt: str
    answer: str
    grade: Grade


class Step(BaseModel):
    """Something to show the candidate. `grade` is the coverage so far: on feedback after the main answer it is
    that answer's grade, after a follow-up the union with the earlier answers; on model-answer the final one."""

    model_config = ConfigDict(frozen=True)

    kind: StepKind
    text: str
    grade: Grade | None = None
    newly_covered: tuple[str, ...] = ()  # point ids a follow-up answer added to the earlier ones
    position: tuple[int, int] | None = None  # (n, of) for hints, exact follow-ups and follow-ups
    score: int | None = None  # on model-answer: the final score, exact follow-ups included


class InterviewSession(BaseModel):
    model_config = ConfigDict(frozen=True)

    question_id: str
    phase: Phase = "answering"
    max_follow_ups: int = Field(default=1, ge=0)
    follow_ups_asked: int = 0
    max_exact: int = Field(default=2, ge=0)
    exact_scores: tuple[int, ...] = ()  # one per exact follow-up asked and answered (0 when skipped)
    exact_asked: int = 0
    hints_used: int = 0
    turns: tuple[Turn, ...] = ()

    def overall(self) -> Grade | None:
        return combine(t.grade for t in self.turns) if self.turns else None

    def final_score(self) -> int | None:
        """The free answers' coverage, with the exact follow-ups' mean as EXACT_SHARE of it when any were asked."""
        coverage = self.overall()
        if coverage is None:
            return None
        if not self.exact_scores:
            return coverage.score
        mean = sum(self.exact_scores) / len(self.exact_scores)
        return round((1 - EXACT_SHARE) * coverage.score + EXACT_SHARE * mean)


def _check(session: InterviewSession, question: Question) -> None:
    # Mixing up sessions and questions is a programming error, not something to grade around.
    if session.question_id != question.id:
        raise ValueError(f"session is for {session.question_id!r}, not {question.id!r}")


def current_prompt(session: InterviewSession, question: Question) -> str:
    if session.phase == "exact" and session.exact_asked:
        return exact.for_question(question)[session.exact_asked - 1].text()
    if session.phase == "follow-up" and session.follow_ups_asked:
        return question.follow_ups[session.follow_ups_asked - 1]
    return question.question


def _follow_up_budget(session: InterviewSession, question: Question) -> int:
    return min(session.max_follow_ups, len(question.follow_ups))


def start(question: Question, max_follow_ups: int = 1) -> tuple[InterviewSession, list[Step]]:
    session = InterviewSession(question_id=question.id, max_follow_ups=max(0, max_follow_ups))
    return session, [Step(kind="question", text=question.question)]


def _exact_budget(session: InterviewSession, question: Question) -> int:
    return min(session.max_exact, len(exact.for_question(question)))


def _next(session: InterviewSession, question: Question) -> tuple[InterviewSession, list[Step]]:
    # The exact follow-ups come first, straight after the free answer they test; then the bank's open ones.
    if session.phase in ("answering", "exact") and session.exact_asked < _exact_budget(session, question):
        n = session.exact_asked + 1
        session = session.model_copy(update={"phase": "exact", "exact_asked": n})
        return session, [Step(kind="exact", text=exact.for_question(question)[n - 1].text(),
                              position=(n, _exact_budget(session, question)))]
    if session.follow_ups_asked < _follow_up_budget(session, question):
        n = session.follow_ups_asked + 1
        session = session.model_copy(update={"phase": "follow-up", "follow_ups_asked": n})
        return session, [Step(kind="follow-up", text=question.follow_ups[n - 1],
                              position=(n, _follow_up_budget(session, question)))]
    return finish(session, question)


def submit(session: InterviewSession, question: Question, answer: str,
           grader: Grader | None = None, by_meaning: bool = True) -> tuple[InterviewSession, list[Step]]:
    """Grade an answer to whatever is currently asked, then move on to a follow-up or the model answer.

    The answer is graded by the rules and, with `by_meaning` and the embedding model available, by meaning too
    (drills.meaning). `grader` may credit points both missed (an optional model, supplied by the caller); it gets
    the grade and returns the final one, which drills.grading.credit keeps from crediting contradicted points."""
    _check(session, question)
    if session.phase == "done":
        return session, [Step(kind="notice", text="This question is finished; start another one.")]
    if session.phase == "exact":
        return _submit_exact(session, question, answer)
    # The embedder (and numpy) load with the first answer graded, not with every importer (the Slack bot's start).
    from drills.embedder import default_meaning

    result = grade(answer, question.expected_points, asked=f"{question.question}\n{current_prompt(session, question)}",
                   meaning=default_meaning(question.id) if by_meaning else None)
    if result.verdict == "empty":
        return session, [Step(kind="notice", text="That answer had no words in it. Answer, ask for a hint, "
                                                  "or skip.")]
    if grader is not None and result.missed:
        result = grader(answer, question, result)
    earlier = session.overall()
    before = {p.id for p in earlier.covered} if earlier else set()
    kind: Literal["question", "follow-up"] = "follow-up" if session.phase == "follow-up" else "question"
    turn = Turn(kind=kind, prompt=current_prompt(session, question), answer=answer, grade=result)
    session = session.model_copy(update={"turns": (*session.turns, turn)})
    added = tuple(p.id for p in result.covered if p.id not in before) if kind == "follow-up" else ()
    # After a follow-up the candidate cares about the total, not the follow-up alone.
    so_far = session.overall() or result
    feedback = Step(kind="feedback", text=f"{so_far.score}/100 ({so_far.verdict})", grade=so_far,
                    newly_covered=added)
    session, following = _next(session, question)
    return session, [feedback, *following]


def _submit_exact(session: InterviewSession, question: Question, answer: str) -> tuple[InterviewSession, list[Step]]:
    asked = exact.for_question(question)[session.exact_asked - 1]
    picked = exact.parse(answer, asked)
    if picked is None:
        every = " (every one of them, once)" if asked.kind == "order" else ""
        return session, [Step(kind="notice", text=f"Answer with the letters of the options{every}, for example "
                                                   f"`{asked.letters(tuple(range(min(3, len(asked.options)))))}`, "
                                                   "or skip.")]
    result = exact.score(asked, picked)
    session = session.model_copy(update={"exact_scores": (*session.exact_scores, result.score)})
    session, following = _next(session, question)
    return session, [Step(kind="exact-result", text=result.text), *following]


def hint(session: InterviewSession, question: Question) -> tuple[InterviewSession, list[Step]]:
    """The next hint, weakest first; hints are counted and reported with the result, never deducted."""
    _check(session, question)
    if session.phase == "done":
        return session, [Step(kind="notice", text="This question is finished; the model answer is above.")]
    if session.hints_used >= len(question.hints):
        return session, [Step(kind="notice", text="No more hints. Answer, skip, or quit for the model answer.")]
    n = session.hints_used + 1
    session = session.model_copy(update={"hints_used": n})
    return session, [Step(kind="hint", text=question.hints[n - 1], position=(n, len(question.hints)))]


def skip(session: InterviewSession, question: Question) -> tuple[InterviewSession, list[Step]]:
    """Pass on the current prompt: a skipped follow-up moves on, a skipped main question ends the exchange."""
    _check(session, question)
    if session.phase == "done":
        return session, [Step(kind="notice", text="This question is finished; start another one.")]
    if session.phase == "exact":  # a skipped exact follow-up scores 0: it counts, like an answered one
        session = session.model_copy(update={"exact_scores": (*session.exact_scores, 0)})
        return _next(session, question)
    if session.phase == "follow-up":
        return _next(session, question)
    return finish(session, question)


def empty_grade(question: Question) -> Grade:
    """The grade of an answer with no words: every point missed."""
    return grade("", question.expected_points)


def finish(session: InterviewSession, question: Question) -> tuple[InterviewSession, list[Step]]:
    _check(session, question)
    session = session.model_copy(update={"phase": "done"})
    return session, [Step(kind="model-answer", text=question.model_answer, grade=session.overall(),
                          score=session.final_score())]
