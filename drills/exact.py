"""Follow-up questions with one right answer, built from the playbook behind an interview question.

After the free answer, an interview asks up to two of these (issue 26): which observations tell two sibling
hypotheses apart (taken from their `discriminating` facts, with the facts they share or that belong to other
hypotheses as distractors), and in which order to run the checks of the playbook's top-level causes (most
likely first: by `prior`, as the report ranks them). Both are graded exactly, so the score of that part never
depends on wording. Everything is derived from the playbook, so a new hypothesis or check changes the questions
without editing the bank.

Pure: playbooks in, questions out. `for_question` is the one edge that reads the bundled playbook files.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from itertools import combinations
from typing import Literal

from pydantic import BaseModel, ConfigDict

from collectors.vocabulary import spec
from drills.questions import Question
from playbooks.model import Hypothesis, Playbook
from playbooks.templates import render

MAX_OPTIONS = 6
_LETTERS = "abcdefgh"
_CHOICE = re.compile(r"\b(?:[a-h]|[1-8])\b")  # standalone: the "a" ending "idea" is no choice


class ExactQuestion(BaseModel):
    """`answer` holds option indices: the right ones (sorted) for `discriminate`, the right order for `order`."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["discriminate", "order"]
    prompt: str
    options: tuple[str, ...]
    answer: tuple[int, ...]
    playbook: str
    hypotheses: tuple[str, ...]  # the hypothesis ids the question was built from, for the debrief

    def text(self) -> str:
        """The prompt with its lettered options, as both the terminal and Slack show it."""
        lines = [self.prompt, ""]
        lines += [f"{_LETTERS[i]}) {option}" for i, option in enumerate(self.options)]
        return "\n".join(lines)

    def letters(self, indices: tuple[int, ...]) -> str:
        return " ".join(_LETTERS[i] for i in indices)


class ExactResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    score: int  # 0-100
    text: str  # what was right, in one or two sentences


def _stable(seed: str) -> int:
    # Python's hash() changes per process; a question must ask the same thing in the terminal and in Slack.
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")


def _short(claim: str) -> str:
    """The first clause of a claim, placeholders shown as <name>."""
    text = " ".join(render(claim, {"facts": {}}).split())
    for stop in (": ", ". ", "; "):
        if stop in text:
            text = text.split(stop, 1)[0]
    text = text.rstrip(".")
    return text if len(text) <= 110 else text[:107].rstrip() + "..."


def _observation(fact: str) -> str:
    described = spec(fact)
    if described is None:
        return f"`{fact}`"
    meaning = described.meaning.split(": ", 1)[0].split("; ", 1)[0]  # the gist, not the list of values
    return f"{meaning} (`{fact}`)"


def _siblings(playbook: Playbook) -> list[tuple[Hypothesis, Hypothesis]]:
    groups = [playbook.hypotheses] + [h.children for h, _ in playbook.walk() if len(h.children) > 1]
    return [(a, b) for group in groups for a, b in combinations(group, 2)
            if a.discriminating and b.discriminating and set(a.discriminating) != set(b.discriminating)]


def discriminate(playbook: Playbook, seed: str) -> ExactQuestion | None:
    """Which observations would tell A from B? Right: a fact one of them declares discriminating and the other
    does not. Wrong: facts both cite, and facts that decide other hypotheses of the playbook."""
    pairs = _siblings(playbook)
    if not pairs:
        return None
    a, b = pairs[_stable(seed) % len(pairs)]
    right = sorted(set(a.discriminating) ^ set(b.discriminating))[:3]
    shared = sorted((set(a.cite) & set(b.cite)) - set(right))
    others = sorted({f for h, _ in playbook.walk() if h.id not in (a.id, b.id) for f in h.discriminating}
                    - set(a.discriminating) - set(b.discriminating) - set(a.cite) - set(b.cite))
    wrong = (shared + others)[:MAX_OPTIONS - len(right)]
    if not wrong:
        return None
    facts = sorted(right + wrong, key=lambda f: _stable(seed + f))
    return ExactQuestion(
        kind="discriminate", playbook=playbook.id, hypotheses=(a.id, b.id),
        prompt=(f"Two causes from the {playbook.id} playbook: (1) {_short(a.claim)}; (2) {_short(b.claim)}. "
                "Which of these observations would tell them apart? Answer with every letter that applies, "
                "for example `a c`."),
        options=tuple(_observation(f) for f in facts),
        answer=tuple(sorted(facts.index(f) for f in right)))


