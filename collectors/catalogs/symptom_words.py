"""The symptom-words catalog (symptom_words.yaml): per playbook, what a symptom is about and what is wrong with it."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

import re2
from pydantic import BaseModel, ConfigDict, Field

from collectors.catalogs.validated import validated
from collectors.lazy_regex import LazyPattern

_CATALOG = Path(__file__).parent / "symptom_words.yaml"
# How Chinese, Japanese and Korean sentences deny, hedge and ask (collectors/parsers/text/cjk.py reads with it).
_MARKS = Path(__file__).parent / "cjk_marks.yaml"
Language = Literal["zh", "ja", "ko"]
_SEPARATOR = LazyPattern(r"[\s-]+")
# Where ASCII and another script meet inside a word: "gpu利用率" is written "GPU 利用率" as often, so the two halves are
# joined like two words.
_SCRIPT_RUN = LazyPattern(r"[\x00-\x7f]+|[^\x00-\x7f]+")
_ASCII_WORD = LazyPattern(r"[A-Za-z0-9_]")
LANGUAGES: tuple[Language, ...] = ("zh", "ja", "ko")


class Localized(BaseModel):
    """An entry's words in one of Chinese, Japanese and Korean: read, with the English ones, only in a sentence of that
    language (collectors/parsers/text/cjk.py decides which), where its negations and questions are that language's."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    subjects: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    about: tuple[str, ...] = ()
    source: str = Field(min_length=1)


class SymptomWords(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    symptom: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    subjects: tuple[str, ...] = Field(min_length=1)
    problems: tuple[str, ...] = Field(min_length=1)
    figures: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    # Words one of which the sentence must also hold, when the subject is a bare noun ("the utilization rate") that
    # is the symptom's only beside them (a GPU or a board named in the sentence).
    about: tuple[str, ...] = ()
    source: str = Field(min_length=1)
    zh: Localized | None = None
    ja: Localized | None = None
    ko: Localized | None = None


class Catalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    settled: tuple[str, ...] = ()
    symptoms: tuple[SymptomWords, ...] = Field(min_length=1)


def phrase_pattern(phrase: str) -> str:
    """An RE2 pattern for a phrase as people and programs write it: its words joined by a space, a hyphen, an
    underscore or nothing ("gpu util": GPU-Util, gpu_util, GPUutil), an apostrophe straight or curly, and bounded
    by word edges where the phrase starts or ends with a word character."""
    words = [re.escape(run).replace("'", "['\u2019]") for w in _SEPARATOR.split(phrase.strip().lower()) if w
             for run in _SCRIPT_RUN.findall(w)]
    body = r"[\s_-]*".join(words)
    # RE2's word edge is an ASCII one: a phrase that starts or ends in another script (利用率) has none to hold to.
    start = r"\b" if _ASCII_WORD.match(phrase.strip()[:1]) else ""
    end = r"\b" if _ASCII_WORD.match(phrase.strip()[-1:]) else ""
    return f"{start}{body}{end}"


def _alternation(phrases: tuple[str, ...]) -> Any:
    return re2.compile("(?i)(?:" + "|".join(phrase_pattern(p) for p in phrases) + ")") if phrases else None


def _hint(subject: str) -> str:
    """The needle of a subject: its first word, or of a word written in two scripts ("gpu利用率") its first half."""
    return str(_SCRIPT_RUN.findall(_SEPARATOR.split(subject.strip().lower())[0])[0])


class Words:
    """The compiled halves of an entry, in English or in English and one other language."""

    def __init__(self, subjects: tuple[str, ...], problems: tuple[str, ...], figures: tuple[str, ...],
                 unless: tuple[str, ...], about: tuple[str, ...]) -> None:
        self.subject: Any = _alternation(subjects)
        self.problem: Any = _alternation(problems)
        self.figures: Any = re2.compile("(?i)(?:" + "|".join(figures) + ")") if figures else None
        self.unless: Any = _alternation(unless)
        self.about: Any = _alternation(about)


class CompiledWords:
    def __init__(self, spec: SymptomWords) -> None:
        self.spec = spec
        self.english = Words(spec.subjects, spec.problems, spec.figures, spec.unless, spec.about)
        # People keep the English words and Kubernetes' identifiers (Pending, OOMKilled) in any language: a sentence
        # in one of the three reads its own words and the English ones.
        self.localized: dict[Language, Words] = {}
        subjects = list(spec.subjects)
        for language in LANGUAGES:
            words = getattr(spec, language)
            if words is None:
                continue
            subjects += words.subjects
            self.localized[language] = Words(spec.subjects + words.subjects, spec.problems + words.problems,
                                             spec.figures + words.figures, spec.unless + words.unless,
                                             spec.about + words.about)
        # The needle a line must hold before any pattern runs: each subject's first word, in lower case.
        self.hints = tuple(sorted({_hint(s) for s in subjects}))

    def words(self, language: Language | None) -> Words:
        """The halves a sentence in this language is read with (English for None or a language it has no words in)."""
        return self.localized.get(language, self.english) if language is not None else self.english


@cache
def symptom_words() -> tuple[tuple[CompiledWords, ...], Any]:
    """The compiled entries, and the pattern of a sentence that says the trouble is over."""
    catalog = validated((_CATALOG,), Catalog.model_validate)
    return tuple(CompiledWords(s) for s in catalog.symptoms), _alternation(catalog.settled)


# The CJK marks catalog (cjk_marks.yaml).
class Marks(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    source: str = Field(min_length=1)
    clause_breaks: tuple[str, ...] = Field(min_length=1)
    negation_before: tuple[str, ...] = ()
    negation_after: tuple[str, ...] = ()
    not_negation: tuple[str, ...] = ()
    only: str | None = None
    question_endings: tuple[str, ...] = Field(min_length=1)
    question_words: tuple[str, ...] = ()


class MarksCatalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    zh: Marks
    ja: Marks
    ko: Marks


def _either(patterns: tuple[str, ...]) -> Any:
    return re2.compile("(?:" + "|".join(patterns) + ")") if patterns else None


class CompiledMarks:
    def __init__(self, spec: Marks) -> None:
        self.spec = spec
        self.breaks: Any = _either(spec.clause_breaks)
        self.before: Any = _either(spec.negation_before)
        self.after: Any = _either(spec.negation_after)
        self.plain: Any = _either(tuple(re.escape(w) for w in spec.not_negation))
        # The question's last word, then nothing but closing marks, emphasis or a full stop.
        self.question: Any = re2.compile("(?:" + "|".join(spec.question_endings) + r")[\s。.!~*_`'\")]*$")
        self.asking: Any = _either(spec.question_words)


@cache
def cjk_marks() -> dict[Language, CompiledMarks]:
    catalog = validated((_MARKS,), MarksCatalog.model_validate)
    return {"zh": CompiledMarks(catalog.zh), "ja": CompiledMarks(catalog.ja), "ko": CompiledMarks(catalog.ko)}
