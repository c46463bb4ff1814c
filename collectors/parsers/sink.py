"""A small accumulator that every parser uses to emit cited facts."""

from __future__ import annotations

import sys
from pathlib import Path

from collectors.models import Artifact, Citation, Fact, ParseResult
from collectors.text import excerpt
from collectors.vocabulary import VOCABULARY, conforms

_ROOT = str(Path(__file__).resolve().parents[2]) + "/"
_ORIGINS: dict[tuple[str, int], str] = {}
# The `add` of each FactSink subclass (a sink that drops repeats): it passes facts on, the parser's call emits them.
_PASSING_ON: set[int] = set()


def emitted_at(depth: int = 0) -> str:
    """The line of code `depth` calls above the caller, `collectors/parsers/node/kernel.py:120`: where a fact was
    emitted, for the report's trace. A frame lookup per fact and the text made once per line of code: walking the
    stack (inspect) per fact would cost a 200,000-line paste several per cent of its time."""
    frame = sys._getframe(depth + 1)
    while id(frame.f_code) in _PASSING_ON and frame.f_back is not None:
        frame = frame.f_back
    key = (frame.f_code.co_filename, frame.f_lineno)
    found = _ORIGINS.get(key)
    if found is None:
        found = _ORIGINS[key] = f"{key[0].removeprefix(_ROOT)}:{key[1]}"
    return found


class FactSink:
    """Collects facts for one artifact; refuses names or values outside the vocabulary."""

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if "add" in cls.__dict__:
            _PASSING_ON.add(id(cls.__dict__["add"].__code__))

    def __init__(self, artifact: Artifact, lines: list[str] | None = None) -> None:
        self.artifact = artifact
        self.lines = lines if lines is not None else artifact.content.split("\n")
        self.result = ParseResult()

    def add(self, name: str, value: object, start: int, end: int | None = None, subject: str | None = None,
            text: str | None = None) -> None:
        """Emit a fact cited to 1-based lines start..end of the artifact (0 = the whole artifact)."""
        spec = VOCABULARY.get(name)
        if spec is None:
            self.result.problems.append(f"internal: parser emitted unknown fact {name!r}")
            return
        if not conforms(value, spec.type):
            self.result.problems.append(f"internal: fact {name} expects {spec.type}, got {value!r}")
            return
        end = start if end is None else end
        if text is None:
            text = self.lines[start - 1] if 0 < start <= len(self.lines) else ""
        self.result.facts.append(
            Fact(
                name=name,
                value=value,
                subject=self.artifact.subject if subject is None else subject,
                citation=Citation(artifact=self.artifact.id, start=start, end=end),
                excerpt=excerpt(text, value=value),
                origin=emitted_at(1),  # the parser's call of add
            )
        )

    def problem(self, message: str) -> None:
        self.result.problems.append(message)

    def done(self) -> ParseResult:
        return self.result
