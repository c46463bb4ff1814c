"""Finding what kinds of evidence a paste holds, and where each one starts and ends."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any, NamedTuple

from collectors.lazy_regex import LazyPattern
from collectors.models import ArtifactKind
from collectors.parsers.sniffing import LINE_CLAIMS, SNIFFERS
from collectors.text import normalise

MIN_SCORE = 30
# Kinds read line by line: a line of a mixed paste belongs to the first of them that claims it.
LINE_KINDS = frozenset(kind for kind, _ in LINE_CLAIMS)
# A shell prompt line starts a new block: "$ kubectl describe pod x", "# dmesg -T", "root@node:~# conntrack -S".
_PROMPT = LazyPattern(r"^\s*(?:[\w.@:~/-]*[$#]|>)\s+(?:sudo\s+)?(kubectl|dmesg|journalctl|conntrack|cat|more|less|head|"
                      r"tail|curl|nvidia-smi|top|oc|k|ip|ifconfig)\b")
KNOWN_KINDS_LIST = sorted(str(k) for k in SNIFFERS)
KNOWN_KINDS = ", ".join(KNOWN_KINDS_LIST)


class Segment(NamedTuple):
    # A tuple: a log interleaved line by line with another kind is one segment per line.
    kind: ArtifactKind
    start: int  # 1-based first line
    end: int  # 1-based last line


def detect_kind(text: str) -> ArtifactKind | None:
    """The single most likely kind of a whole text, or None when nothing scores high enough."""
    scored = _best(normalise(text))
    return scored[0] if scored and scored[1] >= MIN_SCORE else None


def _best(text: str, hinted: ArtifactKind | None = None) -> tuple[ArtifactKind, int] | None:
    best: tuple[ArtifactKind, int] | None = None
    for kind, sniff in SNIFFERS.items():
        score = sniff(text)
        if kind == hinted and score > 0:
            score = max(score, 90)  # the command typed says what its output is
        if best is None or score > best[1]:
            best = (kind, score)
    return best


def command_kind(command: str) -> ArtifactKind | None:
    """The kind of output a typed command prints, when the command says so."""
    for rx, kind in _COMMAND_KINDS:
        if rx.search(command):
            return kind
    return None


_COMMAND_KINDS: list[tuple[LazyPattern, ArtifactKind]] = [
    (LazyPattern(r"\b(?:kubectl|oc|k)\s+(?:\S+\s+)*?describe\s+(?:pods?|po)\b"), ArtifactKind.DESCRIBE_POD),
    (LazyPattern(r"\b(?:kubectl|oc|k)\s+(?:\S+\s+)*?describe\s+(?:nodes?|no)\b"), ArtifactKind.DESCRIBE_NODE),
    (LazyPattern(r"\b(?:kubectl|oc|k)\s+(?:\S+\s+)*?describe\s+(?:services?|svc)\b"),
     ArtifactKind.DESCRIBE_SERVICE),
    (LazyPattern(r"\b(?:kubectl|oc|k)\s+(?:\S+\s+)*?(?:describe|get)\s+(?:hpa|horizontalpodautoscalers?)\b"
                 r"(?!.*-o\s*(?:json|yaml))"), ArtifactKind.HPA),
    (LazyPattern(r"\b(?:kubectl|oc|k)\s+(?:\S+\s+)*?get\s+(?:pods?|po)\b(?!.*-o\s*(?:json|yaml))"),
     ArtifactKind.POD_TABLE),
    (LazyPattern(r"\b(?:kubectl|oc|k)\s+(?:\S+\s+)*?get\s+(?:events?|ev)\b"), ArtifactKind.EVENTS),
    (LazyPattern(r"\b(?:kubectl|oc|k)\s+(?:\S+\s+)*?get\s+(?:nodes?|no)\b(?!.*-o\s*(?:json|yaml))"),
     ArtifactKind.NODE_TABLE),
    (LazyPattern(r"\b(?:kubectl|oc|k)\s+(?:\S+\s+)*?get\s+(?:endpoints|ep)\b(?!.*-o\s*(?:json|yaml))"),
     ArtifactKind.ENDPOINTS_TABLE),
    (LazyPattern(r"\bcpu\.stat\b"), ArtifactKind.CPU_STAT),
    (LazyPattern(r"\bconntrack\s+-S\b|nf_conntrack\b"), ArtifactKind.CONNTRACK_STATS),
    (LazyPattern(r"\bdmesg\b|\bjournalctl\b.*\s-k\b|\bjournalctl\b.*--dmesg"), ArtifactKind.KERNEL_LOG),
    (LazyPattern(r"\bjournalctl\b.*\s-u\s*kubelet"), ArtifactKind.KUBELET_LOG),
    (LazyPattern(r"\bnvidia-smi\b(?!\s+(?:--query|topo|nvlink))"), ArtifactKind.NVIDIA_SMI),
    (LazyPattern(r"(?:^|\s)top\b(?:\s+-\w+(?:\s+[\d.]+)?)*\s*$"), ArtifactKind.TOP),
    (LazyPattern(r"\bip\s+(?:-\w+\s+)*(?:link|l)\b|\bifconfig\b"), ArtifactKind.NET_LINKS),
    (LazyPattern(r"\bdf(?:\s+-\w+)*(?:\s+/\S*)*\s*$"), ArtifactKind.DF),
    # amtool alert [query] prints alerts (cli/format/format_simple.go, format_extended.go); -o json is a payload.
    (LazyPattern(r"\bamtool\b(?:\s+-\S+)*\s+alert\b(?!.*-o\s*json)"), ArtifactKind.ALERT_TEXT),
]


def split(text: str, commands: list[str] | None = None) -> list[Segment]:
    """Segments of a paste, each of one kind, in order; empty when nothing is recognised.

    `commands` gives, per line, the command typed before it (see collectors.unwrap); it says where a new block
    starts and what kind its output is.
    """
    return split_lines(normalise(text).split("\n"), commands)


def split_lines(lines: list[str], commands: list[str] | None = None,
                fenced: list[tuple[int, int]] | None = None) -> list[Segment]:
    """split() of a text already normalised and cut into lines (an unwrapped paste), so it is not held twice.
    `fenced` are the 1-based spans a markdown fence held (collectors.unwrap)."""
    commands = commands or [""] * len(lines)
    fence_of = _fence_index(fenced or [])
    first = next((line for line in lines if line and not line.isspace()), "")
    if first.lstrip()[:1] in ("{", "["):
        whole = _best(_head(lines, 0, len(lines)))
        if whole and whole[1] >= MIN_SCORE and whole[0] not in LINE_KINDS:  # a dmesg log starts with "[" too
            return [Segment(whole[0], 1, len(lines))]
    segments: list[Segment] = []
    previous_command = ""
    for start, end, after_prompt in _blocks(lines):
        command = commands[start] if start < len(commands) else ""
        after_prompt = after_prompt or command != previous_command
        previous_command = command
        best = _best(_head(lines, start, end), command_kind(command) if command else None)
        if (best is None or best[1] < MIN_SCORE) and not after_prompt and segments \
                and segments[-1].kind not in LINE_KINDS and fence_of(start + 1) == fence_of(segments[-1].end):
            # A fragment of nothing known continues what came before (a YAML document after a blank line), inside
            # the same fence or outside any: a fence that closes ends the output it held, and the sentences after
            # it are the writer's ("but it is still not working" after a pasted manifest).
            segments[-1] = Segment(segments[-1].kind, segments[-1].start, end)
            continue
        segments.extend(_classify_block(lines, start, end, best))
    return _merge(segments)


def _fence_index(fenced: list[tuple[int, int]]) -> Callable[[int], int]:
    """The 1-based line's fenced span (its index), -1 outside every fence."""
    starts = [a for a, _ in fenced]

    def of(line: int) -> int:
        at = bisect.bisect_right(starts, line) - 1
        return at if at >= 0 and fenced[at][0] <= line <= fenced[at][1] else -1
    return of


