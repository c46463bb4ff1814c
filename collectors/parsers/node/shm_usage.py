"""How big /dev/shm is and how full, to pod.shm_size_bytes and pod.shm_used_ratio.

Reads what people paste after `kubectl exec ... -- df -h /dev/shm` (coreutils and busybox `df`, in 1K blocks,
`-h`, `-m`, `-k`, `-B`), and the node agent's /v1/shm JSON (schema
"triagebot.shm/v1", collectors/agent/shm.py). Only the row mounted on /dev/shm is read: other filesystems in the
same table say nothing about shared memory. The NCCL and DataLoader playbooks ask the same question the seeds
teach (`df -h /dev/shm` inside the pod): is there room, and is it full.
"""

from __future__ import annotations

import json

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.text import normalise

SCHEMA_PREFIX = "triagebot.shm/"
SHM = "/dev/shm"

# coreutils src/df.c headers: "Filesystem  1K-blocks  Used Available Use% Mounted on", "Size Used Avail Use%"
# with -h/-H, "1M-blocks" with -m, "<N>-blocks" with -B; busybox df prints "1K-blocks ... Use% Mounted on" too.
_HEADER = LazyPattern(r"^\s*Filesystem\s+(?:(?P<block>\d+[KkMG]?)-blocks|Size)\s+Used\s+Avail(?:able)?\s+"
                      r"(?:Capacity|Use%)\s+Mounted\s+on\s*$")
# A row: filesystem, size, used, available, use%, mount point (GNU df puts nothing else on the line).
_ROW = LazyPattern(r"^\s*(?P<fs>\S+)\s+(?P<size>[\d.,]+[KMGTPE]?i?B?)\s+(?P<used>[\d.,]+[KMGTPE]?i?B?)\s+"
                   r"(?P<avail>[\d.,]+[KMGTPE]?i?B?)\s+(?P<pct>\d{1,3})%\s+(?P<mount>/\S*)\s*$")
_UNITS = "KMGTPE"


def _bytes(cell: str, block: int) -> int | None:
    """A df size cell in bytes: a plain count of blocks, or a -h figure with its unit letter (powers of 1024;
    `-H` prints powers of 1000 under the same header, so its figures read 2-5 % high, which no rule minds)."""
    text = cell.replace(",", ".").rstrip("B").rstrip("i")
    unit = text[-1:] if text[-1:] in _UNITS else ""
    number = text[:-1] if unit else text
    try:
        value = float(number)
    except ValueError:
        return None
    if not unit:
        return int(value * block)
    return int(value * 1024 ** (_UNITS.index(unit) + 1))


def _block_size(token: str | None) -> int:
    if not token:
        return 1  # a "Size" header: the cells carry their own units (plain numbers are bytes)
    unit = token[-1:].upper()
    count = int(token[:-1] if unit in _UNITS else token)
    return count * (1024 ** (_UNITS.index(unit) + 1) if unit in _UNITS else 1)


def _from_df(lines: list[str], sink: FactSink) -> None:
    block: int | None = None
    for number, line in enumerate(lines, 1):
        if (header := _HEADER.match(line)) is not None:
            block = _block_size(header.group("block"))
            continue
        row = _ROW.match(line)
        if block is None or row is None or row.group("mount") != SHM:
            continue
        size = _bytes(row.group("size"), block)
        if size is not None and size > 0:
            sink.add("pod.shm_size_bytes", size, number)
        sink.add("pod.shm_used_ratio", round(int(row.group("pct")) / 100, 3), number)


def _from_agent(text: str, lines: list[str], sink: FactSink) -> None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as err:
        sink.problem(f"/dev/shm answer is not JSON: {err}")
        return
    if not isinstance(doc, dict) or doc.get("available") is not True:
        reason = doc.get("error") if isinstance(doc, dict) else None
        sink.problem(f"/dev/shm sizes unavailable: {reason or 'no reason given'}")
        return
    for entry in doc.get("containers") or []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("container") or "")
        line = next((i for i, text_line in enumerate(lines, 1) if f'"{name}"' in text_line), 1)
        size, used = entry.get("size_bytes"), entry.get("used_bytes")
        if isinstance(entry.get("error"), str):
            sink.problem(f"/dev/shm of container {name}: {entry['error']}")
        if isinstance(size, int) and size > 0 and isinstance(used, int) and used >= 0:
            sink.add("pod.shm_size_bytes", size, line)
            sink.add("pod.shm_used_ratio", round(min(used / size, 1.0), 3), line)


def parse(artifact: Artifact) -> ParseResult:
    """The size and use of /dev/shm from a df table or the agent's answer."""
    text = normalise(artifact.content[:4 * 1024 * 1024])
    lines = text.split("\n")
    sink = FactSink(artifact, lines)
    if text.lstrip().startswith("{"):
        _from_agent(text, lines, sink)
    else:
        _from_df(lines, sink)
    return sink.done()


def sniff(text: str) -> int:
    """0-100 confidence that the text is a df table with a /dev/shm row, or the agent's /dev/shm answer."""
    head = text[:200_000]
    if head.lstrip().startswith("{") and SCHEMA_PREFIX in head[:2000]:
        return 95
    lines = normalise(head).split("\n")[:500]
    if not any(_HEADER.match(line) for line in lines):
        return 0
    return 90 if any((row := _ROW.match(line)) is not None and row.group("mount") == SHM for line in lines) else 30


PARSER = Parser(kinds=(ArtifactKind.DF,), parse=parse, sniff=sniff)
