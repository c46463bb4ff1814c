"""YAML loading, safe and fast: libyaml's safe loader when PyYAML was built with it, else the Python one.

Catalogs, the vocabulary and playbooks load at every start, and pasted YAML can be large; the C loader is about ten
times faster and builds the same plain data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from collectors.parsed_cache import remembered

LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    """Plain data (dicts, lists, scalars) from one YAML document; raises yaml.YAMLError on bad syntax."""
    return yaml.load(text, Loader=LOADER)  # a safe loader, C or Python


def load_file(path: Path) -> Any:
    """safe_load of a bundled data file (a catalog, the vocabulary's producers), parsed once per content and
    remembered in the user's cache (collectors/parsed_cache.py)."""
    return remembered("yaml", path.read_text(encoding="utf-8"), safe_load)
