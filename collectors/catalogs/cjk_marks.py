"""The CJK marks catalog (cjk_marks.yaml): how Chinese, Japanese and Korean sentences deny, hedge or ask."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

import re2
from pydantic import BaseModel, ConfigDict, Field

from collectors.catalogs.validated import validated

_CATALOG = Path(__file__).parent / "cjk_marks.yaml"
Language = Literal["zh", "ja", "ko"]


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


class Catalog(BaseModel):
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
    catalog = validated((_CATALOG,), Catalog.model_validate)
    return {"zh": CompiledMarks(catalog.zh), "ja": CompiledMarks(catalog.ja), "ko": CompiledMarks(catalog.ko)}
