"""Which playbook files have already passed every check, remembered by content hash, so a run that loads the
playbooks does not parse 400 templates and walk every likely clause again. `playbooks lint` never trusts it.

A file's key covers what the checks depend on: its text, the checks' own code, the fact vocabulary, the symptoms
and the chart series. Only files that passed are remembered; the marker is an empty file, so nothing is ever read
back from the cache but its existence. A cache that cannot be written is simply not used."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from collectors.catalogs.queries import RANGE_METRICS
from collectors.parsed_cache import cache_root
from collectors.vocabulary import VOCABULARY
from playbooks.model import SYMPTOMS

_LOADER = Path(__file__).with_name("loader.py")


def cache_dir() -> Path | None:
    """checked/ in the user's cache folder (collectors.parsed_cache.cache_root); None when caching is off."""
    root = cache_root()
    return root / "checked" if root is not None else None


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
