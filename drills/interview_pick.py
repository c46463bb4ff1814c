"""Picking an interview question from the bank, and the words a candidate types instead of an answer.

Shared by the terminal and Slack interview modes, so both pick and obey the same way.
"""

from __future__ import annotations

from drills.questions import Question, QuestionBank

HINT = {"hint", "?", "/hint"}
SKIP = {"skip", "/skip", "pass"}
QUIT = {"quit", "q", "exit", "/quit", "/model"}


class PickError(ValueError):
    """No question matches what was asked (unknown id or topic, or an empty filter); the message says which."""


def choose(bank: QuestionBank, topic: str | None, difficulty: str | None, question_id: str | None,
           seed: int | None) -> Question:
    if question_id:
        found = bank.get(question_id)
        if found is None:
            raise PickError(f"unknown question id {question_id!r}; "
                                      f"list them with `triagebot interview TOPIC --list`")
        return found
    check_topic(bank, topic)
    picked = bank.pick(topic=topic, difficulty=difficulty, seed=seed)
    if picked is None:
        which = f"{difficulty} questions" if difficulty else "questions"
        raise PickError(f"no {which} in topic {topic}" if topic else f"no {which} in the bank")
    return picked


def check_topic(bank: QuestionBank, topic: str | None) -> None:
    if topic is not None and topic not in bank.topic_names():
        raise PickError(f"unknown topic {topic!r}; known topics: {', '.join(bank.topic_names())}")
