"""The line-signal catalog (signals.yaml): messages that mean something wherever they appear."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

import re2
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from collectors.vocabulary import VOCABULARY

_CATALOG = Path(__file__).parent / "signals.yaml"

Reader = Literal["kernel-log", "nccl-log", "container-log", "kubelet-log"]


class Signal(BaseModel):
    """One message shape and how it becomes facts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    hints: tuple[str, ...] = Field(min_length=1)
    pattern: str
    unless: tuple[str, ...] = ()  # substrings that mean the line is about something else
    event: str | None = None
    reader: Reader | None = None
    facts: dict[str, Any] = Field(default_factory=dict)
    source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _one_way(self) -> Signal:
        ways = sum([self.event is not None, self.reader is not None, bool(self.facts)])
        if ways != 1:
            raise ValueError(f"signal {self.id}: give exactly one of event, reader or facts")
        unknown = [name for name in self.facts if name not in VOCABULARY]
        if unknown:
            raise ValueError(f"signal {self.id}: unknown facts {unknown}")
        return self


class CompiledSignal:
    def __init__(self, spec: Signal) -> None:
        self.spec = spec
        self.regex: Any = re2.compile(spec.pattern)  # google-re2 ships no type hints


@cache
def signals() -> tuple[CompiledSignal, ...]:
    """Every signal, compiled once per process."""
    raw = yaml.safe_load(_CATALOG.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{_CATALOG}: expected a list of signals")
    return tuple(CompiledSignal(Signal.model_validate(entry)) for entry in raw)


@cache
def any_hint() -> Any:
    """One RE2 alternation of every hint: finds candidate lines in a single linear pass over the text."""
    hints = sorted({h for s in signals() for h in s.spec.hints}, key=len, reverse=True)
    return re2.compile("|".join(re2.escape(h) for h in hints))
