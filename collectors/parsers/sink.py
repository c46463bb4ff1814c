"""A small accumulator that every parser uses to emit cited facts."""

from __future__ import annotations

from collectors.models import Artifact, Citation, Fact, ParseResult
from collectors.text import excerpt
from collectors.vocabulary import VOCABULARY, conforms


class FactSink:
    """Collects facts for one artifact; refuses names or values outside the vocabulary."""

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
            )
        )

    def problem(self, message: str) -> None:
        self.result.problems.append(message)

    def done(self) -> ParseResult:
        return self.result
