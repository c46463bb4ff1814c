"""Turning pasted or file text into artifacts: every non-empty paste is read, whatever it holds.

The wrappers come off first (collectors.unwrap). Detection then finds the structured parts; each becomes an
artifact of its kind, read by its structural parser. Whatever no kind claims becomes a `text` artifact that the
line-signal layer reads. Detection adds precision; it never decides whether a paste is read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import re2

from collectors.detect import KNOWN_KINDS, KNOWN_KINDS_LIST, Segment, split
from collectors.models import Artifact, ArtifactKind
from collectors.unwrap import Unwrapped, unwrap


class PasteError(ValueError):
    """Text that cannot be read at all (empty); the message says what is expected."""


def artifacts_from_text(text: str, name: str, source: str = "paste", kind: ArtifactKind | None = None,
                        captured_at: datetime | None = None) -> list[Artifact]:
    """Artifacts for one paste or file; raises PasteError only when it is empty."""
    if not text.strip():
        raise PasteError(f"{name} is empty; expected pasted evidence such as kubectl describe, events, "
                         f"dmesg or an NCCL log (understood kinds: {KNOWN_KINDS})")
    clean = unwrap(text)
    if not clean.text.strip():
        raise PasteError(f"{name} holds only markdown fences or quotes; paste the evidence inside them")
    if kind is not None:
        return [Artifact(id=name, kind=kind, source=source, content=clean.text, captured_at=captured_at)]
    segments = split(clean.text, clean.commands)
    if any(word in clean.text for word in _DISTRIBUTED_WORDS) and _DISTRIBUTED.search(clean.text):
        segments = _one_training_log(clean, segments)
    owner = _owners(clean, segments)
    lines = clean.lines
    rest = set() if -1 not in owner[1:] else {
        n for n, line in enumerate(lines, 1) if owner[n] == -1 and line.strip()}
    if len(segments) == 1 and segments[0].start <= 1 and not rest:
        return [Artifact(id=name, kind=segments[0].kind, source=source, content=clean.text,
                         captured_at=captured_at)]
    artifacts = [_segment_artifact(clean, name, i, seg, owner, source, captured_at)
                 for i, seg in enumerate(segments, 1)]
    if rest:
        content = "\n".join(line if n in rest else "" for n, line in enumerate(lines, 1))
        text_id = name if not artifacts else f"{name}#{len(artifacts) + 1}"
        artifacts.append(Artifact(id=text_id, kind=ArtifactKind.TEXT, source=source, content=content,
                                  command=f"lines of {name} no structured kind claimed", captured_at=captured_at))
    return artifacts


def _owners(clean: Unwrapped, segments: list[Segment]) -> list[int]:
    """For each 1-based line, the index of the segment that reads it (-1: none; index 0 is unused).

    The first segment to claim a line keeps it: segments are written last to first, as C-speed slices.
    """
    total = len(clean.lines)
    owner = [-1] * (total + 1)
    for i in range(len(segments) - 1, -1, -1):
        lo, hi = segments[i].start, min(segments[i].end, total)
        if lo <= hi:
            owner[lo:hi + 1] = [i] * (hi - lo + 1)
    return owner


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
_DISTRIBUTED: Any = re2.compile(r"NCCL (?:INFO|WARN)|NCCL version|nccl\w+Error|torch[./]distributed|ProcessGroupNCCL|"
                          r"NCCL_SOCKET_IFNAME|\bc10d\b")
# Substring tests first: a paste without any of them needs no pattern at all.
_DISTRIBUTED_WORDS = ("NCCL", "nccl", "distributed", "c10d")
_TRAINING_KINDS = (ArtifactKind.CONTAINER_LOG, ArtifactKind.NCCL_LOG)


def _one_training_log(clean: Unwrapped, segments: list[Segment]) -> list[Segment]:
    """Every line no structured kind claimed, read as one application log (which the NCCL reader also reads)."""
    kept = [s for s in segments if s.kind not in _TRAINING_KINDS]
    taken = {n for s in kept for n in range(s.start, s.end + 1)}
    rest = [n for n, line in enumerate(clean.lines, 1) if n not in taken and line.strip()]
    if not rest:
        return segments
    # The log's span may straddle a structured segment: kept segments come first, so they keep their lines.
    return [*kept, Segment(ArtifactKind.CONTAINER_LOG, rest[0], rest[-1])]


def _segment_artifact(clean: Unwrapped, name: str, index: int, seg: Segment, owner: list[int], source: str,
                      captured_at: datetime | None) -> Artifact:
    """The paste with every line this segment does not read blanked, so citations keep the paste's numbering."""
    lines, total = clean.lines, len(clean.lines)
    lo, hi = max(seg.start, 1), min(seg.end, total)
    middle = "\n".join(lines[n - 1] if owner[n] == index - 1 else "" for n in range(lo, hi + 1))
    content = "\n" * (lo - 1) + middle + "\n" * (total - hi) if lo <= hi else "\n" * (total - 1)
    return Artifact(id=f"{name}#{index}", kind=seg.kind, source=source, content=content,
                    command=f"lines {seg.start}-{seg.end} of {name}", captured_at=captured_at)
