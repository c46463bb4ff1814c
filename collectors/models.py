"""The evidence model: raw artifacts in, cited facts out.

Artifact, Citation, Fact and ParseResult are plain dataclasses: every run builds them in every parser, and they
never cross a boundary themselves (the report, the database rows and the recordings are pydantic models or go
through `artifact_adapter`). Target and Missing are report fields read back from JSON, so they stay pydantic."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from collectors.kinds import ArtifactKind as ArtifactKind  # re-exported: the models are where most code looks

if TYPE_CHECKING:
    from pydantic import TypeAdapter


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    """One raw piece of evidence, exactly as a person would see it."""

    id: str
    kind: ArtifactKind
    subject: str = ""  # e.g. "pod/shop/checkout-7d9f", "node/gpu-node-2"
    source: str = "paste"  # where it came from: paste, file, kubernetes, prometheus, agent ...
    command: str = ""  # the exact command or query a person could re-run
    captured_at: datetime | None = None
    content: str = ""
    unavailable: str | None = None  # why the source could not provide it
    # The source's line number of the content's first line: a piece cut from a long paste holds only its own lines
    # (copying the paste's length into every piece made reading it quadratic), and its citations still count the
    # paste's lines (collectors/parsers/registry.py shifts them).
    first_line: int = 1
    # Spans of the content's lines (1-based, counted in the content) a markdown fence held in the paste: a
    # program's output as the writer showed it, so a message read there is observed, not said.
    fenced: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.first_line < 1:
            raise ValueError(f"artifact {self.id}: first_line {self.first_line} is not a line number (from 1)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """Where a fact was read: artifact id and a 1-based inclusive line span (0 to 0: the whole artifact)."""

    artifact: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < 0:
            raise ValueError(f"citation {self.artifact}:{self.start}-{self.end}: a line number is negative")

    def label(self) -> str:
        if self.start == 0:
            return self.artifact
        if self.start == self.end:
            return f"{self.artifact}:{self.start}"
        return f"{self.artifact}:{self.start}-{self.end}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """A named observation from the vocabulary, with the evidence behind it."""

    name: str
    value: Any
    subject: str = ""
    citation: Citation
    excerpt: str = ""  # the cited text, shortened, so a reader sees why without opening the artifact
    kind: str = ""  # the kind of the artifact it was read from (set by the registry)
    parser: str = ""  # what read it: a parser module name, or `signal:<id>` for a line signal
    origin: str = ""  # the line of code that emitted it, `collectors/parsers/node/kernel.py:120` (the report's trace)


@cache
def artifact_adapter() -> TypeAdapter[Artifact]:
    """Artifacts where they cross a boundary: read back from the database's JSON or an export (checked, the
    kind made an ArtifactKind, the time parsed), and written as JSON (`dump_python(a, mode="json")`). Built on
    first use: a CLI run never needs it."""
    from pydantic import TypeAdapter

    return TypeAdapter(Artifact)


# The parser name of a fact read from a sentence a person wrote ("the pod keeps getting OOMKilled"), not from a
# program's output line: `stated:<reader>`. Such a fact makes a hypothesis likely at most, and rules nothing out
# on its own (playbooks/engine.py).
STATED_PREFIX = "stated:"


def is_stated(fact: Fact) -> bool:
    return fact.parser.startswith(STATED_PREFIX)


@dataclass(slots=True, kw_only=True)
class ParseResult:
    """What a parser could read, and what it could not."""

    facts: list[Fact] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class Target(BaseModel):
    """What a triage is about. Live triage needs a namespace and a service, pod or job (`service` may be
    `pod/NAME`, `job/NAME`, `deployment/NAME`...), a node (`node/NAME`: cluster-scoped, no namespace), or a
    namespace itself (`namespace/NAME`)."""

    service: str | None = None
    namespace: str | None = None
    cluster: str | None = None
    pod: str | None = None
    node: str | None = None
    # The scrape address (host[:port]) an alert named its node by, when it named it no other way: the node is the
    # one with that name or address, found when the triage runs.
    instance: str | None = None


class Missing(BaseModel):
    """A source that could not be read, and why; the triage goes on without it."""

    source: str
    reason: str
