"""The stated-terms catalog (stated.yaml): identifiers programs print, as people write them in sentences."""

from __future__ import annotations

import re
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Literal

import re2
from pydantic import BaseModel, ConfigDict, Field, model_validator

from collectors.catalogs.validated import validated
from collectors.catalogs.xid import load_catalog
from collectors.lazy_regex import LazyPattern
from collectors.vocabulary import VOCABULARY

_CATALOG = Path(__file__).parent / "stated.yaml"
_HUMP = LazyPattern(r"[A-Z]+(?![a-z])|[A-Z][a-z]+|[a-z]+")


class StatedTerm(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    fact: str | None = None  # none: the entry names a symptom and nothing more ("the pod keeps restarting")
    # The symptom (a playbook id) the term shows by itself, as `symptom:` in signals.yaml: it gives
    # `evidence.symptoms`, which runs that playbook (playbooks/loader.py symptom_trigger).
    symptom: str | None = None
    # The pattern's group `number` may hold a range of figures ("from 98% to 0-20%"): the lowest is the value.
    lowest: bool = False
    # The pattern lets words in between ("latency of each request gradually increases"): a negation among them
    # denies the match too ("p99 latency never went up", "requests are not waiting in the queue").
    deny_inside: bool = False
    # The normalised value the words stand for, when the fact holds a kind rather than the words ("rate-limited"
    # for image.pull_error, however the throttling is said; 0 for endpoints.ready, however the emptiness is said).
    # A bool fact said false ("the selector doesn't match the labels": service.selector_matches_pods false).
    value: bool | str | int | None = None
    # The pattern names two figures that should agree (a Service's targetPort, group `number` or `named`, and the
    # port the container listens on, group `other` or `other2`): the value only when they differ.
    mismatch: bool = False
    # For a mismatch: figures this close agree (an overlay's MTU sits its header's bytes under the uplink's: IP-in-IP
    # 20, VXLAN 50, WireGuard 60 or 80; that is the configuration working, not two MTUs disagreeing).
    tolerance: int = Field(default=0, ge=0)
    terms: tuple[str, ...] = ()
    pattern: str | None = None
    hints: tuple[str, ...] = ()
    valid: Literal["xid"] | None = None
    about: tuple[str, ...] = ()
    source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _one_way(self) -> StatedTerm:
        if bool(self.terms) == (self.pattern is not None):
            raise ValueError(f"stated {self.id}: give terms or a pattern, not both")
        if self.pattern is not None and not self.hints:
            raise ValueError(f"stated {self.id}: a pattern needs hints")
        if self.fact is None and self.symptom is None:
            raise ValueError(f"stated {self.id}: give a fact, a symptom or both")
        if self.fact is not None and self.fact not in VOCABULARY:
            raise ValueError(f"stated {self.id}: unknown fact {self.fact}")
        return self


def humps(term: str) -> list[str]:
    """CrashLoopBackOff -> Crash, Loop, Back, Off; OOMKilled -> OOM, Killed."""
    return _HUMP.findall(term)


def spelt(term: str) -> str:
    """An RE2 pattern for the term as people write it: humps joined by nothing, a space or a hyphen."""
    return r"[- ]?".join(re.escape(h) for h in humps(term))


def term_hints(term: str) -> list[str]:
    """Lower-case substrings one of which a line that spells the term holds (its first two humps, joined)."""
    parts = [h.lower() for h in humps(term)]
    if len(parts) == 1:
        return parts
    return [parts[0] + sep + parts[1] for sep in ("", " ", "-")]


class CompiledTerm:
    """A term and its patterns. The patterns are compiled the first time a line holds one of the term's hints: a
    paste that names none of the catalog's terms (most do not) compiles none of them."""

    def __init__(self, spec: StatedTerm) -> None:
        self.spec = spec
        self.hints = tuple(h for t in spec.terms for h in term_hints(t)) if spec.terms else spec.hints

    @cached_property
    def regex(self) -> Any:  # google-re2 ships no type hints
        if self.spec.terms:
            alternatives = "|".join(f"(?P<t{i}>{spelt(t)})" for i, t in enumerate(self.spec.terms))
            return re2.compile(rf"(?i)(?:^|[^\w-])(?:{alternatives})(?:$|[^\w-])")
        return re2.compile(f"(?i){self.spec.pattern}")

    @cached_property
    def about(self) -> Any:
        if not self.spec.about:
            return None
        return re2.compile(r"(?i)\b(?:" + "|".join(re.escape(w) for w in self.spec.about) + r")")

    def concerns(self, sentence: str) -> bool:
        """The sentence names the kind of object the term is a state of (a node, for NotReady; `node1` too)."""
        return self.about is None or self.about.search(sentence) is not None

    def valid(self, number: int) -> bool:
        return self.spec.valid != "xid" or number in load_catalog()


@cache
def stated_terms() -> tuple[CompiledTerm, ...]:
    return tuple(CompiledTerm(spec) for spec in validated((_CATALOG,), _validate))


def _validate(raw: Any) -> tuple[StatedTerm, ...]:
    if not isinstance(raw, list):
        raise ValueError(f"{_CATALOG}: expected a list")
    return tuple(StatedTerm.model_validate(entry) for entry in raw)
