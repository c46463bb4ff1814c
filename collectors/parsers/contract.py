"""The one interface every parser module exports as `PARSER`: its kinds, how to spot it, how to read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from collectors.models import Artifact, ArtifactKind, ParseResult

Parse = Callable[[Artifact], ParseResult]
Sniff = Callable[[str], int]  # 0-100: how much a text looks like this parser's kind
ClaimsLine = Callable[[str], bool]  # whether one line of a mixed paste belongs to a line-oriented kind


@dataclass(frozen=True)
class Parser:
    """A parser: inputs in, plain facts out. It never raises and never guesses a value it cannot read."""

    kinds: tuple[ArtifactKind, ...]  # the first is the kind detection assigns
    parse: Parse
    sniff: Sniff | None = None  # None: never detected from pasted text, only named by a source
    claims_line: ClaimsLine | None = None  # set for line-oriented logs that interleave in one paste
    # Several blocks of this kind in one text are read as they are when pasted one after another (tables,
    # describe output, counters): a paste's blocks of the kind share one artifact wherever they are, so blocks
    # interleaved with other kinds cost what they cost grouped. Not for JSON or YAML documents, which a loader
    # reads one at a time.
    reads_many: bool = False

    @property
    def kind(self) -> ArtifactKind:
        return self.kinds[0]


def guarded(parse: Parse, artifact: Artifact) -> ParseResult:
    """One parser's reading of one artifact, where a bug in the parser costs that reading and never the triage.

    The one catch-all for every parser (the registry and the signals' hand-offs call parsers only through it). What
    the parser read before it failed is dropped, since a reading with holes would look whole; the problem names the
    parser and the exception. Running out of memory is not a parser's bug: the caller says so for the whole run.
    """
    try:
        return parse(artifact)
    except MemoryError:
        raise
    except Exception as err:  # a parser must never take the triage down with it
        name = parse.__module__.rsplit(".", 1)[-1]
        return ParseResult(problems=[f"internal: {name} parser failed on {artifact.kind}: {type(err).__name__}: {err}"])