# Every sniffer reads at most this much of the start of a text (`sniff` in collectors/sniffers/ and in the parsers
# that keep their own; tests/unit/core/test_paste_linear.py holds them to it): a block is joined only that far.
SNIFF_CHARS = 200_000


def _head(lines: list[str], start: int, end: int) -> str:
    """Lines start..end-1 joined, as far as a sniffer reads."""
    stop, size = start, 0
    while stop < end and size <= SNIFF_CHARS:
        size += len(lines[stop]) + 1
        stop += 1
    return "\n".join(lines[start:stop])


def _blocks(lines: list[str]) -> list[tuple[int, int, bool]]:
    """0-based [start, end) ranges between blank lines and shell prompts, and whether a prompt preceded."""
    blocks: list[tuple[int, int, bool]] = []
    start: int | None = None
    after_prompt = False
    for i, line in enumerate(lines):
        prompt = _PROMPT.match(line) is not None
        if prompt or not line or line.isspace():
            if start is not None:
                blocks.append((start, i, after_prompt))
                after_prompt = False
            start = None
            after_prompt = after_prompt or prompt
        elif start is None:
            start = i
    if start is not None:
        blocks.append((start, len(lines), after_prompt))
    return blocks


_UNSEEN: Any = object()
_CLAIM_CACHE = 65_536  # distinct lines whose claim is remembered at once


