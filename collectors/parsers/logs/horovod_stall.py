"""Horovod's stall inspector block: which rank has not submitted which tensors.

The coordinator prints, under its stall warning, one line per rank that is missing tensors other ranks submitted:
"Stalled ranks:" (horovod/common/stall_inspector.cc, 0.17-0.20) or "Missing ranks:" (0.21-0.28), then
"<rank>[!]: [<tensor>, <tensor>, ... ...]" (at most six names shown; "!" marks a rank past the shutdown time).
Two ranks each missing tensors the other is not missing have each submitted something the other has not: they
are on different collectives (a broadcast on one, an all-reduce on the other), which deadlocks. Ranks that all
miss the same tensors are behind the others: they are the suspects, as the older per-op "[missing ranks: ...]"
line says (collectors/catalogs/signals.yaml, horovod-missing-ranks).
"""

from __future__ import annotations

import re

from collectors.parsers.sink import FactSink

_HEAD = re.compile(r"^\s*(?:Stalled|Missing) ranks:\s*$")
_RANK = re.compile(r"^\s*(\d+)!?: \[(.*)\]\s*$")
# A line longer than this is not a rank line; it is not searched (keeps the work per line bounded).
_MAX_LINE = 20_000


def _names(listed: str) -> frozenset[str]:
    """The tensor names shown, without the " ..." that ends a cut list."""
    return frozenset(n.strip() for n in listed.removesuffix(" ...").split(", ") if n.strip())


def emit(sink: FactSink, lines: list[str]) -> None:
    """nccl.collectives_differ, or nccl.suspect_ranks, from each stall block in the lines."""
    n = 0
    while n < len(lines):
        if not _HEAD.match(lines[n][:_MAX_LINE]):
            n += 1
            continue
        head, rows = n + 1, []
        n += 1
        while n < len(lines) and (m := _RANK.match(lines[n][:_MAX_LINE])) is not None:
            rows.append((int(m.group(1)), _names(m.group(2)), n + 1))
            n += 1
        if not rows:
            continue
        missing = {names for _, names, _ in rows}
        if len(missing) > 1 and any(a.isdisjoint(b) for a in missing for b in missing if a is not b):
            sink.add("nccl.collectives_differ", True, head, rows[-1][2])
        elif len(missing) == 1:
            for rank, _, line in rows:
                sink.add("nccl.suspect_ranks", [rank], line)
