"""Turning pasted or file text into artifacts: every non-empty paste is read, whatever it holds.

The wrappers come off first (collectors.unwrap). Detection then finds the structured parts; each becomes an
artifact of its kind, read by its structural parser. Whatever no kind claims becomes a `text` artifact that the
line-signal layer reads. Detection adds precision; it never decides whether a paste is read.
"""

from __future__ import annotations

from datetime import datetime

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
    if kind is not None:
        return [Artifact(id=name, kind=kind, source=source, content=clean.text, captured_at=captured_at)]
    segments = split(clean.text, clean.commands)
    if len(segments) == 1 and segments[0].start <= 1 and not _uncovered(clean, segments):
        return [Artifact(id=name, kind=segments[0].kind, source=source, content=clean.text,
                         captured_at=captured_at)]
    artifacts = [_segment_artifact(clean, name, i, seg, source, captured_at) for i, seg in enumerate(segments, 1)]
    rest = _uncovered(clean, segments)
    if rest:
        content = "\n".join(line if n in rest else "" for n, line in enumerate(clean.lines, 1))
        text_id = name if not artifacts else f"{name}#{len(artifacts) + 1}"
        artifacts.append(Artifact(id=text_id, kind=ArtifactKind.TEXT, source=source, content=content,
                                  command=f"lines of {name} no structured kind claimed", captured_at=captured_at))
    return artifacts


def nothing_recognised() -> str:
    """What the report says when no line of the evidence meant anything known."""
    from collectors.catalogs.signals import signals

    kinds = ", ".join(str(k) for k in KNOWN_KINDS_LIST)
    messages = ", ".join(sorted({s.spec.id.split("-")[0] for s in signals()}))
    return (f"Nothing in this evidence was recognised. Looked for these kinds of output: {kinds}; and, on any line, "
            f"known messages from: {messages} (collectors/catalogs/signals.yaml). Paste more of the output, or "
            "name its kind with --kind.")


def _uncovered(clean: Unwrapped, segments: list[Segment]) -> set[int]:
    """1-based numbers of the non-blank lines outside every segment."""
    covered: set[int] = set()
    for seg in segments:
        covered.update(range(seg.start, seg.end + 1))
    return {n for n, line in enumerate(clean.lines, 1) if n not in covered and line.strip()}


def _segment_artifact(clean: Unwrapped, name: str, index: int, seg: Segment, source: str,
                      captured_at: datetime | None) -> Artifact:
    content = "\n".join(line if seg.start <= n <= seg.end else "" for n, line in enumerate(clean.lines, 1))
    return Artifact(id=f"{name}#{index}", kind=seg.kind, source=source, content=content,
                    command=f"lines {seg.start}-{seg.end} of {name}", captured_at=captured_at)
