"""Turning pasted or file text into artifacts: every non-empty paste is read, whatever it holds.

The wrappers come off first (collectors.unwrap). Detection then finds the structured parts; each becomes an
artifact of its kind, read by its structural parser. Whatever no kind claims becomes a `text` artifact that the
line-signal layer reads. Detection adds precision; it never decides whether a paste is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import re2

from collectors.detect import KNOWN_KINDS, KNOWN_KINDS_LIST, Segment, split_lines
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.readers import GROUPED_KINDS
from collectors.unwrap import unwrap


class PasteError(ValueError):
    """Text that cannot be read at all (empty); the message says what is expected."""


def artifacts_from_text(text: str, name: str, source: str = "paste", kind: ArtifactKind | None = None,
                        captured_at: datetime | None = None) -> list[Artifact]:
    """Artifacts for one paste or file; raises PasteError only when it is empty.

    Every piece is linear to build and to read, whatever order the kinds come in: the lines of one log kind
    (kernel, kubelet, NCCL, application), or the blocks of a kind whose parser reads many (describe, tables),
    make one artifact however often other lines interrupt them, and each piece holds only its own span of lines
    (`first_line` says where it starts), never a copy of the whole paste.
    """
    if not text or text.isspace():  # isspace(): no copy of a paste that may be tens of megabytes
        raise PasteError(f"{name} is empty; expected pasted evidence such as kubectl describe, events, "
                         f"dmesg or an NCCL log (understood kinds: {KNOWN_KINDS})")
    clean = unwrap(text)
    whole = clean.text
    if not whole or whole.isspace():
        raise PasteError(f"{name} holds only markdown fences or quotes; paste the evidence inside them")
    if kind is not None:
        return [Artifact(id=name, kind=kind, source=source, content=whole, captured_at=captured_at)]
    distributed = any(word in whole for word in _DISTRIBUTED_WORDS) and _DISTRIBUTED.search(whole) is not None
    del whole  # detection reads the lines; the joined paste beside them would be a second copy
    segments = split_lines(clean.lines, clean.commands, clean.fenced)
    if distributed:
        segments = _one_training_log(clean.lines, segments)
    pieces = _pieces(clean.lines, segments)
    del segments
    if len(pieces) == 1 and pieces[0].kind != ArtifactKind.TEXT and pieces[0].lo <= 1:
        return [Artifact(id=name, kind=pieces[0].kind, source=source, content=clean.text, captured_at=captured_at,
                         fenced=tuple(clean.fenced))]
    artifacts: list[Artifact] = []
    for index, piece in enumerate(pieces, 1):
        text_only = piece.kind == ArtifactKind.TEXT
        artifacts.append(Artifact(
            id=name if text_only and len(pieces) == 1 else f"{name}#{index}", kind=piece.kind, source=source,
            content="\n".join(piece.lines), first_line=piece.lo, captured_at=captured_at,
            fenced=_within(clean.fenced, piece.lo, piece.lo + len(piece.lines) - 1),
            command=f"lines of {name} no structured kind claimed" if text_only else piece.command(name)))
        piece.lines = []  # each piece's list of lines goes as soon as its text is made
    return artifacts


def _within(spans: list[tuple[int, int]], lo: int, hi: int) -> tuple[tuple[int, int], ...]:
    """The parts of the paste's fenced spans inside lines lo..hi, counted from lo (the piece's first line is 1)."""
    return tuple((max(a, lo) - lo + 1, min(b, hi) - lo + 1) for a, b in spans if a <= hi and b >= lo)


@dataclass
class _Piece:
    """What becomes one artifact: a structured segment, every segment of one log kind, or the unclaimed lines."""

    kind: ArtifactKind
    lo: int  # 1-based first and last line of its span
    hi: int
    runs: int = 1  # how many segments it gathers
    lines: list[str] = field(default_factory=list)  # its span, lines it does not read blank

    def command(self, name: str) -> str:
        if self.runs == 1:
            return f"lines {self.lo}-{self.hi} of {name}"
        return f"{self.runs} runs of {self.kind} lines within lines {self.lo}-{self.hi} of {name}"


def _pieces(lines: list[str], segments: list[Segment]) -> list[_Piece]:
    """The artifacts' contents, in order of first appearance, the unclaimed lines last; one pass over the lines.

    A line belongs to the first segment that claims it (a training log's span straddles the structured segments
    listed before it). Segments of a log kind, or of a kind whose parser reads many blocks, share one piece: a
    log interleaved line by line with another kind is thousands of segments, and a piece (an artifact, a parse)
    per segment made reading it quadratic. A JSON or YAML document keeps a piece of its own, only its span long.
    """
    total = len(lines)
    pieces: list[_Piece] = []
    of_kind: dict[ArtifactKind, int] = {}
    piece_of: list[int] = []  # segment index -> piece index
    segments = [s for s in segments if 1 <= s.start <= s.end <= total]  # as split gives them; never else
    for kind, lo, hi in segments:
        group = of_kind.get(kind) if kind in GROUPED_KINDS else None
        if group is None:
            group = len(pieces)
            pieces.append(_Piece(kind, lo, hi, runs=0))
            if kind in GROUPED_KINDS:
                of_kind[kind] = group
        piece = pieces[group]
        piece.runs += 1
        if lo < piece.lo:
            piece.lo = lo
        if hi > piece.hi:
            piece.hi = hi
        piece_of.append(group)
    owner = [-1] * total  # 0-based line -> piece; written last segment first, so the first claim wins
    for i in range(len(segments) - 1, -1, -1):
        lo, hi = segments[i].start, segments[i].end
        owner[lo - 1:hi] = [piece_of[i]] * (hi - lo + 1)
    rest = _Piece(ArtifactKind.TEXT, total + 1, 0)
    for piece in pieces:
        piece.lines = [""] * (piece.hi - piece.lo + 1) if piece.lo <= piece.hi else []
    unclaimed: list[int] = []
    for n, group in enumerate(owner):
        if group >= 0:
            piece = pieces[group]
            piece.lines[n + 1 - piece.lo] = lines[n]
        elif lines[n] and not lines[n].isspace():
            unclaimed.append(n)
    if unclaimed:
        rest.lo, rest.hi = unclaimed[0] + 1, unclaimed[-1] + 1
        rest.lines = [""] * (rest.hi - rest.lo + 1)
        for n in unclaimed:
            rest.lines[n + 1 - rest.lo] = lines[n]
        pieces.append(rest)
    return [p for p in pieces if p.lo <= p.hi]


def nothing_recognised() -> str:
    """What the report says when no line of the evidence meant anything known."""
    from collectors.catalogs.signals import signals

    kinds = ", ".join(str(k) for k in KNOWN_KINDS_LIST)
    messages = ", ".join(sorted({s.spec.id.split("-")[0] for s in signals()}))
    return (f"Nothing in this evidence was recognised. Looked for these kinds of output: {kinds}; and, on any line, "
            f"known messages from: {messages} (collectors/catalogs/signals.yaml). Paste more of the output, or "
            "name its kind with --kind.")


# A distributed-training log: NCCL lines, the launcher's and the application's output interleave, and the NCCL
# reader needs them together (an NCCL_SOCKET_IFNAME set in prose above, a resolver error under a traceback).
# RE2: one linear DFA pass; Python's engine tries the alternation at every character of a long paste.
# Lightning's "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2" is the launcher's (train_logs.yaml dist_init).
_DISTRIBUTED: Any = re2.compile(r"NCCL (?:INFO|WARN)|NCCL version|nccl\w+Error|torch[./]distributed|ProcessGroupNCCL|"
                          r"NCCL_SOCKET_IFNAME|\bc10d\b|GLOBAL_RANK: \d+, MEMBER: \d+/\d+")
# Substring tests first: a paste without any of them needs no pattern at all.
_DISTRIBUTED_WORDS = ("NCCL", "nccl", "distributed", "c10d", "GLOBAL_RANK")
_TRAINING_KINDS = (ArtifactKind.CONTAINER_LOG, ArtifactKind.NCCL_LOG)


def _one_training_log(lines: list[str], segments: list[Segment]) -> list[Segment]:
    """Every line no structured kind claimed, read as one application log (which the NCCL reader also reads)."""
    kept = [s for s in segments if s.kind not in _TRAINING_KINDS]
    taken = bytearray(len(lines) + 2)  # 1-based: lines a kept segment reads
    for s in kept:
        lo, hi = max(s.start, 1), min(s.end, len(lines))
        if lo <= hi:
            taken[lo:hi + 1] = b"\x01" * (hi - lo + 1)
    free = (n for n, line in enumerate(lines, 1) if not taken[n] and line and not line.isspace())
    first = next(free, None)
    if first is None:
        return segments
    last = next(n for n in range(len(lines), 0, -1) if not taken[n] and lines[n - 1] and not lines[n - 1].isspace())
    # The log's span may straddle a structured segment: kept segments come first, so they keep their lines.
    return [*kept, Segment(ArtifactKind.CONTAINER_LOG, first, last)]
