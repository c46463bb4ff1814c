"""Deterministic grading of an interview answer against a question's expected points.

The grade is a coverage check, not a judgement of correctness: a point counts as covered when every word of
one of its keyword groups appears somewhere in the answer. Both sides go through the same normalisation
(lower case, punctuation to spaces, a light suffix stemmer), so "pods were throttled" meets "throttling pod".
The keyword word `<number>` stands for any number, so "<number> percent" matches "cut spend by 45%".
No model, no network, and no input makes it raise.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from drills.questions import ExpectedPoint

Verdict = Literal["strong", "partial", "weak", "empty"]

STRONG_AT = 80
PARTIAL_AT = 40
# Long enough for any spoken-length answer; bounds the work a pasted novel can cause.
MAX_ANSWER_CHARS = 20_000

_WORD = re.compile(r"[^\W_]+")
# Symbols that carry meaning in answers ("cut cost 45%") become words before punctuation is dropped.
_SYMBOLS = {"%": " percent ", "$": " dollar "}
# A keyword-group word that matches any number in the answer, for points such as "quantified the result".
NUMBER = "<number>"
# Endings whose final consonant doubles before -ing/-ed ("running", "stopped") but that are whole on their own.
_KEEP_DOUBLE = ("ll", "ss", "zz", "ff")


def stem(word: str) -> str:
    """Fold plural, -ing, -ed and a trailing -e so inflections of one word compare equal.

    Deliberately tiny: the same function runs on keywords and answers, so it only has to be consistent,
    not linguistically right. Short words are left alone to avoid collisions ("bus", "dns", "k8s").
    """
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and (w.endswith("pus") or not w.endswith(("ss", "us", "is"))):
        w = w[:-1]  # "-pus" is the plural of an acronym (gpus, cpus), not a word like "status"
    if w.endswith("ing") and len(w) - 3 >= 3:
        w = _undouble(w[:-3])
    elif w.endswith("ed") and not w.endswith("eed") and len(w) - 2 >= 3:
        w = _undouble(w[:-2])
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def _undouble(w: str) -> str:
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiou" and not w.endswith(_KEEP_DOUBLE):
        return w[:-1]
    return w


def words(text: str) -> list[str]:
    """Lower-cased words of `text`; punctuation, underscores and symbols separate words."""
    folded = unicodedata.normalize("NFKC", text[:MAX_ANSWER_CHARS]).casefold()
    for symbol, word in _SYMBOLS.items():
        folded = folded.replace(symbol, word)
    return _WORD.findall(folded)


def normalise(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


class PointResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    point: str
    covered: bool
    matched: tuple[str, ...] = ()  # the words of the keyword group that matched, as written in the bank
    # "model" when an optional language model credited the point; `quote` is then the answer's own words.
    by: Literal["keywords", "model"] = "keywords"
    quote: str = ""

    @property
    def shown(self) -> str:
        """What the candidate said that earned the point."""
        return f"“{self.quote}” (credited by the model)" if self.by == "model" else " ".join(self.matched)


class Grade(BaseModel):
    model_config = ConfigDict(frozen=True)

    score: int
    verdict: Verdict
    points: tuple[PointResult, ...]
    word_count: int

    @property
    def covered(self) -> list[PointResult]:
        return [p for p in self.points if p.covered]

    @property
    def missed(self) -> list[PointResult]:
        return [p for p in self.points if not p.covered]


def _match(point: ExpectedPoint, answer: set[str], number: str | None) -> tuple[str, ...] | None:
    for group in point.keywords:
        wants_number = NUMBER in group
        group_words = words(group.replace(NUMBER, " "))
        if wants_number and number is None:
            continue
        if (group_words or wants_number) and all(stem(w) in answer for w in group_words):
            return (number, *group_words) if wants_number and number is not None else tuple(group_words)
    return None


def verdict_for(score: int, word_count: int) -> Verdict:
    if word_count == 0:
        return "empty"
    if score >= STRONG_AT:
        return "strong"
    return "partial" if score >= PARTIAL_AT else "weak"


def _grade(results: Sequence[PointResult], word_count: int) -> Grade:
    total = len(results)
    score = round(100 * sum(r.covered for r in results) / total) if total else 0
    return Grade(score=score, verdict=verdict_for(score, word_count), points=tuple(results), word_count=word_count)


def grade(answer: str, points: Sequence[ExpectedPoint]) -> Grade:
    """Which expected points `answer` covers, with the words that showed it, and a 0-100 score."""
    answer_words = words(answer if isinstance(answer, str) else "")
    present = {stem(w) for w in answer_words}
    number = next((w for w in answer_words if any(c.isdigit() for c in w)), None)
    results = []
    for point in points:
        matched = _match(point, present, number)
        results.append(PointResult(id=point.id, point=point.point, covered=matched is not None,
                                   matched=matched or ()))
    return _grade(results, len(answer_words))


def combine(grades: Iterable[Grade]) -> Grade:
    """Union of several grades of the same question (main answer plus follow-ups): a point is covered if any
    answer covered it; the first answer that covered it supplies the matched words."""
    merged: dict[str, PointResult] = {}
    word_count = 0
    for g in grades:
        word_count += g.word_count
        for p in g.points:
            if p.id not in merged or (p.covered and not merged[p.id].covered):
                merged[p.id] = p
    return _grade(list(merged.values()), word_count)


def credit(result: Grade, quotes: Mapping[str, str]) -> Grade:
    """`result` with the missed points in `quotes` (id -> the answer's words that cover it) credited by a model.
    Points the keywords already covered are left as they are; unknown ids are ignored."""
    points = [p.model_copy(update={"covered": True, "by": "model", "quote": quotes[p.id]})
              if not p.covered and p.id in quotes else p for p in result.points]
    return _grade(points, result.word_count)