def _claimed(line: str) -> ArtifactKind | None:
    for kind, claims in LINE_CLAIMS:
        if claims(line):
            return kind
    return None


def _classify_block(lines: list[str], start: int, end: int, best: tuple[ArtifactKind, int] | None
                    ) -> list[Segment]:
    if best is None or best[1] < MIN_SCORE or best[0] in LINE_KINDS:
        return _by_line(lines, start, end)
    # Log lines pasted straight after a structured block, with no blank line between, are peeled off.
    head = start
    while head < end and _claimed(lines[head]) is not None:
        head += 1
    tail = end
    while tail > head and _claimed(lines[tail - 1]) is not None:
        tail -= 1
    if (head, tail) != (start, end) and tail > head:
        inner = _best(_head(lines, head, tail))
        if inner and inner[0] == best[0] and inner[1] >= MIN_SCORE:
            return [*_by_line(lines, start, head), Segment(best[0], head + 1, tail), *_by_line(lines, tail, end)]
    return [Segment(best[0], start + 1, end)]


def _by_line(lines: list[str], start: int, end: int) -> list[Segment]:
    """Runs of lines claimed by line-oriented kinds; unclaimed lines join the run before them."""
    segments: list[Segment] = []
    current: ArtifactKind | None = None
    seg_start = start
    claimed: dict[str, ArtifactKind | None] = {}  # a log repeats its lines; each is judged once
    seen = claimed.get
    for i in range(start, end):
        line = lines[i]
        kind = seen(line, _UNSEEN)
        if kind is _UNSEEN:
            if len(claimed) >= _CLAIM_CACHE:
                claimed.clear()  # lines that all differ (timestamps) would otherwise keep a second copy of the log
            kind = claimed[line] = _claimed(line)
        if kind is None or kind is current:
            continue
        if current is not None:
            segments.append(Segment(current, seg_start + 1, i))
        current, seg_start = kind, i
    if current is not None:
        segments.append(Segment(current, seg_start + 1, end))
    return segments


def _merge(segments: list[Segment]) -> list[Segment]:
    merged: list[Segment] = []
    for seg in segments:
        if merged and merged[-1].kind == seg.kind:
            merged[-1] = Segment(seg.kind, merged[-1].start, seg.end)
        else:
            merged.append(seg)
    return merged


def segment_text(text: str, segment: Segment) -> str:
    """The paste with every line outside the segment blanked, so citations keep the paste's numbering."""
    lines = normalise(text).split("\n")
    return "\n".join(line if segment.start <= n <= segment.end else "" for n, line in enumerate(lines, 1))
