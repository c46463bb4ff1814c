"""YAML loading, safe and fast: libyaml's safe loader when PyYAML was built with it, else the Python one.

Catalogs, the vocabulary and playbooks load at every start, and pasted YAML can be large; the C loader is about ten
times faster and builds the same plain data. PyYAML itself is imported when a text is first parsed (or an error of
its named): importing it compiles its resolver's patterns, about as long as the rest of a cached start's YAML, and a
start whose bundled files all come from the cache (collectors/parsed_cache.py) parses none.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from collectors.parsed_cache import remembered


@functools.cache
def loader() -> Any:
    """The loader class: the C safe loader, or the Python one."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_error() -> type[Exception]:
    """yaml.YAMLError, for an `except` clause: Python evaluates the clause only when something was raised."""
    import yaml

    return yaml.YAMLError


def safe_load(text: str) -> Any:
    """Plain data (dicts, lists, scalars) from one YAML document; raises yaml.YAMLError on bad syntax."""
    import yaml

    return yaml.load(text, Loader=loader())  # a safe loader, C or Python


def load_file(path: Path) -> Any:
    """safe_load of a bundled data file (a catalog, the vocabulary's producers), parsed once per content and
    remembered in the user's cache (collectors/parsed_cache.py)."""
    return remembered("yaml", path.read_text(encoding="utf-8"), safe_load)
