"""The interview question bank: YAML files in drills/questions/, one file per topic.

Each file holds `questions:`, a list of entries. An entry's `topic` must equal its file's stem, so the
grouping on disk and the topic a user types never disagree. Errors name the file and the entry.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from collectors.yaml_safe import safe_load
from drills.levels import DIFFICULTIES as DIFFICULTIES
from drills.levels import Difficulty as Difficulty

QUESTIONS_DIR = Path(__file__).parent / "questions"

Kind = Literal["concept", "scenario", "design", "behavioural"]
# What grading by meaning wants per expected point (issue 26): claims worded in different ways, and wrong claims.
MIN_CLAIMS = 3
MIN_MISCONCEPTIONS = 2

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# A source must point at seed lines, e.g. "seed 002:181-195" or "seed 000, hard drill (000:64-76)".
_CITATION = re.compile(r"\b00[0-4]:\d+(?:-\d+)?\b")
# A letter or digit, or a symbol the grader reads as a word ("%" is "percent"); checked after NFKC like grading.
_HAS_WORD = re.compile(r"[^\W_]|[%$]")


class QuestionBankError(ValueError):
    """A question file that cannot be used; the message names the file and the entry."""


class Misconception(BaseModel):
    """A wrong claim a candidate may make about a point. The rules find it when one clause matches a phrase from
    every group in `says` (each group lists alternatives) and none of those matches is negated; the meaning
    comparison (drills.meaning) finds it when an asserted clause is close to `claim`. `says` is optional: an item
    without it is found by meaning only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    claim: str = Field(min_length=3)
    says: tuple[tuple[str, ...], ...] = ()

    @field_validator("says")
    @classmethod
    def _groups(cls, groups: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        for group in groups:
            if not group or not all(_HAS_WORD.search(unicodedata.normalize("NFKC", p)) for p in group):
                raise ValueError("every group in `says` needs at least one phrase with letters or digits")
        return groups


class ExpectedPoint(BaseModel):
    """One thing a good answer asserts. `keywords` and `phrases` are the ways of naming its concept (the
    grader treats them alike: each is one phrase); `claims` are sentences a candidate would write to assert it,
    each in a different way, compared by meaning (drills.meaning); `misconceptions` are wrong claims about it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    point: str = Field(min_length=3)
    keywords: tuple[str, ...] = Field(min_length=1)
    phrases: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    misconceptions: tuple[Misconception, ...] = ()

    @property
    def concepts(self) -> tuple[str, ...]:
        return (*self.keywords, *self.phrases)

    @property
    def references(self) -> tuple[str, ...]:
        """What an answer's clauses are compared with by meaning: the claims, or the point's own wording while
        the bank has none for it."""
        return self.claims or (self.point,)

    @field_validator("claims")
    @classmethod
    def _sentences(cls, claims: tuple[str, ...]) -> tuple[str, ...]:
        for claim in claims:
            if len(claim.split()) < 3:
                raise ValueError(f"claim {claim!r} is not a sentence (three words or more)")
        return claims

    @field_validator("id")
    @classmethod
    def _kebab(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"point id {value!r} must be kebab-case")
        return value

    @field_validator("keywords", "phrases")
    @classmethod
    def _words(cls, groups: tuple[str, ...]) -> tuple[str, ...]:
        # A group of punctuation only would normalise to nothing and match every answer.
        for group in groups:
            if not _HAS_WORD.search(unicodedata.normalize("NFKC", group)):
                raise ValueError(f"keyword group {group!r} has no letters or digits")
        return groups


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    topic: str
    difficulty: Difficulty
    kind: Kind
    question: str = Field(min_length=10)
    expected_points: tuple[ExpectedPoint, ...] = Field(min_length=2)
    follow_ups: tuple[str, ...] = ()
    hints: tuple[str, ...] = Field(min_length=1, max_length=3)
    model_answer: str = Field(min_length=40)
    source: tuple[str, ...] = Field(min_length=1)
    related_playbook: str | None = None

    @field_validator("id", "topic")
    @classmethod
    def _kebab(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"{value!r} must be kebab-case")
        return value

    @field_validator("source")
    @classmethod
    def _cited(cls, sources: tuple[str, ...]) -> tuple[str, ...]:
        for text in sources:
            if not _CITATION.search(text):
                raise ValueError(f"source {text!r} has no seed citation like 002:181 or 000:64-76")
        return sources

    @model_validator(mode="after")
    def _unique_points(self) -> Question:
        ids = [p.id for p in self.expected_points]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"expected point ids repeat: {', '.join(dupes)}")
        return self


@dataclass(frozen=True)
class TopicInfo:
    topic: str
    count: int
    difficulties: dict[str, int]


@dataclass
class QuestionBank:
    questions: dict[str, Question] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)  # question id -> file it came from

    def __len__(self) -> int:
        return len(self.questions)

    def get(self, question_id: str) -> Question | None:
        return self.questions.get(question_id)

    def topics(self) -> list[TopicInfo]:
        by_topic: dict[str, list[Question]] = {}
        for q in self.questions.values():
            by_topic.setdefault(q.topic, []).append(q)
        return [TopicInfo(topic=t, count=len(qs),
                          difficulties={d: sum(1 for q in qs if q.difficulty == d) for d in DIFFICULTIES})
                for t, qs in sorted(by_topic.items())]

    def meaning_gaps(self) -> tuple[list[str], list[str]]:
        """Points ("question/point") with fewer than MIN_CLAIMS claims, and with fewer than MIN_MISCONCEPTIONS
        misconceptions: what grading by meaning still lacks in the bank."""
        points = [(f"{q.id}/{p.id}", p) for q in self.select() for p in q.expected_points]
        return ([key for key, p in points if len(p.claims) < MIN_CLAIMS],
                [key for key, p in points if len(p.misconceptions) < MIN_MISCONCEPTIONS])

    def topic_names(self) -> list[str]:
        return [t.topic for t in self.topics()]

    def select(self, topic: str | None = None, difficulty: str | None = None,
               kind: str | None = None) -> list[Question]:
        """Questions matching every given filter, in id order (stable, so seeded picks repeat)."""
        return sorted((q for q in self.questions.values()
                       if (topic is None or q.topic == topic)
                       and (difficulty is None or q.difficulty == difficulty)
                       and (kind is None or q.kind == kind)), key=lambda q: q.id)

    def pick(self, topic: str | None = None, difficulty: str | None = None, kind: str | None = None,
             seed: int | None = None, exclude: Iterable[str] = ()) -> Question | None:
        """One random matching question; the same seed gives the same question. Excluded ids are skipped
        unless nothing else is left, so a long drill session can cycle without running dry."""
        pool = self.select(topic, difficulty, kind)
        skip = set(exclude)
        fresh = [q for q in pool if q.id not in skip] or pool
        if not fresh:
            return None
        return random.Random(seed).choice(fresh)


def _entry_label(index: int, raw: object) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        return f"entry {index} (id {raw['id']})"
    return f"entry {index}"


def _error_text(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    extra = f" (+{err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{where + ': ' if where else ''}{first['msg']}{extra}"


def load_file(path: Path) -> list[Question]:
    try:
        raw = safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise QuestionBankError(f"{path}: cannot read ({err.strerror or err})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise QuestionBankError(f"{path}: not valid YAML{where} ({str(err).splitlines()[0]})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("questions"), list):
        raise QuestionBankError(f"{path}: expected a mapping with a `questions:` list")
    out: list[Question] = []
    for index, item in enumerate(raw["questions"], start=1):
        label = _entry_label(index, item)
        try:
            question = Question.model_validate(item)
        except ValidationError as err:
            raise QuestionBankError(f"{path}: {label}: {_error_text(err)}") from None
        if question.topic != path.stem:
            raise QuestionBankError(f"{path}: {label}: topic {question.topic!r} must match the file name "
                                    f"{path.stem!r}")
        out.append(question)
    return out


def load_bank(directory: Path = QUESTIONS_DIR) -> QuestionBank:
    bank = QuestionBank()
    files = sorted(directory.glob("*.yaml")) if directory.is_dir() else []
    if not files:
        raise QuestionBankError(f"{directory}: no question files (*.yaml)")
    for path in files:
        for question in load_file(path):
            if question.id in bank.questions:
                raise QuestionBankError(f"{path}: id {question.id!r} already used in {bank.files[question.id]}")
            bank.questions[question.id] = question
            bank.files[question.id] = path
    return bank
