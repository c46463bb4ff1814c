"""A paste that ends while its ranks join the process group: the job is stuck in init_process_group.

Training frameworks announce each rank right before torch.distributed.init_process_group, and rank 0 says so once
every rank has joined (collectors/catalogs/train_logs.yaml `dist_init`, each with its source). When the last lines
of a paste are those announcements and nothing says the ranks joined, the ranks are waiting inside the rendezvous:
people paste exactly that when a job "hangs at initializing". Read as nccl.waiting_for_join.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from collectors.parsers.sink import FactSink
from collectors.yaml_safe import load_file

CATALOG = Path(__file__).resolve().parents[2] / "catalogs" / "train_logs.yaml"
# Longer lines are no announcement (keeps the work per line bounded).
_MAX_LINE = 2_000
# Lines that end a paste without being output: blanks, markdown fences, an ellipsis a person typed.
# At most this many lines of the ranks' waiting may follow the last announcement (one per rank of a node, and the
# rendezvous' own progress lines).
_MAX_WAITING = 40
_FILLER = re.compile(r"^\s*(?:`{3,}\w*|~{3,}|\.{2,}|…)?\s*$")


@dataclass(frozen=True)
class InitBanner:
    id: str
    joining: re.Pattern[str]
    joined: tuple[str, ...]
    then: tuple[str, ...]


@cache
def banners() -> tuple[InitBanner, ...]:
    raw = load_file(CATALOG)
    return tuple(InitBanner(e["id"], re.compile(e["joining"], re.IGNORECASE), tuple(e["joined"]),
                            tuple(e.get("then", ()))) for e in raw["dist_init"])


def _joining(line: str) -> InitBanner | None:
    if len(line) > _MAX_LINE:
        return None
    return next((b for b in banners() if b.joining.search(line)), None)


def stalled_at(lines: list[str]) -> int | None:
    """The 1-based line of the last announcement when the paste ends on it (or on lines its ranks print while they
    wait) and no line says every rank joined; None otherwise."""
    waiting: list[str] = []  # the lines after the last announcement that are not filler
    for n in range(len(lines), 0, -1):
        line = lines[n - 1]
        if _FILLER.match(line):
            continue
        banner = _joining(line)
        if banner is None:
            waiting.append(line)
            if len(waiting) > _MAX_WAITING:
                return None
            continue
        if not all(any(word in text for word in banner.then) for text in waiting):
            return None
        if any(word in text for text in lines for word in banner.joined):
            return None
        return n
    return None


def emit(sink: FactSink, lines: list[str]) -> None:
    if (n := stalled_at(lines)) is not None:
        sink.add("nccl.waiting_for_join", True, n)
