"""`triagebot interview grade --id ID --answer-file F [--format json]`: grade one answer without the exchange.

The same grader as the terminal and Slack interviews (drills.interview.submit), so a script, a CI job or a
calibration run sees exactly the grade a candidate would.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from bot.render.drills.grade import render_grade
from drills import interview
from drills.grading import Grade
from drills.questions import QuestionBank

MAX_ANSWER_BYTES = 1024 * 1024


class GradeUsageError(ValueError):
    """Bad input to `interview grade`; printed in one line, exit 2."""


def read_answer_file(name: str) -> str:
    if name == "-":
        return sys.stdin.read(MAX_ANSWER_BYTES)
    path = Path(name)
    try:
        if path.is_dir():
            raise GradeUsageError(f"cannot read answer file {name}: it is a folder")
        with path.open("rb") as handle:
            return handle.read(MAX_ANSWER_BYTES).decode("utf-8", errors="replace")
    except OSError as err:
        raise GradeUsageError(f"cannot read answer file {name}: {err.strerror or err}") from None


def grade_answer(bank: QuestionBank, question_id: str, answer: str,
                 grader: interview.Grader | None = None) -> Grade:
    question = bank.get(question_id)
    if question is None:
        raise GradeUsageError(f"unknown question id {question_id!r}; list them with "
                              "`triagebot interview --list` then `triagebot interview TOPIC --list`")
    session, _ = interview.start(question, max_follow_ups=0)
    session, _ = interview.submit(session, question, answer, grader=grader)
    overall = session.overall()
    if overall is None:  # an answer with no words: graded as empty, not refused
        return interview.empty_grade(question)
    return overall


def run_grade(args: argparse.Namespace, bank: QuestionBank, console: Console,
              grader: interview.Grader | None = None) -> int:
    question_id = getattr(args, "question_id", None)
    answer_file = getattr(args, "answer_file", None)
    if not question_id or not answer_file:
        raise GradeUsageError("usage: triagebot interview grade --id ID --answer-file FILE|- [--format json]")
    if bank.get(question_id) is None:  # before reading the answer, so the id error is the one shown
        grade_answer(bank, question_id, "", grader)
    result = grade_answer(bank, question_id, read_answer_file(answer_file), grader)
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(result.to_json() + "\n")
        return 0
    render_grade(result, console)
    return 0
