"""`triagebot interview [TOPIC]`: one mock-interview question in the terminal.

Reading and printing live here; the exchange itself is drills.interview, so the chat surface and this loop
behave the same. An answer can span lines and ends with an empty line (or end of input). A line that is
only `hint`, `skip` or `quit` is a command, not an answer.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rich.console import Console

from bot.render.drills.interview_terminal import question_list, render
from drills import interview
from drills.interview_pick import HINT, QUIT, SKIP, PickError, check_topic, choose
from drills.questions import QuestionBank, QuestionBankError, load_bank

InputFn = Callable[[str], str]

MAX_ANSWER_LINES = 200
GRADE = "grade"  # `triagebot interview grade ...`: not a topic (topics are the bank's file names)


class InterviewUsageError(ValueError):
    """A mistake in the command (unknown topic, id, or filter); the CLI prints it in one line, exit 2."""


def read_answer(input_fn: InputFn) -> str | None:
    """Lines up to an empty line; None when input ends (or only blank lines come) before any text."""
    lines: list[str] = []
    # Bounded, so an input source that never ends and only sends blank lines cannot spin forever.
    for _ in range(MAX_ANSWER_LINES):
        try:
            line = input_fn("> " if not lines else "  ")
        except EOFError:
            break
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line)
        if len(lines) == 1 and line.strip().lower() in HINT | SKIP | QUIT:
            break
    return "\n".join(lines) if lines else None


def run_interview(args: argparse.Namespace, console: Console, input_fn: InputFn = input,
                  grader: interview.Grader | None = None) -> int:
    """The exchange in the terminal; `grader` is the optional model's second opinion (bot.assist.grade)."""
    try:
        bank = load_bank()
    except QuestionBankError as err:
        raise InterviewUsageError(f"broken question bank: {err}") from None
    topic = getattr(args, "topic", None)
    if topic == GRADE:
        from bot.cli.interview_grade import GradeUsageError, run_grade

        try:
            return run_grade(args, bank, console, grader)
        except GradeUsageError as err:
            raise InterviewUsageError(str(err)) from None
    if getattr(args, "answer_file", None):
        raise InterviewUsageError("--answer-file goes with `triagebot interview grade`")
    try:
        if getattr(args, "list", False):
            _list_checked(bank, topic, console)
            return 0
        question = choose(bank, topic, getattr(args, "difficulty", None), getattr(args, "question_id", None),
                          getattr(args, "seed", None))
    except PickError as err:
        raise InterviewUsageError(str(err)) from None
    session, steps = interview.start(question, max_follow_ups=getattr(args, "follow_ups", 1))
    render(steps, question, session, console)
    while session.phase != "done":
        text = read_answer(input_fn)
        # End of input counts as quit: show the model answer rather than leave the exchange hanging.
        command = text.strip().lower() if text is not None else "quit"
        if command in HINT:
            session, steps = interview.hint(session, question)
        elif command in SKIP:
            session, steps = interview.skip(session, question)
        elif command in QUIT or text is None:
            session, steps = interview.finish(session, question)
        else:
            session, steps = interview.submit(session, question, text, grader=grader)
        render(steps, question, session, console)
    return 0


def _list_checked(bank: QuestionBank, topic: str | None, console: Console) -> None:
    if topic is not None:
        check_topic(bank, topic)
    question_list(bank, topic, console)
