"""An optional second opinion on an interview answer: a model may credit expected points the keywords missed.

The model only adds. It sees the question, the points the keywords did not find and the redacted answer, and it
must quote the answer's own words for every point it credits; a quote that is not in the answer, a point that
was not asked about, or output that is not the JSON asked for is ignored, and the keyword grade stands.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, Field, ValidationError

from bot.assist.llm import Assistant, ModelError
from collectors.redact import redact_text
from drills.grading import Grade, credit, words
from drills.interview import Grader
from drills.questions import Question

MIN_QUOTE_WORDS = 3
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)

SYSTEM = (
    "You check a candidate's interview answer against expected points. Only credit a point when the answer "
    "states it in substance. For every point you credit, copy the exact words from the answer that state it "
    '(at least three words). Reply with JSON only: {"covered": [{"id": "<point id>", "quote": "<exact words>"}]}. '
    'Credit nothing rather than guess: {"covered": []}.'
)


class _Credit(BaseModel):
    id: str
    quote: str


class _Reply(BaseModel):
    covered: list[_Credit] = Field(default_factory=list)


def _said(quote: str, answer: str) -> bool:
    """The quote is the answer's own words: same words in the same order, whatever the spacing or case."""
    q = words(quote)
    return len(q) >= MIN_QUOTE_WORDS and f" {' '.join(q)} " in f" {' '.join(words(answer))} "


def parse_credits(text: str, answer: str, missed: set[str]) -> dict[str, str]:
    """The credits of a model reply that pass the checks: id -> quote. Never raises."""
    found = _JSON_OBJECT.search(text)
    if found is None:
        return {}
    try:
        reply = _Reply.model_validate(json.loads(found.group(0)))
    except (ValueError, ValidationError):
        return {}
    return {c.id: c.quote.strip() for c in reply.covered if c.id in missed and _said(c.quote, answer)}


def review(answer: str, question: Question, result: Grade, assistant: Assistant) -> Grade:
    """The keyword grade, with the points the model credited (and quoted) added."""
    missed = {p.id: p.point for p in result.missed}
    if not missed or not assistant.enabled or not assistant.grading:
        return result
    clean = redact_text(answer)
    prompt = json.dumps({"question": question.question, "points": [{"id": k, "point": v} for k, v in missed.items()],
                         "answer": clean}, ensure_ascii=False)
    try:
        reply = assistant.generate(SYSTEM, prompt)
    except ModelError:
        return result
    return credit(result, parse_credits(reply.text, clean, set(missed)))


def model_grader(assistant: Assistant) -> Grader | None:
    """A grader for drills.interview.submit, or None when no model grades."""
    if not assistant.enabled or not assistant.grading:
        return None
    return lambda answer, question, result: review(answer, question, result, assistant)
