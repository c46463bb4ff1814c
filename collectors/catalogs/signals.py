"""The line-signal catalog (signals.yaml): messages that mean something wherever they appear."""

from __future__ import annotations

from functools import cache, cached_property
from pathlib import Path
from typing import Any, Literal

import re2
from pydantic import BaseModel, ConfigDict, Field, model_validator

from collectors.catalogs import network
from collectors.catalogs.validated import validated
from collectors.vocabulary import VOCABULARY

_CATALOG = Path(__file__).parent / "signals.yaml"

Reader = Literal["kernel-log", "nccl-log", "container-log", "kubelet-log"]
# `event: "{reason}"`: the line is an event as a component logged it, its type and reason in the groups of that name.
STATED_REASON = "{reason}"


class Signal(BaseModel):
    """One message shape and how it becomes facts."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    hints: tuple[str, ...] = Field(min_length=1)
    pattern: str
    unless: tuple[str, ...] = ()  # substrings that mean the line is about something else
    # Substrings of the line just above that make this line another message's payload: a client that logs the body
    # of an answer it got on the next line (Envoy's Datadog tracer: "... status 503 with body (if any, starts on next
    # line):") prints a proxy's words that were its own call's, not a request the service was sent.
    unless_before: tuple[str, ...] = ()
    event: str | None = None
    reader: Reader | None = None
    # Lines after the matched one that the reader also gets: a message the program prints (or a paste wraps) over
    # several lines, whose later lines say what the reader needs (a warning's suggested value, a per-rank block).
    reader_lines: int = Field(default=0, ge=0, le=32)
    facts: dict[str, Any] = Field(default_factory=dict)
    # The symptom (a playbook id) this message is evidence of, whatever else it says: it runs that playbook
    # (`evidence.symptoms`, playbooks/loader.py symptom_trigger). Only for messages that show the symptom itself.
    symptom: str | None = None
    source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _one_way(self) -> Signal:
        ways = sum([self.event is not None, self.reader is not None, bool(self.facts)])
        if ways != 1:
            raise ValueError(f"signal {self.id}: give exactly one of event, reader or facts")
        if self.event == STATED_REASON and "(?P<reason>" not in self.pattern:
            raise ValueError(f"signal {self.id}: an event whose reason the line states needs a `reason` group")
        unknown = [name for name in self.facts if name not in VOCABULARY]
        if unknown:
            raise ValueError(f"signal {self.id}: unknown facts {unknown}")
        return self


class CompiledSignal:
    def __init__(self, spec: Signal) -> None:
        self.spec = spec
        # Facts that take nothing from the line: once the signal fires, later lines add nothing.
        self.constant = bool(spec.facts) and not any("{" in str(v) for v in spec.facts.values())

    @cached_property
    def regex(self) -> Any:  # google-re2 ships no type hints
        """Compiled when a line first holds one of its hints: a paste shows few of the catalog's messages, and
        compiling all 240 cost every run tens of milliseconds (tests/unit/parsers/test_signals.py compiles each)."""
        return re2.compile(self.spec.pattern)


@cache
def signals() -> tuple[CompiledSignal, ...]:
    """Every signal, compiled once per process."""
    return tuple(CompiledSignal(spec) for spec in validated((_CATALOG, *network.CATALOGS), _validate))


def _validate(raw: Any, *_network: Any) -> tuple[Signal, ...]:
    if not isinstance(raw, list):
        raise ValueError(f"{_CATALOG}: expected a list of signals")
    # The CNI and network-client messages live in their own catalog, with their upstream sources (network.yaml).
    raw = raw + [entry.signal() for entry in network.entries()]
    return tuple(Signal.model_validate(entry) for entry in raw)


@cache
def catalog_order() -> dict[str, int]:
    """Signal id -> its place in the catalog."""
    return {s.spec.id: n for n, s in enumerate(signals())}


@cache
def signals_by_hint(skip: frozenset[str] = frozenset()) -> dict[str, tuple[CompiledSignal, ...]]:
    """hint -> the signals (not read by a reader in `skip`) that name it, in catalog order."""
    owners: dict[str, list[CompiledSignal]] = {}
    for s in signals():
        if s.spec.reader in skip:
            continue
        for hint in s.spec.hints:
            owners.setdefault(hint, []).append(s)
    return {hint: tuple(found) for hint, found in owners.items()}


@cache
def _by_id() -> dict[str, CompiledSignal]:
    return {s.spec.id: s for s in signals()}


def signal_pattern(signal_id: str) -> Any:
    """A signal's compiled pattern, None for an unknown id: where in a line a signal read, for the stated reader's
    negation test."""
    found = _by_id().get(signal_id)
    return found.regex if found is not None else None
