"""Catalogs validated once: the validated objects remembered by content hash, so a start does not validate the same
catalog again, nor build the validators of its pydantic models (they are declared with `defer_build`, and an object
that comes back from the cache never meets its validator).

The key covers what validation depends on: the catalog's text, the code of every catalog model
(collectors/catalogs/*.py) and of any other check the caller names, the fact vocabulary the validators check names
against, and the pydantic and Python versions. The objects are kept with pickle in the user's cache folder
(collectors.parsed_cache.cache_root), beside the parsed YAML. Unpickling runs code, so a file is read only when
it and its folder belong to the user running this program and nobody else may write them
(collectors.parsed_cache.private): whoever could write it could already act as that user. A cache that cannot be
read or written is not used; tests/unit/parsers/test_catalogs_validated.py validates every catalog with the cache
off."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from collectors.parsed_cache import cache_root, private
from collectors.yaml_safe import load_file

T = TypeVar("T")
_HERE = Path(__file__).parent


@functools.cache
def _context() -> bytes:
    from pydantic.version import VERSION

    from collectors.vocabulary import VOCABULARY

    code = [path.read_bytes() for path in sorted(_HERE.glob("*.py"))]
    facts = "\n".join(sorted(f"{spec.name}:{spec.type}" for spec in VOCABULARY.values())).encode()
    versions = f"{sys.version_info[:2]}\0{VERSION}\0{pickle.HIGHEST_PROTOCOL}".encode()
    return hashlib.sha256(b"\0".join([*code, facts, versions])).digest()


def validated(paths: tuple[Path, ...], validate: Callable[..., T], code: tuple[Path, ...] = ()) -> T:
    """validate(data of each path, in order): from the cache when these exact texts were validated before by the
    same code (`code`: the files of the checks outside collectors/catalogs/)."""
    root = cache_root()
    if root is None:
        return validate(*(load_file(path) for path in paths))
    digest = hashlib.sha256(_context())
    for path in code:
        digest.update(path.read_bytes() + b"\0")
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    cached = root / "validated" / digest.hexdigest()
    try:
        if private(cached):
            value: T = pickle.loads(cached.read_bytes())
            return value
    except (OSError, EOFError, ValueError, TypeError, AttributeError, ImportError, pickle.UnpicklingError):
        pass  # not cached yet, or written by other code: validate again
    value = validate(*(load_file(path) for path in paths))
    _store(cached, value)
    return value


def _store(path: Path, value: Any) -> None:
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")  # each writer its own
        partial.write_bytes(data)
        os.replace(partial, path)  # whole or not at all: a reader never sees half a file
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass  # a read-only home, a full disk, or an object pickle cannot keep: validated again next time
