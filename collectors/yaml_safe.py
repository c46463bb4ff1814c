"""YAML loading, safe and fast: libyaml's safe loader when PyYAML was built with it, else the Python one.

Catalogs, the vocabulary and playbooks load at every start, and pasted YAML can be large; the C loader is about ten
times faster and builds the same plain data.
"""

from __future__ import annotations

from typing import Any

import yaml

LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    """Plain data (dicts, lists, scalars) from one YAML document; raises yaml.YAMLError on bad syntax."""
    return yaml.load(text, Loader=LOADER)  # a safe loader, C or Python
