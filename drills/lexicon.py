"""The grader's English: stopwords, synonyms, negators, dismissals and relation words, read from lexicon.yaml.

Kept as data so a reviewer can see (and extend) what the grader treats as "not", "instead of" or "because"
without reading code. Loaded once; every entry goes through the same stemmer as the answers it is matched on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from collectors.yaml_safe import safe_load
from drills.grading_text import stem, words

LEXICON_PATH = Path(__file__).parent / "lexicon.yaml"

Phrase = tuple[str, ...]


@dataclass(frozen=True)
class Lexicon:
    stopwords: frozenset[str]
    synonyms: dict[Phrase, Phrase]  # a variant's stemmed words -> the canonical spelling's
    negators: tuple[Phrase, ...]
    short_negators: frozenset[Phrase]
    purpose_markers: tuple[Phrase, ...]
    dismissals: tuple[Phrase, ...]
    relations: frozenset[str]
    verbs: frozenset[str]
    reasons: frozenset[str]
    fillers: frozenset[str]
    longest_variant: int
    function_words: frozenset[str] = frozenset()  # not content words when meaning checks words (drills.meaning)
    tight: frozenset[Phrase] = frozenset()  # dismissals whose words must be adjacent ("just a", not "just that a")
    widening: frozenset[str] = frozenset()  # "not just", "not only": the not widens, it does not deny


def _phrase(text: str) -> Phrase:
    return tuple(stem(w) for w in words(text))


def _phrases(raw: object) -> tuple[Phrase, ...]:
    items = raw if isinstance(raw, list) else []
    return tuple(p for p in (_phrase(str(x)) for x in items) if p)


@cache
def lexicon(path: Path = LEXICON_PATH) -> Lexicon:
    raw = safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a mapping")
    synonyms: dict[Phrase, Phrase] = {}
    for canonical, variants in (raw.get("synonyms") or {}).items():
        target = _phrase(str(canonical))
        for variant in variants or []:
            key = _phrase(str(variant))
            if key and key != target:
                synonyms[key] = target
    relations = raw.get("relations") or {}
    relation_words = {stem(w) for group in ("connectives", "reasons", "verbs") for x in relations.get(group) or []
                      for w in words(str(x))}
    return Lexicon(
        stopwords=frozenset(stem(w) for x in raw.get("stopwords") or [] for w in words(str(x))),
        synonyms=synonyms,
        negators=_phrases(raw.get("negators")) + _phrases(raw.get("short_negators")),
        short_negators=frozenset(_phrases(raw.get("short_negators"))),
        purpose_markers=_phrases(raw.get("purpose_markers")),
        dismissals=_phrases(raw.get("dismissals")) + _phrases(raw.get("tight_dismissals")),
        relations=frozenset(relation_words),
        verbs=frozenset(stem(w) for x in relations.get("verbs") or [] for w in words(str(x))),
        reasons=frozenset(stem(w) for x in relations.get("reasons") or [] for w in words(str(x))),
        fillers=frozenset(stem(w) for x in raw.get("fillers") or [] for w in words(str(x))),
        longest_variant=max((len(k) for k in synonyms), default=1),
        tight=frozenset(_phrases(raw.get("tight_dismissals"))),
        widening=frozenset(stem(w) for x in raw.get("widening") or [] for w in words(str(x))),
        function_words=frozenset(stem(w) for x in raw.get("function_words") or [] for w in words(str(x))),
    )
