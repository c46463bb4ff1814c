"""Which playbook files have already passed every check, remembered by content hash, so a run that loads the
playbooks does not parse 400 templates and walk every likely clause again. `playbooks lint` never trusts it.

A file's key covers what the checks depend on: its text, the checks' own code, the fact vocabulary, the symptoms
and the chart series. Only files that passed are remembered; the marker is an empty file, so nothing is ever read
back from the cache but its existence. A cache that cannot be written is simply not used."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from collectors.catalogs.queries import RANGE_METRICS
from collectors.vocabulary import VOCABULARY
from playbooks.model import SYMPTOMS

_LOADER = Path(__file__).with_name("loader.py")


def cache_dir() -> Path | None:
    """$TRIAGEBOT_CACHE_DIR, else $XDG_CACHE_HOME/triagebot, else ~/.cache/triagebot; "" turns the cache off."""
    configured = os.environ.get("TRIAGEBOT_CACHE_DIR")
    if configured is not None:
        return Path(configured) / "checked" if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "triagebot" / "checked"


@functools.cache
def _context() -> bytes:
    """What the checks depend on apart from the file itself."""
    facts = sorted(f"{spec.name}:{spec.type}" for spec in VOCABULARY.values())
    parts = [_LOADER.read_bytes(), "\n".join(facts).encode(), "\n".join(SYMPTOMS).encode(),
             "\n".join(sorted(f"{k}:{s.unit}" for k, s in RANGE_METRICS.items())).encode()]
    return hashlib.sha256(b"\0".join(parts)).digest()


def key(text: str) -> str:
    return hashlib.sha256(_context() + text.encode("utf-8")).hexdigest()


def passed(file_key: str) -> bool:
    folder = cache_dir()
    return folder is not None and (folder / file_key).is_file()


def remember(file_key: str) -> None:
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / file_key).touch()
    except OSError:
        pass  # a read-only home or a full disk: the next run checks again, which is only slower
