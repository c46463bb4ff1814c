"""The symptom-words catalog (symptom_words.yaml): per playbook, what a symptom is about and what is wrong with it."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import re2
from pydantic import BaseModel, ConfigDict, Field

from collectors.catalogs.validated import validated
from collectors.lazy_regex import LazyPattern

_CATALOG = Path(__file__).parent / "symptom_words.yaml"
_SEPARATOR = LazyPattern(r"[\s-]+")


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


class Catalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    settled: tuple[str, ...] = ()
    symptoms: tuple[SymptomWords, ...] = Field(min_length=1)


def phrase_pattern(phrase: str) -> str:
    """An RE2 pattern for a phrase as people and programs write it: its words joined by a space, a hyphen, an
    underscore or nothing ("gpu util": GPU-Util, gpu_util, GPUutil), an apostrophe straight or curly, and bounded
    by word edges where the phrase starts or ends with a word character."""
    words = [re.escape(w).replace("'", "['\u2019]") for w in _SEPARATOR.split(phrase.strip().lower()) if w]
    body = r"[\s_-]*".join(words)
    start = r"\b" if re.match(r"\w", phrase.strip()) else ""
    end = r"\b" if re.search(r"\w$", phrase.strip()) else ""
    return f"{start}{body}{end}"


def _alternation(phrases: tuple[str, ...]) -> Any:
    return re2.compile("(?i)(?:" + "|".join(phrase_pattern(p) for p in phrases) + ")") if phrases else None


class CompiledWords:
    def __init__(self, spec: SymptomWords) -> None:
        self.spec = spec
        self.subject: Any = _alternation(spec.subjects)
        self.problem: Any = _alternation(spec.problems)
        self.figures: Any = re2.compile("(?i)(?:" + "|".join(spec.figures) + ")") if spec.figures else None
        self.unless: Any = _alternation(spec.unless)
        self.about: Any = _alternation(spec.about)
        # The needle a line must hold before any pattern runs: each subject's first word, in lower case.
        self.hints = tuple(sorted({_SEPARATOR.split(s.strip().lower())[0] for s in spec.subjects}))


@cache
def symptom_words() -> tuple[tuple[CompiledWords, ...], Any]:
    """The compiled entries, and the pattern of a sentence that says the trouble is over."""
    catalog = validated((_CATALOG,), Catalog.model_validate)
    return tuple(CompiledWords(s) for s in catalog.symptoms), _alternation(catalog.settled)
