"""PyTorch Flight Recorder dumps (TORCH_NCCL_TRACE_BUFFER_SIZE / TORCH_FR_BUFFER_SIZE, TORCH_NCCL_DUMP_ON_TIMEOUT)
to rows of the rank table, so the same wave front is drawn from dumps as from logs.

A dump is a pickle of plain dicts, lists, strings and numbers: `pg_status` holds each process group's
`last_enqueued_collective` / `last_completed_collective`, `entries` the last collectives with op, sizes and
state. A pickle can name any class and run code when loaded, and dumps arrive from other machines, so they are
loaded by an unpickler that refuses every class: only the builtin containers and scalars pickle encodes without
one can come through. Anything else is refused with a reason, never executed.
"""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass, field
from typing import Any

from collectors.parsers.nccl_ranks import RankRow, RankTable

MAX_DUMP_BYTES = 64 * 2**20


class RefusedDump(ValueError):
    """The bytes are not a plain Flight Recorder dump."""


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise RefusedDump(f"refused: the pickle names {module}.{name}; a Flight Recorder dump holds only plain data")

    def persistent_load(self, pid: Any) -> Any:
        raise RefusedDump("refused: the pickle uses persistent ids")


def load(data: bytes) -> dict[str, Any]:
    """A dump as plain data; raises RefusedDump for anything else."""
    if len(data) > MAX_DUMP_BYTES:
        raise RefusedDump(f"refused: {len(data)} bytes is over the {MAX_DUMP_BYTES}-byte limit")
    try:
        value = _PlainUnpickler(io.BytesIO(data)).load()
    except RefusedDump:
        raise
    except Exception as exc:  # truncated or not a pickle at all
        raise RefusedDump(f"unreadable: {type(exc).__name__}: {exc}") from exc
    if not isinstance(value, dict) or not isinstance(value.get("entries", []), list):
        raise RefusedDump("not a Flight Recorder dump: no entries list")
    return value


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
    raw = load(data)
    dump = Dump(rank)
    status = raw.get("pg_status")
    for group, fields in (status.items() if isinstance(status, dict) else []):
        enq, done = (fields.get(k) for k in ("last_enqueued_collective", "last_completed_collective"))
        if isinstance(enq, int) and isinstance(done, int) and enq >= 0 and done >= -1:
            dump.progress[str(group)] = (enq, max(done, 0))
    for item in raw["entries"]:
        if not isinstance(item, dict) or not isinstance(item.get("collective_seq_id"), int):
            continue
        pg = item.get("process_group")
        group = str(pg[0]) if isinstance(pg, (list, tuple)) and pg else str(item.get("pg_id", ""))
        dump.entries.append(Entry(group, item["collective_seq_id"], str(item.get("profiling_name", "")),
                                  item.get("input_sizes") or [], str(item.get("state", "")),
                                  item.get("retired") is True))
    return dump


def table(dumps: list[Dump], group: str = "0") -> RankTable:
    """The rank table of one process group from every rank's dump."""
    out = RankTable()
    for dump in dumps:
        if group not in dump.progress:
            continue
        enq, done = dump.progress[group]
        op = next((e.op for e in dump.entries if e.group == group and e.seq == done + 1), "")
        out.rows[(group, dump.rank)] = RankRow(dump.rank, group, enqueued=enq, completed=done, op=op)
        if out.last_completed is None or done > out.last_completed[0]:
            out.last_completed = (done, 0)
    return out