def order(playbook: Playbook, seed: str) -> ExactQuestion | None:
    """Put the first check of each top-level cause in the order to run them: the most common cause first (by
    prior, as the report ranks causes of equal standing; ties keep the playbook's order)."""
    ranked = sorted(enumerate(playbook.hypotheses), key=lambda item: (-item[1].prior, item[0]))
    checks: list[tuple[str, str]] = []
    for _, h in ranked:
        if h.next_checks:
            check = render(h.next_checks[0], {"facts": {}})
            if check not in (c for c, _ in checks):
                checks.append((check, h.id))
    checks = checks[:4]
    if len(checks) < 3 or len({h.prior for h in playbook.hypotheses}) < 2:
        return None
    shown = sorted(range(len(checks)), key=lambda i: _stable(seed + checks[i][0]))
    if shown == list(range(len(checks))):
        shown = shown[1:] + shown[:1]  # never show them already in order
    return ExactQuestion(
        kind="order", playbook=playbook.id, hypotheses=tuple(checks[i][1] for i in shown),
        prompt=(f"For the {playbook.id} playbook, put these checks in the order you would run them, the most "
                "common cause first. Answer with the letters in order, for example `b a c`."),
        options=tuple(f"`{checks[i][0]}`" for i in shown),
        answer=tuple(shown.index(i) for i in range(len(checks))))


def build(question: Question, playbook: Playbook) -> tuple[ExactQuestion, ...]:
    made = (discriminate(playbook, question.id), order(playbook, question.id))
    return tuple(q for q in made if q is not None)


def parse(text: str, exact: ExactQuestion) -> tuple[int, ...] | None:
    """The option indices an answer names, in its order (letters, or numbers from 1); None if it names an option
    that does not exist, names one twice, or (for an order) leaves one out."""
    tokens = _CHOICE.findall(text.lower())
    picked = tuple((_LETTERS.index(t) if t.isalpha() else int(t) - 1) for t in tokens)
    if not picked or len(set(picked)) != len(picked) or max(picked) >= len(exact.options):
        return None
    if exact.kind == "order" and len(picked) != len(exact.options):
        return None
    return picked


def score(exact: ExactQuestion, picked: tuple[int, ...]) -> ExactResult:
    if exact.kind == "discriminate":
        right = set(exact.answer)
        hits, misses = len(right & set(picked)), len(set(picked) - right)
        value = max(0, hits - misses) * 100 // len(right)
        return ExactResult(score=value, text=f"{value}/100: the observations that tell them apart are "
                                              f"{exact.letters(exact.answer)}.")
    pairs = list(combinations(range(len(exact.answer)), 2))
    position = {option: i for i, option in enumerate(picked)}
    agree = sum(1 for i, j in pairs if position[exact.answer[i]] < position[exact.answer[j]])
    value = agree * 100 // len(pairs)
    return ExactResult(score=value, text=f"{value}/100: {agree} of {len(pairs)} pairs in the right order; the order "
                                          f"is {exact.letters(exact.answer)}.")


@lru_cache(maxsize=1)
def _playbooks() -> dict[str, Playbook]:
    from collectors.yaml_safe import safe_load
    from playbooks.files import playbook_files

    return {p.stem: Playbook.model_validate(safe_load(p.read_text())) for p in playbook_files()}


def for_question(question: Question) -> tuple[ExactQuestion, ...]:
    """The exact follow-ups of a question whose bank entry names its playbook; none otherwise."""
    if not question.related_playbook:
        return ()
    playbook = _playbooks().get(question.related_playbook)
    return build(question, playbook) if playbook else ()
