"""PyTorch Flight Recorder dumps (TORCH_NCCL_TRACE_BUFFER_SIZE / TORCH_FR_BUFFER_SIZE, TORCH_NCCL_DUMP_ON_TIMEOUT)
to rows of the rank table, so the same wave front is drawn from dumps as from logs.

A dump holds plain dicts, lists, strings and numbers: `pg_status` holds each process group's
`last_enqueued_collective` / `last_completed_collective`, `entries` the last collectives with op, sizes and
state. The pickle is loaded by collectors/flight_dumps.py's unpickler, which refuses every class; the
`flight-recorder` artifact holds the dumps in their JSON form (torch prints the same data as JSON), one rank
per line, each under the file name its rank is read from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from collectors.flight_dumps import MAX_DUMP_BYTES, RefusedDump, bundle, is_dump, is_pickle, load, rank_of_name
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.gpu import nccl_ranks
from collectors.parsers.gpu.nccl_ranks import RankRow, RankTable
from collectors.parsers.sink import FactSink
from collectors.sniffers.flight_recorder import sniff

_INT = re.compile(r"-?\d{1,18}")


@dataclass
class Entry:
    """One recorded collective of one rank."""

    group: str
    seq: int
    op: str
    sizes: list[Any]
    state: str
    retired: bool


@dataclass
class Dump:
    rank: int
    progress: dict[str, tuple[int, int]] = field(default_factory=dict)  # group -> (last enqueued, last completed)
    entries: list[Entry] = field(default_factory=list)


def read(rank: int, data: bytes) -> Dump:
    """One rank's dump; the rank is the dump file's suffix (`nccl_trace_rank_<r>`), the dump itself omits it."""
    return from_plain(rank, load(data))


def _number(value: Any) -> int | None:
    """An int as the pickle holds it, or as the JSON form prints it (a string of digits, maybe negative)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT.fullmatch(value):
        return int(value)
    return None


def from_plain(rank: int, raw: dict[str, Any]) -> Dump:
    """A dump already loaded as plain data (from the pickle, or its JSON form)."""
    dump = Dump(rank)
    status = raw.get("pg_status")
    for group, fields in (status.items() if isinstance(status, dict) else []):
        if not isinstance(fields, dict):
            continue
        enq, done = (_number(fields.get(k)) for k in ("last_enqueued_collective", "last_completed_collective"))
        # -1 enqueued: the rank has enqueued nothing in that group yet (behind any collective the others wait on).
        if enq is not None and done is not None and enq >= -1 and done >= -1:
            dump.progress[str(group)] = (enq, max(done, 0))
    entries = raw.get("entries")
    for item in entries if isinstance(entries, list) else []:
        seq = _number(item.get("collective_seq_id")) if isinstance(item, dict) else None
        if not isinstance(item, dict) or seq is None:
            continue
        pg = item.get("process_group")
        group = str(pg[0]) if isinstance(pg, (list, tuple)) and pg else str(item.get("pg_id", ""))
        dump.entries.append(Entry(group, seq, str(item.get("profiling_name", "")),
                                  item.get("input_sizes") or [], str(item.get("state", "")),
                                  item.get("retired") is True))
    return dump


def table(dumps: list[Dump], group: str = "0", lines: dict[int, int] | None = None) -> RankTable:
    """The rank table of one process group from every rank's dump; `lines` gives each rank's line to cite."""
    out = RankTable()
    for dump in dumps:
        if group not in dump.progress:
            continue
        enq, done = dump.progress[group]
        pending = next((e for e in dump.entries if e.group == group and e.seq == done + 1), None)
        op, sizes = (pending.op, str(pending.sizes) if pending.sizes else "") if pending else ("", "")
        line = (lines or {}).get(dump.rank, 0)
        out.rows[(group, dump.rank)] = RankRow(dump.rank, group, enqueued=enq, completed=done, op=op, sizes=sizes,
                                               line=line)
        if out.last_completed is None or done > out.last_completed[0]:
            out.last_completed = (done, line)
    return out


# ---- the flight-recorder artifact: one rank's dump, or a folder of them, as JSON text ----------------------

__all__ = ["MAX_DUMP_BYTES", "PARSER", "Dump", "Entry", "RefusedDump", "bundle", "from_plain", "is_pickle", "load",
           "rank_of_name", "read", "table"]


def _dumps_of(artifact: Artifact, text: str, problems: list[str]) -> list[tuple[str, int, dict[str, Any]]]:
    """(name, rank, dump) for each rank in the artifact; a dump whose rank cannot be told is a problem."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as err:  # RecursionError: nesting deeper than the decoder goes
        problems.append(f"not JSON: {err}")
        return []
    named = {artifact.subject or artifact.id: doc} if is_dump(doc) else doc if isinstance(doc, dict) else {}
    out: list[tuple[str, int, dict[str, Any]]] = []
    for name, dump in named.items():
        if not is_dump(dump):
            problems.append(f"{name}: not a Flight Recorder dump (no entries and pg_status)")
            continue
        rank = rank_of_name(str(name))
        if rank is None:
            problems.append(f"{name}: rank unknown; name each dump as PyTorch does (nccl_trace_rank_<r>)")
            continue
        first = next((n for n, r, _ in out if r == rank), None)
        if first is not None:  # the pickle and its JSON form side by side, or two runs' dumps in one folder
            problems.append(f"{name}: a second dump of rank {rank}; {first} is read")
            continue
        out.append((str(name), rank, dump))
    return out


def _key_lines(text: str, names: list[str]) -> dict[str, int]:
    """The 1-based line where each dump's key opens in the bundle (1 for a single dump)."""
    found: dict[str, int] = {}
    wanted = {json.dumps(n) + ":": n for n in names}
    for number, line in enumerate(text.split("\n"), 1):
        key = line.lstrip()[: line.lstrip().find(":") + 1] if '":' in line else ""
        if key in wanted:
            found.setdefault(wanted[key], number)
    return found


def _world(dumps: list[tuple[str, int, dict[str, Any]]]) -> int | None:
    """The job's size from the default group's `pg_config` ranks (`"[0, 1, 2, 3]"`), when all dumps agree."""
    sizes = set()
    for _, _, dump in dumps:
        config = dump.get("pg_config")
        for group in (config.values() if isinstance(config, dict) else []):
            ranks = group.get("ranks") if isinstance(group, dict) else None
            if isinstance(ranks, str) and ranks.startswith("["):
                sizes.add(len([r for r in ranks.strip("[]").split(",") if r.strip()]))
                break
    return sizes.pop() if len(sizes) == 1 else None


def parse(artifact: Artifact) -> ParseResult:
    """The wave front from every rank's dump: the same facts the rank table gives from logs."""
    sink = FactSink(artifact)
    problems: list[str] = []
    found = _dumps_of(artifact, artifact.content, problems)
    for problem in problems:
        sink.problem(problem)
    if not found:
        return sink.done()
    lines = _key_lines(artifact.content, [name for name, _, _ in found])
    rank_lines = {rank: lines.get(name, 1) for name, rank, _ in found}
    ranks = table([from_plain(rank, dump) for _, rank, dump in found], lines=rank_lines)
    world = _world(found)
    nccl_ranks.emit(sink, ranks, (world, 1) if world else None)
    return sink.done()


PARSER = Parser(kinds=(ArtifactKind.FLIGHT_RECORDER,), parse=parse, sniff=sniff)
