"""Which playbook files have already passed every check, remembered by content hash, so a run that loads the
playbooks does not parse 400 templates, walk every likely clause, nor validate the file against its schema again.
`playbooks lint` never trusts it.

A file's key covers what the checks and the schema depend on: its text, the checks' and the models' own code, the
pydantic version, the fact vocabulary, the symptoms and the chart series. Only files that passed are remembered,
with their validated Playbook (pickled, in the user's cache folder, read only when the file and its folder are
this user's and nobody else may write them: collectors.parsed_cache.private); the models are declared with
`defer_build`, so a start whose files all passed never builds their validators. A cache that cannot be read or
written is simply not used."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import threading
from pathlib import Path

from collectors.catalogs.queries import RANGE_METRICS
from collectors.parsed_cache import cache_root, private
from collectors.vocabulary import VOCABULARY
from playbooks.model import SYMPTOMS, Playbook

# The checks, the schema, and the query catalog the schema takes its series keys and units from.
_CODE = (Path(__file__).with_name("loader.py"), Path(__file__).with_name("model.py"),
         Path(__file__).parents[1] / "collectors" / "catalogs" / "queries.py")


def cache_dir() -> Path | None:
    """checked/ in the user's cache folder (collectors.parsed_cache.cache_root); None when caching is off."""
    root = cache_root()
    return root / "checked" if root is not None else None


@functools.cache
def _context() -> bytes:
    """What the checks depend on apart from the file itself."""
    from pydantic.version import VERSION

    facts = sorted(f"{spec.name}:{spec.type}" for spec in VOCABULARY.values())
    parts = [*(path.read_bytes() for path in _CODE), VERSION.encode(), "\n".join(facts).encode(),
             "\n".join(SYMPTOMS).encode(),
             "\n".join(sorted(f"{k}:{s.unit}" for k, s in RANGE_METRICS.items())).encode()]
    return hashlib.sha256(b"\0".join(parts)).digest()


def key(text: str) -> str:
    return hashlib.sha256(_context() + text.encode("utf-8")).hexdigest()


def passed(file_key: str) -> Playbook | None:
    """The validated playbook of a file that passed every check, None when it has not (or the cache is off)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        if not private(folder / file_key):
            return None  # someone else could have written it: check the file again
        spec = pickle.loads((folder / file_key).read_bytes())
    except (OSError, EOFError, ValueError, TypeError, AttributeError, ImportError, pickle.UnpicklingError):
        return None  # not checked yet, or unreadable: check again
    return spec if isinstance(spec, Playbook) else None


def remember(file_key: str, spec: Playbook) -> None:
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = folder / f"{file_key}.{os.getpid()}.{threading.get_ident()}"  # each writer its own
        partial.write_bytes(pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(partial, folder / file_key)  # whole or not at all: a reader never sees half a file
    except (OSError, pickle.PicklingError):
        pass  # a read-only home or a full disk: the next run checks again, which is only slower
