"""Parsed data files remembered by content hash, so a start does not parse the same YAML again.

Catalogs, the vocabulary's producers and the playbooks are parsed at every start of `analyze`; PyYAML spends
most of a one-line paste's time on them. The parsed data (plain dicts, lists and scalars) is kept with `marshal`,
the format of the interpreter's own bytecode cache, in the user's cache folder (never in the repository), under
the hash of the text, the parse's kind and the interpreter version: a changed file is simply a new key. Data
that marshal cannot hold (a YAML date) is not remembered; a cache that cannot be read or written is not used.
Nothing is trusted that the text would not give: validation and every check still run on what comes back."""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


def cache_root() -> Path | None:
    """$TRIAGEBOT_CACHE_DIR, else $XDG_CACHE_HOME/triagebot, else ~/.cache/triagebot; "" turns caching off."""
    configured = os.environ.get("TRIAGEBOT_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "triagebot"


def private(path: Path) -> bool:
    """The file and its folder belong to this user and nobody else may write them: the test before unpickling a
    cached object (unpickling runs code; whoever could write such a file could already act as this user)."""
    for item in (path.parent, path):
        info = item.stat()
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            return False
    return True


def remembered(kind: str, text: str, parse: Callable[[str], Any]) -> Any:
    """parse(text), from the cache when this exact text was parsed this way before."""
    root = cache_root()
    if root is None:
        return parse(text)
    tag = f"{kind}\0{sys.version_info[:2]}\0{marshal.version}\0".encode()
    path = root / "parsed" / hashlib.sha256(tag + text.encode("utf-8")).hexdigest()
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        pass  # not cached yet, or unreadable: parse again
    value = parse(text)
    try:
        data = marshal.dumps(value)
    except ValueError:
        return value  # holds something marshal cannot keep
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")  # each writer its own
        partial.write_bytes(data)
        os.replace(partial, path)  # whole or not at all: a reader never sees half a file
    except OSError:
        pass  # a read-only home or a full disk: the next start parses again, which is only slower
    return value
