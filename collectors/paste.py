"""Turning pasted or file text into artifacts, one per recognised segment."""

from __future__ import annotations

from datetime import datetime

from collectors.detect import KNOWN_KINDS, Segment, segment_text, split
from collectors.models import Artifact, ArtifactKind
from collectors.text import normalise


class PasteError(ValueError):
    """Text with nothing triagebot can read; the message says what it understands."""


def artifacts_from_text(text: str, name: str, source: str = "paste", kind: ArtifactKind | None = None,
                        captured_at: datetime | None = None) -> list[Artifact]:
    """Artifacts for one paste or file; raises PasteError when it is empty or of no known kind."""
    if not text.strip():
        raise PasteError(f"{name} is empty; expected pasted evidence such as kubectl describe, events, "
                         f"dmesg or an NCCL log (understood kinds: {KNOWN_KINDS})")
    if kind is not None:
        return [Artifact(id=name, kind=kind, source=source, content=normalise(text), captured_at=captured_at)]
    segments = split(text)
    if not segments:
        raise PasteError(f"{name}: no known kind of evidence found (understood kinds: {KNOWN_KINDS}); "
                         "use --kind to say what it is")
    if len(segments) == 1 and segments[0].start <= 1:
        return [Artifact(id=name, kind=segments[0].kind, source=source, content=normalise(text),
                         captured_at=captured_at)]
    return [_segment_artifact(text, name, i, seg, source, captured_at) for i, seg in enumerate(segments, 1)]


def _segment_artifact(text: str, name: str, index: int, seg: Segment, source: str,
                      captured_at: datetime | None) -> Artifact:
    return Artifact(id=f"{name}#{index}", kind=seg.kind, source=source, content=segment_text(text, seg),
                    command=f"lines {seg.start}-{seg.end} of {name}", captured_at=captured_at)
