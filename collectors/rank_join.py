"""One rank table across several logs: one file per rank must name the same straggler as one interleaved file.

Each log is parsed alone first, and alone a rank's own log shows no wave front: the straggler's file says where
it is, the others' files say where they wait, and only together do they show who is behind. So when two or more
logs of one triage hold rank lines, their tables are merged (collectors/parsers/gpu/nccl_ranks.py) and the wave-front
facts are drawn once from the whole, each still cited to the line of the log it was read from; the per-log
wave-front facts of those logs are dropped. Pure: artifacts and facts in, facts out.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from dataclasses import dataclass

from collectors.models import Artifact, ArtifactKind, Fact, Missing
from collectors.parsers.gpu import nccl_ranks
from collectors.parsers.registry import shifted
from collectors.parsers.sink import FactSink
from collectors.text import normalise

JOIN = "join:ranks"
# The facts drawn from the wave front; nccl.last_completed_seq merges on its own (max).
WAVE_FACTS = frozenset({"nccl.wait_seq", "nccl.waiting_ranks", "nccl.suspect_ranks", "nccl.suspect_hosts",
                        "nccl.suspect_pods", "nccl.silent_ranks", "nccl.collectives_differ"})
_KINDS = frozenset({ArtifactKind.NCCL_LOG, ArtifactKind.CONTAINER_LOG})


@dataclass
class Joined:
    artifacts: set[str]  # ids of the logs whose own wave-front facts the joined ones replace
    facts: list[Fact]


class _Routed(FactSink):
    """A sink over logs laid end to end: each fact goes to the log its line falls in, at that log's line."""

    def __init__(self, parts: list[tuple[Artifact, list[str]]]) -> None:
        super().__init__(parts[0][0], parts[0][1])
        self.offsets: list[int] = []
        self.sinks: list[FactSink] = []
        offset = 0
        for artifact, lines in parts:
            self.offsets.append(offset)
            self.sinks.append(FactSink(artifact, lines))
            offset += len(lines)

    def add(self, name: str, value: object, start: int, end: int | None = None, subject: str | None = None,
            text: str | None = None) -> None:
        i = max(0, bisect_right(self.offsets, max(start - 1, 0)) - 1)
        offset = self.offsets[i]
        self.sinks[i].add(name, value, start - offset, None if end is None else end - offset, subject, text)

    def facts(self) -> list[Fact]:
        # Cited at the source's lines, as the registry cites a piece of a paste (Artifact.first_line).
        return [dataclasses.replace(f, parser=JOIN, kind=str(sink.artifact.kind),
                                    citation=shifted(f.citation, sink.artifact.first_line - 1))
                for sink in self.sinks for f in sink.result.facts]


def _pod(subject: str) -> str:
    parts = subject.split("/")
    return parts[-1] if parts[0] == "pod" and len(parts) >= 2 else ""


def may_join(artifact: Artifact, facts: list[Fact]) -> bool:
    """Whether a parsed log can take part in the join: a log kind that gave NCCL facts (so a caller that streams
    artifacts keeps only these)."""
    return artifact.kind in _KINDS and any(f.name.startswith("nccl.") for f in facts)


def across(artifacts: list[Artifact]) -> Joined | None:
    """The wave front of all rank logs together; None when fewer than two logs hold rank lines (or, should reading
    them fail, so that each log's own facts stand: a join must never take the triage down)."""
    try:
        return _across(artifacts)
    except Exception:
        return None


def _across(artifacts: list[Artifact]) -> Joined | None:
    logs = [a for a in artifacts if a.kind in _KINDS and a.unavailable is None]
    if len(logs) < 2:  # the usual single log: its parser already drew the wave front
        return None
    parts: list[tuple[Artifact, list[str]]] = []
    tables: list[tuple[nccl_ranks.RankTable, int]] = []
    offset = 0
    for artifact in logs:
        lines = normalise(artifact.content).split("\n")
        table = nccl_ranks.read_table(lines, _pod(artifact.subject))
        if not table.rows and not table.places:
            continue
        parts.append((artifact, lines))
        tables.append((table, offset))
        offset += len(lines)
    # A log may hold only where its ranks run (NCCL's init lines): a straggler that never reached the collective
    # prints nothing more, and its host is still needed to name the node behind.
    if len(tables) < 2 or not any(table.rows for table, _ in tables):
        return None
    sink = _Routed(parts)
    nccl_ranks.emit(sink, nccl_ranks.merge(tables))
    return Joined({artifact.id for artifact, _ in parts}, sink.facts())


def replace(facts: list[Fact], joined: Joined) -> list[Fact]:
    """The facts with the joined logs' own wave-front facts swapped for the joined ones."""
    kept = [f for f in facts if not (f.name in WAVE_FACTS and f.citation.artifact in joined.artifacts)]
    return kept + [f for f in joined.facts if f.name in WAVE_FACTS]


_SUSPECT_FACTS = frozenset({"nccl.suspect_ranks", "nccl.suspect_hosts", "nccl.suspect_pods"})


def unread_ranks(missing: list[Missing]) -> bool:
    """Some ranks' logs were not read (collectors/live/k8s_ranks.py names these `logs of <job>`)."""
    return any(m.source.startswith("logs of ") for m in missing)


def without_silent_suspects(facts: list[Fact]) -> list[Fact]:
    """The facts without suspects that are only silent ranks: when some ranks' logs were not read, a rank with no
    line may simply be one of them, so it is listed as silent and not blamed. (Silent ranks are blamed only when
    every rank that printed waits, so they never share a table with other suspects.)"""
    silent = {rank for f in facts if f.name == "nccl.silent_ranks" for rank in f.value}
    suspects = {rank for f in facts if f.name == "nccl.suspect_ranks" for rank in f.value}
    if not suspects or not suspects <= silent:
        return facts
    return [f for f in facts if f.name not in _SUSPECT_FACTS]
