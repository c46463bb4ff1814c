"""Keeping answers under a byte budget: text keeps its head and says where it was cut."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from collectors.agent.errors import AgentError


def marker(limit: int) -> str:
    return f"… truncated at {limit} bytes\n"


def truncate_text(text: str, limit: int) -> tuple[str, bool]:
    """The text if it fits in `limit` UTF-8 bytes; else its first whole lines plus a marker line.

    The head is kept because a window's first lines hold the first error (the first Xid is the root
    cause; later ones are usually after-effects), and a cut mid-line could forge a different message.
    """
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    tail = marker(limit).encode("utf-8")
    room = max(0, limit - len(tail))
    head = data[:room]
    cut = head.rfind(b"\n")
    head = head[: cut + 1] if cut >= 0 else b""
    return head.decode("utf-8", errors="ignore") + tail.decode("utf-8"), True


def read_head(path: Path, limit: int) -> str:
    """At most the first `limit` bytes of a file that should be small (a guard against odd /proc files)."""
    with path.open("rb") as handle:
        return handle.read(limit).decode("utf-8", errors="replace")


def dump_json(doc: dict[str, Any]) -> str:
    """Pretty JSON, one key per line, so parsers can cite the line a value sits on."""
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def bounded_json(doc: dict[str, Any], limit: int, list_key: str) -> str:
    """JSON within `limit` bytes, dropping entries from the end of doc[list_key] until it fits.

    JSON cannot be cut like text, so the one list that grows without bound (events) is shortened and the
    answer says how many entries were left out. When even an empty list does not fit, the budget is too
    small for this node and the caller is told the size that would work.
    """
    text = dump_json(doc)
    items = doc.get(list_key)
    total = len(items) if isinstance(items, list) else 0
    kept = list(items) if isinstance(items, list) else []
    while len(text.encode("utf-8")) > limit:
        if not kept:
            raise AgentError(400, f"max_bytes={limit} is too small for this answer",
                             f"max_bytes of at least {_fits(doc, list_key, total)}")
        kept = kept[: len(kept) // 2] if len(kept) > 8 else kept[:-1]
        text = dump_json({**doc, list_key: kept, "truncated": {list_key: total - len(kept), "limit_bytes": limit}})
    return text


def _fits(doc: dict[str, Any], list_key: str, total: int) -> int:
    """The smallest budget an answer with an empty list fits in: it names that budget, so iterate until the
    number of digits settles."""
    need = 0
    while True:
        size = len(dump_json({**doc, list_key: [], "truncated": {list_key: total, "limit_bytes": need}}).encode())
        if size <= need:
            return need
        need = size
