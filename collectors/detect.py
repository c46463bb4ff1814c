"""Finding what kinds of evidence a paste holds, and where each one starts and ends."""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.models import ArtifactKind
from collectors.parsers.registry import LINE_CLAIMS, SNIFFERS
from collectors.text import normalise

MIN_SCORE = 30
_LINE_KINDS = {kind for kind, _ in LINE_CLAIMS}
# A shell prompt line starts a new block: "$ kubectl describe pod x", "# dmesg -T", "root@node:~# conntrack -S".
_PROMPT = re.compile(r"^\s*(?:[\w.@:~/-]*[$#]|>)\s+(?:sudo\s+)?(kubectl|dmesg|journalctl|conntrack|cat|curl|"
                     r"nvidia-smi|oc|k)\b")
KNOWN_KINDS = ", ".join(sorted(str(k) for k in SNIFFERS))


@dataclass(frozen=True)
class Segment:
    kind: ArtifactKind
    start: int  # 1-based first line
    end: int  # 1-based last line


def detect_kind(text: str) -> ArtifactKind | None:
    """The single most likely kind of a whole text, or None when nothing scores high enough."""
    scored = _best(normalise(text))
    return scored[0] if scored and scored[1] >= MIN_SCORE else None


def _best(text: str) -> tuple[ArtifactKind, int] | None:
    best: tuple[ArtifactKind, int] | None = None
    for kind, sniff in SNIFFERS.items():
        score = sniff(text)
        if best is None or score > best[1]:
            best = (kind, score)
    return best


def split(text: str) -> list[Segment]:
    """Segments of a paste, each of one kind, in order; empty when nothing is recognised."""
    text = normalise(text)
    whole = _best(text)
    if whole and whole[1] >= 80 and whole[0] not in _LINE_KINDS:
        return [Segment(whole[0], 1, text.count("\n") + 1)]
    lines = text.split("\n")
    segments: list[Segment] = []
    for start, end in _blocks(lines):
        segments.extend(_classify_block(lines, start, end))
    return _merge(segments)


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """0-based [start, end) ranges separated by blank lines or shell prompts."""
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    for i, line in enumerate(lines):
        boundary = not line.strip() or _PROMPT.match(line) is not None
        if boundary and start is not None and not line.strip():
            # A blank line inside an indented structure (describe, YAML) does not end it when more indent follows.
            if i + 1 < len(lines) and lines[i + 1][:1] in (" ", "\t"):
                continue
            blocks.append((start, i))
            start = None
        elif boundary and start is not None:
            blocks.append((start, i))
            start = None
        if not boundary and start is None:
            start = i
    if start is not None:
        blocks.append((start, len(lines)))
    return blocks


def _classify_block(lines: list[str], start: int, end: int) -> list[Segment]:
    block = "\n".join(lines[start:end])
    best = _best(block)
    if best and best[1] >= MIN_SCORE and best[0] not in _LINE_KINDS:
        return [Segment(best[0], start + 1, end)]
    segments: list[Segment] = []
    current: ArtifactKind | None = None
    seg_start = start
    for i in range(start, end):
        kind = next((k for k, claims in LINE_CLAIMS if claims(lines[i])), None)
        if kind is None or kind == current:
            continue
        if current is not None:
            segments.append(Segment(current, seg_start + 1, i))
        current, seg_start = kind, i
    if current is not None:
        segments.append(Segment(current, seg_start + 1, end))
    elif best and best[1] >= MIN_SCORE:
        segments.append(Segment(best[0], start + 1, end))
    return segments


def _merge(segments: list[Segment]) -> list[Segment]:
    merged: list[Segment] = []
    for seg in segments:
        if merged and merged[-1].kind == seg.kind and seg.kind in _LINE_KINDS:
            merged[-1] = Segment(seg.kind, merged[-1].start, seg.end)
        else:
            merged.append(seg)
    return merged


def segment_text(text: str, segment: Segment) -> str:
    """The paste with every line outside the segment blanked, so citations keep the paste's numbering."""
    lines = normalise(text).split("\n")
    return "\n".join(line if segment.start <= n <= segment.end else "" for n, line in enumerate(lines, 1))
