"""`top` (interactive copy or `top -b`) into how busy the CPUs are and how much time waits on I/O.

A GPU idling while the CPUs are saturated is the starved-input-pipeline pattern (seed 004:1471-1475); high
I/O wait instead points at storage. `top -b` prints the first frame from counters since boot, so the last
frame in the paste is the one read.
"""

from __future__ import annotations

import re

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.text import normalise

# "%Cpu(s): 96.1 us,  1.9 sy,  0.0 ni,  1.6 id,  0.2 wa,  0.0 hi,  0.2 si,  0.0 st" (procps-ng); old top
# prints "Cpu(s): 96.1%us, ..." instead.
_CPU = LazyPattern(r"^%?Cpu\(s\):\s*(.*)$")
_FIELD = LazyPattern(r"(\d+(?:\.\d+)?)\s*%?\s*(us|sy|ni|id|wa|hi|si|st)\b")


def sniff(text: str) -> int:
    head = text[:50_000]
    if re.search(r"(?m)^%?Cpu\(s\):", head):
        return 95 if re.search(r"(?m)^top - \d", head) else 80
    return 0


def parse(artifact: Artifact) -> ParseResult:
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    last: tuple[dict[str, float], int] | None = None
    for n, line in enumerate(lines, 1):
        if m := _CPU.match(line.strip()):
            fields = {name: float(value) for value, name in _FIELD.findall(m.group(1))}
            if "id" in fields:
                last = (fields, n)
    if last is not None:
        fields, n = last
        sink.add("cpu.busy_ratio", round(max(0.0, 100.0 - fields["id"]) / 100, 4), n)
        if "wa" in fields:
            sink.add("cpu.iowait_ratio", round(fields["wa"] / 100, 4), n)
    elif any(_CPU.match(line.strip()) for line in lines):
        sink.problem("top: a CPU summary line without an idle (id) field; CPU use left unknown")
    return sink.done()


PARSER = Parser(kinds=(ArtifactKind.TOP,), parse=parse, sniff=sniff, reads_many=True)
