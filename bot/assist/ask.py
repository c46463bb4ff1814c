"""Answering a question from the passages: retrieval always, a generated answer only when a model is set and the
answer passes the citation guard.

The question is redacted before anything else happens to it, so a pasted token or password is neither searched,
stored in the answer, nor sent to a model. A model sees only the redacted question and the numbered passages.
Its answer is kept only when it is not empty, cites at least one passage as [n], and every number it cites is a
passage it was given; otherwise the passages alone are the answer and `fallback` says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from bot.assist.corpus import Hit
from bot.assist.llm import NO_MODEL, Assistant, ModelError
from collectors.redact import redact_text

if TYPE_CHECKING:  # an annotation only: importing search loads langchain
    from bot.assist.search import Index

MAX_QUESTION_CHARS = 2_000
# Enough of a passage for a model to answer from; the longest passages are about twice this.
PROMPT_PASSAGE_CHARS = 1_600
_CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")

SYSTEM_PROMPT = """You help on-call engineers of GPU Kubernetes clusters. Answer the question using only the \
numbered passages you are given (runbook hypotheses, the NVIDIA Xid catalog, interview notes and the bot's docs).
Rules:
- Answer in at most five short sentences or bullets.
- After every statement, cite the passage it comes from as [1], [2], ... using the passage numbers given.
- Do not use knowledge that is not in the passages. If they do not answer the question, say so in one sentence \
and cite the closest passage.
- Commands must be copied from the passages, never invented."""


class QuestionError(ValueError):
    """A question that cannot be asked: empty, or too long. The message says what is expected."""


class Answer(BaseModel):
    """What /ask and `triagebot ask` show: the passages, and a generated answer only if it passed the guard."""

    model_config = ConfigDict(frozen=True)

    question: str  # redacted
    hits: list[Hit]
    text: str | None = None  # the generated answer; None when the passages alone are the answer
    generated: bool = False
    model: str | None = None
    fallback: str | None = None  # why there is no generated answer (no model, timeout, guard)
    retriever: str = "bm25"
    notes: list[str] = []  # what the search could not cover, e.g. no docs folder in this installation

    @property
    def matched(self) -> bool:
        return bool(self.hits)


def check_question(question: str) -> str:
    """The question with surrounding blanks removed; QuestionError when it is empty or too long."""
    text = question.strip()
    if not text:
        raise QuestionError("the question is empty: ask something, e.g. \"what does Xid 79 mean\"")
    if len(text) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question is {len(text):,} characters long; ask in at most "
                            f"{MAX_QUESTION_CHARS:,} (paste logs to `triagebot analyze` instead)")
    return text


def cited_numbers(text: str) -> list[int]:
    """Every passage number cited as [n] or [n, m] in `text`, in order of first appearance."""
    numbers = (int(n) for group in _CITATION.findall(text) for n in re.split(r"[,;]", group))
    return list(dict.fromkeys(numbers))


def guard_problem(text: str, passages: int) -> str | None:
    """Why a generated answer must be discarded, or None when it may be shown."""
    if not text.strip():
        return "the model's answer was empty"
    cited = cited_numbers(text)
    if not cited:
        return "the model's answer cited no passage"
    unknown = [n for n in cited if not 1 <= n <= passages]
    if unknown:
        listed = ", ".join(f"[{n}]" for n in unknown)
        return f"the model's answer cited {listed}, but only passages [1]-[{passages}] exist"
    return None


def prompt_for(question: str, hits: Sequence[Hit]) -> tuple[str, str]:
    """The system and user messages: the (already redacted) question and the numbered passages, nothing else."""
    blocks = []
    for n, hit in enumerate(hits, start=1):
        p = hit.passage
        text = p.text if len(p.text) <= PROMPT_PASSAGE_CHARS else p.text[:PROMPT_PASSAGE_CHARS] + " …"
        blocks.append(f"[{n}] {p.title} ({p.cite})\n{text}")
    user = (f"Question: {question}\n\nPassages:\n\n" + "\n\n".join(blocks)
            + "\n\nAnswer the question from these passages, citing them as [n].")
    return SYSTEM_PROMPT, user


def answer(question: str, index: Index, assistant: Assistant = NO_MODEL, k: int = 4) -> Answer:
    """Search the index for the redacted question; with a model, add a short generated answer that cites the
    passages as [n], kept only if it passes the guard. Raises QuestionError for an empty or over-long question."""
    redacted = redact_text(check_question(question))
    hits = index.search(redacted, k)

    def reply(fallback: str | None = None, text: str | None = None, model: str | None = None) -> Answer:
        return Answer(question=redacted, hits=hits, text=text, generated=text is not None, model=model,
                      fallback=fallback, retriever=index.stats.retriever, notes=list(index.stats.notes))

    if not hits:
        return reply("no passage matched the question")
    if not assistant.enabled:
        return reply("no model is configured")
    system, user = prompt_for(redacted, hits)
    # From here `model` names the model that was asked, whether or not its answer is shown.
    try:
        generated = assistant.generate(system, user)
    except ModelError as err:
        return reply(f"the model gave no answer: {err}", model=assistant.name)
    problem = guard_problem(generated.text, len(hits))
    if problem is not None:
        return reply(f"{problem}, so it was discarded", model=assistant.name)
    return reply(text=redact_text(generated.text), model=generated.model)
