"""Flight Recorder dump files (TORCH_NCCL_DUMP_ON_TIMEOUT) as bytes in, plain data and one artifact's text out.

Shared by every edge that meets dump files (the CLI, recorded incidents, the live node reader) and by the
parser, which reads the text this writes. A dump is a pickle of plain dicts, lists, strings and numbers. A
pickle can name any class and run code when loaded, and dumps arrive from other machines, so they are loaded by
an unpickler that refuses every class: only the builtin containers and scalars pickle encodes without one can
come through. Anything else is refused with a reason, never executed. Pure: no I/O.
"""

from __future__ import annotations

import io
import json
import pickle
from typing import Any

from collectors.lazy_regex import LazyPattern

MAX_DUMP_BYTES = 64 * 2**20
# `nccl_trace_rank_3` (TORCH_NCCL_DEBUG_INFO_TEMP_FILE's default prefix), `rank_3.pkl`, `rank-3.json`.
_RANK_NAME = LazyPattern(r"rank[_-]?(\d{1,7})(?:\.\w{1,8})?$")


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


def rank_of_name(name: str) -> int | None:
    """The rank a dump's file name ends with, as PyTorch names them."""
    m = _RANK_NAME.search(name)
    return int(m.group(1)) if m else None


def is_pickle(data: bytes) -> bool:
    """Bytes that start like a pickle of protocol 2 or later (what torch writes)."""
    return len(data) > 2 and data[0] == 0x80 and 2 <= data[1] <= 5


def _plain(value: Any) -> Any:
    """JSON-ready: tuples become lists and bytes text, as the dump's own JSON form shows them."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def is_dump(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("entries"), list) and "pg_status" in value


def bundle(files: list[tuple[str, bytes]]) -> tuple[str, list[str]]:
    """Per-rank dump files (pickles or their JSON form) as one artifact's text: a JSON object from each file's
    name to its dump, so each rank keeps the name its rank is read from. Files that are no dump are refused
    with a reason, never loaded as anything else."""
    dumps: dict[str, Any] = {}
    problems: list[str] = []
    for name, data in files:
        try:
            raw = load(data) if is_pickle(data) else json.loads(data.decode("utf-8"))
        except RefusedDump as err:
            problems.append(f"{name}: {err}")
            continue
        except ValueError as err:  # not JSON, not UTF-8
            problems.append(f"{name}: not a Flight Recorder dump ({type(err).__name__})")
            continue
        if not is_dump(raw):
            problems.append(f"{name}: not a Flight Recorder dump (no entries and pg_status)")
            continue
        dumps[name] = _plain(raw)
    if not dumps:
        return "", problems
    # One rank per line, ranks in order: the rank table cites each rank's own line, and 512 ranks of 2,000
    # entries stay 514 lines.
    ordered = sorted(dumps.items(), key=lambda item: (rank_of_name(item[0]) is None, rank_of_name(item[0]) or 0,
                                                      item[0]))
    body = ",\n".join(f"{json.dumps(name)}: {json.dumps(dump, sort_keys=True)}" for name, dump in ordered)
    return "{\n" + body + "\n}\n", problems
